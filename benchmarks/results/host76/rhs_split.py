"""The shape step's right-hand side of a bench_cost case timed whole, with mains only, and its main hats alone
(the arguments of its fifth step captured from a warm fit): ROOT=<checkout> python rhs_split.py CASE"""
import pathlib, sys, time, warnings, os
ROOT = pathlib.Path(os.environ.get("ROOT", "/work/main"))
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
warnings.simplefilter("ignore")
import jax, jax.numpy as jnp, numpy as np
import bench_cost as bc, bench_accuracy as acc
from jaxtree import search, shapes as S, scoring
case = sys.argv[1]
task, Xtr, ytr, Xte, yte = bc.split(case)
cap = []
orig = search.shape_step_jit
def spy(*a, **k):
    cap.append((a, k)); return orig(*a, **k)
import jaxtree._fit.stages as st
st.OneFit.add_term = staticmethod(spy)
acc.jaxtree_model(task).fit(Xtr, ytr)
a, k = cap[4]; state, data, gr, spec = a[:4]
print("data", data.x.shape, "pairs", S._n_pairs(spec), type(spec).__name__, spec.n1, spec.n2)
g = S.group_arrays(spec, data.x.shape[-1])
print("groups", None if g is None else [np.asarray(v).tolist() for v in g])
def t(f, *args, reps=15):
    jax.block_until_ready(f(*args)); ts = []
    for _ in range(reps):
        t0 = time.perf_counter(); jax.block_until_ready(f(*args)); ts.append(time.perf_counter() - t0)
    return np.median(ts) * 1e3
J = (lambda f: jax.jit(f)) if isinstance(spec, S.SlotSpec) else (lambda f: jax.jit(f, static_argnums=(2,)))
rhs = J(lambda d, fit, sp: S._rhs(d, fit, sp))
print("full", f"{t(rhs, data, state.fit, spec):.1f} ms")
if not isinstance(spec, S.SlotSpec):
    sp0 = spec._replace(pairs=())
    print("mains only", f"{t(rhs, data, state.fit, sp0):.1f} ms")
    def hats_only(d, fit, sp):
        def body(acc, ch):
            xb, yb, wb, fb = ch
            x1, x2 = S._views(xb, sp)
            return acc + jnp.sum(S._main_design(x1, sp.n1)), None
        return scoring.scan_live(body, jnp.zeros((), d.x.dtype), (d.x, d.y, d.w, fit), d.w)[0]
    print("main hats only", f"{t(J(hats_only), data, state.fit, sp0):.1f} ms")
