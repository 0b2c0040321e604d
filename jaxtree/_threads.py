"""Host threads for the large numpy passes over a table's rows.

A fit reads its in-memory table on the host a few times before anything reaches the device:
the column extremes (validation, encoding, scaling), the scaling itself and the cast into
padded chunks. numpy releases the GIL in these element-wise passes, so on a table of many
rows they run on :func:`workers` threads, each over its own block of rows, and give exactly
the serial values (element-wise arithmetic and min/max do not depend on the order). The
pass that validation, encoding and scaling share, :func:`column_extremes`, lives here with
its threads, so that each of them reads a table's ranges with one call.

Why: on one H200 a greedy fit of 10^8 rows held on the card takes 6.65 s, and the host's
serial passes over such a table would take about twice that (BENCHMARKS.md, "One H200,
today's code"; 0.8 s of them at 2e7 rows on the 2-core development CPU). Below
:data:`MIN_VALUES` values, on one core, or on one of jaxtree's own threads (a streamed
block read ahead, :func:`jaxtree.stream._blocks`), a pass runs on the calling thread.
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
from typing import Callable

import numpy as np

MIN_VALUES = 1 << 22
"""Passes over fewer values (``rows * values per row``) run on the calling thread."""

_POOLS: dict = {}
_LOCK = threading.Lock()


def workers() -> int:
    """Threads of a pool: the cores, at most 8."""
    return min(8, os.cpu_count() or 1)


def pool(name: str, threads: int | None = None) -> concurrent.futures.ThreadPoolExecutor:
    """The process's pool ``name`` of ``threads`` threads (None: :func:`workers`) named
    ``jaxtree-<name>``, made on first use (its first caller's ``threads`` counts):
    ``"rows"``, :func:`map_rows`; ``"read"``, a streamed pass's read-ahead
    (:func:`jaxtree.stream._blocks`); ``"read-ahead"`` and ``"compile"``, the executable
    cache's loads and ahead compilations (:mod:`jaxtree._executables`)."""
    with _LOCK:
        if name not in _POOLS:
            _POOLS[name] = concurrent.futures.ThreadPoolExecutor(
                max_workers=threads or workers(), thread_name_prefix=f"jaxtree-{name}")
        return _POOLS[name]


def _forget_pools() -> None:
    """In a forked child the pools' threads do not exist: it makes its own on first use
    (a stale pool would wait for threads that never run)."""
    global _LOCK
    _POOLS.clear()
    _LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)


def row_parts(n: int, values: int) -> list:
    """The row blocks of a pass over ``n`` rows holding ``values`` values in all: one block
    (the calling thread) below :data:`MIN_VALUES`, with one worker, or on a jaxtree thread
    (no nested pools); else :func:`workers` blocks of nearly equal size."""
    k = workers()
    if (values < MIN_VALUES or k == 1 or n < 2
            or threading.current_thread().name.startswith("jaxtree-")):
        return [slice(0, n)]
    step = -(-n // k)
    return [slice(s, min(s + step, n)) for s in range(0, n, step)]


def map_rows(fn: Callable, n: int, values: int) -> list:
    """``[fn(rows) for rows in row_parts(n, values)]``, the blocks on the pool's threads."""
    parts = row_parts(n, values)
    if len(parts) == 1:
        return [fn(parts[0])]
    return list(pool("rows").map(fn, parts))


_EXTREMES_WIDTH = 4096


def column_extremes(a: np.ndarray) -> tuple:
    """``(min, max)`` of every column of a 2-D real array, in its dtype; a column holding a
    NaN gives NaN in both (as ``np.min``). Exact: the same values as ``a.min(0)`` and
    ``a.max(0)``.

    Why not those: on a C-ordered ``(n, p)`` matrix with few columns numpy reduces along
    the rows column by column with a stride of ``p``, which is several times slower than a
    contiguous reduction. Here the rows are viewed as ``(n / r, r * p)`` (``r`` rows side
    by side, about :data:`_EXTREMES_WIDTH` values wide), reduced contiguously, then folded
    (the rows that do not fill a group are reduced apart). Measured at 7e5 x 8 float64 on
    the 2-core machine: 16-26 ms against 110 ms for ``a.min(0)`` and ``a.max(0)``; the
    estimator's fit reads these extremes for validation, the missing-value scan and the
    scaling (issue 25: the host work of a warm fit that a GPU does not hide). A large table's
    blocks of rows are reduced on threads (:func:`map_rows`), then folded.
    """
    n, p = a.shape
    if len(row_parts(n, a.size)) > 1:  # a large table: blocks of rows on threads
        parts = map_rows(lambda rows: column_extremes(a[rows]), n, a.size)
        return (np.minimum.reduce([lo for lo, _ in parts]),
                np.maximum.reduce([hi for _, hi in parts]))
    r = max(1, _EXTREMES_WIDTH // max(p, 1))
    m = (n // r) * r if a.flags.c_contiguous and r > 1 else 0
    if m == 0:
        return a.min(0), a.max(0)
    body = a[:m].reshape(m // r, r * p)
    lo = body.min(0).reshape(r, p).min(0)
    hi = body.max(0).reshape(r, p).max(0)
    if m < n:
        rest = a[m:]
        lo, hi = np.minimum(lo, rest.min(0)), np.maximum(hi, rest.max(0))
    return lo, hi
