"""The default estimator on bench_accuracy's tables, K folds (seeded as the benchmark's),
with whichever jaxtree is first on the path; ``--knots N1,N2`` patches the knots that
``shape_knots="auto"`` gives (``jaxtree._fit.spec.knots_for``) for both estimators;
``--search-rows N`` patches ``jaxtree.shapes.SEARCH_ROWS`` (the shape stage's most training
rows; sixty-sixth session, ``results/levers66``).

    python benchmarks/results/round55/tables.py --tables default --knots 3,2 --out OUT.json
"""
import argparse
import json
import pathlib
import sys
import time
import warnings

import jaxtree  # first: the checkout on PYTHONPATH (bench_accuracy puts its own repo first)

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # benchmarks/, for bench_accuracy
import numpy as np  # noqa: E402
from sklearn.model_selection import KFold, StratifiedKFold  # noqa: E402

import bench_accuracy as ba  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--tables", required=True)
ap.add_argument("--folds", type=int, default=5)
ap.add_argument("--cv-seeds", default="0")
ap.add_argument("--out", required=True)
ap.add_argument("--knots", default="")
ap.add_argument("--search-rows", type=int, default=None, help="patches jaxtree.shapes.SEARCH_ROWS")
ap.add_argument("--params", default="{}", help="JSON keywords for the estimator")
ap.add_argument("--max-rows", type=int, default=None, help="bench_accuracy's row cap")
ap.add_argument("--dev-stop", type=float, default=None,
                help="C: the search stops once an operation lowers the training loss by less "
                     "than C*log(n)/(2n) (absolute; patched into search.Stop.judge)")
a = ap.parse_args()
if a.search_rows:
    import jaxtree.shapes as _shapes
    _shapes.SEARCH_ROWS = a.search_rows
    print("SEARCH_ROWS patched to", a.search_rows, flush=True)
if a.dev_stop is not None:
    from jaxtree import search as _search

    def _judge(self, raw, judged, last, it, n_iter):
        raw = np.asarray(raw, np.float64)
        judged = np.asarray(judged, bool)
        undo = judged & np.isfinite(last) & ~(raw < last - self.rtol)  # absolute decrease
        kept = judged & ~undo
        floor = kept & (raw <= self.atol) & (it + 1 < n_iter)
        return undo, floor, np.where(kept, raw, np.nan)
    _search.Stop.judge = _judge
    print("stop patched: an absolute decrease of", a.dev_stop, "* log(n) / (2n)", flush=True)
if a.knots:
    from jaxtree._fit import spec as spec_
    _kn = tuple(int(v) for v in a.knots.split(","))
    _orig = spec_.knots_for
    spec_.knots_for = lambda value, shapes, n: (_kn if isinstance(value, str) and value == "auto"
                                                 and shapes == "auto" else _orig(value, shapes, n))
    print("knots patched to", _kn, flush=True)
out = {"jaxtree": jaxtree.__file__, "tables": {}}
print(f"jaxtree from {jaxtree.__file__}", flush=True)
for name in a.tables.split(","):
    task, X, y, _ = ba.load_table(name, a.max_rows)
    yv = y.to_numpy()
    scores, fit_s, formulas = [], [], []
    for cs in [int(v) for v in a.cv_seeds.split(",")]:
        cv = (KFold(a.folds, shuffle=True, random_state=cs) if task == "regression"
              else StratifiedKFold(a.folds, shuffle=True, random_state=cs))
        for tr, te in cv.split(X, yv):
            Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
            est = ba.jaxtree_model(task).set_params(**json.loads(a.params))
            if a.dev_stop is not None:
                n_tr = len(tr)
                est.set_params(tol=a.dev_stop * np.log(n_tr) / (2 * n_tr))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                est.fit(Xtr, yv[tr])
                fit_s.append(time.perf_counter() - t0)
                scores.append(float(ba.score(task, est, Xte, yv[te])))
            if len(formulas) < 1:
                formulas.append(est.formula())
    out["tables"][name] = {"task": task, "scores": scores, "mean": float(np.mean(scores)),
                           "fit_s": fit_s, "formula_fold0": formulas[0]}
    print(f"{name:12s} {task:14s} mean {np.mean(scores):.4f}  ({len(scores)} folds)", flush=True)
pathlib.Path(a.out).write_text(json.dumps(out, indent=1))
