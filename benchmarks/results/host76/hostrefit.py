"""Captures the host backfitting round's arguments (host_shapes.refit) of one warm default fit of a
bench_cost case into a pickle for refit_time.py: python hostrefit.py CASE [OUT.pkl] (ROOT: the checkout)."""
import pickle, sys
import _capture as C
import numpy as np
from jaxtree._fit import host_shapes as H
case = sys.argv[1]
_, cap = C.calls(case, H, "refit")
print("calls", len(cap))
a, k = cap[-1]
sh, data, spec = a[:3]
print("data", np.shape(data.x), "terms", int(sh.n_terms), "sweeps", a[3:] , k)
pickle.dump((a, k), open(sys.argv[2] if len(sys.argv) > 2 else f"refit_{case}.pkl", "wb"))
