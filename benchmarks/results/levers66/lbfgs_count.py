import sys, warnings; warnings.simplefilter("ignore")
root = sys.argv[1]; sys.path.insert(0, root + "/benchmarks"); sys.path.insert(0, root)
import numpy as np, bench_cost, jaxtree
from jaxtree import refine
task, Xtr, ytr = bench_cost.split(sys.argv[2])[:3]
jaxtree.TreeRegressor().fit(Xtr, ytr)
refine._LOG.clear()
jaxtree.TreeRegressor().fit(Xtr, ytr)
log = refine._LOG
# split into calls: i resets to 0 with phase POINT at a new call
calls, cur = [], []
for (i, ph, f) in log:
    if i == 0 and ph == 0 and cur:
        calls.append(cur); cur = []
    cur.append((i, ph, f))
calls.append(cur)
ev = [len(c) for c in calls]; it = [max(x[0] for x in c) for c in calls]
print(sys.argv[2], "lbfgs calls", len(calls), "evaluations per call", ev, "iterations", it)
print("total evaluations", sum(ev), "mean evals/iteration", sum(ev) / max(sum(it), 1))
