"""The basis evaluation on its own: run time, kernels and float32 accuracy.

For the default basis and for its trigonometric families alone (``Sines(9) + Cosines(9)``), on
a ``(65536, 8)`` float32 block of uniform covariates:

* ``evaluate``: ``Basis.evaluate(x, axis=1)``, jitted (the scorer's layout);
* ``chunked``: 2,048-row chunks in a ``lax.scan``, each evaluated and summed over its rows
  (the basis's own cost per row in the scoring pass's loop; a cheap consumer);
* ``scorer-like``: the same chunks, each used in a Gram matrix product (the products then
  take most of the time);
* the compiled programs' fusions (XLA's kernels: compile time follows them);
* float32 error of ``evaluate`` and ``evaluate_at`` against float64 numpy ``sin``/``cos`` for
  frequencies 1-20 on ``[0, 1]``.

Times are the minimum of ``--repeats`` calls. To compare two commits, run this script with
``PYTHONPATH`` at each one's checkout (it prints which ``jaxtree`` it imported), alternating::

    python benchmarks/bench_basis.py [--repeats 15] [--out benchmarks/results/basis_eval.json]

``--quick``: 3 calls each (a smoke run).
"""

import argparse
import json
import os
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxtree
from _common import environment, git_commit
from jaxtree import basis as basis_


def _best(f, x, repeats):
    jax.block_until_ready(f(x))
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(f(x))
        best = min(best, time.perf_counter() - t)
    return best


def _chunked(basis, gram: bool, chunk=2048):
    def run(x):
        m, p = x.shape
        xs = x.reshape(m // chunk, chunk, p)
        q = basis.q * p

        def body(acc, xb):
            phi = basis.evaluate(xb, axis=1).reshape(chunk, q)
            return acc + (phi.T @ phi if gram else phi.sum(0)), None

        start = jnp.zeros((q, q) if gram else (q,), x.dtype)
        return jax.lax.scan(body, start, xs)[0]

    return jax.jit(run)


def _fusions(f, x):
    return f.lower(x).compile().as_text().count(" fusion(")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--out", default=None, help="a JSON file to write the results to")
    ap.add_argument("--quick", action="store_true", help="3 calls each (a smoke run)")
    args = ap.parse_args()
    if args.quick:
        args.repeats = 3
    here = os.path.dirname(os.path.dirname(os.path.abspath(jaxtree.__file__)))
    commit = git_commit(here)  # the imported jaxtree's checkout (PYTHONPATH), not this one's
    print(f"jaxtree from {here} (commit {commit})")
    x = jnp.asarray(np.random.default_rng(0).uniform(size=(65536, 8)).astype(np.float32))
    out = {**environment(), "jaxtree_path": here, "jaxtree_commit": commit, "rows": 65536,
           "p": 8, "cases": {}}
    for name, basis in (("default", basis_.get_basis(None)),
                        ("sines+cosines", basis_.make_basis(hats=0, sines=9, cosines=9,
                                                            powers=0, truncated_cubics=0))):
        row = {}
        for what, f in (("evaluate", jax.jit(lambda t, b=basis: b.evaluate(t, axis=1))),
                        ("chunked", _chunked(basis, gram=False)),
                        ("scorer_like", _chunked(basis, gram=True))):
            row[f"{what}_ms"] = 1e3 * _best(f, x, args.repeats)
            row[f"{what}_fusions"] = _fusions(f, x)
        out["cases"][name] = row
        print(f"{name:14s} " + "   ".join(
            f"{w} {row[w + '_ms']:7.2f} ms ({row[w + '_fusions']} fusions)"
            for w in ("evaluate", "chunked", "scorer_like")), flush=True)
    trig = basis_.make_basis(hats=0, sines=20, cosines=20, powers=0, truncated_cubics=0)
    u = np.linspace(0.0, 1.0, 20001)
    arg = np.pi * u.astype(np.float32).astype(np.float64)[:, None] * np.arange(1, 21)
    ref = np.concatenate([np.sin(arg), np.cos(arg)], axis=1)
    got = np.asarray(trig.evaluate(jnp.asarray(u, jnp.float32)), np.float64)
    idx = np.broadcast_to(np.arange(40), (u.size, 40))
    got_at = np.asarray(trig.evaluate_at(jnp.asarray(np.repeat(u[:, None], 40, 1),
                                                     jnp.float32), jnp.asarray(idx)), np.float64)
    out["float32_error"] = {"evaluate": float(np.abs(got - ref).max()),
                            "evaluate_at": float(np.abs(got_at - ref).max())}
    print(f"float32 error, frequencies 1-20 on [0, 1]: evaluate "
          f"{out['float32_error']['evaluate']:.2e}, evaluate_at "
          f"{out['float32_error']['evaluate_at']:.2e}")
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
