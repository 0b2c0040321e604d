import sys, warnings, numpy as np, time
import pathlib; _root = pathlib.Path(__file__).resolve().parents[3]; sys.path.insert(0, str(_root / "benchmarks")); sys.path.insert(0, str(_root))
warnings.simplefilter("ignore")
import bench_accuracy as acc, jaxtree
from sklearn.model_selection import KFold
task, X, y, desc = acc.load_table("diamonds", None)
mode = sys.argv[1]
folds = [int(f) for f in sys.argv[2].split(",")]
if mode == "logcarat":
    X = X.assign(carat=np.log(X["carat"]))
elif mode == "logall":
    for c in ["carat", "x", "y", "z"]:
        X[c] = np.log(X[c].clip(lower=0.1))
yv = y.to_numpy()
out = []
for f, (tr, te) in enumerate(KFold(5, shuffle=True, random_state=0).split(X, yv)):
    if f not in folds: continue
    t = time.perf_counter()
    est = jaxtree.TreeRegressor().fit(X.iloc[tr].reset_index(drop=True), yv[tr])
    r = float(np.sqrt(np.mean((est.predict(X.iloc[te].reset_index(drop=True)) - yv[te]) ** 2)))
    out.append(r); print(mode, f, f"{r:.4f}", f"{time.perf_counter()-t:.1f}s", acc.n_terms(est), flush=True)
print(mode, "mean", f"{np.mean(out):.4f}")
