"""Sanity bound for a 'linear start': ridge on the rows, then TreeRegressor() on ridge's
residual, against the default and ridge alone, bench_accuracy's 5 folds."""
import os, sys, time, warnings
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import numpy as np
warnings.simplefilter("ignore")
import jaxtree
import bench_accuracy as B
from sklearn.model_selection import KFold
for name in sys.argv[2].split(","):
    task, X, y, _ = B.load_table(name, None)
    res = {"default": [], "ridge": [], "ridge+tree": []}
    for tr, te in KFold(5, shuffle=True, random_state=B.SEED).split(X):
        Xtr, Xte, ytr, yte = X.iloc[tr], X.iloc[te], y.iloc[tr].to_numpy(), y.iloc[te].to_numpy()
        lin = B.linear(task, X).fit(Xtr, ytr)
        est = jaxtree.TreeRegressor().fit(Xtr, ytr)
        rest = jaxtree.TreeRegressor().fit(Xtr, ytr - lin.predict(Xtr))
        rm = lambda p: float(np.sqrt(np.mean((p - yte) ** 2)))
        res["default"].append(rm(est.predict(Xte))); res["ridge"].append(rm(lin.predict(Xte)))
        res["ridge+tree"].append(rm(lin.predict(Xte) + rest.predict(Xte)))
    print(name, {k: round(float(np.mean(v)), 4) for k, v in res.items()},
          {k: [round(a, 3) for a in v] for k, v in res.items()}, flush=True)
