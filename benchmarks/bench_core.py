"""Core speed benchmark: the numpy reference against the jitted JAX engine.

Three measurements, side by side in one run (DESIGN.md section 3; STYLE.md "Benchmarks"):

1. The paper's setting (n=250, p=100, q=40, k=10, the synthetic truth
   ``g(x) = 0.3 sin(3 pi x1) cos(2 pi x2) + 0.4 x3^2 - 0.3 x4 + N(0, 0.05^2)``,
   ``x ~ U[0,1]^p``, ``y`` scaled to ``[-1, 1]``): wall time per fit of
   ``jaxtree.reference.fit`` (float64, ``refine="coordinate"``) and of
   ``jaxtree.search.fit`` (float32, ``refine`` in ``"coordinate"``, ``"optax"``, ``None``),
   compile time apart, the ratio reference/JAX, and a correctness check first: the two
   engines' training histories (both ``refine="coordinate"``) and chosen candidates.
2. Large n (n=100,000, p=20, q=40, k=10): JAX fit time per refine mode, compile apart;
   the reference is timed on its first iterations only and the full fit is EXTRAPOLATED
   from its per-candidate cost (labelled as such in every output).
3. Roofline of the scoring step for n >= 100,000: the jitted scorer against a jitted,
   chunked float32 matmul stream of the same shapes (``(2*max_leaves, chunk) @
   (chunk, p*q)``, three products per chunk, like the scorer), over chunk sizes, and
   against the square float32 matmul peak (``(s, s) @ (s, s)``, the higher yardstick).
4. Roofline over the tree sizes a fit goes through (``--sections sizes``): one scoring
   pass at each leaf count ``D = 1 .. k+1`` with the estimator's row buckets, useful
   GFLOP/s (``12 D n p q`` / time) against the square float32 matmul peak, per ``D`` and
   time-weighted over all of them (issue 16).

Method: correctness first, then time; every jitted function is compiled separately
(``.lower(...).compile()``), warmed up, synchronised with ``block_until_ready`` and timed
as the median of repeats. The machine this was written on has 2 CPU cores shared with
other jobs: trust ratios and medians more than absolute times.

Run (from the repository root)::

    python benchmarks/bench_core.py            # full, ~10 min on 2 idle CPU cores
    python benchmarks/bench_core.py --quick    # small sizes, < 60 s
    python benchmarks/bench_core.py --out DIR  # write DIR/core.json, DIR/core.csv
    python benchmarks/bench_core.py --sections sizes   # section 4 only (core_sizes.*)

If ``OPENBLAS_CORETYPE`` or ``OPENBLAS_L2_SIZE`` is set in your environment (they force
numpy's OpenBLAS kernel and so change the reference's speed), run it as::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_core.py

The script never changes these variables; it records their values and the BLAS kernel
numpy actually uses (via ``threadpoolctl`` if importable, else ``"unknown"``).

Outputs: a table on stdout and ``core.json`` / ``core.csv`` (``core_quick.*`` with
``--quick``) in ``benchmarks/results/`` by default. The commit is read from ``.git``
without running git (``"unknown"`` if that fails).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import pathlib
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxtree import basis as B
from jaxtree import program as prog
from jaxtree import reference as R
from jaxtree import scoring, search
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from _common import environment as common_environment  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
PRECISION = jax.lax.Precision.HIGHEST
DTYPE = jnp.float32
REFINE_MODES = ("coordinate", "optax", None)


# --------------------------------------------------------------------------- environment


def blas_info() -> list | str:
    """The BLAS libraries numpy uses (kernel = OpenBLAS ``architecture``)."""
    try:
        import threadpoolctl
    except ImportError:
        return "unknown"
    return [{k: d.get(k) for k in ("internal_api", "architecture", "num_threads", "version")}
            for d in threadpoolctl.threadpool_info() if d.get("user_api") == "blas"]


def environment() -> dict:
    return {
        **common_environment(),
        "dtype_jax": jnp.dtype(DTYPE).name,
        "dtype_reference": "float64",
        "precision": str(PRECISION),
        "numpy_blas": blas_info(),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "OPENBLAS_L2_SIZE": os.environ.get("OPENBLAS_L2_SIZE"),
        "XLA_FLAGS": os.environ.get("XLA_FLAGS"),
        "note": "2-core shared CPU when written: compare ratios and medians, not absolutes",
    }


# ------------------------------------------------------------------------------- helpers


def paper_data(n: int, p: int, seed: int = 0):
    """The paper's synthetic data, ``x`` min-max scaled to [0,1] and ``y`` to [-1,1]."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, size=(n, p))
    g = (0.3 * np.sin(3 * np.pi * x[:, 0]) * np.cos(2 * np.pi * x[:, 1])
         + 0.4 * x[:, 2] ** 2 - 0.3 * x[:, 3])
    y = g + rng.normal(0, 0.05, size=n)
    x = (x - x.min(0)) / (x.max(0) - x.min(0))
    y = 2 * (y - y.min()) / (y.max() - y.min()) - 1
    return x.astype(np.float32), y.astype(np.float32)


