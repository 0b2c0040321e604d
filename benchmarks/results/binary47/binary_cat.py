"""The issue-27 table (20,000 x 10, column 0 a 5-level pandas category: 14 encoded columns, 5
indicators): first fit (fresh process, cache off) and median of 3 warm fits, as is or with
cache_basis=False and the indicators scored from two columns (table_config patched, as
binary_small.py). python binary_cat.py CHECKOUT asis|binary"""
import sys, time, os, statistics
sys.path.insert(0, sys.argv[1])
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import warnings; warnings.simplefilter("ignore")
import numpy as np, pandas as pd, jaxtree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _patch import force_indicators  # noqa: E402
mode = sys.argv[2]
n, p = 20000, 10
rng = np.random.default_rng(0)
x = rng.uniform(size=(n, p)); codes = rng.integers(0, 5, n)
y = np.sin(3 * x[:, 1]) + x[:, 2] * x[:, p - 1] + 0.3 * codes + 0.05 * rng.normal(size=n)
X = pd.DataFrame(x, columns=[f"x{j}" for j in range(p)])
X["x0"] = pd.Categorical(np.array(list("abcde"))[codes])
kw = {}
if mode == "binary":
    kw["cache_basis"] = False
    force_indicators()
t0 = time.perf_counter(); e = jaxtree.TreeRegressor(**kw).fit(X, y); first = time.perf_counter() - t0
ts = []
for _ in range(3):
    t0 = time.perf_counter(); e = jaxtree.TreeRegressor(**kw).fit(X, y); ts.append(time.perf_counter() - t0)
print(f"{mode}: first {first:.2f} s  warm median {statistics.median(ts):.3f} s  train R2 {e.score(X, y):.5f}")
