"""Warm fits of the default TreeRegressor on a 3,000 x 16 table (pair screening on), one process:
the median of 5 fits after the first.  python warm.py CHECKOUT"""
import os, sys, time, warnings
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import numpy as np, jaxtree
warnings.simplefilter("ignore")
rng = np.random.default_rng(0); X = rng.uniform(size=(3000, 16)); y = np.sin(3 * X[:, 0]) * X[:, 1] + X[:, 2] ** 2 + 0.1 * rng.normal(size=3000)
jaxtree.TreeRegressor().fit(X, y)
ts = []
for _ in range(5):
    t = time.perf_counter(); jaxtree.TreeRegressor().fit(X, y); ts.append(time.perf_counter() - t)
print(sys.argv[1], "warm median", round(float(np.median(ts)), 3), [round(v, 3) for v in ts])
