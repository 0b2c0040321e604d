"""The search's insertion program of the default fit on paper_synthetic(N, p=10), lowered once and
compiled without the fusion emitters, with and without LLVM level 1; run 15 times (the
median). ``JAXTREE_COMPILATION_CACHE=0 python insert_options.py N`` from the repository root."""
import sys, time, warnings, numpy as np, jax
sys.path.insert(0, "."); warnings.simplefilter("ignore")
from jaxtree import search
cap = {}
for nm in ["insert_cached", "finish_cached"]:
    f = getattr(search, nm)
    def mk(f, nm):
        def g(*a):
            cap[nm] = a; return f(*a)
        return g
    setattr(search, nm, mk(f, nm))
import jaxtree
from jaxtree.datasets import paper_synthetic
n = int(sys.argv[1])
X, y = paper_synthetic(n=n, p=10, seed=0)
jaxtree.TreeRegressor(k=10).fit(X, y)
sets = {"noemit": {"xla_cpu_use_fusion_emitters": False}, "O1noemit": {"xla_backend_optimization_level": 1, "xla_cpu_use_fusion_emitters": False}}
for nm, statics, fn in [("insert", (2, 3), search.insert_jit)]:
    a = cap[nm + "_cached"]
    dyn = [x for i, x in enumerate(a) if i not in statics]
    lo = fn.lower(*a)
    for r in range(2):
        for name, o in sets.items():
            o = dict(o, xla_dump_max_hlo_modules=-1 - r)
            t = time.perf_counter(); exe = lo.compile(compiler_options=o); c = time.perf_counter() - t
            jax.block_until_ready(exe(*dyn))
            ts = []
            for _ in range(15):
                t = time.perf_counter(); jax.block_until_ready(exe(*dyn)); ts.append(time.perf_counter() - t)
            print(n, nm, r, name, f"compile {c:.2f} s run {np.median(ts)*1e3:.2f} ms", flush=True)
