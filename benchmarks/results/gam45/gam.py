"""Sanity bound for an additive start: a ridge GAM (degree-1 splines, K knots per numeric
column, indicators for categoricals; RidgeCV's LOO alpha), then TreeRegressor() on its
residual; beside the default, ridge and the GAM alone; bench_accuracy's 5 folds."""
import os, sys, warnings
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import numpy as np
warnings.simplefilter("ignore")
import jaxtree
import bench_accuracy as B
from sklearn.model_selection import KFold
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import RidgeCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, SplineTransformer, StandardScaler
K = int(os.environ.get("KNOTS", 3))
def gam(X):
    cat = [c for c in X.columns if str(X[c].dtype) in ("category", "object", "bool")]
    num = [c for c in X.columns if c not in cat]
    parts = [("num", make_pipeline(SimpleImputer(strategy="median"), SplineTransformer(degree=1, n_knots=K, extrapolation="linear"), StandardScaler()), num)]
    if cat:
        parts.append(("cat", make_pipeline(SimpleImputer(strategy="most_frequent"), OneHotEncoder(handle_unknown="ignore")), cat))
    return make_pipeline(ColumnTransformer(parts), RidgeCV(alphas=np.logspace(-3, 3, 13)))
if __name__ == "__main__":
    for name in sys.argv[2].split(","):
        task, X, y, _ = B.load_table(name, None)
        res = {k: [] for k in ("default", "ridge", "gam", "gam+tree", "ridge+tree")}
        for tr, te in KFold(5, shuffle=True, random_state=B.SEED).split(X):
            Xtr, Xte, ytr, yte = X.iloc[tr], X.iloc[te], y.iloc[tr].to_numpy(), y.iloc[te].to_numpy()
            rm = lambda p: float(np.sqrt(np.mean((p - yte) ** 2)))
            lin = B.linear(task, X).fit(Xtr, ytr); g = gam(X).fit(Xtr, ytr)
            res["default"].append(rm(jaxtree.TreeRegressor().fit(Xtr, ytr).predict(Xte)))
            res["ridge"].append(rm(lin.predict(Xte))); res["gam"].append(rm(g.predict(Xte)))
            res["gam+tree"].append(rm(g.predict(Xte) + jaxtree.TreeRegressor().fit(Xtr, ytr - g.predict(Xtr)).predict(Xte)))
            res["ridge+tree"].append(rm(lin.predict(Xte) + jaxtree.TreeRegressor().fit(Xtr, ytr - lin.predict(Xtr)).predict(Xte)))
        print(name, "K", K, {k: round(float(np.mean(v)), 4) for k, v in res.items()}, flush=True)
