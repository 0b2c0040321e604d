"""The demo's first fit (1,000 x 10, cache off) in this fresh process: wall and CPU seconds.

    python first_fit_cpu.py                  # the default
    python first_fit_cpu.py "{'shapes': 0}"  # no shape stage
"""
import os, time, resource, sys
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import warnings; warnings.simplefilter("ignore")
import jaxtree
from jaxtree.datasets import paper_synthetic
X, y = paper_synthetic(1333, p=10, seed=0)
r0 = resource.getrusage(resource.RUSAGE_SELF); t0 = time.perf_counter()
kw = eval(sys.argv[1]) if len(sys.argv) > 1 else {}
jaxtree.TreeRegressor(k=10, **kw).fit(X[:1000], y[:1000])
r1 = resource.getrusage(resource.RUSAGE_SELF); t1 = time.perf_counter()
print(f"wall {t1-t0:.2f} cpu {r1.ru_utime-r0.ru_utime + r1.ru_stime-r0.ru_stime:.2f}")
