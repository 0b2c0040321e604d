"""first (fresh process, cache off) + median-of-2 warm fit and RMSE of the default regressor on a
wide uniform table, in CHECKOUT: python ab_first.py CHECKOUT NxP"""
import os, sys, time, warnings, statistics
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
root = sys.argv[1]; sys.path.insert(0, root)
warnings.simplefilter("ignore")
import numpy as np, jaxtree
assert jaxtree.__file__.startswith(root)
n, p = map(int, sys.argv[2].split("x"))
rng = np.random.default_rng(0)
X = rng.uniform(size=(n + 4000, p))
y = (np.sin(3*np.pi*X[:,0])*np.cos(2*np.pi*X[:,1]) + 0.5*np.sin(4*np.pi*X[:,2])*X[:,3] + X[:,4]
     + 0.1*rng.standard_normal(n + 4000))
X, Xt, y, yt = X[:n], X[n:], y[:n], y[n:]
t = time.perf_counter(); e = jaxtree.TreeRegressor().fit(X, y); first = time.perf_counter() - t
ws = []
for _ in range(2):
    t = time.perf_counter(); e = jaxtree.TreeRegressor().fit(X, y); ws.append(time.perf_counter() - t)
r = np.sqrt(np.mean((e.predict(Xt) - yt) ** 2))
print(f"{os.path.basename(root)} {sys.argv[2]}: first {first:.2f} s, warm {statistics.median(ws):.2f} s, rmse {r:.6f}, k {e.k_}", flush=True)
