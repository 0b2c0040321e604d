"""Small public tables (issue 29): the default against the rule before it, and what else
would close the gap to a linear model, measured.

On tables under 2,000 rows the default ``TreeRegressor()`` / ``TreeClassifier()`` trailed a
ridge / logistic regression on most of ``bench_accuracy.py``'s tables (its quick run,
BENCHMARKS.md "Accuracy on public tables"). This script races variants on the same
repeated splits (5 folds x 3 repeats, ``random_state=0``; mean over the 15 test folds), each
applied from outside the library so that nothing is changed by running it:

* ``default``: the estimator as it is (since the eighteenth session: ``shapes="auto"``
  from 20 rows, at knots ``(3, 2)`` below 2,000 rows);
* ``no_small_shapes``: the rule before it, shape terms only from 2,000 rows
  (``AUTO_SHAPES_MIN_ROWS`` patched to 2,000; the tree alone on these tables);
* ``few_frequencies``: the default basis with sines and cosines up to 3 instead of 9
  (``make_basis(sines=3, cosines=3)``, q = 28);
* ``ridge_then_tree`` (regression only): the linear pipeline below, then ``TreeRegressor()``
  on its residual; the prediction is their sum;
* ``hgb``: ``HistGradientBoosting*`` with 100 iterations (``bench_accuracy.hgb``);
* ``linear``: ``bench_accuracy.linear`` (imputation, standardisation, one-hot, then RidgeCV
  or LogisticRegression).

It also times the demo's first fit (n = 1,000, p = 10) in a fresh process with the
compilation cache off, ``default`` against ``no_small_shapes`` (the shape stage compiles
although held-out rows accept no shape term on the paper's data).

Run from the repository root::

    python benchmarks/bench_small_tables.py                 # default, no_small_shapes, hgb, linear
    python benchmarks/bench_small_tables.py --variants all  # and the two other candidates
    python benchmarks/bench_small_tables.py --tables mtcars,pima --repeats 1

Writes ``small_tables.json`` in ``--out`` (default ``benchmarks/results``).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import bench_accuracy as B  # noqa: E402
import jaxtree  # noqa: E402
from jaxtree._fit import spec as spec_  # noqa: E402
from _common import environment  # noqa: E402

TABLES = ["mtcars", "airquality", "mpg", "diabetes", "boston", "pima", "breast_cancer",
          "titanic"]
VARIANTS = ["default", "tree_first", "no_small_shapes", "few_frequencies", "ridge_then_tree",
            "hgb", "linear"]
DEFAULT_VARIANTS = ["default", "tree_first", "hgb", "linear"]
_MIN_ROWS = spec_.AUTO_SHAPES_MIN_ROWS


_FIRST_MAX_ROWS = spec_.SHAPES_FIRST_MAX_ROWS


def _patched(variant: str) -> None:
    """``no_small_shapes``: shape terms only from 2,000 rows and the tree always first (the
    rule before the eighteenth session); ``tree_first``: the tree always first (the rule
    before the nineteenth); else the library as is."""
    before = variant == "no_small_shapes"
    spec_.AUTO_SHAPES_MIN_ROWS = spec_.FINE_KNOTS_MIN_ROWS if before else _MIN_ROWS
    spec_.SHAPES_FIRST_MAX_ROWS = 0 if variant in ("no_small_shapes", "tree_first") \
        else _FIRST_MAX_ROWS


def _estimator(task: str, variant: str):
    cls = jaxtree.TreeRegressor if task == "regression" else jaxtree.TreeClassifier
    _patched(variant)
    if variant == "few_frequencies":
        return cls(basis=jaxtree.make_basis(sines=3, cosines=3))
    return cls()


def run_table(name: str, repeats: int, variants=DEFAULT_VARIANTS) -> dict:
    from sklearn.model_selection import RepeatedKFold, RepeatedStratifiedKFold

    task, X, y, desc = B.load_table(name, None)
    y = np.asarray(y)
    cv = (RepeatedKFold if task == "regression" else RepeatedStratifiedKFold)(
        n_splits=5, n_repeats=repeats, random_state=0)
    splits = list(cv.split(X, y))
    rec = {"task": task, "rows": len(y), "description": desc, "scores": {}, "terms": {},
           "seconds": {}}
    for v in variants:
        if v == "ridge_then_tree" and task != "regression":
            continue
        t0, scores, terms = time.perf_counter(), [], []
        for tr, te in splits:
            Xtr, Xte, ytr = X.iloc[tr], X.iloc[te], y[tr]
            if v in ("linear", "hgb"):
                est = (B.linear(task, Xtr) if v == "linear" else B.hgb(task, 100)).fit(Xtr, ytr)
                scores.append(B.score(task, est, Xte, y[te]))
            elif v == "ridge_then_tree":
                lin = B.linear(task, Xtr).fit(Xtr, ytr)
                _patched("default")
                tree = jaxtree.TreeRegressor().fit(Xtr, ytr - lin.predict(Xtr))
                pred = lin.predict(Xte) + np.asarray(tree.predict(Xte), np.float64)
                scores.append(float(np.sqrt(np.mean((pred - y[te]) ** 2))))
                terms.append(B.n_terms(tree))
            else:
                est = _estimator(task, v).fit(Xtr, ytr)
                scores.append(B.score(task, est, Xte, y[te]))
                terms.append(B.n_terms(est))
        _patched("default")
        rec["scores"][v] = scores
        rec["terms"][v] = terms
        rec["seconds"][v] = time.perf_counter() - t0
        metric = "RMSE" if task == "regression" else "AUC"
        print(f"{name:14s} {v:16s} {metric} {np.mean(scores):.4f} "
              f"(se {np.std(scores, ddof=1) / np.sqrt(len(scores)):.4f})  terms "
              f"{np.mean(terms) if terms else float('nan'):.1f}", flush=True)
    return rec


_COLD = """
import sys, time, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, {root!r}); sys.path.insert(0, {bench!r})
import bench_small_tables as T, jaxtree
from jaxtree.datasets import paper_synthetic
T._patched({variant!r})
X, y = paper_synthetic(1333, p=10, seed=0)
t = time.perf_counter()
est = jaxtree.TreeRegressor().fit(X[:1000], y[:1000])
print(time.perf_counter() - t, est.model_.shapes is not None)
"""


def cold_fits(rounds: int) -> dict:
    """The demo's first fit in a fresh process, cache off: default / tree_first
    (alternating)."""
    out = {"default": [], "tree_first": [], "shapes_accepted": []}
    env = dict(os.environ, JAXTREE_COMPILATION_CACHE="0")
    for _ in range(rounds):
        for v in ("default", "tree_first"):
            code = _COLD.format(root=str(ROOT), bench=str(ROOT / "benchmarks"), variant=v)
            res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                 text=True, check=True)
            secs, accepted = res.stdout.split()[-2:]
            out[v].append(float(secs))
            if v == "default":
                out["shapes_accepted"].append(accepted == "True")
    print(f"demo first fit, fresh process, cache off: default {min(out['default']):.2f} s, "
          f"tree_first {min(out['tree_first']):.2f} s (min of {rounds})", flush=True)
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", default=",".join(TABLES))
    parser.add_argument("--variants", default=",".join(DEFAULT_VARIANTS),
                        help=f"comma-separated, or 'all' ({', '.join(VARIANTS)})")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cold-rounds", type=int, default=2)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    variants = VARIANTS if args.variants == "all" else args.variants.split(",")
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        parser.error(f"unknown variant(s) {unknown}; choose from {VARIANTS}")
    res = {"environment": environment(), "repeats": args.repeats, "variants": variants,
           "tables": {}}
    for name in args.tables.split(","):
        res["tables"][name] = run_table(name, args.repeats, variants)
        (out / "small_tables.json").write_text(json.dumps(res, indent=1))
    if args.cold_rounds:
        res["demo_first_fit"] = cold_fits(args.cold_rounds)
    (out / "small_tables.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
