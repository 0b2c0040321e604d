"""The regressor's additive choice with a fifth setting, shapes="additive" with its tree and
every covariate's term (no backward elimination): per fold of bench_accuracy's five
(SPLIT_SEED), the setting kept, the cv scores and the test RMSE of the chosen fit, as built
(`four`) and with the fifth setting (`five`). PYTHONPATH=CHECKOUT python fifth.py TABLE..."""
import os, sys, warnings, json; warnings.simplefilter("ignore")
import jaxtree; sys.path.insert(0, "benchmarks")
import numpy as np, bench_accuracy as ba
from jaxtree._fit import pipeline as pl
from sklearn.model_selection import KFold
SEED = int(os.environ.get("SPLIT_SEED", ba.SEED))
FOUR = dict(pl.ADDITIVE_SETTINGS); FOUR_ALL = pl.ALL_TERMS
FIVE = {**FOUR, "additive all terms": {"shapes": "additive"}}
MODES = {"four": (FOUR, FOUR_ALL), "five": (FIVE, FOUR_ALL | {"additive all terms"})}
for name in sys.argv[1:]:
    _, X, y, _ = ba.load_table(name, ba.TABLES[name][2]); y = y.to_numpy()
    out = {m: [] for m in MODES}; picks = {m: [] for m in MODES}; cvs = []
    for f, (tr, te) in enumerate(KFold(5, shuffle=True, random_state=SEED).split(X, y)):
        for m, (s, a) in MODES.items():
            pl.ADDITIVE_SETTINGS, pl.ALL_TERMS = s, a
            e = jaxtree.TreeRegressor().fit(X.iloc[tr], y[tr])
            out[m].append(float(np.sqrt(np.mean((e.predict(X.iloc[te]) - y[te]) ** 2))))
            picks[m].append(e.shape_order_)
            if m == "five":
                cvs.append({k: round(float(v), 4) for k, v in (e.shape_order_scores_ or {}).items() if k.startswith("cv")})
    print(json.dumps(dict(table=name, seed=SEED, rmse={m: round(float(np.mean(v)), 4) for m, v in out.items()},
                          folds={m: [round(v, 3) for v in out[m]] for m in out}, picks=picks, cv=cvs)), flush=True)
print("done")
