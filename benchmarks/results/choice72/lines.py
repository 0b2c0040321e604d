"""A ridge regression as a further setting of the regressor's additive choice, measured
outside the library: per fold of bench_accuracy's five (SPLIT_SEED), the built choice's cv
scores (e.shape_order_scores_), a ridge's cv MSE on the same folds of the training rows
(select.folds, random_state None; bench_accuracy's own RidgeCV pipeline), and the test RMSE
of the setting of least cv MSE (the ridge's predictions where it wins; the built choice's
fit otherwise). PYTHONPATH=CHECKOUT python lines.py TABLE..."""
import os, sys, warnings, json; warnings.simplefilter("ignore")
import jaxtree; sys.path.insert(0, "benchmarks")
import numpy as np, bench_accuracy as ba
from jaxtree._fit import select
from sklearn.model_selection import KFold
SEED = int(os.environ.get("SPLIT_SEED", ba.SEED))
for name in sys.argv[1:]:
    _, X, y, _ = ba.load_table(name, ba.TABLES[name][2]); y = y.to_numpy()
    built, with_ridge, ridge, picks = [], [], [], []
    for f, (tr, te) in enumerate(KFold(5, shuffle=True, random_state=SEED).split(X, y)):
        Xtr, ytr, Xte = X.iloc[tr], y[tr], X.iloc[te]
        e = jaxtree.TreeRegressor().fit(Xtr, ytr)
        rm = lambda p: float(np.sqrt(np.mean((p - y[te]) ** 2)))
        pe = e.predict(Xte); r = ba.linear("regression", X).fit(Xtr, ytr); pr = r.predict(Xte)
        built.append(rm(pe)); ridge.append(rm(pr))
        sc = e.shape_order_scores_ or {}
        cv = {k: v for k, v in sc.items() if k.startswith("cv")}
        if not cv:
            with_ridge.append(rm(pe)); picks.append("no choice"); continue
        sse = 0.0
        for a, h in select.folds(len(ytr), 5, None):
            m = ba.linear("regression", X).fit(Xtr.iloc[a], ytr[a])
            sse += float(np.sum((m.predict(Xtr.iloc[h]) - ytr[h]) ** 2))
        cvr = sse / len(ytr)
        best = min(cv.values())
        picks.append(f"ridge {cvr:.4g} vs {best:.4g}" if cvr < best else f"{e.shape_order_} {best:.4g} vs ridge {cvr:.4g}")
        with_ridge.append(rm(pr) if cvr < best else rm(pe))
    print(json.dumps(dict(table=name, seed=SEED, built=round(float(np.mean(built)), 4),
                          with_ridge=round(float(np.mean(with_ridge)), 4), ridge=round(float(np.mean(ridge)), 4),
                          picks=picks)), flush=True)
print("done")
