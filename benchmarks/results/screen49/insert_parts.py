"""Where one insertion step of a bench_cost case's warm default fit goes: the arguments of
its 8th ``jaxtree.search.insert_step`` call captured (one fit compiles, a second is
watched), then the whole step, the scorer alone and the pair lookahead alone, each jitted
and timed (median of 15).  python insert_parts.py CHECKOUT CASE"""
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
from jaxtree import _executables, scoring, search  # noqa: E402

case = sys.argv[2]
task, X, y = bench_cost.load(case)
tr = np.random.default_rng(acc.SEED).permutation(len(y))[: int(0.8 * len(y))]
Xtr, ytr = bench_cost.rows_of(X, tr), y[tr]
acc.jaxtree_model(task).fit(Xtr, ytr)
calls = []
plain = _executables.cached.__call__


def spy(self, *args):
    if self.name == "jaxtree.search.insert_step":
        calls.append(args)
    return plain(self, *args)


_executables.cached.__call__ = spy
acc.jaxtree_model(task).fit(Xtr, ytr)
_executables.cached.__call__ = plain
print(case, "insert_step calls:", len(calls))
program, data, basis, config, *rest = calls[min(7, len(calls) - 1)]
print("rows", data.x.shape, "dtype", data.x.dtype, "n_slots", int(program.n_slots),
      "capacity", program.capacity, "pair_leaves", config.pair_leaves,
      "replace", config.replace_moves, "q", basis.q)


def timed(name, f, *a):
    f = jax.jit(f)
    jax.block_until_ready(f(*a))
    ts = []
    for _ in range(15):
        t = time.perf_counter(); jax.block_until_ready(f(*a)); ts.append(time.perf_counter() - t)
    print(f"{name:28s} {np.median(ts) * 1e3:8.2f} ms")


max_leaves = config.max_k + 1
timed("insert_step", lambda p, d: search.insert_step(p, d, basis, config, *rest), program, data)
timed("scoring.score", lambda p, d: scoring.score(p, d, basis, max_leaves=max_leaves,
                                                   precision=config.precision,
                                                   buckets=config.buckets), program, data)
if config.pair_leaves:
    def pl(p, d):
        s = scoring.score(p, d, basis, max_leaves=max_leaves, precision=config.precision,
                          buckets=config.buckets)
        ch = scoring.select(s, basis.q)
        return search.pair_lookahead(p, d, basis, config, ch.sse, s.rss, d.w.sum(),
                                     p.capacity)
    timed("score + pair_lookahead", pl, program, data)
