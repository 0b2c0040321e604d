"""The additive settings' test RMSE (bench_accuracy's five folds, SPLIT_SEED) with GCV's
penalty grid as built (`built`) and widened (`wide`: smoothing up to 10^8, so that the
terms can become lines, and ridge shares down to 10^-6, so that the lines' own shrinkage
can be a ridge regression's). PYTHONPATH=CHECKOUT python grid.py TABLE..."""
import os, sys, warnings, json; warnings.simplefilter("ignore")
import jaxtree; sys.path.insert(0, "benchmarks")
import numpy as np, bench_accuracy as ba
from jaxtree._fit import spec as spec_, additive as add_
from sklearn.model_selection import KFold
SEED = int(os.environ.get("SPLIT_SEED", ba.SEED))
BUILT = add_._solve.__defaults__
WIDE_L = tuple(float(v) for v in 10.0 ** np.arange(-4, 8.5, 0.5))
WIDE_D = (0.0, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1.0)
GRIDS = {"built": BUILT, "wide": (WIDE_L, WIDE_D) + BUILT[2:]}
SETTINGS = {"k0 all": (dict(shapes="additive", k=0), False),
            "k0 elim": (dict(shapes="additive", k=0), True),
            "add all": (dict(shapes="additive"), False)}
orig = add_._eliminate
none = lambda G, b, yy, n, P, ridge, count, *a, **k: list(range(count))
for name in sys.argv[1:]:
    _, X, y, _ = ba.load_table(name, ba.TABLES[name][2]); y = y.to_numpy()
    res, info = {}, {}
    for f, (tr, te) in enumerate(KFold(5, shuffle=True, random_state=SEED).split(X, y)):
        Xtr, Xte = X.iloc[tr], X.iloc[te]
        for g, d in GRIDS.items():
            add_._solve.__defaults__ = d
            for o, (kw, elim) in SETTINGS.items():
                add_._eliminate = orig if elim else none
                e = jaxtree.TreeRegressor(**kw).fit(Xtr, y[tr])
                res.setdefault(f"{g} {o}", []).append(float(np.sqrt(np.mean((e.predict(Xte) - y[te]) ** 2))))
    add_._solve.__defaults__ = BUILT; add_._eliminate = orig
    print(json.dumps(dict(table=name, seed=SEED, rmse={o: round(float(np.mean(v)), 4) for o, v in res.items()})), flush=True)
print("done")
