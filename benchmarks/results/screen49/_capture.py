"""The shared set-up of insert_parts.py, screen_parts.py and chunk_sizes.py: the checkout
``argv[1]`` on the path (its ``benchmarks/`` too), the compilation cache off, the arguments
of the search-step calls of a bench_cost case's warm default fit (its 80% training rows; one
fit compiles, a second is watched), and a timer."""
import os
import sys
import time
import warnings

sys.path.insert(0, sys.argv[1]); sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
warnings.simplefilter("ignore")
import jax  # noqa: E402
import numpy as np  # noqa: E402

import bench_accuracy as acc  # noqa: E402
import bench_cost  # noqa: E402
from jaxtree import _executables  # noqa: E402

STEPS = ("jaxtree.search.insert_step", "jaxtree.search.step", "jaxtree._fit.classify.binary_step")
"""The cached programs whose first arguments are ``(program, data, basis, config)``."""


def step_calls(case: str, names=STEPS) -> list:
    """The arguments of every call of the cached programs ``names`` in ``case``'s warm fit."""
    task, X, y = bench_cost.load(case)
    tr = np.random.default_rng(acc.SEED).permutation(len(y))[: int(0.8 * len(y))]
    Xtr, ytr = bench_cost.rows_of(X, tr), y[tr]
    acc.jaxtree_model(task).fit(Xtr, ytr)
    calls = []
    plain = _executables.cached.__call__

    def spy(self, *args):
        if self.name in names:
            calls.append(args)
        return plain(self, *args)

    _executables.cached.__call__ = spy
    try:
        acc.jaxtree_model(task).fit(Xtr, ytr)
    finally:
        _executables.cached.__call__ = plain
    return calls


def median_ms(f, *args, repeats: int = 9) -> float:
    """``f(*args)``'s median time in milliseconds, after one call that compiles it."""
    jax.block_until_ready(f(*args))
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(f(*args))
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)) * 1e3
