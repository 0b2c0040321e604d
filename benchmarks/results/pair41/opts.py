import os, time
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import numpy as np, jax, jaxtree
from jaxtree import search, _executables
cap = {}
for name in ("insert_cached", "finish_cached"):
    c = getattr(search, name)
    orig = c.__call__
    def mk(c, name, orig_fn):
        class W:
            def __call__(self, *a):
                cap[name] = a
                return orig_fn(*a)
        return W()
    setattr(search, name, mk(c, name, c.__call__))
    cap[name + "_obj"] = c
rng = np.random.default_rng(0)
X = rng.uniform(size=(1000, 10))
y = 0.3*np.sin(3*np.pi*X[:,0])*np.cos(2*np.pi*X[:,1]) + 0.4*X[:,2]**2 - 0.3*X[:,3] + 0.1*rng.normal(size=1000)
jaxtree.TreeRegressor(k=10).fit(X, y)
print({k: len(v) for k, v in cap.items() if not k.endswith("obj")})
variants = {
  "LIGHT": dict(_executables.LIGHT),
  "LIGHT_LLVM1": dict(_executables.LIGHT_LLVM1),
  "LIGHT+O0": {**_executables.LIGHT, "xla_backend_optimization_level": 0},
  "FAST_COMPILE": {"xla_cpu_opt_preset": "CPU_OPT_PRESET_FAST_COMPILE"},
  "LIGHT+FAST_COMPILE": {**_executables.LIGHT, "xla_cpu_opt_preset": "CPU_OPT_PRESET_FAST_COMPILE"},
  "default": {},
}
for name in ("insert_cached", "finish_cached"):
    c = cap[name + "_obj"]; args = cap[name]
    static = c.static_argnums
    dyn = [a for i, a in enumerate(args) if i not in static]
    t = time.perf_counter(); low = c.fn.lower(*args); tl = time.perf_counter() - t
    print(name, "lower", round(tl, 2))
    for vname, opts in variants.items():
        for rep in range(2):
            t = time.perf_counter(); exe = low.compile(compiler_options=opts); tc = time.perf_counter() - t
            jax.block_until_ready(exe(*dyn))
            ts = []
            for _ in range(20):
                t = time.perf_counter(); jax.block_until_ready(exe(*dyn)); ts.append(time.perf_counter() - t)
            print(f"  {vname:20s} compile {tc:5.2f} s  run {1e3*np.median(ts):7.2f} ms")
