"""Planted physical laws (issue 14): is the printed, simplified formula the law?

For each law, noise-free data (2,000 train / 2,000 test, covariates uniform on positive
boxes) is fitted with the "exact laws" preset (``TreeRegressor.for_laws(k=K)``: physics basis,
``y_bound=0.25``, ``target_transform="auto"``, backfit search, the size chosen on 20% held-out
rows up to ``K`` operations, leaves cheaper than ``1e-6`` of R^2 pruned) and the printed law
(``est.law()``, sympy, original units) is compared with the truth: the law is recovered *up to
constants* when ``printed / truth`` is a constant within ``1e-3`` of 1 on the test points, i.e.
``max |printed/truth - 1| < 1e-3``. A second pass adds 1% noise (``sd = 0.01 * sd(y)``) to the
training and the test targets and fits the same preset: the test MSE is compared with the noise
floor (the noise variance); "within 10% of the floor" is a ratio below 1.1.

Run from the repository root::

    python benchmarks/bench_laws.py                 # prints a table, writes results/laws/planted.json
    python benchmarks/bench_laws.py --quick         # two laws, k=2: a smoke run
    python benchmarks/bench_laws.py --k 4           # a smaller size bound
"""

from __future__ import annotations

import argparse
import datetime
import json
import pathlib
import platform
import time

import numpy as np

LAWS = {
    "x1*x2/x3**2": (lambda x: x[:, 0] * x[:, 1] / x[:, 2] ** 2, [(1, 5), (1, 3), (1, 2)]),
    "x1*exp(-x2/x3)": (lambda x: x[:, 0] * np.exp(-x[:, 1] / x[:, 2]), [(1, 5), (0.5, 2), (1, 3)]),
    "sqrt(x1**2+x2**2)": (lambda x: np.sqrt(x[:, 0] ** 2 + x[:, 1] ** 2), [(1, 5), (1, 5)]),
    "x1**1.5 (Kepler)": (lambda x: x[:, 0] ** 1.5, [(0.4, 30)]),
    "1/x1 + log(x2)": (lambda x: 1 / x[:, 0] + np.log(x[:, 1]), [(0.5, 4), (1, 100)]),
}


def _preset(k):
    import jaxtree

    return jaxtree.TreeRegressor.for_laws(k=k)


def _data(fn, box, n, seed):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(lo, hi, n) for lo, hi in box])
    return X, fn(X)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--k", type=int, default=20, help="size bound of the preset (default 20)")
    ap.add_argument("--out", default="benchmarks/results/laws")
    args = ap.parse_args(argv)

    import jax
    import sympy as sp

    import jaxtree

    laws = dict(list(LAWS.items())[:2]) if args.quick else LAWS
    k = 2 if args.quick else args.k
    n = 300 if args.quick else 2000
    out = pathlib.Path(args.out) / ("planted_quick.json" if args.quick else "planted.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    env = dict(date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               jax=jax.__version__, device=str(jax.devices()[0]), machine=platform.machine(),
               settings={p: v for p, v in _preset(k).get_params().items()
                         if not callable(v)}, k=k, n_train=n, n_test=n)
    rows = []
    for name, (fn, box) in laws.items():
        X, y = _data(fn, box, n, 0)
        Xt, yt = _data(fn, box, n, 1)
        t0 = time.perf_counter()
        est = _preset(k).fit(X, y)
        fit_s = time.perf_counter() - t0
        law = est.law()
        syms = sp.symbols(" ".join(f"x{j + 1}" for j in range(X.shape[1])), real=True)
        printed = sp.lambdify(syms, law, "numpy")(*Xt.T) * np.ones(len(yt))
        ratio = printed / yt
        rel = float(np.max(np.abs(ratio / np.median(ratio) - 1)))
        const_dev = float(abs(np.median(ratio) - 1))
        recovered = rel < 1e-3
        # 1% noise, size chosen on held-out rows
        rng = np.random.default_rng(2)
        noise_sd = 0.01 * float(np.std(y))
        yn = y + noise_sd * rng.standard_normal(len(y))
        ytn = yt + noise_sd * np.random.default_rng(3).standard_normal(len(yt))
        noisy = _preset(k).fit(X, yn)
        test_mse = float(np.mean((noisy.predict(Xt) - ytn) ** 2))  # floor: the noise variance
        row = dict(law=name, recovered_up_to_constants=recovered, max_rel_dev_shape=rel,
                   constant_factor_dev=const_dev, printed=str(law),
                   target_transform=est.target_transform_, k_=est.k_,
                   test_r2=est.score(Xt, yt), fit_s=fit_s,
                   noisy_k=noisy.k_, noisy_transform=noisy.target_transform_,
                   noisy_test_mse=test_mse, noise_var=noise_sd ** 2,
                   noisy_test_mse_over_noise_var=test_mse / noise_sd ** 2,
                   noisy_printed=str(noisy.law()))
        rows.append(row)
        print(f"{name:22s} recovered={recovered!s:5s} dev={rel:.2e} R2={row['test_r2']:.6f} "
              f"k_={est.k_} {est.target_transform_:8s} law: {law}")
        print(f"{'':22s} 1% noise: k_={noisy.k_} {noisy.target_transform_} test MSE / noise "
              f"var = {row['noisy_test_mse_over_noise_var']:.3f}  law: {noisy.law()}")
        # a long run keeps the rows it has
        out.write_text(json.dumps(dict(environment=env, rows=rows), indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
