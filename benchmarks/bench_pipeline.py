"""Old commit against new: the warm fit time of the settings users meet, in one process per
checkout, alternating, so that the fit pipeline's redesign (issue 26) is judged on the same
machine state.

    python benchmarks/bench_pipeline.py --old /path/to/old/checkout [--repeats 5]

Each case is fitted once (compilation), then ``--repeats`` times; the minimum is quoted.
Runs in a child process per checkout (``PYTHONPATH`` set to it) and round, alternating old and
new, and writes ``benchmarks/results/pipeline_speed_<date>.json``. Predictions of old and new
are compared too (max relative difference).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]

CHILD = r'''
import json, sys, time
import numpy as np
import jaxtree

def table(n, p, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p))
    y = (np.sin(3 * X[:, 0]) * X[:, 1] + X[:, 2] ** 2 + 0.3 * np.exp(-20 * (X[:, 3] - .5) ** 2)
         + 0.05 * rng.normal(size=n))
    return X.astype(np.float32), y.astype(np.float32)

cases = {
    "paper k=10, n=2000, p=4": (lambda: jaxtree.TreeRegressor.paper(k=10), 2000, 4),
    "default, n=2000, p=8": (lambda: jaxtree.TreeRegressor(), 2000, 8),
    "default, n=50000, p=8 (shapes='auto')": (lambda: jaxtree.TreeRegressor(), 50000, 8),
}
repeats = int(sys.argv[1])
out = {}
for name, (make, n, p) in cases.items():
    X, y = table(n, p, 0)
    make().fit(X, y)  # compile
    times = []
    for _ in range(repeats):
        t = time.perf_counter(); est = make().fit(X, y); times.append(time.perf_counter() - t)
    out[name] = dict(times=times, pred=est.predict(X[:200]).tolist(), k=int(est.k_))
print("JSON" + json.dumps(out))
'''


def run(checkout: str, repeats: int) -> dict:
    env = dict(os.environ, PYTHONPATH=checkout)
    res = subprocess.run([sys.executable, "-c", CHILD, str(repeats)], env=env, cwd=checkout,
                         capture_output=True, text=True, timeout=3600)
    line = [ln for ln in res.stdout.splitlines() if ln.startswith("JSON")]
    if res.returncode or not line:
        raise RuntimeError(f"{checkout}: {res.stderr[-2000:]}")
    return json.loads(line[0][4:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="checkout of the old commit")
    ap.add_argument("--new", default=str(ROOT), help="checkout of the new commit (this one)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    times = {"old": {}, "new": {}}
    last = {}
    for _ in range(args.rounds):
        for which in ("old", "new"):
            got = run(getattr(args, which), args.repeats)
            last[which] = got
            for name, r in got.items():
                times[which].setdefault(name, []).extend(r["times"])
    rows = []
    print(f"{'case':42s} {'old (s)':>9s} {'new (s)':>9s} {'new/old':>8s} {'max rel diff':>13s} k")
    for name in times["old"]:
        o, n = min(times["old"][name]), min(times["new"][name])
        po, pn = np.asarray(last["old"][name]["pred"]), np.asarray(last["new"][name]["pred"])
        diff = float(np.max(np.abs(pn - po)) / max(np.max(np.abs(po)), 1e-30))
        ks = (last["old"][name]["k"], last["new"][name]["k"])
        rows.append(dict(case=name, old_s=o, new_s=n, ratio=n / o, max_rel_diff=diff, k=ks))
        print(f"{name:42s} {o:9.3f} {n:9.3f} {n / o:8.3f} {diff:13.2e} {ks}")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _common import environment, git_commit  # noqa: E402

    rec = dict(environment(), old=subprocess.run(["git", "rev-parse", "HEAD"], cwd=args.old,
                                                 capture_output=True, text=True).stdout.strip(),
               new=git_commit(), repeats=args.repeats, rounds=args.rounds, rows=rows,
               command="python benchmarks/bench_pipeline.py --old OLD_CHECKOUT")
    out = ROOT / "benchmarks" / "results" / f"pipeline_speed_{datetime.date.today()}.json"
    out.write_text(json.dumps(rec, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
