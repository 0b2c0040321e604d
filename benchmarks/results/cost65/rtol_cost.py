"""Warm fits of bench_cost cases with the float32 L-BFGS stop tolerance (refine.lbfgs_rtol)
replaced by RTOL (sixty-fifth session; measured, not adopted). From the repository root:
RTOL=1e-5 JAXTREE_COMPILATION_CACHE=0 python benchmarks/results/cost65/rtol_cost.py CASE,CASE"""
import sys, time, statistics, warnings, os
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
warnings.simplefilter("ignore")
import numpy as np, bench_cost, jaxtree
from jaxtree import refine
rt = float(os.environ.get("RTOL", "0"))
if rt:
    orig = refine.lbfgs_rtol
    refine.lbfgs_rtol = lambda dt: rt if np.dtype(dt) == np.float32 else orig(dt)
for case in sys.argv[1].split(","):
    task, Xtr, ytr, Xte, yte = bench_cost.split(case)
    Est = jaxtree.TreeRegressor if task == "regression" else jaxtree.TreeClassifier
    Est().fit(Xtr, ytr)
    ts = []
    for r in range(3):
        t = time.perf_counter(); e = Est().fit(Xtr, ytr); ts.append(time.perf_counter() - t)
    sc = float(np.sqrt(np.mean((e.predict(Xte) - yte) ** 2))) if task == "regression" else None
    print(f"rtol {rt or 'default'} {case}: warm {statistics.median(ts):.3f} s score {sc}", flush=True)
