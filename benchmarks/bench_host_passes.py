"""The host's passes over an in-memory table before a fit reaches the device (issue 25): the
column extremes, the scaling and the cast into padded chunks (2^20 rows a chunk, the
accelerator plan), on a random float64 table of N x 8; the fastest of 3 each. Run it with
another checkout on ``PYTHONPATH`` to race an old commit::

    python benchmarks/bench_host_passes.py 2e7
    PYTHONPATH=/tmp/old_tree python benchmarks/bench_host_passes.py 2e7
"""

import sys
import time

import numpy as np

from jaxtree import _scaling, scoring
from jaxtree import _threads


def best(f, *a):
    times = []
    for _ in range(3):
        t = time.perf_counter()
        out = f(*a)
        times.append(time.perf_counter() - t)
    return min(times), out


def main():
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 20_000_000
    rng = np.random.default_rng(0)
    x, y = rng.random((n, 8)), rng.random(n)
    te, _ = best(_threads.column_extremes, x)
    sc = _scaling.from_rows(x, y, None)
    ta, (xs, ys) = best(_scaling.scale_rows, sc, x, y, None)
    tc, _ = best(scoring._host_chunks, xs, ys, None, 1 << 20, None, np.float32)
    print(f"n={n}: column_extremes {te:.3f} s, scaling.scale_rows {ta:.3f} s, "
          f"host chunks {tc:.3f} s")


if __name__ == "__main__":
    main()
