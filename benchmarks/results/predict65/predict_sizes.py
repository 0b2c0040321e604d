"""Warm ``predict`` by rows, on the host (numpy) against the compiled prediction
(sixty-fifth session): three models of the demo's rows (its default fit; ``shapes=6``; a
tree of 11 leaves and 12 shape terms), median of 15 calls. ``python predict_sizes.py
CHECKOUT``."""
import sys
import time
import warnings

sys.path.insert(0, sys.argv[1])
warnings.simplefilter("ignore")
import numpy as np  # noqa: E402

import jaxtree  # noqa: E402
from jaxtree._fit import pipeline  # noqa: E402
from jaxtree.datasets import paper_synthetic  # noqa: E402

X, y = paper_synthetic(1000, p=10, seed=0)
rng = np.random.default_rng(0)
y3 = np.sin(5 * X) @ rng.normal(size=10) + X[:, 0] * X[:, 1] * X[:, 2]
models = {"demo": jaxtree.TreeRegressor(k=10).fit(X, y),
          "shapes=6": jaxtree.TreeRegressor(k=10, shapes=6).fit(X, y),
          "full": jaxtree.TreeRegressor(k=10).fit(X, y3)}
Xb, _ = paper_synthetic(20000, p=10, seed=1)
for name, e in models.items():
    leaves = jaxtree.program.n_ops(e.model_.program) + 1
    terms = 0 if e.model_.shapes is None else int(e.model_.shapes.n_terms)
    for n in (10, 333, 1024, 4096, 16384):
        res = {}
        for mode, lim in (("host", 10**9), ("compiled", 0)):
            pipeline.HOST_PREDICT_MAX_ROWS = lim
            e.predict(Xb[:n])
            ts = []
            for _ in range(15):
                t = time.perf_counter()
                e.predict(Xb[:n])
                ts.append(time.perf_counter() - t)
            res[mode] = np.median(ts) * 1e3
        print(f"{name:9s} ({leaves:2d} leaves, {terms:2d} shape terms) rows {n:6d}: "
              f"host {res['host']:.3f} ms  compiled {res['compiled']:.3f} ms", flush=True)
