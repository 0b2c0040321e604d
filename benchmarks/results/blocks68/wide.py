"""The default TreeRegressor on wide synthetic tables (56, 80 and 120 uniform covariates,
seeds 0-2) in the checkout argv[1]: test RMSE on 4,000 fresh rows, the warm fit (after one
fit of the same shapes), k and the pairs in the formula.

    python benchmarks/results/blocks68/wide.py CHECKOUT [TRUTH] [N]

TRUTH "product" (default): sin(3 pi x1) cos(2 pi x2) + 0.5 sin(4 pi x3) x4 + x5, noise 0.1;
"paper": jaxtree.datasets.paper_function, noise 0.2; "local": a bump 4 exp(-20((x1-.7)^2 +
(x2-.3)^2)) + x1 x2 + x3, noise 0.1 (an interaction no low cosine resembles closely);
N rows (default 3,000). The label says "old" where the path holds "old68"."""
import os, sys, time, warnings
root = sys.argv[1]; sys.path.insert(0, root)
warnings.simplefilter("ignore")
import numpy as np, jaxtree
assert jaxtree.__file__.startswith(root)
truth = sys.argv[2] if len(sys.argv) > 2 else "product"
n = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
tag = "old" if "old68" in root else "new"
for p in (56, 80, 120):
    for seed in (0, 1, 2):
        rng = np.random.default_rng(seed)
        X = rng.uniform(size=(n + 4000, p))
        if truth == "paper":
            from jaxtree.datasets import paper_function
            y = paper_function(X) + 0.2 * rng.standard_normal(n + 4000)
        elif truth == "local":
            y = (4 * np.exp(-20 * ((X[:, 0] - .7) ** 2 + (X[:, 1] - .3) ** 2)) + X[:, 0] * X[:, 1]
                 + X[:, 2] + 0.1 * rng.standard_normal(n + 4000))
        else:
            y = (np.sin(3 * np.pi * X[:, 0]) * np.cos(2 * np.pi * X[:, 1])
                 + 0.5 * np.sin(4 * np.pi * X[:, 2]) * X[:, 3] + X[:, 4]
                 + 0.1 * rng.standard_normal(n + 4000))
        Xt, yt, X, y = X[n:], y[n:], X[:n], y[:n]
        jaxtree.TreeRegressor().fit(X, y)
        t = time.perf_counter(); e = jaxtree.TreeRegressor().fit(X, y); w = time.perf_counter() - t
        rmse = np.sqrt(np.mean((e.predict(Xt) - yt) ** 2))
        print(f"{tag} {truth} n={n} p={p} seed={seed}: rmse {rmse:.5f} warm {w:.2f} s k {e.k_}",
              flush=True)
