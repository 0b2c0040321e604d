"""TreeRegressor.paper(k=10) on paper_synthetic(1000, 10): its first fit and the min and
median of 15 warm fits. ``python paper_warm.py CHECKOUT`` with a fresh XDG_CACHE_HOME."""
import sys, time, warnings
sys.path.insert(0, sys.argv[1]); warnings.simplefilter("ignore")
import numpy as np, jaxtree
from jaxtree.datasets import paper_synthetic
X, y = paper_synthetic(n=1000, p=10, seed=0)
t = time.perf_counter(); e = jaxtree.TreeRegressor.paper(k=10).fit(X, y); first = time.perf_counter() - t
ws = []
for _ in range(15):
    t = time.perf_counter(); jaxtree.TreeRegressor.paper(k=10).fit(X, y); ws.append(time.perf_counter() - t)
print(f"paper first {first:.2f} s warm min {min(ws)*1e3:.1f} ms median {np.median(ws)*1e3:.1f} ms")
