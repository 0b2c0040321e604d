"""The classifier's tree size chosen by an inner 5-fold cross-validation (measured outside
the library): for each outer fold of bench_accuracy's splits, every k of KS is fitted on the
inner folds of the training rows (the default TreeClassifier otherwise), the k with the
lowest mean inner log-loss is refitted on all training rows and scored on the outer fold.

    python benchmarks/results/round55/cv_size.py --tables titanic,pima --out OUT.json
"""
import argparse
import json
import pathlib
import sys
import time
import warnings

import jaxtree  # noqa: F401  (first: the checkout on PYTHONPATH)

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
import numpy as np  # noqa: E402
from sklearn.metrics import log_loss  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402

import bench_accuracy as ba  # noqa: E402

KS = (2, 3, 4, 6, 8, 10)
ap = argparse.ArgumentParser()
ap.add_argument("--tables", required=True)
ap.add_argument("--out", required=True)
a = ap.parse_args()
out = {}
for name in a.tables.split(","):
    task, X, y, _ = ba.load_table(name, None)
    yv = y.to_numpy()
    scores, chosen, t0 = [], [], time.perf_counter()
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=0).split(X, yv):
        Xtr, ytr = X.iloc[tr].reset_index(drop=True), yv[tr]
        loss = {k: 0.0 for k in KS}
        for itr, ite in StratifiedKFold(5, shuffle=True, random_state=1).split(Xtr, ytr):
            for k in KS:
                est = ba.jaxtree_model(task).set_params(k=k)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(Xtr.iloc[itr].reset_index(drop=True), ytr[itr])
                    p = est.predict_proba(Xtr.iloc[ite].reset_index(drop=True))[:, 1]
                loss[k] += log_loss(ytr[ite], np.clip(p, 1e-12, 1 - 1e-12), labels=[0, 1]) * len(ite)
        k_best = min(KS, key=lambda k: (loss[k], k))
        est = ba.jaxtree_model(task).set_params(k=k_best)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(Xtr, ytr)
            scores.append(float(ba.score(task, est, X.iloc[te].reset_index(drop=True), yv[te])))
        chosen.append(k_best)
    out[name] = {"scores": scores, "mean": float(np.mean(scores)), "k": chosen,
                 "seconds": time.perf_counter() - t0}
    print(f"{name:14s} mean {np.mean(scores):.5f}  k {chosen}  ({time.perf_counter() - t0:.0f} s)",
          flush=True)
pathlib.Path(a.out).write_text(json.dumps(out, indent=1))
