"""The pairs' cross product of 8 covariates' hats over 40 chunks of 2,048 rows: whole, by upper-triangle rows, and in halves.
python benchmarks/results/sums75/cross.py (k = 16; edit k for 32)"""
import time, numpy as np, jax, jax.numpy as jnp
from functools import partial
def t(f, *args, reps=9):
    jax.block_until_ready(f(*args)); ts = []
    for _ in range(reps):
        t0 = time.perf_counter(); jax.block_until_ready(f(*args)); ts.append(time.perf_counter() - t0)
    return np.median(ts) * 1e3
nc, m, q, k = 40, 2048, 8, 16
rng = np.random.default_rng(0)
H = jnp.asarray(rng.random((nc, m, q * k), np.float32)); W = jnp.asarray(rng.random((nc, m), np.float32))
@jax.jit
def full(H, W):
    def body(acc, ch):
        h, w = ch
        return acc + (h * w[:, None]).T @ h, None
    return jax.lax.scan(body, jnp.zeros((q * k, q * k)), (H, W))[0]
@jax.jit
def tri(H, W):
    def body(acc, ch):
        h, w = ch
        hw = h * w[:, None]
        return tuple(acc[a] + hw[:, a * k:(a + 1) * k].T @ h[:, (a + 1) * k:] for a in range(q - 1)), None
    init = tuple(jnp.zeros((k, (q - a - 1) * k)) for a in range(q - 1))
    return jax.lax.scan(body, init, (H, W))[0]
@jax.jit
def tri2(H, W):  # two halves: the upper-left square's triangle... rows [0,q/2) x all cols right of a-block start
    def body(acc, ch):
        h, w = ch
        hw = h * w[:, None]
        s = q // 2 * k
        return (acc[0] + hw[:, :s].T @ h, acc[1] + hw[:, s:].T @ h[:, s:]), None
    s = q // 2 * k
    return jax.lax.scan(body, (jnp.zeros((s, q * k)), jnp.zeros((q * k - s, q * k - s))), (H, W))[0]
print("k", k, "full", t(full, H, W), "tri", t(tri, H, W), "tri2", t(tri2, H, W))
