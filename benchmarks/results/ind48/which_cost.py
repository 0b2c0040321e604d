"""Which of bench_cost's cases the indicator rule takes (their 80% training rows, the
default estimator): python which_cost.py CHECKOUT. The fit is stopped once the rule ran."""
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


def spy(self, xs, sw):
    out = real(self, xs, sw)
    n, p = xs.shape
    raise Seen(f"n={n} p={p} indicators={len(scoring.binary_columns(xs, sw))} "
               f"compiling_dominates={scoring.compiling_dominates(n, p, self.basis.q)} "
               f"taken={len(out.indicators)} streamed={self.streamed}")


spec_.FitSpec.with_indicators = spy
for case in bench_cost.CASES:
    task, X, y = bench_cost.load(case)
    tr = np.random.default_rng(acc.SEED).permutation(len(y))[: int(0.8 * len(y))]
    try:
        acc.jaxtree_model(task).fit(bench_cost.rows_of(X, tr), y[tr])
        print(f"{case:18s} no rule ran (streamed?)")
    except Seen as e:
        print(f"{case:18s} {e}")
