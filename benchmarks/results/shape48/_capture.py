"""The shared set-up of parts.py, rhs_parts.py and light.py: the checkout ``argv[1]`` on
the path (its ``benchmarks/`` too), the compilation cache off, and the arguments of the
fifth shape-stage step of a bench_cost case's warm default fit (its 80% training rows; one
fit compiles, a second is watched)."""
import os
import sys
import warnings

sys.path.insert(0, sys.argv[1]); sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
warnings.simplefilter("ignore")
import numpy as np  # noqa: E402

import bench_accuracy as acc  # noqa: E402
import bench_cost  # noqa: E402
from jaxtree._fit import stages  # noqa: E402


def fifth_shape_step(case: str) -> tuple:
    """``(number of shape steps, (state, data, grams, spec))`` of ``case``'s warm fit."""
    task, X, y = bench_cost.load(case)
    tr = np.random.default_rng(acc.SEED).permutation(len(y))[: int(0.8 * len(y))]
    Xtr, ytr = bench_cost.rows_of(X, tr), y[tr]
    acc.jaxtree_model(task).fit(Xtr, ytr)
    calls = []
    real = stages.OneFit.add_term
    stages.OneFit.add_term = staticmethod(lambda *a: calls.append(a) or real(*a))
    try:
        acc.jaxtree_model(task).fit(Xtr, ytr)
    finally:
        stages.OneFit.add_term = staticmethod(real)
    return len(calls), calls[min(4, len(calls) - 1)]
