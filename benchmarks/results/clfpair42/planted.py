"""TreeClassifier() on three planted interactions of two covariates (labels of
``f(x1, x2)/sd + 0.3 N(0, 1) > 0``, 5 uniform covariates, 1,000 training and 500 test rows,
seeds 0-2): test AUC per seed.

    python planted.py CHECKOUT LABEL"""
import os
import sys
import warnings

os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import numpy as np  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

import jaxtree  # noqa: E402

warnings.simplefilter("ignore")
CASES = [("sin(3 pi x1) cos(2 pi x2)", lambda X: np.sin(3 * np.pi * X[:, 0]) * np.cos(2 * np.pi * X[:, 1])),
         ("(x1 - 1/2)(x2 - 1/2)", lambda X: (X[:, 0] - 0.5) * (X[:, 1] - 0.5)),
         ("x1 x2 - 1/4", lambda X: X[:, 0] * X[:, 1] - 0.25)]
for name, f in CASES:
    aucs = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        X = rng.uniform(size=(1500, 5))
        z = f(X)
        y = (z / z.std() + 0.3 * rng.normal(size=len(z)) > 0).astype(int)
        est = jaxtree.TreeClassifier().fit(X[:1000], y[:1000])
        aucs.append(roc_auc_score(y[1000:], np.asarray(est.predict_proba(X[1000:]))[:, 1]))
    print(sys.argv[2], name, f"AUC {np.mean(aucs):.4f}", [round(a, 4) for a in aucs], flush=True)
