"""XLA compile time of the demo's two search programs and of variants without a part:
insert_step without the pair lookahead, finish_step without the replacement moves (the
refinement alone) and without the refinement (replacements alone). Each program lowered
from the demo fit's own arguments and options, compiled once (a second compile of the same lowering is served from memory).

    python compile_parts.py CHECKOUT"""
import os, sys, time, warnings
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import jax, numpy as np
import jaxtree
from jaxtree import _executables as E, search
from jaxtree.datasets import paper_synthetic
warnings.simplefilter("ignore")
seen = {}
orig = E.cached._get
def _get(self, d, key, args, dynamic, tier):
    seen.setdefault(getattr(self.fn, "__name__", str(self.fn)), (self, args, tier))
    return orig(self, d, key, args, dynamic, tier)
E.cached._get = _get
X, y = paper_synthetic(n=1000, p=10, seed=0)
jaxtree.TreeRegressor(k=10).fit(X, y)
def timed(name, idx, change=None, fn=None):
    self, args, tier = seen[name]
    opts = {**E._MARK, **(E._light_options(self.light) if tier == "light" else {})}
    args = list(args)
    if change is not None:
        args[idx] = change(args[idx])
    f = getattr(search, name) if fn is None else fn
    jf = jax.jit(lambda *a: f(*a), static_argnums=(idx - 1, idx))
    t0 = time.perf_counter(); low = jf.lower(*args); tl = time.perf_counter() - t0
    t0 = time.perf_counter(); low.compile(compiler_options=opts); best = time.perf_counter() - t0
    size = len(low.as_text())
    return tl, best, size
cfg = seen["insert_step"][1][3]
print("config", cfg)
for label, name, idx, change in [
        ("insert (as fitted)", "insert_step", 3, None),
        ("insert without pairs", "insert_step", 3, lambda c: c._replace(pair_leaves=0, pair_max_leaves=0)),
        ("finish (as fitted)", "finish_step", 8, None),
        ("finish, refinement only", "finish_step", 8, lambda c: c._replace(replace_moves=0)),
        ("finish, replacements only", "finish_step", 8, lambda c: c._replace(refine=None))]:
    tl, tc, size = timed(name, idx, change)
    print(f"{label:28s} trace+lower {tl:5.2f} s  XLA {tc:5.2f} s  module {size/1e3:6.0f} kB", flush=True)
