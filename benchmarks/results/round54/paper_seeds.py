"""The paper's function: the default TreeRegressor(k=10) on n rows of paper_synthetic(seed),
test RMSE against the noiseless g on 2,000 fresh rows, for the jaxtree on PYTHONPATH.

    PYTHONPATH=<checkout> python benchmarks/results/round54/paper_seeds.py --n 1000 \
        --seeds 0-19 --out OUT.json
"""
import argparse
import json
import warnings

import jaxtree  # the checkout on PYTHONPATH
import numpy as np
from jaxtree.datasets import paper_function, paper_synthetic

ap = argparse.ArgumentParser()
ap.add_argument("--n", type=int, default=1000)
ap.add_argument("--seeds", default="0-19")
ap.add_argument("--out", required=True)
a = ap.parse_args()
lo, hi = map(int, a.seeds.split("-"))
print(f"jaxtree from {jaxtree.__file__}", flush=True)
X_test, _ = paper_synthetic(n=2000, p=10, seed=10_000)
g = paper_function(X_test)
rows = []
for seed in range(lo, hi + 1):
    X, y = paper_synthetic(n=a.n, p=10, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = jaxtree.TreeRegressor(k=10).fit(X, y)
    rmse = float(np.sqrt(np.mean((est.predict(X_test) - g) ** 2)))
    rows.append({"seed": seed, "rmse": rmse, "formula": est.formula()})
    print(f"seed {seed:2d}  RMSE {rmse:.5f}  {est.formula()}", flush=True)
print(f"mean RMSE {np.mean([r['rmse'] for r in rows]):.5f}", flush=True)
json.dump({"jaxtree": jaxtree.__file__, "n": a.n, "rows": rows}, open(a.out, "w"), indent=1)
