"""Warm fits of fold 0 (four, after a first) and the test decision function of the classifier at ROOT: the hats-cache A/B (eightieth session). ROOT=<checkout> OUT=<npz> python hats_ab.py TABLES"""
import os, sys, time, numpy as np, warnings
root = os.environ["ROOT"]; sys.path.insert(0, root); sys.path.insert(0, os.path.join(root, "benchmarks"))
import jaxtree, bench_accuracy as B
from sklearn.model_selection import StratifiedKFold
warnings.simplefilter("ignore")
out = {}
for name in sys.argv[1:]:
    task, X, y, desc = B.load_table(name, B.TABLES[name][2]); yv = y.to_numpy()
    tr, te = next(StratifiedKFold(5, shuffle=True, random_state=B.SEED).split(X, yv))
    Xtr = X.iloc[tr].reset_index(drop=True)
    c = jaxtree.TreeClassifier().fit(Xtr, yv[tr])
    ts = []
    for _ in range(4):
        t = time.perf_counter(); c = jaxtree.TreeClassifier().fit(Xtr, yv[tr]); ts.append(time.perf_counter() - t)
    out[name] = c.decision_function(X.iloc[te].reset_index(drop=True))
    out[name + "_hist"] = np.asarray(c.history_)
    print(root.split("/")[-1], name, "warm", [round(t, 2) for t in ts], "median", round(float(np.median(ts)), 3), flush=True)
np.savez(os.environ["OUT"], **out)
