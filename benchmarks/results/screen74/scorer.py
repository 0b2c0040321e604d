"""The scorer alone at 80,000 x 8 (float32; float64 with an argument): scoring.score against
scoring.screened_score on trees of 0-11 leaves (sums, and with products): the choices, the
scores' largest difference with every candidate kept, and the best of five times.
python benchmarks/results/screen74/scorer.py [x64]"""
import functools, pathlib, sys, time, warnings
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3]))
warnings.simplefilter("ignore")
import numpy as np, jax, jax.numpy as jnp
x64 = len(sys.argv) > 1
jax.config.update("jax_enable_x64", x64)
from jaxtree import scoring, basis as B, program as prog
dt = np.float64 if x64 else np.float32
n, p = 80_000, 8
rng = np.random.default_rng(0)
x = rng.random((n, p)).astype(dt)
y = (np.sin(3*np.pi*x[:, 0]) + x[:, 1]*np.cos(2*np.pi*x[:, 2]) + 0.3*rng.standard_normal(n)).astype(dt)
basis = B.default_basis()
data = scoring.chunk(x, y, chunk_size=2048)
def tree(L, mul=False):
    pr = prog.empty_program(10, dt)
    pr = prog.insert(pr, 0, prog.ADD, 0, 1, 0.5)
    for i in range(1, L):
        leaves = np.flatnonzero(np.asarray(pr.op) == prog.LEAF)
        pr = prog.insert(pr, int(leaves[-1]), prog.MUL if (mul and i % 2) else prog.ADD, i % p, (3 * i) % 40, 0.3)
    return pr
f = jax.jit(functools.partial(scoring.score, basis=basis, max_leaves=11, buckets=(1, 2, 4, 8)))
g = jax.jit(functools.partial(scoring.screened_score, basis=basis, max_leaves=11, buckets=(1, 2, 4, 8), screen_rows=16384))
h = jax.jit(functools.partial(scoring.screened_score, basis=basis, max_leaves=11, buckets=(1, 2, 4, 8), screen_rows=16384, candidates=7040))
def tm(fn, pr):
    jax.block_until_ready(fn(pr, data)); ts=[]
    for _ in range(5):
        t=time.perf_counter(); jax.block_until_ready(fn(pr, data)); ts.append(time.perf_counter()-t)
    return min(ts)*1e3
for L in (0, 1, 3, 6, 11):
    for mul in (False, True):
        pr = tree(L, mul) if L else prog.empty_program(10, dt)
        a, b, c = f(pr, data), g(pr, data), h(pr, data)
        ca, cb, cc = (scoring.select(s, 40) for s in (a, b, c))
        fin = np.isfinite(np.asarray(c.sse))
        err = np.max(np.abs(np.asarray(c.sse)[fin] - np.asarray(a.sse)[fin]) / float(a.rss))
        print(L, mul, "choice", int(ca.flat_index), int(cb.flat_index), int(cc.flat_index),
              "w", float(ca.weight), float(cb.weight), "sse", float(ca.sse), float(cb.sse),
              "rss", float(a.rss), float(b.rss), "allerr", err, "finite", fin.sum(), np.isfinite(np.asarray(a.sse)).sum(),
              f"t {tm(f, pr):.1f} {tm(g, pr):.1f} ms", flush=True)
