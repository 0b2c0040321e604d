"""Both forms near the size rule's break-even (host_shapes._by_products): hats 3-4, many
covariates, few or disjoint pairs.

    python benchmarks/results/products67/forms2.py
"""
import time, itertools
import numpy as np
from jaxtree import scoring, shapes as S
from jaxtree._fit import host_shapes as H
rng = np.random.default_rng(0)
for (n, p, n1, n2, P, disjoint) in [(2048, 64, 4, 3, 64, False), (2048, 64, 4, 4, 32, True), (2048, 16, 4, 4, 120, False), (2048, 30, 4, 3, 200, False), (1000, 6, 16, 4, 15, False)]:
    x = rng.random((n, p))
    y = np.sin(3 * x[:, 0]) + x[:, 1] * x[:, 2] + 0.1 * rng.standard_normal(n)
    data = scoring.chunk(x, y, None, chunk_size=2048)
    pairs = tuple((2 * i, 2 * i + 1) for i in range(P)) if disjoint else S.pair_list(p)[:P]
    spec = S.ShapeSpec(n1=n1, n2=n2, max_terms=5, pairs=pairs)
    c = len(set(itertools.chain(*pairs)))
    res = {}
    for form in (False, True):
        H.PRODUCTS = form
        ts = []
        for _ in range(3):
            t = time.perf_counter(); d = H.Design(data, spec); d.gains(*d.rhs(np.zeros(d.y.shape))); ts.append(time.perf_counter() - t)
        res[form] = min(ts)
    H.PRODUCTS = None
    print(f"n2={n2} c={c} P={P}: sparse {res[False]*1e3:.1f} ms, products {res[True]*1e3:.1f} ms; rule says products: {H._by_products(P, c, n2)} (lhs {(n2*n2*c)**2} vs {H.PRODUCTS_WORK*P})", flush=True)
