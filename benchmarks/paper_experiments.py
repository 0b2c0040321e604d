"""The paper's four synthetic experiments (Xu, Honorio and Wang, Section 6; DESIGN.md section 7).

Truth ``g(x) = 0.3 sin(3 pi x1) cos(2 pi x2) + 0.4 x3^2 - 0.3 x4``, ``x ~ U[0,1]^p``,
noise sd 0.05, a test set of ``n // 3`` points from the same distribution, 20 seeded trials
per setting:

====  =========================================  =====================  ==============
exp   fixed                                      varied                 theory's shape
====  =========================================  =====================  ==============
exp1  p=100, q=40, k=10                          n in 50..250           1/sqrt(n)
exp2  n=250, q=40, k=10                          p in 10..200           sqrt(log p)
exp3  p=100, q=40, n=250                         k in 1, 5, 10, 20      sqrt(k)
exp4  p=20, n=250, k=10                          q in 10, 20, 50, 100   sqrt(log q)
====  =========================================  =====================  ==============

For every setting we report the mean and a 95% t-interval over trials of

* the test risk: MSE of the predictions against the *noisy* test ``y``;
* the RMSE against the noiseless truth ``g`` on the test points;
* the generalization gap: test risk minus training risk (training MSE against noisy ``y``).

Each curve (of means) is fitted by least squares to the theory's shape
``risk ~ a + b f(x)``, ``f`` as in the table; we report ``a``, ``b`` (with its standard
error) and ``R^2``, for the test risk and for the gap.

Trials use common random numbers: trial ``t`` of experiment ``e`` draws its data with
seed ``1000 e + t`` in every setting of that experiment, so settings are compared on
paired data. Experiment 4's bases (q is set by the family sizes of
:func:`jaxtree.basis.make_basis`; every basis holds ``sin(3 pi x)``, ``cos(2 pi x)``,
``x`` and ``x^2``, so the truth is representable for every q) are listed in
``BASES_BY_Q``.

Run from the repository root::

    python benchmarks/paper_experiments.py all          # ~31 min wall, loaded 2-core CPU
    python benchmarks/paper_experiments.py exp1 exp3 --trials 10
    python benchmarks/paper_experiments.py all --quick --out /tmp/q   # < 60 s

Outputs in ``--out`` (default ``benchmarks/results``; ``benchmarks/results/quick`` with
``--quick``): ``paper_exp{1..4}.csv`` (one row per setting), ``paper_exp{1..4}_trials.csv``
(one row per fit), ``paper_exp{1..4}.png`` (needs matplotlib; skipped with a warning
otherwise) and ``paper_experiments.json`` (environment, settings, fits).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import pathlib
import sys
import time
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from a checkout without installing
    sys.path.insert(0, str(ROOT))

import jax  # noqa: E402

import jaxtree  # noqa: E402
from jaxtree.basis import make_basis  # noqa: E402
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from _common import environment as common_environment  # noqa: E402

NOISE = 0.05

# Family sizes per q (Experiment 4). q=40 is the library default (the paper's basis).
# Other q scale the four non-power families by (q - 3) / 37, keeping x, x^2, x^3; q=10 has
# no hats so that sines >= 3 and cosines >= 2 (the truth stays representable).
BASES_BY_Q = {
    10: dict(hats=0, sines=3, cosines=3, powers=3, truncated_cubics=1),
    20: dict(hats=5, sines=4, cosines=4, powers=3, truncated_cubics=4),
    40: dict(hats=10, sines=9, cosines=9, powers=3, truncated_cubics=9),
    50: dict(hats=13, sines=11, cosines=11, powers=3, truncated_cubics=12),
    100: dict(hats=26, sines=24, cosines=24, powers=3, truncated_cubics=23),
}

SHAPES = {
    "1/sqrt(n)": lambda v: 1.0 / np.sqrt(v),
    "sqrt(log p)": lambda v: np.sqrt(np.log(v)),
    "sqrt(k)": lambda v: np.sqrt(v),
    "sqrt(log q)": lambda v: np.sqrt(np.log(v)),
}

# name -> (varied parameter, values, fixed parameters, shape); quick grids beside.
EXPERIMENTS = {
    "exp1": ("n", [50, 100, 150, 200, 250], dict(p=100, q=40, k=10), "1/sqrt(n)"),
    "exp2": ("p", [10, 20, 50, 100, 200], dict(n=250, q=40, k=10), "sqrt(log p)"),
    "exp3": ("k", [1, 5, 10, 20], dict(p=100, q=40, n=250), "sqrt(k)"),
    "exp4": ("q", [10, 20, 50, 100], dict(p=20, n=250, k=10), "sqrt(log q)"),
}
# Quick grids share one shape (n=100, p=10, q=20, k=2) across experiments, so the whole
# quick run compiles 5 shapes (compilation, not fitting, dominates small runs).
QUICK = {
    "exp1": ("n", [50, 100], dict(p=10, q=20, k=2), "1/sqrt(n)"),
    "exp2": ("p", [10, 20], dict(n=100, q=20, k=2), "sqrt(log p)"),
    "exp3": ("k", [1, 2], dict(p=10, q=20, n=100), "sqrt(k)"),
    "exp4": ("q", [10, 20], dict(p=10, n=100, k=2), "sqrt(log q)"),
}

SETTING_COLUMNS = [
    "experiment", "param", "value", "n", "p", "q", "k", "n_test", "trials", "refine",
    "shape", "f_value",
    "test_mse_mean", "test_mse_ci_low", "test_mse_ci_high",
    "train_mse_mean", "train_mse_ci_low", "train_mse_ci_high",
    "gap_mean", "gap_ci_low", "gap_ci_high",
    "rmse_g_mean", "rmse_g_ci_low", "rmse_g_ci_high",
    "fit_s_median", "fit_s_first",
]
TRIAL_COLUMNS = ["experiment", "param", "value", "n", "p", "q", "k", "n_test", "trial", "seed",
                 "test_mse", "train_mse", "gap", "rmse_g", "fit_s", "leaves"]


# ------------------------------------------------------------------------- environment


def environment(refine: str) -> dict:
    return {
        **common_environment(),
        "dtype": "float32 (x64 off: float64 inputs are computed in float32)"
        if not jax.config.jax_enable_x64 else "float64",
        "precision": "highest (TreeRegressor default)",
        "refine": refine,
        "noise_sd": NOISE,
    }


# ------------------------------------------------------------------------------ stats


def t_quantile_975(df: int) -> float:
    """Two-sided 95% Student-t quantile ``t_{0.975, df}``."""
    try:
        from scipy import stats
        return float(stats.t.ppf(0.975, df))
    except ImportError:  # pragma: no cover - scipy comes with scikit-learn
        table = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365,
                 8: 2.306, 9: 2.262, 10: 2.228, 14: 2.145, 19: 2.093, 29: 2.045}
        return table.get(df, 1.96 + 2.5 / df)


def mean_ci(values) -> tuple[float, float, float]:
    """Mean and 95% t-interval; the interval is the mean itself for one value."""
    v = np.asarray(values, np.float64)
    m = float(v.mean())
    if v.size < 2:
        return m, m, m
    half = t_quantile_975(v.size - 1) * float(v.std(ddof=1)) / math.sqrt(v.size)
    return m, m - half, m + half


def fit_shape(f_values, y_values) -> dict:
    """Least squares ``y ~ a + b f``: a, b, b's standard error and R^2."""
    f = np.asarray(f_values, np.float64)
    y = np.asarray(y_values, np.float64)
    A = np.stack([np.ones_like(f), f], axis=1)
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    resid = y - A @ coef
    ss_res = float(resid @ resid)
    ss_tot = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan")
    dof = len(y) - 2
    if dof > 0 and np.var(f) > 0:
        sigma2 = ss_res / dof
        b_se = math.sqrt(sigma2 / float(((f - f.mean()) ** 2).sum()))
    else:
        b_se = float("nan")
    return {"a": float(coef[0]), "b": float(coef[1]), "b_se": b_se, "r2": r2}


