"""Scaling benchmark: fit time against n, p, q and k; memory; roofline; precision.

Each measurement runs in its own subprocess (``--child``) so that peak RSS
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``) is per size, and compilation caches do not
leak between sizes. In the child:

* data: ``x ~ U[0,1]^p`` (already in the scaled range), ``y`` the paper's synthetic truth
  scaled into ``[-1, 1]`` plus noise; for ``n >= --stream-from`` the rows are written to a
  float32 ``np.memmap`` first (by the parent, chunk by chunk) and the fit streams them with
  :func:`jaxtree.stream.fit` (device memory O(block)); smaller sizes use the in-memory
  :func:`jaxtree.search.fit`;
* ``fit_s``: wall time of one whole fit of ``k`` operations. For in-memory sizes up to
  ``--second-fit-max`` the first fit (which compiles) is followed by ``--repeats`` timed
  fits and ``fit_s`` is the fastest of them (``fit_s_all`` holds them all; the fastest is
  the least disturbed by other load), ``compile_s`` the first fit minus ``fit_s``; above
  that size ``fit_s`` is the one fit, compilation included, and ``compile_s`` "n/a";
  ``iter_s``: median time of iterations 2..k of the fastest fit, from the callback's
  timestamps; ``fit_cold_s``: the first fit in the child process, compilation included, at
  every size (the one method shared by the whole n sweep: in-memory and streamed sizes
  alike; issue 16 asks for one measurement method per sweep);
* roofline (in-memory sizes): one scoring pass of the final tree (``D = k+1`` leaves),
  compiled apart, median of repeats: ``GFLOP/s = 12*D*n*p*q / time``, against a jitted
  float32 stream of the same three matrix products per chunk (``(2L, m) @ (m, p*q)``);
* on a GPU (``jax.default_backend() == "gpu"``): whether ``precision="default"`` (TF32)
  chooses any different candidate than ``"highest"``.

Every record holds device, jax version, dtype, precision, commit and date.

Run (repository root)::

    python benchmarks/bench_scale.py --quick          # ~2-4 min on 2 CPU cores
    python benchmarks/bench_scale.py                  # n up to 1e7, p/q/k sweeps, airline
    python benchmarks/bench_scale.py --only n --max-n 1e6
    python benchmarks/bench_scale.py --only airline_fit --repeats 5   # through TreeRegressor.fit

``airline_fit`` times airline scale (n = 7e5, p = 8, k = 10) as a user runs it: synthetic
airline-like raw data (:func:`airline_like`), ``TreeRegressor.fit`` in a fresh child process
with the persistent compilation cache off, the first fit (compiles) reported apart from the
median of ``--repeats`` warm fits in the same process, load average recorded.

Outputs ``benchmarks/results/scale[_quick].json``, ``.csv`` and ``.png``. The script runs
unchanged on a GPU.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import pathlib
import platform
import statistics
import sys
import tempfile
import threading
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _common import child_json  # noqa: E402
from _common import git_commit as commit  # noqa: E402


def make_y(x, rng):
    g = (0.3 * np.sin(3 * np.pi * x[:, 0]) * np.cos(2 * np.pi * x[:, 1 % x.shape[1]])
         + 0.4 * x[:, 2 % x.shape[1]] ** 2 - 0.3 * x[:, 3 % x.shape[1]])
    return (g + 0.05 * rng.standard_normal(x.shape[0])).astype(np.float32)


def write_memmap(path, n, p, seed=0, block=1 << 20):
    """Writes ``path.x`` (n, p) and ``path.y`` (n,) float32 memmaps chunk by chunk; returns path."""
    rng = np.random.default_rng(seed)
    xp, yp = path + ".x", path + ".y"
    mx = np.memmap(xp, np.float32, "w+", shape=(n, p))
    my = np.memmap(yp, np.float32, "w+", shape=(n,))
    for s in range(0, n, block):
        e = min(n, s + block)
        x = rng.random((e - s, p), dtype=np.float32)
        mx[s:e] = x
        my[s:e] = make_y(x, rng)
    mx.flush()
    my.flush()
    del mx, my
    return path


def basis_for_q(q):
    from jaxtree import basis as B
    if q == 40:
        return B.get_basis(None)
    # split q over hats/sines/cosines/powers/truncated cubics roughly like the default set
    powers = min(3, q)
    rest = q - powers
    hats, sines = rest // 4 + rest % 4, rest // 4
    return B.make_basis(hats=hats, sines=sines, cosines=rest // 4, powers=powers,
                        truncated_cubics=rest // 4)


# --------------------------------------------------------------------------- the child


def airline_like(n, seed=0):
    """Synthetic data shaped like the airline set (8 covariates in their raw units: plane
    age, distance, air time, departure and arrival clock times, weekday, day, month) and an
    arrival delay in minutes with heavy-tailed noise. Float64, as a user's data frame."""
    rng = np.random.default_rng(seed)
    age = rng.integers(0, 40, n).astype(np.float64)
    distance = 80 + rng.gamma(2.0, 500.0, n)
    air_time = distance / 7.5 + 15 + rng.normal(0, 8, n)
    dep = rng.integers(5, 24, n) * 100 + rng.integers(0, 60, n)
    arr_min = (dep // 100 * 60 + dep % 100 + air_time + 30) % 1440
    arr = (arr_min // 60) * 100 + arr_min % 60
    weekday = rng.integers(0, 7, n)
    day = rng.integers(1, 32, n)
    month = rng.integers(1, 13, n)
    X = np.column_stack([age, distance, air_time, dep, arr, weekday, day, month]).astype(np.float64)
    hour = dep // 100 + dep % 100 / 60
    y = (8 * np.sin(2 * np.pi * (month - 4) / 12) + 0.15 * (hour - 5) ** 2
         + 4 * (weekday >= 4) + 0.003 * distance * np.cos(np.pi * hour / 24)
         - 0.1 * age + 15 * rng.standard_t(3, n))
    return X, y


def time_search_runs():
    """Times the searches' driver (``jaxtree.search.run``: the device steps and the one
    transfer an iteration) against the rest of ``fit`` (validation, encoding, scaling,
    chunking, the host-to-device copy, the model): issue 25's profile of a warm fit.
    Returns ``(inside, restore)``: ``inside[0]`` accumulates the seconds spent in
    ``search.run`` (reset it between fits); ``restore()`` puts the driver back."""
    from jaxtree import search as search_mod

    inside = [0.0]
    run0 = search_mod.run

    def timed_run(*args, **kw):
        t0 = time.perf_counter()
        try:
            return run0(*args, **kw)
        finally:
            inside[0] += time.perf_counter() - t0

    search_mod.run = timed_run

    def restore():
        search_mod.run = run0

    return inside, restore


def estimator_child(a) -> dict:
    """Airline scale through ``TreeRegressor.fit`` (issue 16): the first fit in a fresh
    process (compiles) and ``--repeats`` warm fits in the same process (median), with
    ``JAXTREE_COMPILATION_CACHE`` as the parent set it (0: the first fit really compiles)."""
    import resource

    import jax

    import jaxtree

    X, y = airline_like(a.n)
    rec = dict(n=a.n, p=X.shape[1], q=40, k=a.k, refine=a.refine, search=a.search,
               chunk=a.chunk, path="TreeRegressor.fit", input_dtype="float64 (as given)",
               jax_enable_x64=bool(jax.config.jax_enable_x64), device=str(jax.devices()),
               backend=jax.default_backend(), jax=jax.__version__,
               persistent_cache=os.environ.get("JAXTREE_COMPILATION_CACHE", "default (on)"),
               loadavg_start=list(os.getloadavg()))
    refine = None if a.refine == "none" else a.refine
    if a.airline_estimator == "default":  # the estimator as a user makes it (tree + shapes)
        make = lambda: jaxtree.TreeRegressor(chunk_size=a.chunk)  # noqa: E731
        rec.update(k="default", refine="optax", search="auto", estimator="TreeRegressor()")
    else:
        make = lambda: jaxtree.TreeRegressor.paper(k=a.k, refine=refine, chunk_size=a.chunk,  # noqa: E731
                                                   search=a.search)
        rec["estimator"] = "TreeRegressor.paper()"
    inside, restore = time_search_runs()
    t = time.perf_counter()
    est = make().fit(X, y)
    rec["fit_first_s"] = time.perf_counter() - t
    warm, in_search = [], []
    for _ in range(max(1, a.repeats)):
        inside[0] = 0.0
        t = time.perf_counter()
        est = make().fit(X, y)
        warm.append(time.perf_counter() - t)
        in_search.append(inside[0])
    restore()
    rec["fit_warm_s_all"] = warm
    rec["search_run_s_all"] = in_search
    rec["outside_search_s_all"] = [w - s for w, s in zip(warm, in_search)]
    rec["fit_s"] = statistics.median(warm)
    rec["compile_s"] = rec["fit_first_s"] - rec["fit_s"]
    rec["dtype"] = str(est.model_.program.weight.dtype)
    rec["final_mse"] = float(est.history_[-1])
    rec["rmse_train"] = float(np.sqrt(np.mean((est.predict(X) - y) ** 2)))
    rec["formula"] = est.formula()
    rec["row_plan"] = est.row_plan_._asdict()
    rec["loadavg_end"] = list(os.getloadavg())
    rec["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return rec


def child(a) -> dict:
    import resource

    import jax
    import jax.numpy as jnp

    from jaxtree import scoring, search, stream

    prec = scoring.PRECISIONS
    basis = basis_for_q(a.q)
    q = basis.q
    # row buckets in the scorer: "auto" is the estimator's default (on once a fit is large
    # enough); the sweeps force "on" so that every point of a sweep runs the same program
    buckets = {"auto": scoring.buckets_for(a.n, a.p, q, a.k), "on": scoring.default_buckets(a.k + 1),
               "off": ()}[a.buckets]
    cfg = search.search_config(a.search, a.k, a.p * q,
                               refine=None if a.refine == "none" else a.refine,
                               precision=prec[a.precision], buckets=buckets)
    from jaxtree import plan as plan_
    rp = plan_.row_plan(a.n, a.p, q, np.float32, chunk_size=a.chunk)
    chunk = rp.chunk
    block = a.block or rp.chunks_per_block
    rec = dict(n=a.n, p=a.p, q=q, k=a.k, refine=a.refine, search=a.search, chunk=chunk,
               chunk_arg=a.chunk, row_plan=rp._asdict(), block=block, dtype="float32",
               buckets=list(buckets),
               precision=a.precision, device=str(jax.devices()), backend=jax.default_backend(),
               jax=jax.__version__, streamed=bool(a.memmap))
    stamps = []

    def cb(it, loss, info):
        stamps.append(time.perf_counter())
        return False

    if a.memmap:
        mx = np.memmap(a.memmap + ".x", np.float32, "r", shape=(a.n, a.p))
        my = np.memmap(a.memmap + ".y", np.float32, "r", shape=(a.n,))
        src = stream.ChunkReader(mx, my, chunk_size=min(chunk, a.n))
        # rows read from the host per fit (every pass's blocks and chunks), to set the time
        # per iteration beside the host-to-device bandwidth (issue 25's streamed target)
        read, lock = [0], threading.Lock()
        block0, iter0 = stream.ChunkReader.block, stream.ChunkReader.__iter__

        def counted_block(self, start, cpb):
            b = block0(self, start, cpb)
            with lock:  # on stream's reading threads
                read[0] += b[1].size
            return b

        def counted_iter(self):
            for c in iter0(self):
                read[0] += c[1].size
                yield c

        stream.ChunkReader.block, stream.ChunkReader.__iter__ = counted_block, counted_iter
        t0 = time.perf_counter()
        res = stream.fit(src, basis, a.k, cfg, callback=cb, chunks_per_block=block)
        rec["fit_s"] = time.perf_counter() - t0
        rec["rows_read"] = read[0]
        rec["bytes_read"] = read[0] * (a.p + 2) * 4
        host = np.ones((1 << 26,), np.float32)  # 256 MiB, pageable, as the fit's blocks are
        jax.block_until_ready(jax.device_put(host))
        tb = []
        for _ in range(3):
            t = time.perf_counter()
            jax.block_until_ready(jax.device_put(host))
            tb.append(time.perf_counter() - t)
        rec["h2d_gbs"] = host.nbytes / min(tb) / 1e9
        rec["h2d_limit_s"] = rec["bytes_read"] / (rec["h2d_gbs"] * 1e9)
        # one fit, so fit_s holds the compile; the iterations after the second do not
        rec["fit_x_h2d_limit"] = rec["fit_s"] / rec["h2d_limit_s"]
        rec["fit_cold_s"] = rec["fit_s"]
        rec["compile_s"] = "n/a"
    else:
        rng = np.random.default_rng(0)
        x = rng.random((a.n, a.p), dtype=np.float32)
        y = make_y(x, rng)
        data = scoring.chunk(jnp.asarray(x), jnp.asarray(y), None, chunk)
        del x, y
        t0 = time.perf_counter()
        res = search.fit(data, basis, a.k, cfg, callback=cb)
        first = time.perf_counter() - t0
        rec["fit_cold_s"] = first
        if a.n <= a.second_fit_max:
            runs = []
            for _ in range(max(1, a.repeats)):
                stamps.clear()
                t = time.perf_counter()
                res = search.fit(data, basis, a.k, cfg, callback=cb)
                runs.append((time.perf_counter() - t, t, list(stamps)))
            best = min(runs, key=lambda r: r[0])
            rec["fit_s"], t0, stamps[:] = best[0], best[1], best[2]
            rec["fit_s_all"] = [r[0] for r in runs]
            rec["compile_s"] = first - rec["fit_s"]
            rec["fit_first_s"] = first
        else:
            rec["fit_s"] = first
            rec["compile_s"] = "n/a"
        if a.roofline:
            rec.update(roofline(res.program, data, basis, a))
        if a.precision_check and jax.default_backend() == "gpu":
            alt = search.fit(data, basis, a.k, cfg._replace(precision=jax.lax.Precision.DEFAULT))
            rec["tf32_same_choices"] = ([c["flat_index"] for c in alt.choices]
                                        == [c["flat_index"] for c in res.choices])
    it = np.diff([t0] + stamps)
    rec["iter_s"] = float(np.median(it[2:])) if len(it) > 3 else float(np.median(it))
    rec["iters_s"] = [float(v) for v in it]
    if a.memmap:  # the iteration against the bandwidth for its share of the rows read
        rec["iter_x_h2d_limit"] = rec["iter_s"] / (rec["h2d_limit_s"] / max(len(it), 1))
    rec["final_mse_scaled"] = float(res.history[-1])
    rec["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return rec


def roofline(program, data, basis, a) -> dict:
    import jax
    import jax.numpy as jnp

    from jaxtree import program as prog
    from jaxtree import scoring

    L = a.k + 1
    pq = a.p * basis.q
    D = int(prog.n_leaves(program))
    score = jax.jit(lambda pr, d: scoring.score(pr, d, basis, max_leaves=L,
                                                precision=jax.lax.Precision.HIGHEST))
    f = score.lower(program, data).compile()

    def mm(u, phi):
        def body(acc, ph):
            s1 = u @ ph
            s2 = (u * u) @ (ph * ph)
            s3 = (u * 1.5) @ ph
            return acc + s1 + s2 + s3, None
        acc, _ = jax.lax.scan(body, jnp.zeros((2 * L, pq), jnp.float32), phi)
        return acc

    nc, m = data.x.shape[:2]
    u = jnp.ones((2 * L, m), jnp.float32)
    phi = jax.random.uniform(jax.random.PRNGKey(0), (min(nc, 64), m, pq), jnp.float32)
    g = jax.jit(mm).lower(u, phi).compile()

    def med(fn, *args, reps=5):
        jax.block_until_ready(fn(*args))
        ts = []
        for _ in range(reps):
            t = time.perf_counter()
            jax.block_until_ready(fn(*args))
            ts.append(time.perf_counter() - t)
        return statistics.median(ts)

    ts = med(f, program, data)
    tm = med(g, u, phi) * nc / phi.shape[0]
    n = a.n
    # The cost model (issue 25 item 3): a scoring pass does 3 products of (2L, m) by
    # (m, p*q) per chunk (6*2L*rows*p*q flops, padded rows included) and reads x, y, w once
    # (the basis is computed on the fly, never read); its limit is the slower of the card's
    # measured float32 matmul rate on the same shapes and its measured memory bandwidth.
    big = jnp.ones((2**28,), jnp.float32)  # 1 GiB: read and written once per call
    bw = 2 * big.nbytes / med(jax.jit(lambda v: v * 1.0001), big)
    del big
    flops = 6 * 2 * L * nc * m * pq
    nbytes = nc * m * (a.p + 2) * 4
    limit = max(flops / (flops / tm), nbytes / bw)
    # nominal flops use the D real leaves (the paper's count); the kernel computes all 2L rows
    return dict(score_s=ts, D=D, score_gflops=12 * D * n * a.p * basis.q / ts / 1e9,
                score_gflops_padded=flops / ts / 1e9,
                matmul_gflops=flops / tm / 1e9, bandwidth_gbs=bw / 1e9,
                score_flops=flops, score_bytes=nbytes, score_limit_s=limit,
                score_pct_of_matmul=100 * (flops / ts) / (flops / tm),
                score_x_limit=ts / limit)


# -------------------------------------------------------------------------- the parent


def run_child(args, n, p, q, k, refine, memmap=None, roofline=False, precision_check=False,
              buckets=None, estimator=False):
    cmd = [__file__, "--child", "--n", str(n), "--p", str(p), "--q", str(q),
           "--k", str(k), "--refine", refine, "--chunk", str(args.chunk),
           "--buckets", buckets or args.buckets,
           "--block", str(args.block), "--precision", args.precision, "--search", args.search,
           "--second-fit-max", str(int(args.second_fit_max)), "--repeats", str(args.repeats),
           "--airline-estimator", args.airline_estimator]
    if memmap:
        cmd += ["--memmap", memmap]
    if roofline:
        cmd.append("--roofline")
    if precision_check:
        cmd.append("--precision-check")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if estimator:
        cmd.append("--estimator")
        # the first fit in the child compiles for real: no persistent cache to load from
        env["JAXTREE_COMPILATION_CACHE"] = "0"
    try:
        return child_json(cmd, cwd=ROOT, env=env)
    except RuntimeError as err:  # recorded, and the run goes on
        print(err, file=sys.stderr)
        return dict(n=n, p=p, q=q, k=k, refine=refine, error=str(err)[-500:])


def slope(xs, ys):
    xs, ys = np.log(np.asarray(xs, float)), np.log(np.asarray(ys, float))
    return float(np.polyfit(xs, ys, 1)[0]) if len(xs) > 1 else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    ap.add_argument("--only", choices=["n", "p", "q", "k", "airline", "airline_fit"],
                    action="append",
                    help="airline_fit: airline scale (n=7e5, p=8, k=10) through "
                         "TreeRegressor.fit on airline-like raw data, first fit (compiles, "
                         "persistent cache off) apart from the median of --repeats warm fits")
    ap.add_argument("--max-n", type=float, default=1e7)
    ap.add_argument("--stream-from", type=float, default=2e6,
                    help="n at and above which the data is a memmap streamed from disk")
    ap.add_argument("--refine", default="optax", choices=["coordinate", "optax", "none"],
                    help="refinement of the sweeps (default: the estimator's, optax)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="timed fits after the compiling one (in-memory sizes); the fastest counts")
    ap.add_argument("--chunk", type=lambda v: v if v == "auto" else int(v), default="auto",
                    help="rows per chunk: 'auto' (jaxtree.plan.row_plan: 2048 on a CPU, up to "
                         "~1e6 on a GPU) or a number")
    ap.add_argument("--buckets", default="on", choices=["on", "off", "auto"],
                    help="scorer row buckets in the sweeps: on (default, the same program at "
                         "every point), off, or auto (the estimator's rule; airline rows "
                         "always use auto)")
    ap.add_argument("--block", type=int, default=0,
                    help="chunks per streamed block (0: the row plan's, 16 on a CPU)")
    ap.add_argument("--precision", default="highest", choices=["highest", "high", "default"])
    ap.add_argument("--search", default="greedy", choices=["greedy", "backfit"],
                    help="search strategy (TreeRegressor's search=; default the paper's greedy)")
    ap.add_argument("--airline-refine", nargs="*", choices=["coordinate", "optax", "none"],
                    help="extra refine modes timed at airline scale (default: --refine only)")
    ap.add_argument("--ns", type=float, nargs="*", help="override the n sweep sizes")
    ap.add_argument("--n-sweep-k", type=int, default=None, help="k of the n sweep (default 10)")
    ap.add_argument("--second-fit-max", type=float, default=1e6)
    ap.add_argument("--tmp", default=None, help="folder for the memmap files")
    ap.add_argument("--replot", metavar="JSON", help="redraw the plot of a results file and exit")
    # child mode
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    for name in ("n", "p", "q", "k"):
        ap.add_argument(f"--{name}", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--memmap", help=argparse.SUPPRESS)
    ap.add_argument("--roofline", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--precision-check", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--estimator", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--airline-n", type=float, default=7e5,
                    help="airline_fit: rows of the airline-like table (default 7e5; 1e8 checks "
                         "the estimator with 10^8 rows held on an accelerator)")
    ap.add_argument("--airline-estimator", choices=["paper", "default"], default="paper",
                    help="airline_fit: TreeRegressor.paper(k) (default) or TreeRegressor()")
    a = ap.parse_args()
    if a.child:
        print(json.dumps(estimator_child(a) if a.estimator else child(a)))
        return
    if a.replot:
        res = json.loads(pathlib.Path(a.replot).read_text())
        plot([r for r in res["rows"] if "error" not in r],
             pathlib.Path(a.replot).with_suffix(".png"), res["meta"])
        return

    only = set(a.only or ["n", "p", "q", "k", "airline", "airline_fit"])
    meta = dict(commit=commit(), date=datetime.datetime.now(datetime.timezone.utc).isoformat(),
                host=platform.node(), cpu_count=os.cpu_count(), python=platform.python_version(),
                quick=a.quick, refine=a.refine, precision=a.precision, chunk=a.chunk)
    if a.quick:
        ns, ps, qs, ks = [1000, 10_000, 100_000], [2, 4, 8], [10, 20, 40], [2, 4, 8]
        base_n, big_k = 20_000, 5
    else:
        ns = [n for n in (1000, 10_000, 100_000, 1_000_000, 3_000_000, 10_000_000)
              if n <= a.max_n]
        ps, qs, ks = [2, 4, 8, 16], [10, 20, 40, 80], [2, 4, 8, 16]
        base_n, big_k = 100_000, 10
    if a.ns:
        ns = [int(v) for v in a.ns]
    n_k = a.n_sweep_k or big_k
    rows = []
    tmp = a.tmp or tempfile.mkdtemp(prefix="jaxtree_scale_")

    def record(sweep, r):
        r = {**r, "sweep": sweep, **{k: v for k, v in meta.items() if k not in r}}
        if "size_xy_f32_mb" not in r and "n" in r and "p" in r:
            r["size_xy_f32_mb"] = r["n"] * (r["p"] + 1) * 4 / 2**20
        rows.append(r)
        part = pathlib.Path(a.out) / "scale_partial.jsonl"  # survives a crash mid-run
        part.parent.mkdir(parents=True, exist_ok=True)
        with open(part, "a") as fh:
            fh.write(json.dumps(r, default=str) + "\n")
        print(json.dumps({k: r.get(k) for k in ("sweep", "n", "p", "q", "k", "fit_s", "fit_cold_s", "iter_s",
                                                "compile_s", "peak_rss_mb", "size_xy_f32_mb",
                                                "score_gflops", "matmul_gflops", "streamed",
                                                "error")}), flush=True)
        return r

    if "n" in only:
        for n in ns:
            mm = None
            if n >= a.stream_from:
                mm = write_memmap(os.path.join(tmp, f"n{n}"), n, 8)
            record("n", run_child(a, n, 8, 40, n_k, a.refine, memmap=mm,
                                  roofline=mm is None and n >= 10_000,
                                  precision_check=mm is None and n >= 10_000))
            if mm:
                for f in (mm + ".x", mm + ".y"):
                    os.remove(f)
    if "airline" in only and not a.quick:
        for refine in dict.fromkeys([a.refine] + (a.airline_refine or [])):
            record("airline", run_child(a, 700_000, 8, 40, 10, refine, buckets="auto",
                                        precision_check=True))
    if "airline_fit" in only and not a.quick:
        for refine in dict.fromkeys([a.refine] + (a.airline_refine or [])):
            record("airline_fit", run_child(a, int(a.airline_n), 8, 40, 10, refine,
                                            estimator=True))
    if "p" in only:
        for p in ps:
            record("p", run_child(a, base_n, p, 40, big_k, a.refine, roofline=True))
    if "q" in only:
        for q in qs:
            record("q", run_child(a, base_n, 8, q, big_k, a.refine, roofline=True))
    if "k" in only:
        for k in ks:
            record("k", run_child(a, base_n, 8, 40, k, a.refine))

    ok = [r for r in rows if "error" not in r]
    slopes = {}
    for sweep, var, expect in (("n", "n", 1.0), ("p", "p", 1.0), ("q", "q", 1.0), ("k", "k", 2.0)):
        rs = [r for r in ok if r["sweep"] == sweep and (sweep != "n" or r["n"] >= 10_000)]
        if len(rs) > 1:
            slopes[sweep] = dict(fit=slope([r[var] for r in rs], [r["fit_s"] for r in rs]),
                                 iter=slope([r[var] for r in rs], [r["iter_s"] for r in rs]),
                                 expected_fit=expect)
            sc = [r for r in rs if r.get("score_s")]
            if len(sc) > 1 and sweep != "k":  # one scoring pass of the final tree
                slopes[sweep]["score_pass"] = slope([r[var] for r in sc], [r["score_s"] for r in sc])
    summary = dict(meta=meta, slopes=slopes, rows=rows)
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = "scale_quick" if a.quick else "scale"
    if a.only:
        stem += "_" + "_".join(sorted(only))
    (out / f"{stem}.json").write_text(json.dumps(summary, indent=1, default=str))
    keys = sorted({k for r in rows for k in r if k != "iters_s"})
    with open(out / f"{stem}.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k) for k in keys})
    print("slopes (log-log):", json.dumps(slopes))
    try:
        plot(ok, out / f"{stem}.png", meta)
    except Exception as exc:  # plotting is a convenience
        print("plot failed:", exc, file=sys.stderr)


def plot(rows, path, meta):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axs = plt.subplots(1, 4, figsize=(16, 3.8))
    for ax, sweep in zip(axs, "npqk"):
        rs = sorted((r for r in rows if r["sweep"] == sweep), key=lambda r: r[sweep])
        if not rs:
            ax.set_visible(False)
            continue
        xs = [r[sweep] for r in rs]
        ax.loglog(xs, [r["fit_s"] for r in rs], "o-", label="fit (s)")
        ax.loglog(xs, [r["iter_s"] for r in rs], "s--", label="iteration (s)")
        sc = [(r[sweep], r["score_s"]) for r in rs if r.get("score_s")]
        if sc:
            ax.loglog(*zip(*sc), "^:", label="scoring pass (s)")
        ax.set_xlabel(sweep)
        ax.set_title(f"time vs {sweep}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(f"jaxtree scaling, refine={meta['refine']}, precision={meta['precision']}, "
                 f"{rows[0].get('device', '')}, commit {meta['commit'][:8]}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    main()
