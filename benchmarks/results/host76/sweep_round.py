"""The device backfitting round (shapes._sweep, the fit's sweeps) of a bench_cost case timed on its captured
arguments, median of 15, then (timing only, wrong numbers) without the views: ROOT=<checkout> python sweep_round.py CASE"""
import pathlib, sys, time, warnings, os
ROOT = pathlib.Path(os.environ.get("ROOT", "/work/main"))
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
warnings.simplefilter("ignore")
import jax, jax.numpy as jnp, numpy as np
import bench_cost as bc, bench_accuracy as acc
from jaxtree import shapes as S
case = sys.argv[1]
task, Xtr, ytr, Xte, yte = bc.split(case)
cap = []
orig = S.finish_jit
class Spy:
    def __getattr__(self, k): return getattr(orig, k)
    def __call__(self, *a, **k):
        cap.append((a, k)); return orig(*a, **k)
S.finish_jit = Spy()
acc.jaxtree_model(task).fit(Xtr, ytr)
S.finish_jit = orig
print("captured", len(cap))
a, k = cap[-1]
state, data, gr, spec = a[:4]; sweeps = a[4] if len(a) > 4 else k.get("sweeps")
print("data", data.x.shape, type(spec).__name__, "terms", int(state.shapes.n_terms), "sweeps", sweeps, "groups", bool(getattr(spec, "groups", ())))
def t(f, *args, reps=15):
    jax.block_until_ready(f(*args)); ts = []
    for _ in range(reps):
        t0 = time.perf_counter(); jax.block_until_ready(f(*args)); ts.append(time.perf_counter() - t0)
    return np.median(ts) * 1e3
J = (lambda f: jax.jit(f)) if isinstance(spec, S.SlotSpec) else (lambda f: jax.jit(f, static_argnums=(3,)))
fin = J(lambda st, d, g, sp: S._sweep(st, d, g, sp, sweeps))
print("round", f"{t(fin, state, data, gr, spec):.1f} ms")
real = S._views
S._views = lambda x, sp: (x, x)
fin2 = J(lambda st, d, g, sp: S._sweep(st, d, g, sp, sweeps))
print("round without views (timing only)", f"{t(fin2, state, data, gr, spec):.1f} ms")
