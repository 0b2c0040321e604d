"""For each outer fold of bench_accuracy's small tables (and synthetic ones): the gate's
ratio (shape terms alone / tree first held-out MSE), the cross-validated MSE of each setting,
the kept setting and test RMSE of the kept fit and of the default. PYTHONPATH=CHECKOUT."""
import os, sys, json, time, warnings
warnings.simplefilter("ignore")
import jaxtree
sys.path.insert(0, "benchmarks")
import numpy as np, pandas as pd, bench_accuracy as ba
from sklearn.model_selection import KFold
from jaxtree._fit import spec as spec_
SEED = int(os.environ.get("SPLIT_SEED", ba.SEED))
def load(name):
    if name.startswith("syn"):
        n = int(name[3:]); rng = np.random.default_rng(SEED)
        X = rng.uniform(size=(n, 10))
        y = np.sin(2*np.pi*X[:,0]) + 2*X[:,1]**2 + np.exp(X[:,2]) + 0.5*X[:,3]*X[:,4] + 0.5*rng.normal(size=n)
        return pd.DataFrame(X, columns=[f"x{i}" for i in range(10)]), y
    if name.startswith("add"):
        n = int(name[3:]); rng = np.random.default_rng(SEED)
        X = rng.uniform(size=(n, 10))
        y = np.sin(2*np.pi*X[:,0]) + 2*X[:,1]**2 + np.exp(X[:,2]) + 0.5*rng.normal(size=n)
        return pd.DataFrame(X, columns=[f"x{i}" for i in range(10)]), y
    if "@" in name:  # a real table subsampled (bench_accuracy's seed) to this many rows
        base, m = name.split("@"); _, X, y, _ = ba.load_table(base, int(m)); return X, y.to_numpy()
    _, X, y, _ = ba.load_table(name, ba.TABLES[name][2]); return X, y.to_numpy()
for name in sys.argv[1:]:
    X, y = load(name)
    for f, (tr, te) in enumerate(KFold(5, shuffle=True, random_state=SEED).split(X, y)):
        Xtr, Xte, ytr, yte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True), y[tr], y[te]
        spec_.ADDITIVE_CV_FOLDS = 5
        t = time.perf_counter(); e = jaxtree.TreeRegressor().fit(Xtr, ytr); dt = time.perf_counter() - t
        s = dict(e.shape_order_scores_ or {})
        kept = float(np.sqrt(np.mean((e.predict(Xte) - yte) ** 2)))
        spec_.ADDITIVE_CV_FOLDS = 0
        t = time.perf_counter(); d = jaxtree.TreeRegressor().fit(Xtr, ytr); dd = time.perf_counter() - t
        dflt = float(np.sqrt(np.mean((d.predict(Xte) - yte) ** 2)))
        ratio = s.get("shape terms alone", np.nan) / s.get("tree first", np.nan) if "tree first" in s else np.nan
        print(json.dumps(dict(table=name, fold=f, n=len(ytr), ratio=round(ratio, 3), order=e.shape_order_,
                              cv={k: round(v / s.get("cv default", 1), 4) for k, v in s.items() if k.startswith("cv")},
                              kept=round(kept, 5), default=round(dflt, 5), t=round(dt, 2), t0=round(dd, 2))), flush=True)
