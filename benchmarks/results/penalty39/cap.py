"""The default with a larger term cap (monkeypatched). python cap.py TABLES SHAPES TERMS"""
import os, sys, warnings, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import numpy as np
import bench_accuracy as ba
from jaxtree._fit import spec as S
S.AUTO_SHAPES, S.AUTO_TERMS = int(sys.argv[2]), int(sys.argv[3])
from sklearn.model_selection import KFold, StratifiedKFold
warnings.simplefilter("ignore")
for name in sys.argv[1].split(","):
    task, X, y, _ = ba.load_table(name, None)
    cv = (KFold(5, shuffle=True, random_state=ba.SEED) if task == "regression"
          else StratifiedKFold(5, shuffle=True, random_state=ba.SEED))
    s, terms = [], []; t = time.time()
    for tr, te in cv.split(X, y):
        est = ba.jaxtree_model(task).fit(X.iloc[tr], y.iloc[tr])
        s.append(ba.score(task, est, X.iloc[te], y.iloc[te])); terms.append(ba.n_terms(est))
    print(f"{name:12s} cap {sys.argv[2]}/{sys.argv[3]} mean {np.mean(s):.4f} terms {np.mean(terms):.1f} folds", " ".join(f"{v:.4f}" for v in s), f"{time.time()-t:.0f}s", flush=True)
