"""The demo's first fit in a fresh process (cache off): wall and process CPU time, then one warm fit.
    python cpu_demo.py CHECKOUT"""
import os, time, resource, sys
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import jaxtree, warnings
from jaxtree.datasets import paper_synthetic
warnings.simplefilter("ignore")
X, y = paper_synthetic(1333, p=10, seed=0)
r0 = resource.getrusage(resource.RUSAGE_SELF); t0 = time.perf_counter()
m = jaxtree.TreeRegressor(k=10).fit(X[:1000], y[:1000])
r1 = resource.getrusage(resource.RUSAGE_SELF); t1 = time.perf_counter()
cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
t2 = time.perf_counter(); jaxtree.TreeRegressor(k=10).fit(X[:1000], y[:1000]); t3 = time.perf_counter()
print(f"wall {t1-t0:.2f} cpu {cpu:.2f} warm {t3-t2:.3f} pred {float(m.predict(X[1000:1010])[0]):.6f}")
