"""Five folds of bench_accuracy tables with a larger ridge on the pair shapes only (blocks of more
than 64 coefficients: the (32, 16) knots' pairs of 256; mains keep jaxtree.shapes.RIDGE), set by
RIDGE_PAIRS=..., on both the host stages (_ridge) and the compiled ones (_block_system), patched
before anything is traced; run with JAXTREE_COMPILATION_CACHE=0:
    RIDGE_PAIRS=1e-2 JAXTREE_COMPILATION_CACHE=0 python benchmarks/results/run82/ridge_pairs.py flights"""
import os, pathlib, sys, warnings
_R = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(_R)); sys.path.insert(0, str(_R / "benchmarks"))
import numpy as np
import jax.numpy as jnp
import jaxtree, jaxtree.shapes as S, jaxtree._fit.host_shapes as HS
RP = float(os.environ.get("RIDGE_PAIRS", S.RIDGE))

def _ridge(g):
    w = RP if g.shape[-1] > 64 else S.RIDGE
    return w * np.maximum(np.trace(g, axis1=-2, axis2=-1) / g.shape[-1], 1e-30)
HS._ridge = _ridge

def _block_system(g, s, n, size=None, ridge=None):
    a = g - jnp.outer(s, s) / jnp.maximum(n, 1e-30)
    k = g.shape[-1] if size is None else size
    w = jnp.where(jnp.asarray(k) > 64, RP, S.RIDGE)
    lam = w * jnp.maximum(jnp.trace(g) / k, 1e-30)
    return a + lam * jnp.eye(g.shape[-1], dtype=g.dtype)
S._block_system = _block_system

import bench_accuracy as B
from sklearn.model_selection import StratifiedKFold, KFold
from sklearn.metrics import roc_auc_score, mean_squared_error
warnings.simplefilter("ignore")
for name in sys.argv[1:]:
    task, X, y, desc = B.load_table(name, B.TABLES[name][2])
    yv = y.to_numpy(); res = []
    cv = (StratifiedKFold if task == "classification" else KFold)(5, shuffle=True, random_state=B.SEED)
    for tr, te in cv.split(X, yv):
        Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
        E = jaxtree.TreeClassifier if task == "classification" else jaxtree.TreeRegressor
        e = E().fit(Xtr, yv[tr])
        res.append(roc_auc_score(yv[te], e.predict_proba(Xte)[:, 1]) if task == "classification"
                   else mean_squared_error(yv[te], e.predict(Xte)) ** 0.5)
    print("pairs", RP, name, round(float(np.mean(res)), 5), [round(r, 5) for r in res], flush=True)
