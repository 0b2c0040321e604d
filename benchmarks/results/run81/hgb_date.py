"""Fold 0 of bench_accuracy's flights delay > 15: HistGradientBoosting(1000) restricted to pairs, at
fewer bins, without the (month, day) pair, and with one column at a time cut to 16 equal-width
bins (jaxtree's main-shape spacing is equal too): which columns need resolution.

    python benchmarks/results/run81/hgb_date.py
"""
import sys, itertools, numpy as np, warnings
import pathlib; _R = pathlib.Path(__file__).resolve().parents[3]; sys.path.insert(0, str(_R)); sys.path.insert(0, str(_R / "benchmarks"))
import bench_accuracy as B
from sklearn.model_selection import StratifiedKFold
from sklearn.ensemble import HistGradientBoostingClassifier as H
from sklearn.metrics import roc_auc_score
task, X, y, desc = B.load_table("flights_class", B.TABLES["flights_class"][2])
yv = y.to_numpy(); cols = list(X.columns); p = len(cols)
tr, te = next(StratifiedKFold(5, shuffle=True, random_state=B.SEED).split(X, yv))
allpairs = [list(c) for c in itertools.combinations(range(p), 2)]
mi, di = cols.index("month"), cols.index("day")
nomd = [c for c in allpairs if set(c) != {mi, di}]
def run(name, **kw):
    m = H(max_iter=1000, random_state=0, **kw).fit(X.iloc[tr], yv[tr])
    print(name, round(roc_auc_score(yv[te], m.predict_proba(X.iloc[te])[:, 1]), 4), flush=True)
run("pairs", interaction_cst=allpairs)
run("pairs no month-day", interaction_cst=nomd)
run("pairs 16 bins", interaction_cst=allpairs, max_bins=16)
run("pairs 32 bins", interaction_cst=allpairs, max_bins=32)
run("additive", interaction_cst="no_interactions")
import pandas as pd
for j, c in enumerate(cols):
    Xc = X.copy()
    v = Xc[c].to_numpy()
    edges = np.linspace(v.min(), v.max(), 17)  # 16 equal-width bins, as our knots
    Xc[c] = np.digitize(v, edges[1:-1])
    m = H(max_iter=1000, random_state=0, interaction_cst=allpairs).fit(Xc.iloc[tr], yv[tr])
    print("coarse16", c, X[c].nunique(), round(roc_auc_score(yv[te], m.predict_proba(Xc.iloc[te])[:, 1]), 4), flush=True)
