"""The row plan: how every pass over the rows is cut into sequential steps, per device.

Every pass over the training rows (the scorer's moments, the refinement's loss and
gradient, the held-out loss, the shape terms' statistics, a streamed fit's blocks) is a
``lax.scan`` over equal chunks of rows. The chunk size is the one knob that decides whether
a pass is a few large kernels or many small ones, and the right value depends on the
device:

* **CPU: 2,048 rows** (:data:`CPU_CHUNK`). A chunk's design matrix ``Phi (m, p*q)`` stays
  in the cache (2.6 MB at p = 8, q = 40); larger chunks were measured slower on the 2-core
  development machine (BENCHMARKS.md) and the per-step overhead of a CPU scan is small.
* **Accelerators (GPU, TPU): the largest power of two** whose ``Phi`` takes at most
  :data:`ACCEL_PHI_BYTES` (2 GiB), at least :data:`CPU_CHUNK`, at most
  :data:`ACCEL_MAX_CHUNK`. A pass is then one step up to about a million rows (p*q = 320 in
  float32: 2^20 rows) and ``ceil(n / 2^20)`` steps beyond; above :data:`ACCEL_GRAIN`
  rows the chunks are equal and rounded up to a multiple of it (7e5 rows: one chunk of
  720,896), not to a power of two. Measured on one H100
  (2026-11-27, n = 10^6, p = 8, q = 40, k = 10, float32): a whole fit takes 4.01 s at 2,048
  rows per chunk (490 sequential steps a pass: latency, not arithmetic), 0.49 s at 65,536,
  0.22 s at 262,144 and 0.12 s at 2^20; n = 10^7 at 2^20: 0.88 s. The budget keeps the
  scorer's working set (``Phi``, ``Phi**2`` and the products, about three ``Phi``) near
  6 GiB, well inside an 80 GB card and any data-centre GPU.

Below one chunk, :func:`jaxtree.scoring.chunk_shape` rounds ``n`` up to a power of two, so
nearby sizes share one compiled program on every device.

Whether a large in-memory table is held on the device or read from the host block by block
(a :class:`jaxtree._fit.source.Streamed` source over the array) is part of the plan too: on a CPU from
:data:`jaxtree.estimator.CHUNKED_FIT_MIN_VALUES` values on (the host copies of the whole
matrix are what a CPU fit must bound), on an accelerator once the covariates would take
more than :data:`ACCEL_IN_MEMORY_SHARE` of the device's memory (at least
:data:`ACCEL_IN_MEMORY_BYTES`; the device copy is what must fit). A streamed fit sends blocks of about
one chunk of the plan to the device: ``chunks_per_block`` is 1 on an accelerator (each
block one large step) and :data:`CPU_CHUNKS_PER_BLOCK` on a CPU.

The plan changes how rows are grouped, never what is computed: chunks are merged with
Chan's pairwise update and zero-weight padding rows add nothing, so every plan gives the
same choices and the same predictions up to float rounding (float64: 1e-10;
``tests/test_plan.py`` checks this on the CPU with the accelerator plan forced).

``chunk_size="auto"`` (the default of every estimator and of :func:`jaxtree.fit_batch`)
applies :func:`row_plan`; an integer ``chunk_size`` still wins (the plan then records
``rule="explicit"``). A fitted estimator keeps the plan that ran in ``row_plan_``.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import jax
import numpy as np

from jaxtree import scoring

__all__ = [
    "ACCEL_GRAIN",
    "ACCEL_IN_MEMORY_BYTES",
    "ACCEL_IN_MEMORY_SHARE",
    "ACCEL_MAX_CHUNK",
    "ACCEL_PHI_BYTES",
    "CPU_CHUNK",
    "CPU_CHUNKS_PER_BLOCK",
    "RowPlan",
    "check_chunk_size",
    "device_memory",
    "platform_of",
    "row_plan",
]

CPU_CHUNK = 2048
"""Rows per chunk on a CPU (and the smallest chunk of any plan)."""

CPU_CHUNKS_PER_BLOCK = 16
"""Chunks per host-to-device block of a streamed fit on a CPU (:func:`jaxtree.stream.fit`)."""

ACCEL_PHI_BYTES = 2 * 2**30
"""An accelerator's chunk is the largest power of two whose ``Phi (m, p*q)`` takes at most
this many bytes."""

ACCEL_MAX_CHUNK = 1 << 23
"""The largest chunk of any plan (few covariates and basis functions: 8.4 million rows)."""

ACCEL_GRAIN = 1 << 16
"""On an accelerator, a fit of more rows than this cuts them into ``ceil(n / chunk)`` equal
chunks rounded up to a multiple of this many rows (below it: one chunk of ``n`` rounded up
to a power of two, as on a CPU)."""

ACCEL_IN_MEMORY_BYTES = 2**30
"""On an accelerator an in-memory table with more covariate bytes than this (in the fit's
dtype; 1 GiB: 3.3e7 rows of 8 float32 columns), or than :data:`ACCEL_IN_MEMORY_SHARE` of
the device's memory where that is more, is read from the host block by block instead of
being copied to the device whole."""

ACCEL_IN_MEMORY_SHARE = 1 / 8
"""The share of an accelerator's memory (its allocator's limit, :func:`device_memory`) that
an in-memory table's covariates may take: 13 GB on an H200 (10^8 rows of 8 float32 columns
take 3.2 GB), 7.5 GB on an 80 GB H100. The rest holds the targets and weights, the
scorer's working set (about three ``Phi`` of one chunk, :data:`ACCEL_PHI_BYTES` each), the
shape terms' values and the refinement's. Measured on one H200 (2026-11-29; BENCHMARKS.md,
"10^8 rows on the card"): greedy ``k = 10`` on 10^8 rows held on the card took 6.65 s
(0.61 s an iteration), where streaming from host memory took 4.7 s an iteration already
at 10^7 rows."""

_ACCELERATORS = ("gpu", "cuda", "rocm", "tpu", "metal")


class RowPlan(NamedTuple):
    """How a fit's passes cut the rows (:func:`row_plan`).

    Attributes:
      platform: the platform the plan is for (``"cpu"``, ``"gpu"``, ``"tpu"``, ...).
      chunk: rows per chunk (``chunk_size`` of :func:`jaxtree.scoring.chunk`).
      n_chunks: sequential steps of one in-memory pass over ``n`` rows.
      rows_per_step: rows per step (``chunk``, or ``n`` rounded up to a power of two when
        ``n`` is smaller than one chunk).
      chunks_per_block: chunks per host-to-device block of a streamed fit.
      in_memory: whether an in-memory table of this size is held on the device whole
        (False: read from the host block by block).
      rule: ``"cpu"``, ``"accelerator"`` or ``"explicit"`` (an integer ``chunk_size``).
    """

    platform: str
    chunk: int
    n_chunks: int
    rows_per_step: int
    chunks_per_block: int
    in_memory: bool
    rule: str


def platform_of(devices=None) -> str:
    """The platform a fit runs on: that of the first of ``devices`` (a list of
    ``jax.Device``, or None for JAX's default backend)."""
    if devices:
        return str(list(devices)[0].platform)
    return str(jax.default_backend())


def device_memory(devices=None) -> Optional[int]:
    """The memory of the first of ``devices`` (None: JAX's first device) in bytes, as its
    allocator reports it (``memory_stats()["bytes_limit"]``), or None where the device does
    not say (a CPU). Reading it starts the device's allocator, as any fit does."""
    try:
        dev = list(devices)[0] if devices else jax.devices()[0]
        stats = dev.memory_stats() if is_accelerator(dev.platform) else None
        return int(stats["bytes_limit"]) if stats and "bytes_limit" in stats else None
    except Exception:  # noqa: BLE001 - a backend without memory statistics
        return None


def is_accelerator(platform: str) -> bool:
    """Whether the row plan treats ``platform`` as an accelerator (GPU, TPU, ...)."""
    return platform.lower() in _ACCELERATORS


def check_chunk_size(value, name: str = "chunk_size"):
    """``"auto"`` or an integer ``>= 1``; raises ``ValueError``/``TypeError`` otherwise.

    Args:
      value: the chunk size to check.
      name: the parameter's name, for the error message.
    """
    if isinstance(value, str):
        if value == "auto":
            return value
        raise ValueError(f"{name} must be 'auto' or an integer >= 1; got {value!r}.")
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be 'auto' or an integer >= 1; got "
                        f"{type(value).__name__} {value!r}.")
    if value < 1:
        raise ValueError(f"{name} must be 'auto' or an integer >= 1; got {value!r}.")
    return value


