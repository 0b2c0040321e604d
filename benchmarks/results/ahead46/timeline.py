import os, sys, time, warnings, threading
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import jax, numpy as np
import jaxtree
from jaxtree.datasets import paper_synthetic
warnings.simplefilter("ignore")
T0 = [0]
rows = []
def listen(event, duration, **kw):
    end = time.perf_counter() - T0[0]
    rows.append((end - duration, end, event.rsplit("/", 1)[-1][:14], str(kw.get("fun_name")), threading.current_thread().name[:14]))
jax.monitoring.register_event_duration_secs_listener(listen)
X, y = paper_synthetic(n=1000, p=10, seed=0)
T0[0] = time.perf_counter()
jaxtree.TreeRegressor(k=10).fit(X, y); print("fit", time.perf_counter() - T0[0])
for r in sorted(rows):
    if r[1] - r[0] > 0.02: print(f"{r[0]:6.2f} {r[1]:6.2f} {r[2]:15s} {r[3]:30s} {r[4]}")
