import os, sys, time
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
root = os.environ["ROOT"]; case = sys.argv[1]
sys.path.insert(0, root); sys.path.insert(0, root + "/benchmarks")
import numpy as np, warnings
warnings.simplefilter("ignore")
import bench_cost
import jaxtree
assert jaxtree.__file__.startswith(root)
task, Xtr, ytr = bench_cost.split(case)[:3]
m = bench_cost.acc.jaxtree_model(task)
t = time.perf_counter(); m.fit(Xtr, ytr); t = time.perf_counter() - t
pred = m.predict(Xtr[:300]) if task == "regression" else m.predict_proba(Xtr[:300])[:, 1]
print(f"{case} first fit {t:.2f} s  checksum {float(np.sum(pred)):.9g}")
