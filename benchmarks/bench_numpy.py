"""Speed baseline a skeptic would accept: the greedy search vectorised in numpy.

The loop reference (``jaxtree.reference``) is deliberately slow (one least-squares
problem per candidate), so beating it says little. This script implements the SAME
algorithm as the JAX engine with ``refine="coordinate"`` in vectorised numpy, float64 and
float32:

* all ``2*D*p*q`` candidates of an iteration from three matrix products per chunk of rows,
  ``(w U) @ Phi``, ``(w U^2) @ Phi^2`` and ``(w U Rc) @ Phi`` (``U``, ``R`` the ``2D`` rows
  of regressor multipliers and targets of DESIGN.md section 3), with the target rows
  centred per chunk and chunks merged with Chan's formulas (as ``jaxtree.scoring``);
* the same closed form (``w' = clip(Crs/Css, -1, 1)``, degenerate below
  ``css_rtol * sum w s^2``) and tie rule (lowest flat index within ``tie_rtol * RSS``);
* tree layout, insertion, evaluation and the path walk of Algorithm 2 from
  ``jaxtree.reference`` (its ``insert``, ``leaves``, ``path_to``, ``evaluate_subtree``);
  the coordinate-descent refinement is the reference's, written here without its float64
  cast so that the float32 variant stays float32.

The basis values ``Phi`` are computed once before timing and held in memory (numpy's best
case); the JAX engine is timed as a user runs it (``TreeRegressor.fit``, basis evaluated
chunk by chunk in every iteration).

Checks first: the numpy search makes the same choices as the JAX engine
(``refine="coordinate"``) at the paper setting (n=250, p=100, q=40, k=10) and at n=1e5,
p=20. Then the race, median of ``--repeats`` warm fits on every side (JAX compilation
reported apart as first-fit time minus the warm median): JAX coordinate and default optax
(float32), numpy coordinate (float64 and float32), and the loop reference at the paper
setting (fewer repeats: it takes minutes).

Run from the repository root. ``OPENBLAS_CORETYPE`` / ``OPENBLAS_L2_SIZE`` change numpy's
BLAS kernel; unset them for this command only::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_numpy.py
    ... python benchmarks/bench_numpy.py --quick     # small sizes, about a minute
    # the n >= 1e5 race as quoted in BENCHMARKS.md: numpy on 1 BLAS thread, numpy and JAX
    # fits alternating so that load from other jobs falls on both, JAX also with the basis
    # held (cache_basis=True) like numpy
    ... python benchmarks/bench_numpy.py --repeats 5 --large-only --numpy-threads 1 \
            --interleave --jax-cache-basis --stem numpy_race_interleaved

BLAS threads: on a busy 2-core machine OpenBLAS's two spinning threads can run a thin
product 40x slower than one thread (measured), which inflates numpy's time; time numpy at
several thread counts (``--numpy-threads 1 default``, the fastest is kept) or at one thread.

The JSON records those variables, the BLAS kernel (threadpoolctl) and the environment.
Outputs: a table on stdout, ``benchmarks/results/numpy_race.json`` and ``.md``
(``numpy_race_quick.*`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxtree
from jaxtree import reference as R
from jaxtree import scoring

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _common import environment  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHUNK = 4096


def blas_info():
    try:
        import threadpoolctl
    except ImportError:
        return "unknown (threadpoolctl not installed)"
    return [{k: d.get(k) for k in ("internal_api", "architecture", "num_threads", "version")}
            for d in threadpoolctl.threadpool_info() if d.get("user_api") == "blas"]


# --------------------------------------------------------------------- numpy greedy search


def _multipliers(tree, slot, phi):
    """Algorithm 2 (``reference.leaf_multipliers``) without its float64 cast."""
    n = phi.shape[0]
    b = np.zeros(n, phi.dtype)
    k = np.ones(n, phi.dtype)
    for node, direction in R.path_to(tree, slot):
        other = tree.right[node] if direction == "left" else tree.left[node]
        val = R.evaluate_subtree(tree, int(other), phi)
        if tree.op[node] == R.ADD:
            b = b + val * k
        else:
            k = val * k
    return b, k


def _solve(r, s, sw, css_rtol):
    """``reference._solve`` in the input dtype: ``(w, a, degenerate)``."""
    nw = sw.sum()
    rm, sm = (sw * r).sum() / nw, (sw * s).sum() / nw
    rc, sc = r - rm, s - sm
    css, crs = (sw * sc * sc).sum(), (sw * rc * sc).sum()
    if css <= css_rtol * (sw * s * s).sum():
        return 0.0, rm, True
    w = float(np.clip(crs / css, -1.0, 1.0))
    return w, rm - w * sm, False


def refine_coordinate(tree, phi, y, sw, sweeps, css_rtol):
    """``reference.refine_coordinate``, dtype preserved (same visiting order and rules)."""
    new = tree.copy()
    for _ in range(sweeps):
        for slot in R.leaves(new):
            b, k = _multipliers(new, slot, phi)
            w, a, degenerate = _solve(y - b, k * phi[:, new.feature[slot], new.basis[slot]],
                                      sw, css_rtol)
            if not degenerate:
                new.weight[slot] = w
                new.intercept = float(a)
            else:
                t = R.evaluate_subtree(new, 0, phi)
                new.intercept = float((sw * (y - t)).sum() / sw.sum())
    return new


def _merge(a, b):
    """Chan et al.'s pairwise merge of (n, rbar, sbar, mrr, mss, mrs)."""
    if a is None:
        return b
    n = a[0] + b[0]
    fb, f = b[0] / n, a[0] * b[0] / n
    dr, ds = b[1] - a[1], b[2] - a[2]
    return (n, a[1] + dr * fb, a[2] + ds * fb, a[3] + b[3] + dr * dr * f,
            a[4] + b[4] + ds * ds * f, a[5] + b[5] + dr * ds * f)


