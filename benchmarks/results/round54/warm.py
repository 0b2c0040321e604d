"""Warm fits of the default TreeRegressor at n rows x 8 (uniform covariates, so every column's
range is rounded out: the round-bounds rule's full host cost), for the jaxtree on PYTHONPATH:
one fit to compile, then REPEATS timed fits; prints the median.

    PYTHONPATH=<checkout> python benchmarks/results/round54/warm.py N REPEATS
"""
import statistics
import sys
import time

import jaxtree  # the checkout on PYTHONPATH
import numpy as np

n, repeats = int(float(sys.argv[1])), int(sys.argv[2])
rng = np.random.default_rng(0)
X = rng.uniform(0.0013, 0.9991, size=(n, 8)).astype(np.float32)
y = (np.sin(3 * np.pi * X[:, 0]) * X[:, 1] + X[:, 2] ** 2 + 0.1 * rng.normal(size=n)).astype(np.float32)
jaxtree.TreeRegressor(k=10).fit(X, y)
times = []
for _ in range(repeats):
    t0 = time.perf_counter()
    jaxtree.TreeRegressor(k=10).fit(X, y)
    times.append(time.perf_counter() - t0)
print(f"{jaxtree.__file__} n={n} warm median {statistics.median(times):.3f} s {[round(t, 3) for t in times]}")
