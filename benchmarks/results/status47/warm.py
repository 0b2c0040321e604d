"""Per-program time of the demo's warm default fit (each cached call blocked until ready)."""
import sys, time, collections
sys.path.insert(0, sys.argv[1])
import os; os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import jax, numpy as np
import jaxtree
from jaxtree import _executables as E
from jaxtree.datasets import paper_synthetic
X, y = paper_synthetic(1333, p=10, seed=0); X, y = X[:1000], y[:1000]
jaxtree.TreeRegressor(k=10).fit(X, y)
stats = collections.defaultdict(lambda: [0, 0.0])
orig = E.cached.__call__
def call(self, *a):
    t0 = time.perf_counter(); r = jax.block_until_ready(orig(self, *a))
    s = stats[getattr(self.fn, "__name__", str(self.fn))]; s[0] += 1; s[1] += time.perf_counter() - t0
    return r
E.cached.__call__ = call
for rep in range(3):
    stats.clear()
    t0 = time.perf_counter(); est = jaxtree.TreeRegressor(k=10).fit(X, y); t = time.perf_counter() - t0
    print(f"warm fit {t:.3f} s; cached programs {sum(v[1] for v in stats.values()):.3f} s")
for k, (n, s) in sorted(stats.items(), key=lambda kv: -kv[1][1]):
    print(f"  {k:30s} {n:4d} calls {s*1e3:8.1f} ms  {s/n*1e3:6.2f} ms/call")
print(est.formula()[:200])
