"""A first fit in a fresh process (jaxtree's cache off) and XLA's compilations in it.

    python first.py CHECKOUT clf   # TreeClassifier() on breast cancer's first 455 rows
    python first.py CHECKOUT reg   # TreeRegressor() on 3,000 x 16 uniform rows

Prints the fit's seconds, its k, whether it kept shape terms, the compilations (count, XLA's
seconds, JAX's trace / lower / compile events) and the costliest programs. (One script for
the logs clf_first.log and reg_first.log, which two copies of it wrote.)"""
import collections
import os
import sys
import time
import warnings

os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else "/work/main")
import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax._src import compiler  # noqa: E402
from jax._src.interpreters import pxla  # noqa: E402

import jaxtree  # noqa: E402

warnings.simplefilter("ignore")
log = []
orig = compiler.compile_or_get_cached


def hook(backend, comp, *a, **k):
    t = time.perf_counter()
    r = orig(backend, comp, *a, **k)
    log.append((str(comp.operation.attributes["sym_name"]).strip('"'), time.perf_counter() - t))
    return r


compiler.compile_or_get_cached = hook
pxla.compiler.compile_or_get_cached = hook
ev = collections.defaultdict(float)
jax.monitoring.register_event_duration_secs_listener(
    lambda e, d, **k: ev.__setitem__(e.rsplit("/", 1)[-1], ev[e.rsplit("/", 1)[-1]] + d))

if (sys.argv[2] if len(sys.argv) > 2 else "clf") == "clf":
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
    X, y, est = X[:455], y[:455], jaxtree.TreeClassifier()
else:
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(3000, 16))
    y = np.sin(3 * X[:, 0]) * X[:, 1] + X[:, 2] ** 2 + 0.1 * rng.normal(size=3000)
    est = jaxtree.TreeRegressor()
t = time.perf_counter()
est.fit(X, y)
print("fit", round(time.perf_counter() - t, 2), "k", est.k_, "shapes",
      est.model_.shape_spec is not None)
agg = collections.defaultdict(lambda: [0, 0.0])
for n, s in log:
    agg[n][0] += 1
    agg[n][1] += s
print(len(log), "compiles", round(sum(s for _, s in log), 2), "s;",
      {k: round(v, 2) for k, v in ev.items() if "compile" in k or "trace" in k or "mlir" in k})
for n, (c, s) in sorted(agg.items(), key=lambda kv: -kv[1][1])[:30]:
    print(f"  {s:6.2f} {c:3d} {n}")
