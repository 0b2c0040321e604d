"""Emulates a held-out choice between the backfit search with and without pair lookahead:
each fold fits TreeRegressor() twice (the library as it is, and with pairs patched off,
clfpair42/_patch.py), reads each selection run's held-out MSE (min over path_'s val_mse)
and reports the test score of each and of the fit the rule keeps (no pairs where its
held-out MSE is below the pairs' by more than MARGIN, relative).

    python emulate.py CHECKOUT TABLE[,TABLE...]|paper"""
import os, sys, warnings
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import numpy as np
warnings.simplefilter("ignore")
import jaxtree
from jaxtree import search
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clfpair42"))
import _patch
orig = search.search_config
MARGINS = (0.0, 0.02, 0.05)


def fit(X, y, pairs):
    search.search_config = orig
    if not pairs:
        _patch.apply("nopair")
    est = jaxtree.TreeRegressor().fit(X, y)
    search.search_config = orig
    held = min(r["val_mse"] for r in est.path_) if est.path_ else float("nan")
    return est, held


def report(name, rows):
    a = np.array(rows)  # per fold: score_pairs, score_nopairs, held_pairs, held_nopairs
    out = [f"{name}: pairs {a[:, 0].mean():.4f}  no pairs {a[:, 1].mean():.4f}"]
    for m in MARGINS:
        keep = np.where(a[:, 3] < a[:, 2] * (1 - m), a[:, 1], a[:, 0])
        out.append(f"rule({m:.2f}) {keep.mean():.4f} [{int((a[:, 3] < a[:, 2] * (1 - m)).sum())} folds no pairs]")
    print("  ".join(out), flush=True)
    print("   per fold", [tuple(round(float(v), 4) for v in r) for r in rows], flush=True)


if sys.argv[2] == "paper":
    for n in (100, 150, 250):
        rows = []
        for seed in range(5):
            X, y = jaxtree.datasets.paper_synthetic(n=n, seed=seed)
            Xt, _ = jaxtree.datasets.paper_synthetic(n=2000, seed=100 + seed)
            yt = jaxtree.datasets.paper_function(Xt)
            r = []
            for pairs in (True, False):
                est, held = fit(X, y, pairs)
                r.append((float(np.sqrt(np.mean((np.asarray(est.predict(Xt)) - yt) ** 2))), held))
            rows.append((r[0][0], r[1][0], r[0][1], r[1][1]))
        report(f"paper n={n}", rows)
else:
    import bench_accuracy as B
    from sklearn.model_selection import KFold
    for name in sys.argv[2].split(","):
        task, X, y, _ = B.load_table(name, None)
        rows = []
        for tr, te in KFold(5, shuffle=True, random_state=B.SEED).split(X):
            r = []
            for pairs in (True, False):
                est, held = fit(X.iloc[tr], y.iloc[tr], pairs)
                r.append((B.score(task, est, X.iloc[te], y.iloc[te].to_numpy()), held))
            rows.append((r[0][0], r[1][0], r[0][1], r[1][1]))
        report(name, rows)