def score_all(U, Rr, Phi, Phi2, sw):
    """Centred moments of every candidate: ``2D`` rows x ``p*q`` columns, chunk by chunk."""
    acc = None
    for lo in range(0, Phi.shape[0], CHUNK):
        sl = slice(lo, lo + CHUNK)
        w, u, r = sw[sl], U[:, sl], Rr[:, sl]
        n = w.sum(dtype=np.float64)
        rbar = (r @ w.astype(np.float64) if r.dtype == np.float64
                else r.astype(np.float64) @ w) / n  # O(D*n) row sums in float64
        rc = r - rbar.astype(r.dtype)[:, None]
        wu = u * w
        s1 = wu @ Phi[sl]
        s2 = (wu * u) @ Phi2[sl]
        mrs = (wu * rc) @ Phi[sl]
        sbar = s1 / n.astype(s1.dtype)
        mrr = (w.astype(np.float64) * rc.astype(np.float64) ** 2).sum(1)
        mo = (n, rbar[:, None], sbar.astype(np.float64), mrr[:, None],
              np.maximum(s2 - s1 * sbar, 0).astype(np.float64), mrs.astype(np.float64))
        acc = _merge(acc, mo)
    return acc


def fit_numpy(Phi, y, sw, k, q=40, sweeps=3):
    """The greedy search with coordinate refinement; ``Phi (n, p*q)``, column ``j*q + i``.

    Returns ``(tree, history, flat_choices)`` like :func:`jaxtree.reference.fit`.
    """
    dt = Phi.dtype
    css_rtol, tie_rtol = scoring.css_rtol(dt), scoring.tie_rtol(dt)
    n = Phi.shape[0]
    p = Phi.shape[1] // q
    phi3 = Phi.reshape(n, p, q)
    Phi2 = Phi * Phi
    y, sw = y.astype(dt), sw.astype(dt)
    tree, history, choices = None, [], []
    for it in range(k + 1):
        if tree is None:
            U, Rr = np.ones((1, n), dt), y[None, :]
            slots = [0]
        else:
            slots = R.leaves(tree)
            t = R.evaluate_subtree(tree, 0, phi3)
            e = y - t
            rows_u, rows_r = [], []
            for s in slots:
                b, kd = _multipliers(tree, s, phi3)
                cd = tree.weight[s] * phi3[:, tree.feature[s], tree.basis[s]]
                rows_u += [kd, kd * cd]
                rows_r += [e, e + kd * cd]
            U, Rr = np.stack(rows_u), np.stack(rows_r)
        mo = score_all(U, Rr, Phi, Phi2, sw)
        nw, rbar, sbar, mrr, mss, mrs = mo
        s2 = mss + nw * sbar * sbar
        degenerate = mss <= css_rtol * s2
        w = np.where(degenerate, 0.0, np.clip(mrs / np.where(degenerate, 1.0, mss), -1, 1))
        sse = np.maximum(mrr - 2 * w * mrs + w * w * mss, 0)
        a = rbar - w * sbar
        # RSS of the current tree from row 0 ('+' at the first leaf: r = y - T), as JAX does.
        rss = mrr[0, 0] if tree is None else mrr[0, 0] + nw * rbar[0, 0] ** 2
        flat = sse.ravel()
        idx = int(np.flatnonzero(flat <= flat.min() + tie_rtol * rss)[0])
        row, col = divmod(idx, p * q)
        j, i = divmod(col, q)
        if tree is None:
            tree = R.single_leaf(k, j, i, float(w[row, col]), float(a[row, col]))
            tree.weight = tree.weight.astype(dt)  # keep float32 arithmetic float32
        else:
            op = R.ADD if row % 2 == 0 else R.MUL
            tree = R.insert(tree, slots[row // 2], op, j, i, float(w[row, col]))
            tree.intercept = float(a[row, col])
            tree = refine_coordinate(tree, phi3, y, sw, sweeps, css_rtol)
        choices.append(idx)
        res = y - tree.intercept - R.evaluate_subtree(tree, 0, phi3)
        history.append(float((sw * res * res).sum() / sw.sum()))
    return tree, history, choices


# ------------------------------------------------------------------------------ the race


def scaled_problem(n, p, seed=0):
    """Paper data, scaled exactly as the estimator does (x to [0,1], y to [-1,1])."""
    X, y = jaxtree.datasets.paper_synthetic(n, p=p, seed=seed)
    xs = (X - X.min(0)) / (X.max(0) - X.min(0))
    ys = (y - 0.5 * (y.max() + y.min())) / (0.5 * (y.max() - y.min()))
    return X, y, xs, ys


def design(xs, dtype):
    """``Phi (n, p*q)`` feature-major from the default basis (JAX evaluates it once)."""
    bs = jaxtree.default_basis()
    phi = np.asarray(bs.evaluate(jnp.asarray(xs, dtype)))  # (n, p, q)
    return np.ascontiguousarray(phi.reshape(xs.shape[0], -1)).astype(dtype)


def timed(fn, repeats):
    t0 = time.perf_counter()
    first = fn()
    t_first = time.perf_counter() - t0
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return first, t_first, times


def _blas_threads(n_threads):
    """A context limiting numpy's BLAS to ``n_threads`` (None: leave it as it is)."""
    import contextlib
    if n_threads is None:
        return contextlib.nullcontext()
    import threadpoolctl
    return threadpoolctl.threadpool_limits(n_threads, user_api="blas")


def race_interleaved(n, p, k, repeats, log, numpy_threads=1, cache_basis=True):
    """The n >= 1e5 race with numpy and JAX fits alternating (ABAB...), so that load from
    other jobs on a shared machine falls on both sides alike. Per dtype: one untimed fit of
    each variant (JAX compiles), then ``repeats`` rounds of numpy, JAX coordinate and (with
    ``cache_basis``) JAX coordinate with the basis held; medians per variant."""
    X, y, xs, ys = scaled_problem(n, p)
    sw = np.ones(n)
    out = {"n": n, "p": p, "q": 40, "k": k, "repeats": repeats, "method": "interleaved",
           "numpy_blas_threads": numpy_threads}
    est64 = jaxtree.TreeRegressor.paper(k=k, refine="coordinate").fit(X, y)
    jax_choices = [c["flat_index"] for c in est64.choices_]
    for name, dt in (("float32", np.float32), ("float64", np.float64)):
        Phi = design(xs, dt)
        Xd, yd = X.astype(dt), y.astype(dt)
        fits = {"numpy": lambda: fit_numpy(Phi, ys, sw, k)[2],
                "jax_coordinate": lambda: [c["flat_index"] for c in jaxtree.TreeRegressor.paper(
                    k=k, refine="coordinate").fit(Xd, yd).choices_]}
        if cache_basis:
            fits["jax_coordinate-cachedbasis"] = lambda: [c["flat_index"] for c in (
                jaxtree.TreeRegressor.paper(k=k, refine="coordinate", cache_basis=True)
                .fit(Xd, yd).choices_)]
        times = {v: [] for v in fits}
        first, choices, loads = {}, {}, []
        with _blas_threads(numpy_threads):
            for v, f in fits.items():
                t0 = time.perf_counter()
                choices[v] = f()
                first[v] = time.perf_counter() - t0
            for _ in range(repeats):
                loads.append(os.getloadavg()[0])
                for v, f in fits.items():
                    t0 = time.perf_counter()
                    f()
                    times[v].append(time.perf_counter() - t0)
        for v in fits:
            key = f"{v}_{name}" if v != "numpy" else f"numpy_{name}"
            out[key] = {"median_s": statistics.median(times[v]), "times_s": times[v],
                        "first_s": first[v], "same_choices_as_jax64": choices[v] == jax_choices,
                        "same_choices_as_numpy_same_dtype": choices[v] == choices["numpy"],
                        "blas_threads": numpy_threads, "load_per_round": loads}
            log(f"  {key}: median {out[key]['median_s']:.3f} s (first {first[v]:.1f} s), "
                f"choices == JAX64: {choices[v] == jax_choices}, == numpy: "
                f"{choices[v] == choices['numpy']}; load {min(loads):.1f}-{max(loads):.1f}")
        out[f"numpy_{name}"].pop("same_choices_as_numpy_same_dtype")
        del Phi
    for name, short in (("float32", "f32"), ("float64", "f64")):
        base = out[f"numpy_{name}"]["median_s"]
        out[f"speedup_jax_coordinate_{short}_vs_numpy_{short}"] = (
            base / out[f"jax_coordinate_{name}"]["median_s"])
        key = f"jax_coordinate-cachedbasis_{name}"
        if key in out:
            out[f"speedup_jax_coordinate_cachedbasis_{short[1:]}_vs_fastest_numpy"] = (
                min(out["numpy_float32"]["median_s"], out["numpy_float64"]["median_s"])
                / out[key]["median_s"])
    out["speedup_jax_coordinate_f32_vs_fastest_numpy"] = (
        min(out["numpy_float32"]["median_s"], out["numpy_float64"]["median_s"])
        / out["jax_coordinate_float32"]["median_s"])
    return out


def race(n, p, k, repeats, ref_repeats, log, numpy_threads=(None,),
         jax_refines=("coordinate", "optax"), cache_basis=False):
    X, y, xs, ys = scaled_problem(n, p)
    sw = np.ones(n)
    out = {"n": n, "p": p, "q": 40, "k": k, "repeats": repeats}
    # --- correctness first: the numpy search against the JAX engine (float64 both)
    est64 = jaxtree.TreeRegressor.paper(k=k, refine="coordinate").fit(X, y)
    jax_choices = [c["flat_index"] for c in est64.choices_]
    for name, dt in (("float64", np.float64), ("float32", np.float32)):
        Phi = design(xs, dt)
        variants = []
        for th in numpy_threads:
            with _blas_threads(th):
                (tree, hist, ch), t_first, times = timed(lambda: fit_numpy(Phi, ys, sw, k),
                                                         repeats)
            same = ch == jax_choices
            hrel = float(np.max(np.abs(np.asarray(hist) * float(est64.model_.y_scale) ** 2
                                       - est64.history_) / est64.history_))
            rec = {"median_s": statistics.median(times), "times_s": times,
                   "first_s": t_first, "same_choices_as_jax64": same, "choices": ch,
                   "max_rel_history_diff_vs_jax64": hrel,
                   "blas_threads": th if th is not None else "default", "load": os.getloadavg()[0]}
            variants.append(rec)
            log(f"  numpy {name} (BLAS threads {rec['blas_threads']}): median "
                f"{rec['median_s']:.3f} s, same choices as JAX (float64, coordinate): {same}, "
                f"history rel diff {hrel:.1e}, load {rec['load']:.2f}")
        # numpy's best case: the fastest BLAS thread count (an oversubscribed 2-core machine
        # makes OpenBLAS's spinning threads slow; one thread is then faster)
        best = min(variants, key=lambda r: r["median_s"])
        out[f"numpy_{name}"] = {**best, "all_thread_counts": [
            {kk: v[kk] for kk in ("blas_threads", "median_s", "times_s", "load")} for v in variants]}
        del Phi
    # --- JAX engine, float32 (its fast path) and float64, coordinate and default optax
    # cache_basis=True: the estimator's opt-in that evaluates the basis once and holds it
    # (4 n p q bytes in float32), as the numpy side does: like for like on that point too.
    variants = [(r, False) for r in jax_refines] + [("coordinate", True)] * bool(cache_basis)
    for refine, cached in variants:
        for name, dt in (("float32", np.float32), ("float64", np.float64)):
            Xd, yd = X.astype(dt), y.astype(dt)
            fit = lambda: jaxtree.TreeRegressor.paper(k=k, refine=refine,  # noqa: E731
                                                      cache_basis=cached).fit(Xd, yd)
            est, t_first, times = timed(fit, repeats)
            med = statistics.median(times)
            ch = [c["flat_index"] for c in est.choices_]
            tag = refine + ("-cachedbasis" if cached else "")
            out[f"jax_{tag}_{name}"] = {
                "median_s": med, "times_s": times, "first_s": t_first,
                "compile_s_estimate": max(t_first - med, 0.0),
                "same_choices_as_jax64_coordinate": ch == jax_choices,
                # float32 against float32: near-ties can split float32 from float64
                "same_choices_as_numpy_same_dtype": ch == out[f"numpy_{name}"]["choices"],
                "final_train_mse": float(est.history_[-1])}
            log(f"  jax {tag} {name}: median {med:.3f} s (first fit {t_first:.1f} s), "
                f"final MSE {est.history_[-1]:.5g}, choices == coordinate64: {ch == jax_choices}")
    if ref_repeats:
        phi = np.asarray(design(xs, np.float64)).reshape(n, p, 40)
        times = []
        for _ in range(ref_repeats):
            t0 = time.perf_counter()
            res = R.fit(phi, ys, k, refine="coordinate", sweeps=3)
            times.append(time.perf_counter() - t0)
        out["loop_reference_float64"] = {"median_s": statistics.median(times), "times_s": times,
                                         "same_choices_as_jax64": [c[0] for c in res.choices] == jax_choices}
        log(f"  loop reference: median {statistics.median(times):.2f} s over {ref_repeats}")
    base = out["numpy_float64"]["median_s"]
    b32 = out["numpy_float32"]["median_s"]
    out["speedup_jax_coordinate_f32_vs_numpy_f32"] = b32 / out["jax_coordinate_float32"]["median_s"]
    out["speedup_jax_coordinate_f64_vs_numpy_f64"] = base / out["jax_coordinate_float64"]["median_s"]
    # the skeptic's ratio: JAX's fast path against the faster of the two numpy dtypes
    out["speedup_jax_coordinate_f32_vs_fastest_numpy"] = (
        min(base, b32) / out["jax_coordinate_float32"]["median_s"])
    for name in ("float32", "float64"):
        key = f"jax_coordinate-cachedbasis_{name}"
        if key in out:
            out[f"speedup_jax_coordinate_cachedbasis_{name[5:]}_vs_fastest_numpy"] = (
                min(base, b32) / out[key]["median_s"])
    return out


def markdown(rec) -> str:
    lines = ["# JAX engine vs vectorised numpy vs loop reference", "",
             f"Command: `{rec['command']}`", "",
             f"BLAS: {rec['environment']['numpy_blas']}; OPENBLAS_CORETYPE="
             f"{rec['environment']['OPENBLAS_CORETYPE']}, OPENBLAS_L2_SIZE="
             f"{rec['environment']['OPENBLAS_L2_SIZE']}; device {rec['environment']['device']}, "
             f"{rec['environment']['cpu_count']} CPUs; commit {rec['environment']['commit']}", "",
             "| setting | engine | dtype | refine | median s | first fit s | same choices as JAX f64 |",
             "|---|---|---|---|---|---|---|"]
    for r in rec["settings"]:
        tag = f"n={r['n']}, p={r['p']}, k={r['k']}"
        for key, v in r.items():
            if not isinstance(v, dict) or key.startswith("loadavg"):
                continue
            parts = key.split("_")
            if key.startswith("numpy"):
                eng, dt, ref = (f"numpy (vectorised, BLAS threads "
                                f"{v.get('blas_threads', 'default')})", parts[1], "coordinate")
            elif key.startswith("loop"):
                eng, dt, ref = "loop reference", "float64", "coordinate"
            else:
                eng, ref, dt = "jax", parts[1], parts[2]
            same = v.get("same_choices_as_jax64", v.get("same_choices_as_jax64_coordinate"))
            if "same_choices_as_numpy_same_dtype" in v:
                same = f"{same} (as numpy {dt}: {v['same_choices_as_numpy_same_dtype']})"
            lines.append(f"| {tag} | {eng} | {dt} | {ref} | {v['median_s']:.3f} | "
                         f"{v.get('first_s', float('nan')):.2f} | {same} |")
        lines.append(f"| {tag} | **JAX/numpy speedup (coordinate)** | float32 | | "
                     f"{r['speedup_jax_coordinate_f32_vs_numpy_f32']:.2f}x | | |")
        lines.append(f"| {tag} | **JAX/numpy speedup (coordinate)** | float64 | | "
                     f"{r['speedup_jax_coordinate_f64_vs_numpy_f64']:.2f}x | | |")
        for dt in ("32", "64"):
            key = f"speedup_jax_coordinate_cachedbasis_{dt}_vs_fastest_numpy"
            if key in r:
                lines.append(f"| {tag} | **JAX cache_basis / faster numpy (coordinate)** | "
                             f"float{dt} | | {r[key]:.2f}x | | |")
        if "speedup_jax_coordinate_f32_vs_fastest_numpy" in r:
            lines.append(f"| {tag} | **JAX f32 / faster numpy (coordinate)** | | | "
                         f"{r['speedup_jax_coordinate_f32_vs_fastest_numpy']:.2f}x | | |")
    loads = "; ".join(f"n={r['n']}: 1-min load average {r['loadavg_start'][0]:.2f} at the "
                      f"start, {r['loadavg_end'][0]:.2f} at the end" for r in rec["settings"]
                      if "loadavg_start" in r)
    lines += ["", rec["target"], "", f"Load ({rec['environment']['date']}): {loads}.", "", "numpy: basis values precomputed and held (excluded from "
              "its time); JAX: the estimator's fit as a user runs it (basis evaluated chunk "
              "by chunk in every pass; `coordinate-cachedbasis`: `cache_basis=True`, the "
              "basis evaluated once and held, as numpy does). numpy's time is the fastest of "
              "the BLAS thread counts tried (OpenBLAS's spinning threads slow down badly on "
              "an oversubscribed machine). Timings on a shared machine: compare within one "
              "run."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description="Vectorised numpy baseline race.")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ref-repeats", type=int, default=1,
                    help="timed fits of the loop reference at the paper setting (slow)")
    ap.add_argument("--large-k", type=int, default=10)
    ap.add_argument("--large-n", type=int, default=100_000)
    ap.add_argument("--numpy-threads", type=lambda v: None if v == "default" else int(v),
                    nargs="+", default=[None],
                    help="numpy BLAS thread counts to time (threadpoolctl), e.g. '1 default'; "
                         "the fastest is numpy's time")
    ap.add_argument("--jax-refine", nargs="+", default=["coordinate", "optax"],
                    choices=["coordinate", "optax"],
                    help="JAX refinements to time (coordinate is numpy's, like for like)")
    ap.add_argument("--jax-cache-basis", action="store_true",
                    help="also time JAX coordinate with cache_basis=True (basis held, as numpy)")
    ap.add_argument("--interleave", action="store_true",
                    help="n >= 1e5 setting: alternate numpy and JAX coordinate fits (ABAB) so "
                         "load from other jobs falls on both alike; numpy at the first "
                         "--numpy-threads count")
    ap.add_argument("--large-only", action="store_true",
                    help="skip the paper setting (n=250, p=100): only the n >= 1e5 race")
    ap.add_argument("--stem", default=None, help="output file stem (default numpy_race)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = ap.parse_args(argv)
    jax.config.update("jax_enable_x64", True)  # float64 comparisons; float32 fits follow input
    log = lambda s: print(s, flush=True)  # noqa: E731
    if args.quick:
        settings = [(250, 20, 4, args.ref_repeats), (5000, 10, 3, 0)]
        repeats = min(args.repeats, 3)
    else:
        settings = [(250, 100, 10, args.ref_repeats), (args.large_n, 20, args.large_k, 0)]
        settings = settings[1:] if args.large_only else settings
        repeats = args.repeats
    env = environment()
    env.update(numpy_blas=blas_info(), OPENBLAS_CORETYPE=os.environ.get("OPENBLAS_CORETYPE"),
               OPENBLAS_L2_SIZE=os.environ.get("OPENBLAS_L2_SIZE"),
               dtype_note="numpy float64/float32; JAX fits float32 and float64 inputs",
               precision="highest")
    results = []
    for n, p, k, rr in settings:
        load0 = os.getloadavg()
        log(f"n={n}, p={p}, q=40, k={k}; load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
        if args.interleave and n >= 100_000:
            r = race_interleaved(n, p, k, repeats, log, numpy_threads=args.numpy_threads[0],
                                 cache_basis=args.jax_cache_basis)
        else:
            r = race(n, p, k, repeats, rr, log, numpy_threads=tuple(args.numpy_threads),
                     jax_refines=tuple(args.jax_refine), cache_basis=args.jax_cache_basis)
        r["loadavg_start"], r["loadavg_end"] = list(load0), list(os.getloadavg())
        log(f"  load average at the end {r['loadavg_end'][0]:.2f} {r['loadavg_end'][1]:.2f}")
        results.append(r)
    big = results[-1]
    sp = big["speedup_jax_coordinate_f32_vs_numpy_f32"]
    target = (f"Target JAX vs vectorised numpy (same refinement, coordinate) >= 5x at "
              f"n >= 1e5: {'MET' if sp >= 5 and big['n'] >= 100_000 else 'NOT MET'} "
              f"(float32 {sp:.2f}x, float64 "
              f"{big['speedup_jax_coordinate_f64_vs_numpy_f64']:.2f}x, JAX float32 against "
              f"the faster numpy dtype {big['speedup_jax_coordinate_f32_vs_fastest_numpy']:.2f}x "
              f"at n={big['n']}, p={big['p']}, k={big['k']})")
    log(target)
    cmd = "python benchmarks/bench_numpy.py " + " ".join(argv if argv is not None else sys.argv[1:])
    rec = {"command": cmd.strip(), "environment": env, "settings": results, "target": target}
    stem = args.stem or ("numpy_race_quick" if args.quick else "numpy_race")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(rec, indent=2, default=str))
    md = markdown(rec)
    (out / f"{stem}.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
