"""The cost of finding a table's columns of two values (jaxtree._inputs.table.two_valued_columns)
at 10^7 x 8 float32 with one 0/1 column: no weights, positive weights, weights with zero rows.
python benchmarks/results/two57/detect.py (from the repository root)."""
import pathlib, sys, time
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3]))
import numpy as np
from jaxtree._inputs import table as T

rng = np.random.default_rng(0)
x = rng.random((10**7, 8), dtype=np.float32)
x[:, 2] = rng.integers(0, 2, 10**7)
w = rng.uniform(0.5, 2, 10**7)
w0 = w.copy()
w0[::1000] = 0
for name, sw in (("no weights", None), ("positive weights", w), ("zero-weight rows", w0)):
    ts = []
    for _ in range(3):
        t = time.perf_counter()
        found = T.two_valued_columns(x, sw, range(8))
        ts.append(time.perf_counter() - t)
    print(f"{name:18s} found {found}  {min(ts):.3f} s (best of 3)")
