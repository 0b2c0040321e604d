"""A 3-class TreeClassifier()'s fit and first predict_proba of 500 rows (1,000 x 6 training
rows, synthetic), a fresh process: ``python ovr_predict.py`` (set PYTHONPATH to a checkout)."""
import time
import numpy as np
import jaxtree
rng = np.random.default_rng(0)
X = rng.uniform(size=(1500, 6))
y = np.digitize(np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=1500), [0.5, 1.0])
t = time.perf_counter(); clf = jaxtree.TreeClassifier().fit(X[:1000], y[:1000]); tf = time.perf_counter() - t
t = time.perf_counter(); p = clf.predict_proba(X[1000:]); tp = time.perf_counter() - t
t = time.perf_counter(); clf.predict_proba(X[1000:]); t2 = time.perf_counter() - t
print(f"fit {tf:.2f} s, first predict_proba {tp:.3f} s, second {t2 * 1e3:.2f} ms, "
      f"accuracy {np.mean(p.argmax(1) == y[1000:]):.4f}")
