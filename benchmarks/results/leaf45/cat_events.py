"""The default TreeRegressor(k=10)'s first fit in a fresh process, jaxtree's cache off: wall
time (import, first fit, a warm fit), JAX's compile events summed by kind (tracing, lowering,
XLA) and XLA's compile seconds per program.

    python cat_events.py CHECKOUT cat|num|demo

cat: 20,000 x 10 uniform rows whose column 0 is a pandas categorical of 5 levels; num: the
same with column 0 as the level codes (floats); demo: the demo's data (the paper's g,
n = 1,000, p = 10)."""
import collections, os, sys, time, warnings
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
t0 = time.perf_counter()
import jax, numpy as np, pandas as pd
import jaxtree
from jaxtree.datasets import paper_synthetic
t_imp = time.perf_counter() - t0
warnings.simplefilter("ignore")
ev = collections.defaultdict(float); xla = collections.defaultdict(float); cnt = collections.Counter()
def listen(event, duration, **kw):
    ev[event.rsplit("/", 1)[-1]] += duration
    if event.endswith("backend_compile_duration"):
        xla[kw.get("fun_name")] += duration; cnt[kw.get("fun_name")] += 1
jax.monitoring.register_event_duration_secs_listener(listen)
table = sys.argv[2]
if table == "demo":
    X, y = paper_synthetic(n=1000, p=10, seed=0)
else:
    n, p = 20000, 10
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(n, p)); codes = rng.integers(0, 5, n)
    y = np.sin(3 * x[:, 1]) + x[:, 2] * x[:, p - 1] + 0.3 * codes + 0.05 * rng.normal(size=n)
    X = pd.DataFrame(x, columns=[f"x{j}" for j in range(p)])
    X["x0"] = pd.Categorical(np.array(list("abcde"))[codes]) if table == "cat" else codes.astype(float)
t = time.perf_counter(); est = jaxtree.TreeRegressor(k=10).fit(X, y); first = time.perf_counter() - t
t = time.perf_counter(); jaxtree.TreeRegressor(k=10).fit(X, y); warm = time.perf_counter() - t
print(table, f"import {t_imp:.2f} s; first fit {first:.2f} s; warm {warm:.2f} s; {est.formula()[:80]}")
for k, v in sorted(ev.items(), key=lambda kv: -kv[1]): print(f"  {k:45s} {v:6.2f}")
for k, v in sorted(xla.items(), key=lambda kv: -kv[1])[:15]: print(f"  {str(k):45s} {v:6.2f} s  x{cnt[k]}")
print(" total XLA", round(sum(xla.values()), 2), "programs", sum(cnt.values()))
