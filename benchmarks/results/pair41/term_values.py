import sys, os, time
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else "/work/main")
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import jax, jaxtree
from jaxtree import export
from jaxtree.debug import count_compilations
names = []
jax.monitoring.register_event_duration_secs_listener(
    lambda ev, d, **kw: names.append(kw.get("fun_name")) if "backend_compile" in ev else None)
from sklearn.datasets import load_diabetes
X, y = load_diabetes(return_X_y=True)
est = jaxtree.TreeRegressor().fit(X, y)
for label, f in [("term_values", lambda: export.term_values(est.model_, X)), ("again", lambda: export.term_values(est.model_, X)), ("predict", lambda: est.predict(X))]:
    names.clear(); t = time.perf_counter()
    with count_compilations() as c:
        f()
    print(f"{label:15s} {time.perf_counter() - t:6.3f} s compiles {c.compiles} {sorted(set(names))[:10]}")
