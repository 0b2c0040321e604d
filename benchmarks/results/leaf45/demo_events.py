"""(python demo_events.py CHECKOUT) The demo's first fit in a fresh process, jaxtree's cache off: wall, XLA compile per
function, tracing, lowering totals."""
import collections, os, sys, time, warnings
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
t0 = time.perf_counter()
import jax, numpy as np
import jaxtree
from jaxtree.datasets import paper_synthetic
t_imp = time.perf_counter() - t0
ev = collections.defaultdict(float); xla = collections.defaultdict(float); cnt = collections.Counter()
def listen(event, duration, **kw):
    ev[event.rsplit("/", 1)[-1]] += duration
    if event.endswith("backend_compile_duration"):
        xla[kw.get("fun_name")] += duration; cnt[kw.get("fun_name")] += 1
jax.monitoring.register_event_duration_secs_listener(listen)
X, y = paper_synthetic(n=1000, p=10, seed=0)
t = time.perf_counter(); est = jaxtree.TreeRegressor(k=10).fit(X, y); first = time.perf_counter() - t
t = time.perf_counter(); jaxtree.TreeRegressor(k=10).fit(X, y); warm = time.perf_counter() - t
print(f"import {t_imp:.2f} s; first fit {first:.2f} s; warm {warm:.2f} s")
for k, v in sorted(ev.items(), key=lambda kv: -kv[1]): print(f"  {k:45s} {v:6.2f}")
print(" XLA by function:")
for k, v in sorted(xla.items(), key=lambda kv: -kv[1])[:15]: print(f"  {str(k):45s} {v:6.2f} s  x{cnt[k]}")
print(" total XLA", round(sum(xla.values()), 2), "programs", sum(cnt.values()))
