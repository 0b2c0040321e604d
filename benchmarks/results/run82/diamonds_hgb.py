"""Fold 0 of bench_accuracy's diamonds (log price): where HistGradientBoosting's lead over jaxtree
lies. HGB(100) and HGB(1000) in full, restricted to pairs and to main effects; with carat (and x,
y, z) cut to equal-width bins as jaxtree's main hats are spaced; and HGB fitted to jaxtree's
training residual (what structure the default misses).

    python benchmarks/results/run82/diamonds_hgb.py
"""
import itertools, pathlib, sys, warnings
_R = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(_R)); sys.path.insert(0, str(_R / "benchmarks"))
import numpy as np
import bench_accuracy as B
from sklearn.model_selection import KFold
from sklearn.ensemble import HistGradientBoostingRegressor as H
warnings.simplefilter("ignore")
task, X, y, desc = B.load_table("diamonds", B.TABLES["diamonds"][2])
yv = y.to_numpy(); cols = list(X.columns); p = len(cols)
tr, te = next(KFold(5, shuffle=True, random_state=B.SEED).split(X, yv))
Xtr, Xte = X.iloc[tr], X.iloc[te]
cat = [X[c].dtype.name == "category" for c in cols]
pairs = [list(c) for c in itertools.combinations(range(p), 2)]
rmse = lambda pred: float(np.sqrt(np.mean((pred - yv[te]) ** 2)))
def run(name, Xa=Xtr, Xb=Xte, target=None, base=0.0, **kw):
    m = H(random_state=0, categorical_features=cat, **kw).fit(Xa, yv[tr] if target is None else target)
    print(f"{name:40s} {rmse(base + m.predict(Xb)):.5f}", flush=True)
for it in (100, 1000):
    run(f"HGB({it})", max_iter=it)
    run(f"HGB({it}) pairs", max_iter=it, interaction_cst=pairs)
    run(f"HGB({it}) additive", max_iter=it, interaction_cst="no_interactions")
for nb in (32, 64):
    Xa, Xb = Xtr.copy(), Xte.copy()
    for c in ("carat", "x", "y", "z"):
        v = X[c].to_numpy(); edges = np.linspace(v.min(), v.max(), nb + 1)
        Xa[c] = np.digitize(Xtr[c].to_numpy(), edges[1:-1]); Xb[c] = np.digitize(Xte[c].to_numpy(), edges[1:-1])
    run(f"HGB(1000) pairs, size cols {nb} bins", Xa, Xb, max_iter=1000, interaction_cst=pairs)
import jaxtree
m = jaxtree.TreeRegressor().fit(Xtr.reset_index(drop=True), yv[tr])
ptr, pte = m.predict(Xtr.reset_index(drop=True)), m.predict(Xte.reset_index(drop=True))
print(f"{'jaxtree default':40s} {rmse(pte):.5f}  train {np.sqrt(np.mean((ptr - yv[tr]) ** 2)):.5f}")
for it in (100, 300):
    run(f"jaxtree + HGB({it}) on its residual", target=yv[tr] - ptr, base=pte, max_iter=it)
    run(f"jaxtree + HGB({it}) pairs on its residual", target=yv[tr] - ptr, base=pte, max_iter=it,
        interaction_cst=pairs)
    run(f"jaxtree + HGB({it}) additive on residual", target=yv[tr] - ptr, base=pte, max_iter=it,
        interaction_cst="no_interactions")
