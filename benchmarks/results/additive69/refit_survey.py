"""How often is the refit (all rows, k chosen on held-out rows) worse on all training rows than
the selection run's tree of the same size? bench_accuracy's regression tables, 5 folds, the
default estimator: python benchmarks/results/additive69/refit_survey.py TABLE..."""
import sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, "benchmarks")
import numpy as np, jax
import bench_accuracy as ba
from jaxtree._fit import source, stages, select
from jaxtree import program as prog
from sklearn.model_selection import KFold, StratifiedKFold
cap = {}
plain_sel = source.InMemory.selection_run
def sel_spy(self, cfg, rep):
    out = plain_sel(self, cfg, rep); cap["sel"] = out[0]; return out
source.InMemory.selection_run = sel_spy
plain_tree = stages.tree
def ops(p):
    n = int(np.asarray(p.n_slots)); return (n - 1) // 2 if n else -1
def tree_spy(src, spec, rep, selected=None):
    cap.pop("sel", None)
    out = plain_tree(src, spec, rep, selected)
    res = out[0]
    if out[1] is None or "sel" not in cap or not hasattr(src, "data"):
        return out
    k = ops(res.program)
    cands = [p for p in cap["sel"].programs if ops(p) == k]
    if not cands:
        cap.setdefault("log", []).append(f"k {k}: no selection tree"); return out
    data = src.data(support=True); b = src.spec.basis
    a = float(select.mse_and_errors(res.program, data, b)[0])
    c = float(select.mse_and_errors(jax.device_put(cands[-1]), data, b)[0])
    cap.setdefault("log", []).append((k, a, c))
    return out
stages.tree = tree_spy
for name in sys.argv[1:]:
    task, X, y, desc = ba.load_table(name, ba.TABLES[name][2])
    yv = y.to_numpy()
    cv = (KFold(5, shuffle=True, random_state=ba.SEED) if task == "regression"
          else StratifiedKFold(5, shuffle=True, random_state=ba.SEED))
    for f, (tr, te) in enumerate(cv.split(X, yv)):
        cap.clear()
        est = ba.jaxtree_model(task)
        est.fit(X.iloc[tr].reset_index(drop=True), yv[tr])
        for e in cap.get("log", ["no held-out tree size"]):
            if isinstance(e, tuple):
                k, a, c = e
                print(f"{name} fold {f}: k {k} refit {a:.5g} selection tree {c:.5g} ratio {a / c:.3f}"
                      + ("  <-- refit worse" if a > 1.02 * c else ""), flush=True)
            else:
                print(f"{name} fold {f}: {e}", flush=True)
