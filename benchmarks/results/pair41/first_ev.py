import sys, time, os, collections
os.environ.setdefault("JAXTREE_COMPILATION_CACHE", "0")
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else "/work/main")
import numpy as np, jax, jaxtree
ev = collections.defaultdict(float)
def lis(e, d, **k):
    e = e.rsplit('/', 1)[-1]
    if e in ("jaxpr_trace_duration", "jaxpr_to_mlir_module_duration", "backend_compile_duration"):
        ev[(e[:9], k.get("fun_name"))] += d
jax.monitoring.register_event_duration_secs_listener(lis)
rng = np.random.default_rng(0)
n = int(os.environ.get("N", 1000)); X = rng.uniform(size=(n, 10))
y = 0.3*np.sin(3*np.pi*X[:,0])*np.cos(2*np.pi*X[:,1]) + 0.4*X[:,2]**2 - 0.3*X[:,3] + 0.1*rng.normal(size=n)
t = time.perf_counter(); est = jaxtree.TreeRegressor(k=10).fit(X, y); print("first fit", round(time.perf_counter() - t, 2))
for kind in ("jaxpr_tra", "jaxpr_to_", "backend_c"):
    items = sorted(((v, k[1]) for k, v in ev.items() if k[0] == kind), reverse=True)
    print(kind, round(sum(v for v, _ in items), 2), [(n, round(v, 2)) for v, n in items[:8]])
