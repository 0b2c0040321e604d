"""Training loss after each backfitting sweep of a default fit's round: python sweep_losses.py CASE [ROWS]"""
import pathlib, sys, warnings, os
ROOT = pathlib.Path(os.environ.get("ROOT", pathlib.Path(__file__).resolve().parents[3]))
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
warnings.simplefilter("ignore")
import numpy as np
import bench_cost as bc, bench_accuracy as acc
from jaxtree import shapes as S
from jaxtree._fit import host_shapes as H
case = sys.argv[1]
task, Xtr, ytr, Xte, yte = bc.split(case)
if len(sys.argv) > 2: Xtr, ytr = Xtr[:int(sys.argv[2])], ytr[:int(sys.argv[2])]
rd, rh = S.refit, H.refit
def report(kind, real, t, d, s, sweeps, **kw):
    w, y = np.asarray(d.w, np.float64), np.asarray(d.y, np.float64)
    if sweeps > 1:
        L = [float(np.sum(w * (y - np.asarray(real(t, d, s, k, **kw).fit, np.float64)) ** 2)) for k in range(1, 9)]
        print(kind, "n_terms", int(t.n_terms), "rel drops", " ".join(f"{(a - b) / a:.2e}" for a, b in zip(L, L[1:])))
    return real(t, d, s, sweeps, **kw)
S.refit = lambda t, d, s, sweeps=3, gr=None: report("device", rd, t, d, s, sweeps, gr=gr)
H.refit = lambda t, d, s, sweeps=1: report("host", rh, t, d, s, sweeps)
acc.jaxtree_model(task).fit(Xtr, ytr)
