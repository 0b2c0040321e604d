"""The default TreeRegressor(k=10)'s first fit (fresh process; run with XDG_CACHE_HOME set to a
new folder) and the median of 5 warm fits on paper_synthetic(n, p=10), with XLA's compile
time (jax.monitoring). ``python first_and_warm.py CHECKOUT 0 N``; the second argument 1 also
compiled the kept basis values and held-out errors quick (an experiment of the same
session, taken back). whole_fits.log: ``for n in 1000 20000``, three rounds, the session's
start (c4fbf65, "wt_old") and 900eda3 ("main") alternating."""
import sys, time, warnings, collections
sys.path.insert(0, sys.argv[1]); warnings.simplefilter("ignore")
import numpy as np, jax
ON = sys.argv[2] == "1"
from jaxtree import _executables as E
from jaxtree._fit import source, select
if ON:
    for mod, nm in [(source, "designs_cached"), (select, "held_out_errors_cached")]:
        c = getattr(mod, nm); c.quick = True
        orig = c.__call__.__func__
        class Q(type(c)):
            def __call__(self, *a):
                with E.quick():
                    return orig(self, *a)
        c.__class__ = Q
ev = collections.defaultdict(float)
jax.monitoring.register_event_duration_secs_listener(lambda n, d, **k: ev.__setitem__(n, ev[n] + d))
import jaxtree
from jaxtree.datasets import paper_synthetic
n = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
X, y = paper_synthetic(n=n, p=10, seed=0)
Xt, yt = paper_synthetic(n=2000, p=10, seed=1)
t = time.perf_counter(); est = jaxtree.TreeRegressor(k=10).fit(X, y); first = time.perf_counter() - t
comp = ev["/jax/core/compile/backend_compile_duration"]
ws = []
for _ in range(5):
    t = time.perf_counter(); jaxtree.TreeRegressor(k=10).fit(X, y); ws.append(time.perf_counter() - t)
rmse = float(np.sqrt(np.mean((est.predict(Xt) - yt) ** 2)))
print(f"quick={int(ON)} n={n} first {first:.2f} s (XLA {comp:.2f} s) warm median {np.median(ws):.3f} s rmse {rmse:.6f} formula {est.formula()[:90]}")
