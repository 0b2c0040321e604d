"""shapes._rhs by part on a bench_cost case's data (its fifth shape step's rows; as
parts.py): the main shapes' dense hats contracted with the weighted residual, and the
pairs' cross product, each alone under jit, median of 20: python rhs_parts.py CHECKOUT CASE"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _capture import fifth_shape_step  # noqa: E402  (sets up the checkout argv[1])
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from jaxtree import shapes  # noqa: E402

case = sys.argv[2]
_, (state, data, gr, spec) = fifth_shape_step(case)
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
