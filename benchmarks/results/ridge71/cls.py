"""The binary classifier's additive settings on bench_accuracy's stratified folds (SPLIT_SEED):
mean test AUC and formula terms of the default, shapes="additive" (its tree sized on held-out
rows) and shapes="additive" with k=0, each with GCV's backward elimination (elim) and
without it (all). PYTHONPATH=CHECKOUT python cls.py TABLE..."""
import os, sys, warnings, json, time; warnings.simplefilter("ignore")
import jaxtree; sys.path.insert(0, "benchmarks")
import numpy as np, bench_accuracy as ba
from jaxtree._fit import additive as add_
from sklearn.model_selection import StratifiedKFold
from sklearn.metrics import roc_auc_score
SEED = int(os.environ.get("SPLIT_SEED", ba.SEED))
orig = add_._eliminate
none = lambda G, b, yy, n, P, ridge, count, *a, **k: list(range(count))
SETTINGS = {"default": ({}, True), "add elim": (dict(shapes="additive"), True),
            "add all": (dict(shapes="additive"), False),
            "k0 elim": (dict(shapes="additive", k=0), True), "k0 all": (dict(shapes="additive", k=0), False)}
for name in sys.argv[1:]:
    _, X, y, _ = ba.load_table(name, ba.TABLES[name][2]); y = np.asarray(y)
    res, terms, secs = {}, {}, {}
    for f, (tr, te) in enumerate(StratifiedKFold(5, shuffle=True, random_state=SEED).split(X, y)):
        for o, (kw, elim) in SETTINGS.items():
            add_._eliminate = orig if elim else none
            t = time.perf_counter()
            e = jaxtree.TreeClassifier(**kw).fit(X.iloc[tr], y[tr])
            secs.setdefault(o, []).append(time.perf_counter() - t)
            res.setdefault(o, []).append(float(roc_auc_score(y[te], e.predict_proba(X.iloc[te])[:, 1])))
            terms.setdefault(o, []).append(ba.n_terms(e) if hasattr(ba, "n_terms") else -1)
    add_._eliminate = orig
    print(json.dumps(dict(table=name, seed=SEED, auc={o: round(float(np.mean(v)), 4) for o, v in res.items()},
                          terms={o: float(np.mean(v)) for o, v in terms.items()},
                          fit_s={o: round(float(np.median(v)), 2) for o, v in secs.items()})), flush=True)
print("done")
