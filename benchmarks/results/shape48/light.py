"""The shape stage's step compiled with XLA's defaults and with the light options it is
compiled with on every CPU fit (jaxtree._executables.LIGHT_LLVM1), on the fifth step of a
bench_cost case's warm default fit; each timed alternately, median of 30:
python light.py CHECKOUT [CASE]"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _capture import fifth_shape_step  # noqa: E402  (sets up the checkout argv[1])
import jax  # noqa: E402

from jaxtree import _executables, search, shapes  # noqa: E402

case = sys.argv[2] if len(sys.argv) > 2 else "diamonds_4e4"
_, (state, data, gr, spec) = fifth_shape_step(case)
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
