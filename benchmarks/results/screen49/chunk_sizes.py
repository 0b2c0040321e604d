"""The insertion scorer on one captured insertion step of a bench_cost case's warm default fit
(as insert_parts.py), its rows re-chunked at several chunk sizes: the scorer's time by chunk
(median of 9), and whether its choice moves.  python chunk_sizes.py CHECKOUT CASE"""
import os
import sys
import time
import warnings

sys.path.insert(0, sys.argv[1]); sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
warnings.simplefilter("ignore")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import bench_accuracy as acc  # noqa: E402
import bench_cost  # noqa: E402
from jaxtree import _executables, scoring  # noqa: E402

case = sys.argv[2]
task, X, y = bench_cost.load(case)
tr = np.random.default_rng(acc.SEED).permutation(len(y))[: int(0.8 * len(y))]
Xtr, ytr = bench_cost.rows_of(X, tr), y[tr]
acc.jaxtree_model(task).fit(Xtr, ytr)
calls = []
plain = _executables.cached.__call__


def spy(self, *args):
    if self.name in ("jaxtree.search.insert_step", "jaxtree.search.step"):
        calls.append(args)
    return plain(self, *args)


_executables.cached.__call__ = spy
acc.jaxtree_model(task).fit(Xtr, ytr)
_executables.cached.__call__ = plain
program, data, basis, config = calls[-1][:4]
L = config.max_k + 1
print(case, "rows", data.x.shape, "n_slots", int(program.n_slots), "max_leaves", L,
      "phi kept", data.phi is not None, "binary", None if data.binary is None else data.binary.shape)
flat = lambda a: a.reshape((-1,) + a.shape[2:])  # noqa: E731
for m in (1024, 2048, 4096, 8192, 16384):
    n = flat(data.x).shape[0]
    c = -(-n // m)
    pad = lambda a: jnp.pad(flat(a), [(0, c * m - n)] + [(0, 0)] * (a.ndim - 2)).reshape(  # noqa: E731
        (c, m) + a.shape[2:])
    d = scoring.map_rows(pad, data)
    f = jax.jit(lambda p, d: scoring.score(p, d, basis, max_leaves=L, precision=config.precision,
                                           buckets=config.buckets))
    ch = scoring.select(f(program, d), basis.q)
    ts = []
    for _ in range(9):
        t = time.perf_counter(); jax.block_until_ready(f(program, d)); ts.append(time.perf_counter() - t)
    print(f"chunk {m:6d} ({c:4d} chunks)  {np.median(ts) * 1e3:8.2f} ms  choice {int(ch.flat_index)}"
          f"  sse {float(ch.sse):.7g}")
