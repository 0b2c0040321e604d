"""Per-chunk scan: dense design+products (today's row_moments core) vs level sums for the
discrete columns (segment sums per chunk, then levels' basis values) + dense for the rest."""
import time, statistics, numpy as np, jax, jax.numpy as jnp, sys
from jaxtree import basis as basis_, scoring
n, m, R = 100_352, 2048, 8          # 49 chunks; R = 2L stack rows
MODE = sys.argv[4] if len(sys.argv) > 4 else "scatter"
pc, pd, K = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])  # continuous, discrete cols, levels
rng = np.random.default_rng(0)
basis = basis_.get_basis(None); q = basis.q
xc = jnp.asarray(rng.random((n // m, m, pc)), jnp.float32)
levels = jnp.asarray(np.sort(rng.random((pd, K)), 1), jnp.float32)
codes = jnp.asarray(rng.integers(0, K, (n // m, m, pd)), jnp.int32)
xd = jnp.take_along_axis(jnp.broadcast_to(levels.T[None], (n // m, K, pd)), codes, 1) if pd else None
xall = jnp.concatenate([xc, xd], -1) if pd else xc
u = jnp.asarray(rng.standard_normal((n // m, R, m)), jnp.float32)
r = jnp.asarray(rng.standard_normal((n // m, R, m)), jnp.float32)
w = jnp.ones((n // m, m), jnp.float32)
def timeit(f, *a):
    jax.block_until_ready(f(*a)); ts = []
    for _ in range(7):
        t = time.perf_counter(); jax.block_until_ready(f(*a)); ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3
@jax.jit
def dense(xall, u, r, w):
    def body(acc, ch):
        xb, ub, rb, wb = ch
        mo = scoring.row_moments(ub, rb, wb, scoring.design(xb, basis), q)
        return scoring.merge(acc, mo), None
    init = scoring.zero_moments(R, (pc + pd) * q, jnp.float32)
    return jax.lax.scan(body, init, (xall, u, r, w))[0]
phiv = basis.evaluate(levels.T, axis=1).reshape(K, q, pd) if pd else None  # (K, q, pd)
@jax.jit
def mixed(xc, codes, u, r, w):
    def body(acc, ch):
        xb, cb, ub, rb, wb = ch
        nn, rbar, rc, (wu, wuu, wur) = scoring._row_stacks(ub, rb, wb)
        parts1, parts2, parts3 = [], [], []
        if pc:
            s1, s2, s3 = (scoring.to_feature_major(s, q, pc) for s in scoring._design_sums((wu, wuu, wur), scoring.design(xb, basis), jax.lax.Precision.HIGHEST))
            parts1.append(s1); parts2.append(s2); parts3.append(s3)
        if pd:
            st = jnp.concatenate([wu, wur, wuu]).T            # (m, 3R)
            idx = (cb + jnp.arange(pd) * K).reshape(-1)         # (m*pd,)
            if MODE == "onehot":
                oh = (cb[:, :, None] == jnp.arange(K)[None, None, :]).astype(st.dtype).reshape(m, pd * K)
                H = (oh.T @ st).reshape(pd, K, 3 * R)
            else:
                H = jax.ops.segment_sum(jnp.repeat(st, pd, axis=0), idx, pd * K).reshape(pd, K, 3 * R)
            a = jnp.einsum("jkr,kij->rji", H[:, :, :2 * R], phiv).reshape(2 * R, pd * q)
            b = jnp.einsum("jkr,kij->rji", H[:, :, 2 * R:], phiv * phiv).reshape(R, pd * q)
            parts1.append(a[:R]); parts3.append(a[R:]); parts2.append(b)
        s1, s2, s3 = (jnp.concatenate(p, 1) for p in (parts1, parts2, parts3))
        return scoring.merge(acc, scoring._centred(nn, rbar, rc, wb, s1, s2, s3)), None
    init = scoring.zero_moments(R, (pc + pd) * q, jnp.float32)
    return jax.lax.scan(body, init, (xc, codes, u, r, w))[0]
a = dense(xall, u, r, w); b = mixed(xc, codes, u, r, w)
print(f"pc={pc} pd={pd} K={K}: max rel diff mrs", float(jnp.max(jnp.abs(a.mrs - b.mrs)) / jnp.max(jnp.abs(a.mrs))),
      "css", float(jnp.max(jnp.abs(a.mss - b.mss)) / jnp.max(jnp.abs(a.mss))))
print(f"  dense {timeit(dense, xall, u, r, w):.1f} ms   mixed {timeit(mixed, xc, codes, u, r, w):.1f} ms")
