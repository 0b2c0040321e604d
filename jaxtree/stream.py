"""Streaming the search over data that does not fit in memory.

Why one long file: every pass of the in-memory search (scores, replacements, deletions,
the beam, the classification loss, shape terms, pruning) has its block-by-block form here,
each beside the others and the one pass driver (``_Passes``) they share.

The in-memory search (:func:`jaxtree.search.fit`) scans the chunks of a device-resident
:class:`jaxtree.scoring.Data`. Here the rows live on the host (a ``numpy.memmap``, or any
re-iterable source of row chunks) and every pass over the data reads them block by block:

* a *block* is ``chunks_per_block`` chunks of ``chunk_size`` rows, stacked on the host into
  ``(B, m, p)`` arrays; the last block is padded with zero-weight chunks, so every block has
  the same shape and each kernel compiles once;
* a kernel is a module-level jitted function ``(acc, ..., xb, yb, wb) -> acc`` that runs
  ``lax.scan`` over the block's chunks, carrying the accumulator across blocks. The order of
  the merges is therefore exactly the in-memory ``scan``'s (a padded chunk merges as an exact
  identity), and the result equals the in-memory search (tested);
* device memory holds one block (plus one in flight: dispatch is asynchronous, so the host
  reads the next block while the device works on the current one).

Each iteration makes these passes: one scoring pass (``chunk_moments`` merged with
Chan's formulas), then for ``refine="coordinate"`` one pass per leaf and sweep
(``coordinate_moments``), for ``refine="optax"`` one pass per loss/gradient evaluation
of the L-BFGS line search (see :func:`_joint`). The reported loss comes from these
passes, not from one of its own. Scaling needs one more pass before the search
(:func:`scaling`).

The other searches stream too, with the in-memory rules (shared functions of
:mod:`jaxtree.search`): the backfit moves (the pair screen reads its at most
``Config.pair_rows`` evenly spaced rows into memory once, :func:`screen_rows`; the pair's
exact fit, the replacements and their refinements are passes), the beam (one scoring pass
for all members, :func:`beam_score_block`), and pruning (:func:`prune`, deletion passes).

Host transfers: the choice (and the leaf slots) once per iteration, plus the per-pass
host loop itself. That is the price of data that lives on the host.
"""

from __future__ import annotations

import collections
import functools
import itertools
import threading
from typing import Callable, Iterable, Optional

import jax
import jax.numpy as jnp
import numpy as np

from jaxtree import _scaling as scaling_
from jaxtree import _threads
from jaxtree import moves
from jaxtree import program as prog
from jaxtree import refine as refine_
from jaxtree import scoring, search
from jaxtree import shapes as shapes_

__all__ = [
    "block_passes",
    "beam_score_block",
    "check_source_arrays",
    "ChunkReader",
    "coordinate_block",
    "delete_block",
    "fit",
    "is_streamable",
    "loss_block",
    "loss_step",
    "prune",
    "refine_given_shapes",
    "refit_shapes",
    "replace_block",
    "scaling",
    "scaling_and_indicators",
    "screen_rows",
    "score_block",
    "value_and_grad_block",
    "working_block",
]


# ----------------------------------------------------------------------------- sources


class _Rows:
    """The rows ``rows`` of an array, indexed like one (``[slice]``, ``[index array]``)."""

    def __init__(self, base, rows):
        self.base, self.rows = base, rows
        self.shape = (len(rows),) + tuple(base.shape[1:])
        self.dtype, self.ndim = base.dtype, base.ndim

    def __getitem__(self, key):
        return np.asarray(self.base[self.rows[key]])


class ChunkReader:
    """Re-iterable source of fixed-size row chunks from host arrays (e.g. ``np.memmap``).

    Iterating yields ``(x, y, w)`` numpy chunks of exactly ``chunk_size`` rows: float
    ``(m, p)``, ``(m,)``, ``(m,)``; the last chunk is padded with zero-weight rows. Only
    one chunk of rows is read at a time. With ``x_min``/``x_scale``/``y_center``/``y_scale``
    set (see :meth:`scaled`), chunks are scaled in float64 and cast to ``dtype``, exactly
    as the in-memory estimator does.

    Args:
      x: ``(n, p)`` floating array (memmap or ndarray).
      y: ``(n,)`` floating array.
      sample_weight: ``(n,)`` non-negative weights or None.
      chunk_size: rows per chunk, ``1 <= chunk_size <= n``.
      dtype: dtype of the yielded chunks (default: ``x``'s).

    Raises:
      ValueError: for a non-floating dtype, wrong shapes or an invalid chunk size.
    """

    def __init__(self, x, y, sample_weight=None, chunk_size: int = 2048, dtype=None):
        check_source_arrays(x, y, sample_weight, chunk_size)
        self.x, self.y, self.sample_weight = x, y, sample_weight
        self.n, self.p = x.shape
        self.chunk_size = int(chunk_size)
        self.dtype = np.dtype(dtype or x.dtype)
        self._scale = None

    @property
    def n_chunks(self) -> int:
        return -(-self.n // self.chunk_size)

    def scaled(self, sc: "scaling_.Scaling", dtype) -> "ChunkReader":
        """A reader yielding chunks scaled by ``sc`` (:func:`jaxtree._scaling.scale_rows`).

        Args:
          sc: the :class:`jaxtree._scaling.Scaling` to apply.
          dtype: dtype of the yielded (scaled) chunks.
        """
        return self._with(dtype=np.dtype(dtype), _scale=sc)

    def with_chunk(self, chunk_size: int) -> "ChunkReader":
        """This reader with ``chunk_size`` rows per chunk (``1 <= chunk_size <= n``): a fit
        reads a memmap with the chunk its row plan chose once it knew the encoded covariates
        (:func:`jaxtree._fit.source.scaled`)."""
        if chunk_size == self.chunk_size:
            return self
        check_source_arrays(self.x, self.y, self.sample_weight, chunk_size)
        return self._with(chunk_size=int(chunk_size))

    def subset(self, rows) -> "ChunkReader":
        """A reader of the rows at sorted indices ``rows`` of this one, in that order (e.g. a
        held-out split's two parts), with the same chunk size, dtype and scaling: its chunks
        are the ones of the in-memory ``x[rows]`` chunked alike, each read by one indexed read
        (a memmap reads the pages holding those rows)."""
        rows = np.asarray(rows, np.int64)
        sw = None if self.sample_weight is None else _Rows(self.sample_weight, rows)
        return self._with(x=_Rows(self.x, rows), y=_Rows(self.y, rows), sample_weight=sw,
                          n=len(rows))

    def with_x(self, x) -> "ChunkReader":
        """This reader reading ``x`` instead, an array of the same shape and dtype (a fit's
        encoded rows with their fill values moved to the range's low end,
        :func:`jaxtree._inputs.encoding.refill`); the same object when ``x`` is its own."""
        if x is self.x:
            return self
        if tuple(x.shape) != tuple(self.x.shape) or np.dtype(x.dtype) != np.dtype(self.x.dtype):
            raise ValueError(f"with_x needs rows of shape {tuple(self.x.shape)} and dtype "
                             f"{np.dtype(self.x.dtype)}; got {tuple(x.shape)}, {x.dtype}.")
        return self._with(x=x)

    def _with(self, **changes) -> "ChunkReader":
        """A copy of this reader with ``changes`` to its attributes (no checks: the callers'
        values are derived from this reader's checked ones)."""
        r = ChunkReader.__new__(ChunkReader)
        r.__dict__.update(self.__dict__, **changes)
        return r

    def take(self, rows):
        """Unscaled float64 rows ``(x (r, p), y (r,), w (r,) or None)`` at sorted indices
        ``rows (r,)`` (e.g. a subset for the shape search): ``O(r*p)`` memory, read from the
        source in one indexed read (a memmap reads only the pages of those rows)."""
        rows = np.asarray(rows, np.int64)
        w = None if self.sample_weight is None else np.asarray(self.sample_weight[rows], np.float64)
        return np.asarray(self.x[rows], np.float64), np.asarray(self.y[rows], np.float64), w

    def raw_chunks(self):
        """Unpadded float64 chunks ``(x, y, w or None)`` (for the scaling pass)."""
        m = self.chunk_size
        for s in range(0, self.n, m):
            e = min(s + m, self.n)
            w = None if self.sample_weight is None else np.asarray(self.sample_weight[s:e], np.float64)
            yield np.asarray(self.x[s:e], np.float64), np.asarray(self.y[s:e], np.float64), w

    def block(self, start: int, chunks_per_block: int):
        """The block of ``chunks_per_block`` chunks whose first row is ``start`` (a multiple
        of ``chunks_per_block * chunk_size``): host arrays ``(x (B, m, p), y (B, m), w (B,
        m))``, the last block of a pass padded with zero-weight rows. The same values as
        stacking :meth:`__iter__`'s chunks, read and scaled a block of rows at a time (fewer,
        larger numpy operations, no per-chunk buffers); blocks are independent, so several
        can be read at once (:func:`_blocks` reads ahead on threads)."""
        m, dt, p = self.chunk_size, self.dtype, self.p
        rows = int(chunks_per_block) * m
        s, e = start, min(start + rows, self.n)
        x = np.asarray(self.x[s:e], np.float64)
        y = np.asarray(self.y[s:e], np.float64)
        w = None if self.sample_weight is None else np.asarray(self.sample_weight[s:e], np.float64)
        if self._scale is not None:
            x, y = scaling_.scale_rows(self._scale, x, y, w)
        xb, yb, wb = np.zeros((rows, p), dt), np.zeros((rows,), dt), np.zeros((rows,), dt)
        xb[: e - s] = x
        yb[: e - s] = y
        wb[: e - s] = 1 if w is None else w
        return xb.reshape(-1, m, p), yb.reshape(-1, m), wb.reshape(-1, m)

    def __iter__(self):
        m, dt = self.chunk_size, self.dtype
        for x, y, w in self.raw_chunks():
            if self._scale is not None:
                x, y = scaling_.scale_rows(self._scale, x, y, w)
            rows = x.shape[0]
            xc = np.zeros((m, self.p), dt)
            yc_ = np.zeros((m,), dt)
            wc = np.zeros((m,), dt)
            xc[:rows] = x
            yc_[:rows] = y
            wc[:rows] = 1 if w is None else w
            yield xc, yc_, wc


def check_source_arrays(x, y, sample_weight, chunk_size) -> None:
    """Validates host arrays for streaming; raises ValueError naming the problem.

    Args:
      x: ``(n, p)`` floating array (memmap or ndarray).
      y: ``(n,)`` floating array.
      sample_weight: ``(n,)`` floating array or None.
      chunk_size: rows per chunk, ``1 <= chunk_size <= n``.
    """
    for name, a in (("X", x), ("y", y), ("sample_weight", sample_weight)):
        if a is None:
            continue
        if not hasattr(a, "dtype") or not hasattr(a, "shape"):
            raise TypeError(f"{name} must be a numpy array or memmap for streaming; got "
                            f"{type(a).__name__}.")
        if np.dtype(a.dtype).kind != "f":
            raise ValueError(f"{name} must have a floating dtype for streaming; got {a.dtype}. "
                             f"Write the memmap as float32 or float64.")
    if len(x.shape) != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {tuple(x.shape)}.")
    n = x.shape[0]
    if n < 2 or x.shape[1] == 0:
        raise ValueError(f"X needs at least 2 rows and 1 column; got shape {tuple(x.shape)}.")
    if len(y.shape) != 1 or y.shape[0] != n:
        raise ValueError(f"y must have shape ({n},) to match X's {n} rows; got {tuple(y.shape)}.")
    if sample_weight is not None and tuple(sample_weight.shape) != (n,):
        raise ValueError(f"sample_weight must have shape ({n},); got {tuple(sample_weight.shape)}.")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)):
        raise TypeError(f"chunk_size must be an integer; got {chunk_size!r}.")
    if not 1 <= chunk_size <= n:
        fix = ("Use a smaller chunk_size (or fit in memory)." if chunk_size > n else
               "A chunk holds at least one row.")
        raise ValueError(f"chunk_size must be between 1 and the number of rows {n}; got "
                         f"{chunk_size}. {fix}")


