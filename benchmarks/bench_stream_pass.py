"""One streamed pass over a host memmap, without the search: reading, scaling, padding and
putting each block on the device (``jaxtree.stream._blocks``), for several read-ahead depths
(``stream.READ_AHEAD``; 1 reads one block ahead of the one in use).

The accelerator's row plan (chunks of 2^20 rows, one a block) unless ``--chunk`` says
otherwise; each block is waited for, as a pass's kernels would. Prints a line a depth and
writes ``benchmarks/results/stream_pass.json`` (or ``--out``)::

    python benchmarks/bench_stream_pass.py --n 1e7 --depths 1 2 4 8
"""

import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _common import ROOT, environment  # noqa: E402
from bench_scale import write_memmap  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=float, default=1e7)
    ap.add_argument("--p", type=int, default=8)
    ap.add_argument("--chunk", type=int, default=1 << 20)
    ap.add_argument("--depths", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "stream_pass.json"))
    a = ap.parse_args(argv)

    import jax
    import numpy as np

    from jaxtree import stream

    n = int(a.n)
    path = write_memmap(os.path.join(tempfile.mkdtemp(prefix="jaxtree_pass_"), "d"), n, a.p)
    mx = np.memmap(path + ".x", np.float32, "r", shape=(n, a.p))
    my = np.memmap(path + ".y", np.float32, "r", shape=(n,))
    raw = stream.ChunkReader(mx, my, chunk_size=min(a.chunk, n))
    reader = raw.scaled(stream.scaling(raw), np.float32)

    def put(arrs):
        return tuple(jax.device_put(v) for v in arrs)

    rows = []
    for depth in a.depths:
        stream.READ_AHEAD = depth
        times = []
        for _ in range(a.repeats + 1):  # the first pass warms the pool and the page cache
            t = time.perf_counter()
            for block in stream._blocks(reader, 1, put):
                jax.block_until_ready(block)
            times.append(time.perf_counter() - t)
        t = min(times[1:])
        gb = n * (a.p + 2) * 4 / 1e9
        rows.append(dict(read_ahead=depth, pass_s=t, pass_median_s=statistics.median(times[1:]),
                         gb_per_s=gb / t, n=n, p=a.p, chunk=reader.chunk_size))
        print(f"read ahead {depth}: a pass {t:.3f} s (median {rows[-1]['pass_median_s']:.3f}), "
              f"{gb / t:.2f} GB/s of float32 rows", flush=True)
    pathlib.Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    with open(a.out, "w") as f:
        json.dump({"environment": environment(), "results": rows}, f, indent=1)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
