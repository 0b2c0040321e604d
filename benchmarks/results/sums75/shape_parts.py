"""Times the parts of the shape step on a bench_cost case's captured arguments."""
import pathlib, sys, time, warnings, os
ROOT = pathlib.Path(os.environ.get("ROOT", pathlib.Path(__file__).resolve().parents[3]))
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
warnings.simplefilter("ignore")
import jax, jax.numpy as jnp, numpy as np
import bench_cost as bc, bench_accuracy as acc
from jaxtree import search, shapes as S
case = sys.argv[1] if len(sys.argv) > 1 else "flights_1e5"
task, Xtr, ytr, Xte, yte = bc.split(case)
make = lambda: acc.jaxtree_model(task)
cap = []
orig = search.shape_step_jit
def spy(*a, **k):
    cap.append((a, k)); return orig(*a, **k)
search.shape_step_jit = spy
import jaxtree._fit.stages as st
st.OneFit.add_term = staticmethod(spy)
make().fit(Xtr, ytr)
print("captured", len(cap))
a, k = cap[0]
state, data, gr, spec = a[:4]
print("data x", data.x.shape, "spec", type(spec).__name__, "n1 n2", spec.n1, spec.n2, "pairs", S._n_pairs(spec), "gr", len(gr))
print("pair axes cross", S._pair_axes(spec, data.x.shape[-1])[3], len(S._pair_axes(spec, data.x.shape[-1])[0]))
def t(f, *args, reps=7):
    out = jax.block_until_ready(f(*args)); ts = []
    for _ in range(reps):
        t0 = time.perf_counter(); jax.block_until_ready(f(*args)); ts.append(time.perf_counter() - t0)
    return np.median(ts) * 1e3
J = (lambda f: jax.jit(f)) if isinstance(spec, S.SlotSpec) else (lambda f: jax.jit(f, static_argnums=(f.__code__.co_argcount - 1,)))
rhs = J(lambda st_, d, sp: S._rhs(d, st_.fit, sp))
def gains(st_, d, g, sp):
    b1, b2, e = S._rhs(d, st_.fit, sp)
    return S.candidate_gains(g, b1, b2, e, sp, g[5] if len(g) > 5 else None)
gj = J(gains)
sw1 = J(lambda st_, d, g, sp: S._sweep(st_, d, g, sp, jnp.int32(1), 0))
sw8 = J(lambda st_, d, g, sp: S._sweep(st_, d, g, sp, jnp.int32(8), 0))
step = J(lambda st_, d, g, sp: search.shape_step(st_, d, g, sp, 1))
for i in (0, 4, 7):
    a, _ = cap[i]; st_, d, g, sp = a[:4]
    st0 = st_[0] if isinstance(st_, tuple) and not isinstance(st_, S.State) else st_
    print(i, type(st_).__name__)
    try:
        print(f"step {i}: rhs {t(rhs, st0, d, sp):.1f} ms, rhs+gains {t(gj, st0, d, g, sp):.1f} ms, sweep1 {t(sw1, st0, d, g, sp):.1f} ms, sweep8 {t(sw8, st0, d, g, sp):.1f} ms, full {t(orig, *a):.1f} ms")
    except Exception as e:
        import traceback; traceback.print_exc(); break
