"""TreeClassifier() on one table in a fresh process, jaxtree's cache off: the first fit
(with XLA's compile time in it, from JAX's compile events), three warm fits, and the AUC on
held-back rows.

    python first.py CHECKOUT LABEL breast|wine|synthN

breast: scikit-learn's breast cancer, first 455 rows fitted (binary); wine: scikit-learn's
wine, 140 rows (three classes); synthN (e.g. synth8000): N x 8 uniform rows fitted, y =
[sin(3 x1) + x2 x3 - 0.9 + noise > 0] (binary), 2,000 more held back. ``JAXTREE_CLF_STEP_LIGHT`` = light | llvm1 (measurement only) sets the
classifier's own cached step's light options; ``JAXTREE_CLF_KW`` (JSON) TreeClassifier's
keywords, e.g. '{"validation_fraction": 0.2}'."""
import collections
import json
import os
import sys
import time
import warnings

os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import jax  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

import jaxtree  # noqa: E402

warnings.simplefilter("ignore")
label, table = sys.argv[2], sys.argv[3]
xla = collections.defaultdict(float)


def listen(event, duration, **kw):
    if event.endswith("backend_compile_duration"):
        xla[kw.get("fun_name")] += duration


jax.monitoring.register_event_duration_secs_listener(listen)
mode = os.environ.get("JAXTREE_CLF_STEP_LIGHT")
if mode:
    from jaxtree import _executables
    from jaxtree._fit import classify
    opts = _executables.LIGHT if mode == "light" else _executables.LIGHT_LLVM1
    for name in ("binary_step_cached", "ovr_step_cached"):
        if hasattr(classify, name):
            getattr(classify, name).light = dict(opts)
if table == "breast":
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
    tr, te = slice(0, 455), slice(455, None)
elif table == "wine":
    from sklearn.datasets import load_wine
    X, y = load_wine(return_X_y=True)
    perm = np.random.default_rng(0).permutation(len(y))
    X, y = X[perm], y[perm]
    tr, te = slice(0, 140), slice(140, None)
else:
    n = int(table[len("synth"):])
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(n + 2000, 8))
    f = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] - 0.9 + 0.3 * rng.normal(size=n + 2000)
    y = (f > 0).astype(int)
    tr, te = slice(0, n), slice(n, None)
times = []
for i in range(4):
    t = time.perf_counter()
    est = jaxtree.TreeClassifier(**json.loads(os.environ.get("JAXTREE_CLF_KW", "{}"))).fit(
        X[tr], y[tr])
    times.append(time.perf_counter() - t)
    if i == 0:
        first_xla = sum(xla.values())
        top = sorted(xla.items(), key=lambda kv: -kv[1])[:4]
proba = np.asarray(est.predict_proba(X[te]))
auc = (roc_auc_score(y[te], proba[:, 1]) if proba.shape[1] == 2
       else roc_auc_score(y[te], proba, multi_class="ovr"))
print(label, table, "first", round(times[0], 2), "xla", round(first_xla, 2),
      "warm", [round(t, 3) for t in times[1:]], "AUC", round(auc, 5),
      "top", [(n, round(v, 2)) for n, v in top], flush=True)
