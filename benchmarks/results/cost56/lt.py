"""The shape step's batched solve alone: 64 systems of 256, row-major factors against transposed ones
and the kept permutation (the fifty-sixth session's LU change)."""
import jax, jax.numpy as jnp, numpy as np, time
B, M = 64, 256
rng = np.random.default_rng(0)
A = rng.normal(size=(B, M, M)).astype(np.float32); A = A @ np.swapaxes(A, 1, 2) + M * np.eye(M, dtype=np.float32)
lu, piv = jax.vmap(jax.scipy.linalg.lu_factor)(A)
luT = jnp.swapaxes(lu, -1, -2); luT = jnp.array(np.asarray(luT))
c = jnp.asarray(rng.normal(size=(B, M)).astype(np.float32))
solve = jax.vmap(lambda lu, piv, c: c @ jax.scipy.linalg.lu_solve((lu, piv), c))
f1 = jax.jit(lambda lu, piv, c: solve(lu, piv, c))
f2 = jax.jit(lambda luT, piv, c: solve(jnp.swapaxes(luT, -1, -2), piv, c))
for f, a in ((f1, lu), (f2, luT)):
    r = f(a, piv, c).block_until_ready()
    t = time.perf_counter()
    for _ in range(20): r = f(a, piv, c).block_until_ready()
    print((time.perf_counter() - t) / 20 * 1000, "ms", np.asarray(r)[:3])
    txt = f.lower(a, piv, c).compile().as_text()
    print([l.strip()[:150] for l in txt.splitlines() if " copy(" in l or "transpose(" in l][:5])
def mysolve(lu, pm, c):
    tri = jax.lax.linalg.triangular_solve
    x = c[pm][:, None]
    x = tri(lu, x, left_side=True, lower=True, unit_diagonal=True)
    return tri(lu, x, left_side=True, lower=False)[:, 0]
_, _, perm = jax.vmap(jax.lax.linalg.lu)(A)
perm2 = jax.vmap(lambda p: jax.lax.linalg.lu_pivots_to_permutation(p, M))(piv)
print("perm equal", np.array_equal(np.asarray(perm), np.asarray(perm2)))
solve3 = jax.vmap(lambda lu, pm, c: c @ mysolve(lu, pm, c))
f3 = jax.jit(lambda luT, pm, c: solve3(jnp.swapaxes(luT, -1, -2), pm, c))
r = f3(luT, perm, c).block_until_ready()
t = time.perf_counter()
for _ in range(20): r = f3(luT, perm, c).block_until_ready()
print((time.perf_counter() - t) / 20 * 1000, "ms", np.asarray(r)[:3], np.array_equal(np.asarray(r), np.asarray(f1(lu, piv, c))))
