"""A timeline of the default TreeRegressor(k=10)'s first fit in a fresh process, jaxtree's
cache off: JAX's compile events (tracing, lowering, XLA) over 20 ms, each with its start and
end in seconds from the fit's start and the thread it ran on.

    python timeline.py CHECKOUT [demo|cat]

demo (default): the demo's data (the paper's g, n = 1,000, p = 10); cat: 20,000 x 10 uniform
rows whose column 0 is a pandas categorical of 5 levels (as leaf45/cat_events.py)."""
import os, sys, time, warnings, threading
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import jax, numpy as np, pandas as pd
import jaxtree
from jaxtree.datasets import paper_synthetic
warnings.simplefilter("ignore")
T0 = [0]
rows = []
def listen(event, duration, **kw):
    end = time.perf_counter() - T0[0]
    rows.append((end - duration, end, event.rsplit("/", 1)[-1][:14], str(kw.get("fun_name")), threading.current_thread().name[:14]))
jax.monitoring.register_event_duration_secs_listener(listen)
if (sys.argv[2] if len(sys.argv) > 2 else "demo") == "demo":
    X, y = paper_synthetic(n=1000, p=10, seed=0)
else:
    n, p = 20000, 10
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(n, p)); codes = rng.integers(0, 5, n)
    y = np.sin(3 * x[:, 1]) + x[:, 2] * x[:, p - 1] + 0.3 * codes + 0.05 * rng.normal(size=n)
    X = pd.DataFrame(x, columns=[f"x{j}" for j in range(p)])
    X["x0"] = pd.Categorical(np.array(list("abcde"))[codes])
T0[0] = time.perf_counter()
jaxtree.TreeRegressor(k=10).fit(X, y); print("fit", time.perf_counter() - T0[0])
for r in sorted(rows):
    if r[1] - r[0] > 0.02: print(f"{r[0]:6.2f} {r[1]:6.2f} {r[2]:15s} {r[3]:30s} {r[4]}")
