"""Warm fits of a bench_cost case, jaxtree's cache off, in the checkout CO (env): one first fit,
then N timed (median, min) and the test score. python warm_ab.py CASE [N]; CO=/path/to/checkout."""
import sys, time, warnings, statistics
import os; sys.path.insert(0, os.environ.get("CO", "/work/main") + "/benchmarks")
warnings.simplefilter("ignore")
import bench_cost, bench_accuracy as acc
case = sys.argv[1]; reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
task, Xtr, ytr, Xte, yte = bench_cost.split(case)
acc.jaxtree_model(task).fit(Xtr, ytr)
ts = []
for r in range(reps):
    t0 = time.perf_counter(); est = acc.jaxtree_model(task).fit(Xtr, ytr); ts.append(time.perf_counter() - t0)
import jaxtree; print(jaxtree.__file__.split("/jaxtree/")[0], end=" "); print(f"{case} median {statistics.median(ts):.3f} min {min(ts):.3f} score {acc.score(task, est, Xte, yte):.6g}")
