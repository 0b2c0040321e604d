"""The compile timeline of a first fit (fresh process, cache off) of the default TreeRegressor
on 5,000 rows of three categorical columns of LEVELS levels (default 30) and three uniform
ones: every trace, lowering and compilation longer than MIN_D seconds (default 0.05), from
jax.monitoring, with its thread.

    MIN_D=0.15 python benchmarks/results/pairwork67/compile_cats.py
"""
import os, sys, time, threading
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import jax, jax.monitoring as mon
import numpy as np, pandas as pd, warnings
T0 = time.perf_counter()
ev = []
def lis(event, dur, **kw):
    if "compile" in event or "trace" in event or "lower" in event:
        ev.append((time.perf_counter() - T0, event.split("/")[-1], dur, kw.get("fun_name", ""), threading.current_thread().name))
mon.register_event_duration_secs_listener(lis)
import jaxtree
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
n = 5000
levels = int(os.environ.get("LEVELS", "30"))
X = pd.DataFrame({f"c{i}": pd.Categorical(rng.integers(0, levels, n).astype(str)) for i in range(3)})
for i in range(3): X[f"x{i}"] = rng.uniform(size=n)
eff = {f"c{i}": rng.normal(size=levels) for i in range(3)}
y = np.asarray(sum(eff[f"c{i}"][X[f"c{i}"].astype(int).to_numpy()] for i in range(3)) + np.sin(5 * X["x0"]) + 0.1 * rng.normal(size=n))
t0 = time.perf_counter()
est = jaxtree.TreeRegressor().fit(X, y)
t1 = time.perf_counter()
print(f"fit {t1-t0:.3f} (starts at {t0-T0:.2f})")
tot = {}
for t, e, d, f, th in ev:
    if d > float(os.environ.get("MIN_D", "0.05")): print(f"{t:7.2f} {e:28s} {d:6.3f} {f:40s} {th}")
    tot[e] = tot.get(e, 0) + d
print({k: round(v, 2) for k, v in tot.items()})
