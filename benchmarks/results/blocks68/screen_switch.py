"""first + warm of the default regressor with the host stage's pair screen compiled (SWITCH=1): python screen_switch.py NxP"""
import os, sys, time, warnings, statistics
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
warnings.simplefilter("ignore")
import numpy as np, jaxtree
from jaxtree import shapes
from jaxtree._fit import host_shapes
if os.environ.get("SWITCH"): host_shapes.screen_pairs = shapes.screen_pairs
n, p = map(int, sys.argv[1].split("x"))
rng = np.random.default_rng(0)
X = rng.uniform(size=(n + 4000, p))
y = (np.sin(3*np.pi*X[:,0])*np.cos(2*np.pi*X[:,1]) + 0.5*np.sin(4*np.pi*X[:,2])*X[:,3] + X[:,4] + 0.1*rng.standard_normal(n + 4000))
X, Xt, y, yt = X[:n], X[n:], y[:n], y[n:]
t = time.perf_counter(); e = jaxtree.TreeRegressor().fit(X, y); first = time.perf_counter() - t
ws = []
for _ in range(2):
    t = time.perf_counter(); e = jaxtree.TreeRegressor().fit(X, y); ws.append(time.perf_counter() - t)
r = np.sqrt(np.mean((e.predict(Xt) - yt) ** 2))
print(f"SWITCH={os.environ.get('SWITCH','')} {sys.argv[1]}: first {first:.2f} warm {min(ws):.2f} rmse {r:.6f} k {e.k_} terms {len(e.terms_) if hasattr(e, 'terms_') else ''}", flush=True)
