"""Where one shape-stage step goes, by part, on a bench_cost case's default fit: the
fifth call of the shape stage's step captured in a warm fit, then its parts jitted alone
and timed (median of 20): the right-hand sides (shapes._rhs), the candidates' gains, the
sweep after the insertion, and the whole step. python parts.py CHECKOUT [CASE]"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _capture import fifth_shape_step  # noqa: E402  (sets up the checkout argv[1])
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxtree import search, shapes  # noqa: E402

case = sys.argv[2] if len(sys.argv) > 2 else "diamonds_1e4"
n_calls, (state, data, gr, spec) = fifth_shape_step(case)
print(f"{case}: {n_calls} shape steps; data x {tuple(data.x.shape)}, spec "
      f"{type(spec).__name__} n1={spec.n1} n2={spec.n2} pairs "
      f"{np.shape(spec.pairs) if isinstance(spec, shapes.SlotSpec) else len(spec.pairs)}")


def timed(name, f, *args):
    out = jax.block_until_ready(f(*args))
    ts = []
    for _ in range(20):
        t = time.perf_counter()
        jax.block_until_ready(f(*args))
        ts.append(time.perf_counter() - t)
    print(f"  {name:28s} {1e3 * statistics.median(ts):7.2f} ms")
    return out


traced = isinstance(spec, shapes.SlotSpec)
jit = (lambda f: jax.jit(f)) if traced else (lambda f: jax.jit(f, static_argnums=(3,)))
timed("the step", jit(lambda s, d, g, sp: search.shape_step(s, d, g, sp)), state, data, gr, spec)
b = timed("right-hand sides (_rhs)", jit(lambda s, d, g, sp: shapes._rhs(d, s.fit, sp)),
          state, data, gr, spec)
timed("gains (candidate_gains)", jit(lambda s, d, g, sp: shapes.candidate_gains(
    g, *b, sp, g[5] if len(g) > 5 else None)), state, data, gr, spec)
k = state.shapes.n_terms
timed("one-term sweep (_sweep)", jit(lambda s, d, g, sp: shapes._sweep(
    s, d, g, sp, jnp.int32(1), jnp.maximum(k - 1, 0).astype(jnp.int32))), state, data, gr, spec)
timed("mse", jit(lambda s, d, g, sp: shapes.mse(d, s.fit)), state, data, gr, spec)
cols, ia, ib, cross = shapes._pair_axes(spec, data.x.shape[-1])
x = np.asarray(data.x).reshape(-1, data.x.shape[-1])
w = np.asarray(data.w).reshape(-1)
ind = set(np.flatnonzero([np.all(np.isin(x[w > 0, j], (0.0, 1.0))) for j in range(x.shape[1])]))
cols = np.asarray(cols)
print(f"  pair axes: {len(cols)} covariates (cross product {bool(cross)}), "
      f"{sum(int(c) in ind for c in cols)} of them 0/1; pair slots "
      f"{len(np.asarray(ia))}, both axes 0/1 in "
      f"{sum(int(cols[a]) in ind and int(cols[b]) in ind for a, b in zip(np.asarray(ia), np.asarray(ib)))}, "
      f"one in {sum((int(cols[a]) in ind) != (int(cols[b]) in ind) for a, b in zip(np.asarray(ia), np.asarray(ib)))}")
