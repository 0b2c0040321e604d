"""Times host_shapes.refit on captured arguments (hostrefit.py) in the checkout ROOT (default
/work/main): the median and least of 7 calls, a checksum of its outputs, and with a second
argument a cProfile of one call: ROOT=<checkout> python refit_time.py refit_CASE.pkl [prof]."""
import sys, time, pickle, os, warnings
ROOT = os.environ.get("ROOT", "/work/main"); sys.path.insert(0, ROOT)
warnings.simplefilter("ignore")
import numpy as np
from jaxtree._fit import host_shapes as H
a, k = pickle.load(open(sys.argv[1], "rb"))
out = H.refit(*a, **k)
ts = []
for _ in range(7):
    t = time.perf_counter(); out = H.refit(*a, **k); ts.append(time.perf_counter() - t)
print("refit ms median %.1f min %.1f" % (np.median(ts) * 1e3, min(ts) * 1e3))
print("checksum", float(np.sum(np.asarray(out.shapes.main, np.float64))), float(np.sum(np.asarray(out.shapes.pair, np.float64))), float(np.sum(np.asarray(out.fit, np.float64))))
if len(sys.argv) > 2:
    import cProfile, pstats
    pr = cProfile.Profile(); pr.enable(); H.refit(*a, **k); pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(18)
