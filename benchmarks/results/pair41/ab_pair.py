import os, time
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import numpy as np, jax, jaxtree
from jaxtree import search, _executables, scoring
cap = {}
c0 = search.insert_cached
class W:
    def __call__(self, *a):
        cap.setdefault("a", a); return c0(*a)
search.insert_cached = W()
rng = np.random.default_rng(0)
X = rng.uniform(size=(1000, 10))
y = 0.3*np.sin(3*np.pi*X[:,0])*np.cos(2*np.pi*X[:,1]) + 0.4*X[:,2]**2 - 0.3*X[:,3] + 0.1*rng.normal(size=1000)
jaxtree.TreeRegressor(k=10).fit(X, y)
a = cap["a"]
orig_sr = search.screen_rows
def old_sr(data, m):
    h = orig_sr(data, m)
    return scoring.map_rows(lambda x: x, h) if h is data else h
L1 = dict(_executables.LIGHT_LLVM1)
for rep in range(3):
    for label, sr in (("new", orig_sr), ("old", old_sr)):
        search.screen_rows = sr
        fn = lambda *args: search.insert_step(*args)  # a new function: no jit cache
        t = time.perf_counter(); low = jax.jit(fn, static_argnums=(2, 3)).lower(*a); tl = time.perf_counter() - t
        t = time.perf_counter(); exe = low.compile(compiler_options=L1); tc = time.perf_counter() - t
        dyn = [v for i, v in enumerate(a) if i not in (2, 3)]
        jax.block_until_ready(exe(*dyn)); ts = []
        for _ in range(30):
            t0 = time.perf_counter(); jax.block_until_ready(exe(*dyn)); ts.append(time.perf_counter() - t0)
        print(f"{label} trace+lower {tl:.2f} compile {tc:.2f} run {1e3*np.median(ts):.2f} ms")
