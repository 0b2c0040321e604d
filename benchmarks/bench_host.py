"""Where a warm ``TreeRegressor.paper(k=10).fit`` at airline scale spends its time: inside
the search driver (``jaxtree.search.run``: the device steps and one transfer an iteration)
or outside it (validation, encoding, scaling, chunking, the host-to-device copy, the model).

Prints one line: the medians over ``REPEATS`` warm fits (after one fit that compiles) of the
whole fit, the search and the rest, then every fit's ``whole/search`` seconds. Run it with
another checkout first on ``PYTHONPATH`` to race an old commit (alternate the processes)::

    python benchmarks/bench_host.py 3
    PYTHONPATH=/tmp/old_tree python benchmarks/bench_host.py 3
"""

import os
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_scale import airline_like, time_search_runs  # noqa: E402

import jaxtree  # noqa: E402


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    X, y = airline_like(700_000)
    inside, _restore = time_search_runs()  # the process ends with the fits
    jaxtree.TreeRegressor.paper(k=10).fit(X, y)
    rows = []
    for _ in range(repeats):
        inside[0] = 0.0
        t = time.perf_counter()
        jaxtree.TreeRegressor.paper(k=10).fit(X, y)
        rows.append((time.perf_counter() - t, inside[0]))
    med = [statistics.median(v) for v in ([r[0] for r in rows], [r[1] for r in rows],
                                          [r[0] - r[1] for r in rows])]
    print(os.path.dirname(os.path.dirname(jaxtree.__file__)),
          "fit %.3f search %.3f outside %.3f" % tuple(med),
          " ".join("%.2f/%.2f" % r for r in rows))


if __name__ == "__main__":
    main()
