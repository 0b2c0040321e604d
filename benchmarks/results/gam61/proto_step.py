"""Prototype (sixty-first session): the classifier's GAM first (logistic_gam.py's fit), then one
LogitBoost step: a TreeRegressor fitted to the GAM's working response (y - mu)/h with weights h
(its size by its own held-out rule), the logit = GAM + tree. Test AUC on bench_accuracy's five
stratified folds beside the GAM alone.

    python proto_step.py pima,titanic,breast_cancer,default,spam7
"""
import os, sys, warnings
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gcv60")); sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", ".."))
import numpy as np, pandas as pd
import bench_accuracy as ba
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold
warnings.simplefilter("ignore")
import logistic_gam as lg
import jaxtree


def run(name):
    task, X, y, _ = ba.load_table(name, None)
    yv = np.asarray(y, float)
    Xd = pd.get_dummies(X).astype(float)
    out = {"gam": [], "gam+step": [], "gam+step/2": []}
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=ba.SEED).split(Xd, yv):
        med = Xd.iloc[tr].median()
        A, At = Xd.iloc[tr].fillna(med).to_numpy(), Xd.iloc[te].fillna(med).to_numpy()
        f, best = lg.fit(A, yv[tr])
        eta = f(A)
        mu = 1 / (1 + np.exp(-eta))
        h = np.maximum(mu * (1 - mu), 1e-4)
        z = np.clip((yv[tr] - mu) / h, -10, 10)
        t = jaxtree.TreeRegressor(random_state=0).fit(A, z, sample_weight=h)
        g = f(At)
        out["gam"].append(roc_auc_score(yv[te], g))
        out["gam+step"].append(roc_auc_score(yv[te], g + t.predict(At)))
        out["gam+step/2"].append(roc_auc_score(yv[te], g + 0.5 * t.predict(At)))
    print(f"{name:14s} " + "  ".join(f"{k} {np.mean(v):.4f}" for k, v in out.items()), flush=True)


if __name__ == "__main__":
    for name in sys.argv[1].split(","):
        run(name)