STREAMED_TYPES = (np.memmap, ChunkReader)
"""What the estimators read block by block (:func:`is_streamable`)."""


def is_streamable(X) -> bool:
    """True for inputs the estimator streams: a ``np.memmap`` or a :class:`ChunkReader`.

    Args:
      X: the estimator's input.
    """
    return isinstance(X, STREAMED_TYPES)


def scaling(reader: ChunkReader, *, round_x: bool = False) -> scaling_.Scaling:
    """One streamed pass: per-column min/max of ``X``, the range of ``y``, finiteness
    (:func:`scaling_and_indicators`' scaling).

    Returns the same scaling as the in-memory estimator (:mod:`jaxtree._scaling`):
    ``x -> (x - x_min) * x_scale`` into ``[0, 1]`` and ``y -> (y - y_center) / y_scale``
    into ``[-1, 1]``; rows with zero weight do not count.

    Args:
      reader: the :class:`ChunkReader` of the raw data.
      round_x: widen the covariates' ranges to round bounds, as the estimators do for
        a basis on the scaled covariates (:func:`jaxtree._scaling.round_bounds`; a column
        of two values keeps them).

    Raises:
      ValueError: for NaN/inf values (naming the first row and, in ``X``, the column; a
        TreeRegressor encodes the NaN of a streamed ``X`` before this pass with
        ``missing='indicator'``: :func:`jaxtree._inputs.encoding.fit_streamed`), negative or
        all-zero weights.
    """
    return scaling_and_indicators(reader, round_x=round_x)[0]


def scaling_and_indicators(reader: ChunkReader, *, round_x: bool = False) -> tuple:
    """``(scaling, indicators, two_valued, cut)``: :func:`scaling`'s pass, which also finds the
    columns whose scaled values are only 0 and 1 on the rows of positive weight (what
    :func:`jaxtree.scoring.binary_columns` finds on the scaled rows of an in-memory fit; the
    streamed search sums their candidates from two columns each,
    :func:`jaxtree.scoring.indicator_rule`) and those of exactly two values (what
    :func:`jaxtree._scaling.two_valued` finds in an in-memory fit's scaling; a formula
    reads them as lines). Each column's values are kept while it has at most two
    (:func:`jaxtree._scaling.add_two_values`), and scaled as the in-memory rows are after the
    pass (:func:`jaxtree._scaling.binary_after`).

    Args:
      reader: the :class:`ChunkReader` of the raw data.
      round_x: as :func:`scaling`'s.

    Returns:
      The :class:`jaxtree._scaling.Scaling`, the increasing positions of each kind of
      column, and the columns whose range stops short of a far tail with their observed
      extremes (:func:`jaxtree._scaling.cut_columns`).

    Raises:
      ValueError: as :func:`scaling`.
    """
    lo = np.full(reader.p, np.inf)
    hi = np.full(reader.p, -np.inf)
    ylo, yhi, wsum, start = np.inf, -np.inf, 0.0, 0
    values: list = [set() for _ in range(reader.p)]  # None once a column has three values
    tail_x, tail_w = [], []  # the rows far_tails reads, as an in-memory fit's (tail_sample)
    for x, y, w in reader.raw_chunks():
        for name, a in (("X", x), ("y", y), ("sample_weight", w)):
            if a is not None and not np.isfinite(a).all():
                first = np.argwhere(~np.isfinite(a))[0]
                row = start + int(first[0])
                if name == "X":  # name the column and the kind of value, and what to do
                    where = f"at row {row}, column {int(first[1])} (the first non-finite value)"
                    if np.isnan(a[tuple(first)]):
                        raise ValueError(
                            f"X contains NaN (a missing value) {where}. Impute or drop the "
                            "missing values before fitting, or fit with missing='indicator' "
                            "(TreeRegressor's default), which learns from them in a streamed X "
                            "(a fill value and a '<column> missing' covariate).")
                    raise ValueError(f"X contains an infinite value {where}. Remove or replace "
                                     "infinite values before fitting (inf is not a missing "
                                     "value).")
                raise ValueError(f"{name} contains NaN or infinite values, the first at row {row}. "
                                 "Remove or impute them before fitting.")
        if w is not None:
            if (w < 0).any():
                raise ValueError("sample_weight must be non-negative.")
            wsum += w.sum()
        part = scaling_.extremes(x, y, w)
        lo, hi = np.minimum(lo, part[0]), np.maximum(hi, part[1])
        ylo, yhi = min(ylo, part[2]), max(yhi, part[3])
        scaling_.add_two_values(values, x, w, part[0], part[1])
        xt, wt = scaling_.tail_sample(x, w, start, reader.n)
        tail_x.append(np.array(xt, np.float64))
        tail_w.append(None if wt is None else np.array(wt, np.float64))
        start += x.shape[0]
    if reader.sample_weight is not None and not wsum > 0:
        raise ValueError("sample_weight must have a positive sum.")
    two = np.array([v is not None and len(v) == 2 for v in values], bool)
    a, b = scaling_.far_tails(np.concatenate(tail_x), None if reader.sample_weight is None
                              else np.concatenate(tail_w), lo, hi, two)
    sc = scaling_.from_extremes(a, b, ylo, yhi, round_x=round_x, two_valued=two)
    return (sc, scaling_.binary_after(sc, values), scaling_.positions(two),
            scaling_.cut_columns(lo, hi, a, b))


READ_AHEAD = 8  # blocks of a ChunkReader read (and put on the device) ahead of the one in use


def _blocks(source: Iterable, chunks_per_block: int, put: Callable):
    """Stacks chunks of ``source`` into device blocks ``(B, m, ...)``; pads the last block.

    A :class:`ChunkReader`'s blocks are read a block of rows at a time, up to
    :data:`READ_AHEAD` of them at once on a pool of threads (:func:`jaxtree._threads.pool`),
    each put on the device by its thread: reading, scaling and the host-to-device copy of the next blocks overlap the
    device's work on this one (numpy and the copy release the GIL). On one H200's host (16
    cores; BENCHMARKS.md, "A streamed pass reads ahead") a pass at 10^7 rows in blocks of
    2^20 took 1.10 s reading one block ahead, 0.33 s four and 0.23 s eight. The blocks come
    in order and hold the same values; at most ``READ_AHEAD + 1`` of them are alive at a
    time (about 0.1 GB of host memory each at 2^20 rows of 8 covariates).
    """
    if isinstance(source, ChunkReader):
        rows = int(chunks_per_block) * source.chunk_size
        starts = iter(range(0, source.n, rows))
        pool, ahead = _threads.pool("read"), collections.deque()

        def read(start):
            return put(source.block(start, chunks_per_block))

        try:
            for start in itertools.islice(starts, READ_AHEAD):
                ahead.append(pool.submit(read, start))
            while ahead:
                arrs = ahead.popleft().result()
                for start in itertools.islice(starts, 1):
                    ahead.append(pool.submit(read, start))
                yield arrs
        finally:  # a pass left early (an error, a closed generator) drops its reads
            for f in ahead:
                f.cancel()
        return
    buf = []
    for ch in source:
        buf.append(ch)
        if len(buf) == chunks_per_block:
            yield put(tuple(np.stack(a) for a in zip(*buf)))
            buf = []
    if buf:
        pad = chunks_per_block - len(buf)
        arrs = [np.stack(a) for a in zip(*buf)]
        arrs = [np.concatenate([a, np.zeros((pad,) + a.shape[1:], a.dtype)]) for a in arrs]
        yield put(tuple(arrs))


