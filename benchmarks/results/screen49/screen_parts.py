"""The insertion scorer against the screened scorer on every insertion step of a bench_cost
case's warm default fit (arguments captured as insert_parts.py does): each step's choice by
both, and the time of each (median of 9) on the last step; then, on the last step, the full
scorer's parts (the design of all rows alone, the screen, the exact pass, the tree's rows
and the leaves' basis values). Needs ``screened_score.diff`` applied to CHECKOUT.
    python screen_parts.py CHECKOUT CASE [SCREEN_ROWS] [COLUMNS]"""
import sys

from _capture import median_ms, step_calls  # the checkout on the path, the cache off

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from jaxtree import program as prog_  # noqa: E402
from jaxtree import scoring  # noqa: E402

case = sys.argv[2]
screen = int(sys.argv[3]) if len(sys.argv) > 3 else 16384
cols = int(sys.argv[4]) if len(sys.argv) > 4 else 16
calls = step_calls(case)
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
    print(f"{name:16s} {median_ms(f, p, d):8.2f} ms  rows {d.x.shape}")

# the parts: the basis values of every chunk alone, the screen, the exact pass over some
# columns, the leaves' basis values and the tree's rows
des = jax.jit(lambda d: jax.lax.scan(
    lambda c, xb: (c + jnp.sum(scoring.design(xb, basis)), None), 0.0, d.x)[0])
rough = jax.jit(lambda p, d: scoring.score(p, scoring.strided_rows(d, screen), basis,
                                           max_leaves=L, precision=config.precision,
                                           buckets=config.buckets))
top = jnp.arange(cols, dtype=jnp.int32) * 5
exact = jax.jit(lambda p, d: scoring.column_scores(p, d, basis, top, max_leaves=L,
                                                   precision=config.precision))
leaves = jax.jit(lambda p, d: jax.lax.scan(
    lambda c, xb: (c + jnp.sum(prog_.leaf_basis(p, xb, basis)), None), 0.0, d.x)[0])
treev = jax.jit(lambda p, d: jax.lax.scan(
    lambda c, ch: (c + jnp.sum(scoring._rows(p, prog_.leaf_slots(p, L), ch[0], ch[1],
                                             basis)[0]), None), 0.0, (d.x, d.y))[0])
for name, f, a in (("design only", des, (d,)), ("rough", rough, (p, d)), ("exact", exact, (p, d)),
                   ("leaf_basis", leaves, (p, d)), ("_rows (tree + vjp)", treev, (p, d))):
    print(f"{name:18s} {median_ms(f, *a):8.2f} ms  n_slots {int(p.n_slots)}")
