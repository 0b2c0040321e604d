"""The demo's first fit and first predict in a fresh process with a fresh cache
(sixty-fifth session): import, fit, first predict of its 333 test rows, formula, a second
predict. ``python first_predict.py CHECKOUT`` (a repository root); run old and new
checkouts alternately."""
import os
import sys
import tempfile
import time

t00 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
os.environ.setdefault("XDG_CACHE_HOME", tempfile.mkdtemp())
import numpy as np  # noqa: E402

import jaxtree  # noqa: E402
from jaxtree.datasets import paper_function, paper_synthetic  # noqa: E402

t0 = time.perf_counter()
X, y = paper_synthetic(1000 + 333, p=10, seed=0)
Xtr, ytr, Xte = X[:1000], y[:1000], X[1000:]
est = jaxtree.TreeRegressor(k=10).fit(Xtr, ytr)
t1 = time.perf_counter()
p = est.predict(Xte)
t2 = time.perf_counter()
est.formula()
t3 = time.perf_counter()
est.predict(Xte[:10])
t4 = time.perf_counter()
rmse = np.sqrt(np.mean((p - paper_function(Xte)) ** 2))
print(f"import {t0 - t00:.2f} s  fit {t1 - t0:.2f} s  first predict {t2 - t1:.4f} s  "
      f"formula {t3 - t2:.4f} s  second predict {t4 - t3:.4f} s  test RMSE {rmse:.6f}  "
      f"sum of predictions {p.sum():.9f}")
