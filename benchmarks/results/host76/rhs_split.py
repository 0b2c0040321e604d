"""The shape step's right-hand side of a bench_cost case timed whole, with mains only, and its main hats alone
(the arguments of its fifth step captured from a warm fit): ROOT=<checkout> python rhs_split.py CASE"""
import sys
import _capture as C
import jax, jax.numpy as jnp, numpy as np
from jaxtree import shapes as S, scoring
import jaxtree._fit.stages as st
case = sys.argv[1]
_, cap = C.calls(case, st.OneFit, "add_term")
a, k = cap[4]; state, data, gr, spec = a[:4]
print("data", data.x.shape, "pairs", S._n_pairs(spec), type(spec).__name__, spec.n1, spec.n2)
g = S.group_arrays(spec, data.x.shape[-1])
print("groups", None if g is None else [np.asarray(v).tolist() for v in g])
J = (lambda f: jax.jit(f)) if isinstance(spec, S.SlotSpec) else (lambda f: jax.jit(f, static_argnums=(2,)))
rhs = J(lambda d, fit, sp: S._rhs(d, fit, sp))
print("full", f"{C.median_ms(rhs, data, state.fit, spec):.1f} ms")
if not isinstance(spec, S.SlotSpec):
    sp0 = spec._replace(pairs=())
    print("mains only", f"{C.median_ms(rhs, data, state.fit, sp0):.1f} ms")
    def hats_only(d, fit, sp):
        def body(acc, ch):
            xb, yb, wb, fb = ch
            x1, x2 = S._views(xb, sp)
            return acc + jnp.sum(S._main_design(x1, sp.n1)), None
        return scoring.scan_live(body, jnp.zeros((), d.x.dtype), (d.x, d.y, d.w, fit), d.w)[0]
    print("main hats only", f"{C.median_ms(J(hats_only), data, state.fit, sp0):.1f} ms")
