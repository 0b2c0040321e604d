"""The shape stage's step compiled with XLA's defaults and with the light options it is
compiled with on every CPU fit (jaxtree._executables.LIGHT_LLVM1), on the fifth step of a
bench_cost case's warm default fit; each timed alternately, median of 30:
python light.py CHECKOUT [CASE]"""
import os
import statistics
import sys
import time
import warnings

sys.path.insert(0, sys.argv[1]); sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
warnings.simplefilter("ignore")
import jax  # noqa: E402
import numpy as np  # noqa: E402

import bench_accuracy as acc  # noqa: E402
import bench_cost  # noqa: E402
from jaxtree import _executables, search, shapes  # noqa: E402
from jaxtree._fit import stages  # noqa: E402

case = sys.argv[2] if len(sys.argv) > 2 else "diamonds_4e4"
task, X, y = bench_cost.load(case)
tr = np.random.default_rng(acc.SEED).permutation(len(y))[: int(0.8 * len(y))]
Xtr, ytr = bench_cost.rows_of(X, tr), y[tr]
acc.jaxtree_model(task).fit(Xtr, ytr)
calls = []
real = stages.OneFit.add_term
stages.OneFit.add_term = staticmethod(lambda *a: calls.append(a) or real(*a))
acc.jaxtree_model(task).fit(Xtr, ytr)
stages.OneFit.add_term = staticmethod(real)
state, data, gr, spec = calls[min(4, len(calls) - 1)]
traced = isinstance(spec, shapes.SlotSpec)
f = jax.jit(search.shape_step, static_argnums=() if traced else (3,))
low = f.lower(state, data, gr, spec)
exes = {"defaults": low.compile(), "light (LLVM 1, no fusion emitters)":
        low.compile(compiler_options=dict(_executables.LIGHT_LLVM1)),
        "no fusion emitters only": low.compile(compiler_options=dict(_executables.LIGHT))}
args = (state, data, gr) if not traced else (state, data, gr, spec)
ts = {k: [] for k in exes}
for _ in range(30):
    for k, e in exes.items():
        t = time.perf_counter()
        jax.block_until_ready(e(*args))
        ts[k].append(time.perf_counter() - t)
print(f"{case}: shape step, data x {tuple(data.x.shape)}")
for k, v in ts.items():
    print(f"  {k:38s} {1e3 * statistics.median(v):7.2f} ms")
