"""The held-out size rule (issue 29): test RMSE and formula terms of the default
``TreeRegressor()`` under several rules for choosing the tree's size on held-out rows, on the
regression tables and folds of ``bench_accuracy.py`` (same loaders, same seeded ``KFold``).

Every rule sees the same per-row held-out losses ``L (S, m)`` of the same selection run
(:func:`jaxtree._fit.select.choose_size_rows` is swapped for the rule for one fit, then put
back); only the chosen size, and so the refit, differ:

* ``old``: the rule before issue 29's change: the smallest size whose held-out MSE is within
  ``MSE_best * sqrt(2 / m)`` of the best (the standard error of one Gaussian MSE over ``m``
  rows), floor :data:`jaxtree._fit.select.MSE_FLOOR`;
* ``paired_1se``: the paired one-standard-error rule: ``mean(L_s - L_b) <= SE(L_s - L_b)``
  on the same rows (``b`` the best size);
* ``paired_0.5se``: the same with half a standard error (the default since issue 29,
  :data:`jaxtree._fit.select.SE_FACTOR`);
* ``argmin``: the size of the lowest held-out MSE.

For the classification tables (``--tables titanic,pima,...``) the classifier's rule is swapped
instead (:func:`jaxtree._fit.classify.choose_size`, per one-versus-rest tree), on its
per-row held-out log-losses, and the score is the test ROC AUC of ``TreeClassifier()`` (higher
is better; logistic regression beside):

* ``one_se``: the classifier's rule before this comparison (to commit 83c1232): the smallest
  size within one *unpaired* standard error of the best size's mean log-loss (the best
  size's own weighted standard deviation over the root of Kish's effective count);
* ``paired_1se``, ``paired_0.5se``, ``argmin``: the regressor's paired rule
  (:func:`jaxtree._fit.select.choose_size_rows`) at 1, 1/2 and 0 standard errors.

The ``old`` column reproduces the default's numbers before the change (``bench_accuracy.py
--quick`` at commit 69ad1d6: the same RMSE on all nine tables).

Run from the repository root::

    python benchmarks/bench_size_rule.py                        # the 9 regression tables
    python benchmarks/bench_size_rule.py --tables mtcars,airquality
    python benchmarks/bench_size_rule.py --tables mtcars,airquality,mpg,diabetes,boston \
        --folds 5 --seeds 1,2 --out /tmp/seeds    # other shuffles of the same tables

    python benchmarks/bench_size_rule.py --summarize benchmarks/results/quick/size_rule*.json

Writes ``size_rule.json`` / ``size_rule.md`` in ``--out`` (default
``benchmarks/results/quick``): per table and rule the mean RMSE over folds, the mean number of
terms (:func:`bench_accuracy.n_terms`) and the chosen ``k_`` per fold; ridge's RMSE beside.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import bench_accuracy as ba  # noqa: E402
import jaxtree  # noqa: E402
from _common import environment  # noqa: E402
from jaxtree._fit import classify, select  # noqa: E402

REGRESSION = [n for n, t in ba.TABLES.items() if t[0] == "regression"]


def _old(L, w=None, floor=select.MSE_FLOOR, n_se=None):
    L = np.asarray(L, np.float64)
    w = np.ones(L.shape[1]) if w is None else np.asarray(w, np.float64)
    val = L @ w / w.sum()
    best = np.min(val)
    tol = max(np.sqrt(2.0 / max(int(np.sum(w > 0)), 1)) * abs(best), floor)
    return int(np.flatnonzero(val <= best + tol)[0]), val, np.full_like(val, tol)


def _paired(c: float):
    def rule(L, w=None, floor=select.MSE_FLOOR, n_se=None, _base=select.choose_size_rows):
        return _base(L, w, floor, c)
    return rule


RULES = {"old": _old, "paired_1se": _paired(1.0), "paired_0.5se": _paired(0.5),
         "argmin": _paired(0.0)}


def _one_se_unpaired(L, w):
    L, w = np.asarray(L, np.float64), np.asarray(w, np.float64)
    val = L @ w / w.sum()
    best = int(np.argmin(val))
    var = np.sum(w * (L[best] - val[best]) ** 2) / w.sum()
    se = float(np.sqrt(var * np.sum(w ** 2)) / w.sum())
    return int(np.flatnonzero(val <= val[best] + se)[0]), val, se


def _classifier_paired(c: float):
    def rule(L, w):
        return select.choose_size_rows(L, w, select.MSE_FLOOR, c)
    return rule


CLASS_RULES = {"one_se": _one_se_unpaired, "paired_1se": _classifier_paired(1.0),
               "paired_0.5se": _classifier_paired(0.5), "argmin": _classifier_paired(0.0)}
"""The classifier's rules (functions of ``(row_losses, w)``), swapped for
:func:`jaxtree._fit.classify.choose_size`."""


def markdown_classification(res: dict) -> str:
    rules = list(CLASS_RULES)
    lines = ["Test ROC AUC, mean over folds (terms: mean formula terms; k: chosen k_ per fold).",
             "", "| table | rows | " + " | ".join(rules) + " | logistic |",
             "|---|---:|" + "---:|" * (len(rules) + 1)]
    for name, rec in res.items():
        cells = [f"{rec['mean_auc'][r]:.4f} ({rec['mean_terms'][r]:.1f} t)" for r in rules]
        lines.append(f"| {name} | {rec['rows']} | " + " | ".join(cells)
                     + f" | {rec['mean_auc']['logistic']:.4f} |")
    lines += ["", "Against `one_se`, over all fold fits: mean AUC change (its standard error), "
              "fold fits better / worse, mean change of terms.", ""]
    for r in rules[1:]:
        d = np.concatenate([np.subtract(rec["per_rule"][r]["auc"], rec["per_rule"]["one_se"]["auc"])
                            for rec in res.values()])
        t = np.concatenate([np.subtract(rec["per_rule"][r]["terms"],
                                        rec["per_rule"]["one_se"]["terms"]) for rec in res.values()])
        se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
        lines.append(f"* `{r}`: {d.mean():+.4f} ({se:.4f}), {(d > 1e-12).sum()} / "
                     f"{(d < -1e-12).sum()}, terms {t.mean():+.2f}")
    return "\n".join(lines) + "\n"


TASKS = {
    # task: (the swapped rule's module and name, the rules, the estimator, the score's key
    # and format, the linear model's name, the folds)
    "regression": (select, "choose_size_rows", RULES, jaxtree.TreeRegressor, "rmse", ".4g",
                   "ridge", "KFold"),
    "classification": (classify, "choose_size", CLASS_RULES, jaxtree.TreeClassifier, "auc",
                       ".4f", "logistic", "StratifiedKFold"),
}
"""Per task what :func:`run_table` swaps, fits and scores."""


def run_table(name: str, folds: int, max_rows, seed: int = ba.SEED) -> dict:
    """Every rule of the table's task (:data:`TASKS`) on the same folds (bench_accuracy's at
    its SEED): the default estimator fitted with the rule swapped in, then put back; the test
    score, formula terms, chosen ``k_`` and fit time per fold, the linear model beside."""
    from sklearn import model_selection

    task, X, y, desc = ba.load_table(name, max_rows)
    module, attr, rules, estimator, key, fmt, linear, splitter = TASKS[task]
    yv = y.to_numpy()
    print(f"\n== {name}: {desc}; {len(y)} rows, p = {X.shape[1]}", flush=True)
    cv = getattr(model_selection, splitter)(folds, shuffle=True, random_state=seed)
    out = {r: {key: [], "terms": [], "k": [], "fit_s": []} for r in rules}
    out[linear] = {key: []}
    base = getattr(module, attr)
    for f, (tr, te) in enumerate(cv.split(X, yv)):
        Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
        ytr, yte = yv[tr], yv[te]
        for rule, fn in rules.items():
            setattr(module, attr, fn)
            try:
                est = estimator()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t0 = time.perf_counter()
                    est.fit(Xtr, ytr)
                    s = time.perf_counter() - t0
            finally:
                setattr(module, attr, base)
            rec = out[rule]
            rec[key].append(ba.score(task, est, Xte, yte))
            rec["terms"].append(ba.n_terms(est))
            rec["k"].append(np.asarray(est.k_).tolist())  # an int, a list per class
            rec["fit_s"].append(s)
        lin = ba.linear(task, X).fit(Xtr, ytr)
        out[linear][key].append(ba.score(task, lin, Xte, yte))
        print(f"  fold {f}: " + ", ".join(
            f"{r} {out[r][key][-1]:{fmt}} (k {out[r]['k'][-1]}, {out[r]['terms'][-1]} terms)"
            for r in rules) + f"; {linear} {out[linear][key][-1]:{fmt}}", flush=True)
    return {"task": task, "rows": int(len(y)), "p": int(X.shape[1]), "folds": folds,
            "per_rule": out, "mean_" + key: {r: float(np.mean(v[key])) for r, v in out.items()},
            "mean_terms": {r: float(np.mean(v["terms"])) for r, v in out.items() if r != linear}}


def markdown(res: dict, env: dict, command: str) -> str:
    rules = list(RULES)
    cls = {k: v for k, v in res.items() if v.get("task") == "classification"}
    res = {k: v for k, v in res.items() if k not in cls}
    lines = [f"# Held-out size rule (issue 29) -- {env.get('date', '')}", "",
             f"commit `{env.get('commit', '?')}`, jax {env.get('jax', '?')}, "
             f"{env.get('cpu_count', '?')} CPUs (load average at start/end "
             f"{env.get('load_average_start', ['?'])[0]:.2f}/"
             f"{env.get('load_average_end', ['?'])[0]:.2f}, shared); command `{command}`", "",
             "Test RMSE, mean over folds (terms: mean formula terms; k: chosen k_ per fold).", "",
             "| table | rows | " + " | ".join(rules) + " | ridge |",
             "|---|---:|" + "---:|" * (len(rules) + 1)]
    for name, rec in res.items():
        cells = [f"{rec['mean_rmse'][r]:.4g} ({rec['mean_terms'][r]:.1f} t; k "
                 f"{','.join(str(k) for k in rec['per_rule'][r]['k'])})" for r in rules]
        lines.append(f"| {name} | {rec['rows']} | " + " | ".join(cells)
                     + f" | {rec['mean_rmse']['ridge']:.4g} |")
    if cls:
        lines += ["", markdown_classification(cls)]
    return "\n".join(lines) + "\n"


def summarize(paths) -> str:
    """Every rule against ``old`` and against each other over all fold fits of the given
    result files: the mean log ratio of test RMSE (with its standard error over fold fits),
    the counts of fold fits better and worse, the worst ratio and the mean change of terms;
    separately for the tables under 1,000 rows and the larger ones."""
    tables = {}
    for path in paths:
        tables.update({k: v for k, v in json.loads(pathlib.Path(path).read_text())["tables"].items()
                       if v.get("task") != "classification"})  # regression tables only
    small = [k for k in tables if tables[k]["rows"] < 1000]
    groups = (("under 1,000 rows", small), ("1,000 rows and more",
                                            [k for k in tables if k not in small]),
              ("all", list(tables)))
    pairs = [(r, "old") for r in RULES if r != "old"] + [("paired_0.5se", "paired_1se"),
                                                         ("argmin", "paired_0.5se")]
    lines = ["| tables | rule | against | fold fits | mean log RMSE ratio | better / worse "
             "| worst | terms |", "|---|---|---|---:|---:|---:|---:|---:|"]
    for label, keys in groups:
        for a, b in pairs:
            ratio = np.concatenate([np.log(np.asarray(tables[k]["per_rule"][a]["rmse"])
                                           / np.asarray(tables[k]["per_rule"][b]["rmse"]))
                                    for k in keys])
            terms = np.concatenate([np.asarray(tables[k]["per_rule"][a]["terms"])
                                    - np.asarray(tables[k]["per_rule"][b]["terms"])
                                    for k in keys])
            se = ratio.std(ddof=1) / np.sqrt(len(ratio))
            lines.append(f"| {label} | {a} | {b} | {len(ratio)} | {100 * ratio.mean():+.2f}% "
                         f"± {100 * se:.2f}% | {(ratio < -1e-9).sum()} / {(ratio > 1e-9).sum()} "
                         f"| {100 * ratio.max():+.1f}% | {terms.mean():+.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default=",".join(REGRESSION))
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--max-rows", type=int, default=5000)
    parser.add_argument("--seeds", default=str(ba.SEED),
                        help="comma-separated KFold shuffles (default 0: bench_accuracy's folds); "
                             "several: every table once per seed, reported as name@seed")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "quick"))
    parser.add_argument("--summarize", nargs="+", metavar="JSON",
                        help="print the rules' comparison over these result files, run nothing")
    args = parser.parse_args(argv)
    if args.summarize:
        print(summarize(args.summarize))
        return
    command = "python benchmarks/bench_size_rule.py " + " ".join(argv or sys.argv[1:])
    env = environment()
    env["load_average_start"] = list(__import__("os").getloadavg())
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    res = {}
    seeds = [int(s) for s in args.seeds.split(",")]
    for name in args.tables.split(","):
        for seed in seeds:
            key = name if seeds == [ba.SEED] else f"{name}@{seed}"
            res[key] = run_table(name, args.folds, args.max_rows, seed)
        (out / "size_rule.json").write_text(json.dumps({"environment": env, "command": command,
                                                        "tables": res}, indent=1))
    env["load_average_end"] = list(__import__("os").getloadavg())
    (out / "size_rule.json").write_text(json.dumps({"environment": env, "command": command,
                                                    "tables": res}, indent=1))
    (out / "size_rule.md").write_text(markdown(res, env, command))
    print(markdown(res, env, command))


if __name__ == "__main__":
    main()
