"""The default TreeClassifier() on three classes, a fresh process, cache off: first fit, XLA time, warm fit (min of 3).
    python ovr.py wine|N CHECKOUT OUT.npy  (N: rows of a synthetic 8-column table)"""
import os, sys, time, warnings
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[2]); import numpy as np, jaxtree, jax
from sklearn.datasets import load_wine
warnings.simplefilter("ignore")
ev = {}
jax.monitoring.register_event_duration_secs_listener(lambda e, d, **k: ev.__setitem__(e.rsplit('/',1)[-1], ev.get(e.rsplit('/',1)[-1], 0) + d))
if sys.argv[1] == "wine":
    X, y = load_wine(return_X_y=True)
else:
    rng = np.random.default_rng(0); n = int(sys.argv[1]); X = rng.uniform(size=(n, 8))
    f = np.stack([np.sin(3 * X[:, 0]), X[:, 1] * X[:, 2], X[:, 3] ** 2]); y = np.argmax(f + 0.3 * rng.normal(size=f.shape), 0)
t = time.perf_counter(); c = jaxtree.TreeClassifier().fit(X, y); first = time.perf_counter() - t
ws = []
for _ in range(3):
    t = time.perf_counter(); c2 = jaxtree.TreeClassifier().fit(X, y); ws.append(time.perf_counter() - t)
p = c.predict_proba(X)
np.save(sys.argv[3], p)
print(sys.argv[2], sys.argv[1], "first", round(first, 2), "xla", round(ev.get("backend_compile_duration", 0), 2), "warm", round(min(ws), 3), "k", c.k_, "acc", round(c.score(X, y), 4))
