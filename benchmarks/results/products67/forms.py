"""The host design's pair blocks in both forms (count, products) on random tables: Design and
one gains call, fastest of 3, and the relative differences of the systems and gains.

    python benchmarks/results/products67/forms.py   (and forms2.py: the rule's break-even)
"""
import time, sys
import numpy as np
from jaxtree import scoring, shapes as S
from jaxtree._fit import host_shapes as H
rng = np.random.default_rng(0)
for (n, p, n1, n2, P) in [(1000, 10, 3, 2, None), (2048, 64, 3, 2, 64), (2048, 64, 2, 3, None), (2480, 64, 2, 3, None), (1000, 20, 3, 2, None), (1500, 30, 2, 3, None), (1500, 14, 3, 2, None)]:
    x = rng.random((n, p)); x[:, 3] = rng.integers(0, 2, n)
    y = np.sin(3 * x[:, 0]) + x[:, 1] * x[:, 2] + 0.1 * rng.standard_normal(n)
    data = scoring.chunk(x, y, None, chunk_size=2048)
    pairs = S.pair_list(p) if P is None else S.pair_list(p)[:P]
    spec = S.ShapeSpec(n1=n1, n2=n2, max_terms=5, pairs=pairs)
    out = {}
    for form in (False, True):
        H.PRODUCTS = form
        ts = []
        for _ in range(3):
            t = time.perf_counter(); d = H.Design(data, spec); g = d.gains(*d.rhs(np.zeros(d.y.shape))); ts.append(time.perf_counter() - t)
        out[form] = (min(ts), d.table, g)
    rel = np.nanmax(np.abs(out[True][1] - out[False][1])) / np.nanmax(np.abs(out[False][1]))
    relg = np.nanmax(np.abs(out[True][2] - out[False][2]) / np.maximum(np.abs(out[False][2]), 1e-300))
    print(f"n={n} p={p} n2={n2} P={len(pairs)}: sparse {out[False][0]*1e3:.1f} ms, products {out[True][0]*1e3:.1f} ms; table rel {rel:.1e}, gains rel {relg:.1e}", flush=True)
