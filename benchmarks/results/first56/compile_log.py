"""Per-program XLA compile times (jax_log_compiles) of the demo's first fit: python compile_log.py CHECKOUT,
run with JAXTREE_COMPILATION_CACHE=0 and a fresh XDG_CACHE_HOME."""
import sys, logging, re, time
root = sys.argv[1]; sys.path.insert(0, root)
import numpy as np, jax
jax.config.update("jax_log_compiles", True)
recs = []
class H(logging.Handler):
    def emit(self, r):
        m = re.search(r"Finished XLA compilation of (.*) in ([0-9.e-]+) sec", r.getMessage())
        if m: recs.append((m.group(1), float(m.group(2))))
logging.getLogger("jax").addHandler(H()); logging.getLogger("jax").setLevel(logging.DEBUG)
import jaxtree
from jaxtree import datasets
X, y = datasets.paper_synthetic(1000)[:2]
t = time.perf_counter(); jaxtree.TreeRegressor(k=10).fit(X, y); print("fit", round(time.perf_counter() - t, 2))
for name, s in sorted(recs, key=lambda r: -r[1])[:8]: print(f"{s:6.2f} {name}")
print("total", round(sum(s for _, s in recs), 2), len(recs))
