import os, sys, time, cProfile, pstats
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
root = sys.argv[1]; case = sys.argv[2]
sys.path.insert(0, root); sys.path.insert(0, root + "/benchmarks")
import numpy as np, warnings
import jax
import bench_cost
import jaxtree
from jaxtree._fit import stages
warnings.simplefilter("ignore")
task, Xtr, ytr = bench_cost.split(case)[:3]
make = lambda: bench_cost.acc.jaxtree_model(task)
cap = []
orig = stages.choose_shapes
def wrapped(*a, **k):
    cap.append((a, k)); return orig(*a, **k)
stages.choose_shapes = wrapped
make().fit(Xtr, ytr)
a, k = cap[0]
print("kernels", k.get("kernels"), "data", np.shape(a[0][0].x))
for i in range(2): jax.block_until_ready(orig(*a, **k))
ts = []
for i in range(7):
    t = time.perf_counter(); jax.block_until_ready(orig(*a, **k)); ts.append(time.perf_counter() - t)
print("choose_shapes ms", sorted(round(1000 * t) for t in ts))
ws = []
for i in range(5):
    t = time.perf_counter(); make().fit(Xtr, ytr); ws.append(time.perf_counter() - t)
print("warm fits", sorted(round(w, 3) for w in ws))
if os.environ.get("PROF"):
    pr = cProfile.Profile(); pr.enable(); orig(*a, **k); pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(25)
