import sys, os, time
sys.path.insert(0, sys.argv[1])
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import jax, jaxtree
names = []
jax.monitoring.register_event_duration_secs_listener(
    lambda ev, d, **kw: names.append(kw.get("fun_name")) if "backend_compile" in ev else None)
from sklearn.datasets import load_diabetes
from sklearn.model_selection import GridSearchCV
X, y = load_diabetes(return_X_y=True)
t = time.perf_counter(); gs = GridSearchCV(jaxtree.TreeRegressor(), {"k": [8]}, cv=3).fit(X, y)
print(os.path.basename(sys.argv[1]), "GridSearchCV k=8 cv=3 + refit", round(time.perf_counter() - t, 2), "s, programs", len(names), "joint" if "jit(_joint)" in names else "")
