import os, sys, time, logging
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import numpy as np, pandas as pd, jax, jaxtree, warnings, threading
warnings.simplefilter("ignore")
recs=[]
class H(logging.Handler):
    def emit(self, r):
        m=r.getMessage()
        if m.startswith("Finished"): recs.append((time.perf_counter(), threading.current_thread().name[:14], m[:110]))
for n in ("jax._src.dispatch","jax._src.compiler","jax._src.interpreters.pxla"):
    lg=logging.getLogger(n); lg.setLevel(logging.DEBUG); lg.addHandler(H())
jax.config.update("jax_log_compiles", True)
n, p = 20000, 10
rng = np.random.default_rng(0)
x = rng.uniform(size=(n, p)); codes = rng.integers(0, 5, n)
y = np.sin(3 * x[:, 1]) + x[:, 2] * x[:, p - 1] + 0.3 * codes + 0.05 * rng.normal(size=n)
X = pd.DataFrame(x, columns=[f"x{j}" for j in range(p)]); X["x0"] = pd.Categorical(np.array(list("abcde"))[codes])
t0 = time.perf_counter(); jaxtree.TreeRegressor(k=10).fit(X, y); print("FIT", round(time.perf_counter()-t0, 2))
for t, th, m in recs: print(f"{t-t0:6.2f} {th:14s} {m}")
