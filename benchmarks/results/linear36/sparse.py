# Thirty-sixth session scratch experiment (issue 29), kept as run: python benchmarks/results/linear36/sparse.py TABLES
import sys, time, warnings, numpy as np
warnings.simplefilter("ignore")
sys.path.insert(0, "/work/main/benchmarks"); sys.path.insert(0, "/work/main")
import bench_accuracy as B
import jaxtree
from sklearn.model_selection import KFold
from sklearn.linear_model import LassoCV, RidgeCV
from sklearn.pipeline import make_pipeline

def lasso(X):
    pipe = B.linear("regression", X)
    pre = pipe.steps[0][1]
    return make_pipeline(pre, LassoCV(cv=5, random_state=0, max_iter=20000))

for name in sys.argv[1].split(","):
    task, X, y, _ = B.load_table(name, None); y = np.asarray(y, float)
    res = {k: [] for k in ["default", "ridge+tree", "lasso+tree", "lasso", "ridge"]}
    nl = []
    for tr, te in KFold(5, shuffle=True, random_state=0).split(X):
        Xtr, Xte, ytr, yte = X.iloc[tr], X.iloc[te], y[tr], y[te]
        rm = lambda p: float(np.sqrt(np.mean((p - yte) ** 2)))
        est = jaxtree.TreeRegressor().fit(Xtr, ytr); res["default"].append(rm(est.predict(Xte)))
        rid = B.linear(task, Xtr).fit(Xtr, ytr); res["ridge"].append(rm(rid.predict(Xte)))
        t = jaxtree.TreeRegressor().fit(Xtr, ytr - rid.predict(Xtr)); res["ridge+tree"].append(rm(rid.predict(Xte) + t.predict(Xte)))
        las = lasso(Xtr).fit(Xtr, ytr); res["lasso"].append(rm(las.predict(Xte)))
        nl.append(int(np.sum(las.steps[-1][1].coef_ != 0)))
        t = jaxtree.TreeRegressor().fit(Xtr, ytr - las.predict(Xtr)); res["lasso+tree"].append(rm(las.predict(Xte) + t.predict(Xte)))
    print(name, " ".join("%s %.4g" % (k, np.mean(v)) for k, v in res.items()), "lasso terms", np.mean(nl), flush=True)
