"""A three-class TreeClassifier() on scikit-learn's wine table: first fit in a fresh process
(jaxtree's cache off), then three warm fits, and the training AUC (one-versus-rest).

    python wine.py CHECKOUT LABEL"""
import os
import sys
import time
import warnings

os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import numpy as np  # noqa: E402
from sklearn.datasets import load_wine  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

import jaxtree  # noqa: E402

warnings.simplefilter("ignore")
X, y = load_wine(return_X_y=True)
times = []
for _ in range(4):
    t = time.perf_counter()
    est = jaxtree.TreeClassifier().fit(X, y)
    times.append(time.perf_counter() - t)
auc = roc_auc_score(y, np.asarray(est.predict_proba(X)), multi_class="ovr")
print(sys.argv[2], "first", round(times[0], 2), "warm", [round(t, 3) for t in times[1:]],
      "search", est.search_, "train AUC", round(auc, 4), flush=True)
