"""Where a warm fit's time goes, program by program, on a ``bench_cost`` case (issue 29).

One process: the case's training rows (``bench_cost.load``, its 80% split), one first fit
(compiles; not timed), then ``--repeats`` warm fits with every call of jaxtree's cached
programs (:class:`jaxtree._executables.cached`: the search steps, the shape stage, the basis
values, the held-out errors) waited for and timed. Waiting after each call removes the
overlap of host and device work, so the total is a little above a plain warm fit; the
programs' shares are what this is for. The last warm fit's table is printed::

    python benchmarks/bench_fit_programs.py --case diamonds_1e4
    python benchmarks/bench_fit_programs.py --case airline_1e5 --repeats 3
    python benchmarks/bench_fit_programs.py --case table:wage

Writes ``benchmarks/results/fit_programs_<case>.json`` (``--out``): per program its calls,
seconds and milliseconds a call, and the fit's wall time, for each warm fit. Run it on a
quiet machine.
"""

from __future__ import annotations

import argparse
import collections
import json
import pathlib
import sys
import time
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import jax  # noqa: E402

import bench_cost  # noqa: E402
from _common import environment  # noqa: E402
from jaxtree import _executables  # noqa: E402


def timed_fits(case: str, repeats: int) -> list:
    """Each warm fit's ``{"wall_s", "programs": {name: {"calls", "s"}}}``."""
    if case.startswith("table:"):  # one of bench_accuracy's tables, all its rows
        task, Xtr, ytr, _ = bench_cost.acc.load_table(case[6:], None)
        ytr = np.asarray(ytr)
    else:
        task, Xtr, ytr = bench_cost.split(case)[:3]
    make = lambda: bench_cost.acc.jaxtree_model(task)  # noqa: E731
    make().fit(Xtr, ytr)  # compiles (or loads) every program

    seconds, calls = collections.defaultdict(float), collections.Counter()
    plain = _executables.cached.__call__

    def waited(self, *args):
        t = time.perf_counter()
        out = jax.block_until_ready(plain(self, *args))
        seconds[self.name] += time.perf_counter() - t
        calls[self.name] += 1
        return out

    runs = []
    _executables.cached.__call__ = waited
    try:
        for _ in range(repeats):
            seconds.clear()
            calls.clear()
            t = time.perf_counter()
            make().fit(Xtr, ytr)
            wall = time.perf_counter() - t
            runs.append({"wall_s": wall,
                         "programs": {k: {"calls": calls[k], "s": seconds[k]} for k in seconds}})
    finally:
        _executables.cached.__call__ = plain
    return runs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="diamonds_1e4",
                        help="one of bench_cost's cases " + ",".join(bench_cost.CASES)
                        + ", or table:NAME for all rows of a bench_accuracy table")
    parser.add_argument("--repeats", type=int, default=2, help="warm fits")
    parser.add_argument("--out", default=None,
                        help="default: benchmarks/results/fit_programs_<case>.json")
    args = parser.parse_args(argv)
    if args.case not in bench_cost.CASES and args.case[6:] not in bench_cost.acc.TABLES:
        parser.error(f"unknown case {args.case!r}")
    warnings.simplefilter("ignore")
    runs = timed_fits(args.case, args.repeats)
    last = runs[-1]
    inside = sum(v["s"] for v in last["programs"].values())
    print(f"{args.case}: warm fit {last['wall_s']:.3f} s (each program waited for), "
          f"{inside:.3f} s in jaxtree's programs")
    for name, v in sorted(last["programs"].items(), key=lambda kv: -kv[1]["s"]):
        per_call = v["s"] / v["calls"] * 1e3
        print(f"{v['s']:8.3f} s  {v['calls']:4d} calls  {per_call:8.1f} ms  {name}")
    out = pathlib.Path(args.out or ROOT / "benchmarks" / "results"
                       / f"fit_programs_{args.case.replace(':', '_')}.json")
    env = {**environment(), "command": " ".join(
        ["python", "benchmarks/bench_fit_programs.py"]
        + list(sys.argv[1:] if argv is None else argv))}
    out.write_text(json.dumps({"environment": env, "case": args.case, "runs": runs}, indent=2))
    return runs


if __name__ == "__main__":
    main()
