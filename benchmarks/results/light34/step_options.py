"""Each search-step program of the default fit on paper_synthetic(N, p=10) (its last call's
arguments), lowered once, compiled with each option set and run (the median of the calls).
From the repository root::

    JAXTREE_COMPILATION_CACHE=0 python benchmarks/results/light34/step_options.py N \
        [--programs insert,finish] [--sets default,O1noemit,noemit,O1] [--rounds 2] [--calls 7]

The insertion at LLVM level 1 (BENCHMARKS.md): ``--programs insert --sets noemit,O1noemit
--rounds 3 --calls 15`` (two rounds at 8,000 rows).
"""
import argparse
import sys
import time
import warnings

import jax
import numpy as np

sys.path.insert(0, ".")  # run from the repository root
warnings.simplefilter("ignore")
from jaxtree import search  # noqa: E402

SETS = {"default": {},
        "O1noemit": {"xla_backend_optimization_level": 1, "xla_cpu_use_fusion_emitters": False},
        "noemit": {"xla_cpu_use_fusion_emitters": False},
        "O1": {"xla_backend_optimization_level": 1}}
PROGRAMS = {"insert": ((2, 3), search.insert_jit), "finish": ((7, 8), search.finish_jit)}

args = argparse.ArgumentParser()
args.add_argument("n", type=int)
args.add_argument("--programs", default="insert,finish")
args.add_argument("--sets", default="default,O1noemit,noemit,O1")
args.add_argument("--rounds", type=int, default=2)
args.add_argument("--calls", type=int, default=7)
args = args.parse_args()

cap = {}  # each program's last call's arguments
for nm in PROGRAMS:
    f = getattr(search, nm + "_cached")

    def spy(*a, f=f, nm=nm):
        cap[nm] = a
        return f(*a)

    setattr(search, nm + "_cached", spy)
import jaxtree  # noqa: E402
from jaxtree.datasets import paper_synthetic  # noqa: E402

X, y = paper_synthetic(n=args.n, p=10, seed=0)
jaxtree.TreeRegressor(k=10).fit(X, y)
for nm in args.programs.split(","):
    statics, fn = PROGRAMS[nm]
    a = cap[nm]
    dyn = [x for i, x in enumerate(a) if i not in statics]
    lowered = fn.lower(*a)
    for r in range(args.rounds):
        for name in args.sets.split(","):
            # an option at its default that differs per round: compiled afresh, not reused
            options = dict(SETS[name], xla_dump_max_hlo_modules=-1 - r)
            t = time.perf_counter()
            exe = lowered.compile(compiler_options=options)
            c = time.perf_counter() - t
            jax.block_until_ready(exe(*dyn))
            ts = []
            for _ in range(args.calls):
                t = time.perf_counter()
                jax.block_until_ready(exe(*dyn))
                ts.append(time.perf_counter() - t)
            print(args.n, nm, r, name, f"compile {c:.2f} s run {np.median(ts) * 1e3:.2f} ms",
                  flush=True)
