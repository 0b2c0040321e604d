import os, sys, time, warnings, statistics
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import jaxtree
from jaxtree.datasets import paper_synthetic
warnings.simplefilter("ignore")
X, y = paper_synthetic(n=1000, p=10, seed=0)
jaxtree.TreeRegressor(k=10).fit(X, y); jaxtree.TreeRegressor.paper(k=10).fit(X, y)
d, p = [], []
for _ in range(7):
    t = time.perf_counter(); jaxtree.TreeRegressor(k=10).fit(X, y); d.append(time.perf_counter() - t)
    t = time.perf_counter(); jaxtree.TreeRegressor.paper(k=10).fit(X, y); p.append(time.perf_counter() - t)
print(sys.argv[2], f"default warm median {statistics.median(d):.4f} min {min(d):.4f}; paper warm median {statistics.median(p):.4f} min {min(p):.4f}")
