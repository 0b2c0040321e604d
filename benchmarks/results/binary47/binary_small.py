"""diamonds_1e4 warm fit: as is / cache_basis=False / cache_basis=False with indicator scoring
forced in the bucketed regime (search.with_binary's compiling_dominates bypassed)."""
import sys, time, os, statistics
sys.path.insert(0, "/work/main"); sys.path.insert(0, "/work/main/benchmarks")
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import warnings; warnings.simplefilter("ignore")
import numpy as np, jaxtree
import bench_cost, bench_accuracy as acc
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _patch import force_indicators  # noqa: E402
mode = sys.argv[1]
task, X, y = bench_cost.load(sys.argv[2] if len(sys.argv) > 2 else "diamonds_1e4")
n = len(y); perm = np.random.default_rng(acc.SEED).permutation(n); tr, te = perm[: int(0.8 * n)], perm[int(0.8 * n):]
Xtr, ytr = bench_cost.rows_of(X, tr), y[tr]
kw = dict(acc.JAXTREE_PARAMS)
if mode != "asis":
    kw["cache_basis"] = False
if mode == "binary":
    force_indicators()
make = lambda: jaxtree.TreeRegressor(**kw)
t0 = time.perf_counter(); e = make().fit(Xtr, ytr); first = time.perf_counter() - t0
ts = []
for _ in range(5):
    t0 = time.perf_counter(); e = make().fit(Xtr, ytr); ts.append(time.perf_counter() - t0)
pred = np.asarray(e.predict(bench_cost.rows_of(X, te)))
rmse = float(np.sqrt(np.mean((pred - y[te]) ** 2)))
print(f"{mode}: first {first:.2f} s  warm median {statistics.median(ts):.3f} s min {min(ts):.3f}  test RMSE {rmse:.5f}")
