"""fit_batch warm time (16 data sets of 2,000 x 5, k=8, median of 5): python batch.py CHECKOUT."""
import sys, time, statistics
sys.path.insert(0, sys.argv[1])
import numpy as np, jaxtree
rng = np.random.default_rng(0)
B, n, p = 16, 2000, 5
X = rng.uniform(size=(B, n, p)); y = np.sin(3 * X[..., 0]) * X[..., 1] + X[..., 2] ** 2 + 0.05 * rng.normal(size=(B, n))
for kw in ({}, ):
    jaxtree.fit_batch(X, y, k=8); ts = []
    for _ in range(5):
        t = time.perf_counter(); m = jaxtree.fit_batch(X, y, k=8); ts.append(time.perf_counter() - t)
    print(sys.argv[1], f"{statistics.median(ts):.3f}", [round(t, 3) for t in ts])
