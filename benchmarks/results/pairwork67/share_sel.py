"""A first fit (fresh process, cache off) and a warm fit of the default TreeRegressor on N x P
uniform rows (ab_wide.py's truth), as the library does (SHARE=0), or with the held-out size's
selection run padded to the final fit's rows even where the pair screen's stride then differs
(SHARE=1: select._stride patched), so that the two share every compiled program. Written
for the code before the sixty-seventh session's change of select.selection_rows, which
made SHARE=1's rule the library's.

    SHARE=1 python benchmarks/results/pairwork67/share_sel.py reg5000x20
"""
import os, sys, time, warnings
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
warnings.simplefilter("ignore")
import numpy as np, jaxtree
from jaxtree._fit import select
if os.environ.get("SHARE") == "1":
    select._stride = lambda *a: 0
case = sys.argv[1]; n, p = map(int, case[3:].split("x"))
rng = np.random.default_rng(0)
X = rng.uniform(size=(n + 4000, p))
y = np.sin(6 * X[:, 0]) + X[:, 1] * X[:, 2] + np.sin(3 * np.pi * X[:, 3]) * np.cos(2 * np.pi * X[:, 4]) + 0.1 * rng.normal(size=n + 4000)
X, Xt, y, yt = X[:n], X[n:], y[:n], y[n:]
t = time.perf_counter(); e = jaxtree.TreeRegressor().fit(X, y); first = time.perf_counter() - t
t = time.perf_counter(); e = jaxtree.TreeRegressor().fit(X, y); warm = time.perf_counter() - t
print(f"SHARE={os.environ.get('SHARE','0')} {case}: first {first:.2f} s warm {warm:.2f} s rmse {np.sqrt(np.mean((e.predict(Xt)-yt)**2)):.6f} k {e.k_}", flush=True)
