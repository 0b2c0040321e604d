"""ISLR Wage (bench_accuracy.load_wage), the default TreeRegressor(): the first fit and 4 warm
fits in a fresh process. ``python wage_warm.py CHECKOUT`` with a fresh XDG_CACHE_HOME."""
import sys, time, warnings
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[1] + "/benchmarks"); warnings.simplefilter("ignore")
import numpy as np, jaxtree, bench_accuracy as b
X, y = b.load_wage()
t = time.perf_counter(); jaxtree.TreeRegressor().fit(X, y); first = time.perf_counter() - t
ws = []
for _ in range(4):
    t = time.perf_counter(); jaxtree.TreeRegressor().fit(X, y); ws.append(time.perf_counter() - t)
print(f"first {first:.2f} warm {' '.join(f'{w:.2f}' for w in ws)} median {np.median(ws):.2f}")
