"""Mutation testing of jaxtree: does the test suite catch planted bugs?

For each mutant (one textual replacement in one module of ``jaxtree/``) this script copies
the package to a temporary directory, applies the mutation there, and runs a pytest
selection with ``PYTHONPATH`` pointing at the copy and the working directory set to the
temporary directory (so neither the checkout's ``jaxtree/`` on ``sys.path[0]`` nor an
editable install shadows the copy; a check at start-up asserts which package is
imported). The shared working tree is never written to.

A mutant is *killed* when pytest fails, *survived* when it passes, *timeout* when it runs
past ``--timeout`` seconds, and *n/a* when its pattern is not found exactly once in the
current source (the code moved on: update the pattern).

Usage (from the repository root)::

    python tools/mutate.py --list
    python tools/mutate.py                                  # every mutant, its own tests
    python tools/mutate.py --only joint_no_steps clip_dropped --timeout 300
    python tools/mutate.py --tests tests/test_oracles.py --out benchmarks/results/mutation.md

Test selection. Without ``--tests`` each mutant runs its own ``Mutant.tests`` (the fast
default-suite oracles aimed at that code, a few seconds to a minute each), falling back to
``DEFAULT_TESTS``; ``--tests`` runs one selection for every mutant. All selections are
default-suite tests (none marked slow), so a mutant killed here is caught by the default
suite. Per-mutant selections exist because the 2-core machine is shared: the whole
selection under load ran past the time limit for mutants that a targeted oracle kills in
seconds (issue 16's timeouts).

No dependency beyond the test extra (pytest).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import NamedTuple

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "jaxtree"
DEFAULT_TESTS = ("tests/test_program.py", "tests/test_oracles_search.py", "tests/test_oracles.py",
                 "tests/test_search.py", "tests/test_properties.py")


class Mutant(NamedTuple):
    name: str
    module: str  # file under jaxtree/
    old: str  # must occur exactly once
    new: str
    what: str
    tests: tuple = ()  # its own pytest selection (default-suite node ids); () -> DEFAULT_TESTS


# Fast default-suite selections aimed at each part of the core.
_REF = ("tests/test_search.py::test_matches_reference_iteration_by_iteration",)
_ORACLES = ("tests/test_oracles.py",)
_SEARCH_ORACLES = "tests/test_oracles_search.py::"
_LBFGS_BEST = (_SEARCH_ORACLES + "test_lbfgs_returns_the_best_iterate_for_every_step_budget",)
_STEP_REFINES = (_SEARCH_ORACLES + "test_default_step_refines_beyond_the_inserted_candidate",
                 "tests/test_oracles.py::test_default_estimator_refines")
_REPLACE_KEPT = (_SEARCH_ORACLES + "test_replacement_is_kept_only_when_it_lowers_the_loss",)
_PAIR = ("tests/test_search_moves.py::"
         "test_backfit_finds_a_planted_pure_interaction_that_greedy_misses",)


MUTANTS = [
    # ---- refine: the default joint refinement and coordinate descent
    Mutant("joint_no_steps", "refine.py",
           "loss(params, program, data, cache), steps=steps)",
           "loss(params, program, data, cache), steps=0)",
           "refine.joint runs L-BFGS with zero iterations", tests=_ORACLES),
    Mutant("lbfgs_no_iterations", "refine.py", "& (i < steps)", "& (i < 0)",
           "lbfgs_box never steps (in-memory and streamed joint)", tests=_ORACLES),
    Mutant("projection_dropped", "refine.py", "projection_box(w, -1.0, 1.0)",
           "projection_box(w, -3.0, 3.0)", "joint refinement leaves the box abs(w) <= 1", tests=_ORACLES),
    Mutant("joint_grad_sign", "refine.py", "gl = -2.0 * jnp.sum(kl * zb",
           "gl = 2.0 * jnp.sum(kl * zb", "analytic weight gradient has the wrong sign", tests=_ORACLES),
    Mutant("joint_intercept_grad_zero", "refine.py", "(-2.0 * jnp.sum(wres)).astype",
           "(0.0 * jnp.sum(wres)).astype", "intercept gradient dropped", tests=_ORACLES),
    Mutant("lbfgs_keeps_last", "refine.py", "better = value < best[1]",
           "better = jnp.asarray(True)", "returns the last iterate, not the best", tests=_LBFGS_BEST),
    Mutant("coordinate_noop", "refine.py",
           "w = jnp.where(fit.degenerate, w_old, fit.weight)", "w = w_old",
           "coordinate update keeps every weight", tests=_ORACLES),
    Mutant("coordinate_order", "refine.py", "d = slots[i % max_leaves]",
           "d = slots[(max_leaves - 1 - i) % max_leaves]",
           "coordinate descent visits leaves in descending order", tests=_REF),
    # ---- scoring: the closed form, the rows, the merge, the tie rule
    Mutant("closed_form_sign", "scoring.py", "w = jnp.clip(safe_div(mo.mrs,",
           "w = jnp.clip(-safe_div(mo.mrs,", "flip the sign of w' in closed_form", tests=_REF),
    Mutant("clip_dropped", "scoring.py", "mo.mss)), -1.0, 1.0)", "mo.mss)), -9.0, 9.0)",
           "closed form not clipped to [-1, 1]", tests=_REF),
    Mutant("rows_targets_swapped", "scoring.py",
           "r = jnp.stack([jnp.broadcast_to(e, kl.shape), e + kc], 1)",
           "r = jnp.stack([e + kc, jnp.broadcast_to(e, kl.shape)], 1)",
           "swap the + and * targets in scoring._rows", tests=_REF),
    Mutant("rows_kd_not_kdcd", "scoring.py", "u = jnp.stack([kl, kc], 1)",
           "u = jnp.stack([kl, kl], 1)", "'*' regressor uses k_d instead of k_d*c_d", tests=_REF),
    Mutant("merge_no_cross_term", "scoring.py", "mrs=a.mrs + b.mrs + dr * ds * f",
           "mrs=a.mrs + b.mrs", "Chan merge drops the co-moment correction", tests=_REF),
    Mutant("merge_no_rr_term", "scoring.py", "mrr=a.mrr + b.mrr + dr * dr * f",
           "mrr=a.mrr + b.mrr", "Chan merge drops the r variance correction", tests=_REF),
    Mutant("css_uncentred", "scoring.py", "jnp.maximum(s2 - s1 * sbar, 0)",
           "jnp.maximum(s2, 0)", "Css not centred", tests=_REF),
    Mutant("intercept_relative", "scoring.py", "fit.intercept + program.intercept",
           "fit.intercept", "new intercept left relative to the old one", tests=_REF),
    Mutant("tie_highest_index", "scoring.py", "idx = jnp.argmax(flat <= thr).astype(jnp.int32)",
           "idx = (flat.size - 1 - jnp.argmax((flat <= thr)[::-1])).astype(jnp.int32)",
           "tie-break picks the highest flat index", tests=_REF),
    Mutant("tie_tolerance_wide", "scoring.py", "thr = best + tie_rtol(flat.dtype) * scores.rss",
           "thr = best + 1e-3 * scores.rss", "ties within 1e-3 of the RSS", tests=_REF),
    Mutant("op_codes_swapped", "scoring.py", "jnp.where(row % 2 == 0, prog.ADD, prog.MUL)",
           "jnp.where(row % 2 == 0, prog.MUL, prog.ADD)", "chosen op labelled the other way", tests=_REF),
    # ---- program: evaluation, multipliers, insertion
    Mutant("insert_off_by_one", "program.py",
           "left = put(put(put(p.left, m, -1), m + 1, -1), slot, m)",
           "left = put(put(put(p.left, m, -1), m + 1, -1), slot, m + 1)",
           "program.insert: left child points at the new leaf", tests=_REF),
    Mutant("eval_add_as_sub", "program.py", "jnp.where(op == ADD, lv + rv,",
           "jnp.where(op == ADD, lv - rv,", "'+' node evaluates a difference", tests=_REF),
    Mutant("multiplier_all_parents", "program.py",
           "under_mul = (parent >= 0) & (program.op[par] == MUL)", "under_mul = (parent >= 0)",
           "leaf multipliers multiply by siblings under '+' too", tests=_REF),
    Mutant("root_multiplier", "program.py", "k0 = jnp.zeros_like(v).at[0].set(1.0)",
           "k0 = jnp.zeros_like(v).at[0].set(0.5)", "root multiplier 0.5", tests=_REF),
    # ---- search: the step
    Mutant("search_steps_zero", "search.py", "refine_.joint(p, data, basis, steps=config.refine_steps)",
           "refine_.joint(p, data, basis, steps=0)", "search.step calls joint with 0 steps", tests=_STEP_REFINES),
    Mutant("search_loss_scale", "search.py", "sse_loss = (sse / n).astype(dt)",
           "sse_loss = (sse / (1.0 + n)).astype(dt)", "unrefined loss mis-normalised", tests=_REF),
    Mutant("pair_rule_inverted", "search.py", "((rss - sse) > 2 * (rss - single_sse))",
           "((rss - sse) < 2 * (rss - single_sse))", "pair taken when it is worse per operation", tests=_PAIR),
    Mutant("replace_keeps_worse", "search.py", "(cand_loss < cur * (1 - rtol))",
           "(cand_loss > cur * (1 - rtol))", "replacement kept when the loss rose", tests=_REPLACE_KEPT),
]


_SOURCE = [PACKAGE]  # main() points this at a snapshot taken once per run


def _copy_package(dest: pathlib.Path) -> pathlib.Path:
    target = dest / "jaxtree"
    shutil.copytree(_SOURCE[0], target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return target


def _snapshot(dest: pathlib.Path) -> pathlib.Path:
    """Copies the package once, so that every mutant of a run mutates the same source even
    while others edit the shared working tree; the snapshot must import."""
    snap = _copy_package(dest)
    _check_import(dest)
    _SOURCE[0] = snap
    return snap


def _env(copy_root: pathlib.Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(copy_root) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _check_import(copy_root: pathlib.Path) -> None:
    out = subprocess.run([sys.executable, "-c", "import jaxtree; print(jaxtree.__file__)"],
                         cwd=copy_root, env=_env(copy_root), capture_output=True, text=True,
                         timeout=300)
    path = out.stdout.strip()
    if not path.startswith(str(copy_root)):
        raise SystemExit(f"the copy is not what gets imported: jaxtree came from {path!r} "
                         f"(stderr: {out.stderr[-500:]})")


_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)


def run_one(m: Mutant | None, tests: list[str], timeout: float) -> dict:
    """Applies ``m`` (None: the unmodified baseline) in a copy and runs ``tests``."""
    with tempfile.TemporaryDirectory(prefix="jaxtree-mutant-") as tmp:
        tmp = pathlib.Path(tmp)
        pkg = _copy_package(tmp)
        if m is not None:
            path = pkg / m.module
            text = path.read_text()
            count = text.count(m.old)
            if count != 1:
                return {"status": "n/a", "first": f"pattern found {count} times", "seconds": 0.0}
            path.write_text(text.replace(m.old, m.new))
        _check_import(tmp)
        cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
               *[str(ROOT / t) for t in tests]]
        t0 = time.time()
        proc = subprocess.Popen(cmd, cwd=tmp, env=_env(tmp), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # our own child's process group only
            out, _ = proc.communicate()
            return {"status": "timeout", "first": "", "seconds": time.time() - t0}
        secs = time.time() - t0
        found = _FAILED.findall(out)
        first = found[0] if found else ""
        first = first[first.find("tests/"):] if "tests/" in first else first
        # 0: all passed; 1: a test failed; 2-4: interrupted, internal or usage error
        # (e.g. the mutant breaks the import): the bug is caught either way; 5: no tests.
        if proc.returncode == 0:
            status = "survived"
        elif proc.returncode == 1:
            status = "killed"
        elif proc.returncode == 5:
            status = "no tests"
        else:
            status = f"killed (rc={proc.returncode})"
            first = first or (out.strip().splitlines() or [""])[-1][:120]
        return {"status": status, "first": first, "seconds": secs}


def table(rows: list[tuple[Mutant, dict]]) -> str:
    lines = ["| mutant | module | planted bug | result | first failing test | s | tests run |",
             "|---|---|---|---|---|---|---|"]
    for m, r in rows:
        sel = "<br>".join(r.get("tests", ()))
        lines.append(f"| {m.name} | {m.module} | {m.what} | {r['status']} | "
                     f"{r['first'].replace('|', '/') or '-'} | {r['seconds']:.0f} | {sel} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tests", nargs="+", default=None,
                    help="pytest paths relative to the repository root, run in this order "
                         "with -x for every mutant (put the fast, strong files first); "
                         "default: each mutant's own selection (Mutant.tests), else "
                         + " ".join(DEFAULT_TESTS))
    ap.add_argument("--only", nargs="+", help="names of the mutants to run")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per mutant")
    ap.add_argument("--baseline", action="store_true",
                    help="first run the selection on an unmodified copy (must pass)")
    ap.add_argument("--out", help="also write the table (markdown) to this file")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    args = ap.parse_args(argv)

    chosen = [m for m in MUTANTS if not args.only or m.name in args.only]
    load0 = os.getloadavg()
    if args.only and len(chosen) != len(args.only):
        unknown = set(args.only) - {m.name for m in MUTANTS}
        ap.error(f"unknown mutant(s) {sorted(unknown)}; see --list")
    if args.list:
        for m in chosen:
            print(f"{m.name:28s} {m.module:12s} {m.what}  [{' '.join(m.tests) or 'default'}]")
        return 0
    snap_dir = tempfile.TemporaryDirectory(prefix="jaxtree-snapshot-")
    _snapshot(pathlib.Path(snap_dir.name))

    def selection(m):
        return list(args.tests or m.tests or DEFAULT_TESTS)

    if args.baseline:
        # The unmodified package must pass every selection that will be run.
        sel = list(dict.fromkeys(t for m in chosen for t in selection(m)))
        r = run_one(None, sel, args.timeout * max(1, len(chosen)))
        print(f"baseline: {r['status']} {r['first']} ({r['seconds']:.0f} s)", flush=True)
        if r["status"] != "survived":
            print("the unmodified package fails the selection: fix that first", file=sys.stderr)
            return 2
    rows = []
    for m in chosen:
        r = run_one(m, selection(m), args.timeout)
        r["tests"] = selection(m)
        rows.append((m, r))
        print(f"{m.name:28s} {r['status']:9s} {r['seconds']:6.0f} s  {r['first']}", flush=True)
    killed = sum(r["status"].startswith("killed") for _, r in rows)
    applicable = sum(r["status"] != "n/a" for _, r in rows)
    tests = " ".join(args.tests) if args.tests else "each mutant's own selection (last column)"
    summary = (f"score: {killed}/{applicable} applicable mutants killed "
               f"({len(rows) - applicable} not applicable); tests: {tests}; "
               f"timeout {args.timeout:.0f} s per mutant; load average before/after: "
               f"{load0[0]:.2f} / {os.getloadavg()[0]:.2f}")
    text = table(rows)
    print()
    print(text)
    print(summary)
    if args.out:
        path = pathlib.Path(args.out)
        path.parent.mkdir(parents=True, exist_ok=True)
        cmd = "python tools/mutate.py " + " ".join(argv if argv is not None else sys.argv[1:])
        path.write_text(f"# Mutation testing\n\nCommand: `{cmd}`\n\n{summary}\n\n{text}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
