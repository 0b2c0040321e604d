"""Warm fit and test score of the default on bench_cost cases, in the checkout on sys.path[0]."""
import sys, time, statistics, warnings, os
root = sys.argv[1]
sys.path.insert(0, root + "/benchmarks"); sys.path.insert(0, root)
warnings.simplefilter("ignore")
import numpy as np, bench_cost, jaxtree
assert jaxtree.__file__.startswith(root), jaxtree.__file__
tag = os.environ.get("TAG", root)
if os.environ.get("SEARCH_ROWS"):
    import jaxtree.shapes as _sh
    _sh.SEARCH_ROWS = int(os.environ["SEARCH_ROWS"])
for case in sys.argv[2].split(","):
    task, Xtr, ytr, Xte, yte = bench_cost.split(case)
    Est0 = jaxtree.TreeRegressor if task == "regression" else jaxtree.TreeClassifier
    kw = {"refine_steps": int(os.environ["REFINE_STEPS"])} if os.environ.get("REFINE_STEPS") else {}
    Est = lambda: Est0(**kw)  # noqa: E731
    Est().fit(Xtr, ytr)
    ts = []
    for r in range(int(sys.argv[3]) if len(sys.argv) > 3 else 3):
        t = time.perf_counter(); e = Est().fit(Xtr, ytr); ts.append(time.perf_counter() - t)
    if task == "regression":
        sc = float(np.sqrt(np.mean((e.predict(Xte) - yte) ** 2)))
    else:
        from sklearn.metrics import roc_auc_score
        sc = float(roc_auc_score(yte, e.predict_proba(Xte)[:, 1]))
    print(f"{tag} {case}: warm {statistics.median(ts):.3f} s (min {min(ts):.3f}) score {sc:.6g} terms {len(e.terms_) if hasattr(e,'terms_') else ''}", flush=True)
