import os, sys, time, threading, logging, re
import jax
T0 = time.perf_counter()
class H(logging.Handler):
    def emit(self, r):
        m = r.getMessage()
        mm = re.search(r"Finished (.*?) (?:for|of) (.*?) in ([0-9.]+) sec", m)
        if mm:
            t = time.perf_counter() - T0
            print("%6.2f-%6.2f %-12s %-22s %s" % (t - float(mm.group(3)), t, threading.current_thread().name[:12], mm.group(1)[:22], mm.group(2)[:40]))
jax.config.update("jax_log_compiles", True)
logging.getLogger("jax").addHandler(H()); logging.getLogger("jax").setLevel(logging.WARNING)
logging.getLogger("jax").propagate = False
import jaxtree
from jaxtree.datasets import paper_synthetic
X, y = paper_synthetic(n=1000, p=10, seed=0)
t1 = time.perf_counter() - T0
est = jaxtree.TreeRegressor(k=10).fit(X, y)
print("fit from %.2f to %.2f" % (t1, time.perf_counter() - T0))
