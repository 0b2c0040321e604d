"""Which of bench_accuracy's tables the indicator rule takes (all rows, the default
estimator's encoding): python which.py CHECKOUT. The fit is stopped once the rule ran."""
import os
import sys
import warnings

sys.path.insert(0, sys.argv[1]); sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
warnings.simplefilter("ignore")
import numpy as np  # noqa: E402

import bench_accuracy as acc  # noqa: E402
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
               f"taken={len(out.indicators)} kept_basis={out.cache_basis}")


spec_.FitSpec.with_indicators = spy
for name in acc.TABLES:
    task, X, y, _ = acc.load_table(name, None)
    try:
        acc.jaxtree_model(task).fit(X, np.asarray(y))
        print(name, "no rule ran")
    except Seen as e:
        print(f"{name:15s} {e}")
