import time, jaxtree
from jaxtree.datasets import paper_synthetic
X, y = paper_synthetic(n=1000, p=10, seed=0)
Xt, yt = paper_synthetic(n=1000, p=10, seed=1)
est = jaxtree.TreeRegressor(k=10).fit(X, y)
t = time.perf_counter(); p = est.predict(Xt); t1 = time.perf_counter() - t
t = time.perf_counter(); p2 = est.predict(Xt); t2 = time.perf_counter() - t
import numpy as np
print(f"first predict {t1:.3f} s, second {t2*1e3:.2f} ms, rmse {np.sqrt(np.mean((p-yt)**2)):.6f}")