# ------------------------------------------------------------- per-block jitted kernels


def _scan(f, acc, xb, yb, wb):
    acc, _ = jax.lax.scan(lambda a, ch: (f(a, *ch), None), acc, (xb, yb, wb))
    return acc


@functools.partial(jax.jit, static_argnames=("basis", "precision", "buckets"))
def score_block(acc, program, slots, xb, yb, wb, binary=None, *, basis, precision, buckets=()):
    """Merges the candidate moments of a block of chunks ``(B, m, p)`` into ``acc``.

    ``buckets``: the scorer's row buckets (:func:`jaxtree.scoring.score`): the products
    run on the first ``2b`` rows of ``acc`` only, ``b`` the smallest bucket holding the
    leaves (``lax.switch``, compiled once). The other rows of ``acc`` stay as they are, and
    each row's merges are exactly the in-memory ones.

    Args:
      acc: the merged :class:`jaxtree.scoring.Moments` so far (``2L`` rows).
      program: the current tree.
      slots: int32 ``(L,)`` leaf slots (``-1`` padding).
      xb: float ``(B, m, p)`` the block's ``B`` chunks of features.
      yb: float ``(B, m)`` their targets.
      wb: float ``(B, m)`` their sample weights (0 on padding rows).
      binary: None, or int32 ``(b,)`` the positions of 0/1 columns, summed from two columns
        each (:attr:`jaxtree.scoring.Data.binary`).
      basis: the :class:`jaxtree.basis.Basis` the program indexes (static).
      precision: matmul precision (static).
    """
    n_rows_leaves = slots.shape[0]

    def rows(b):
        def run(a):
            sub = jax.tree_util.tree_map(lambda t: t[:2 * b] if t.ndim else t, a)
            sub = _scan(lambda m, x, y, w: scoring.merge(
                m, scoring.chunk_moments(program, slots[:b], x, y, w, basis, precision,
                                         binary=binary)),
                sub, xb, yb, wb)
            put = lambda t, full: full.at[:2 * b].set(t) if full.ndim else t
            return jax.tree_util.tree_map(put, sub, a)
        return run

    sizes = tuple(b for b in buckets if b < n_rows_leaves) + (n_rows_leaves,)
    if len(sizes) == 1:
        return rows(n_rows_leaves)(acc)
    idx = jnp.searchsorted(jnp.asarray(sizes), jnp.maximum(prog.n_leaves(program), 1))
    return jax.lax.switch(idx, [rows(b) for b in sizes], acc)


@functools.partial(jax.jit, static_argnames=("basis",))
def support_block(acc, xb, wb, *, basis):
    """Adds the :func:`jaxtree.scoring.support_counts` of a block's chunks ``xb (B, m, p)``
    of weights ``wb (B, m)`` in the basis ``basis`` (and its rows of positive weight) to
    ``acc = (counts (p*q,), rows)``."""
    counts, n = acc
    data = scoring.Data(xb, wb, wb)
    return counts + scoring.support_counts(data, basis), n + jnp.sum(wb > 0, dtype=jnp.int32)


@functools.partial(jax.jit, static_argnames=("basis",))
def coordinate_block(acc, program, d, xb, yb, wb, *, basis):
    """Merges leaf ``d``'s coordinate moments of a block into ``acc``.

    Args:
      acc: the merged :class:`jaxtree.scoring.Moments` so far.
      program: the current tree.
      d: the leaf slot being updated.
      xb: float ``(B, m, p)`` the block's ``B`` chunks of features.
      yb: float ``(B, m)`` their targets.
      wb: float ``(B, m)`` their sample weights (0 on padding rows).
      basis: the :class:`jaxtree.basis.Basis` the program indexes (static).
    """
    return _scan(lambda a, x, y, w: scoring.merge(
        a, refine_.coordinate_moments(program, d, x, y, w, basis)), acc, xb, yb, wb)


@functools.partial(jax.jit, static_argnames=("basis", "loss"))
def value_and_grad_block(acc, params, program, xb, yb, wb, *, basis, loss="squared"):
    """Adds a block's weighted loss (the SSE by default), its gradient w.r.t.
    ``(weight, intercept)`` (:func:`jaxtree.refine.chunk_value_and_grad`) and its weight.

    Args:
      acc: ``(value, grad, weight)`` the sums so far.
      params: ``(weight, intercept)``: the program's weights ``(S,)`` and its intercept.
      program: the current tree.
      xb: float ``(B, m, p)`` the block's ``B`` chunks of features.
      yb: float ``(B, m)`` their targets.
      wb: float ``(B, m)`` their sample weights (0 on padding rows).
      basis: the :class:`jaxtree.basis.Basis` the program indexes (static).
      loss: the loss's name (:data:`jaxtree.losses.LOSSES`, static).
    """
    def f(a, x, y, w):
        val, g = refine_.chunk_value_and_grad(params, program, x, y, w, basis, loss=loss)
        return jax.tree_util.tree_map(jnp.add, a, (val, g, jnp.sum(w)))
    return _scan(f, acc, xb, yb, wb)


@jax.jit
def _weighted_mean(acc):
    """``(value / weight, grad / weight)`` of :func:`value_and_grad_block`'s sums."""
    val, g, n = acc
    return val / n, jax.tree_util.tree_map(lambda t: t / n, g)


@functools.partial(jax.jit, static_argnames=("basis", "precision"))
def replace_block(acc, program, slots, xb, yb, wb, *, basis, precision):
    """Merges a block's replacement statistics (:func:`jaxtree.moves.replace_chunk_moments`).

    Args:
      acc: the merged statistics so far (:func:`jaxtree.moves.zero_replace_moments`).
      program: the current tree.
      slots: int32 ``(L,)`` leaf slots (``-1`` padding).
      xb: float ``(B, m, p)`` the block's ``B`` chunks of features.
      yb: float ``(B, m)`` their targets.
      wb: float ``(B, m)`` their sample weights (0 on padding rows).
      basis: the :class:`jaxtree.basis.Basis` the program indexes (static).
      precision: matmul precision (static).
    """
    return _scan(lambda a, x, y, w: moves.merge_replace(
        a, moves.replace_chunk_moments(program, slots, x, y, w, None, basis, precision)),
        acc, xb, yb, wb)


@functools.partial(jax.jit, static_argnames=("basis",))
def delete_block(acc, program, slots, under_mul, xb, yb, wb, *, basis):
    """Merges a block's deletion statistics (:func:`jaxtree.moves.delete_chunk_moments`).

    Args:
      acc: the merged statistics so far (:func:`jaxtree.moves.zero_delete_moments`).
      program: the current tree.
      slots: int32 ``(L,)`` leaf slots (``-1`` padding).
      under_mul: bool ``(L, 1)``: the leaf's parent is a ``*``.
      xb: float ``(B, m, p)`` the block's ``B`` chunks of features.
      yb: float ``(B, m)`` their targets.
      wb: float ``(B, m)`` their sample weights (0 on padding rows).
      basis: the :class:`jaxtree.basis.Basis` the program indexes (static).
    """
    return _scan(lambda a, x, y, w: moves.merge_delete(
        a, moves.delete_chunk_moments(program, slots, under_mul, x, y, w, basis)),
        acc, xb, yb, wb)


@jax.jit
def _target_moments_block(acc, xb, yb, wb):
    """Merges the centred moments of a block's targets (for the total sum of squares)."""
    return _scan(lambda a, x, y, w: scoring.merge(a, moves.scalar_moments(w, y)), acc, xb, yb, wb)


_delete_rows = jax.jit(moves.delete_rows, static_argnums=1)
_finish_delete = jax.jit(moves.finish_delete)


@functools.partial(jax.jit, static_argnames=("q",))
def _choose(program, slots, mo, allowed, *, q):
    scores = scoring.finish(program, slots, mo)
    scores = scores._replace(sse=scoring.masked(scores.sse, allowed))
    choice = scoring.select(scores, q)
    new = scoring.apply(program, choice)
    return new, choice, jnp.isfinite(choice.sse), scores.rss


@functools.partial(jax.jit, static_argnames=("basis", "max_leaves", "precision", "buckets",
                                             "candidates"))
def _screen_pick(program, sample, *, basis, max_leaves, precision, buckets, candidates):
    """The screen of a screened step (:func:`jaxtree.scoring.screened_score`) on the sample
    rows held in memory: ``(rough scores, rows, columns, screened)``."""
    rough = scoring.score(program, sample, basis, max_leaves=max_leaves, precision=precision,
                          buckets=buckets)
    return (rough,) + scoring.screen_pick(program, rough, candidates)


