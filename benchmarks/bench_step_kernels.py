"""Where a search step's kernels come from: the compiled step's fusions (XLA's kernels;
compile and load time follow their number) grouped by the jaxtree functions that made them.

The demo's table (1,000 x 10, the default basis, float32), one step compiled per variant
(``backfit`` / ``greedy``, squared or logistic loss), jaxtree's executable cache off. Each
fusion's source is read from the compiled module's stack-frame table (the
``HloModuleProto``'s ``stack_frame_index``, decoded here from the protobuf wire format:
jaxlib ships no Python protobuf classes for it); a fusion is attributed to the chain of
jaxtree functions on its stack (JAX's and the standard library's frames dropped), cut to
``--depth`` functions from the outermost one below the step::

    python benchmarks/bench_step_kernels.py [--variant backfit] [--loss squared] [--depth 3]
        [--out benchmarks/results/step_kernels.json]

The stack-frame field numbers are XLA's (``xla/service/hlo.proto``); if a jaxlib changes
them, the script says it found no stack frames.
"""

import argparse
import collections
import json
import os
import re
import sys

os.environ["JAXTREE_COMPILATION_CACHE"] = "0"

import jax  # noqa: E402
import numpy as np  # noqa: E402

from bench_step_parts import demo  # noqa: E402
from jaxtree import program as prog  # noqa: E402
from jaxtree import search  # noqa: E402

_SKIP = ("<module>", "<lambda>", "step", "_insert_then_finish", "insert_step", "finish_step")


def _varint(b: bytes, i: int) -> tuple:
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def _fields(b: bytes) -> list:
    """``[(field number, value)]`` of one protobuf message (varints as ints, the rest bytes)."""
    i, out = 0, []
    while i < len(b):
        key, i = _varint(b, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(b, i)
        elif wire == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        elif wire == 1:
            v, i = b[i:i + 8], i + 8
        elif wire == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError(f"protobuf wire type {wire}")
        out.append((field, v))
    return out


def _stack_frames(proto: bytes):
    """``frame id -> [(file, function, line), ...]`` (innermost first), or None."""
    index = [v for f, v in _fields(proto) if f == 17]  # HloModuleProto.stack_frame_index
    if not index:
        return None
    index = _fields(index[0])
    files = [v.decode() for f, v in index if f == 1]
    funcs = [v.decode() for f, v in index if f == 2]
    locs = [dict(_fields(v)) for f, v in index if f == 3]  # file id, function id, line
    frames = [dict(_fields(v)) for f, v in index if f == 4]  # location id, parent frame id

    def chain(fid: int) -> list:
        out = []
        while fid:
            frame = frames[fid - 1]
            loc = locs[frame.get(1, 0) - 1]
            out.append((files[loc.get(1, 0) - 1], funcs[loc.get(2, 0) - 1], loc.get(3, 0)))
            fid = frame.get(2, 0)
        return out

    return chain


def kernels(variant: str, loss: str) -> tuple:
    """``(compiled text, chain)`` of the demo's step."""
    data, basis = demo(loss)
    cfg = search.search_config(variant, 10, 10 * basis.q, loss=loss)
    step = jax.jit(lambda p, d: search.step(p, d, basis, cfg))
    compiled = step.lower(prog.empty_program(cfg.max_k, np.float32), data).compile()
    module = compiled.runtime_executable().hlo_modules()[0]
    return compiled.as_text(), _stack_frames(module.as_serialized_hlo_module_proto())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", default="backfit", choices=["backfit", "greedy"])
    ap.add_argument("--loss", default="squared", choices=["squared", "logistic"])
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--out", default=None, help="a JSON file to write the counts to")
    args = ap.parse_args()
    text, chain = kernels(args.variant, args.loss)
    lines = [line for line in text.splitlines() if " fusion(" in line]
    print(f"{args.variant} step, {args.loss} loss: {len(lines)} fusions, "
          f"{len(text) / 1e6:.2f} MB of compiled text")
    if chain is None:
        sys.exit("no stack frames in the compiled module (XLA's proto changed?)")
    groups = collections.Counter()
    for line in lines:
        m = re.search(r"stack_frame_id=(\d+)", line)
        frames = chain(int(m.group(1))) if m else []
        names = []
        for file, func, _ in reversed(frames):  # outermost first
            name = func.split(".<locals>")[0]
            if "jaxtree" in file and "site-packages" not in file and name not in _SKIP \
                    and name not in names:
                names.append(name)
        groups[" > ".join(names[:args.depth]) or "(no jaxtree frame)"] += 1
    for key, count in groups.most_common():
        print(f"{count:5d}  {key}")
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump({"variant": args.variant, "loss": args.loss, "fusions": len(lines),
                       "text_bytes": len(text), "depth": args.depth,
                       "groups": dict(groups.most_common())}, f, indent=1)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
