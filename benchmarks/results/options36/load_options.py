"""A default fit's cached programs (first call's arguments) compiled under option sets, each
serialised as jaxtree's executable cache stores it and deserialised again (the load of a
second process): compile seconds, load seconds (median of 5), serialised bytes, run ms.
From the repository root::

    JAXTREE_COMPILATION_CACHE=0 python benchmarks/results/options36/load_options.py N P \
        [--programs insert_step,finish_step] [--extra '{"xla_cpu_parallel_codegen_split_count": 1}']
"""
import argparse
import json
import sys
import time
import warnings

import jax
import numpy as np

sys.path.insert(0, ".")
warnings.simplefilter("ignore")
from jax.experimental import serialize_executable as se  # noqa: E402

from jaxtree import _executables as E  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("n", type=int)
ap.add_argument("p", type=int)
ap.add_argument("--programs", default="insert_step,finish_step,designs")
ap.add_argument("--extra", default='{"xla_cpu_parallel_codegen_split_count": 1}')
ap.add_argument("--rounds", type=int, default=2)
args = ap.parse_args()

cap = {}
orig = E.cached.__call__


def spy(self, *a):
    cap.setdefault(self.name.rsplit(".", 1)[-1], (self, a))
    return orig(self, *a)


E.cached.__call__ = spy
import jaxtree  # noqa: E402
from jaxtree.datasets import paper_synthetic  # noqa: E402

X, y = paper_synthetic(n=args.n, p=args.p, seed=0)
jaxtree.TreeRegressor(k=10).fit(X, y)
E.cached.__call__ = orig
extra = json.loads(args.extra)
for name in args.programs.split(","):
    obj, a = cap[name]
    dyn = [x for i, x in enumerate(a) if i not in obj.static_argnums]
    base = E._light_options(obj.light) if obj.light else {}
    lowered = obj.fn.lower(*a)
    for r in range(args.rounds):
        for label, opts in (("as now", base), ("with extra", {**base, **extra})):
            t = time.perf_counter()
            exe = lowered.compile(compiler_options=dict(opts, xla_dump_max_hlo_modules=-1 - r))
            c = time.perf_counter() - t
            payload, it, ot = se.serialize(exe)
            loads = []
            for _ in range(5):
                t = time.perf_counter()
                back = se.deserialize_and_load(payload, it, ot)
                loads.append(time.perf_counter() - t)
            jax.block_until_ready(back(*dyn))
            runs = []
            for _ in range(7):
                t = time.perf_counter()
                jax.block_until_ready(back(*dyn))
                runs.append(time.perf_counter() - t)
            print(f"{name:14s} round {r} {label:10s} compile {c:.2f} s load {np.median(loads):.3f} s "
                  f"bytes {len(payload)} run {np.median(runs) * 1e3:.2f} ms", flush=True)
