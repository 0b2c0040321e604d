import sys, time, collections, logging
import numpy as np, jax
import jaxtree
from jaxtree.datasets import paper_synthetic
from jax._src import dispatch
recs=[]
class H(logging.Handler):
    def emit(self, r):
        m=r.getMessage()
        if "Finished" in m or "compil" in m.lower(): recs.append((time.perf_counter(), m[:160]))
lg=logging.getLogger("jax._src.dispatch"); lg.setLevel(logging.DEBUG); lg.addHandler(H())
lg2=logging.getLogger("jax._src.compiler"); lg2.setLevel(logging.DEBUG); lg2.addHandler(H())
jax.config.update("jax_log_compiles", True)
X, y = paper_synthetic(1333, p=10, seed=0)
t0 = time.perf_counter()
est = jaxtree.TreeRegressor(k=10).fit(X[:1000], y[:1000])
print("FIT", round(time.perf_counter()-t0, 3))
for t,m in recs: print(round(t-t0,2), m)
