"""The fold loop the scripts here share: a jaxtree estimator on ``bench_accuracy.py``'s table and
5 folds (shuffled ``KFold`` / ``StratifiedKFold``, ``random_state=SEED``), scored as there."""
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import numpy as np  # noqa: E402
from sklearn.model_selection import KFold, StratifiedKFold  # noqa: E402

import bench_accuracy as ba  # noqa: E402

warnings.simplefilter("ignore")


def cross_validate(name, make, transform=None):
    """``(scores, terms)`` per fold of ``make(task)`` fitted on table ``name``'s training folds;
    ``transform(X, train, test) -> (X_train, X_test)`` replaces the plain row split."""
    task, X, y, _ = ba.load_table(name, None)
    cv = (KFold(5, shuffle=True, random_state=ba.SEED) if task == "regression"
          else StratifiedKFold(5, shuffle=True, random_state=ba.SEED))
    scores, terms = [], []
    for tr, te in cv.split(X, y):
        xtr, xte = (X.iloc[tr], X.iloc[te]) if transform is None else transform(X, tr, te)
        est = make(task).fit(xtr, y.iloc[tr])
        scores.append(ba.score(task, est, xte, y.iloc[te]))
        terms.append(ba.n_terms(est))
    return scores, terms


def report(label, make, transform=None, digits=3) -> None:
    """Prints ``label``, the mean score and terms, each fold's score and the seconds taken
    (``label``: ``(table name, text)``)."""
    t = time.time()
    s, terms = cross_validate(label[0], make, transform)
    print(f"{label[0]:12s} {label[1]:40s} mean {np.mean(s):.4f} terms {np.mean(terms):.1f} "
          "folds", " ".join(f"{v:.{digits}f}" for v in s), f"{time.time() - t:.0f}s", flush=True)
