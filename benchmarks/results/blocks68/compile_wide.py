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
from jaxtree import scoring
if os.environ.get("BMW"): scoring.BUCKET_MIN_WORK = int(float(os.environ["BMW"]))
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
n, p = map(int, os.environ.get("CASE", "5000x100").split("x"))
X = rng.uniform(size=(n, p))
y = np.sin(3*np.pi*X[:,0])*np.cos(2*np.pi*X[:,1]) + 0.5*np.sin(4*np.pi*X[:,2])*X[:,3] + X[:,4] + 0.1*rng.standard_normal(n)
t0 = time.perf_counter()
est = jaxtree.TreeRegressor().fit(X, y)
t1 = time.perf_counter()
print(f"fit {t1-t0:.3f} (starts at {t0-T0:.2f})")
tot = {}
for t, e, d, f, th in ev:
    if d > float(os.environ.get("MIN_D", "0.05")): print(f"{t:7.2f} {e:28s} {d:6.3f} {f:40s} {th}")
    tot[e] = tot.get(e, 0) + d
print({k: round(v, 2) for k, v in tot.items()})
