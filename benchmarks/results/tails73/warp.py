import sys, time, warnings; sys.path.insert(0, "/work/main/benchmarks"); sys.path.insert(0, "/work/main")
import numpy as np, pandas as pd, bench_accuracy as acc, jaxtree
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.preprocessing import QuantileTransformer
warnings.simplefilter("ignore")
name, nf = sys.argv[1], int(sys.argv[2]); mode = sys.argv[3] if len(sys.argv) > 3 else "both"
task, X, y, d = acc.load_table(name, None); yv = y.to_numpy()
cv = (KFold(5, shuffle=True, random_state=0) if task == "regression" else StratifiedKFold(5, shuffle=True, random_state=0))
num = [c for c in X.columns if not isinstance(X[c].dtype, pd.CategoricalDtype) and X[c].nunique() > 2]
from rule import heavy
res = {"raw": [], "warp": [], "log": [], "rule": [], "wins": [], "tail": []}
for f, (tr, te) in enumerate(cv.split(X, yv)):
    if f >= nf: break
    Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
    for kind in ("raw", "warp", "log", "rule", "wins", "tail"):
        if mode != "both" and kind not in mode.split("+"): continue
        A, B = Xtr.copy(), Xte.copy()
        if kind == "warp":
            for c in num:
                qt = QuantileTransformer(n_quantiles=min(1000, len(A)), subsample=10**9)
                A[c] = qt.fit_transform(A[[c]].to_numpy(float))[:, 0]; B[c] = qt.transform(B[[c]].to_numpy(float))[:, 0]
        if kind == "log":
            for c in num:
                v = A[c].to_numpy(float)
                if np.nanmin(v) >= 0 and pd.Series(v).skew() > 1:
                    A[c] = np.log1p(v); B[c] = np.log1p(B[c].to_numpy(float))
        if kind == "rule":
            for c in num:
                if heavy(A[c].to_numpy(float)):
                    A[c] = np.log1p(A[c].to_numpy(float)); B[c] = np.log1p(B[c].to_numpy(float))
        if kind == "wins":
            Q = float(__import__("os").environ.get("WQ", "0.005"))
            for c in num:
                v = A[c].to_numpy(float); lo, hi = np.nanquantile(v, [Q, 1 - Q])
                A[c] = np.clip(v, lo, hi); B[c] = np.clip(B[c].to_numpy(float), lo, hi)
        if kind == "tail":
            import os
            Q = float(os.environ.get("WQ", "0.005")); T = float(os.environ.get("WT", "2"))
            for c in num:
                v = A[c].to_numpy(float); mn, mx = np.nanmin(v), np.nanmax(v); lo, hi = np.nanquantile(v, [Q, 1 - Q])
                a = lo if (lo - mn) > T * (hi - lo) else mn
                b = hi if (mx - hi) > T * (hi - lo) else mx
                if (a, b) != (mn, mx):
                    print("   clip", c, (mn, mx), "->", (a, b))
                    A[c] = np.clip(v, a, b); B[c] = np.clip(B[c].to_numpy(float), a, b)
        est = acc.jaxtree_model(task); t = time.perf_counter(); est.fit(A, yv[tr]); dt = time.perf_counter() - t
        s = acc.score(task, est, B, yv[te]); res[kind].append(s)
        print(name, f, kind, round(s, 5), "terms", acc.n_terms(est), f"{dt:.1f}s", flush=True)
for k, v in res.items():
    if v: print(name, k, "mean", round(float(np.mean(v)), 5))
