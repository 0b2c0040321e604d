import os, sys, time
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import numpy as np, jaxtree
from jaxtree.datasets import paper_synthetic
X, y = paper_synthetic(1333, p=10, seed=0)
t = time.perf_counter(); jaxtree.TreeRegressor(k=10).fit(X[:1000], y[:1000]); print(f"{time.perf_counter() - t:.2f}")
