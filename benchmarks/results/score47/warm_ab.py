"""Median of 5 warm fits of one case in a fresh process: python warm_ab.py CHECKOUT CASE"""
import sys, time, os, statistics
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import warnings; warnings.simplefilter("ignore")
import numpy as np
import jaxtree
case = sys.argv[2]
if case == "demo":
    from jaxtree.datasets import paper_synthetic
    X, y = paper_synthetic(1000, p=10, seed=0); make = lambda: jaxtree.TreeRegressor(k=10)
elif case == "paper1e5":
    from jaxtree.datasets import paper_synthetic
    X, y = paper_synthetic(100000, p=10, seed=0); make = lambda: jaxtree.TreeRegressor.paper(k=10)
elif case.startswith("table:"):
    import bench_accuracy as acc
    task, X, y, _ = acc.load_table(case[6:], None)
    y = np.asarray(y); make = lambda: acc.jaxtree_model(task)
else:
    import bench_cost, bench_accuracy as acc
    task, X, y = bench_cost.load(case)
    n = len(y); perm = np.random.default_rng(acc.SEED).permutation(n); tr = perm[: int(0.8 * n)]
    X, y = bench_cost.rows_of(X, tr), y[tr]; make = lambda: acc.jaxtree_model(task)
est = make().fit(X, y)
ts = []
for _ in range(5):
    t0 = time.perf_counter(); e = make().fit(X, y); ts.append(time.perf_counter() - t0)
p = np.asarray(e.predict(X[:5] if isinstance(X, np.ndarray) else X.iloc[:5]))
print(f"{case} warm median {statistics.median(ts):.3f} s  min {min(ts):.3f}  pred {p[:2]}")
