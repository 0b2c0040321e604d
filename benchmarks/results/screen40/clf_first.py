import os, sys, time, warnings, collections
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else "/work/main")
import numpy as np, jaxtree, jax
from sklearn.datasets import load_breast_cancer
from jax._src import compiler
from jax._src.interpreters import pxla
warnings.simplefilter("ignore")
log = []
orig = compiler.compile_or_get_cached
def hook(backend, comp, *a, **k):
    t = time.perf_counter(); r = orig(backend, comp, *a, **k)
    log.append((str(comp.operation.attributes["sym_name"]).strip('"'), time.perf_counter() - t)); return r
compiler.compile_or_get_cached = hook; pxla.compiler.compile_or_get_cached = hook
ev = collections.defaultdict(float)
jax.monitoring.register_event_duration_secs_listener(lambda e, d, **k: ev.__setitem__(e.rsplit('/',1)[-1], ev[e.rsplit('/',1)[-1]] + d))
X, y = load_breast_cancer(return_X_y=True)
t = time.perf_counter(); est = jaxtree.TreeClassifier().fit(X[:455], y[:455]); print("fit", round(time.perf_counter() - t, 2), "k", est.k_, "shapes", est.model_.shape_spec is not None)
agg = collections.defaultdict(lambda: [0, 0.0])
for n, s in log: agg[n][0] += 1; agg[n][1] += s
print(len(log), "compiles", round(sum(s for _, s in log), 2), "s;", {k: round(v, 2) for k, v in ev.items() if "compile" in k or "trace" in k or "mlir" in k})
for n, (c, s) in sorted(agg.items(), key=lambda kv: -kv[1][1])[:30]: print(f"  {s:6.2f} {c:3d} {n}")
