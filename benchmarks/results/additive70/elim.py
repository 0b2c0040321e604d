"""The additive settings' test RMSE (bench_accuracy's five folds; SPLIT_SEED) with GCV's
backward elimination as built (elim), without it (none), and with plain GCV (gamma 1) as
its criterion (g1). PYTHONPATH=CHECKOUT python elim.py TABLE..."""
import os, sys, warnings, json; warnings.simplefilter("ignore")
import jaxtree; sys.path.insert(0, "benchmarks")
import numpy as np, bench_accuracy as ba
from jaxtree._fit import spec as spec_, additive as add_
spec_.ADDITIVE_CV_FOLDS = 0
from sklearn.model_selection import KFold
SEED = int(os.environ.get("SPLIT_SEED", ba.SEED))
orig = add_._eliminate
VARIANTS = {"elim": orig,  # (run with the elimination replaced, as here, at 2b9faa8)
            "none": lambda G, b, yy, n, P, ridge, count, *a, **k: list(range(count)),
            "g1": lambda *a, **k: orig(*a, **{**k, "gamma": 1.0})}
for name in sys.argv[1:]:
    _, X, y, _ = ba.load_table(name, ba.TABLES[name][2]); y = y.to_numpy()
    res, terms = {}, {}
    for f, (tr, te) in enumerate(KFold(5, shuffle=True, random_state=SEED).split(X, y)):
        Xtr, Xte = X.iloc[tr], X.iloc[te]
        for v, fn in VARIANTS.items():
            add_._eliminate = fn
            for o, kw in {"k0": dict(shapes="additive", k=0), "add": dict(shapes="additive")}.items():
                e = jaxtree.TreeRegressor(**kw).fit(Xtr, y[tr])
                res.setdefault(f"{o} {v}", []).append(float(np.sqrt(np.mean((e.predict(Xte) - y[te]) ** 2))))
                terms.setdefault(f"{o} {v}", []).append(int(np.asarray(e.model_.shapes.n_terms)))
    print(json.dumps(dict(table=name, seed=SEED, rmse={o: round(float(np.mean(v)), 4) for o, v in res.items()},
                          shape_terms={o: float(np.mean(v)) for o, v in terms.items()})), flush=True)
