"""Host threads for the large numpy passes over a table's rows.

A fit reads its in-memory table on the host a few times before anything reaches the device:
the column extremes (validation, encoding, scaling), the scaling itself and the cast into
padded chunks. numpy releases the GIL in these element-wise passes, so on a table of many
rows they run on :func:`workers` threads, each over its own block of rows, and give exactly
the serial values (element-wise arithmetic and min/max do not depend on the order).

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

MIN_VALUES = 1 << 22
"""Passes over fewer values (``rows * values per row``) run on the calling thread."""

_POOLS: dict = {}
_LOCK = threading.Lock()


def workers() -> int:
    """Threads of a pool: the cores, at most 8."""
    return min(8, os.cpu_count() or 1)


def pool(name: str) -> concurrent.futures.ThreadPoolExecutor:
    """The process's pool ``name`` of :func:`workers` threads named ``jaxtree-<name>``
    (``"rows"``: :func:`map_rows`; ``"read"``: a streamed pass's read-ahead,
    :func:`jaxtree.stream._blocks`), made on first use."""
    with _LOCK:
        if name not in _POOLS:
            _POOLS[name] = concurrent.futures.ThreadPoolExecutor(
                max_workers=workers(), thread_name_prefix=f"jaxtree-{name}")
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
