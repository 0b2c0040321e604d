"""The demo's two search-step programs (insert_step, finish_step) compiled one after the other
(seq), or the second traced while the first compiles on a thread and both compilations side
by side (pipe2; pipe: the second compiled after the first). The programs are lowered afresh
with the arguments and options the demo's fit used (captured from its executable cache).

    python overlap.py seq|pipe|pipe2"""
import os, sys, time, warnings, threading
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
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
mode = sys.argv[1]
def prep(name, idx):
    self, args, tier = seen[name]
    opts = {**E._MARK, **E._RETRY, **(E._light_options(self.light) if tier == "light" else {})}
    f = getattr(search, name)
    fn = jax.jit(lambda *a: f(*a), static_argnums=(idx - 1, idx))
    return fn, args, opts
(fi, ai, oi), (ff, af, of) = prep("insert_step", 3), prep("finish_step", 8)
t0 = time.perf_counter()
if mode == "seq":
    li = fi.lower(*ai); ci = li.compile(compiler_options=oi)
    lf = ff.lower(*af); cf = lf.compile(compiler_options=of)
else:
    li = fi.lower(*ai)
    res = {}
    th = threading.Thread(target=lambda: res.setdefault("i", li.compile(compiler_options=oi)))
    th.start()
    t1 = time.perf_counter(); lf = ff.lower(*af); tl = time.perf_counter() - t1
    if mode == "pipe2":
        cf = lf.compile(compiler_options=of); th.join()
    else:
        th.join(); cf = lf.compile(compiler_options=of)
    print("finish lower during insert compile", round(tl, 3))
print(mode, round(time.perf_counter() - t0, 3))
