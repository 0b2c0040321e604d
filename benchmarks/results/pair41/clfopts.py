import os, time
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import numpy as np, jax, jaxtree
from jaxtree import search, _executables
from sklearn.datasets import load_breast_cancer
cap = {}
c0 = search.step_cached
class W:
    def __call__(self, *a):
        cap.setdefault("a", a); return c0(*a)
search.step_cached = W()
X, y = load_breast_cancer(return_X_y=True)
jaxtree.TreeClassifier().fit(X[:455], y[:455])
a = cap["a"]; cfg = a[3]
variants = [("default", {}), ("LLVM1", {"xla_backend_optimization_level": 1}), ("LIGHT_LLVM1", dict(_executables.LIGHT_LLVM1))]
for rep in range(2):
    for label, opts in variants:
        fn = lambda *args: search.step(*args)
        low = jax.jit(fn, static_argnums=(2, 3)).lower(a[0], a[1], a[2], cfg, a[4])
        t = time.perf_counter(); exe = low.compile(compiler_options=opts); tc = time.perf_counter() - t
        runs = []
        for r in range(4):
            p = a[0]; t0 = time.perf_counter()
            for i in range(12):
                p, info = exe(p, a[1], a[4])
            jax.block_until_ready(p); runs.append(time.perf_counter() - t0)
        print(f"{label:12s} compile {tc:5.2f}  12 steps min {1e3*min(runs[1:]):6.1f} ms  med {1e3*np.median(runs[1:]):6.1f}")