def block(tree):
    return jax.block_until_ready(tree)


def timed(fn, repeats: int, warmup: int = 1) -> list[float]:
    """Wall times of ``fn()`` (which must block) after ``warmup`` untimed calls."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def med(ts):
    return statistics.median(ts)


class _Stop(Exception):
    pass


def reference_timed(phi, y, k: int, budget_s: float) -> dict:
    """One reference fit (``refine="coordinate"``) with per-step times.

    Stops after the step during which ``budget_s`` ran out; the caller extrapolates.
    """
    phi = np.asarray(phi, np.float64)
    y = np.asarray(y, np.float64)
    stamps, losses, trees = [], [], []
    t0 = time.perf_counter()

    def cb(step, tree, loss):
        stamps.append(time.perf_counter())
        losses.append(loss)
        trees.append(tree)
        if stamps[-1] - t0 > budget_s and step < k:
            raise _Stop

    res = None
    try:
        res = R.fit(phi, y, k, refine="coordinate", callback=cb)
    except _Stop:
        pass
    step_times = np.diff([t0] + stamps).tolist()
    return {"step_times": step_times, "history": losses,
            "choices": res.choices if res else None, "complete": res is not None,
            "total_s": stamps[-1] - t0}


def extrapolate_reference(step_times, k: int, p: int, q: int) -> float:
    """Full-fit time from measured steps: step 0 scores ``p q`` candidates, step ``s``
    (``s`` leaves) ``2 s p q``; per-candidate cost = mean over measured steps >= 1."""
    t0 = step_times[0]
    done = step_times[1:]
    cands = sum(2 * s * p * q for s in range(1, len(done) + 1))
    per_cand = sum(done) / cands
    return t0 + per_cand * sum(2 * s * p * q for s in range(1, k + 1))


def jax_fit_bench(data, bs, k: int, refine, repeats: int) -> dict:
    """Compile time of ``search.step_jit`` (apart), first fit, then warm fits."""
    cfg = search.Config(max_k=k, refine=refine, precision=PRECISION)
    t = time.perf_counter()
    search.step_jit.lower(prog.empty_program(k, DTYPE), data, bs, cfg).compile()
    compile_s = time.perf_counter() - t
    t = time.perf_counter()
    res = search.fit(data, bs, k, cfg)
    block(res.program)
    first_s = time.perf_counter() - t

    def run():
        block(search.fit(data, bs, k, cfg).program)

    ts = timed(run, repeats, warmup=0)
    return {"refine": str(refine), "compile_s": compile_s, "first_fit_s": first_s,
            "fit_s": med(ts), "fit_times": ts, "final_loss": float(res.history[-1]),
            "history": res.history.tolist(), "choices": res.choices, "status": res.status,
            "program": res.program}


def compare_engines(ref_hist, ref_choices, jres) -> dict:
    h_ref = np.asarray(ref_hist, np.float64)
    h_jax = np.asarray(jres["history"][: len(h_ref)], np.float64)
    rel = float(np.max(np.abs(h_jax - h_ref) / np.abs(h_ref)))
    if ref_choices is None:  # the reference stopped early: histories only
        return {"history_max_rel_diff": rel, "history_ok_1e-4": rel <= 1e-4,
                "flat_index_match": None, "first_mismatch_step": None,
                "feature_basis_match": None, "steps_compared": len(h_ref)}
    fi_ref = [int(c[0]) for c in ref_choices[: len(h_ref)]]
    fi_jax = [int(c["flat_index"]) for c in jres["choices"][: len(h_ref)]]
    # (feature, basis) of the new leaf, and op, per step: ties may move the slot only.
    fb_ref = [(int(c[3]), int(c[4])) for c in ref_choices[: len(h_ref)]]
    fb_jax = [(int(c["feature"]), int(c["basis"])) for c in jres["choices"][: len(h_ref)]]
    return {"history_max_rel_diff": rel, "history_ok_1e-4": rel <= 1e-4,
            "flat_index_match": fi_ref == fi_jax,
            "first_mismatch_step": next((i for i, (a, b) in enumerate(zip(fi_ref, fi_jax))
                                         if a != b), None),
            "feature_basis_match": fb_ref == fb_jax,
            "steps_compared": len(h_ref)}


# ------------------------------------------------------------------------------ sections


def bench_fits(name, n, p, k, bs, repeats, ref_budget_s, ref_k, rows, out, save=None):
    """Sections 1 and 2: reference vs JAX fits at one size."""
    q = bs.q
    print(f"\n== {name}: n={n} p={p} q={q} k={k} ==", flush=True)
    x, y = paper_data(n, p)
    data = scoring.chunk(x, y, chunk_size=2048)
    block(data)

    # Reference first (float64, on the float32 inputs' exact values).
    phi = np.asarray(bs.evaluate(jnp.asarray(x)), np.float64)
    ref = reference_timed(phi, y, ref_k, ref_budget_s)
    del phi
    measured_steps = len(ref["step_times"]) - 1
    full = ref["complete"] and ref_k == k
    ref_fit = ref["total_s"] if full else extrapolate_reference(ref["step_times"], k, p, q)
    label = ("measured" if full else
             f"EXTRAPOLATED from first {measured_steps} iteration(s) (+ initial leaf)")
    print(f"reference (numpy float64, coordinate): {ref_fit:9.3f} s per fit  [{label}]"
          f"  steps: {[round(t, 3) for t in ref['step_times']]}", flush=True)

    res = {"n": n, "p": p, "q": q, "k": k, "reference": {
        "fit_s": ref_fit, "label": label, "step_times": ref["step_times"],
        "history": ref["history"], "choices": ref["choices"]}, "jax": {}}
    rows.append(dict(section=name, engine="reference", refine="coordinate", n=n, p=p, q=q, k=k,
                     metric="fit_s", value=ref_fit, note=label))

    for mode in REFINE_MODES:
        j = jax_fit_bench(data, bs, k, mode, repeats)
        j.pop("program")
        res["jax"][str(mode)] = j
        ratio = ref_fit / j["fit_s"]
        print(f"jax float32 refine={str(mode):10s}: fit {j['fit_s']:8.4f} s (median of "
              f"{repeats}), compile {j['compile_s']:6.2f} s, first fit {j['first_fit_s']:6.2f} s,"
              f" final mse {j['final_loss']:.6g}, reference/JAX = {ratio:8.1f}x", flush=True)
        for metric, val in (("fit_s", j["fit_s"]), ("compile_s", j["compile_s"]),
                            ("first_fit_s", j["first_fit_s"]), ("final_mse", j["final_loss"]),
                            ("ratio_ref_over_jax", ratio)):
            rows.append(dict(section=name, engine="jax", refine=str(mode), n=n, p=p, q=q, k=k,
                             metric=metric, value=val,
                             note=label if metric == "ratio_ref_over_jax" else ""))

    cmp = compare_engines(ref["history"], ref["choices"], res["jax"]["coordinate"])
    res["agreement"] = cmp
    print(f"agreement (coordinate, {cmp['steps_compared']} steps): max rel history diff "
          f"{cmp['history_max_rel_diff']:.2e} (ok<=1e-4: {cmp['history_ok_1e-4']}), "
          f"flat indices match: {cmp['flat_index_match']}, (feature, basis) match: "
          f"{cmp['feature_basis_match']}", flush=True)
    for metric in ("history_max_rel_diff", "flat_index_match", "feature_basis_match"):
        rows.append(dict(section=name, engine="both", refine="coordinate", n=n, p=p, q=q, k=k,
                         metric=metric, value=cmp[metric],
                         note=f"{cmp['steps_compared']} steps"))
    out[name] = res
    if save:
        save()


def score_program(n_leaves_target, p, k, bs):
    """A program with ``n_leaves_target`` leaves (capacity ``k``) from a small fit."""
    x, y = paper_data(4096, p, seed=1)
    data = scoring.chunk(x, y, chunk_size=2048)
    cfg = search.Config(max_k=k, refine="coordinate", precision=PRECISION)
    return search.fit(data, bs, n_leaves_target - 1, cfg).program


_score_jit = jax.jit(scoring.score, static_argnames=("basis", "max_leaves", "precision",
                                                     "buckets"))


def square_matmul_peak(repeats: int, sizes=(1024, 2048)) -> dict:
    """The square float32 matmul rate (``(s, s) @ (s, s)``, jitted, ``PRECISION``): the
    machine's practical float32 peak, the yardstick issue 16 asks for (the thin-product
    stream of :func:`bench_roofline` runs below it). The best size is the peak."""
    rates = {}
    rng = np.random.default_rng(4)
    for s in sizes:
        a = jnp.asarray(rng.uniform(-1, 1, (s, s)), DTYPE)
        b = jnp.asarray(rng.uniform(-1, 1, (s, s)), DTYPE)
        f = jax.jit(lambda u, v: jnp.matmul(u, v, precision=PRECISION)).lower(a, b).compile()
        t = med(timed(lambda: block(f(a, b)), max(repeats, 5)))
        rates[s] = 2 * s ** 3 / t / 1e9
    best = max(rates, key=rates.get)
    print(f"square float32 matmul: {', '.join(f'{s}: {r:.1f}' for s, r in rates.items())} "
          f"GFLOP/s -> peak {rates[best]:.1f} (s={best})", flush=True)
    return {"gflops_by_size": rates, "peak_gflops": rates[best], "size": best}


def bench_tree_sizes(n, p, k, chunk, bs, repeats, peak, rows, out, save=None):
    """Roofline over the tree sizes a fit goes through: one scoring pass at every leaf
    count ``D = 1 .. k+1`` with the estimator's row buckets (``scoring.buckets_for``), so
    each pass computes the rows a fit computes at that size. Per ``D``: useful GFLOP/s
    (``12 D n p q`` / time) and its ratio to the square float32 matmul ``peak``; over the
    fit: total useful flops / total time (every size weighted by its time, as in a fit).
    """
    q = bs.q
    L = k + 1
    buckets = scoring.buckets_for(n, p, q, k)
    print(f"\n== roofline over tree sizes: n={n} p={p} q={q} k={k} chunk={chunk} "
          f"buckets={buckets} (square peak {peak['peak_gflops']:.1f} GFLOP/s) ==", flush=True)
    x, y = paper_data(n, p, seed=2)
    data = block(scoring.chunk(x, y, chunk_size=chunk))
    cs = None
    per = []
    for D in range(1, L + 1):
        pr = block(score_program(D, p, k, bs))
        assert int(prog.n_leaves(pr)) == D
        if cs is None:
            cs = _score_jit.lower(pr, data, basis=bs, max_leaves=L, precision=PRECISION,
                                  buckets=buckets).compile()
        t = med(timed(lambda: block(cs(pr, data)), repeats))
        rows_computed = next((b for b in buckets if b >= D), L)
        useful = 12 * D * n * p * q / t / 1e9
        per.append(dict(D=D, score_s=t, rows_leaves=rows_computed, useful_gflops=useful,
                        useful_over_square_peak=useful / peak["peak_gflops"],
                        computed_over_square_peak=12 * rows_computed * n * p * q / t / 1e9
                        / peak["peak_gflops"]))
        print(f"  D={D:>2} ({rows_computed:>2} leaf rows computed): {t:8.4f} s, useful "
              f"{useful:6.1f} GFLOP/s = {useful / peak['peak_gflops']:6.1%} of square peak",
              flush=True)
        rows.append(dict(section="roofline_sizes", engine="jax", refine="", n=n, p=p, q=q, k=k,
                         D=D, chunk=chunk, metric="useful_over_square_peak",
                         value=useful / peak["peak_gflops"], note=f"buckets={buckets}"))
    tot_flops = sum(12 * r["D"] * n * p * q for r in per)
    tot_s = sum(r["score_s"] for r in per)
    avg = tot_flops / tot_s / 1e9
    print(f"  over D=1..{L}: {avg:.1f} useful GFLOP/s = {avg / peak['peak_gflops']:.1%} of "
          f"the square float32 peak (time-weighted: total useful flops / total time)",
          flush=True)
    rows.append(dict(section="roofline_sizes", engine="jax", refine="", n=n, p=p, q=q, k=k,
                     D="1..%d" % L, chunk=chunk, metric="useful_over_square_peak_fit_average",
                     value=avg / peak["peak_gflops"], note=f"buckets={buckets}"))
    out.setdefault("roofline_sizes", []).append(
        {"n": n, "p": p, "q": q, "k": k, "chunk": chunk, "buckets": list(buckets),
         "per_D": per, "avg_useful_gflops": avg,
         "avg_useful_over_square_peak": avg / peak["peak_gflops"],
         "note": f"a k={k} fit scores the empty tree and D=1..{k} leaves; D={L} (the final "
                 f"tree, never scored in a fit) is included as issue 16 asks (leaf counts "
                 f"1..k+1)"})
    if save:
        save()


def _matmul_stream(a, b, b2):
    """Three float32 matmuls per chunk, like the scorer: a (nc, rows, m), b (m, pq)."""
    mm = lambda u, v: jnp.matmul(u, v, precision=PRECISION)

    def body(acc, ai):
        return acc + mm(ai, b) + mm(ai * ai, b2) + mm(ai * 0.5 + 1.0, b), None

    acc, _ = jax.lax.scan(body, jnp.zeros((a.shape[1], b.shape[1]), a.dtype), a)
    return acc


_matmul_jit = jax.jit(_matmul_stream)


def _basis_only(xs, bs):
    """Basis evaluation over all chunks (with a cheap reduction so it is not removed)."""
    def body(acc, xb):
        phi = scoring.design(xb, bs)
        return acc + jnp.sum(phi, 0) + jnp.sum(phi * phi, 0), None

    acc, _ = jax.lax.scan(body, jnp.zeros((xs.shape[2] * bs.q,), xs.dtype), xs)
    return acc


_basis_jit = jax.jit(_basis_only, static_argnums=1)


def bench_roofline(sizes, chunks, k, bs, repeats, rows, out, extra_d=None, save=None,
                   sweep_max_n=None, peak=None):
    """Section 3: scorer GFLOP/s against the float32 matmul stream of the same shapes.

    Sizes with ``n > sweep_max_n`` time only chunk 2048 and the fastest chunk found at the
    swept sizes with the same ``p`` (the full sweep is costly at n = 1M).
    """
    q = bs.q
    L = k + 1
    print(f"\n== roofline: scorer vs float32 matmul stream, q={q}, max_leaves={L} ==")
    hdr = (f"{'n':>8} {'p':>3} {'D':>3} {'chunk':>6} {'score_s':>8} {'useful':>7} "
           f"{'padded':>7} {'matmul':>7} {'pad/mm':>7} {'basis_s':>8}")
    print(hdr + "   (GFLOP/s)", flush=True)
    programs = {}
    res = []
    for n, p in sizes:
        x, y = paper_data(n, p, seed=2)
        for D in sorted({L} | ({extra_d} if extra_d else set())):
            if (p, D) not in programs:
                programs[(p, D)] = block(score_program(D, p, k, bs))
        size_chunks = list(chunks)
        if sweep_max_n is not None and n > sweep_max_n:
            swept = [r for r in res if r["p"] == p and r["D"] == L and r["n"] <= sweep_max_n]
            fastest = min(swept, key=lambda r: r["score_s"])["chunk"] if swept else 2048
            size_chunks = sorted({2048, fastest})
        for m in size_chunks:
            data = block(scoring.chunk(x, y, chunk_size=m))
            nc, mm_rows = data.x.shape[0], data.x.shape[1]
            ds = [L] + ([extra_d] if extra_d and m == size_chunks[0] else [])
            # matmul stream of the same shapes
            rng = np.random.default_rng(3)
            a = jnp.asarray(rng.uniform(-1, 1, (nc, 2 * L, mm_rows)), DTYPE)
            bm = jnp.asarray(rng.uniform(-1, 1, (mm_rows, p * q)), DTYPE)
            b2 = bm * bm
            cm = _matmul_jit.lower(a, bm, b2).compile()
            t_mm = med(timed(lambda: block(cm(a, bm, b2)), repeats))
            flops_pad = 12 * L * nc * mm_rows * p * q  # incl. chunk padding rows
            mm_rate = flops_pad / t_mm / 1e9
            del a
            cb = _basis_jit.lower(data.x, bs).compile()
            t_basis = med(timed(lambda: block(cb(data.x)), repeats))
            for D in ds:
                pr = programs[(p, D)]
                cs = _score_jit.lower(pr, data, basis=bs, max_leaves=L,
                                      precision=PRECISION).compile()
                t_sc = med(timed(lambda: block(cs(pr, data)), repeats))
                useful = 12 * D * n * p * q / t_sc / 1e9
                padded = 12 * L * n * p * q / t_sc / 1e9
                row = dict(n=n, p=p, q=q, k=k, D=D, chunk=m, score_s=t_sc, matmul_s=t_mm,
                           basis_s=t_basis, useful_gflops=useful, padded_gflops=padded,
                           matmul_gflops=mm_rate, padded_over_matmul=padded / mm_rate,
                           useful_over_matmul=useful / mm_rate)
                res.append(row)
                print(f"{n:>8} {p:>3} {D:>3} {m:>6} {t_sc:8.4f} {useful:7.1f} {padded:7.1f} "
                      f"{mm_rate:7.1f} {padded / mm_rate:7.1%} {t_basis:8.4f}", flush=True)
                for metric in ("score_s", "useful_gflops", "padded_gflops", "matmul_gflops",
                               "padded_over_matmul", "basis_s", "useful_over_square_peak"):
                    if metric not in row:
                        continue
                    rows.append(dict(section="roofline", engine="jax", refine="", n=n, p=p,
                                     q=q, k=k, D=D, chunk=m, metric=metric, value=row[metric],
                                     note=""))
            del data
            out["roofline"] = {"rows": res, "partial": True}
            if save:
                save()
    best = {}
    for n, p in sizes:
        cand = [r for r in res if r["n"] == n and r["p"] == p and r["D"] == L]
        b = min(cand, key=lambda r: r["score_s"])
        best[f"n={n},p={p}"] = {"chunk": b["chunk"], "score_s": b["score_s"],
                                "padded_over_matmul": b["padded_over_matmul"]}
        rows.append(dict(section="roofline", engine="jax", refine="", n=n, p=p, q=q, k=k,
                         D=L, chunk=b["chunk"], metric="fastest_chunk", value=b["chunk"],
                         note=""))
    print("fastest chunk per size:", {s: v["chunk"] for s, v in best.items()}, flush=True)
    out["roofline"] = {"rows": res, "fastest": best,
                       "flops_note": "useful = 12*D*n*p*q, padded = 12*(k+1)*n*p*q per call; "
                                     "matmul stream = 3 matmuls (2(k+1), chunk)@(chunk, p*q) "
                                     "per chunk incl. padded rows"}


# ---------------------------------------------------------------------------------- main


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (< 60 s)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"),
                    help="output directory (default benchmarks/results)")
    ap.add_argument("--repeats", type=int, default=None, help="timed repeats (median)")
    ap.add_argument("--sections", nargs="+", default=["fits", "roofline", "sizes"],
                    choices=["fits", "roofline", "sizes"],
                    help="fits: sections 1-2; roofline: section 3; sizes: the roofline over "
                         "tree sizes D = 1..k+1 against the square float32 matmul peak")
    ap.add_argument("--sizes-n", type=int, default=100_000, help="n of the sizes section")
    ap.add_argument("--sizes-p", type=int, default=20, help="p of the sizes section")
    ap.add_argument("--sizes-chunk", type=int, default=2048, help="chunk of the sizes section")
    args = ap.parse_args(argv)

    bs = B.default_basis()
    env = environment()
    print(json.dumps({k: v for k, v in env.items() if k != "note"}, default=str))
    if env["OPENBLAS_CORETYPE"] or env["OPENBLAS_L2_SIZE"]:
        print("WARNING: OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE are set; for comparable numbers "
              "run: env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python "
              "benchmarks/bench_core.py", flush=True)
    rows, out = [], {"environment": env, "quick": args.quick, "complete": False}
    t_start = time.perf_counter()
    outdir = pathlib.Path(args.out)
    outdir.mkdir(parents=True, exist_ok=True)
    stem = "core_quick" if args.quick else "core"
    if set(args.sections) != {"fits", "roofline", "sizes"}:
        stem += "_" + "_".join(sorted(args.sections))

    def save():  # after every section, so an interrupted run keeps what it measured
        out["total_wall_s"] = time.perf_counter() - t_start
        (outdir / f"{stem}.json").write_text(json.dumps(out, indent=1, default=_jsonable))
        cols = ["section", "engine", "refine", "n", "p", "q", "k", "D", "chunk", "metric",
                "value", "note"]
        with open(outdir / f"{stem}.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols)
            w.writeheader()
            for r in rows:
                w.writerow({c: r.get(c, "") for c in cols})

    rep = args.repeats or 3
    sec = set(args.sections)
    out["sections"] = sorted(sec)
    load0 = os.getloadavg()
    out["loadavg_start"] = list(load0)
    print(f"load average at the start: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}", flush=True)
    peak = None
    if sec & {"roofline", "sizes"}:
        peak = square_matmul_peak(rep)
        out["square_matmul"] = peak
    if args.quick:
        if "fits" in sec:
            bench_fits("paper", 120, 10, 3, bs, rep, 60.0, 3, rows, out, save)
            bench_fits("large_n", 5000, 5, 3, bs, rep, 60.0, 1, rows, out, save)
        if "roofline" in sec:
            bench_roofline([(20000, 4)], [1024, 2048], 3, bs, rep, rows, out, save=save,
                           peak=peak)
        if "sizes" in sec:
            bench_tree_sizes(20000, 4, 3, 2048, bs, rep, peak, rows, out, save)
    else:
        if "fits" in sec:
            bench_fits("paper", 250, 100, 10, bs, max(rep, 5), 600.0, 10, rows, out, save)
            bench_fits("large_n", 100_000, 20, 10, bs, rep, 120.0, 2, rows, out, save)
        if "roofline" in sec:
            bench_roofline([(100_000, 8), (100_000, 20), (1_000_000, 8), (1_000_000, 20)],
                           [1024, 2048, 4096, 8192], 10, bs, rep, rows, out, extra_d=6,
                           save=save, sweep_max_n=100_000, peak=peak)
        if "sizes" in sec:
            bench_tree_sizes(args.sizes_n, args.sizes_p, 10, args.sizes_chunk, bs, rep, peak,
                             rows, out, save)
    out["loadavg_end"] = list(os.getloadavg())
    print(f"load average at the end: {out['loadavg_end'][0]:.2f}", flush=True)
    out["complete"] = True
    save()
    print(f"\ntotal wall time {out['total_wall_s']:.1f} s")
    print(f"wrote {outdir / (stem + '.json')} and {outdir / (stem + '.csv')}")


def _jsonable(o):
    if isinstance(o, (np.generic,)):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


if __name__ == "__main__":
    sys.exit(main())
