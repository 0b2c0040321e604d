"""Command line: ``jaxtree demo`` (more subcommands: ``jaxtree --help``)."""

from __future__ import annotations

import argparse
import sys
import time


def _demo(args) -> int:
    import numpy as np

    import jaxtree
    from jaxtree.datasets import paper_function, paper_synthetic

    n_test = args.n // 3
    X, y = paper_synthetic(args.n + n_test, p=args.p, seed=args.seed)
    Xtr, ytr, Xte = X[: args.n], y[: args.n], X[args.n:]
    print(f"Fitting the paper's g(x) = 0.3 sin(3πx1) cos(2πx2) + 0.4 x3² - 0.3 x4 + noise "
          f"(n={args.n}, p={args.p}, k={args.k}) ...")
    t0 = time.perf_counter()
    est = jaxtree.TreeRegressor(k=args.k).fit(Xtr, ytr)
    dt = time.perf_counter() - t0
    rmse = float(np.sqrt(np.mean((est.predict(Xte) - paper_function(Xte)) ** 2)))
    print(est.formula())
    print(f"test RMSE against the noiseless g: {rmse:.4f}   (fit {dt:.1f} s, incl. compilation)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jaxtree", description="Compositional regression trees.")
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="fit the paper's synthetic function; print formula and test error")
    d.add_argument("--n", type=int, default=1000, help="training samples (default 1000)")
    d.add_argument("--p", type=int, default=10, help="covariates (default 10)")
    d.add_argument("--k", type=int, default=10, help="operations (default 10)")
    d.add_argument("--seed", type=int, default=0)
    d.set_defaults(func=_demo)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError, OSError) as exc:
        print(f"jaxtree: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
