import time, jaxtree, numpy as np
from jaxtree.datasets import paper_synthetic
X, y = paper_synthetic(n=1000, p=10, seed=0)
Xt, yt = paper_synthetic(n=1000, p=10, seed=1)
t = time.perf_counter(); est = jaxtree.TreeRegressor(k=10).fit(X, y); tf = time.perf_counter() - t
t = time.perf_counter(); p = est.predict(Xt); tp = time.perf_counter() - t
print(f"after warmup: fit {tf:.3f} s, first predict {tp:.3f} s")
