"""Cost of the new search options at airline scale: warm fits of ``TreeRegressor`` with
and without ``shapes`` (and with ``search="beam"``) on the same data in one process (issue
11's cost target; step 5 of ``benchmarks/gpu.sh``).

Data: ``bench_scale.py``'s airline-like synthetic table is not reused on purpose: the
covariates here are drawn like the NYC flights table's (eight columns, a few with few
distinct values), n = 700,000 by default. Each configuration is fitted once to compile,
then ``--repeats`` warm fits are timed; the median is reported with the load average.

    python benchmarks/bench_shapes.py                       # n = 7e5, greedy vs shapes
    python benchmarks/bench_shapes.py --n 100000 --repeats 1 --out /tmp/s   # smoke
    python benchmarks/bench_shapes.py --paper-g 20000 100000   # accuracy where a tree is the truth

``--paper-g N ...`` measures the other side of the default decision instead of the cost: the
paper's g (p = 10, seed 0) at each ``N``, RMSE of greedy k=10 and of ``shapes=10`` (k=10 and
k=20) against the noiseless g on 5,000 test points (``shapes_paper_g.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

import numpy as np

import jaxtree

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _common import environment  # noqa: E402

CONFIGS = {
    "greedy k=10": {"k": 10, "shapes": 0},
    "shapes=auto, k=10": {"k": 10, "shapes": "auto"},
    "shapes=10, k=10": {"k": 10, "shapes": 10},
    "shapes=20, k=10": {"k": 10, "shapes": 20},
    "beam width 4, k=10": {"k": 10, "search": "beam", "beam_width": 4},
}


def airline_like(n: int, seed: int = 0):
    """Eight covariates shaped like the flights table's, and a target with one- and
    two-covariate effects plus heavy noise."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([
        rng.integers(0, 40, n),            # plane age
        rng.gamma(2.0, 500.0, n),          # distance
        rng.gamma(2.0, 80.0, n),           # air time
        rng.integers(500, 2400, n),        # dep time
        rng.integers(0, 2400, n),          # arr time
        rng.integers(0, 7, n),             # weekday
        rng.integers(1, 32, n),            # day
        rng.integers(1, 13, n),            # month
    ]).astype(np.float64)
    hour = X[:, 3] / 2400
    season = np.sin(2 * np.pi * (X[:, 7] + X[:, 6] / 31) / 12)
    y = 30 * hour ** 2 + 10 * season * hour + 5 * np.cos(X[:, 5]) + 40 * rng.standard_normal(n)
    return X, y


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=700_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parent / "results"))
    ap.add_argument("--configs", nargs="+", choices=list(CONFIGS), default=list(CONFIGS),
                    metavar="NAME", help=f"which of {list(CONFIGS)} (default all; the first is "
                                         "the baseline of the ratio)")
    ap.add_argument("--paper-g", type=int, nargs="+", default=None, metavar="N",
                    help="instead of the cost: RMSE vs the paper's g at these n")
    args = ap.parse_args(argv)
    if args.paper_g:
        return paper_g(args.paper_g, pathlib.Path(args.out))
    X, y = airline_like(args.n)
    rows = []
    for name in args.configs:
        kw = CONFIGS[name]
        t0 = time.perf_counter()
        est = jaxtree.TreeRegressor(**kw).fit(X, y)
        first = time.perf_counter() - t0
        warm = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            jaxtree.TreeRegressor(**kw).fit(X, y)
            warm.append(time.perf_counter() - t0)
        rows.append({"config": name, "kwargs": kw, "first_fit_s": first, "warm_s": warm,
                     "warm_median_s": float(np.median(warm)), "train_mse": float(est.history_[-1]),
                     "load_average": os.getloadavg()})
        print(f"{name:18s} first {first:7.2f} s  warm median {np.median(warm):7.2f} s  "
              f"train MSE {est.history_[-1]:.2f}  load {os.getloadavg()[0]:.1f}", flush=True)
    base = rows[0]["warm_median_s"]
    for r in rows:
        r["ratio_to_greedy"] = r["warm_median_s"] / base
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "shapes_cost.json").write_text(json.dumps(
        {"environment": environment(), "n": args.n, "repeats": args.repeats, "rows": rows},
        indent=2))
    lines = [f"# bench_shapes.py, n = {args.n}, p = 8, {args.repeats} warm fits (median), "
             f"{environment().get('device', '')}", "",
             "| config | first fit s | warm s (median) | × greedy | load avg |",
             "|---|---:|---:|---:|---:|"]
    lines += [f"| {r['config']} | {r['first_fit_s']:.2f} | {r['warm_median_s']:.2f} | "
              f"{r['ratio_to_greedy']:.2f} | {r['load_average'][0]:.1f} |" for r in rows]
    (out / "shapes_cost.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def paper_g(ns, out: pathlib.Path) -> int:
    """RMSE against the paper's noiseless g of greedy and shapes fits at each n."""
    from jaxtree.datasets import paper_function, paper_synthetic

    Xt, _ = paper_synthetic(n=5000, p=10, seed=99)
    g = paper_function(Xt)
    rows = []
    for n in ns:
        X, y = paper_synthetic(n=n, p=10, seed=0)
        for kw in ({"k": 10, "shapes": 0}, {"k": 10, "shapes": "auto"}, {"k": 10, "shapes": 10},
                   {"k": 20, "shapes": 10}):
            t0 = time.perf_counter()
            est = jaxtree.TreeRegressor(**kw).fit(X, y)
            rmse = float(np.sqrt(np.mean((est.predict(Xt) - g) ** 2)))
            rows.append({"n": n, "kwargs": kw, "rmse_vs_g": rmse,
                         "fit_s": time.perf_counter() - t0})
            print(f"n={n:7d} {json.dumps(kw):28s} RMSE vs g {rmse:.4f}", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "shapes_paper_g.json").write_text(json.dumps(
        {"environment": environment(), "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