@functools.partial(jax.jit, static_argnames=("basis",))
def candidate_block(acc, program, slots, rows, cols, xb, yb, wb, *, basis):
    """Merges the :func:`jaxtree.scoring.candidate_moments` of a block of chunks into
    ``acc`` (the screened step's exact pass)."""
    return _scan(lambda a, x, y, w: scoring.merge(a, scoring.candidate_chunk_moments(
        program, slots, rows, cols, x, y, w, basis)), acc, xb, yb, wb)


@functools.partial(jax.jit, static_argnames=("q",))
def _choose_screened(program, rough, rows, cols, screened, mo, allowed, *, q):
    scores = scoring.screened_scores(program, rough, rows, cols, screened, mo, allowed)
    choice = scoring.select(scores, q)
    new = scoring.apply(program, choice)
    return new, choice, jnp.isfinite(choice.sse), scores.rss


@functools.partial(jax.jit, static_argnames=("q",))
def _choose_replace(program, slots, mo, allowed, *, q):
    rc = moves.finish_replace(program, slots, mo)
    rc = moves.select_replace(rc._replace(sse=scoring.masked(rc.sse, allowed)), q)
    return moves.apply_replace(program, rc), rc.sse


@functools.partial(jax.jit, static_argnames=("basis", "rows", "precision", "blocks"))
def _pair_candidate(program, screen, *, basis, rows, precision, blocks=0):
    """The best pair insertion scored on the screen rows (``search.pair_lookahead``'s)."""
    ps = moves.score_pairs(program, screen, basis, max_rows=rows, precision=precision,
                           blocks=blocks)
    pc = moves.select_pair(ps, basis.q)
    return moves.apply_pair(program, pc), pc, jnp.isfinite(ps.sse).any()


@functools.partial(jax.jit, static_argnames=("basis", "precision"))
def beam_score_block(acc, programs, slots, xb, yb, wb, binary=None, *, basis, precision):
    """:func:`score_block` for every member of a beam (leading axis of ``programs``,
    ``slots`` and ``acc``): one read of the block scores all members.

    Args:
      acc: each member's merged :class:`jaxtree.scoring.Moments` so far.
      programs: the beam's trees (leading axis: the members).
      slots: int32 ``(width, L)`` each member's leaf slots.
      xb: float ``(B, m, p)`` the block's ``B`` chunks of features.
      yb: float ``(B, m)`` their targets.
      wb: float ``(B, m)`` their sample weights (0 on padding rows).
      binary: as for :func:`score_block`.
      basis: the :class:`jaxtree.basis.Basis` the program indexes (static).
      precision: matmul precision (static).
    """
    def member(a, program, sl):
        return _scan(lambda m, x, y, w: scoring.merge(
            m, scoring.chunk_moments(program, sl, x, y, w, basis, precision, binary=binary)),
            a, xb, yb, wb)
    return jax.vmap(member)(acc, programs, slots)


@functools.partial(jax.jit, static_argnames=("q",))
def _beam_children(programs, slots, mo, allowed, *, q):
    scores = jax.vmap(scoring.finish)(programs, slots, mo)
    scores = scores._replace(sse=scoring.masked(scores.sse, allowed))
    return search.beam_children(programs, scores, q)


_beam_finish = jax.jit(search.beam_finish)
_beam_slots = jax.jit(jax.vmap(prog.leaf_slots, in_axes=(0, None)), static_argnums=1)


def screen_rows(source, max_rows: int, dtype) -> scoring.Data:
    """The rows the pair screen of :func:`jaxtree.search.step` reads (``search.screen_rows``:
    every ``stride``-th row of the padded chunks, from the first; all rows when there are no
    more than ``max_rows``), gathered from ``source`` in one pass into a
    :class:`jaxtree.scoring.Data` of one chunk (or all chunks when all rows are screened), so
    a streamed search screens exactly the rows of the in-memory search on the same chunks.

    Args:
      source: the re-iterable chunk source.
      max_rows: the most rows the screen reads.
      dtype: float dtype of the gathered rows.
    """
    stride, m = _screen_stride(source, max_rows)
    parts = ([], [], [])
    for c, chunk in enumerate(source):
        if stride <= 1:
            keep = slice(None)
        else:
            start = (-(c * m)) % stride  # the first row of this chunk on the stride
            keep = slice(start, m, stride)
        for part, a in zip(parts, chunk):  # a copy of the kept rows: a view would hold the
            part.append(np.array(np.asarray(a, dtype)[keep]))  # whole chunk until the end
    if stride <= 1:
        return scoring.Data(*(jnp.asarray(np.stack(p)) for p in parts))
    return scoring.Data(*(jnp.asarray(np.concatenate(p))[None] for p in parts))


def _screen_stride(source, max_rows: int) -> tuple:
    """``(stride, rows per chunk)`` of a screen of at most ``max_rows`` rows of ``source``
    (:func:`jaxtree.scoring.screen_stride` of its padded rows; stride 1: every row)."""
    n_chunks = getattr(source, "n_chunks", None)
    if n_chunks is None:
        n_chunks = sum(1 for _ in source)
    m = next(iter(source))[0].shape[0]
    return scoring.screen_stride(n_chunks * m, max_rows), m


def _screens(source, max_rows: int) -> bool:
    """Whether a screen of ``max_rows`` rows takes fewer than ``source``'s padded rows (as
    :func:`jaxtree.scoring.screen_chunks` decides it in memory)."""
    return _screen_stride(source, max_rows)[0] > 1


_coordinate_update = jax.jit(refine_.coordinate_update)
_leaf_slots = jax.jit(prog.leaf_slots, static_argnums=1)


# ---------------------------------------------------------------------------- the search


class _Passes:
    """The streamed passes of one fit (holds the source, block size and device put); the
    refinement's loss is ``loss`` (squared here, :class:`_LossPasses` sets its own);
    ``binary``: the positions of the covariates the scoring pass sums from two columns each
    (an int32 array, or None: :attr:`jaxtree.scoring.Data.binary`)."""

    loss = "squared"

    def __init__(self, source, basis, chunks_per_block, put, binary=None):
        self.source, self.basis, self.B, self.put = source, basis, chunks_per_block, put
        self.binary = binary

    def blocks(self):
        return _blocks(self.source, self.B, self.put)

    def screen(self, max_rows: int, dtype) -> scoring.Data:
        """The pair screen's rows in memory (:func:`screen_rows`)."""
        return screen_rows(self.source, max_rows, dtype)

    def support(self, min_support, p: int):
        """bool ``(p*q,)``: the candidate columns ``min_support`` allows
        (:func:`jaxtree.scoring.with_support`'s rule), counted in one pass, or None (no
        rule)."""
        if not min_support:
            return None
        acc = (jnp.zeros((p * self.basis.q,), jnp.int32), jnp.zeros((), jnp.int32))
        for xb, _, wb in self.blocks():
            acc = support_block(acc, xb, wb, basis=self.basis)
        counts, n = jax.device_get(acc)
        rows = scoring.support_rows(min_support, int(n))
        return jnp.asarray(counts >= rows) if rows > 1 else None

    def scores(self, program, slots, rows, cols, dtype, precision, buckets=()):
        acc = scoring.zero_moments(rows, cols, dtype)
        for xb, yb, wb in self.blocks():
            acc = score_block(acc, program, slots, xb, yb, wb, self.binary, basis=self.basis,
                              precision=precision, buckets=buckets)
        return acc

    def candidates(self, program, slots, rows, cols, dtype):
        """The screened step's exact pass: the picked candidates' moments over all rows."""
        acc = scoring.zero_candidate_moments(rows.shape[0], dtype)
        for xb, yb, wb in self.blocks():
            acc = candidate_block(acc, program, slots, rows, cols, xb, yb, wb, basis=self.basis)
        return acc

    def coordinate(self, program, d, dtype):
        z = jnp.zeros((), dtype)
        acc = scoring.Moments(z, z, z, z, z, z)
        for xb, yb, wb in self.blocks():
            acc = coordinate_block(acc, program, d, xb, yb, wb, basis=self.basis)
        return acc

    def replace(self, program, slots, cols, dtype, precision):
        acc = moves.zero_replace_moments(slots.shape[0], cols, dtype)
        for xb, yb, wb in self.blocks():
            acc = replace_block(acc, program, slots, xb, yb, wb, basis=self.basis,
                                precision=precision)
        return acc

    def sse(self, program, dtype):
        z = jnp.zeros((), dtype)
        acc = (z, z)
        for xb, yb, wb in self.blocks():
            acc = loss_block(acc, program, xb, yb, wb, basis=self.basis)
        return acc

    def value_and_grad(self, params, program):
        # one jitted kernel a block (the weight summed inside it), one to finish the pass
        z = jnp.zeros((), params[1].dtype)
        acc = (z, jax.tree_util.tree_map(jnp.zeros_like, params), z)
        for xb, yb, wb in self.blocks():
            acc = value_and_grad_block(acc, params, program, xb, yb, wb, basis=self.basis,
                                       loss=self.loss)
        return _weighted_mean(acc)


