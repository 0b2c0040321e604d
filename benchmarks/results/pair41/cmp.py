import sys, os, time
sys.path.insert(0, sys.argv[1])
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import numpy as np, jax
if len(sys.argv) > 3 and sys.argv[3] == "x64": jax.config.update("jax_enable_x64", True)
import jaxtree
rng = np.random.default_rng(0)
n = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
X = rng.uniform(size=(n, 10))
y = 0.3*np.sin(3*np.pi*X[:,0])*np.cos(2*np.pi*X[:,1]) + 0.4*X[:,2]**2 - 0.3*X[:,3] + 0.1*rng.normal(size=n)
est = jaxtree.TreeRegressor(k=10).fit(X, y)
ts = []
for _ in range(5):
    t = time.perf_counter(); jaxtree.TreeRegressor(k=10).fit(X, y); ts.append(time.perf_counter() - t)
np.save(sys.argv[2], np.asarray(est.predict(X[:200]), np.float64))
print(sys.argv[1], "warm median", round(float(np.median(ts)), 3), "k", est.k_, est.formula())
