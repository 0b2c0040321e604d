"""First and warm fit of the default on fold 0's training rows of bench_accuracy's small
tables (regression: RMSE; two classes: AUC), in a fresh process (cache off):
PYTHONPATH=CHECKOUT python cost_small.py TABLE"""
import os, sys, time, warnings, json
warnings.simplefilter("ignore")
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
import jaxtree  # the checkout on PYTHONPATH, before bench_accuracy puts the repository first
import numpy as np, bench_accuracy as ba
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.metrics import roc_auc_score
name = sys.argv[1]
task, X, y, _ = ba.load_table(name, ba.TABLES[name][2]); yv = y.to_numpy()
cv = KFold if task == "regression" else StratifiedKFold
Est = jaxtree.TreeRegressor if task == "regression" else jaxtree.TreeClassifier
tr, te = next(cv(5, shuffle=True, random_state=ba.SEED).split(X, yv))
Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
t = time.perf_counter(); e = Est().fit(Xtr, yv[tr]); first = time.perf_counter() - t
warm = []
for _ in range(3):
    t = time.perf_counter(); e = Est().fit(Xtr, yv[tr]); warm.append(time.perf_counter() - t)
score = (float(np.sqrt(np.mean((e.predict(Xte) - yv[te]) ** 2))) if task == "regression"
         else float(roc_auc_score(yv[te], e.predict_proba(Xte)[:, 1])))
print(json.dumps(dict(table=name, jaxtree=jaxtree.__file__, first=round(first, 2), warm=round(float(np.median(warm)), 3),
                      order=getattr(e, "shape_order_", None), score=round(score, 4))), flush=True)
