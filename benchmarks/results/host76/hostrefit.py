"""Captures the host backfitting round's arguments (host_shapes.refit) of one warm default fit of a
bench_cost case into a pickle for refit_time.py: python hostrefit.py CASE [OUT.pkl] (ROOT: the checkout)."""
import pathlib, sys, time, warnings, os, pickle
ROOT = pathlib.Path(os.environ.get("ROOT", "/work/main"))
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
warnings.simplefilter("ignore")
import numpy as np
import bench_cost as bc, bench_accuracy as acc
from jaxtree._fit import host_shapes as H
case = sys.argv[1]
task, Xtr, ytr, Xte, yte = bc.split(case)
cap = []
orig = H.refit
def spy(*a, **k):
    cap.append((a, k)); return orig(*a, **k)
H.refit = spy
acc.jaxtree_model(task).fit(Xtr, ytr)
H.refit = orig
print("calls", len(cap))
a, k = cap[-1]
sh, data, spec = a[:3]
print("data", np.shape(data.x), "terms", int(sh.n_terms), "sweeps", a[3:] , k)
pickle.dump((a, k), open(sys.argv[2] if len(sys.argv) > 2 else f"refit_{case}.pkl", "wb"))
