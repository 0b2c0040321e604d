"""One checkout's warm fits for pair.py: python worker.py CHECKOUT CASE (a bench_cost case, or tblNxP for
bench_first_fit --tables' table); fits twice, prints "ready", then one warm fit per line read."""
import sys, time, warnings
root, case = sys.argv[1], sys.argv[2]
sys.path.insert(0, root + "/benchmarks"); sys.path.insert(0, root)
warnings.simplefilter("ignore")
import bench_cost, bench_accuracy as acc
if case.startswith("tbl"):  # bench_first_fit.py --tables' table NxP (its first, i = 0)
    import numpy as np, jaxtree
    n, p = map(int, case[3:].split("x"))
    rng = np.random.default_rng(0)
    Xtr = rng.uniform(size=(n, p))
    Xtr[:, 0] = rng.integers(0, 5, n)
    ytr = np.sin(3 * Xtr[:, 1]) + Xtr[:, 2] * Xtr[:, p - 1] + 0.1 * Xtr[:, 0] + 0.05 * rng.normal(size=n)
    make = lambda: jaxtree.TreeRegressor(k=10)
else:
    task, Xtr, ytr, Xte, yte = bench_cost.split(case)
    make = lambda: acc.jaxtree_model(task)
est = make().fit(Xtr, ytr); est = make().fit(Xtr, ytr)
print("ready", flush=True)
for line in sys.stdin:
    t = time.perf_counter(); make().fit(Xtr, ytr); print(time.perf_counter() - t, flush=True)
