"""Where one shape-stage step goes, by part, on a bench_cost case's default fit: the
fifth call of the shape stage's step captured in a warm fit, then its parts jitted alone
and timed (median of 20): the right-hand sides (shapes._rhs), the candidates' gains, the
sweep after the insertion, and the whole step. python parts.py CHECKOUT [CASE]"""
import os
import statistics
import sys
import time
import warnings

sys.path.insert(0, sys.argv[1]); sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
warnings.simplefilter("ignore")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import bench_accuracy as acc  # noqa: E402
import bench_cost  # noqa: E402
from jaxtree import search, shapes  # noqa: E402
from jaxtree._fit import stages  # noqa: E402

case = sys.argv[2] if len(sys.argv) > 2 else "diamonds_1e4"
task, X, y = bench_cost.load(case)
tr = np.random.default_rng(acc.SEED).permutation(len(y))[: int(0.8 * len(y))]
Xtr, ytr = bench_cost.rows_of(X, tr), y[tr]
acc.jaxtree_model(task).fit(Xtr, ytr)
calls = []
real = stages.OneFit.add_term


def spy(state, data, gr, spec):
    calls.append((state, data, gr, spec))
    return real(state, data, gr, spec)


stages.OneFit.add_term = staticmethod(spy)
acc.jaxtree_model(task).fit(Xtr, ytr)
stages.OneFit.add_term = staticmethod(real)
state, data, gr, spec = calls[min(4, len(calls) - 1)]
print(f"{case}: {len(calls)} shape steps; data x {tuple(data.x.shape)}, spec "
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
