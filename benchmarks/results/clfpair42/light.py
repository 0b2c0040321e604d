"""TreeClassifier() on breast cancer's first 455 rows (a fresh process, jaxtree's cache off):
first fit, three warm fits and the test AUC, with the one-program step (the binary
classifier's) compiled with XLA's defaults (``default``), :data:`jaxtree._executables.LIGHT`
(``light``) or :data:`jaxtree._executables.LIGHT_LLVM1` (``llvm1``) on every fit.

    python light.py CHECKOUT default|light|llvm1"""
import os, sys, time, warnings
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1]); mode = sys.argv[2]
import numpy as np
warnings.simplefilter("ignore")
import jaxtree
from jaxtree import search, _executables
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import roc_auc_score
if mode != "default":
    search.step_cached.light = dict(_executables.LIGHT if mode == "light" else _executables.LIGHT_LLVM1)
    search.step_cached.light_anywhere = True
X, y = load_breast_cancer(return_X_y=True)
tr, te = slice(0, 455), slice(455, None)
times = []
for _ in range(4):
    t = time.perf_counter(); est = jaxtree.TreeClassifier().fit(X[tr], y[tr]); times.append(time.perf_counter() - t)
auc = roc_auc_score(y[te], np.asarray(est.predict_proba(X[te]))[:, 1])
print(mode, "first", round(times[0], 2), "warm", [round(t, 3) for t in times[1:]], "AUC", round(auc, 5), flush=True)
