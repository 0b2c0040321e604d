"""Fold 0 of bench_accuracy's diamonds: HistGradientBoosting(300) fitted to the default jaxtree's
training residual, restricted to one group of three covariates at a time (every triple), to
find which three-way structure the default misses; and the best triple's term as trilinear
hats on a coarse grid (ridge least squares on the residual, on the host) at a few grid sizes.

    python benchmarks/results/run82/diamonds_triples.py
"""
import itertools, pathlib, sys, warnings
_R = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(_R)); sys.path.insert(0, str(_R / "benchmarks"))
import numpy as np
import bench_accuracy as B
from sklearn.model_selection import KFold
from sklearn.ensemble import HistGradientBoostingRegressor as H
import jaxtree
warnings.simplefilter("ignore")
task, X, y, desc = B.load_table("diamonds", B.TABLES["diamonds"][2])
yv = y.to_numpy(); cols = list(X.columns); p = len(cols)
tr, te = next(KFold(5, shuffle=True, random_state=B.SEED).split(X, yv))
Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
cat = [X[c].dtype.name == "category" for c in cols]
rmse = lambda pred: float(np.sqrt(np.mean((pred - yv[te]) ** 2)))
m = jaxtree.TreeRegressor().fit(Xtr, yv[tr])
ptr, pte = m.predict(Xtr), m.predict(Xte)
r = yv[tr] - ptr
print(f"jaxtree default {rmse(pte):.5f}", flush=True)
res = []
for t in itertools.combinations(range(p), 3):
    h = H(max_iter=300, random_state=0, categorical_features=cat, interaction_cst=[list(t)]).fit(
        Xtr, r)
    res.append((rmse(pte + h.predict(Xte)), [cols[j] for j in t]))
res.sort()
for s, t in res[:12]:
    print(f"{s:.5f} {t}", flush=True)
# the best triple as trilinear hats on a coarse grid, ridge on the residual
def hats(v, lo, hi, n):
    z = np.clip((v - lo) / (hi - lo), 0, 1) * (n - 1)
    i = np.minimum(np.floor(z).astype(int), n - 2); f = z - i
    H_ = np.zeros((len(v), n)); H_[np.arange(len(v)), i] = 1 - f; H_[np.arange(len(v)), i + 1] = f
    return H_
def codes(c):
    return X[c].cat.codes.to_numpy() if X[c].dtype.name == "category" else X[c].to_numpy(float)
best = res[0][1]
for n in (4, 6, 8):
    mats = []
    for c in best:
        v = codes(c); lo, hi = np.quantile(v, 0.005), np.quantile(v, 0.995)
        k = n if X[c].dtype.name != "category" else int(v.max()) + 1
        lo, hi = (lo, hi) if X[c].dtype.name != "category" else (0, k - 1)
        mats.append(hats(v, lo, hi, k))
    D = np.einsum("ni,nj,nk->nijk", *mats).reshape(len(yv), -1)
    Dtr, Dte = D[tr], D[te]
    for lam in (1.0, 10.0, 100.0):
        g = Dtr.T @ Dtr + lam * np.eye(D.shape[1])
        coef = np.linalg.solve(g, Dtr.T @ r)
        print(f"trilinear {best} {n} hats, {D.shape[1]} coefs, ridge {lam}: {rmse(pte + Dte @ coef):.5f}",
              flush=True)
