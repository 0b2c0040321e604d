"""ISLR Default (eightieth session): an inner 80/20 split of each outer training fold; held-out log-loss of the
default (fit on inner train) vs the lines alone (fit on inner train), paired difference and SE."""
import os, sys, numpy as np, warnings, time
import pathlib
_HERE = pathlib.Path(__file__).resolve().parents[3]  # the checkout this lies in
sys.path.insert(0, str(_HERE)); sys.path.insert(0, str(_HERE / "benchmarks"))
import jaxtree, bench_accuracy as B
from jaxtree._fit import classify as C, spec as S, pipeline
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.metrics import roc_auc_score
warnings.simplefilter("ignore")
name = sys.argv[1]
task, X, y, desc = B.load_table(name, None); yv = y.to_numpy()
def lines_fit(Xa, ya):
    # the lines alone, through the choice's internals: a classifier whose choice weighs only the lines
    # (forced: SHAPES_FIRST_MAX_ROWS raised, WIDE/ADDITIVE set to lines) then pick the lines' fit
    orig = C._fit_table
    C._fit_table = lambda *a, **k: orig(*a, **{**k, "tree": False, "terms": "lines"})
    try:
        e = jaxtree.TreeClassifier(shapes="additive", k=0, validation_fraction=None, additive_cv=0).fit(Xa, ya)
    finally:
        C._fit_table = orig
    return e
def ll(e, Xa, ya):
    f = e.decision_function(Xa); s = np.where(ya == 1, 1, -1)
    return np.logaddexp(0, -s * f)
for f, (tr, te) in enumerate(StratifiedKFold(5, shuffle=True, random_state=B.SEED).split(X, yv)):
    Xtr = X.iloc[tr].reset_index(drop=True); ytr = yv[tr]
    a, b = train_test_split(np.arange(len(tr)), test_size=0.2, random_state=0, stratify=ytr)
    d = jaxtree.TreeClassifier().fit(Xtr.iloc[a], ytr[a])
    t = time.time(); l = lines_fit(Xtr.iloc[a], ytr[a]); tl = time.time() - t
    ld, lL = ll(d, Xtr.iloc[b], ytr[b]), ll(l, Xtr.iloc[b], ytr[b])
    diff = lL - ld
    full = jaxtree.TreeClassifier().fit(Xtr, ytr)
    lb = ll(full, Xtr.iloc[b], ytr[b]); db = lL - lb
    print("   biased: default (all rows) on b", round(lb.mean(), 5), "diff/se", round(db.mean() / (db.std() / np.sqrt(len(db))), 2), flush=True)
    Xte = X.iloc[te].reset_index(drop=True)
    print(f, "held default", round(ld.mean(), 5), "lines", round(lL.mean(), 5), "diff/se", round(diff.mean() / (diff.std() / np.sqrt(len(diff))), 2),
          "test auc default", round(roc_auc_score(yv[te], d.decision_function(Xte)), 5), "lines", round(roc_auc_score(yv[te], l.decision_function(Xte)), 5), "lines fit s", round(tl, 2), l.shape_order_, l.k_, flush=True)
