import os, sys, time, warnings
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import jaxtree
from jaxtree.datasets import paper_synthetic
warnings.simplefilter("ignore")
X, y = paper_synthetic(n=1000, p=10, seed=0)
t = time.perf_counter(); c = os.times()
jaxtree.TreeRegressor(k=10).fit(X, y)
w = time.perf_counter() - t; c2 = os.times()
cpu = (c2.user - c.user) + (c2.system - c.system)
print(sys.argv[2], f"wall {w:.2f} cpu {cpu:.2f} ratio {cpu / w:.2f}")
