import sys, time, warnings, json; sys.path.insert(0, "/work/main/benchmarks"); sys.path.insert(0, "/work/main")
import numpy as np, pandas as pd, bench_accuracy as acc, jaxtree
from sklearn.model_selection import KFold, StratifiedKFold
warnings.simplefilter("ignore")
name, nf = sys.argv[1], int(sys.argv[2]); params = [json.loads(a) for a in sys.argv[3:]]
task, X, y, d = acc.load_table(name, None); yv = y.to_numpy()
cv = (KFold(5, shuffle=True, random_state=0) if task == "regression" else StratifiedKFold(5, shuffle=True, random_state=0))
res = {i: [] for i in range(len(params))}
for f, (tr, te) in enumerate(cv.split(X, yv)):
    if f >= nf: break
    A, B = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
    for i, kw in enumerate(params):
        Est = jaxtree.TreeRegressor if task == "regression" else jaxtree.TreeClassifier
        est = Est(**kw); t = time.perf_counter(); est.fit(A, yv[tr]); dt = time.perf_counter() - t
        s = acc.score(task, est, B, yv[te]); res[i].append(s)
        print(name, f, kw, round(s, 5), "terms", acc.n_terms(est), f"{dt:.1f}s", flush=True)
for i, v in res.items(): print(name, params[i], "mean", round(float(np.mean(v)), 5))
