"""First and warm fit of the default on fold 0's training rows of bench_accuracy's small
regressions, in a fresh process (cache off): PYTHONPATH=CHECKOUT python cost_small.py TABLE"""
import os, sys, time, warnings, json
warnings.simplefilter("ignore")
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
import jaxtree  # the checkout on PYTHONPATH, before bench_accuracy puts the repository first
import numpy as np, bench_accuracy as ba
from sklearn.model_selection import KFold
name = sys.argv[1]
task, X, y, _ = ba.load_table(name, ba.TABLES[name][2]); yv = y.to_numpy()
tr, te = next(KFold(5, shuffle=True, random_state=ba.SEED).split(X, yv))
Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
t = time.perf_counter(); e = jaxtree.TreeRegressor().fit(Xtr, yv[tr]); first = time.perf_counter() - t
warm = []
for _ in range(3):
    t = time.perf_counter(); e = jaxtree.TreeRegressor().fit(Xtr, yv[tr]); warm.append(time.perf_counter() - t)
rmse = float(np.sqrt(np.mean((e.predict(Xte) - yv[te]) ** 2)))
print(json.dumps(dict(table=name, jaxtree=jaxtree.__file__, first=round(first, 2), warm=round(float(np.median(warm)), 3),
                      order=e.shape_order_, rmse=round(rmse, 4))), flush=True)
