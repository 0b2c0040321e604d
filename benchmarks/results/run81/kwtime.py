"""Warm fits of fold 0 of a bench_accuracy table, one estimator setting per argument, alternating:
    REP=3 python kwtime.py flights "{}" "dict(refine_steps=5)"
"""
import sys, os, time, numpy as np, warnings
sys.path.insert(0, os.environ.get("ROOT", str(__import__("pathlib").Path(__file__).resolve().parents[3]))); sys.path.insert(0, os.environ.get("ROOT", str(__import__("pathlib").Path(__file__).resolve().parents[3])) + "/benchmarks")
import jaxtree, bench_accuracy as B
from sklearn.model_selection import StratifiedKFold, KFold
warnings.simplefilter("ignore")
name = sys.argv[1]; kws = [eval(a) for a in sys.argv[2:]]
task, X, y, desc = B.load_table(name, B.TABLES[name][2])
yv = y.to_numpy()
cv = (StratifiedKFold if task == "classification" else KFold)(5, shuffle=True, random_state=B.SEED)
tr, te = next(cv.split(X, yv))
Xtr = X.iloc[tr].reset_index(drop=True)
E = jaxtree.TreeClassifier if task == "classification" else jaxtree.TreeRegressor
for kw in kws: E(**kw).fit(Xtr, yv[tr])
ts = {i: [] for i in range(len(kws))}
for r in range(int(os.environ.get("REP", 3))):
    for i, kw in enumerate(kws):
        t = time.perf_counter(); E(**kw).fit(Xtr, yv[tr]); ts[i].append(time.perf_counter() - t)
for i, kw in enumerate(kws): print(name, kw, [round(v, 3) for v in ts[i]], "min", round(min(ts[i]), 3))
