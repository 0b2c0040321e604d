"""The insertion step of the default fit on a 5,000-row table of three 30-level categorical
columns and three uniform ones (ab_wide.py's cats5000): its data's shape and the step's time
with and without the pair screen, on the trees of the fit's first iterations.

    python benchmarks/results/pairwork67/cats_parts.py
"""
import time, warnings, sys, statistics
warnings.simplefilter("ignore")
import numpy as np, pandas as pd, jax, jaxtree
from jaxtree import _executables, search
rng = np.random.default_rng(0)
n = 5000
X = pd.DataFrame({f"c{i}": pd.Categorical(rng.integers(0, 30, n).astype(str)) for i in range(3)})
for i in range(3): X[f"x{i}"] = rng.uniform(size=n)
eff = {f"c{i}": rng.normal(size=30) for i in range(3)}
y = np.asarray(sum(eff[f"c{i}"][X[f"c{i}"].astype(int).to_numpy()] for i in range(3)) + np.sin(5 * X["x0"]) + 0.1 * rng.normal(size=n))
calls = []
plain = _executables.cached.__call__
def spy(self, *args):
    if self.name.endswith("insert_step"):
        calls.append(args)
    return plain(self, *args)
_executables.cached.__call__ = spy
jaxtree.TreeRegressor().fit(X, y)
_executables.cached.__call__ = plain
prog_, data, basis, config, max_ops = calls[-1]
print("data.x", data.x.shape, "binary", None if data.binary is None else data.binary.shape, "allowed", None if data.allowed is None else int(np.sum(data.allowed)), "config pair_rows", config.pair_rows, "pair_leaves", config.pair_leaves, config.pair_max_leaves)
f = jax.jit(search.insert_step, static_argnums=(2, 3))
def timeit(*a, r=3):
    jax.block_until_ready(f(*a)); ts = []
    for _ in range(r):
        t = time.perf_counter(); jax.block_until_ready(f(*a)); ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3
for i in (0, 1, 2, 3, 5, 8):
    if i < len(calls):
        a = calls[i]
        print("call", i, "slots", int(a[0].n_slots), "insert ms", f"{timeit(a[0], data, basis, config, max_ops):.1f}", "no pairs", f"{timeit(a[0], data, basis, config._replace(pair_leaves=0), max_ops):.1f}")
