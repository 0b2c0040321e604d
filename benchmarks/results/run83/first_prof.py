import os, sys, time, threading
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[3]))
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import numpy as np, warnings
t00 = time.perf_counter()
import jax, jax.monitoring as mon
import jaxtree
from jaxtree.datasets import paper_synthetic
print("import", round(time.perf_counter() - t00, 3))
warnings.simplefilter("ignore")
ev = []
def dur(name, d, **kw):
    ev.append((time.perf_counter(), name, d, threading.current_thread().name, kw.get("fun_name")))
mon.register_event_duration_secs_listener(dur)
X, y = paper_synthetic(1333, p=10, seed=0); X, y = X[:1000], y[:1000]
t0 = time.perf_counter()
est = jaxtree.TreeRegressor(k=10).fit(X, y)
t = time.perf_counter() - t0
print("fit", round(t, 3))
agg = {}
for tt, name, d, th, fn in ev:
    if "compile" in name or "trac" in name or "lower" in name:
        print(f"{tt - t0:7.3f} {d:7.3f} {name} {th} {fn}")
