"""A 3-class TreeClassifier's first predict_proba after its fit, fresh process and cache
(sixty-fifth session): scikit-learn's wine table, 120 training rows, 58 test rows.
``python ovr_first.py CHECKOUT``; run old and new alternately."""
import os
import sys
import tempfile
import time
import warnings

sys.path.insert(0, sys.argv[1])
os.environ.setdefault("XDG_CACHE_HOME", tempfile.mkdtemp())
warnings.simplefilter("ignore")
import numpy as np  # noqa: E402
from sklearn.datasets import load_wine  # noqa: E402

import jaxtree  # noqa: E402

X, y = load_wine(return_X_y=True)
perm = np.random.default_rng(0).permutation(len(y))
tr, te = perm[:120], perm[120:]
t0 = time.perf_counter()
clf = jaxtree.TreeClassifier().fit(X[tr], y[tr])
t1 = time.perf_counter()
proba = clf.predict_proba(X[te])
t2 = time.perf_counter()
clf.predict_proba(X[te][:5])
t3 = time.perf_counter()
acc = float(np.mean(proba.argmax(1) == y[te]))
print(f"fit {t1 - t0:.2f} s  first predict_proba {t2 - t1:.4f} s  second {t3 - t2:.4f} s  "
      f"accuracy {acc:.4f}  sum of probabilities of class 0 {proba[:, 0].sum():.9f}")
