"""The paper's function (default and paper settings, n = 1,000 seeds 0-2 and 5,000) with the
float32 L-BFGS stop tolerance replaced by RTOL: RMSE against the noiseless g on 2,000 test
rows and the warm fit (sixty-fifth session). RTOL=1e-5 python benchmarks/results/cost65/rtol_demo.py

Optional: a checkout to import jaxtree from (argument; default the working directory), the
line's label (``TAG``; default ``rtol R``) and the sizes (``SIZES=n:seed,...``). The
sixty-sixth session's A/B of two checkouts (``results/levers66/demo.log``)::

    TAG=T SIZES=1000:0,1000:1,1000:2,5000:0,20000:0 python benchmarks/results/cost65/rtol_demo.py CHECKOUT
"""
import sys, time, statistics, warnings, os
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else ".")
warnings.simplefilter("ignore")
import numpy as np, jaxtree
from jaxtree import refine
from jaxtree.datasets import paper_synthetic, paper_function
rt = float(os.environ.get("RTOL", "0"))
if rt:
    orig = refine.lbfgs_rtol
    refine.lbfgs_rtol = lambda dt: rt if np.dtype(dt) == np.float32 else orig(dt)
tag = os.environ.get("TAG", f"rtol {rt or 'default'}")
sizes = [tuple(int(v) for v in s.split(":"))
         for s in os.environ.get("SIZES", "1000:0,1000:1,1000:2,5000:0").split(",")]
Xte, _ = paper_synthetic(2000, p=10, seed=99)
for name, mk in (("default", lambda: jaxtree.TreeRegressor(k=10)), ("paper", lambda: jaxtree.TreeRegressor.paper())):
    for n, seed in sizes:
        X, y = paper_synthetic(n, p=10, seed=seed)
        e = mk().fit(X, y)
        ts = []
        for _ in range(5 if n == 1000 else 2):
            t = time.perf_counter(); mk().fit(X, y); ts.append(time.perf_counter() - t)
        rmse = np.sqrt(np.mean((e.predict(Xte) - paper_function(Xte)) ** 2))
        print(f"{tag} {name} n={n} seed={seed}: RMSE {rmse:.5f} warm {statistics.median(ts):.3f} s ops {e.k_}", flush=True)
