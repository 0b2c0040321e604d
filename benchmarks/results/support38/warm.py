import sys, time, numpy as np
import jaxtree
from jaxtree import datasets
rng = np.random.default_rng(0)
n, p = [int(v) for v in sys.argv[1].split("x")]
X = rng.uniform(size=(n, p)); y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=n)
jaxtree.TreeRegressor().fit(X, y)
ts = []
for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 5):
    t = time.perf_counter(); jaxtree.TreeRegressor().fit(X, y); ts.append(time.perf_counter() - t)
print(sys.argv[1], "warm median %.3f min %.3f" % (np.median(ts), min(ts)), jaxtree.__file__)
