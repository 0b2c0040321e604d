"""The demo's first fit (fresh process, cache off) and five warm fits, with the search step's two
programs at their light options (base), or at QUICK (LLVM level 0): both (q), the insertion (qi),
the finish (qf). ROOT=<checkout> python demo_q.py base|q|qi|qf"""
import os, sys, time, threading
sys.path.insert(0, os.environ.get("ROOT", "."))
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import warnings; warnings.simplefilter("ignore")
import jax.monitoring as m
ev = []
m.register_event_duration_secs_listener(lambda e, d, **kw: ev.append((e, d)))
import numpy as np, jaxtree
from jaxtree import search, _executables as E
mode = sys.argv[1]
if mode in ("q", "qi"):
    search.insert_cached.light = dict(E.QUICK)
if mode in ("q", "qf"):
    search.finish_backfit_cached.light = dict(E.QUICK)
from jaxtree.datasets import paper_synthetic
X, y = paper_synthetic(1333, p=10, seed=0); X, y = X[:1000], y[:1000]
t0 = time.perf_counter()
est = jaxtree.TreeRegressor(k=10).fit(X, y)
t = time.perf_counter() - t0
comp = [round(d, 2) for e, d in ev if e.endswith("backend_compile_duration") and d > 0.3]
ts = []
for _ in range(5):
    t1 = time.perf_counter(); jaxtree.TreeRegressor(k=10).fit(X, y); ts.append(time.perf_counter() - t1)
print(mode, "first", round(t, 3), "compiles", comp, "warm", round(min(ts), 3), round(float(np.median(ts)), 3), "sum", float(np.sum(est.predict(X[:500]))))
