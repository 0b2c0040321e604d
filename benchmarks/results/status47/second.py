import sys, time, os
sys.path.insert(0, sys.argv[1])
mode = sys.argv[2]
import numpy as np
import jaxtree
from jaxtree.datasets import paper_synthetic
X, y = paper_synthetic(1000 + 333, p=10, seed=0)
X, y = X[:1000], y[:1000]
if mode == "prof":
    import cProfile, pstats
    pr = cProfile.Profile(); t0 = time.perf_counter(); pr.enable()
    jaxtree.TreeRegressor(k=10).fit(X, y)
    pr.disable(); t = time.perf_counter() - t0
    print("fit", round(t, 3))
    st = pstats.Stats(pr); st.sort_stats("cumulative").print_stats(45)
else:
    t0 = time.perf_counter(); jaxtree.TreeRegressor(k=10).fit(X, y); t1 = time.perf_counter()
    jaxtree.TreeRegressor(k=10).fit(X, y); t2 = time.perf_counter()
    print("fit", round(t1 - t0, 3), "warm", round(t2 - t1, 3))
