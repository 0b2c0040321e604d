"""Predictions of trees of other sizes: what a new ``k`` costs at predict time.

Cross-validation folds choose their own tree size on held-out rows, a grid search fits
several ``k``, and ``target_transform="auto"`` fits a model per transform: each model then
predicts. A tree's slots are a shape of the prediction's program, so before the fortieth
session every new size compiled the prediction again. This script fits
``TreeRegressor.paper(k)`` for each ``k`` in ``--ks`` on one table (n = 1,000, p = 10; the
fits are not timed) in a fresh process (jaxtree's compilation cache off), then times each
model's first ``predict`` of 200 held-out rows (compiling included; the programs compiled
are counted) and each model's warm ``predict`` of ``--warm`` rows (the median of 5).

``--baseline DIR`` runs the same process on another checkout (``git worktree add DIR
<commit>``) alternately with this one, ``--rounds`` times.

    python benchmarks/bench_predict_sizes.py --baseline /tmp/old --rounds 2

Writes ``benchmarks/results/predict_sizes.json`` (``--out``).
"""

import argparse
import json
import os
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _common import ROOT, checkouts, environment, run_child  # noqa: E402

CHILD = r"""
import json, sys, time, warnings
sys.path.insert(0, sys.argv[1])
import numpy as np, jaxtree
from jaxtree.debug import count_compilations
warnings.simplefilter("ignore")
ks = [int(v) for v in sys.argv[2].split(",")]
warm_rows = [int(v) for v in sys.argv[3].split(",")]
rng = np.random.default_rng(0)
X = rng.uniform(size=(1200, 10))
y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] - 0.5 * X[:, 3] + 0.05 * rng.normal(size=1200)
ests = [jaxtree.TreeRegressor.paper(k=k).fit(X[:1000], y[:1000]) for k in ks]
first = []
for k, est in zip(ks, ests):
    t = time.perf_counter()
    with count_compilations() as c:
        est.predict(X[1000:])
    first.append({"k": k, "k_": int(est.k_), "seconds": time.perf_counter() - t,
                  "compiles": c.compiles})
warm = []
for n in warm_rows:
    Xn = rng.uniform(size=(n, 10))
    for k, est in zip(ks, ests):
        est.predict(Xn)
        ts = []
        for _ in range(5):
            t = time.perf_counter()
            est.predict(Xn)
            ts.append(time.perf_counter() - t)
        warm.append({"k": k, "rows": n, "seconds": float(np.median(ts))})
print(json.dumps({"first": first, "warm": warm}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ks", default="1,2,3,5,8")
    ap.add_argument("--warm", default="1000,100000,1000000")
    ap.add_argument("--baseline", default=None, help="another checkout, run alternately")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "predict_sizes.json"))
    args = ap.parse_args()
    roots = checkouts(args.baseline)
    env = dict(os.environ, JAXTREE_COMPILATION_CACHE="0")
    runs = {name: [] for name in roots}
    for r in range(args.rounds):
        for name, root in roots.items():
            res = run_child(CHILD, root, args.ks, args.warm, env=env)
            runs[name].append(res)
            first = " ".join(f"k={f['k']}: {f['compiles']} compiled {f['seconds']:.2f} s"
                             for f in res["first"])
            print(f"round {r} {name:9s} first predict: {first}", flush=True)
            warm = " ".join(f"k={w['k']}/{w['rows']}: {w['seconds'] * 1e3:.1f} ms"
                            for w in res["warm"])
            print(f"round {r} {name:9s} warm: {warm}", flush=True)
    out = pathlib.Path(args.out).resolve()
    out.write_text(json.dumps({"environment": environment(), "ks": args.ks, "roots": roots,
                               "runs": runs}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
