"""Where the first fit's compile time goes, per search step variant (issue 27, item 1).

For the demo's table (the paper's function, n = 1,000, p = 10, k = 10) it lowers the search
step of each variant (``--variants``: the greedy step without refinement, with L-BFGS, and the
backfit step with and without L-BFGS), compiles it once under JAX's profiler and reports:

* the XLA compile time, split into the fusion emitters (``FusionCompiler::Compile``: each
  fused kernel through MLIR), LLVM code generation (``JitCompiler::Compile``) and the HLO
  passes, from the profiler's trace events;
* the size of the optimised program: HLO instructions, fusion instructions and the number of
  kernels compiled.

Compile time is per kernel (about 30 ms each on the 2-core CPU), so the kernel count is the
figure to cut. Run from the repository root::

    python benchmarks/bench_compile.py                 # ~2 minutes on 2 CPU cores
    python benchmarks/bench_compile.py --variants backfit-optax

Writes ``compile.json`` into ``--out`` (default ``benchmarks/results``).
"""

from __future__ import annotations

import argparse
import collections
import glob
import gzip
import json
import os
import pathlib
import re
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

os.environ.setdefault("JAXTREE_COMPILATION_CACHE", "0")  # compile for real, every run

import jax  # noqa: E402

import jaxtree  # noqa: E402
from jaxtree import search  # noqa: E402
from jaxtree.datasets import paper_synthetic  # noqa: E402

VARIANTS = {
    "greedy-none": dict(search="greedy", refine=None),
    "greedy-optax": dict(search="greedy", refine="optax"),
    "backfit-none": dict(search="backfit", refine=None),
    "backfit-optax": dict(search="backfit", refine="optax"),
}
PHASES = {
    "fusion emitters": "FusionCompiler::Compile",
    "LLVM codegen": "JitCompiler::Compile",
    "HLO passes": ("HLO passes through layout assignment", "HLO passes after layout assignment"),
}


def step_arguments():
    """The arguments of the default fit's search step on the demo table, captured at the
    fit's first call of the step (which is then stopped: nothing is compiled)."""
    captured = {}
    original = search.step_cached

    class Captured(Exception):
        pass

    def record(*args):
        captured["args"] = args
        raise Captured

    search.step_cached = record
    try:
        x, y = paper_synthetic(n=1000, p=10, seed=0)
        # the backfit search runs its step as one program (the greedy L-BFGS step runs as
        # two, search.insert_step then search.finish_step, and would not reach step_cached)
        jaxtree.TreeRegressor(k=10, search="backfit", validation_fraction=None).fit(x, y)
    except Captured:
        pass
    finally:
        search.step_cached = original
    return captured["args"]


def config_for(cfg, variant: dict, p: int, q: int):
    base = search.search_config(variant["search"], cfg.max_k, n_candidates=p * q)
    return base._replace(refine=variant["refine"], buckets=cfg.buckets,
                         precision=cfg.precision, refine_steps=cfg.refine_steps,
                         coordinate_sweeps=cfg.coordinate_sweeps)


def program_size(hlo: str) -> dict:
    instructions = len(re.findall(r"^\s+(?:ROOT )?%\S+ = ", hlo, re.M))
    fusions = len(re.findall(r" fusion\(", hlo))
    return {"hlo_instructions": instructions, "fusion_instructions": fusions}


def trace_phases(directory: str) -> dict:
    files = glob.glob(os.path.join(directory, "**", "perfetto_trace.json.gz"), recursive=True)
    if not files:
        return {}
    trace = json.load(gzip.open(files[0]))
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    total, count = collections.Counter(), collections.Counter()
    for e in events:
        if e.get("ph") == "X":
            total[e.get("name", "")] += e.get("dur", 0) / 1e6
            count[e.get("name", "")] += 1
    out = {}
    for label, names in PHASES.items():
        names = (names,) if isinstance(names, str) else names
        out[label + " (s)"] = round(sum(v for k, v in total.items()
                                        if any(k.startswith(n) for n in names)), 2)
    out["kernels compiled"] = count["FusionCompiler::Compile"]
    return out


def measure(name: str, args) -> dict:
    program, data, basis, cfg, limit = args
    p = data.x.shape[-1]
    config = config_for(cfg, VARIANTS[name], p, basis.q)
    lowered = search.step_jit.lower(program, data, basis, config, limit)
    with tempfile.TemporaryDirectory() as d:
        jax.profiler.start_trace(d, create_perfetto_trace=True)
        t0 = time.perf_counter()
        compiled = lowered.compile()
        seconds = time.perf_counter() - t0
        jax.profiler.stop_trace()
        phases = trace_phases(d)
    row = {"variant": name, "compile (s)": round(seconds, 2), **phases,
           **program_size(compiled.as_text())}
    return row


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    ns = ap.parse_args(argv)
    args = step_arguments()
    rows = []
    for name in ns.variants.split(","):
        row = measure(name, args)
        rows.append(row)
        print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    out = pathlib.Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "jax": jax.__version__,
            "cpus": os.cpu_count(), "load average": os.getloadavg()}
    (out / "compile.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
