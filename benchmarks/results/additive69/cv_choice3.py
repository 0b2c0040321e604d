"""Outer 5 folds (bench_accuracy's split); on each training part, an inner 5-fold CV (the
library's select.folds) picks among the default, shapes="additive" and shapes="additive"
with k=0 (the GCV main shapes alone), each scored with the estimator's predictions: test
RMSE of each setting and of the pick, and the pick between the first two only (today's
rule). python benchmarks/results/additive69/cv_choice3.py TABLE... (from the repository
root; SPLIT_SEED=s; the choice in the library is switched off for the candidates)"""
import os, sys, json, warnings
warnings.simplefilter("ignore")
import jaxtree  # the checkout on PYTHONPATH
sys.path.insert(0, "benchmarks")
import numpy as np, pandas as pd, bench_accuracy as ba
from jaxtree._fit import select, spec as spec_
from sklearn.model_selection import KFold
spec_.ADDITIVE_CV_FOLDS = 0  # candidates are plain fits
SEED = int(os.environ.get("SPLIT_SEED", ba.SEED))
OPTS = {"default": {}, "additive": {"shapes": "additive"}, "gam": {"shapes": "additive", "k": 0}}
def load(name):
    if name == "paper":
        from jaxtree.datasets import paper_function
        rng = np.random.default_rng(SEED); X = rng.uniform(size=(1000, 10))
        return pd.DataFrame(X, columns=[f"x{i}" for i in range(10)]), paper_function(X) + 0.2 * rng.standard_normal(1000)
    _, X, y, _ = ba.load_table(name, ba.TABLES[name][2]); return X, y.to_numpy()
out = {}
for name in sys.argv[1:]:
    X, y = load(name)
    rows = []
    for f, (tr, te) in enumerate(KFold(5, shuffle=True, random_state=SEED).split(X, y)):
        Xtr, Xte, ytr, yte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True), y[tr], y[te]
        inner = dict.fromkeys(OPTS, 0.0)
        for itr, ite in select.folds(len(ytr), 5, None):
            for o, kw in OPTS.items():
                e = jaxtree.TreeRegressor(**kw).fit(Xtr.iloc[itr], ytr[itr])
                inner[o] += float(np.sum((e.predict(Xtr.iloc[ite]) - ytr[ite]) ** 2))
        test = {o: float(np.sqrt(np.mean((jaxtree.TreeRegressor(**kw).fit(Xtr, ytr).predict(Xte) - yte) ** 2)))
                for o, kw in OPTS.items()}
        pick3 = min(inner, key=inner.get)
        pick2 = min(("default", "additive"), key=inner.get)
        rows.append(dict(fold=f, inner={o: v / len(ytr) for o, v in inner.items()}, test=test, pick3=pick3, pick2=pick2))
        print(name, json.dumps(rows[-1]), flush=True)
    m = lambda key: np.mean([r["test"][r[key]] for r in rows])
    print(f"== {name}: " + " ".join(f"{o} {np.mean([r['test'][o] for r in rows]):.5g}" for o in OPTS)
          + f" | pick of 2 {m('pick2'):.5g} | pick of 3 {m('pick3'):.5g} ({[r['pick3'] for r in rows]})", flush=True)
    out[name] = rows
json.dump(out, open(os.path.join(os.path.dirname(os.path.abspath(__file__)), f"cv_choice3_{SEED}.json"), "w"), indent=1)
