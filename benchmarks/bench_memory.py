"""Peak host memory of an in-memory fit (issue 12 item 7).

Fits ``TreeRegressor(k=10)`` (all other options at their defaults) on a float32 numpy
``X`` of ``n x 8`` rows and a float32 ``y`` in a fresh subprocess and reports its peak RSS
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``, kB on Linux) against the limit

    X.nbytes + y.nbytes + 1 GiB

``X`` and ``y`` are generated in float32 directly, chunk by chunk into preallocated
arrays, so generating them does not inflate the peak. The child also reports its RSS
after the imports and the data (``baseline_rss_mb``: what the process holds before
``fit``), the fit's wall time (``fit_s``, compilation included: a fresh process; the
persistent compilation cache is as the environment sets it), and the peak after one
``predict`` over all rows (``peak_after_predict_mb``; ``ru_maxrss`` never decreases, so
a larger value than ``peak_after_fit_mb`` is predict's own peak).

The target is cheap and smooth: ``y = sin(2 pi x1) + x2 * x3 + 0.5 x4^2 + 0.05 noise``
with ``x ~ U[0, 1)^8``; ``--bump`` adds a 2-D bump ``exp(-((x5 - .4)^2 + (x6 - .6)^2) / .05)``
that the tree cannot build and shape terms can (``--shapes 0`` fits the tree alone; the
record has ``n_shapes`` and ``rmse_test`` on 200,000 fresh rows).

    python benchmarks/bench_memory.py                 # n = 10^7 (about 0.4 GB of data)
    python benchmarks/bench_memory.py --n 2e6         # a smaller size while developing
    python benchmarks/bench_memory.py --no-predict    # the fit only
    python benchmarks/bench_memory.py --n 2.2e6 --k 6 --bump --shapes 0   # vs --shapes auto
    python benchmarks/bench_memory.py --paper --out benchmarks/results/memory_paper.json
        # TreeRegressor.paper(k=10) on the same rows: issue 27's "default <= 2x the paper's search"

Writes ``benchmarks/results/memory.json`` (``memory_n<N>.json`` for other sizes, or
``--out``) and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import ROOT, child_json, environment  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
GIB = 1 << 30


def _rss_mb() -> float:
    """Current resident set size (``VmRSS``) in MiB; NaN where /proc is missing."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    return float("nan")


def _peak_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kB


