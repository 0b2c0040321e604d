"""Test RMSE with and without a guard that keeps the selection run's tree of the chosen size
where it fits all training rows better than the refit by more than MARGIN:
python benchmarks/results/additive69/guard_try.py MARGIN TABLE..."""
import sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, "benchmarks")
import numpy as np, jax
import bench_accuracy as ba
from jaxtree._fit import source, stages, select
from sklearn.model_selection import KFold
cap = {}
plain_sel = source.InMemory.selection_run
def sel_spy(self, cfg, rep):
    out = plain_sel(self, cfg, rep); cap["sel"] = out[0]; return out
source.InMemory.selection_run = sel_spy
plain_tree = stages.tree
def ops(p):
    n = int(np.asarray(p.n_slots)); return (n - 1) // 2 if n else -1
margin = float(sys.argv[1]); ON = {"on": False}
def tree_spy(src, spec, rep, selected=None):
    cap.pop("sel", None)
    out = plain_tree(src, spec, rep, selected)
    res = out[0]
    if not ON["on"] or out[1] is None or "sel" not in cap:
        return out
    k = ops(res.program)
    cands = [p for p in cap["sel"].programs if ops(p) == k]
    if not cands:
        return out
    data = src.data(support=True); b = src.spec.basis
    alt = jax.device_put(cands[-1])
    a = float(select.mse_and_errors(res.program, data, b)[0])
    c = float(select.mse_and_errors(alt, data, b)[0])
    if a > (1 + margin) * c:
        cap["swapped"] = cap.get("swapped", 0) + 1
        return (res._replace(program=alt),) + tuple(out[1:])
    return out
stages.tree = tree_spy
tot = {}
for name in sys.argv[2:]:
    task, X, y, desc = ba.load_table(name, ba.TABLES[name][2])
    yv = y.to_numpy()
    cv = KFold(5, shuffle=True, random_state=ba.SEED)
    r = {False: [], True: []}; sw = []
    for f, (tr, te) in enumerate(cv.split(X, yv)):
        for on in (False, True):
            ON["on"] = on; cap.clear()
            est = ba.jaxtree_model(task)
            est.fit(X.iloc[tr].reset_index(drop=True), yv[tr])
            r[on].append(ba.score(task, est, X.iloc[te].reset_index(drop=True), yv[te]))
            if on: sw.append(cap.get("swapped", 0))
    print(f"{name}: base {np.mean(r[False]):.4f} guard {np.mean(r[True]):.4f} "
          f"({100 * (np.mean(r[True]) / np.mean(r[False]) - 1):+.2f}%) swaps {sw} "
          f"folds {np.round(r[False], 4).tolist()} -> {np.round(r[True], 4).tolist()}", flush=True)
