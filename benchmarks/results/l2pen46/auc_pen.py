"""TreeClassifier() on bench_accuracy.py's classification tables (5 stratified folds, its
loaders and scorer) with an L2 penalty on the leaf weights added to the classification
loss that the joint refinement minimises (jaxtree.refine.joint patched: mean loss +
LAM * sum(w^2); the intercept is not penalised). Cache off.

    LAM=1e-3 python auc_pen.py CHECKOUT LABEL TABLES

Prints one line per table (mean AUC, folds, mean fit seconds) and writes auc_LABEL.json."""
import json, os, sys, time, warnings
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
CHECKOUT, LABEL, TABLES = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
sys.path.insert(0, CHECKOUT); sys.path.insert(0, os.path.join(CHECKOUT, "benchmarks"))
import numpy as np
import jax.numpy as jnp
from sklearn.model_selection import StratifiedKFold
import bench_accuracy as B
import jaxtree
from jaxtree import refine

LAM = float(os.environ.get("LAM", "0"))
orig_joint = refine.joint

def joint(program, data, basis, *, steps, loss="squared"):
    if loss == "squared" or LAM == 0:
        return orig_joint(program, data, basis, steps=steps, loss=loss)
    fn = refine._chunked_loss(basis, loss)
    data = refine.coarse(data)
    cache = refine.leaf_cache(program, data, basis)
    if cache is not None:
        data = data._replace(phi=None)
    pen = lambda params: LAM * jnp.sum(params[0] ** 2)
    return refine.lbfgs_box(program, lambda params: fn(params, program, data, cache) + pen(params),
                            steps=steps)

refine.joint = joint
warnings.simplefilter("ignore")
out = {}
for name in TABLES:
    task, X, y, _ = B.load_table(name, None)
    aucs, times = [], []
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=B.SEED).split(X, y):
        est = jaxtree.TreeClassifier()
        t = time.perf_counter(); est.fit(X.iloc[tr], y.iloc[tr]); times.append(time.perf_counter() - t)
        aucs.append(B.score(task, est, X.iloc[te], y.iloc[te].to_numpy()))
    out[name] = {"auc": float(np.mean(aucs)), "folds": aucs, "fit_s": times, "lam": LAM}
    print(LABEL, name, f"AUC {np.mean(aucs):.4f}", [round(a, 4) for a in aucs],
          f"fit s {np.mean(times):.2f}", flush=True)
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), f"auc_{LABEL}.json"), "w") as f:
    json.dump(out, f, indent=1)
