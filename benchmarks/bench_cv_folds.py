"""Cross-validation as a user runs it: what each fold after the first compiles.

Five folds (``KFold(5, shuffle=True, random_state=0)``) of the default ``TreeRegressor()`` on
the paper's g (``--n`` rows, p = 10) or scikit-learn's diabetes table (``--data diabetes``), each ``fit`` then ``score`` on its held-out rows, in
one fresh process (jaxtree's compilation cache off). Every fold has the shapes of the
first (rows within one, the row buckets), so a fold after the first should compile nothing;
the script prints each fold's compilations (``jaxtree.debug.count_compilations``), the
compiled programs' names and the fold's seconds.

``--baseline DIR`` runs the same process on another checkout (``git worktree add DIR
<commit>``) first.

    python benchmarks/bench_cv_folds.py --baseline /tmp/old
    python benchmarks/bench_cv_folds.py --baseline /tmp/old --data diabetes

Writes ``benchmarks/results/cv_folds.json`` (``--out``).
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
import jax, numpy as np, jaxtree
from sklearn.model_selection import KFold
from jaxtree.datasets import paper_synthetic
from jaxtree.debug import count_compilations
if sys.argv[3] == "diabetes":  # scikit-learn's bundled table: 442 rows, 10 columns
    from sklearn.datasets import load_diabetes
    X, y = load_diabetes(return_X_y=True)
else:
    X, y = paper_synthetic(n=int(sys.argv[2]), p=10, seed=0)
names = []
jax.monitoring.register_event_duration_secs_listener(
    lambda ev, d, **kw: names.append(kw.get("fun_name")) if "backend_compile" in ev else None)
folds = []
for tr, te in KFold(5, shuffle=True, random_state=0).split(X):
    names.clear()
    t = time.perf_counter()
    with count_compilations() as c:
        est = jaxtree.TreeRegressor().fit(X[tr], y[tr])
        r2 = est.score(X[te], y[te])
    folds.append({"rows": len(tr), "seconds": time.perf_counter() - t, "compiles": c.compiles,
                  "programs": list(names), "shape_terms": est.model_.shapes is not None,
                  "k": int(est.k_), "r2": r2})
print(json.dumps(folds))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1003)
    ap.add_argument("--baseline", default=None, help="another checkout, run first")
    ap.add_argument("--data", choices=("paper", "diabetes"), default="paper",
                    help="the paper's g (--n rows) or scikit-learn's diabetes table")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "cv_folds.json"))
    args = ap.parse_args()
    roots = checkouts(args.baseline)
    env = dict(os.environ, JAXTREE_COMPILATION_CACHE="0")
    runs = {}
    for name, root in roots.items():
        runs[name] = run_child(CHILD, root, str(args.n), args.data, env=env)
        for i, f in enumerate(runs[name]):
            print(f"{name:9s} fold {i}: {f['rows']} rows, {f['compiles']:2d} compiled "
                  f"{sorted(set(f['programs'])) if i else '(first)'}, {f['seconds']:.2f} s, "
                  f"shape terms {f['shape_terms']}, k {f.get('k', '?')}", flush=True)
    out = pathlib.Path(args.out).resolve()
    out.write_text(json.dumps({"n": args.n, "data": args.data, "roots": roots, "runs": runs},
                              indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
