"""Warm fits of a bench_cost case with cache_basis auto / True / False (T, F; sixty-fifth
session). From the repository root: python benchmarks/results/cost65/cache_basis.py CASE auto,T ROUNDS"""
import sys, time, statistics, warnings
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
warnings.simplefilter("ignore")
import numpy as np, bench_cost, jaxtree
case = sys.argv[1]; sizes = [{"auto": "auto", "T": True, "F": False}[s] for s in sys.argv[2].split(",")]
task, Xtr, ytr, Xte, yte = bench_cost.split(case)
Est = jaxtree.TreeRegressor if task == "regression" else jaxtree.TreeClassifier
for s in sizes:
    Est(cache_basis=s).fit(Xtr, ytr)
ts = {s: [] for s in sizes}
for r in range(int(sys.argv[3]) if len(sys.argv) > 3 else 3):
    for s in sizes:
        t = time.perf_counter(); e = Est(cache_basis=s).fit(Xtr, ytr); ts[s].append(time.perf_counter() - t)
for s in sizes:
    e = Est(cache_basis=s).fit(Xtr, ytr)
    if task == "regression":
        sc = float(np.sqrt(np.mean((e.predict(Xte) - yte) ** 2)))
    else:
        from sklearn.metrics import roc_auc_score; sc = roc_auc_score(yte, e.predict_proba(Xte)[:, 1])
    print(case, s, f"median {statistics.median(ts[s]):.3f} s", [f"{t:.3f}" for t in ts[s]], f"score {sc:.5f}", flush=True)
