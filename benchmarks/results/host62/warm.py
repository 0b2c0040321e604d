"""Warm fits of the default estimator (median of 7 after one first fit) on the demo's data
and on a 1,500 x 6 table whose truth is smooth (shape terms kept), in this process's
checkout (run it with PYTHONPATH pointing at a checkout)."""
import sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
import jaxtree
from jaxtree.datasets import paper_synthetic

X, y = paper_synthetic(1333, p=10, seed=0)
rng = np.random.default_rng(0)
S = rng.uniform(size=(1500, 6))
f = 2 * np.abs(S[:, 0] - 0.5) + np.sin(3 * S[:, 1]) + S[:, 2] * S[:, 3] + 0.5 * S[:, 4]
ys = f + 0.1 * rng.standard_normal(1500)
for name, (a, b) in {"demo 1000x10": (X[:1000], y[:1000]), "smooth 1500x6": (S, ys)}.items():
    jaxtree.TreeRegressor(k=10).fit(a, b)
    ts = []
    for _ in range(7):
        t0 = time.perf_counter()
        est = jaxtree.TreeRegressor(k=10).fit(a, b)
        ts.append(time.perf_counter() - t0)
    terms = 0 if est.model_.shapes is None else int(est.model_.shapes.n_terms)
    print(f"{name}: warm fit median {np.median(ts):.3f} s (min {min(ts):.3f}), shape terms {terms}, "
          f"train RMSE {np.sqrt(np.mean((est.predict(a) - b) ** 2)):.5f}")
