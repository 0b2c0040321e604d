"""shapes._rhs by part on a bench_cost case's data (its fifth shape step's rows; as
parts.py): the main shapes' dense hats contracted with the weighted residual, and the
pairs' cross product, each alone under jit, median of 20: python rhs_parts.py CHECKOUT CASE"""
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
from jaxtree import shapes  # noqa: E402
from jaxtree._fit import stages  # noqa: E402

case = sys.argv[2]
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
n1, n2 = spec.n1, spec.n2
cols, ia, ib, cross = shapes._pair_axes(spec, data.x.shape[-1])
cols = jnp.asarray(cols)


def scan(body, init):
    return jax.lax.scan(lambda acc, ch: (body(acc, *ch), None), init,
                        (data.x, data.y, data.w, state.fit))[0]


def main(x, y, w, f):
    return scan(lambda a, xb, yb, wb, fb: a + jnp.einsum(
        "m,mpk->pk", wb * (yb - fb), shapes._main_design(xb, n1)),
        jnp.zeros((x.shape[-1], n1), x.dtype))


def pairs(x, y, w, f):
    q = cols.shape[0]

    def body(a, xb, yb, wb, fb):
        h = shapes._paired_hats(xb, cols, n2).reshape(xb.shape[0], q * n2)
        return a + (h * (wb * (yb - fb))[:, None]).T @ h
    return scan(body, jnp.zeros((q * n2, q * n2), x.dtype))


def timed(name, f):
    f = jax.jit(f)
    args = (data.x, data.y, data.w, state.fit)
    jax.block_until_ready(f(*args))
    ts = []
    for _ in range(20):
        t = time.perf_counter()
        jax.block_until_ready(f(*args))
        ts.append(time.perf_counter() - t)
    print(f"  {name:40s} {1e3 * statistics.median(ts):7.2f} ms")


print(f"{case}: data x {tuple(data.x.shape)}, n1 {n1}, {cols.shape[0]} pair covariates x {n2}")
timed("main shapes (dense hats, einsum)", main)
timed("pairs (cross product of the pair hats)", pairs)
timed("_rhs", lambda x, y, w, f: shapes._rhs(data, state.fit, spec))
