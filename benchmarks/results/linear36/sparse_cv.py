# Thirty-sixth session scratch experiment (issue 29), kept as run: python benchmarks/results/linear36/sparse_cv.py TABLES
import sys, time, warnings, numpy as np
warnings.simplefilter("ignore")
sys.path.insert(0, "/work/main/benchmarks"); sys.path.insert(0, "/work/main")
import bench_accuracy as B
import jaxtree
from sklearn.model_selection import KFold
from sklearn.linear_model import LassoCV
from sklearn.pipeline import make_pipeline

def lasso(X):
    pre = B.linear("regression", X).steps[0][1]
    return make_pipeline(pre, LassoCV(cv=5, random_state=0, max_iter=20000))

def fit_default(Xtr, ytr):
    est = jaxtree.TreeRegressor().fit(Xtr, ytr)
    return lambda Xq: np.asarray(est.predict(Xq), float)

def fit_lt(Xtr, ytr):
    las = lasso(Xtr).fit(Xtr, ytr)
    t = jaxtree.TreeRegressor().fit(Xtr, ytr - las.predict(Xtr))
    return lambda Xq: las.predict(Xq) + np.asarray(t.predict(Xq), float)

for name in sys.argv[1].split(","):
    task, X, y, _ = B.load_table(name, None); y = np.asarray(y, float)
    out = {"default": [], "lasso+tree": [], "chosen": []}; picks = []
    for tr, te in KFold(5, shuffle=True, random_state=0).split(X):
        Xtr, Xte, ytr, yte = X.iloc[tr], X.iloc[te], y[tr], y[te]
        rm = lambda p: float(np.sqrt(np.mean((p - yte) ** 2)))
        inner = {"default": 0.0, "lasso+tree": 0.0}
        for itr, ite in KFold(5, shuffle=True, random_state=1).split(Xtr):
            for k, f in (("default", fit_default), ("lasso+tree", fit_lt)):
                pr = f(Xtr.iloc[itr], ytr[itr])(Xtr.iloc[ite])
                inner[k] += float(np.sum((pr - ytr[ite]) ** 2))
        pick = min(inner, key=inner.get); picks.append(pick)
        scores = {k: rm(f(Xtr, ytr)(Xte)) for k, f in (("default", fit_default), ("lasso+tree", fit_lt))}
        for k in scores: out[k].append(scores[k])
        out["chosen"].append(scores[pick])
    print(name, " ".join("%s %.4g" % (k, np.mean(v)) for k, v in out.items()), "picks", [p[0] for p in picks], flush=True)
