"""The demo's warm fit and the time in host_shapes.Design and its gains per fit (medians of
15), in the checkout argv[1].

    python benchmarks/results/products67/design_time.py CHECKOUT
"""
import sys, time, warnings, statistics
root = sys.argv[1]; sys.path.insert(0, root)
warnings.simplefilter("ignore")
import numpy as np, jaxtree
from jaxtree._fit import host_shapes as H
from jaxtree.datasets import paper_synthetic
X, y = paper_synthetic(1333, p=10, seed=0); X, y = X[:1000], y[:1000]
acc = {"t": 0.0}
init = H.Design.__init__
def timed(self, *a, **k):
    t = time.perf_counter(); init(self, *a, **k); acc["t"] += time.perf_counter() - t
H.Design.__init__ = timed
g0 = H.Design.gains
def tg(self, *a):
    t = time.perf_counter(); r = g0(self, *a); acc["t"] += time.perf_counter() - t; return r
H.Design.gains = tg
jaxtree.TreeRegressor(k=10).fit(X, y)
ds, fs = [], []
for _ in range(15):
    acc["t"] = 0.0
    t = time.perf_counter(); jaxtree.TreeRegressor(k=10).fit(X, y); fs.append(time.perf_counter() - t); ds.append(acc["t"])
print(root, f"fit median {statistics.median(fs)*1e3:.1f} ms, designs+gains median {statistics.median(ds)*1e3:.1f} ms")
