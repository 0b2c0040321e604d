import time, sys, numpy as np
import jaxtree
rng = np.random.default_rng(0)
n, p = [int(v) for v in sys.argv[1].split("x")]
X = rng.uniform(size=(n, p)); y = (np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n)) > 0.5
jaxtree.TreeClassifier().fit(X, y)
ts = []
for _ in range(7):
    t = time.perf_counter(); jaxtree.TreeClassifier().fit(X, y); ts.append(time.perf_counter() - t)
print(sys.argv[1], f"warm median {np.median(ts):.3f} min {min(ts):.3f}", jaxtree.__file__)