# The streamed passes of the fit whose refinement is running. The loss callback of the jitted
# refinement reads it from here, so the compiled program does not depend on the fit (a second
# fit of the same shapes compiles nothing) and holds no reference to its data source (the
# slot is cleared when the refinement ends). The lock makes concurrent streamed fits take turns
# at refinement.
_ACTIVE: list = [None]
_ACTIVE_LOCK = threading.Lock()


def _host_value_and_grad(w, a, prg):
    prg = jax.tree_util.tree_map(jnp.asarray, prg)
    val, (gw, ga) = jax.device_get(_ACTIVE[0].value_and_grad((jnp.asarray(w), jnp.asarray(a)), prg))
    return np.asarray(val, a.dtype), (np.asarray(gw, w.dtype), np.asarray(ga, a.dtype))


def _joint_impl(program, *, steps: int):
    """Projected L-BFGS (as :func:`jaxtree.refine.joint`) with host-driven passes.

    :func:`jaxtree.refine.lbfgs_box` evaluates the loss inside ``lax.while_loop``, so
    it cannot run host loops directly. Here the loss and its gradient are a
    ``jax.pure_callback`` to the host, which streams one pass of jitted block kernels over
    the active fit's source (:data:`_ACTIVE`). The optimizer logic (init, update,
    projection onto ``|w| <= 1``, keep-best) is exactly ``refine.joint``'s, under one jit
    compiled once per shapes.
    """
    wdt, adt = program.weight.dtype, program.intercept.dtype
    spec = (jax.ShapeDtypeStruct((), adt),
            (jax.ShapeDtypeStruct(program.weight.shape, wdt), jax.ShapeDtypeStruct((), adt)))

    @jax.custom_vjp
    def f(params):
        return jax.pure_callback(_host_value_and_grad, spec, *params, program)[0]

    def fwd(params):
        return jax.pure_callback(_host_value_and_grad, spec, *params, program)

    def bwd(g, ct):
        return (jax.tree_util.tree_map(lambda t: ct * t, g),)

    f.defvjp(fwd, bwd)
    return refine_.lbfgs_box(program, f, steps=steps)


_joint_jit = jax.jit(_joint_impl, static_argnames=("steps",))


def _joint(program, passes: "_Passes", steps: int):
    with _ACTIVE_LOCK:
        _ACTIVE[0] = passes
        try:
            return jax.block_until_ready(_joint_jit(program, steps=steps))
        finally:
            _ACTIVE[0] = None


def _refine(passes: "_Passes", cfg: search.Config, new, loss, dtype):
    """``cfg``'s refinement of ``new`` (``refine``, ``coordinate_sweeps``, ``refine_steps``)
    by streamed passes: ``(program, loss)``, ``loss`` passed through when nothing runs."""
    if cfg.refine == "coordinate" and cfg.coordinate_sweeps > 0:
        leaves = [int(d) for d in np.asarray(_leaf_slots(new, cfg.max_k + 1)) if d >= 0]
        for _ in range(cfg.coordinate_sweeps):
            for d in leaves:
                new, loss = _coordinate_update(new, d, passes.coordinate(new, d, dtype))
    elif cfg.refine == "optax":
        new, loss = _joint(new, passes, cfg.refine_steps)
    return new, loss


class _Step:
    """One streamed search iteration, ``step(program) -> (program, StepInfo)``.

    The same signature and results as :func:`jaxtree.search.step` (run by
    :func:`jaxtree.search.run`), with every pass over the data read block by block from the
    host source: the greedy insertion, and with the backfit :class:`jaxtree.search.Config`
    the same moves in the same order: the pair lookahead scored on the rows the in-memory
    screen reads (:func:`screen_rows`, held in memory: at most ``config.pair_rows`` rows)
    and fitted exactly on all rows, then the replacement moves, each scored and refined by
    passes over all rows. The rules that take a move are the in-memory step's
    (:func:`jaxtree.search.pair_taken`, :func:`jaxtree.search.replacement_kept`).
    """

    def __init__(self, passes: "_Passes", config: search.Config, p: int, dtype,
                 allowed=None):
        self.passes, self.config, self.dtype = passes, config, dtype
        self.max_leaves = config.max_k + 1
        self.rows, self.cols = 2 * self.max_leaves, p * passes.basis.q
        self.allowed = allowed  # the candidate columns min_support allows (None: all)
        self.screen = passes.screen(config.pair_rows, dtype) if config.pair_leaves else None
        if self.screen is not None:
            self.screen = self.screen._replace(allowed=allowed)
        # the screened insertions' sample (config.screen_rows; None: every row scored): the
        # rows the in-memory step's screen takes (scoring.screen_chunks), read once
        self.sample = None
        if config.screen_rows and _screens(passes.source, config.screen_rows):
            self.sample = passes.screen(config.screen_rows, dtype)._replace(
                allowed=allowed, binary=passes.binary)

    def _refine(self, new, loss):
        """The configured refinement of ``new`` by streamed passes: ``(program, loss)``."""
        return _refine(self.passes, self.config, new, loss, self.dtype)

    def _pair(self, program, record, rss, n):
        """``search.pair_lookahead`` streamed: ``(program, record)`` of the pair insertion
        when it is taken, else None."""
        cfg, passes = self.config, self.passes
        n_slots = int(program.n_slots)
        early = n_slots > 0 and int(prog.n_leaves(program)) <= cfg.pair_max_leaves
        if not (early and n_slots + 4 <= program.capacity):
            return None
        cand, pc, finite = _pair_candidate(program, self.screen, basis=passes.basis,
                                           rows=cfg.pair_leaves, precision=cfg.precision,
                                           blocks=cfg.pair_blocks)
        slot = n_slots + 2
        cand, mse = _coordinate_update(cand, slot, passes.coordinate(cand, slot, self.dtype))
        sse = jnp.where(finite, mse * n, jnp.inf).astype(rss.dtype)
        if not bool(search.pair_taken(rss, record.sse, sse)):
            return None
        return cand, search.pair_record(pc, cand.weight[slot], cand.intercept, sse)

    def _replace(self, new, loss, n):
        """The replacement moves of ``search.refine_and_replace`` streamed: ``(program, loss, kept)``."""
        cfg, passes, dtype = self.config, self.passes, self.dtype
        kept = 0
        if int(new.n_slots) <= 1:
            return new, loss, kept
        for _ in range(cfg.replace_moves):
            slots = _leaf_slots(new, self.max_leaves)
            mo = passes.replace(new, slots, self.cols, dtype, cfg.precision)
            cand, sse = _choose_replace(new, slots, mo, self.allowed, q=passes.basis.q)
            cand, cand_loss = self._refine(cand, sse / n)  # passes the loss through if none
            if not bool(search.replacement_kept(cand_loss, loss, dtype)):
                break
            new, loss, kept = cand, cand_loss, kept + 1
        return new, loss, kept

    def __call__(self, program):
        cfg, passes, dtype = self.config, self.passes, self.dtype
        slots = _leaf_slots(program, self.max_leaves)
        was_empty = int(program.n_slots) == 0
        room = was_empty or int(program.n_slots) + 2 <= program.capacity
        if self.sample is None:
            mo = passes.scores(program, slots, self.rows, self.cols, dtype, cfg.precision,
                               cfg.buckets)
            new, choice, ok, rss = _choose(program, slots, mo, self.allowed, q=passes.basis.q)
        else:  # screened (scoring.screened_score): the sample's best, exactly on every row
            rough, rows, cols, screened = _screen_pick(
                program, self.sample, basis=passes.basis, max_leaves=self.max_leaves,
                precision=cfg.precision, buckets=cfg.buckets,
                candidates=scoring.SCREEN_CANDIDATES)
            mo = passes.candidates(program, slots, rows, cols, dtype)
            new, choice, ok, rss = _choose_screened(program, rough, rows, cols, screened, mo,
                                                    self.allowed, q=passes.basis.q)
        i32 = lambda v: jnp.asarray(v, jnp.int32)  # noqa: E731
        record = search.Choice(*choice, i32(search.MOVE_INSERT), i32(-1), i32(-1), i32(0))
        ok = bool(ok) and room
        if cfg.pair_leaves:
            pair = self._pair(program, record, rss, mo.n)
            if pair is not None:
                (new, record), ok = pair, True
        if was_empty:
            record = record._replace(op=i32(prog.LEAF), slot=i32(0))
        # As in search.step, the loss comes from what the iteration already computed (the
        # candidate's SSE, the last coordinate update, the best L-BFGS value); only a
        # failed iteration, which keeps the tree, needs a pass of its own.
        loss = record.sse / mo.n
        status = search.STATUS_OK
        if not ok:  # one small transfer; a failed iteration keeps the tree
            status = search.STATUS_NO_CANDIDATE if room else search.STATUS_FULL
            new = program
            sse, n = passes.sse(program, dtype)
            loss = sse / n
        else:
            if not was_empty:
                new, loss = self._refine(new, loss)
            if cfg.replace_moves:
                new, loss, kept = self._replace(new, loss, mo.n)
                record = record._replace(replaced=i32(kept))
        return new, search.StepInfo(jnp.asarray(loss, dtype), record,
                                    jnp.asarray(status, jnp.int32))


