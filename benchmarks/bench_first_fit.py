"""The first fit of a new process, with and without jaxtree's persistent compilation cache.

Runs the demo's fit (``jaxtree demo``: the paper's g, n=1000, p=10, k=10, default
estimator) in fresh Python processes, each with ``XDG_CACHE_HOME`` pointing at a new empty
temporary directory, so jaxtree's cache starts empty (see ``jaxtree._compilation_cache``):

* ``cache_off``: ``JAXTREE_COMPILATION_CACHE=0`` (every process compiles everything);
* ``first``: the first process with the cache on (compiles, writes the cache);
* ``second``: a second process on the same cache directory (loads the programs).

Each process times ``import jaxtree`` and the fit separately (``time.perf_counter``
around ``TreeRegressor(k=10).fit``), checks the second fit's predictions equal the first's,
and reports the cache's size. Target: the second process's fit <= 1 s.

    python benchmarks/bench_first_fit.py            # n=1000, p=10, k=10, 3 rounds
    python benchmarks/bench_first_fit.py --quick    # n=300, p=4, k=3, 1 round

Writes ``benchmarks/results/first_fit.json`` (``first_fit_quick.json`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import ROOT, environment  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import jaxtree
from jaxtree.datasets import paper_synthetic
t_import = time.perf_counter() - t0
n, p, k = (int(a) for a in sys.argv[1:4])
X, y = paper_synthetic(n + n // 3, p=p, seed=0)   # as jaxtree.cli._demo
t0 = time.perf_counter()
est = jaxtree.TreeRegressor(k=k).fit(X[:n], y[:n])
t_fit = time.perf_counter() - t0
t0 = time.perf_counter()
pred = est.predict(X[n:])
t_predict = time.perf_counter() - t0
import jax
print(json.dumps({"import_s": t_import, "fit_s": t_fit, "predict_s": t_predict,
                  "pred": pred.tolist(), "formula": est.formula(),
                  "cache_dir": jax.config.jax_compilation_cache_dir}))
"""


def _dir_size(path: str) -> tuple:
    files = [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs]
    return len(files), sum(os.path.getsize(f) for f in files)


def _child(n, p, k, xdg, cache_on: bool) -> dict:
    env = {key: v for key, v in os.environ.items()
           if key not in ("JAX_COMPILATION_CACHE_DIR", "JAXTREE_COMPILATION_CACHE")}
    env["XDG_CACHE_HOME"] = xdg
    if not cache_on:
        env["JAXTREE_COMPILATION_CACHE"] = "0"
    out = subprocess.run([sys.executable, "-c", CHILD, str(n), str(p), str(k)], env=env,
                         capture_output=True, text=True, cwd=str(ROOT), check=False)
    if out.returncode != 0:
        raise RuntimeError(f"child process failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def one_round(n, p, k) -> dict:
    """One cache-off process, then two processes on one new empty cache directory."""
    with tempfile.TemporaryDirectory(prefix="jaxtree-bench-") as tmp:
        off = _child(n, p, k, os.path.join(tmp, "off"), cache_on=False)
        xdg = os.path.join(tmp, "on")
        first = _child(n, p, k, xdg, cache_on=True)
        files, size = _dir_size(os.path.join(xdg, "jaxtree", "jax"))
        second = _child(n, p, k, xdg, cache_on=True)
        off_files = _dir_size(os.path.join(tmp, "off"))[0]
    assert off["cache_dir"] is None and off_files == 0, "JAXTREE_COMPILATION_CACHE=0 ignored"
    assert first["cache_dir"] and files > 0, "the cache was not written"
    same = first["pred"] == second["pred"] and first["formula"] == second["formula"]
    assert same, "the cached programs changed the fit"
    assert off["pred"] == first["pred"], "the cache changed the fit"
    row = {"cache_entries": files, "cache_bytes": size}
    for name, r in (("cache_off", off), ("first", first), ("second", second)):
        row.update({f"{name}_{key}": r[key] for key in ("import_s", "fit_s", "predict_s")})
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n=300, p=4, k=3, one round")
    ap.add_argument("--rounds", type=int, default=None, help="repeats (default 3, 1 with --quick)")
    ap.add_argument("--out", default=None, help="JSON output path")
    a = ap.parse_args(argv)
    n, p, k = (300, 4, 3) if a.quick else (1000, 10, 10)
    rounds = a.rounds or (1 if a.quick else 3)
    rows = []
    for r in range(rounds):
        rows.append(one_round(n, p, k))
        print(f"round {r}: " + ", ".join(f"{key}={v:.3f}" if isinstance(v, float) else f"{key}={v}"
                                         for key, v in rows[-1].items()), flush=True)
    med = {key: statistics.median(row[key] for row in rows) for key in rows[0]}
    print(f"median over {rounds} round(s), n={n} p={p} k={k}: fit without cache "
          f"{med['cache_off_fit_s']:.2f} s, first process {med['first_fit_s']:.2f} s, second "
          f"process {med['second_fit_s']:.2f} s (target <= 1 s); import "
          f"{med['second_import_s']:.2f} s; cache {med['cache_entries']:.0f} files, "
          f"{med['cache_bytes'] / 1e6:.1f} MB")
    meta = {**environment(), "n": n, "p": p, "k": k, "rounds": rounds,
            "load_average_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
            "estimator": "TreeRegressor(k) defaults (jax engine, refine='optax', float64 data "
                         "computed in float32, x64 off)"}
    out = a.out or os.path.join(HERE, "results", "first_fit_quick.json" if a.quick else "first_fit.json")
    with open(out, "w") as f:
        json.dump({"meta": meta, "median": med, "rows": rows}, f, indent=1)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
