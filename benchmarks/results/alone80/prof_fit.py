"""A warm fit of fold 0 of a bench_accuracy table beside HGB(100), then a cProfile of one more: python prof_fit.py TABLE"""
import sys, time, numpy as np, warnings, cProfile, pstats
import pathlib
_HERE = pathlib.Path(__file__).resolve().parents[3]  # the checkout this lies in
sys.path.insert(0, str(_HERE)); sys.path.insert(0, str(_HERE / "benchmarks"))
import bench_accuracy as B
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.ensemble import HistGradientBoostingRegressor, HistGradientBoostingClassifier
import jaxtree
name = sys.argv[1]
task, X, y, desc = B.load_table(name, None)
yv = y.to_numpy()
cv = (KFold if task == "regression" else StratifiedKFold)(5, shuffle=True, random_state=B.SEED)
tr, te = next(cv.split(X, yv))
Xtr = X.iloc[tr].reset_index(drop=True)
Est = jaxtree.TreeRegressor if task == "regression" else jaxtree.TreeClassifier
warnings.simplefilter("ignore")
Est().fit(Xtr, yv[tr])
ts = []
for _ in range(3):
    t = time.perf_counter(); Est().fit(Xtr, yv[tr]); ts.append(time.perf_counter() - t)
h = []
for _ in range(3):
    m = B.hgb(task, 100); t = time.perf_counter(); m.fit(Xtr, yv[tr]); h.append(time.perf_counter() - t)
print("warm", [round(v, 2) for v in ts], "hgb", [round(v, 2) for v in h], "ratio", round(min(ts) / min(h), 2))
pr = cProfile.Profile(); pr.enable(); Est().fit(Xtr, yv[tr]); pr.disable()
pstats.Stats(pr).sort_stats("cumulative").print_stats(45)
