"""python clip.py TABLE VARIANT[,VARIANT...]: 5 folds of bench_accuracy's splits, the default
TreeRegressor/TreeClassifier on covariates clipped to a robust range learned on the training rows.
VARIANT: none | q0.001 (quantiles a, 1-a) | t3 (Tukey fences at 3 IQR)"""
import sys, warnings, numpy as np, time, json, pandas as pd
import pathlib; _root = pathlib.Path(__file__).resolve().parents[3]; sys.path.insert(0, str(_root / "benchmarks")); sys.path.insert(0, str(_root))
warnings.simplefilter("ignore")
import bench_accuracy as acc
from sklearn.model_selection import KFold, StratifiedKFold
name = sys.argv[1]; variants = sys.argv[2].split(",")
task, X, y, desc = acc.load_table(name, None)
yv = y.to_numpy()
num = [c for c in X.columns if pd.api.types.is_numeric_dtype(X[c]) and X[c].nunique() > 2]
def ranges(Xtr, v):
    out = {}
    for c in num:
        col = Xtr[c].dropna().to_numpy()
        lo, hi = col.min(), col.max()
        if v.startswith("q"):
            a = float(v[1:]); qlo, qhi = np.quantile(col, [a, 1 - a])
        elif v.startswith("t"):
            k = float(v[1:]); q1, q3 = np.quantile(col, [0.25, 0.75]); iqr = q3 - q1
            qlo, qhi = (q1 - k * iqr, q3 + k * iqr) if iqr > 0 else (lo, hi)
        else:
            qlo, qhi = lo, hi
        out[c] = (max(lo, qlo), min(hi, qhi))
    return out
def clipped(Xp, rg):
    Xp = Xp.copy()
    for c, (lo, hi) in rg.items():
        Xp[c] = Xp[c].clip(lo, hi)
    return Xp
cv = (KFold(5, shuffle=True, random_state=0) if task == "regression" else StratifiedKFold(5, shuffle=True, random_state=0))
res = {v: [] for v in variants}
for f, (tr, te) in enumerate(cv.split(X, yv)):
    Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
    for v in variants:
        rg = ranges(Xtr, v)
        est = acc.jaxtree_model(task).fit(clipped(Xtr, rg), yv[tr])
        res[v].append(acc.score(task, est, clipped(Xte, rg), yv[te]))
    print(name, f, {v: round(res[v][-1], 5) for v in variants}, flush=True)
print("MEAN", name, len(yv), {v: round(float(np.mean(res[v])), 5) for v in variants}, flush=True)
