"""The binary classifier's cross-validated additive choice (``additive_cv=5``) with the
settings it weighs (``classify.ADDITIVE_CHOICES``) varied, on bench_accuracy's stratified
folds (SPLIT_SEED): mean test AUC, formula terms, the settings kept, and the median
fit time (warm: each variant's first fit of the table is not counted).
PYTHONPATH=CHECKOUT python cls_choice.py TABLE..."""
import os, sys, warnings, json, time; warnings.simplefilter("ignore")
import jaxtree; sys.path.insert(0, "benchmarks")
import numpy as np, bench_accuracy as ba
from jaxtree._fit import classify
from sklearn.model_selection import StratifiedKFold
from sklearn.metrics import roc_auc_score
SEED = int(os.environ.get("SPLIT_SEED", ba.SEED))
VARIANTS = {"off": None, "two-way": ("additive",),
            "four-way": ("additive", "additive k=0", "additive k=0 all terms"),
            "k=0 only": ("additive k=0", "additive k=0 all terms")}
for name in sys.argv[1:]:
    _, X, y, _ = ba.load_table(name, ba.TABLES[name][2]); y = np.asarray(y)
    res, terms, secs, kept = {}, {}, {}, {}
    for f, (tr, te) in enumerate(StratifiedKFold(5, shuffle=True, random_state=SEED).split(X, y)):
        for v, choices in VARIANTS.items():
            if choices is not None:
                classify.ADDITIVE_CHOICES = choices
            t = time.perf_counter()
            e = jaxtree.TreeClassifier(additive_cv=0 if choices is None else 5).fit(X.iloc[tr], y[tr])
            if f:
                secs.setdefault(v, []).append(time.perf_counter() - t)
            res.setdefault(v, []).append(float(roc_auc_score(y[te], e.predict_proba(X.iloc[te])[:, 1])))
            terms.setdefault(v, []).append(ba.n_terms(e))
            kept.setdefault(v, []).append(str(getattr(e, "shape_order_", None)))
    print(json.dumps(dict(table=name, seed=SEED, auc={o: round(float(np.mean(v)), 4) for o, v in res.items()},
                          terms={o: float(np.mean(v)) for o, v in terms.items()}, kept=kept,
                          warm_fit_s={o: round(float(np.median(v)), 2) for o, v in secs.items()})), flush=True)
print("done")
