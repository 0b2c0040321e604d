"""First and warm fit of TreeClassifier(additive_cv=FOLDS) on fold 0's training rows of
bench_accuracy's small two-class tables, a fresh process (run with the cache off):
PYTHONPATH=CHECKOUT python cost_cls.py TABLE FOLDS"""
import os, sys, time, warnings, json
warnings.simplefilter("ignore")
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
import jaxtree  # the checkout on PYTHONPATH, before bench_accuracy puts the repository first
import numpy as np, bench_accuracy as ba
from sklearn.model_selection import StratifiedKFold
from sklearn.metrics import roc_auc_score
name, folds = sys.argv[1], int(sys.argv[2])
task, X, y, _ = ba.load_table(name, ba.TABLES[name][2]); yv = y.to_numpy()
tr, te = next(StratifiedKFold(5, shuffle=True, random_state=ba.SEED).split(X, yv))
Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
est = lambda: jaxtree.TreeClassifier(additive_cv=folds)
t = time.perf_counter(); e = est().fit(Xtr, yv[tr]); first = time.perf_counter() - t
warm = []
for _ in range(3):
    t = time.perf_counter(); e = est().fit(Xtr, yv[tr]); warm.append(time.perf_counter() - t)
print(json.dumps(dict(table=name, folds=folds, jaxtree=jaxtree.__file__, first=round(first, 2),
                      warm=round(float(np.median(warm)), 3), order=getattr(e, "shape_order_", None),
                      auc=round(float(roc_auc_score(yv[te], e.predict_proba(Xte)[:, 1])), 4))), flush=True)