class _BeamStep:
    """One streamed beam iteration (:func:`jaxtree.search.beam_step` with host passes): one
    scoring pass for all members (:func:`beam_score_block`), the in-memory beam's proposal
    and finishing rules (:func:`jaxtree.search.beam_children`, :func:`jaxtree.search.beam_finish`),
    and each new member refined by the greedy step's streamed refinement."""

    def __init__(self, step: _Step, width: int):
        self.step, self.width, self.best = step, width, []

    def __call__(self, programs):
        st = self.step
        cfg, passes, dtype = st.config, st.passes, st.dtype
        slots = _beam_slots(programs, st.max_leaves)
        zero = scoring.zero_moments(st.rows, st.cols, dtype)
        acc = jax.tree_util.tree_map(lambda a: jnp.broadcast_to(a, (self.width,) + a.shape), zero)
        for xb, yb, wb in passes.blocks():
            acc = beam_score_block(acc, programs, slots, xb, yb, wb, passes.binary,
                                   basis=passes.basis, precision=cfg.precision)
        choices, parents, new, was_empty = _beam_children(programs, slots, acc, st.allowed,
                                                          q=passes.basis.q)
        loss = choices.sse / acc.n[0]
        if not bool(was_empty) and cfg.refine is not None:
            finite = np.isfinite(np.asarray(choices.sse))
            members, losses = [], []
            for i in range(self.width):
                member = jax.tree_util.tree_map(lambda a, i=i: a[i], new)
                member, li = st._refine(member, loss[i]) if finite[i] else (member, loss[i])
                members.append(member)
                losses.append(jnp.asarray(li, dtype))
            new = jax.tree_util.tree_map(lambda *a: jnp.stack(a), *members)
            loss = jnp.stack(losses)
        loss = loss.astype(dtype)
        room = bool(was_empty) or int(programs.n_slots[0]) + 2 <= programs.capacity
        ok = np.isfinite(np.asarray(choices.sse)) & room
        # The member the beam returns at this size (search.beam_finish's best: the lowest
        # refined training loss), for a held-out loss and the size path.
        self.best.append(int(np.argmin(np.where(ok, np.asarray(loss), np.inf))))
        return _beam_finish(programs, choices, parents, new, loss, was_empty)

    def best_member(self, programs):
        """The member of ``programs`` (this step's last result) the beam returns."""
        return jax.tree_util.tree_map(lambda a: a[self.best[-1]], programs)


def _streamed_setup(source, config: search.Config, devices, dtype):
    """``(p, dtype, put)`` of a streamed search over ``source`` (the first block's shape, the
    compute dtype, the block placer of :func:`jaxtree.sharding.block_putter`)."""
    from jaxtree import sharding  # local: sharding imports nothing from here

    first = next(iter(source))
    m, p = first[0].shape
    dtype = np.dtype(dtype or first[0].dtype)
    return p, dtype, sharding.block_putter(devices, m, dtype)


def fit(source, basis, k: int, config: search.Config,
        callback: Optional[Callable[[int, float, dict], bool]] = None, *,
        chunks_per_block: int = 16, devices=None, dtype=None,
        loss_scale: float = 1.0, beam_width: Optional[int] = None,
        held_out=None, shapes=None, stop: Optional[search.Stop] = None,
        min_support=0, binary: tuple = ()) -> search.SearchResult:
    """The search of :func:`jaxtree.search.fit` (or :func:`jaxtree.search.beam_fit`),
    streaming ``source`` every pass.

    Args:
      source: re-iterable (each ``iter()`` starts a new pass) of host chunks
        ``(x (m, p), y (m,), w (m,))``, already scaled, all of the same chunk size ``m``
        (pad the last with zero-weight rows), e.g. a scaled :class:`ChunkReader`.
      basis: the basis; k: number of operations; config: as for ``search.fit`` (the greedy
        or the backfit :func:`jaxtree.search.search_config`).
      callback, loss_scale: as for :func:`jaxtree.search.run`.
      chunks_per_block: chunks sent to the device per kernel call (static; the device
        holds ``O(chunks_per_block * m * p)`` input rows at a time).
      devices: None (default device), an int, ``"all"`` or a list: shard the rows of
        each block over these devices (see :mod:`jaxtree.sharding`).
      dtype: dtype of the computation (default: the first chunk's).
      beam_width: None runs ``config``'s search; an int runs the beam search of that many
        greedy trees (:func:`jaxtree.search.beam_fit`; the greedy ``config`` only) and
        returns its best member (the lowest training loss, one more pass per member).
      held_out: None, or a source like ``source`` (e.g. :meth:`ChunkReader.subset`) whose
        MSE is reported after every iteration (``val_history``, one pass each), with the
        state after every iteration kept (``programs``; a beam's: the member it would
        return at that size, the lowest refined training loss): what a held-out size
        choice needs.
      shapes: None, or fixed shape terms ``(shape_terms, spec)`` (:mod:`jaxtree.shapes`):
        the tree is searched on the partial residual ``y - g(x)`` of their values ``g``,
        recomputed on the device for every block of every pass (and for the pair screen's
        rows and ``held_out``), never stored: ``shapes=S``'s tree on streamed data.
      stop: as for :func:`jaxtree.search.run` (the estimators' ``tol``); None: grow to ``k``.
      min_support: the estimators' (:func:`jaxtree.scoring.support_rows`): only candidate
        columns nonzero on that many rows of positive weight are scored, counted in one
        pass before the search (:func:`jaxtree.scoring.with_support`'s rule); 0: all.
      binary: the positions of covariates that hold only 0 and 1 on the rows of positive
        weight (:func:`scaling_and_indicators`), whose candidates the scoring pass sums from
        two columns each (:func:`jaxtree.scoring.binary_moments`: the same scores to
        rounding); ``()``: none.

    Returns:
      :class:`jaxtree.search.SearchResult`, equal to the in-memory search on the same rows.
    """
    p, dtype, put = _streamed_setup(source, config, devices, dtype)
    passes = _Passes(source, basis, chunks_per_block, put, _positions(binary))
    allowed = passes.support(min_support, p)
    if shapes is not None:
        passes = _shape_residual(passes, *shapes)
    step = _Step(passes, config, p, dtype, allowed)
    start = prog.empty_program(config.max_k, dtype)
    beam = None
    if beam_width is not None:
        search.check_beam(beam_width, config)
        start = jax.tree_util.tree_map(lambda a: jnp.broadcast_to(a, (beam_width,) + a.shape), start)
        step = beam = _BeamStep(step, beam_width)
    if held_out is not None:
        held = _Passes(held_out, basis, chunks_per_block, put)
        held = held if shapes is None else _shape_residual(held, *shapes)
        pick = beam.best_member if beam is not None else (lambda state: state)
        step = search.with_validation(step, lambda state: _mse(held, pick(state), dtype))
    res = search.run(step, start, k + 1, callback, loss_scale=loss_scale,
                     keep_states=held_out is not None, stop=stop)
    if beam is None:
        return res
    if res.programs is not None:  # each size's member: the one the beam returns there
        res = res._replace(programs=[jax.tree_util.tree_map(lambda a, i=i: a[i], s)
                                     for s, i in zip(res.programs, beam.best)])
    loss = [_mse(passes, jax.tree_util.tree_map(lambda a, i=i: a[i], res.program), dtype)
            for i in range(beam_width)]
    best = int(np.argmin(np.where(np.isfinite(loss), loss, np.inf)))
    return res._replace(program=jax.tree_util.tree_map(lambda a: a[best], res.program))


def _positions(binary: tuple):
    """The scoring pass's :attr:`_Passes.binary` of host positions ``binary`` (None for
    none)."""
    return jnp.asarray(binary, jnp.int32) if len(binary) else None


def _mse(passes: "_Passes", program, dtype) -> float:
    """The weighted MSE of ``program`` over one streamed pass."""
    sse, n = passes.sse(program, dtype)
    return float(sse / n)


