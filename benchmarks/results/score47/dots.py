import time, sys, jax, jax.numpy as jnp, numpy as np
H = jax.lax.Precision.HIGHEST
def t(f, *a, reps=20):
    f = jax.jit(f); jax.block_until_ready(f(*a)); best = 1e9
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps): jax.block_until_ready(f(*a))
        best = min(best, (time.perf_counter() - t0) / reps * 1e3)
    return best
def A(u3, phi):
    def body(c, x):
        wu, wuu, wur, ph = x
        return c, (wu @ ph, wuu @ (ph * ph), wur @ ph)
    return jax.lax.scan(body, 0, (*u3, phi))[1]
def B(u3, phi):
    def body(c, x):
        wu, wuu, wur, ph = x
        R = wu.shape[0]
        both = jnp.matmul(jnp.concatenate([wu, wur]), ph, precision=H)
        return c, (both[:R], jnp.matmul(wuu, ph * ph, precision=H), both[R:])
    return jax.lax.scan(body, 0, (*u3, phi))[1]
def A2(u3, phi):
    def body(c, x):
        wu, wuu, wur, ph = x
        return c, (jnp.matmul(wu, ph, precision=H), jnp.matmul(wuu, ph * ph, precision=H), jnp.matmul(wur, ph, precision=H))
    return jax.lax.scan(body, 0, (*u3, phi))[1]
def C(u3, phi):  # transposed products
    def body(c, x):
        wu, wuu, wur, ph = x
        R = wu.shape[0]
        both = jnp.matmul(ph.T, jnp.concatenate([wu, wur]).T, precision=H)
        s2 = jnp.matmul((ph * ph).T, wuu.T, precision=H)
        return c, (both[:, :R].T, s2.T, both[:, R:].T)
    return jax.lax.scan(body, 0, (*u3, phi))[1]
rng = np.random.default_rng(0)
for R, P in ((22, 400), (26, 1120), (26, 400)):
    nc, m = 8, 2048
    u3 = tuple(jnp.asarray(rng.normal(size=(nc, R, m)), jnp.float32) for _ in range(3))
    phi = jnp.asarray(rng.uniform(size=(nc, m, P)), jnp.float32)
    ra, rb = A2(u3, phi), B(u3, phi)
    same = all(bool(jnp.all(x == y)) for x, y in zip(ra, rb))
    print(f"R={R} P={P}: A {t(A2, u3, phi):.2f} ms  B {t(B, u3, phi):.2f} ms  C {t(C, u3, phi):.2f} ms  bitwise A==B {same}", flush=True)
