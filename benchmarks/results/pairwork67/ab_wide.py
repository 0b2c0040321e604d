"""A first fit (fresh process, jaxtree's executable cache off) and the median of three warm
fits of the default TreeRegressor on a wide synthetic table, in the checkout argv[1], with the
test RMSE on 4,000 fresh rows:

    python benchmarks/results/pairwork67/ab_wide.py CHECKOUT cats5000|reg3000x20|reg1500x64

cats5000: three categorical columns of 30 levels and three uniform ones, 5,000 rows, additive
level effects plus sin(5 x0); regNxP: N rows of P uniform covariates, sin(6 x0) + x1 x2 +
sin(3 pi x3) cos(2 pi x4), noise 0.1. The label says "old" where the path holds "old67"."""
import os, sys, time, warnings, statistics
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
root = sys.argv[1]; sys.path.insert(0, root)
warnings.simplefilter("ignore")
import numpy as np, pandas as pd, jaxtree
assert jaxtree.__file__.startswith(root)
case = sys.argv[2]
rng = np.random.default_rng(0)
if case == "cats5000":
    n = 9000
    X = pd.DataFrame({f"c{i}": pd.Categorical(rng.integers(0, 30, n).astype(str)) for i in range(3)})
    for i in range(3):
        X[f"x{i}"] = rng.uniform(size=n)
    eff = {f"c{i}": rng.normal(size=30) for i in range(3)}
    y = np.asarray(sum(eff[f"c{i}"][X[f"c{i}"].astype(int).to_numpy()] for i in range(3))
                   + np.sin(5 * X["x0"]) + 0.1 * rng.normal(size=n))
    X, Xt, y, yt = X.iloc[:5000], X.iloc[5000:].reset_index(drop=True), y[:5000], y[5000:]
else:
    n, p = map(int, case[3:].split("x"))
    X = rng.uniform(size=(n + 4000, p))
    y = (np.sin(6 * X[:, 0]) + X[:, 1] * X[:, 2] + np.sin(3 * np.pi * X[:, 3]) * np.cos(2 * np.pi * X[:, 4])
         + 0.1 * rng.normal(size=n + 4000))
    X, Xt, y, yt = X[:n], X[n:], y[:n], y[n:]
t = time.perf_counter(); e = jaxtree.TreeRegressor().fit(X, y); first = time.perf_counter() - t
ws = []
for _ in range(3):
    t = time.perf_counter(); e = jaxtree.TreeRegressor().fit(X, y); ws.append(time.perf_counter() - t)
rmse = float(np.sqrt(np.mean((e.predict(Xt) - yt) ** 2)))
print(f"{'old' if 'old67' in root else 'new'} {case}: first {first:.2f} s, warm {statistics.median(ws):.2f} s, "
      f"rmse {rmse:.6f}, k {e.k_}", flush=True)
