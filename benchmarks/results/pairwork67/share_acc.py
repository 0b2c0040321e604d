"""Test RMSE and the chosen k of the default TreeRegressor over 28 synthetic tables (the
paper's function and a five-term truth with a pure product; 2,500-9,000 rows, 10 or 20
covariates, seeds 0-1) at sizes where the held-out size's training part and all rows fall in
row buckets of different pair-screen strides; SHARE=1 patches the old rule's stride check
away, so that the selection run is chunked as all rows (written for the code before the
sixty-seventh session's change of select.selection_rows; the logs were made at ed62c8a,
with the PAIR_WORK change in and the stride check still there).

    SHARE=0 python benchmarks/results/pairwork67/share_acc.py > share_acc_0.log
    SHARE=1 python benchmarks/results/pairwork67/share_acc.py > share_acc_1.log
"""
import os, sys, time, warnings
warnings.simplefilter("ignore")
import numpy as np, jaxtree
from jaxtree._fit import select
from jaxtree.datasets import paper_function
if os.environ.get("SHARE") == "1":
    select._stride = lambda *a: 0
for truth in ("paper", "five"):
    for n, p in ((2500, 10), (4500, 10), (5000, 10), (9000, 10), (2500, 20), (5000, 20), (9000, 20)):
        for seed in (0, 1):
            rng = np.random.default_rng(seed)
            X = rng.uniform(size=(n + 4000, p))
            if truth == "paper":
                y = paper_function(X) + 0.1 * rng.standard_normal(n + 4000)
            else:
                y = (np.sin(6 * X[:, 0]) + X[:, 1] * X[:, 2] + np.sin(3 * np.pi * X[:, 3]) * np.cos(2 * np.pi * X[:, 4])
                     + 0.1 * rng.standard_normal(n + 4000))
            X, Xt, y, yt = X[:n], X[n:], y[:n], y[n:]
            e = jaxtree.TreeRegressor().fit(X, y)
            print(f"SHARE={os.environ.get('SHARE','0')} {truth} n={n} p={p} seed={seed}: rmse {np.sqrt(np.mean((e.predict(Xt)-yt)**2)):.6f} k {e.k_}", flush=True)
