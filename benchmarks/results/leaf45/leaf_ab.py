"""A/B of the scorer's leaf buckets on the 20,000 x 10 table with a 5-level categorical
(14 encoded columns, n*p*q = 1.12e7): the old rule (leaf buckets from n*p*q = 1e7) against
the new (from 1.6e7, the tables' bucket threshold). Fresh process, jaxtree's cache off.

    python leaf_ab.py CHECKOUT LABEL [N]

CHECKOUT: the jaxtree source to import (the old commit's worktree or the new one); N rows
(20,000 by default). Prints the first fit (XLA's compile seconds in it), three warm fits
and the first predictions."""
import os, sys, time, warnings
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import jax, numpy as np, pandas as pd
import jaxtree
warnings.simplefilter("ignore")
mode, n = sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 20000
xla = [0.0]
jax.monitoring.register_event_duration_secs_listener(
    lambda e, d, **kw: xla.__setitem__(0, xla[0] + d) if e.endswith("backend_compile_duration") else None)
p = 10
rng = np.random.default_rng(0)
X = rng.uniform(size=(n, p)); codes = rng.integers(0, 5, n)
y = np.sin(3 * X[:, 1]) + X[:, 2] * X[:, p - 1] + 0.3 * codes + 0.05 * rng.normal(size=n)
df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
df["x0"] = pd.Categorical(np.array(list("abcde"))[codes])
t = time.perf_counter(); est = jaxtree.TreeRegressor(k=10).fit(df, y); first = time.perf_counter() - t
warm = []
for _ in range(3):
    t = time.perf_counter(); jaxtree.TreeRegressor(k=10).fit(df, y); warm.append(time.perf_counter() - t)
pred = est.predict(df)
print(f"{mode} n={n} first {first:.2f} s (XLA {xla[0]:.2f}) warm {sorted(warm)[1]:.3f} s {[round(w,3) for w in warm]} "
      f"pred[:3] {pred[:3].round(10)} formula {est.formula()[:60]}", flush=True)
