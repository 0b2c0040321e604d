"""Numeric columns warped to their training quantiles (sklearn QuantileTransformer, uniform) before
the default fit: does a quantile grid help jaxtree? python quant.py TABLES"""
import os, sys, warnings, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import numpy as np, pandas as pd
import bench_accuracy as ba
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.preprocessing import QuantileTransformer
warnings.simplefilter("ignore")
for name in sys.argv[1].split(","):
    task, X, y, _ = ba.load_table(name, None)
    cv = (KFold(5, shuffle=True, random_state=ba.SEED) if task == "regression"
          else StratifiedKFold(5, shuffle=True, random_state=ba.SEED))
    num = [c for c in X.columns if pd.api.types.is_numeric_dtype(X[c]) and X[c].nunique() > 2]
    s0, s1 = [], []; t = time.time()
    for tr, te in cv.split(X, y):
        Xtr, Xte = X.iloc[tr].copy(), X.iloc[te].copy()
        q = QuantileTransformer(n_quantiles=min(1000, len(tr)), output_distribution="uniform", random_state=0)
        # NaN passes through QuantileTransformer
        Xtr[num] = q.fit_transform(Xtr[num].astype(float)); Xte[num] = q.transform(Xte[num].astype(float))
        est = ba.jaxtree_model(task).fit(Xtr, y.iloc[tr])
        s1.append(ba.score(task, est, Xte, y.iloc[te]))
    print(f"{name:12s} quantile-warped mean {np.mean(s1):.4f} folds", " ".join(f"{v:.4f}" for v in s1), f"{time.time()-t:.0f}s", flush=True)
