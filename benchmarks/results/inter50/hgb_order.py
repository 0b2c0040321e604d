"""How much of HistGradientBoosting's accuracy needs interactions of more than two covariates?

Issue 29 lists "interactions beyond pairs" as a lever. jaxtree's shape terms are mains and
pairs; its tree can multiply more covariates. Before building anything, this asks the
boosting baseline the same question on bench_accuracy.py's 16 tables and its five folds
(the same splits): HistGradientBoosting(100) unrestricted, restricted to pairs
(``interaction_cst`` = every pair of covariates) and additive (``"no_interactions"``).
If the pairs-only model is as good as the unrestricted one on a table, that table's gap to
boosting is not about three-way structure.

    python benchmarks/results/inter50/hgb_order.py [TABLE ...]   # writes hgb_order.json here
"""
import itertools
import json
import pathlib
import sys
import warnings

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
import bench_accuracy as acc  # noqa: E402


def model(task, cst, max_iter=100):
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    cls = HistGradientBoostingRegressor if task == "regression" else HistGradientBoostingClassifier
    return cls(max_iter=max_iter, categorical_features="from_dtype", random_state=acc.SEED,
               interaction_cst=cst)


def main(names):
    from sklearn.model_selection import KFold, StratifiedKFold
    out = {}
    for name in names:
        task, X, y, _ = acc.load_table(name, None)
        p = X.shape[1]
        pairs = [list(c) for c in itertools.combinations(range(p), 2)] if p > 1 else None
        variants = {"HGB(100)": None, "HGB(100) pairs": pairs,
                    "HGB(100) additive": "no_interactions",
                    "HGB(1000) pairs": pairs}
        yv = y.to_numpy()
        cv = (KFold(5, shuffle=True, random_state=acc.SEED) if task == "regression"
              else StratifiedKFold(5, shuffle=True, random_state=acc.SEED))
        scores = {v: [] for v in variants}
        for tr, te in cv.split(X, yv):
            Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
            for v, cst in variants.items():
                est = model(task, cst, 1000 if "1000" in v else 100)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(Xtr, yv[tr])
                    scores[v].append(acc.score(task, est, Xte, yv[te]))
        out[name] = {"task": task, "rows": int(len(y)), "p": int(p),
                     "scores": {v: float(np.mean(s)) for v, s in scores.items()}}
        print(name, task, len(y), p, {v: round(float(np.mean(s)), 4) for v, s in scores.items()},
              flush=True)
    (HERE / "hgb_order.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:] or list(acc.TABLES))
