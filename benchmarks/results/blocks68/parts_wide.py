"""insert_step time with and without pairs on a wide uniform table, and the warm fit by program: PYTHONPATH=CHECKOUT python benchmarks/results/blocks68/parts_wide.py N P"""
import time, warnings, sys, statistics
warnings.simplefilter("ignore")
import numpy as np, jax, jaxtree
from jaxtree import _executables, search
n, p = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
X = rng.uniform(size=(n, p))
y = np.sin(6 * X[:, 0]) + X[:, 1] * X[:, 2] + np.sin(3 * np.pi * X[:, 3]) * np.cos(2 * np.pi * X[:, 4]) + 0.1 * rng.normal(size=n)
calls = []; names = {}
plain = _executables.cached.__call__
def spy(self, *args):
    t = time.perf_counter(); out = plain(self, *args); jax.block_until_ready(out)
    names[self.name] = names.get(self.name, 0) + time.perf_counter() - t
    if self.name.endswith("insert_step"):
        calls.append(args)
    return out
jaxtree.TreeRegressor().fit(X, y)
names.clear(); calls.clear()
_executables.cached.__call__ = spy
t = time.perf_counter(); e = jaxtree.TreeRegressor().fit(X, y); print("warm fit", time.perf_counter() - t, "k", e.k_)
_executables.cached.__call__ = plain
for k, v in sorted(names.items(), key=lambda kv: -kv[1])[:8]: print(f"  {k}: {v:.3f} s")
prog_, data, basis, config, max_ops = calls[-1]
print("data.x", data.x.shape, "allowed", None if data.allowed is None else int(np.sum(data.allowed)), "pair_rows", config.pair_rows, "q", basis.q, "n calls", len(calls))
f = jax.jit(search.insert_step, static_argnums=(2, 3))
def timeit(*a, r=3):
    jax.block_until_ready(f(*a)); ts = []
    for _ in range(r):
        t = time.perf_counter(); jax.block_until_ready(f(*a)); ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3
for i in (0, 1, 2, 3, 5):
    if i < len(calls):
        a = calls[i]
        print("call", i, "slots", int(a[0].n_slots), "insert ms", f"{timeit(a[0], a[1], basis, config, max_ops):.1f}", "no pairs", f"{timeit(a[0], a[1], basis, config._replace(pair_leaves=0), max_ops):.1f}")
print(e.formula_ if hasattr(e, "formula_") else "")
