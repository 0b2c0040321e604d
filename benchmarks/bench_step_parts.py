"""Compile time of the search step's parts on the demo's table (1,000 x 10, the default
basis, float32): the backfit step (the default below 10,000 rows) and the same step without
its pair lookahead, its replacement moves or its refinement, and the greedy step. One
process, jaxtree's executable cache off; prints the lowering and compile seconds, the
number of fusions (XLA's kernels: compile and load time follow it) and the size of the
compiled program's text (a program's load time from the cache grows with it)::

    python benchmarks/bench_step_parts.py [variant ...] [--loss logistic] [--options JSON]

``--loss logistic``: the classifier's step on the labels ``y > median``; ``--options``: XLA
compile options (e.g. jaxtree's ``LIGHT``).
"""

import os
import time

os.environ["JAXTREE_COMPILATION_CACHE"] = "0"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxtree import basis as basis_  # noqa: E402
from jaxtree import program as prog  # noqa: E402
from jaxtree import scoring, search  # noqa: E402
from jaxtree.datasets import paper_synthetic  # noqa: E402


def demo(loss: str = "squared") -> tuple:
    """``(data, basis)``: the demo's table scaled and chunked as a search step sees it, float32,
    and the default basis; ``loss="logistic"``: its labels ``y > median`` (the classifier's)."""
    X, y = paper_synthetic(1000, p=10, seed=0)
    X = (X - X.min(0)) / (X.max(0) - X.min(0))
    if loss == "logistic":
        y = (y > np.median(y)).astype(np.float32)
    else:
        y = (y - y.mean()) / (4 * y.std())
    data = scoring.chunk(jnp.asarray(X, jnp.float32), jnp.asarray(y, jnp.float32), None, 2048)
    return data, basis_.get_basis(None)


def main(names, loss: str = "squared", options=None) -> None:
    data, basis = demo(loss)
    if loss != "squared":  # the classifier's step reads labels +-1
        data = data._replace(y=2 * data.y - 1)
    base = search.search_config("backfit", 10, 10 * basis.q, loss=loss)
    variants = {
        "backfit": base,
        "no pairs": base._replace(pair_leaves=0, pair_max_leaves=0, pair_rows=0),
        "no replace": base._replace(replace_moves=0),
        "no refine": base._replace(refine=None),
        "greedy": search.search_config("greedy", 10, 10 * basis.q, loss=loss),
    }
    start = prog.empty_program(base.max_k, np.float32)
    for name in names or variants:
        cfg = variants[name]
        f = jax.jit(lambda p, d, cfg=cfg: search.step(p, d, basis, cfg))
        t = time.perf_counter()
        lowered = f.lower(start, data)
        t1 = time.perf_counter()
        compiled = lowered.compile(compiler_options=options)
        t2 = time.perf_counter()
        text = compiled.as_text()
        print(f"{name:12s} lower {t1 - t:.2f} s  compile {t2 - t1:.2f} s  "
              f"fusions {text.count(' fusion(')}  text {len(text) / 1e6:.2f} MB", flush=True)


if __name__ == "__main__":
    import argparse
    import json

    ap = argparse.ArgumentParser()
    ap.add_argument("variants", nargs="*", help="backfit, 'no pairs', 'no replace', "
                    "'no refine', greedy (default: all)")
    ap.add_argument("--loss", default="squared",
                    help="squared (the regressor's step) or logistic (the classifier's)")
    ap.add_argument("--options", default=None,
                    help='XLA compile options as JSON, e.g. \'{"xla_cpu_use_fusion_emitters": false}\'')
    a = ap.parse_args()
    main(a.variants, a.loss, json.loads(a.options) if a.options else None)
