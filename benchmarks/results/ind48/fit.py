"""One case's first fit, median of 5 warm fits and test error, in a fresh process, the
compilation cache off: python fit.py CHECKOUT CASE (bench_cost's cases, split 80/20 as
bench_cost splits them, or table:NAME for bench_accuracy's tables: all rows, no test)."""
import os
import statistics
import sys
import time
import warnings

sys.path.insert(0, sys.argv[1]); sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
warnings.simplefilter("ignore")
import numpy as np  # noqa: E402

import bench_accuracy as acc  # noqa: E402
import bench_cost  # noqa: E402

case = sys.argv[2]
if case.startswith("table:"):
    task, X, y, _ = acc.load_table(case[6:], None)
    Xtr, ytr, Xte, yte = X, np.asarray(y), None, None
else:
    task, X, y = bench_cost.load(case)
    n = len(y)
    perm = np.random.default_rng(acc.SEED).permutation(n)
    tr, te = perm[: int(0.8 * n)], perm[int(0.8 * n):]
    Xtr, ytr, Xte, yte = bench_cost.rows_of(X, tr), y[tr], bench_cost.rows_of(X, te), y[te]
make = lambda: acc.jaxtree_model(task)  # noqa: E731
t0 = time.perf_counter()
est = make().fit(Xtr, ytr)
first = time.perf_counter() - t0
ts = []
for _ in range(5):
    t0 = time.perf_counter()
    est = make().fit(Xtr, ytr)
    ts.append(time.perf_counter() - t0)
err = ""
if Xte is not None:
    if task == "regression":
        err = f"test RMSE {float(np.sqrt(np.mean((est.predict(Xte) - yte) ** 2))):.5f}"
    else:
        from sklearn.metrics import roc_auc_score
        err = f"test AUC {roc_auc_score(yte, est.predict_proba(Xte)[:, 1]):.5f}"
print(f"{os.path.basename(sys.argv[1].rstrip('/'))} {case}: first {first:.2f} s  warm median "
      f"{statistics.median(ts):.3f} s min {min(ts):.3f}  {err}", flush=True)
