"""shape_knots on the small regressions, bench_accuracy's folds.  python knots.py TABLES CONFIGS
CONFIGS: ';'-separated python dicts of TreeRegressor kwargs."""
import os, sys, warnings, time, ast
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import numpy as np
import bench_accuracy as ba

from sklearn.model_selection import KFold, StratifiedKFold
warnings.simplefilter("ignore")
for name in sys.argv[1].split(","):
    task, X, y, _ = ba.load_table(name, None)
    cv = (KFold(5, shuffle=True, random_state=ba.SEED) if task == "regression"
          else StratifiedKFold(5, shuffle=True, random_state=ba.SEED))
    for cfg in sys.argv[2].split(";"):
        kw = ast.literal_eval(cfg)
        s, terms = [], []
        t = time.time()
        for tr, te in cv.split(X, y):
            m = ba.jaxtree_model(task); m.set_params(**kw)
            est = m.fit(X.iloc[tr], y.iloc[tr])
            s.append(ba.score(task, est, X.iloc[te], y.iloc[te])); terms.append(ba.n_terms(est))
        print(f"{name:12s} {cfg:40s} mean {np.mean(s):.4f} terms {np.mean(terms):.1f} folds", " ".join(f"{v:.3f}" for v in s), f"{time.time()-t:.0f}s", flush=True)
