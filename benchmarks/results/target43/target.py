"""TreeRegressor() against TreeRegressor(target_transform="auto") on the same 5 folds of
bench_accuracy's regression tables (jaxtree's cache off, one process).

    python target.py CHECKOUT TABLE[,TABLE...]

Prints, per table, each variant's mean RMSE (the benchmark's score), its per-fold scores,
the transforms chosen and the fit seconds."""
import os, sys, time, warnings
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import numpy as np
warnings.simplefilter("ignore")
import jaxtree
import bench_accuracy as B
from sklearn.model_selection import KFold

VARIANTS = {"default": {}, "auto": {"target_transform": "auto"}}
for name in sys.argv[2].split(","):
    task, X, y, _ = B.load_table(name, None)
    out = {v: ([], [], []) for v in VARIANTS}
    for tr, te in KFold(5, shuffle=True, random_state=B.SEED).split(X):
        for v, kw in VARIANTS.items():
            est = jaxtree.TreeRegressor(**kw)
            t = time.perf_counter(); est.fit(X.iloc[tr], y.iloc[tr])
            out[v][2].append(time.perf_counter() - t)
            out[v][0].append(B.score(task, est, X.iloc[te], y.iloc[te].to_numpy()))
            out[v][1].append(est.target_transform_)
    for v, (r, tf, ts) in out.items():
        print(name, v, round(float(np.mean(r)), 4), [round(a, 3) for a in r], tf,
              "fit s", [round(t, 2) for t in ts], flush=True)
