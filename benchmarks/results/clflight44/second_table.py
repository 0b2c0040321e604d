"""A second table of the same buckets in one process (cache off): TreeClassifier with a
held-out size (validation_fraction=0.2) on 900 x 9, then on 1,000 x 10 (both: 1,024 rows,
10 columns); the second fit's compilations and time.

    python second_table.py CHECKOUT LABEL"""
import os
import sys
import time
import warnings

os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import numpy as np  # noqa: E402

import jaxtree  # noqa: E402
from jaxtree.debug import count_compilations  # noqa: E402

warnings.simplefilter("ignore")
rng = np.random.default_rng(3)
out = []
for n, p in ((900, 9), (1000, 10)):
    X = rng.uniform(size=(n, p))
    y = (np.cos(4 * X[:, 1]) + X[:, 0] * X[:, 2] + 0.2 * rng.normal(size=n) > 0.3).astype(int)
    t = time.perf_counter()
    with count_compilations() as c:
        jaxtree.TreeClassifier(validation_fraction=0.2).fit(X, y)
    out.append(f"{n}x{p}: {time.perf_counter() - t:.2f} s, {c.compiles} compilations")
print(sys.argv[2], "; ".join(out), flush=True)