# -------------------------------------------------------------------------- the runs


def basis_for(q: int):
    if q not in BASES_BY_Q:
        raise ValueError(f"no basis composition for q={q}; known: {sorted(BASES_BY_Q)}.")
    sizes = BASES_BY_Q[q]
    basis = make_basis(**sizes)
    assert basis.q == q, (q, basis.q)
    return basis


def trial_data(n, p, seed, n_test=None):
    """One trial's data: ``n + n_test`` draws of the paper's problem (``n_test`` defaults to
    ``n // 3``), split in order. Returns ``(X_train, y_train, X_test, y_test)``; the test ``y``
    is noisy, ``jaxtree.datasets.paper_function(X_test)`` is the truth."""
    n_test = n // 3 if n_test is None else n_test
    X, y = jaxtree.datasets.paper_synthetic(n + n_test, p, noise=NOISE, seed=seed)
    return X[:n], y[:n], X[n:], y[n:]


def run_trial(n, p, q, k, seed, refine):
    """One fit: returns test MSE (noisy y), train MSE, RMSE vs g, fit seconds, leaves."""
    Xtr, ytr, Xte, yte = trial_data(n, p, seed)
    n_test = len(yte)
    est = jaxtree.TreeRegressor.paper(k=k, basis=basis_for(q), refine=refine)
    t0 = time.perf_counter()
    est.fit(Xtr, ytr)
    fit_s = time.perf_counter() - t0
    pred_te = np.asarray(est.predict(Xte), np.float64)
    pred_tr = np.asarray(est.predict(Xtr), np.float64)
    test_mse = float(np.mean((pred_te - yte) ** 2))
    train_mse = float(np.mean((pred_tr - ytr) ** 2))
    rmse_g = float(np.sqrt(np.mean((pred_te - jaxtree.datasets.paper_function(Xte)) ** 2)))
    leaves = int(len(getattr(est, "history_", [])))
    return test_mse, train_mse, rmse_g, fit_s, leaves, n_test


