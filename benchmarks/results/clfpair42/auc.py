"""TreeClassifier() on the small classification tables of ``bench_accuracy.py`` (5 stratified
folds, its loaders and scorer), in a fresh process with jaxtree's cache off: each fold's AUC
and fit seconds (fold 0's fit compiles, the others are warm).

    python auc.py CHECKOUT LABEL [TABLES]   # TABLES: comma-separated, default the four below

``JAXTREE_KW`` (JSON, optional): keywords for ``TreeClassifier``, e.g. '{"search": "greedy"}'.

Writes ``auc_LABEL.json`` beside this script and prints one line per table."""
import json
import os
import sys
import time
import warnings

os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
CHECKOUT, LABEL = sys.argv[1], sys.argv[2]
TABLES = (sys.argv[3] if len(sys.argv) > 3 else "pima,breast_cancer,titanic,spam7").split(",")
sys.path.insert(0, CHECKOUT)
sys.path.insert(0, os.path.join(CHECKOUT, "benchmarks"))
import json as _json  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402

import bench_accuracy as B  # noqa: E402
import jaxtree  # noqa: E402

warnings.simplefilter("ignore")
out = {}
for name in TABLES:
    task, X, y, _ = B.load_table(name, None)
    aucs, times = [], []
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=B.SEED).split(X, y):
        est = jaxtree.TreeClassifier(**_json.loads(os.environ.get("JAXTREE_KW", "{}")))
        t = time.perf_counter()
        est.fit(X.iloc[tr], y.iloc[tr])
        times.append(time.perf_counter() - t)
        aucs.append(B.score(task, est, X.iloc[te], y.iloc[te].to_numpy()))
    out[name] = {"auc": float(np.mean(aucs)), "folds": aucs, "fit_s": times,
                 "search": est.search_, "validation_fraction": est.validation_fraction_}
    print(LABEL, name, f"AUC {np.mean(aucs):.4f}", [round(a, 4) for a in aucs],
          "fit s", [round(t, 2) for t in times], est.search_, est.validation_fraction_,
          flush=True)
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), f"auc_{LABEL}.json"), "w") as f:
    json.dump(out, f, indent=1)
