"""TreeClassifier(shapes='additive') with another ridge grid for the logistic fit
(``additive.DELTAS`` patched for the run), bench_accuracy's five stratified folds.

    DELTAS=0.01,0.1,1 python deltas.py breast_cancer,default,spam7,pima
"""
import os, sys, warnings
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..")); sys.path.insert(0, os.path.join(HERE, "..", "..", ".."))
import numpy as np
import bench_accuracy as ba
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold
warnings.simplefilter("ignore")
import jaxtree
from jaxtree._fit import additive as A
if os.environ.get("DELTAS"):
    A.DELTAS = tuple(float(v) for v in os.environ["DELTAS"].split(","))
for name in sys.argv[1].split(","):
    task, X, y, _ = ba.load_table(name, None)
    yv = np.asarray(y, float)
    aucs, terms = [], []
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=ba.SEED).split(X, yv):
        m = jaxtree.TreeClassifier(shapes="additive").fit(X.iloc[tr], yv[tr])
        aucs.append(roc_auc_score(yv[te], m.decision_function(X.iloc[te])))
        terms.append(ba.n_terms(m))
    print(f"{name:14s} DELTAS={A.DELTAS} auc {np.mean(aucs):.4f} terms {np.mean(terms):.1f} folds {np.round(aucs, 4).tolist()}", flush=True)
