"""Times the backfitting sweep (4 sweeps of the chosen terms) on all rows' data of a warm fit, at its chunks and regrouped."""
import pathlib, sys, time, warnings, os
ROOT = pathlib.Path(os.environ.get("ROOT", pathlib.Path(__file__).resolve().parents[3]))
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
warnings.simplefilter("ignore")
import jax, jax.numpy as jnp, numpy as np
import bench_cost as bc, bench_accuracy as acc
from jaxtree import shapes as S, scoring
case = sys.argv[1] if len(sys.argv) > 1 else "flights_1e5"
task, Xtr, ytr, Xte, yte = bc.split(case)
cap = []
rd = S.refit
def spy(t, d, s, sweeps=3, gr=None):
    cap.append((t, d, s, gr)); return rd(t, d, s, sweeps, gr)
S.refit = spy
acc.jaxtree_model(task).fit(Xtr, ytr)
t_, d, s, gr = cap[-1]
fit = S.evaluate_chunks_jit(t_, d.x, s)
def tm(f, *a, reps=5):
    jax.block_until_ready(f(*a)); ts = []
    for _ in range(reps):
        t0 = time.perf_counter(); jax.block_until_ready(f(*a)); ts.append(time.perf_counter() - t0)
    return np.median(ts) * 1e3
sw = jax.jit(lambda st, dd, g: S._sweep(st, dd, g, s, 4))
nc, m = d.y.shape
print("chunks", nc, m, "terms", int(t_.n_terms))
ref = None
for r in [1] + [r for r in range(2, nc + 1) if nc % r == 0 and r * m <= 131072]:
    dd = scoring.map_rows(lambda a: a.reshape((nc // r, r * m) + a.shape[2:]), d._replace(phi=None)) if r > 1 else d
    ff = fit.reshape(nc // r, r * m)
    out = sw(S.State(t_, ff), dd, gr)
    v = np.asarray(out.fit).reshape(-1)
    ref = v if ref is None else ref
    print(f"r={r} rows {r * m}: {tm(sw, S.State(t_, ff), dd, gr):.1f} ms  max diff {np.abs(v - ref).max():.2e}")
tab = S.with_table_jit(gr, s)
for r in (1, max([r for r in range(1, nc + 1) if nc % r == 0 and r * m <= 16384])):
    dd = scoring.map_rows(lambda a: a.reshape((nc // r, r * m) + a.shape[2:]), d._replace(phi=None)) if r > 1 else d
    ff = fit.reshape(nc // r, r * m)
    v = np.asarray(sw(S.State(t_, ff), dd, tab).fit).reshape(-1)
    print(f"with factors r={r}: {tm(sw, S.State(t_, ff), dd, tab):.1f} ms  max diff {np.abs(v - ref).max():.2e}")
one = jax.jit(lambda st, dd, g: S._sweep(st, dd, g, s, 1))
print(f"1 sweep r=1: {tm(one, S.State(t_, fit), d, gr):.1f} ms; with factors {tm(one, S.State(t_, fit), d, tab):.1f} ms; with_table itself {tm(S.with_table_jit, gr, s):.1f} ms")
