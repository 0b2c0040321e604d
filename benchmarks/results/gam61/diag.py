"""Diagnosis: fold 0 of a classification table, TreeClassifier(shapes='additive') against the
GAM alone (its terms only) and the tree on the offset, with the GAM's chosen penalty."""
import os, sys, warnings
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..")); sys.path.insert(0, os.path.join(HERE, "..", "..", ".."))
import numpy as np, pandas as pd, dataclasses, json
import bench_accuracy as ba
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold
warnings.simplefilter("ignore")
import jaxtree
name = sys.argv[1]
kw = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
task, X, y, _ = ba.load_table(name, None)
yv = np.asarray(y, float)
for fold, (tr, te) in enumerate(StratifiedKFold(5, shuffle=True, random_state=ba.SEED).split(X, yv)):
    m = jaxtree.TreeClassifier(shapes="additive", random_state=0, **kw).fit(X.iloc[tr], yv[tr])
    full = m.decision_function(X.iloc[te])
    gam_only = dataclasses.replace(m.model_, program=m.model_.program._replace(
        weight=m.model_.program.weight * 0, intercept=m.model_.program.intercept * 0))
    g = np.asarray(jaxtree.predict(gam_only, m._prepare(X.iloc[te])) if hasattr(m, "_prepare") else np.nan)
    print(name, fold, "full", round(roc_auc_score(yv[te], full), 4), "hist", m.history_[:2], m.history_[-1],
          "terms", int(np.sum(np.asarray(m.model_.shapes.main_on))), "k", m.k_, flush=True)
    if fold >= int(os.environ.get("FOLDS", "1")) - 1:
        break
