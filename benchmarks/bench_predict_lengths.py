"""Predictions of new lengths after a fit: what each new number of rows costs.

A user fits once and then predicts tables of many lengths (a test set, a few new rows, a
cross-validation fold). Each call's compiled program is keyed by its shape, so before issue
27's row buckets every new length compiled the model's prediction again. This script fits
the demo's model (the default ``TreeRegressor()`` on the paper's g, n = 1,000, p = 10) in a
fresh process (jaxtree's compilation cache off), then times ``est.predict`` on held-out
rows of each length in ``--lengths`` (first call each: compiling included), then all of them
again (warm), and the warm time of one call per length in ``--warm`` (the median of 50).

``--baseline DIR`` runs the same process on another checkout (``git worktree add DIR
<commit>``) alternately with this one, ``--rounds`` times.

    python benchmarks/bench_predict_lengths.py --baseline /tmp/old --rounds 2

Writes ``benchmarks/results/predict_lengths.json``.
"""

import argparse
import json
import os
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _common import ROOT, checkouts, run_child  # noqa: E402

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np, jaxtree
from jaxtree.datasets import paper_synthetic
lengths = [int(v) for v in sys.argv[2].split(",")]
warm = [int(v) for v in sys.argv[3].split(",")]
X, y = paper_synthetic(n=1000 + max(lengths + warm), p=10, seed=0)
est = jaxtree.TreeRegressor().fit(X[:1000], y[:1000])
new = X[1000:]
first = []
for n in lengths:
    t = time.perf_counter(); est.predict(new[:n]); first.append(time.perf_counter() - t)
t = time.perf_counter()
for n in lengths:
    est.predict(new[:n])
again = time.perf_counter() - t
per_call = {}
for n in warm:
    est.predict(new[:n])
    ts = []
    for _ in range(50):
        t = time.perf_counter(); est.predict(new[:n]); ts.append(time.perf_counter() - t)
    per_call[n] = float(np.median(ts))
print(json.dumps({"first": first, "again": again, "per_call": per_call}))
"""


def run(root: str, lengths: str, warm: str) -> dict:
    return run_child(CHILD, root, lengths, warm,
                     env=dict(os.environ, JAXTREE_COMPILATION_CACHE="0"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lengths", default="300,250,200,150,120")
    ap.add_argument("--warm", default="1,64,256,1024,4096")
    ap.add_argument("--baseline", default=None, help="another checkout, run alternately")
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    roots = checkouts(args.baseline)
    runs = {name: [] for name in roots}
    for _ in range(args.rounds):
        for name, root in roots.items():
            r = run(root, args.lengths, args.warm)
            runs[name].append(r)
            print(f"{name:9s} first calls {sum(r['first']):5.2f} s "
                  f"({', '.join(f'{t:.2f}' for t in r['first'])}), all again {r['again']:.3f} s; "
                  "warm per call: " + ", ".join(f"{n} rows {t * 1e3:.2f} ms"
                                                for n, t in r["per_call"].items()), flush=True)
    out = ROOT / "benchmarks" / "results" / "predict_lengths.json"
    out.write_text(json.dumps({"lengths": args.lengths, "warm": args.warm,
                               "roots": roots, "runs": runs}, indent=1))
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
