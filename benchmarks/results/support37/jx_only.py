"""jaxtree's default only, on bench_accuracy's tables and 5 folds (the same splits).

    JAXTREE_CHECKOUT=DIR JAXTREE_SUPPORT_MIN=0.02 python jx_only.py mtcars,boston out.json

DIR: a checkout with prototype.diff applied (default: this repository's root)."""
import os, pathlib, sys, json, time, warnings
ROOT = os.environ.get("JAXTREE_CHECKOUT", str(pathlib.Path(__file__).resolve().parents[3]))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import numpy as np
import bench_accuracy as ba
import jaxtree; print(jaxtree.__file__, flush=True)
from sklearn.model_selection import KFold, StratifiedKFold
warnings.simplefilter("ignore")
out = {}
for name in sys.argv[1].split(","):
    task, X, y, _ = ba.load_table(name, None)
    cv = (KFold(5, shuffle=True, random_state=ba.SEED) if task == "regression"
          else StratifiedKFold(5, shuffle=True, random_state=ba.SEED))
    s = []
    for tr, te in cv.split(X, y):
        est = ba.jaxtree_model(task).fit(X.iloc[tr], y.iloc[tr])
        s.append(ba.score(task, est, X.iloc[te], y.iloc[te]))
    out[name] = s
    print(name, " ".join(f"{v:.4f}" for v in s), f"mean {np.mean(s):.4f}", flush=True)
json.dump(out, open(sys.argv[2], "w"))
