"""Five folds of bench_accuracy tables with the shape terms' ridge (jaxtree.shapes.RIDGE, the
weight of lambda = RIDGE * mean diagonal of a block's Gram) set by RIDGE=...:
    RIDGE=1e-2 python benchmarks/results/run82/ridge.py flights_class flights"""
import os, pathlib, sys, time, warnings
_R = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(_R)); sys.path.insert(0, str(_R / "benchmarks"))
import numpy as np
import jaxtree, jaxtree.shapes as S
if os.environ.get("RIDGE"): S.RIDGE = float(os.environ["RIDGE"])
import bench_accuracy as B
from sklearn.model_selection import StratifiedKFold, KFold
from sklearn.metrics import roc_auc_score, mean_squared_error
warnings.simplefilter("ignore")
for name in sys.argv[1:]:
    task, X, y, desc = B.load_table(name, B.TABLES[name][2])
    yv = y.to_numpy(); res = []
    cv = (StratifiedKFold if task == "classification" else KFold)(5, shuffle=True, random_state=B.SEED)
    for tr, te in cv.split(X, yv):
        Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
        E = jaxtree.TreeClassifier if task == "classification" else jaxtree.TreeRegressor
        e = E().fit(Xtr, yv[tr])
        res.append(roc_auc_score(yv[te], e.predict_proba(Xte)[:, 1]) if task == "classification"
                   else mean_squared_error(yv[te], e.predict(Xte)) ** 0.5)
    print(S.RIDGE, name, round(float(np.mean(res)), 5), [round(r, 5) for r in res], flush=True)
