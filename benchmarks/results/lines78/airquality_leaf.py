"""airquality at split seed 2, folds 1 and 3: the lines setting (GCV inflation 1.4 and 1) against
ridge. ROOT=<checkout> python airquality_leaf.py"""
import os, sys, warnings; warnings.simplefilter("ignore")
ROOT = os.environ.get("ROOT", "."); sys.path.insert(0, ROOT); sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import numpy as np, jaxtree, bench_accuracy as ba
from jaxtree._fit import additive as A, spec as spec_
from sklearn.model_selection import KFold
spec_.ADDITIVE_CV_FOLDS = 0
_, X, y, _ = ba.load_table("airquality", ba.TABLES["airquality"][2]); y = np.asarray(y, float)
print(X.columns.tolist(), X.isna().sum().to_dict())
orig, osolve = A.fit, A._solve
for f, (tr, te) in enumerate(KFold(5, shuffle=True, random_state=2).split(X, y)):
    if f not in (1, 3): continue
    rm = lambda p: float(np.sqrt(np.mean((p - y[te]) ** 2)))
    out = {}
    for g in (1.4, 1.0):
        A._solve = lambda *a, **k: osolve(*a, **{**k, "gamma": g})
        A.fit = lambda *a, **k: orig(*a, **{**k, "lines": True})
        e = jaxtree.TreeRegressor(shapes="additive", k=0, validation_fraction=None).fit(X.iloc[tr], y[tr])
        A.fit, A._solve = orig, osolve
        out[f"g{g}"] = rm(e.predict(X.iloc[te]))
        if g == 1.4: print(e.formula())
    Xi = X.fillna(X.iloc[tr].median())
    from sklearn.linear_model import RidgeCV
    from sklearn.preprocessing import StandardScaler
    from sklearn.pipeline import make_pipeline
    r = make_pipeline(StandardScaler(), RidgeCV(alphas=np.logspace(-3, 3, 13))).fit(Xi.iloc[tr], y[tr])
    out["ridge"] = rm(r.predict(Xi.iloc[te])); out["alpha"] = r[-1].alpha_
    lo, hi = Xi.iloc[tr].min(), Xi.iloc[tr].max()
    out["ridge clipped"] = rm(r.predict(Xi.iloc[te].clip(lo, hi, axis=1)))
    print(f, {k: round(v, 3) for k, v in out.items()})
