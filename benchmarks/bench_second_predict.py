"""A second process's fit and prediction, from a cache one earlier process filled.

The demo's fit (``TreeRegressor(k=10)`` on the paper's g, n = 1,000, p = 10), then
``est.predict(X[:200])``, in fresh Python processes that share one new ``XDG_CACHE_HOME``
(jaxtree's compilation and executable caches on): the first process fills the cache, each
later one times ``fit`` and ``predict`` and lists JAX's monitoring events (tracing,
lowering, compiling: none where the executable cache holds every program).

``--baseline DIR`` does the same for another checkout (``git worktree add DIR <commit>``),
on a cache of its own, the two alternating ``--rounds`` times.

    python benchmarks/bench_second_predict.py --baseline /tmp/old --rounds 4

Writes ``benchmarks/results/second_predict.json``.
"""

import argparse
import json
import os
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _common import ROOT, checkouts, run_child  # noqa: E402

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import jax, numpy as np, jaxtree
from jaxtree.datasets import paper_synthetic
ev = {}
def listen(event, d, **kw):
    k = event.rsplit("/", 1)[-1] + " " + str(kw.get("fun_name", ""))
    ev[k] = ev.get(k, 0) + d
jax.monitoring.register_event_duration_secs_listener(listen)
X, y = paper_synthetic(n=1000, p=10, seed=0)
t = time.perf_counter(); est = jaxtree.TreeRegressor(k=10).fit(X, y); fit = time.perf_counter() - t
t = time.perf_counter(); est.predict(X[:200]); pred = time.perf_counter() - t
print(json.dumps({"fit": fit, "predict": pred, "events": ev}))
"""


def run(root: str, cache: str) -> dict:
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    env.pop("JAXTREE_COMPILATION_CACHE", None)
    return run_child(CHILD, root, env=env)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", default=None, help="another checkout, run alternately")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    roots = checkouts(args.baseline)
    caches = {name: tempfile.mkdtemp(prefix=f"jaxtree_{name}_") for name in roots}
    for name, root in roots.items():
        run(root, caches[name])  # the first process fills the cache
    runs = {name: [] for name in roots}
    for _ in range(args.rounds):
        for name, root in roots.items():
            r = run(root, caches[name])
            runs[name].append(r)
            print(f"{name:9s} fit {r['fit']:.3f} s, predict {r['predict']:.3f} s, "
                  f"together {r['fit'] + r['predict']:.3f} s", flush=True)
    out = ROOT / "benchmarks" / "results" / "second_predict.json"
    out.write_text(json.dumps({"roots": roots, "runs": runs}, indent=1))
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
