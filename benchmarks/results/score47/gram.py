import time, jax, jax.numpy as jnp, numpy as np
H = jax.lax.Precision.HIGHEST
def t(f, *a, reps=10):
    f = jax.jit(f); jax.block_until_ready(f(*a)); best = 1e9
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps): jax.block_until_ready(f(*a))
        best = min(best, (time.perf_counter() - t0) / reps * 1e3)
    return best
def A(phi, wu, wur, wuu):
    g = lambda a, b: jnp.matmul(a.T, b, precision=H)
    p2 = phi * phi
    return g(phi * wu[:, None], phi), g(p2 * wuu[:, None], p2), g(phi * wur[:, None], phi)
def B(phi, wu, wur, wuu):
    C = phi.shape[1]
    p2 = phi * phi
    both = jnp.matmul(jnp.concatenate([phi * wu[:, None], phi * wur[:, None]], 1).T, phi, precision=H)
    return both[:C], jnp.matmul((p2 * wuu[:, None]).T, p2, precision=H), both[C:]
rng = np.random.default_rng(0)
for m, C in ((1000, 400), (4096, 400), (750, 400)):
    phi = jnp.asarray(rng.uniform(size=(m, C)), jnp.float32)
    w = [jnp.asarray(rng.normal(size=m), jnp.float32) for _ in range(3)]
    same = all(bool(jnp.all(x == y)) for x, y in zip(A(phi, *w), B(phi, *w)))
    print(f"m={m} C={C}: A {t(A, phi, *w):.2f} ms  B {t(B, phi, *w):.2f} ms  bitwise {same}", flush=True)
def sym(a, b, blocks):
    """a.T @ b for a, b whose product is symmetric (a = b * weights): only the upper blocks."""
    C = a.shape[1]; s = C // blocks
    out = jnp.zeros((C, C), a.dtype)
    for i in range(blocks):
        ai = a[:, i * s:(i + 1) * s]
        blk = jnp.matmul(ai.T, b[:, i * s:], precision=H)  # (s, C - i s)
        out = out.at[i * s:(i + 1) * s, i * s:].set(blk)
    return out
def S(phi, wu, wur, wuu, blocks=2):
    p2 = phi * phi
    return sym(phi * wu[:, None], phi, blocks), sym(p2 * wuu[:, None], p2, blocks), sym(phi * wur[:, None], phi, blocks)
for m, C in ((1000, 400), (4096, 400), (750, 400), (1000, 1120)):
    phi = jnp.asarray(rng.uniform(size=(m, C)), jnp.float32)
    w = [jnp.asarray(rng.normal(size=m), jnp.float32) for _ in range(3)]
    ra, rs = A(phi, *w), S(phi, *w)
    up = jnp.triu(jnp.ones((C, C), bool))
    same = all(bool(jnp.all(jnp.where(up, x == y, True))) for x, y in zip(ra, rs))
    print(f"m={m} C={C}: A {t(A, phi, *w):.2f} ms  S2 {t(S, phi, *w):.2f} ms  S4 {t(lambda *a: S(*a, blocks=4), phi, *w):.2f} ms upper bitwise {same}", flush=True)