def prune(source, program, basis, tol: float, config: search.Config, *,
          chunks_per_block: int = 16, devices=None, dtype=None, passes=None):
    """:func:`jaxtree.simplify.prune` streaming ``source``: the same loop
    (:func:`jaxtree.simplify.prune_with`) with the deletion scores, the total sum of squares
    and the re-fits read block by block, so the removals equal the in-memory pruning's on
    the same rows.

    Args:
      source, basis, chunks_per_block, devices, dtype: as for :func:`fit`.
      program: the fitted tree (scaled space); tol: as for ``simplify.prune``.
      config: its ``refine``, ``coordinate_sweeps`` and ``refine_steps`` re-fit the weights
        after each removal (``max_k`` the program's capacity).
      passes: the streamed passes to read instead of ``source`` (e.g. the partial residual of
        shape terms, :func:`shape_residual_passes`); None reads ``source``.

    Returns:
      :class:`jaxtree.simplify.PruneResult`.
    """
    from jaxtree import simplify  # local: simplify imports nothing from here

    simplify.check_prune_args(tol, config.refine)
    if passes is None:
        passes, dtype = block_passes(source, basis, chunks_per_block, devices, dtype)
    else:
        dtype = np.dtype(dtype or program.weight.dtype)
    program = jax.tree_util.tree_map(jnp.asarray, program)
    max_leaves = (program.capacity + 1) // 2
    z = jnp.zeros((), dtype)
    total = _fold(_target_moments_block, scoring.Moments(z, z, z, z, z, z), passes.blocks())

    def score(p):
        slots, under_mul = _delete_rows(p, max_leaves)
        acc = moves.zero_delete_moments(max_leaves, dtype)
        for xb, yb, wb in passes.blocks():
            acc = delete_block(acc, p, slots, under_mul, xb, yb, wb, basis=basis)
        return _finish_delete(p, slots, acc)

    cfg = config._replace(max_k=(program.capacity - 1) // 2)
    refit = lambda p: _refine(passes, cfg, p, None, dtype)[0]  # noqa: E731
    return simplify.prune_with(program, tol, float(total.mrr), score, refit)


# ------------------------------------------------- shape terms on a streamed fit
# Shape terms on data read block by block (jaxtree._fit.stages.shapes_after for shapes="auto",
# shapes_first for shapes=S, on a Streamed source): the terms are chosen in memory on a subset of rows;
# these passes backfit them on all rows (given the tree, if any) and refine the tree's
# weights given them (fit(shapes=) searches the tree given them). No per-row state is kept
# between passes: each pass recomputes the tree's or the shapes' values on its block (cheap
# next to a scoring pass).


@functools.partial(jax.jit, static_argnames=("basis",))
def _minus_tree(program, xb, yb, *, basis):
    """``y - w0 - T(x)`` of a block ``(B, m, p)``: the target of the shapes."""
    return yb - jax.vmap(lambda x: prog.evaluate(program, x, basis))(xb)


@functools.partial(jax.jit, static_argnames=("spec",))
def _minus_shapes(shape_terms, xb, yb, *, spec):
    """``y - g(x)`` of a block ``(B, m, p)``, ``g`` the shape terms (with their intercept)."""
    return yb - jax.vmap(lambda x: shapes_.evaluate(shape_terms, x, spec))(xb)


@functools.partial(jax.jit, static_argnames=("spec",))
def _shape_grams_block(acc, xb, yb, wb, *, spec):
    """Adds the shape Grams (:func:`jaxtree.shapes.grams`) of a block's chunks to ``acc``."""
    return jax.tree_util.tree_map(jnp.add, acc, shapes_.grams(scoring.Data(xb, yb, wb), spec))


@functools.partial(jax.jit, static_argnames=("spec",))
def _term_rhs_block(acc, shape_terms, tid, xb, yb, wb, *, spec):
    """Adds term ``tid``'s right-hand side (:func:`jaxtree.shapes.term_rhs`) of a block."""
    return _scan(lambda a, x, y, w: jax.tree_util.tree_map(
        jnp.add, a, shapes_.term_rhs(shape_terms, tid, x, y, w, spec)), acc, xb, yb, wb)


_update_term = jax.jit(shapes_.update_term, static_argnames=("spec",))


def _fold(step, acc, blocks):
    """``acc`` folded over ``blocks`` by ``step(acc, xb, yb, wb)``, one block in flight.

    Dispatch is asynchronous: a host loop that only enqueues kernels reads the source ahead
    of the device, and every queued block keeps its buffers (memory ``O(n)`` when the kernels
    are slower than the reads). Waiting for the previous accumulator after enqueuing the next
    kernel keeps reading and computing overlapped and memory at two blocks."""
    for xb, yb, wb in blocks:
        last, acc = acc, step(acc, xb, yb, wb)
        jax.block_until_ready(last)
    return acc


class _OffsetPasses(_Passes):
    """The passes of ``passes`` with every block's ``y`` replaced by ``offset(xb, yb)`` (a
    jitted function of the block): the same kernels then fit a partial residual."""

    def __init__(self, passes: _Passes, offset: Callable):
        super().__init__(passes.source, passes.basis, passes.B, passes.put, passes.binary)
        self.inner, self.offset = passes, offset

    def blocks(self):
        prev = None
        for xb, yb, wb in self.inner.blocks():
            if prev is not None:  # at most two blocks queued (see _fold)
                prev.block_until_ready()
            prev = self.offset(xb, yb)
            yield xb, prev, wb

    def screen(self, max_rows: int, dtype) -> scoring.Data:
        """The pair screen's rows (:func:`screen_rows`) with the offset ``y``."""
        d = self.inner.screen(max_rows, dtype)
        return d._replace(y=self.offset(d.x, d.y))


def block_passes(source, basis, chunks_per_block: int = 16, devices=None, dtype=None):
    """``(passes, dtype)``: the passes of :func:`fit` over ``source``, as it reads them
    (blocks of ``chunks_per_block`` chunks put on ``devices``; ``dtype`` None: the first
    chunk's). ``passes.blocks()`` yields ``(x, y, w)`` per block, the padding rows weighing 0.

    Args:
      source: the re-iterable chunk source (e.g. a :class:`ChunkReader`).
      basis: the :class:`jaxtree.basis.Basis` of the fit.
      chunks_per_block: chunks put on the devices at a time.
      devices: the devices the blocks are sharded over (None: one device).
      dtype: float dtype of the blocks.
    """
    from jaxtree import sharding  # local: sharding imports nothing from here

    first = next(iter(source))
    m = first[0].shape[0]
    dtype = np.dtype(dtype or first[0].dtype)
    return _Passes(source, basis, chunks_per_block, sharding.block_putter(devices, m, dtype)), dtype


def _tight(shape_terms, spec):
    """The same terms with capacity ``max_terms = n_terms`` (host side): the passes evaluate
    the shapes once per block update, and :func:`jaxtree.shapes.evaluate` loops over the
    capacity, so a search's spare slots (16 for ``shapes="auto"``) would cost as much as
    terms. Predictions are unchanged."""
    n = max(int(shape_terms.n_terms), 1)
    return (shape_terms._replace(order=jnp.asarray(np.asarray(shape_terms.order)[:n])),
            spec._replace(max_terms=n))


def refit_shapes(source, program, basis, shape_terms, spec, *, sweeps: int = 1,
                 chunks_per_block: int = 16, devices=None, dtype=None, gr=None):
    """Backfits shape terms on all rows of ``source`` given a tree, pass by pass.

    The streamed form of :func:`jaxtree.shapes.refit` on ``y - w0 - T(x)``: one pass
    accumulates the Grams of every block of ``spec`` (:func:`jaxtree.shapes.grams`; compact
    the spec first, :func:`jaxtree.shapes.compact`, so that only the chosen pairs are summed),
    then each block update of each sweep is one pass accumulating the term's right-hand side
    (:func:`jaxtree.shapes.term_rhs`) and one small solve (:func:`jaxtree.shapes.update_term`).
    The same updates in the same order as the in-memory sweep, so the result equals it up to
    float rounding (sums in another order). Memory: one block.

    Args:
      source: as for :func:`fit` (scaled chunks, e.g. a scaled :class:`ChunkReader`).
      program: the fitted tree (its values are subtracted from ``y``), or None: the shapes
        fit ``y`` itself (``shapes=S``'s terms before the tree); basis: its basis.
      shape_terms: :class:`jaxtree.shapes.Shapes` to start from (their chosen terms and
        coefficients, e.g. a search's on a subset of the rows); spec: their static spec.
      sweeps: backfitting sweeps over the chosen terms (each ``n_terms`` passes).
      chunks_per_block, devices, dtype: as for :func:`fit`.
      gr: the Grams of all rows for ``spec`` (this function's second result), or None: one
        pass computes them.

    Returns:
      ``(shapes, grams)``: the backfitted :class:`jaxtree.shapes.Shapes` and the Grams of
      all rows.
    """
    passes, dtype = block_passes(source, basis, chunks_per_block, devices, dtype)
    resid = passes
    if program is not None:
        program = jax.tree_util.tree_map(jnp.asarray, program)
        resid = _OffsetPasses(passes, lambda xb, yb: _minus_tree(program, xb, yb, basis=basis))
    p = shape_terms.main.shape[0]
    m2 = spec.n2 * spec.n2
    n_pairs = len(spec.pairs)
    if gr is None:
        gr = (jnp.zeros((p, spec.n1, spec.n1), dtype), jnp.zeros((p, spec.n1), dtype),
              jnp.zeros((n_pairs, m2, m2), dtype), jnp.zeros((n_pairs, m2), dtype),
              jnp.zeros((), dtype))
        gr = _fold(functools.partial(_shape_grams_block, spec=spec), gr, passes.blocks())
    full_order = jnp.asarray(shape_terms.order)
    shape_terms, tspec = _tight(jax.tree_util.tree_map(jnp.asarray, shape_terms), spec)
    mm = max(spec.n1, m2)
    order = np.asarray(shape_terms.order)[: int(shape_terms.n_terms)]
    for _ in range(int(sweeps)):
        for tid in order:
            tid = jnp.asarray(tid, jnp.int32)
            acc = _fold(lambda a, xb, yb, wb: _term_rhs_block(a, shape_terms, tid, xb, yb, wb,
                                                              spec=tspec),
                        (jnp.zeros((mm,), dtype), jnp.zeros((), dtype)), resid.blocks())
            shape_terms = _update_term(shape_terms, tid, gr, *acc, spec=tspec)
    return shape_terms._replace(order=full_order), gr


def shape_residual_passes(source, basis, shape_terms, spec, *, chunks_per_block: int = 16,
                          devices=None, dtype=None):
    """``(passes, dtype)``: the passes of :func:`fit` over ``source`` with each block's ``y``
    replaced by the partial residual ``y - g(x)`` of the shape terms ``g`` (recomputed per
    block, never stored), so the tree's kernels fit the tree given the shapes."""
    passes, dtype = block_passes(source, basis, chunks_per_block, devices, dtype)
    return _shape_residual(passes, shape_terms, spec), dtype


def _shape_residual(passes: _Passes, shape_terms, spec) -> _OffsetPasses:
    """``passes`` with each block's ``y`` replaced by ``y - g(x)``, ``g`` the shape terms."""
    shape_terms, spec = _tight(jax.tree_util.tree_map(jnp.asarray, shape_terms), spec)
    return _OffsetPasses(passes, lambda xb, yb: _minus_shapes(shape_terms, xb, yb, spec=spec))


def refine_given_shapes(source, program, basis, shape_terms, spec, *, steps: int,
                        chunks_per_block: int = 16, devices=None, dtype=None):
    """The tree's weights and intercept refined given shape terms, streaming ``source``.

    Joint projected L-BFGS (as :func:`jaxtree.refine.joint`, the streamed form of
    :func:`fit`'s ``refine="optax"``) on the partial residual ``y - g(x)`` of the shapes
    ``g``: every pass subtracts the shapes' values from each block's ``y`` (a per-row offset,
    recomputed per block, never stored). ``steps=0``: no refinement, only the loss.

    Args:
      source, basis, chunks_per_block, devices, dtype: as for :func:`fit`.
      program: the tree; shape_terms, spec: the fixed shape terms and their spec.
      steps: L-BFGS iterations (static).

    Returns:
      ``(program, mse)``: the refined tree (never worse than ``program``) and the weighted MSE
      of the model ``g + T`` on all rows (scaled space).
    """
    resid, dtype = shape_residual_passes(source, basis, shape_terms, spec,
                                         chunks_per_block=chunks_per_block, devices=devices,
                                         dtype=dtype)
    program = jax.tree_util.tree_map(jnp.asarray, program)
    if steps > 0 and int(program.n_slots) > 0:
        program, loss = _joint(program, resid, int(steps))
        return program, loss
    sse, n = resid.sse(program, dtype)
    return program, sse / n


# ------------------------------------------------- classification: the Newton-step search
# TreeClassifier on streamed data: the in-memory classification step
# (:func:`jaxtree.search.loss_step`) with every pass read block by block. The scoring pass
# and the coordinate passes read the Newton working data ``(z, w*h)`` of a fixed tree,
# computed on the device per block from the labels (:func:`working_block`; nothing per row is
# stored between passes); the refinement and the reported loss read the labels.


@functools.partial(jax.jit, static_argnames=("basis", "loss"))
def working_block(program, xb, yb, wb, *, basis, loss):
    """The Newton working data ``(z (B, m), w*h (B, m))`` of ``program`` on a block of
    labels ``yb = +-1`` (:func:`jaxtree.losses.working_data`, per chunk).

    Args:
      program: the current tree.
      xb: float ``(B, m, p)`` the block's ``B`` chunks of features.
      yb: float ``(B, m)`` labels ``+-1``.
      wb: float ``(B, m)`` their sample weights (0 on padding rows).
      basis: the :class:`jaxtree.basis.Basis` the program indexes (static).
      loss: the loss's name (:data:`jaxtree.losses.LOSSES`, static).
    """
    from jaxtree import losses

    work = losses.working_data(program, scoring.Data(xb, yb, wb), basis, loss)
    return work.y, work.w


@functools.partial(jax.jit, static_argnames=("basis", "loss", "report"))
def loss_block(acc, program, xb, yb, wb, *, basis, loss="squared", report=False):
    """Adds a block's weighted loss (:func:`jaxtree.losses.pointwise`, or
    :func:`jaxtree.losses.reported` when ``report``) and weight sum to ``acc = (total, n)``.

    Args:
      acc: ``(total, n)`` the weighted loss and weight sum so far.
      program: the current tree.
      xb: float ``(B, m, p)`` the block's ``B`` chunks of features.
      yb: float ``(B, m)`` their targets.
      wb: float ``(B, m)`` their sample weights (0 on padding rows).
      basis: the :class:`jaxtree.basis.Basis` the program indexes (static).
      loss: the loss's name (:data:`jaxtree.losses.LOSSES`, static).
      report: add the reported loss instead of the pointwise one (static).
    """
    from jaxtree import losses

    fn = losses.reported if report else losses.pointwise

    def f(a, x, y, w):
        return a[0] + jnp.sum(w * fn(loss, y, prog.evaluate(program, x, basis))), a[1] + jnp.sum(w)
    return _scan(f, acc, xb, yb, wb)


class _LossPasses(_Passes):
    """The passes of a classification fit: labels ``y = +-1`` in the blocks; the L-BFGS
    loss and gradient (read by :func:`_joint`) are those of ``loss``."""

    def __init__(self, source, basis, chunks_per_block, put, loss: str, binary=None):
        super().__init__(source, basis, chunks_per_block, put, binary)
        self.loss = loss

    def mean_loss(self, program, dtype, report: bool = False):
        z = jnp.zeros((), dtype)
        acc = (z, z)
        for xb, yb, wb in self.blocks():
            acc = loss_block(acc, program, xb, yb, wb, basis=self.basis, loss=self.loss,
                             report=report)
        return scoring.safe_div(*acc)


class _WorkingPasses(_Passes):
    """The passes of ``passes`` over the Newton working data of ``program``: every block's
    ``(y, w)`` becomes ``(z, w*h)`` (:func:`working_block`), so the squared-loss kernels
    (scoring, coordinate moments) run unchanged on it."""

    def __init__(self, passes: _LossPasses, program):
        super().__init__(passes.source, passes.basis, passes.B, passes.put, passes.binary)
        self.inner, self.program = passes, program

    def blocks(self):
        for xb, yb, wb in self.inner.blocks():
            zb, hb = working_block(self.program, xb, yb, wb, basis=self.basis,
                                   loss=self.inner.loss)
            yield xb, zb, hb


class _LossStep:
    """One streamed classification iteration, ``step(program) -> (program, StepInfo)``: the
    streamed form of :func:`jaxtree.search.step` with ``config.loss`` a classification loss.

    The squared-loss streamed step (:class:`_Step`, no refinement) on the working data of the
    current tree chooses the insertion (one Newton step per candidate); then the weights are
    refined on the true loss, after the first leaf too (``"optax"``: :func:`_joint` on the
    loss; ``"coordinate"``: iteratively reweighted sweeps, each kept only if the loss fell, as
    :func:`jaxtree.refine.coordinate_newton`); the reported loss is one more pass.
    """

    def __init__(self, passes: _LossPasses, config: search.Config, p: int, dtype,
                 allowed=None):
        self.passes, self.config, self.p, self.dtype = passes, config, p, dtype
        self.max_leaves = config.max_k + 1
        self.allowed = allowed  # the candidate columns min_support allows (None: all)

    def _coordinate(self, program):
        cfg, passes, dtype = self.config, self.passes, self.dtype
        cur = float(passes.mean_loss(program, dtype))
        leaves = [int(d) for d in np.asarray(_leaf_slots(program, self.max_leaves)) if d >= 0]
        for _ in range(cfg.coordinate_sweeps):
            work = _WorkingPasses(passes, program)
            cand = program
            for d in leaves:
                cand, _ = _coordinate_update(cand, d, work.coordinate(cand, d, dtype))
            val = float(passes.mean_loss(cand, dtype))
            if val < cur:
                program, cur = cand, val
        return program

    def __call__(self, program):
        cfg = self.config
        inner = _Step(_WorkingPasses(self.passes, program),
                      cfg._replace(loss="squared", refine=None), self.p, self.dtype,
                      self.allowed)
        new, info = inner(program)
        if int(info.status) == search.STATUS_OK:
            if cfg.refine == "coordinate":
                new = self._coordinate(new)
            elif cfg.refine == "optax":
                new, _ = _joint(new, self.passes, cfg.refine_steps)
        loss = self.passes.mean_loss(new, self.dtype, report=True)
        return new, info._replace(loss=jnp.asarray(loss, self.dtype))


def loss_step(source, basis, config: search.Config, *, chunks_per_block: int = 16,
              devices=None, dtype=None, min_support=0, binary: tuple = ()) -> Callable:
    """The streamed step of a classification search over ``source`` (labels ``y = +-1``).

    Args:
      source: as for :func:`fit` (scaled chunks, e.g. a scaled :class:`ChunkReader` whose
        ``y`` holds the labels +-1).
      basis: the basis; config: with ``loss`` ``"logistic"`` or ``"margin"`` (greedy only).
      chunks_per_block, devices, dtype, min_support, binary: as for :func:`fit` (the
        support is counted in one pass when the step is made).

    Returns:
      ``step(program) -> (program, StepInfo)`` for :func:`jaxtree.search.run`, the same
      choices, history and status as :func:`jaxtree.search.step` on the same rows in memory.

    Raises:
      ValueError: for the squared loss (use :func:`fit`) or pair/replacement moves.
    """
    from jaxtree import losses

    if config.loss not in losses.CLASSIFICATION_LOSSES:
        raise ValueError(f"loss_step needs a classification loss {list(losses.CLASSIFICATION_LOSSES)}; "
                         f"got {config.loss!r} (the squared loss streams through fit).")
    p, dtype, put = _streamed_setup(source, config, devices, dtype)
    passes = _LossPasses(source, basis, chunks_per_block, put, config.loss, _positions(binary))
    return _LossStep(passes, config, p, dtype, passes.support(min_support, p))

