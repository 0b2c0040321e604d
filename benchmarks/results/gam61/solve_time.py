"""The additive fits' cost, the grid solved pair by pair (the committed module, passed as a
file) against the eigendecomposed path (the working tree): breast cancer's training rows
(logistic) and a synthetic 1,900 x 30 regression (gcv60/gcv_time.py's widest).

    python solve_time.py /tmp/old_additive.py
"""
import importlib.util, os, sys, time
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", ".."))
import numpy as np
from sklearn.datasets import load_breast_cancer
from jaxtree._fit import additive as new
spec = importlib.util.spec_from_file_location("old_additive", sys.argv[1])
old = importlib.util.module_from_spec(spec); spec.loader.exec_module(old)
X, y = load_breast_cancer(return_X_y=True)
xs = (X - X.min(0)) / np.ptp(X, 0)
rng = np.random.default_rng(0)
xr = rng.uniform(size=(1900, 30))
yr = np.sin(6 * xr[:, 0]) + xr[:, 1:10].sum(1) + 0.3 * rng.normal(size=1900)
for label, fn, args in (("logistic 569x30", "fit_logistic", (xs, y, None)),
                        ("regression 1900x30", "fit", (xr, yr, None))):
    for name, mod in (("old", old), ("new", new)):
        t = time.perf_counter(); f = getattr(mod, fn)(*args); dt = time.perf_counter() - t
        print(f"{label:20s} {name}: {dt:6.2f} s  lam {f.lam:g} delta {f.delta:g} terms {len(np.asarray(f.terms.order))} score {f.gcv:.6g}", flush=True)
