import sys, os, time
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else "/work/main")
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import jax, jaxtree
from jaxtree.debug import count_compilations
from sklearn.datasets import load_wine
names = []
jax.monitoring.register_event_duration_secs_listener(
    lambda ev, d, **kw: names.append(kw.get("fun_name")) if "backend_compile" in ev else None)
X, y = load_wine(return_X_y=True)
est = jaxtree.TreeClassifier().fit(X, y)
for label, f in [("formula", lambda: est.formula()), ("formula again", lambda: est.formula()), ("terms", lambda: est.terms() if hasattr(est, "terms") else None), ("predict_proba", lambda: est.predict_proba(X[:50])), ("save/str", lambda: str(est))]:
    names.clear(); t = time.perf_counter()
    with count_compilations() as c:
        f()
    print(f"{label:15s} {time.perf_counter() - t:6.3f} s compiles {c.compiles} {sorted(set(names))[:10]}")
