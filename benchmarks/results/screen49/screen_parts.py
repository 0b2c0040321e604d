"""The insertion scorer against the screened scorer on every insertion step of a bench_cost
case's warm default fit (arguments captured as insert_parts.py does): each step's choice by
both, and the time of each (median of 9) on the last step; then, on the last step, the full
scorer's parts (the design of all rows alone, the screen, the exact pass, the tree's rows
and the leaves' basis values). Needs ``screened_score.diff`` applied to CHECKOUT.
    python screen_parts.py CHECKOUT CASE [SCREEN_ROWS] [COLUMNS]"""
import os
import sys
import time
import warnings

sys.path.insert(0, sys.argv[1]); sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
warnings.simplefilter("ignore")
import jax  # noqa: E402
import numpy as np  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import bench_accuracy as acc  # noqa: E402
import bench_cost  # noqa: E402
from jaxtree import _executables, scoring  # noqa: E402

case = sys.argv[2]
screen = int(sys.argv[3]) if len(sys.argv) > 3 else 16384
cols = int(sys.argv[4]) if len(sys.argv) > 4 else 16
task, X, y = bench_cost.load(case)
tr = np.random.default_rng(acc.SEED).permutation(len(y))[: int(0.8 * len(y))]
Xtr, ytr = bench_cost.rows_of(X, tr), y[tr]
acc.jaxtree_model(task).fit(Xtr, ytr)
calls = []
plain = _executables.cached.__call__


def spy(self, *args):
    if self.name in ("jaxtree.search.insert_step", "jaxtree.search.step",
                     "jaxtree._fit.classify.binary_step"):
        calls.append(args)
    return plain(self, *args)


_executables.cached.__call__ = spy
acc.jaxtree_model(task).fit(Xtr, ytr)
_executables.cached.__call__ = plain
print(case, "steps captured:", len(calls), "screen rows", screen, "columns", cols)
program, data, basis, config = calls[0][:4]
L = config.max_k + 1
full = jax.jit(lambda p, d: scoring.score(p, d, basis, max_leaves=L, precision=config.precision,
                                          buckets=config.buckets))
scr = jax.jit(lambda p, d: scoring.screened_score(p, d, basis, max_leaves=L, screen_rows=screen,
                                                  columns=cols, precision=config.precision,
                                                  buckets=config.buckets))
same = 0
for a in calls:
    p, d = a[0], a[1]
    if d.x.shape != data.x.shape:
        continue
    f, s = full(p, d), scr(p, d)
    cf, cs = scoring.select(f, basis.q), scoring.select(s, basis.q)
    ok = int(cf.flat_index) == int(cs.flat_index)
    same += ok
    print(f"  n_slots {int(p.n_slots):3d}  full {int(cf.flat_index):6d} sse {float(cf.sse):.6g}"
          f"  screened {int(cs.flat_index):6d} sse {float(cs.sse):.6g}  {'same' if ok else 'DIFF'}")
print("same choice:", same)
p, d = calls[-1][0], calls[-1][1]
for name, f in (("score", full), ("screened_score", scr)):
    jax.block_until_ready(f(p, d))
    ts = []
    for _ in range(9):
        t = time.perf_counter(); jax.block_until_ready(f(p, d)); ts.append(time.perf_counter() - t)
    print(f"{name:16s} {np.median(ts) * 1e3:8.2f} ms  rows {d.x.shape}")

# the parts of the full scorer: the basis values of every chunk alone, and the rough pass
des = jax.jit(lambda d: jax.lax.scan(
    lambda c, xb: (c + jnp.sum(scoring.design(xb, basis)), None), 0.0, d.x)[0])
rough = jax.jit(lambda p, d: scoring.score(p, scoring.strided_rows(d, screen), basis,
                                           max_leaves=L, precision=config.precision,
                                           buckets=config.buckets))
top = jax.numpy.arange(cols, dtype=jax.numpy.int32) * 5
exact = jax.jit(lambda p, d: scoring.column_scores(p, d, basis, top, max_leaves=L,
                                                   precision=config.precision))
for name, f, a in (("design only", des, (d,)), ("rough", rough, (p, d)), ("exact", exact, (p, d))):
    jax.block_until_ready(f(*a))
    ts = []
    for _ in range(9):
        t = time.perf_counter(); jax.block_until_ready(f(*a)); ts.append(time.perf_counter() - t)
    print(f"{name:16s} {np.median(ts) * 1e3:8.2f} ms")

from jaxtree import program as prog_  # noqa: E402
leaves = jax.jit(lambda p, d: jax.lax.scan(
    lambda c, xb: (c + jnp.sum(prog_.leaf_basis(p, xb, basis)), None), 0.0, d.x)[0])
treev = jax.jit(lambda p, d: jax.lax.scan(
    lambda c, ch: (c + jnp.sum(scoring._rows(p, prog_.leaf_slots(p, L), ch[0], ch[1], basis)[0]), None),
    0.0, (d.x, d.y))[0])
for name, f in (("leaf_basis", leaves), ("_rows (tree + vjp)", treev)):
    jax.block_until_ready(f(p, d))
    ts = []
    for _ in range(9):
        t = time.perf_counter(); jax.block_until_ready(f(p, d)); ts.append(time.perf_counter() - t)
    print(f"{name:16s} {np.median(ts) * 1e3:8.2f} ms  n_slots {int(p.n_slots)}")
