"""Writes ``tests/data/golden_predictions.npz``: every case of ``tests/golden_cases.py`` fitted
with the ``jaxtree`` this Python imports, for ``tests/test_golden.py``.

The file holds one float64 array per case name (its held-out predictions), ``<name>__k``
(int64, the sizes the fit chose) and ``<name>__heldout`` (float64, the held-out errors the
sizes were chosen by) where the case has them, and ``__commit__``: the commit of
the ``jaxtree`` package that made it (``+dirty`` if its ``jaxtree/`` had uncommitted
changes), with ``__versions__`` (numpy, jax, jaxlib) for the record.

Regenerate only for an intended change of behaviour, and say so in the commit that updates
the file (see ``tests/test_golden.py``). From the repository root::

    python tests/make_golden.py

To make it from another commit's code (e.g. the commit before a refactor), check that
commit out in a worktree and put it first on the path, running this script from the
current tree::

    git worktree add /tmp/golden-base <commit>
    cd /tmp/golden-base && PYTHONPATH=/tmp/golden-base python /path/to/repo/tests/make_golden.py

(the script prints which ``jaxtree`` it imported; check it is the worktree's).
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import golden_cases as G  # noqa: E402

G.configure()  # before anything runs on JAX's backend

import jax  # noqa: E402
import jaxlib  # noqa: E402
import numpy as np  # noqa: E402

import jaxtree  # noqa: E402

DEFAULT_OUT = os.path.join(HERE, "data", "golden_predictions.npz")


def source_commit() -> str:
    """The commit of the imported ``jaxtree`` package's checkout, ``+dirty`` if its
    ``jaxtree/`` differs from that commit."""
    pkg = os.path.dirname(os.path.abspath(jaxtree.__file__))
    git = ["git", "-C", pkg]
    commit = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    dirty = subprocess.run(git + ["status", "--porcelain", "--", "."], capture_output=True,
                           text=True, check=True).stdout.strip()
    return commit + ("+dirty" if dirty else "")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT, help="the .npz to write (default: %(default)s)")
    args = ap.parse_args(argv)

    commit = source_commit()
    print(f"jaxtree from {os.path.dirname(jaxtree.__file__)} at {commit}", flush=True)
    arrays = {"__commit__": np.array(commit),
              "__versions__": np.array(f"numpy {np.__version__}, jax {jax.__version__}, "
                                       f"jaxlib {jaxlib.__version__}")}
    start = time.perf_counter()
    for case in G.CASES:
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            res = G.run(case, tmp)
        arrays[case.name] = res.pred
        for suffix, value in (("k", res.k), ("heldout", res.heldout)):
            if value is not None:
                arrays[f"{case.name}__{suffix}"] = value
        print(f"  {case.name:<20} {time.perf_counter() - t0:6.1f} s  shape {res.pred.shape}"
              f"  k {None if res.k is None else res.k.tolist()}"
              f"  held-out errors {0 if res.heldout is None else res.heldout.size}", flush=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    np.savez_compressed(args.out, **arrays)
    print(f"wrote {args.out} ({len(G.CASES)} cases, {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
