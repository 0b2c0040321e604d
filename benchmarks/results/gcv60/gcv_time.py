"""Seconds of jaxtree._fit.additive.fit on synthetic rows (three calls each).

    python gcv_time.py
"""
import time, numpy as np
from jaxtree._fit import additive as A
for n, p in [(400, 13), (1000, 10), (1900, 30)]:
    rng = np.random.default_rng(0)
    xs = rng.uniform(size=(n, p)); y = np.sin(5 * xs[:, 0]) + xs[:, 1] + 0.1 * rng.normal(size=n)
    ts = []
    for r in range(3):
        t = time.perf_counter(); f = A.fit(xs, y, None); ts.append(time.perf_counter() - t)
    print(n, p, "m", 1 + 15 * p, "kept", len(f.terms.order), "seconds", [round(v, 3) for v in ts])
