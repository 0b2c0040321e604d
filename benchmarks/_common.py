"""Helpers shared by the benchmark scripts (run as ``python benchmarks/NAME.py``)."""

from __future__ import annotations

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    # The checkout's jaxtree, not the installed one: a script run from another checkout (a
    # worktree of an old commit) measured the installed package when only benchmarks/ was
    # on the path (seventy-fourth session: bench_memory.py measured one commit twice).
    sys.path.insert(0, str(ROOT))


def git_commit(path=ROOT) -> str:
    """``git rev-parse HEAD`` of the checkout at ``path`` (this one by default);
    ``"unknown"`` if that fails."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=path, capture_output=True,
                             text=True, timeout=10)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except Exception:  # noqa: BLE001 - git missing, not a repository, ...
        pass
    return "unknown"


def checkouts(baseline=None) -> dict:
    """The checkouts an old-against-new benchmark runs: ``{"baseline": DIR, "this": ROOT}``
    (the baseline first) with a ``--baseline DIR``, else ``{"this": ROOT}``."""
    this = {"this": str(ROOT)}
    return {"baseline": str(baseline), **this} if baseline else this


def child_json(argv, *, env=None, cwd=None) -> dict:
    """``python *argv`` in a fresh process (``env``: its environment, default this one's;
    ``cwd``: its directory, default this one's); the JSON object its last line of output
    prints. A failing child raises RuntimeError with the end of its standard error."""
    import json
    import sys

    out = subprocess.run([sys.executable, *map(str, argv)], env=env, cwd=cwd,
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"child process failed (exit {out.returncode}):\n"
                           f"{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_child(code: str, *args: str, env=None) -> dict:
    """``python -c code *args`` in a fresh process (:func:`child_json`)."""
    return child_json(["-c", code, *args], env=env)


def environment() -> dict:
    """What every benchmark record carries: date, commit, versions, device, cores, x64."""
    import datetime
    import os
    import platform

    import jax
    import numpy as np

    import jaxtree

    dev = jax.devices()[0]
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": git_commit(),
        "jaxtree": jaxtree.__version__,
        "jax": jax.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "device": f"{dev.platform}:{getattr(dev, 'device_kind', '')}",
        "n_devices": jax.device_count(),
        "cpu_count": os.cpu_count(),
        "jax_enable_x64": bool(jax.config.jax_enable_x64),
    }


def table_benchmark(doc: str, run, tables: str, folds: int, out_name: str, argv=None) -> list:
    """The command line of a benchmark over public tables and folds: ``--tables`` (comma
    separated names of ``bench_accuracy.TABLES``), ``--folds`` and ``--out`` (default
    ``benchmarks/results/<out_name>``); ``run(table, folds)`` returns the table's result rows,
    written as ``{"environment": ..., "results": rows}`` (the record of ``bench_accuracy``)."""
    import argparse
    import json
    import sys

    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--tables", default=tables)
    ap.add_argument("--folds", type=int, default=folds)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / out_name))
    args = ap.parse_args(argv)
    rows = [r for t in args.tables.split(",") for r in run(t, args.folds)]
    env = {**environment(), "folds": args.folds,
           "command": " ".join(["python", *sys.argv])}
    with open(args.out, "w") as f:
        json.dump({"environment": env, "results": rows}, f, indent=1)
    print("wrote", args.out)
    return rows
