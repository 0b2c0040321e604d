import os, sys, time, logging, threading
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import numpy as np, jax, jaxtree, warnings
warnings.simplefilter("ignore")
recs=[]
class H(logging.Handler):
    def emit(self, r):
        m=r.getMessage()
        if m.startswith("Finished"): recs.append((time.perf_counter(), threading.current_thread().name[:14], m[:100]))
for n in ("jax._src.dispatch","jax._src.compiler","jax._src.interpreters.pxla"):
    lg=logging.getLogger(n); lg.setLevel(logging.DEBUG); lg.addHandler(H())
jax.config.update("jax_log_compiles", True)
rng = np.random.default_rng(0); n = int(sys.argv[2])
Xb = rng.uniform(size=(n, 8)); yb = (np.sin(4 * Xb[:, 0]) + Xb[:, 1] * Xb[:, 2] + 0.3 * rng.normal(size=n) > 0.6).astype(int)
t0 = time.perf_counter(); jaxtree.TreeClassifier().fit(Xb, yb); print("FIT", round(time.perf_counter()-t0, 2))
for t, th, m in recs:
    if "XLA" in m or "tracing" in m: print(f"{t-t0:6.2f} {th:14s} {m}")
