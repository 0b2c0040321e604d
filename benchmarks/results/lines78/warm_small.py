"""Warm fit of the default on whole small tables: ROOT=<checkout> python warm_small.py TABLE N"""
import os, sys, time, warnings, json
warnings.simplefilter("ignore")
root = os.environ["ROOT"]; sys.path.insert(0, root); sys.path.insert(0, os.path.join(root, "benchmarks"))
import numpy as np, jaxtree, bench_accuracy as ba
assert jaxtree.__file__.startswith(root), jaxtree.__file__
name, reps = sys.argv[1], int(sys.argv[2])
_, X, y, _ = ba.load_table(name, ba.TABLES[name][2])
jaxtree.TreeRegressor(random_state=0).fit(X, y)
ts = []
for _ in range(reps):
    t = time.perf_counter(); e = jaxtree.TreeRegressor(random_state=0).fit(X, y); ts.append(time.perf_counter() - t)
print(json.dumps(dict(root=root, table=name, times=[round(v, 3) for v in ts], median=round(float(np.median(ts)), 3), order=e.shape_order_)))
