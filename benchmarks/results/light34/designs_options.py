"""scoring.designs on (1, 1024, 16) rows, lowered once and compiled with XLA's defaults and
five option sets, run 20 times (the median)."""
import sys, time, numpy as np, jax
sys.path.insert(0, ".")  # run from the repository root
from jaxtree import scoring, basis as B
from jaxtree._fit import select
b = B.default_basis()
x = np.random.default_rng(0).uniform(size=(1, 1024, 16)).astype(np.float32)
sets = {"default": {}, "quick": {"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False},
        "O0": {"xla_backend_optimization_level": 0}, "noemit": {"xla_cpu_use_fusion_emitters": False},
        "O1": {"xla_backend_optimization_level": 1}, "O1noemit": {"xla_backend_optimization_level": 1, "xla_cpu_use_fusion_emitters": False}}
lo = scoring.designs.lower(x, b)
for r in range(2):
    for name, o in sets.items():
        o = dict(o, xla_dump_max_hlo_modules=-1 - r)  # distinct options: no reuse
        t = time.perf_counter(); exe = lo.compile(compiler_options=o); c = time.perf_counter() - t
        exe(x).block_until_ready()
        ts = []
        for _ in range(20):
            t = time.perf_counter(); exe(x).block_until_ready(); ts.append(time.perf_counter() - t)
        print(r, name, f"compile {c:.2f} s run {np.median(ts)*1e3:.2f} ms")
