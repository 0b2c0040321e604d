"""The device backfitting round (shapes._sweep, the fit's sweeps) of a bench_cost case timed on its captured
arguments, median of 15, then (timing only, wrong numbers) without the views: ROOT=<checkout> python sweep_round.py CASE"""
import sys
import _capture as C
import jax
from jaxtree import shapes as S
case = sys.argv[1]
_, cap = C.calls(case, S, "finish_jit")
print("captured", len(cap))
a, k = cap[-1]
state, data, gr, spec = a[:4]; sweeps = a[4] if len(a) > 4 else k.get("sweeps")
print("data", data.x.shape, type(spec).__name__, "terms", int(state.shapes.n_terms), "sweeps", sweeps, "groups", bool(getattr(spec, "groups", ())))
J = (lambda f: jax.jit(f)) if isinstance(spec, S.SlotSpec) else (lambda f: jax.jit(f, static_argnums=(3,)))
fin = J(lambda st, d, g, sp: S._sweep(st, d, g, sp, sweeps))
print("round", f"{C.median_ms(fin, state, data, gr, spec):.1f} ms")
S._views = lambda x, sp: (x, x)
fin2 = J(lambda st, d, g, sp: S._sweep(st, d, g, sp, sweeps))
print("round without views (timing only)", f"{C.median_ms(fin2, state, data, gr, spec):.1f} ms")
