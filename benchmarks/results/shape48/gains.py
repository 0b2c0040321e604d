"""The shape search's gains c' A^{-1} c of B blocks of M columns (random SPD systems,
float32): batched LU solves (as before the forty-eighth session) against one batched
product with the inverses computed once; median of 50: python gains.py. Tried in
shapes.candidate_gains (forty-eighth session) and not kept: see BENCHMARKS.md, "The shape
stage is now the largest part of the warm cost"."""
import time, statistics, jax, jax.numpy as jnp, numpy as np
rng = np.random.default_rng(0)
def spd(B, M):
    a = rng.normal(size=(B, M, 2*M)).astype(np.float32)
    return jnp.asarray(a @ a.transpose(0, 2, 1) / (2*M) + 0.1*np.eye(M, dtype=np.float32))
for B, M in [(12, 32), (64, 256)]:
    A = spd(B, M); c = jnp.asarray(rng.normal(size=(B, M)).astype(np.float32))
    lu = jax.vmap(jax.scipy.linalg.lu_factor)(A)
    inv = jax.vmap(lambda l, p: jax.scipy.linalg.lu_solve((l, p), jnp.eye(M, dtype=jnp.float32)))(*lu)
    solve = jax.jit(jax.vmap(lambda lu, c: c @ jax.scipy.linalg.lu_solve(lu, c)))
    mv = jax.jit(lambda inv, c: jnp.einsum("bi,bij,bj->b", c, inv, c))
    mv2 = jax.jit(lambda inv, c: jnp.sum(c * jnp.einsum("bij,bj->bi", inv, c), -1))
    for name, f, args in [("lu_solve", solve, (lu, c)), ("inverse einsum", mv, (inv, c)), ("inverse matvec", mv2, (inv, c))]:
        out = jax.block_until_ready(f(*args)); ts=[]
        for _ in range(50):
            t=time.perf_counter(); jax.block_until_ready(f(*args)); ts.append(time.perf_counter()-t)
        print(B, M, name, f"{1e3*statistics.median(ts):.3f} ms", np.asarray(out)[:2])
