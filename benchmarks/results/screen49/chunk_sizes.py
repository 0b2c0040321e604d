"""The insertion scorer on one captured insertion step of a bench_cost case's warm default fit
(as insert_parts.py), its rows re-chunked at several chunk sizes: the scorer's time by chunk
(median of 9), and whether its choice moves.  python chunk_sizes.py CHECKOUT CASE"""
import sys

from _capture import median_ms, step_calls  # the checkout on the path, the cache off

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from jaxtree import scoring  # noqa: E402

case = sys.argv[2]
program, data, basis, config = step_calls(case, ("jaxtree.search.insert_step",
                                                 "jaxtree.search.step"))[-1][:4]
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
    print(f"chunk {m:6d} ({c:4d} chunks)  {median_ms(f, program, d):8.2f} ms"
          f"  choice {int(ch.flat_index)}  sse {float(ch.sse):.7g}")