def run_experiment(name, spec, trials, refine, log=print):
    param, values, fixed, shape = spec
    exp_id = int(name[-1])
    settings, rows = [], []
    for value in values:
        cfg = dict(fixed, **{param: value})
        n, p, q, k = cfg["n"], cfg["p"], cfg["q"], cfg["k"]
        res = []
        for t in range(trials):
            seed = 1000 * exp_id + t
            tm, tr, rg, fs, leaves, n_test = run_trial(n, p, q, k, seed, refine)
            res.append((tm, tr, rg, fs))
            rows.append(dict(experiment=name, param=param, value=value, n=n, p=p, q=q, k=k,
                             n_test=n_test, trial=t, seed=seed, test_mse=tm, train_mse=tr,
                             gap=tm - tr, rmse_g=rg, fit_s=fs, leaves=leaves))
        arr = np.asarray(res)
        test_ci = mean_ci(arr[:, 0])
        train_ci = mean_ci(arr[:, 1])
        gap_ci = mean_ci(arr[:, 0] - arr[:, 1])
        rg_ci = mean_ci(arr[:, 2])
        row = dict(experiment=name, param=param, value=value, n=n, p=p, q=q, k=k,
                   n_test=n // 3, trials=trials, refine=str(refine), shape=shape,
                   f_value=float(SHAPES[shape](value)),
                   fit_s_median=float(np.median(arr[:, 3])), fit_s_first=float(arr[0, 3]))
        for key, ci in (("test_mse", test_ci), ("train_mse", train_ci), ("gap", gap_ci),
                        ("rmse_g", rg_ci)):
            row[f"{key}_mean"], row[f"{key}_ci_low"], row[f"{key}_ci_high"] = ci
        settings.append(row)
        log(f"  {name} {param}={value:<4d} test MSE {test_ci[0]:.5f} "
            f"[{test_ci[1]:.5f}, {test_ci[2]:.5f}]  gap {gap_ci[0]:+.5f}  "
            f"RMSE(g) {rg_ci[0]:.4f}  fit {row['fit_s_median']:.2f}s (first {row['fit_s_first']:.1f}s)")
    f = [s["f_value"] for s in settings]
    fits = {key: fit_shape(f, [s[f"{key}_mean"] for s in settings])
            for key in ("test_mse", "gap", "rmse_g")}
    return settings, rows, fits


def write_csv(path, columns, rows):
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=columns)
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c) for c in columns})


