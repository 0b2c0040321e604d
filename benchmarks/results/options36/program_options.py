"""Every program a default fit runs through ``jaxtree._executables.cached``, lowered once
(from its first call's arguments), compiled under each option set and run on its last
call's arguments (the median of the calls). The table is ``bench_first_fit.py --tables``'s (float64, a small-integer column).
From the repository root::

    JAXTREE_COMPILATION_CACHE=0 python benchmarks/results/options36/program_options.py N P \
        [--sets light,light_o1,light_o0,quick] [--rounds 2] [--calls 7] [--programs a,b] [--classifier]
"""
import argparse
import collections
import sys
import time
import warnings

import jax
import numpy as np

sys.path.insert(0, ".")  # run from the repository root
warnings.simplefilter("ignore")
from jaxtree import _executables as E  # noqa: E402

SETS = {"default": {}, "light": E.LIGHT, "light_o1": E.LIGHT_LLVM1, "quick": E.QUICK,
        "o1": {"xla_backend_optimization_level": 1},
        "light_o0": {**E.LIGHT, "xla_backend_optimization_level": 0},  # forty-third session
        # sixty-fourth session: XLA's target ISA (compile options jaxlib 0.10.2 accepts)
        "o1_avx2": {**E.LIGHT_LLVM1, "xla_cpu_max_isa": "AVX2"},
        "light_avx2": {**E.LIGHT, "xla_cpu_max_isa": "AVX2"},
        "o1_sse4": {**E.LIGHT_LLVM1, "xla_cpu_max_isa": "SSE4_2"},
        "light_sse4": {**E.LIGHT, "xla_cpu_max_isa": "SSE4_2"}}
ap = argparse.ArgumentParser()
ap.add_argument("n", type=int)
ap.add_argument("p", type=int)
ap.add_argument("--sets", default="light,light_o1")
ap.add_argument("--rounds", type=int, default=2)
ap.add_argument("--calls", type=int, default=7)
ap.add_argument("--programs", default="")
ap.add_argument("--classifier", action="store_true",
                help="TreeClassifier() on y > its median instead of TreeRegressor(k=10)")
args = ap.parse_args()

cap = collections.OrderedDict()  # program name -> (cached object, first call's arguments)
last = {}  # program -> its last call's arguments
forms = {}  # (function, static arguments, structure) -> program
calls = collections.Counter()
orig = E.cached.__call__


def spy(self, *a):
    # one program per function, static arguments, the others' structure, shapes and dtypes
    dyn = tuple(x for i, x in enumerate(a) if i not in self.static_argnums)
    form = (self.name, repr(tuple(a[i] for i in self.static_argnums)),
            str(jax.tree_util.tree_structure(dyn)),
            str([(np.shape(x), str(getattr(x, "dtype", type(x))))
                 for x in jax.tree_util.tree_leaves(dyn)]))
    key = forms.get(form)
    if key is None:
        name = self.name.rsplit(".", 1)[-1]
        key = forms[form] = (name, sum(1 for k in forms.values() if k[0] == name))
        cap[key] = (self, a)
    calls[key] += 1
    last[key] = a
    return orig(self, *a)


E.cached.__call__ = spy
import jaxtree  # noqa: E402

rng = np.random.default_rng(0)
n, p = args.n, args.p
X = rng.uniform(size=(n, p))
X[:, 0] = rng.integers(0, 5, n)
y = np.sin(3 * X[:, 1]) + X[:, 2] * X[:, p - 1] + 0.1 * X[:, 0] + 0.05 * rng.normal(size=n)
t = time.perf_counter()
if args.classifier:
    jaxtree.TreeClassifier().fit(X, (y > np.median(y)).astype(int))
else:
    jaxtree.TreeRegressor(k=10).fit(X, y)
print(f"fit {time.perf_counter() - t:.2f} s; calls per program: {dict(calls)}", flush=True)
E.cached.__call__ = orig
wanted = [c for c in args.programs.split(",") if c]
for key in [k for k in cap if not wanted or k[0] in wanted]:
    obj, a = cap[key]
    name = f"{key[0]}#{key[1]}"
    dyn = [x for i, x in enumerate(last[key]) if i not in obj.static_argnums]
    lowered = obj.fn.lower(*a)
    for r in range(args.rounds):
        for s in args.sets.split(","):
            # an option at its default that differs per round: compiled afresh, not reused
            options = dict(SETS[s], xla_dump_max_hlo_modules=-1 - r)
            t = time.perf_counter()
            exe = lowered.compile(compiler_options=options)
            c = time.perf_counter() - t
            jax.block_until_ready(exe(*dyn))
            ts = []
            for _ in range(args.calls):
                t = time.perf_counter()
                jax.block_until_ready(exe(*dyn))
                ts.append(time.perf_counter() - t)
            print(f"{n}x{p} {name:24s} calls {calls[key]:3d} round {r} {s:9s} compile {c:.2f} s "
                  f"run {np.median(ts) * 1e3:.2f} ms", flush=True)