def _pow2_floor(v: float) -> int:
    return 1 << max(int(v), 1).bit_length() - 1


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def row_plan(n: int, p: int, q: int, dtype=np.float32, *, chunk_size="auto",
             platform: Optional[str] = None, cpu_chunked_values: Optional[int] = None,
             batch: int = 1, device_bytes: Optional[int] = None) -> RowPlan:
    """The row plan of a fit of ``n`` rows, ``p`` covariates and ``q`` basis functions.

    Args:
      n: rows (0 when unknown); p, q: covariates and basis functions; dtype: the fit's
        float dtype.
      chunk_size: ``"auto"`` (the rule of the module docstring) or an integer, which wins.
      platform: ``"cpu"``, ``"gpu"``, ``"tpu"``, ...; None: JAX's default backend. Tests
        force ``"gpu"`` on a CPU to run the accelerator plan there.
      cpu_chunked_values: on a CPU, the ``n*p`` from which an in-memory table is read block
        by block (the estimator's ``CHUNKED_FIT_MIN_VALUES``); None: always in memory.
      batch: data sets searched at once (:func:`jaxtree.fit_batch` vmaps every pass over
        ``batch`` of them): the accelerator budget is shared, so the chunk is ``batch``
        times smaller.
      device_bytes: on an accelerator, its memory (:func:`device_memory`; None: unknown):
        an in-memory table's covariates may take :data:`ACCEL_IN_MEMORY_SHARE` of it, or
        :data:`ACCEL_IN_MEMORY_BYTES` where that is more.

    Returns:
      :class:`RowPlan`.
    """
    check_chunk_size(chunk_size)
    platform = platform_of() if platform is None else str(platform)
    accel = is_accelerator(platform)
    item = np.dtype(dtype).itemsize * max(int(batch), 1)
    accel_chunk = int(min(max(_pow2_floor(ACCEL_PHI_BYTES / max(p * q * item, 1)), CPU_CHUNK),
                          ACCEL_MAX_CHUNK))
    n = int(n)
    if chunk_size != "auto":
        chunk, rule = int(chunk_size), "explicit"
    elif accel:
        chunk, rule = accel_chunk, "accelerator"
        if n > ACCEL_GRAIN and accel_chunk >= ACCEL_GRAIN:
            # ceil(n / accel_chunk) equal chunks, each rounded up to a multiple of the grain
            # rather than to a power of two: 7e5 rows are one chunk of 720,896 rows, not of
            # 2^20 (30% less padding); sizes within one grain share a compiled program.
            steps = _ceil_div(n, accel_chunk)
            chunk = _ceil_div(_ceil_div(n, steps), ACCEL_GRAIN) * ACCEL_GRAIN
    else:
        chunk, rule = CPU_CHUNK, "cpu"
    if n > 0:  # the rows of one step, as scoring.chunk_shape cuts them (one rule)
        n_chunks, rows_per_step = scoring.chunk_shape(n, chunk)
    else:
        n_chunks, rows_per_step = 0, chunk
    if accel:
        in_memory = n * p * item <= max(ACCEL_IN_MEMORY_BYTES,
                                        int((device_bytes or 0) * ACCEL_IN_MEMORY_SHARE))
        # a block of about one accelerator chunk (an explicit small chunk: several of them)
        per_block = 1 if rule == "accelerator" else max(1, accel_chunk // chunk)
    else:
        in_memory = cpu_chunked_values is None or n * p < cpu_chunked_values
        per_block = CPU_CHUNKS_PER_BLOCK
    return RowPlan(platform, chunk, n_chunks, rows_per_step, per_block, bool(in_memory), rule)
