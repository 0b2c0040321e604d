"""Outer 5 folds (bench_accuracy's split, SPLIT_SEED); on each training part an inner
5-fold CV (select.folds) picks among the default, shapes="additive", its k=0 and its k=0
without backward elimination ("gam all";
run at 2b9faa8 + a module switch; this version patches additive.fit's eliminate); test RMSE of each setting and of the three- and
four-way picks. PYTHONPATH=CHECKOUT python cv_choice4.py TABLE..."""
import os, sys, json, warnings
warnings.simplefilter("ignore")
import jaxtree
sys.path.insert(0, "benchmarks")
import numpy as np, bench_accuracy as ba
from jaxtree._fit import select, spec as spec_, additive as add_
from sklearn.model_selection import KFold
spec_.ADDITIVE_CV_FOLDS = 0
SEED = int(os.environ.get("SPLIT_SEED", ba.SEED))
OPTS = {"default": {}, "additive": {"shapes": "additive"}, "gam": {"shapes": "additive", "k": 0},
        "gam all": {"shapes": "additive", "k": 0}}
ORIG = add_.fit
def fit(o, X, y):  # "gam all": the GCV fit without its elimination (the library's setting)
    if o == "gam all":
        add_.fit = lambda *a, **k: ORIG(*a, **{**k, "eliminate": False})
    try:
        return jaxtree.TreeRegressor(**OPTS[o]).fit(X, y)
    finally:
        add_.fit = ORIG
for name in sys.argv[1:]:
    _, X, y, _ = ba.load_table(name, ba.TABLES[name][2]); y = y.to_numpy()
    rows = []
    for f, (tr, te) in enumerate(KFold(5, shuffle=True, random_state=SEED).split(X, y)):
        Xtr, Xte, ytr, yte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True), y[tr], y[te]
        inner = dict.fromkeys(OPTS, 0.0)
        for itr, ite in select.folds(len(ytr), 5, None):
            for o in OPTS:
                e = fit(o, Xtr.iloc[itr], ytr[itr])
                inner[o] += float(np.sum((e.predict(Xtr.iloc[ite]) - ytr[ite]) ** 2))
        test = {o: float(np.sqrt(np.mean((fit(o, Xtr, ytr).predict(Xte) - yte) ** 2))) for o in OPTS}
        pick3 = min(("default", "additive", "gam"), key=inner.get)
        pick4 = min(OPTS, key=inner.get)
        rows.append(dict(fold=f, test=test, pick3=pick3, pick4=pick4))
        print(name, json.dumps(rows[-1]), flush=True)
    m = lambda key: np.mean([r["test"][r[key]] for r in rows])
    print(f"== {name} seed {SEED}: " + " ".join(f"{o} {np.mean([r['test'][o] for r in rows]):.5g}" for o in OPTS)
          + f" | pick of 3 {m('pick3'):.5g} | pick of 4 {m('pick4'):.5g} ({[r['pick4'] for r in rows]})", flush=True)
