"""fit_batch(X, y, k=5) on 8 x 500 x 5, warm: the median and minimum of 7 fits after a first one.

    XDG_CACHE_HOME=DIR PYTHONPATH=CHECKOUT python batch_warm.py
"""
import time, numpy as np, jaxtree
rng = np.random.default_rng(0)
X = rng.uniform(size=(8, 500, 5)); y = np.sin(3 * X[..., 0]) + X[..., 1] * X[..., 2] + 0.1 * rng.normal(size=(8, 500))
jaxtree.fit_batch(X, y, k=5)
ts = []
for _ in range(7):
    t = time.perf_counter(); jaxtree.fit_batch(X, y, k=5); ts.append(time.perf_counter() - t)
print("warm fit_batch median", round(sorted(ts)[3], 4), "min", round(min(ts), 4))
