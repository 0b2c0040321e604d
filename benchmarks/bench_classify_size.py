"""The classifier's size rule (issues 26 and 29): a held-out size against trees grown to ``k``.

Until the eleventh session ``TreeClassifier()`` took the regressor's rule on small tables
(fewer than 10,000 rows in memory): ``search="backfit"`` with 20% of the rows held out to
choose the tree's size by the paired half-standard-error rule on the held-out log-loss. Now its
``validation_fraction="auto"`` is None: the trees grow to ``k`` (``tol`` may stop them).
This benchmark is the measurement behind that decision, on the small classification tables
of ``bench_accuracy.py`` (same loaders and 5 stratified folds, ``random_state=0``), ROC AUC:

* ``held-out size (before)``: ``TreeClassifier(validation_fraction=0.2)`` (the old default);
* ``grown to k (now)``: ``TreeClassifier()``;
* ``greedy grown to k``: ``TreeClassifier(search="greedy")`` (the paper's search);
* ``logistic``: ``bench_accuracy.linear`` (standardised numbers, one-hot categories).

Run: ``python benchmarks/bench_classify_size.py`` (~5 minutes on 2 cores; writes
``benchmarks/results/classify_size.json``).
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_accuracy as B  # noqa: E402
from _common import table_benchmark  # noqa: E402

import jaxtree  # noqa: E402

MODELS = {
    "held-out size (before)": lambda: jaxtree.TreeClassifier(validation_fraction=0.2,
                                                             random_state=0),
    "grown to k (now)": lambda: jaxtree.TreeClassifier(random_state=0),
    "greedy grown to k": lambda: jaxtree.TreeClassifier(search="greedy", random_state=0),
}


def run(table: str, folds: int) -> list:
    from sklearn.model_selection import StratifiedKFold

    task, X, y, desc = B.load_table(table, None)
    assert task == "classification", table
    yv = y.to_numpy()
    cv = StratifiedKFold(folds, shuffle=True, random_state=B.SEED)
    rows = []
    for name in [*MODELS, "logistic"]:
        scores, sizes = [], []
        for tr, te in cv.split(X, yv):
            Xtr, Xte = (X.iloc[i].reset_index(drop=True) for i in (tr, te))
            est = B.linear(task, X) if name == "logistic" else MODELS[name]()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(Xtr, yv[tr])
            scores.append(B.score(task, est, Xte, yv[te]))
            sizes.append(getattr(est, "k_", None))
        row = {"table": table, "description": desc, "rows": len(yv), "model": name,
               "auc_folds": [round(s, 6) for s in scores], "auc": float(np.mean(scores)),
               "k_": sizes}
        rows.append(row)
        print(f"{table:14s} {name:24s} AUC {row['auc']:.4f}  k_ {sizes}", flush=True)
    return rows


if __name__ == "__main__":
    table_benchmark(__doc__, run, "pima,breast_cancer,titanic,spam7,default", 5,
                    "classify_size.json")
