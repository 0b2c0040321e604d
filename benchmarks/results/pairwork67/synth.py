"""The default TreeRegressor on synthetic tables of 16, 24 and 32 uniform covariates (seeds
0-2) whose truth holds a product without marginal signal, with jaxtree.search.PAIR_WORK from
the environment (unset: the library's); test RMSE on 4,000 fresh rows and the warm fit.

    PAIR_WORK=4294967296 python benchmarks/results/pairwork67/synth.py   (the old bound)
    TRUTH=paper NOISE=0.2 N=3000 python benchmarks/results/pairwork67/synth.py

Default truth: sin(3 pi x1) cos(2 pi x2) + 0.5 sin(4 pi x3) x4 + x5, noise 0.1, 6,000 rows;
TRUTH=paper: jaxtree.datasets.paper_function with noise NOISE on N rows."""
import os, sys, time, warnings, statistics
warnings.simplefilter("ignore")
import numpy as np, jaxtree
from jaxtree import search
from jaxtree.datasets import paper_synthetic
if os.environ.get("PAIR_WORK"): search.PAIR_WORK = int(os.environ["PAIR_WORK"])
tag = os.environ.get("PAIR_WORK", "library")
for p in (16, 24, 32):
    for seed in (0, 1, 2):
        n = int(os.environ.get("N", "6000"))
        rng = np.random.default_rng(seed)
        X = rng.uniform(size=(n + 4000, p))
        if os.environ.get("TRUTH") == "paper":
            from jaxtree.datasets import paper_function
            y = paper_function(X) + float(os.environ.get("NOISE", "0.1")) * rng.standard_normal(n + 4000)
        else:
            y = (np.sin(3 * np.pi * X[:, 0]) * np.cos(2 * np.pi * X[:, 1]) + 0.5 * np.sin(4 * np.pi * X[:, 2]) * X[:, 3]
                 + X[:, 4] + 0.1 * rng.standard_normal(n + 4000))
        Xt, yt, X, y = X[n:], y[n:], X[:n], y[:n]
        jaxtree.TreeRegressor().fit(X, y)
        t = time.perf_counter(); e = jaxtree.TreeRegressor().fit(X, y); w = time.perf_counter() - t
        rmse = np.sqrt(np.mean((e.predict(Xt) - yt) ** 2))
        print(f"{tag} p={p} seed={seed}: rmse {rmse:.5f} warm {w:.2f} s k {e.k_ if hasattr(e, 'k_') else ''}", flush=True)
