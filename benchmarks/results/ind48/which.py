"""Which tables the indicator rule takes, the default estimator on each, stopped once the
rule ran: python which.py CHECKOUT [tables|cost]. ``tables`` (default): all rows of
bench_accuracy's tables (which.log); ``cost``: bench_cost's cases, their 80% training rows
(which_cost.log)."""
import os
import sys
import warnings

sys.path.insert(0, sys.argv[1]); sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
warnings.simplefilter("ignore")
import numpy as np  # noqa: E402

import bench_accuracy as acc  # noqa: E402
import bench_cost  # noqa: E402
from jaxtree import scoring  # noqa: E402
from jaxtree._fit import spec as spec_  # noqa: E402


class Seen(Exception):
    pass


real = spec_.FitSpec.with_indicators


def spy(self, n, p, find):
    out = real(self, n, p, find)
    raise Seen(f"n={n} p={p} indicators={len(find())} "
               f"compiling_dominates={scoring.compiling_dominates(n, p, self.basis.q)} "
               f"taken={len(out.indicators)} kept_basis={out.cache_basis} "
               f"streamed={self.streamed}")


def tables():
    for name in acc.TABLES:
        task, X, y, _ = acc.load_table(name, None)
        yield name, task, X, np.asarray(y)


def cost_cases():
    for case in bench_cost.CASES:
        task, X, y = bench_cost.load(case)
        tr = np.random.default_rng(acc.SEED).permutation(len(y))[: int(0.8 * len(y))]
        yield case, task, bench_cost.rows_of(X, tr), y[tr]


spec_.FitSpec.with_indicators = spy
for name, task, X, y in (cost_cases() if sys.argv[2:] == ["cost"] else tables()):
    try:
        acc.jaxtree_model(task).fit(X, y)
        print(f"{name:18s} no rule ran")
    except Seen as e:
        print(f"{name:18s} {e}")
