import time, numpy as np
t0 = time.perf_counter()
import jaxtree
rng = np.random.default_rng(0)
X = rng.uniform(size=(1000, 10)); y = (np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=1000)) > 0.5
t = time.perf_counter(); jaxtree.TreeClassifier().fit(X, y); t1 = time.perf_counter() - t
t = time.perf_counter(); jaxtree.TreeClassifier().fit(X, y); t2 = time.perf_counter() - t
print(f"first {t1:.2f} warm {t2:.3f}", jaxtree.__file__)
