"""One checkout's warm fits for pair.py: python worker.py CHECKOUT CASE (a bench_cost case, or tblNxP for
bench_first_fit --tables' table); fits twice, prints "ready", then one warm fit per line read. A lever is
patched in from the environment where set: JT_ROWS6, JT_STEPS, JT_RTOL, JT_COARSE."""
import sys, time, warnings
root, case = sys.argv[1], sys.argv[2]
sys.path.insert(0, root + "/benchmarks"); sys.path.insert(0, root)
warnings.simplefilter("ignore")
import bench_cost, bench_accuracy as acc
import os
if os.environ.get("JT_ROWS6"):  # a 6-chunk row bucket between 4 and 8 chunks
    from jaxtree import scoring as _sc
    def _rows_for(n, chunk_size):
        nc, m = _sc.chunk_shape(int(n), chunk_size)
        if nc <= 1:
            return nc * m
        nb = 1 << (nc - 1).bit_length() if nc <= 4 else (6 if nc <= 6 else -(-nc // 4) * 4)
        return nb * m
    _sc.rows_for = _rows_for
if os.environ.get("JT_STEPS"):
    from jaxtree import search as _s
    _d = list(_s.Config.__new__.__defaults__)
    _d[list(_s.Config._fields).index("refine_steps") - 1] = int(os.environ["JT_STEPS"])
    _s.Config.__new__.__defaults__ = tuple(_d)
if os.environ.get("JT_RTOL"):
    from jaxtree import refine
    _r = float(os.environ["JT_RTOL"])
    refine.lbfgs_rtol = lambda dtype: _r
if os.environ.get("JT_COARSE"):
    from jaxtree import refine
    refine.coarse.__defaults__ = (int(os.environ["JT_COARSE"]),)
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
