import sys, time, statistics, warnings
import numpy as np
import jaxtree
warnings.simplefilter("ignore")
n, p = int(sys.argv[1]), int(sys.argv[2])
clf = len(sys.argv) > 3
rng = np.random.default_rng(0)
X = rng.uniform(size=(n, p)); X[:, 0] = rng.integers(0, 5, n)
y = np.sin(3 * X[:, 1]) + X[:, 2] * X[:, p - 1] + 0.1 * X[:, 0] + 0.05 * rng.normal(size=n)
if clf: y = (y + 0.3 * rng.normal(size=n) > np.median(y)).astype(int)
make = jaxtree.TreeClassifier if clf else jaxtree.TreeRegressor
t = time.perf_counter(); est = make(k=10).fit(X, y); first = time.perf_counter() - t
ws = []
for _ in range(7):
    t = time.perf_counter(); make(k=10).fit(X, y); ws.append(time.perf_counter() - t)
print(f"{n}x{p} first {first:.2f} warm median {statistics.median(ws):.3f} min {min(ws):.3f}  pred[:3] {(est.predict_proba(X[:3])[:, 1] if clf else est.predict(X[:3]))}")
