"""The paper setting's warm fit (TreeRegressor.paper() on 1,000 x 10), median of N after a first fit.
    python paper_warm.py CHECKOUT N"""
import sys, time, warnings, statistics
sys.path.insert(0, sys.argv[1])
import numpy as np, jaxtree
from jaxtree.datasets import paper_synthetic
warnings.simplefilter("ignore")
X, y = paper_synthetic(1000, p=10, seed=0)
est = jaxtree.TreeRegressor.paper()
est.fit(X, y)
ts = []
for _ in range(int(sys.argv[2])):
    t = time.perf_counter(); jaxtree.TreeRegressor.paper().fit(X, y); ts.append(time.perf_counter() - t)
print(sys.argv[1], f"{statistics.median(ts)*1000:.1f} ms", f"min {min(ts)*1000:.1f}")