def make_data(n: int, p: int, seed: int = 0, block: int = 1 << 18, bump: bool = False):
    """``(X float32 (n, p), y float32 (n,))`` written block by block (no full temporary)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    X = np.empty((n, p), np.float32)
    y = np.empty((n,), np.float32)
    for s in range(0, n, block):
        e = min(s + block, n)
        xb = X[s:e]
        rng.random(out=xb, dtype=np.float32)
        yb = (np.sin(2 * np.pi * xb[:, 0]) + xb[:, 1] * xb[:, 2]
              + 0.5 * xb[:, 3 % p] ** 2 + 0.05 * rng.standard_normal(e - s, dtype=np.float32))
        if bump:
            yb += np.exp(-((xb[:, 4 % p] - 0.4) ** 2 + (xb[:, 5 % p] - 0.6) ** 2) / 0.05)
        y[s:e] = yb
    return X, y


def child(a) -> dict:
    t0 = time.perf_counter()
    import jax
    import numpy as np

    import jaxtree

    import_s = time.perf_counter() - t0
    rss_imports = _rss_mb()
    X, y = make_data(a.n, a.p, bump=a.bump)
    rec = dict(n=a.n, p=a.p, k=a.k, x_dtype=str(X.dtype), y_dtype=str(y.dtype),
               x_mb=X.nbytes / 2**20, y_mb=y.nbytes / 2**20,
               limit_mb=(X.nbytes + y.nbytes + GIB) / 2**20,
               import_s=import_s, rss_after_imports_mb=rss_imports,
               baseline_rss_mb=_rss_mb(), baseline_peak_mb=_peak_mb(),
               backend=jax.default_backend(), jax_enable_x64=bool(jax.config.jax_enable_x64))
    if a.paper:  # the paper's greedy search, the default's yardstick at scale (issue 27)
        est = jaxtree.TreeRegressor.paper(k=a.k)
    else:
        est = jaxtree.TreeRegressor(k=a.k, shapes=a.shapes if a.shapes == "auto" else int(a.shapes))
    rec["estimator"] = "paper" if a.paper else "default"
    t = time.perf_counter()
    est.fit(X, y)
    rec["fit_s"] = time.perf_counter() - t
    rec["peak_after_fit_mb"] = _peak_mb()
    rec["rss_after_fit_mb"] = _rss_mb()
    rec["final_mse"] = float(est.history_[-1])
    rec["n_shapes"] = 0 if est.model_.shapes is None else int(est.model_.shapes.n_terms)
    Xt, yt = make_data(200_000, a.p, seed=1, bump=a.bump)
    rec["rmse_test"] = float(np.sqrt(np.mean((est.predict(Xt) - yt.astype(np.float64)) ** 2)))
    del Xt, yt
    rec["formula"] = est.formula()
    rec["choices"] = [(int(c["op"]), int(c["feature"]), int(c["basis"])) for c in est.choices_
                      if "op" in c]
    if a.predict:
        t = time.perf_counter()
        pred = est.predict(X)
        rec["predict_s"] = time.perf_counter() - t
        rec["peak_after_predict_mb"] = _peak_mb()
        rec["rmse_train"] = float(np.sqrt(np.mean((pred - y.astype(np.float64)) ** 2)))
        rec["pred_head"] = [float(v) for v in pred[:5]]
    rec["peak_mb"] = _peak_mb()
    rec["within_limit"] = bool(rec["peak_after_fit_mb"] <= rec["limit_mb"])
    return rec


def run_child(a) -> dict:
    argv = [os.path.abspath(__file__), "--child", "--n", a.n, "--p", a.p, "--k", a.k,
            "--shapes", a.shapes] + ([] if a.predict else ["--no-predict"]) \
        + (["--bump"] if a.bump else []) + (["--paper"] if a.paper else [])
    return child_json(argv, cwd=ROOT)


def table(rec: dict) -> str:
    rows = [("estimator", rec.get("estimator", "default")),
            ("n x p", f"{rec['n']:,} x {rec['p']} ({rec['x_dtype']}), y {rec['y_dtype']}"),
            ("data (X + y)", f"{rec['x_mb'] + rec['y_mb']:.0f} MiB"),
            ("limit (X + y + 1 GiB)", f"{rec['limit_mb']:.0f} MiB"),
            ("RSS after imports", f"{rec['rss_after_imports_mb']:.0f} MiB"),
            ("baseline RSS (imports + data)", f"{rec['baseline_rss_mb']:.0f} MiB"),
            ("peak RSS after fit", f"{rec['peak_after_fit_mb']:.0f} MiB"
             f" ({'within' if rec['within_limit'] else 'OVER'} the limit)"),
            ("fit time (fresh process)", f"{rec['fit_s']:.1f} s"),
            ("shape terms, test RMSE", f"{rec['n_shapes']}, {rec['rmse_test']:.4f}")]
    if "peak_after_predict_mb" in rec:
        rows += [("peak RSS after predict", f"{rec['peak_after_predict_mb']:.0f} MiB"),
                 ("predict time", f"{rec['predict_s']:.1f} s")]
    w = max(len(r[0]) for r in rows)
    return "\n".join(f"{name:<{w}}  {val}" for name, val in rows)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e7, help="rows (default 1e7)")
    ap.add_argument("--p", type=int, default=8, help="columns (default 8)")
    ap.add_argument("--k", type=int, default=10, help="TreeRegressor(k=...) (default 10)")
    ap.add_argument("--shapes", default="auto", help="TreeRegressor(shapes=...): auto or 0")
    ap.add_argument("--bump", action="store_true", help="add a 2-D bump to y (shape terms)")
    ap.add_argument("--paper", action="store_true",
                    help="fit TreeRegressor.paper(k=K) instead of the default (--shapes ignored)")
    ap.add_argument("--no-predict", dest="predict", action="store_false",
                    help="skip the predict over all rows")
    ap.add_argument("--out", default=None, help="JSON output path")
    ap.add_argument("--label", default=None, help="a label stored with the record")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    a.n = int(a.n)
    if a.child:
        print(json.dumps(child(a)))
        return
    rec = run_child(a)
    rec["label"] = a.label
    rec["environment"] = environment()
    rec["command"] = "python benchmarks/bench_memory.py " + " ".join(argv or sys.argv[1:])
    out = a.out or os.path.join(HERE, "results",
                                "memory.json" if a.n == 10**7 else f"memory_n{a.n}.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(rec, f, indent=1)
    print(table(rec))
    print(f"wrote {os.path.relpath(out, ROOT)}")


if __name__ == "__main__":
    main()