def plot(path, name, spec, settings, fits, trials, refine):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        warnings.warn(f"matplotlib is not installed: {path} not written.", RuntimeWarning)
        return False
    param, values, fixed, shape = spec
    x = np.asarray([s["value"] for s in settings], np.float64)
    dense = np.linspace(x.min(), x.max(), 200)
    fd = SHAPES[shape](dense)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, key, label in ((axes[0], "test_mse", "test risk (MSE vs noisy y)"),
                           (axes[1], "gap", "generalization gap (test - train MSE)")):
        m = np.asarray([s[f"{key}_mean"] for s in settings])
        lo = np.asarray([s[f"{key}_ci_low"] for s in settings])
        hi = np.asarray([s[f"{key}_ci_high"] for s in settings])
        ax.errorbar(x, m, yerr=[m - lo, hi - m], fmt="o", capsize=4, color="C0",
                    label=f"mean, 95% CI ({trials} trials)")
        fit = fits[key]
        ax.plot(dense, fit["a"] + fit["b"] * fd, "-", color="C1",
                label=f"{fit['a']:.4f} + {fit['b']:.4f}·{shape}  (R²={fit['r2']:.2f})")
        if key == "test_mse":
            ax.axhline(NOISE ** 2, ls=":", color="gray", label="noise floor σ²")
        ax.set_xlabel(param)
        ax.set_ylabel(label)
        ax.set_xticks(x)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fixed_s = ", ".join(f"{k}={v}" for k, v in fixed.items())
    fig.suptitle(f"{name}: vary {param} ({fixed_s}; refine={refine})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# ---------------------------------------------------------------------------------- CLI


def parse_args(argv=None):
    valid = list(EXPERIMENTS) + ["all"]
    parser = argparse.ArgumentParser(
        description="Reproduce the paper's four synthetic experiments (DESIGN.md section 7).")
    parser.add_argument("experiments", nargs="*", default=["all"], metavar="EXPERIMENT",
                        help=f"any of {', '.join(valid)} (default: all)")
    parser.add_argument("--trials", type=int, default=None,
                        help="trials per setting (default 20; 2 with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="2 trials, small grids and p: a smoke run, < 60 s")
    parser.add_argument("--refine", default=None, choices=["optax", "coordinate"],
                        help="weight refinement of TreeRegressor (default optax; coordinate "
                             "with --quick, whose compilation is ~3x cheaper on CPU)")
    parser.add_argument("--out", default=None,
                        help="output directory (default benchmarks/results, "
                             "benchmarks/results/quick with --quick)")
    args = parser.parse_args(argv)
    unknown = [e for e in args.experiments if e not in valid]
    if unknown:
        parser.error(f"unknown experiment(s) {', '.join(map(repr, unknown))}; "
                     f"valid: {', '.join(valid)}")
    if args.trials is not None and args.trials < 1:
        parser.error(f"--trials must be >= 1; got {args.trials}")
    names = list(EXPERIMENTS) if "all" in args.experiments else \
        list(dict.fromkeys(args.experiments))
    return args, names


def main(argv=None):
    args, names = parse_args(argv)
    trials = args.trials or (2 if args.quick else 20)
    if args.refine is None:
        args.refine = "coordinate" if args.quick else "optax"
    specs = QUICK if args.quick else EXPERIMENTS
    out = pathlib.Path(args.out) if args.out else \
        ROOT / "benchmarks" / "results" / ("quick" if args.quick else "")
    out.mkdir(parents=True, exist_ok=True)
    env = environment(args.refine)
    print(f"jaxtree paper experiments: {', '.join(names)}; trials={trials}; "
          f"refine={args.refine}; quick={args.quick}; out={out}")
    print(f"  commit {env['commit']}, jax {env['jax']} on {env['device']}, "
          f"{env['cpu_count']} CPUs")
    summary = {"environment": env, "trials": trials, "quick": args.quick,
               "bases_by_q": {str(q): v for q, v in BASES_BY_Q.items()}, "experiments": {}}
    json_path = out / "paper_experiments.json"
    if json_path.exists():  # keep other experiments' results from an earlier run
        try:
            old = json.loads(json_path.read_text())
            if old.get("quick") == args.quick:
                summary["experiments"].update(old.get("experiments", {}))
        except (OSError, ValueError):
            pass
    t_all = time.perf_counter()
    for name in names:
        spec = specs[name]
        t0 = time.perf_counter()
        settings, rows, fits = run_experiment(name, spec, trials, args.refine)
        wall = time.perf_counter() - t0
        write_csv(out / f"paper_{name}.csv", SETTING_COLUMNS, settings)
        write_csv(out / f"paper_{name}_trials.csv", TRIAL_COLUMNS, rows)
        png = plot(out / f"paper_{name}.png", name, spec, settings, fits, trials, args.refine)
        param, values, fixed, shape = spec
        for key, fit in fits.items():
            print(f"  {name} fit {key:8s} ~ a + b·{shape}: a={fit['a']:.5f} "
                  f"b={fit['b']:.5f} (se {fit['b_se']:.5f}) R²={fit['r2']:.3f}")
        print(f"  {name} done in {wall:.1f}s")
        summary["experiments"][name] = {
            "param": param, "values": values, "fixed": fixed, "shape": shape,
            "trials": trials, "refine": args.refine, "wall_s": wall,
            "date": env["date"], "commit": env["commit"],
            "settings": settings, "fits": fits, "png": bool(png),
        }
    summary["wall_s_this_run"] = time.perf_counter() - t_all
    json_path.write_text(json.dumps(summary, indent=2))
    print(f"wrote {out}/paper_exp*.csv, *.png, paper_experiments.json "
          f"in {summary['wall_s_this_run']:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
