"""A streamed fit of a table mostly of indicators: 10^6 rows, 8 numbers and three
categories of 5, 6 and 7 levels one-hot (18 indicator columns), as a float32 memmap (read
chunk by chunk: n*p above the in-memory threshold). The default TreeRegressor, one fit
(first, with compiling) and a second (warm) in one process, the compilation cache off:
python streamed.py CHECKOUT"""
import os
import sys
import tempfile
import time
import warnings

sys.path.insert(0, sys.argv[1])
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
warnings.simplefilter("ignore")
import numpy as np  # noqa: E402

import jaxtree  # noqa: E402

n = 1_000_000
rng = np.random.default_rng(0)
num = rng.uniform(size=(n, 8))
cats = [rng.integers(0, k, n) for k in (5, 6, 7)]
onehot = np.concatenate([np.eye(k)[c] for k, c in zip((5, 6, 7), cats)], axis=1)
x = np.c_[num, onehot].astype(np.float32)
effect = [rng.normal(size=k) for k in (5, 6, 7)]
y = (np.sin(4 * num[:, 0]) + num[:, 1] * num[:, 2] + effect[0][cats[0]]
     + effect[1][cats[1]] * num[:, 3] + effect[2][cats[2]] + 0.1 * rng.normal(size=n))
d = tempfile.mkdtemp()
mx = np.memmap(os.path.join(d, "x"), dtype=np.float32, mode="w+", shape=x.shape)
mx[:] = x
mx.flush()
test = slice(0, 20_000)
for label in ("first", "warm"):
    t0 = time.perf_counter()
    est = jaxtree.TreeRegressor().fit(mx, y)
    took = time.perf_counter() - t0
    rmse = float(np.sqrt(np.mean((est.predict(x[test]) - y[test]) ** 2)))
    print(f"{os.path.basename(sys.argv[1].rstrip('/'))} {label}: {took:.1f} s  train RMSE "
          f"(first 20,000 rows) {rmse:.5f}  k_ {est.k_}", flush=True)
