"""Where one insertion step of a bench_cost case's warm default fit goes: the arguments of
its 8th ``jaxtree.search.insert_step`` call captured (one fit compiles, a second is
watched), then the whole step, the scorer alone and the pair lookahead alone, each jitted
and timed (median of 15).  python insert_parts.py CHECKOUT CASE"""
import sys

from _capture import median_ms, step_calls  # the checkout on the path, the cache off

import jax  # noqa: E402

from jaxtree import scoring, search  # noqa: E402

case = sys.argv[2]
calls = step_calls(case, ("jaxtree.search.insert_step",))
print(case, "insert_step calls:", len(calls))
program, data, basis, config, *rest = calls[min(7, len(calls) - 1)]
print("rows", data.x.shape, "dtype", data.x.dtype, "n_slots", int(program.n_slots),
      "capacity", program.capacity, "pair_leaves", config.pair_leaves,
      "replace", config.replace_moves, "q", basis.q)


def timed(name, f, *a):
    print(f"{name:28s} {median_ms(jax.jit(f), *a, repeats=15):8.2f} ms")


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
