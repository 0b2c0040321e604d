"""The one place that maps user units to the search's space and back.

Covariates go to ``[0, 1]`` with their range, ``y`` to ``[-1, 1]`` with the training
midpoint and half-range (the paper needs ``|phi| <= 1`` on ``[0, 1]`` and ``Y = [-1, 1]``).
A covariate's range is its training minimum and maximum, widened to round bounds where the
basis acts on the scaled covariate (:func:`round_bounds`, :func:`rounds`), and cut short of
a far tail (:func:`far_tails`). Rows with zero sample weight do not count, so a zero weight
is the same as removing the row. Every row is clipped into the range as it is scaled, as
``jaxtree.predict`` clips it, so the basis stays bounded.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from jaxtree import _threads


class Scaling(NamedTuple):
    """``x_s = (x - x_min) * x_scale``; ``y_s = (y - y_center) / y_scale`` (float64)."""

    x_min: np.ndarray
    x_scale: np.ndarray
    y_center: np.ndarray
    y_scale: np.ndarray


ROUND_SLACK = 0.01
"""The most a covariate's range is widened, as a share of its span, to reach round bounds
(:func:`round_bounds`)."""

ROUND_TINY = 1e-250
"""Spans below it, and bounds beyond its inverse, are not rounded (:func:`round_bounds`'s
steps, ``10**(e ± 2)``, stay finite and normal inside)."""


def rounds(basis) -> bool:
    """Whether a fit with ``basis`` scales its covariates on round bounds (:func:`round_bounds`):
    yes unless a family works on the covariates' original units (``basis.per_feature``, the
    power laws: they map the scaled covariate back to its unit, and a bound widened to 0
    would take ``log x`` and the negative powers from a positive covariate)."""
    return not bool(getattr(basis, "per_feature", False))


def round_bounds(lo, hi, keep=None, slack: float = ROUND_SLACK) -> tuple:
    """``(lo, hi)`` widened outward to round numbers (float64, any leading batch shape).

    The bounds become multiples of the coarsest step ``m * 10**e`` (``m`` in 5, 2, 1, tried in
    that order; ``e`` from one above the decade of the span ``hi - lo`` down to two below it)
    that widens the range by at most ``slack`` of its span; where no step does, the range
    is kept. A range of zero span, a non-finite one, one beyond ``1e±250`` (where the
    steps would overflow), and a column where ``keep`` is True (a column of two values: it
    must scale to exactly 0 and 1, the search's indicator rule) are returned as they are.

    Decision (fifty-fourth session): the basis acts on the covariate scaled to ``[0, 1]``.
    With the observed minimum and maximum as the range, the paper's data (uniform on
    ``[0, 1]``, observed ``[0.0038, 0.9998]`` in the demo) was fitted with
    ``sin(3π·(x1 - 0.0038)/0.996)``: the basis could not hold the true ``sin(3πx1)``, the
    formula printed shifted numbers, and the test error stayed at 0.0041. On the range
    ``[0, 1]`` the demo prints ``sin(3πx1)`` and its error is 0.0009; the error fell on 20
    of 20 seeds of the paper's data, and on public tables the change was within the noise
    of a random widening of the same size (BENCHMARKS.md, "Round covariate bounds").
    A user's round numbers (a percentage, an hour of the day, a year) are the range
    the data were drawn on more often than the extremes a sample happened to hit."""
    lo0, hi0 = np.broadcast_arrays(np.asarray(lo, np.float64), np.asarray(hi, np.float64))
    with np.errstate(all="ignore"):  # the ranges not rounded may overflow: discarded below
        return _rounded(lo0, hi0, keep, slack)


def _rounded(lo0, hi0, keep, slack):
    """:func:`round_bounds` of float64 arrays of one shape."""
    span = hi0 - lo0
    good = (np.isfinite(span) & (span > ROUND_TINY)
            & (np.maximum(np.abs(lo0), np.abs(hi0)) < 1.0 / ROUND_TINY))
    if keep is not None:
        good = good & ~np.asarray(keep, bool)
    e0 = np.floor(np.log10(np.where(good, span, 1.0)))
    out_lo, out_hi, done = lo0.copy(), hi0.copy(), ~good
    for de in (1, 0, -1, -2):
        for m in (5.0, 2.0, 1.0):
            e = e0 + de
            step = m * 10.0 ** e
            ql, qh = lo0 / step, hi0 / step
            # a quotient within rounding of an integer is that integer (0.3 / 0.1)
            ql = np.where(np.abs(ql - np.round(ql)) < 1e-9, np.round(ql), ql)
            qh = np.where(np.abs(qh - np.round(qh)) < 1e-9, np.round(qh), qh)
            a = np.minimum(_decimal(np.floor(ql) * m, e), lo0)
            b = np.maximum(_decimal(np.ceil(qh) * m, e), hi0)
            ok = ~done & ((b - a) - span <= slack * span)
            out_lo, out_hi = np.where(ok, a, out_lo), np.where(ok, b, out_hi)
            done = done | ok
    return out_lo, out_hi


def _decimal(c, e):
    """The float nearest ``c * 10**e`` (``c`` a whole number): a division by ``10**-e`` for
    ``e < 0``, so that ``3 * 10**-5`` is ``3e-05``, not ``2.9999999999999997e-05``."""
    return np.where(e >= 0, c * 10.0 ** np.maximum(e, 0), c / 10.0 ** np.maximum(-e, 0))


def from_extremes(x_min, x_max, y_min, y_max, *, round_x: bool = False,
                  two_valued=None) -> Scaling:
    """The scaling given training extremes (any leading batch shape); with ``round_x`` the
    covariates' ranges widened to round bounds (:func:`round_bounds`), except where
    ``two_valued`` (bool, the shape of ``x_min``) is True."""
    if round_x:
        x_min, x_max = round_bounds(x_min, x_max, two_valued)
    x_min = np.asarray(x_min, np.float64)
    span = np.asarray(x_max, np.float64) - x_min
    x_scale = np.where(span > 0, 1.0 / np.where(span > 0, span, 1.0), 1.0)
    y_min, y_max = np.asarray(y_min, np.float64), np.asarray(y_max, np.float64)
    half = 0.5 * (y_max - y_min)
    return Scaling(x_min, x_scale, 0.5 * (y_max + y_min), np.where(half > 0, half, 1.0))


def extremes(x: np.ndarray, y: np.ndarray, sw: Optional[np.ndarray] = None):
    """``(x_min, x_max, y_min, y_max)`` over rows of ``x (..., n, p)``, ``y (..., n)``
    with positive weight (all rows when ``sw`` is None)."""
    if sw is None and np.ndim(x) == 2 and np.asarray(x).dtype.kind == "f":
        # every row counts: the extremes in x's own dtype, then float64 (exact: rounding is
        # monotone), with no float64 or masked copy of x
        lo, hi = _threads.column_extremes(np.asarray(x))
        y = np.asarray(y)
        return (lo.astype(np.float64), hi.astype(np.float64), np.float64(y.min()),
                np.float64(y.max()))
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    keep = np.ones(y.shape, bool) if sw is None else np.asarray(sw) > 0
    xk = keep[..., None]
    return (np.where(xk, x, np.inf).min(-2), np.where(xk, x, -np.inf).max(-2),
            np.where(keep, y, np.inf).min(-1), np.where(keep, y, -np.inf).max(-1))


def add_two_values(values: list, x: np.ndarray, sw, x_min: np.ndarray,
                   x_max: np.ndarray) -> None:
    """Adds the rows of ``x (m, p)`` with positive weight (all rows when ``sw`` is None; their
    column extremes ``x_min``, ``x_max`` of :func:`extremes`) to each column's set of values
    in ``values`` (one set per column, started empty), which becomes None once the column
    has shown three values: a pass over the rows block by block, whose columns of at most
    two values :func:`binary_after` reads (a streamed fit's scaling pass)."""
    xk = x if sw is None else x[np.asarray(sw) > 0]
    if not xk.shape[0]:
        return
    two = np.all((xk == x_min.astype(xk.dtype)) | (xk == x_max.astype(xk.dtype)), axis=0)
    for j, v in enumerate(values):
        if v is not None:
            v = v | {float(x_min[j]), float(x_max[j])} if two[j] else None
            values[j] = v if v is not None and len(v) <= 2 else None


def binary_after(s: Scaling, values: list) -> tuple:
    """The columns whose values (:func:`add_two_values`' sets, None for more than two) the
    scaling ``s`` maps to only 0 and 1, computed as :func:`scale_rows` computes them: what
    ``jaxtree.scoring.binary_columns`` finds on the scaled rows of the same pass."""
    def binary(j: int, v) -> bool:
        z = np.clip((np.asarray(sorted(v), np.float64) - s.x_min[j]) * s.x_scale[j], 0.0, 1.0)
        return bool(np.all((z == 0) | (z == 1)))

    return tuple(j for j, v in enumerate(values) if v is not None and binary(j, v))


def from_rows(x: np.ndarray, y: np.ndarray, sw: Optional[np.ndarray] = None, *,
              round_x: bool = False) -> tuple:
    """``(scaling, two)`` from data ``x (..., n, p)``, ``y (..., n)``; rows with ``sw == 0``
    ignored. ``two`` (bool, ``(..., p)``) is :func:`two_valued`: where a column took exactly
    two values. A column's range is its extremes, cut short of a far tail
    (:func:`far_tails`, read on :func:`tail_sample`'s rows). With ``round_x`` the covariates'
    ranges are on round bounds (:func:`round_bounds`), except for the two-valued columns,
    which keep their two values as their bounds (so every function of one is a line between
    them, and formulas print it so, :func:`jaxtree._formula.indicator_labels`). A streamed
    fit finds the same columns and the same tails in its scaling pass
    (:func:`add_two_values`, :func:`tail_sample`'s rows of each block)."""
    return from_rows_cut(x, y, sw, round_x=round_x)[:2]


def from_rows_cut(x: np.ndarray, y: np.ndarray, sw: Optional[np.ndarray] = None, *,
                  round_x: bool = False) -> tuple:
    """``(scaling, two, cut)``: :func:`from_rows`' two, and ``cut`` (:func:`cut_columns`):
    the columns whose range :func:`far_tails` cut, with their observed extremes."""
    lo, hi, y_min, y_max = extremes(x, y, sw)
    two = two_valued(x, sw, lo, hi)
    xt, wt = tail_sample(x, sw)
    a, b = far_tails(xt, wt, lo, hi, two)
    sc = from_extremes(a, b, y_min, y_max, round_x=round_x, two_valued=two)
    return sc, two, cut_columns(lo, hi, a, b)


def cut_columns(lo, hi, a, b) -> tuple:
    """``((j, low, high), ...)``: the columns ``j`` (of one table: ``lo``, ``hi`` ``(p,)``)
    whose range ``(a, b)`` :func:`far_tails` cut from their observed extremes ``(low,
    high)`` (floats): what a fit reports (``far_tails_``)."""
    lo, hi, a, b = (np.asarray(v, np.float64) for v in (lo, hi, a, b))
    if lo.ndim != 1:
        return ()
    return tuple((int(j), float(lo[j]), float(hi[j]))
                 for j in np.flatnonzero((a != lo) | (b != hi)))


TAIL_SHARE = 0.005
"""The share of rows (by weight) on each side of a column that :func:`far_tails` may leave
outside its range."""

TAIL_RATIO = 2.0
"""A tail is far when it spans more than this many times the rest of the column
(:func:`far_tails`)."""

TAIL_REACH = 0.25
"""Where a tail is cut (:func:`far_tails`), the range keeps the rows within this share of
the rest's span beyond the quantile: the cut ends at the largest (smallest) value there."""

TAIL_SAMPLE = 1 << 16
"""About the most rows :func:`far_tails` reads (:func:`tail_stride`)."""


def tail_stride(n: int) -> int:
    """Every how many rows :func:`tail_sample` reads one: the rows ``0, m, 2m, ...`` of ``n``,
    at most about :data:`TAIL_SAMPLE` of them (the same rows in a streamed pass, which reads
    them block by block)."""
    return max(1, -(-int(n) // TAIL_SAMPLE))


def tail_sample(x, sw=None, start: int = 0, n: Optional[int] = None) -> tuple:
    """``(x_rows, weights)``: the rows of ``x (..., m, p)`` that :func:`far_tails` reads (the
    table's rows ``0, s, 2s, ...`` with ``s = tail_stride(n)``; ``x`` holds the table's rows
    ``start`` to ``start + m``, ``n`` is the table's row count, ``m`` by default) and their
    weights (None when ``sw`` is None). Strided views: no copy of ``x``."""
    m = np.shape(x)[-2]
    s = tail_stride(m if n is None else n)
    first = (-int(start)) % s
    return x[..., first::s, :], (None if sw is None else np.asarray(sw)[..., first::s])


def far_tails(x, sw, lo, hi, two=None) -> tuple:
    """``(lo, hi)`` with each column's range cut short of a far tail, read on the rows
    ``x (..., m, p)`` of :func:`tail_sample` with weights ``sw`` (None: every row counts;
    rows of zero weight do not count). ``lo``, ``hi`` are the columns' extremes, ``two``
    (bool, optional) the two-valued columns, which keep theirs.

    Where the upper :data:`TAIL_SHARE` of a column's rows (by weight) spans more than
    :data:`TAIL_RATIO` times the range ``s`` of the other rows (from the lower
    :data:`TAIL_SHARE` quantile to the upper, inverted-CDF quantiles ``a`` and ``b``), the
    range ends at the largest value of the rows read up to ``b + TAIL_REACH * s`` (an
    observed value); the same for the lower tail. The rows beyond are clipped to it, in
    the fit as ``jaxtree.predict`` clips rows beyond the range (:func:`scale_rows`). A
    column whose rows read would keep fewer than three values within the cut is not cut
    (clipped, it would scale to only 0 and 1: an indicator to the in-memory search's rule,
    ``jaxtree.scoring.binary_columns``, and not to a streamed pass's, which reads the
    values before the cut).

    Decision (seventy-third session, issue 29): the basis (and the shape terms' equally
    spaced knots) resolve the covariate's range evenly, so a few extreme rows decided where
    a heavily skewed column was resolved: on spam7 (``bang``: 99.5% of the rows below 4.7,
    the largest 32.5) nearly every row fell into the first of 16 knots. Cut short of such
    tails, bench_accuracy's five folds gave spam7 0.9134 -> 0.9205 AUC (HistGradientBoosting
    0.9171), weather 2.631 -> 2.609 RMSE (``precip``, and ``wind_speed``'s one reading of
    1,048), diamonds 0.09967 -> 0.09968 (``z``'s 31.8, ``table``'s 95); cut at the quantile
    itself (no reach) diamonds lost 0.5% (its largest stones' ``z`` clipped), spam7 0.9209,
    weather 2.610. Tables without such a tail (the rest of the benchmark) are untouched:
    the rule reads the tail's span against the rest, so a normal or exponential column of
    any size keeps its extremes (a lognormal of σ = 1, or Student's t with 3 degrees of
    freedom, is cut from about 10⁴ rows on). Beyond the cut a fitted function is flat, as
    HistGradientBoosting's and EBM's are beyond their last quantile bin (255 bins: about
    the top 0.4%). Clipping every column at fixed quantiles instead (0.5%) gave spam7 the
    same but Boston 3.64 -> 3.90 and Pima 0.858 -> 0.841; a log of the skewed columns,
    spam7 0.9221 but Boston 3.96 and Pima 0.854; knots at quantiles (a quantile
    transform), spam7 0.9202 but diamonds +6% (BENCHMARKS.md, "Ranges cut short of far
    tails"). The reach (:data:`TAIL_REACH`) was chosen among 0, 0.25 and 1 on spam7,
    weather and diamonds: a tuned constant. Below ``1 / TAIL_SHARE`` rows the quantile is
    the extreme: no cut."""
    lo, hi = np.asarray(lo, np.float64).copy(), np.asarray(hi, np.float64).copy()
    x = np.asarray(x)
    two = np.zeros(lo.shape, bool) if two is None else np.asarray(two, bool)
    for idx in np.ndindex(*lo.shape[:-1]):  # each data set of a batch
        cols = np.flatnonzero(~two[idx] & (hi[idx] > lo[idx]))
        xi = x[idx]
        wi = None if sw is None else np.asarray(sw, np.float64)[idx]
        if wi is not None:
            xi, wi = xi[wi > 0], wi[wi > 0]
        if xi.shape[0] == 0 or not cols.size:
            continue
        xc = np.asarray(xi.T[cols], np.float64)  # a column a row (one copy)
        a, b, v = _column_quantiles(xc, wi, TAIL_SHARE)
        span = b - a
        up = (span > 0) & (hi[idx][cols] - b > TAIL_RATIO * span)
        down = (span > 0) & (a - lo[idx][cols] > TAIL_RATIO * span)
        for c in np.flatnonzero(up | down):  # the rare columns with a far tail
            vc = v[c]  # the column's values read, sorted
            i = np.searchsorted(vc, a[c] - TAIL_REACH * span[c], "left") if down[c] else 0
            k = (np.searchsorted(vc, b[c] + TAIL_REACH * span[c], "right") - 1 if up[c]
                 else vc.shape[0] - 1)
            if np.unique(vc[i:k + 1]).shape[0] < 3:  # cut, it would read as a column of two
                continue  # values (an indicator) in memory and not when streamed: kept whole
            if up[c]:
                hi[idx + (cols[c],)] = vc[k]
            if down[c]:
                lo[idx + (cols[c],)] = vc[i]
    return lo, hi


def _positions(c: np.ndarray, share: float) -> tuple:
    """The 0-based positions of the lower inverted-CDF quantiles at ``share`` from each end
    of sorted values whose cumulative weights are ``c`` (increasing, ``c[-1]`` the total):
    the first whose cumulative weight reaches ``share`` of the total, and the last whose
    weight from above (its own included) reaches it."""
    total = c[-1]
    low = min(int(np.searchsorted(c, share * total, side="left")), c.shape[0] - 1)
    above = total - np.concatenate([[0.0], c[:-1]])  # weight of the rows at or above each
    high = max(int(np.searchsorted(-above, -share * total, side="right")) - 1, 0)
    return low, high


def _quantiles(v: np.ndarray, w, share: float) -> tuple:
    """The lower inverted-CDF quantiles at ``share`` and ``1 - share`` of ``v`` weighted by
    ``w`` (None: equal weights): the smallest value whose cumulative weight reaches
    ``share`` of the total, and the largest whose weight from above reaches it (one column,
    sorted: the reference :func:`_column_quantiles` is tested against)."""
    order = np.argsort(v, kind="stable")
    v = np.asarray(v, np.float64)[order]
    c = np.arange(1, v.shape[0] + 1, dtype=np.float64) if w is None else np.cumsum(w[order])
    low, high = _positions(c, share)
    return float(v[low]), float(v[high])


def _column_quantiles(x: np.ndarray, w, share: float) -> tuple:
    """:func:`_quantiles` of every column at once, the columns as the rows of ``x (q, m)``
    (float64, contiguous): ``(low, high, sorted)``, arrays ``(q,)`` and each column's values
    sorted ``(q, m)`` (where a tail is cut, :func:`far_tails` reads its reach there).
    Without weights the two order statistics of each column sorted (numpy's vectorised
    sort: 6.5·10⁴ × 100 values in about 55 ms here, faster than a partition); with weights
    each column's order, its cumulative weights searched."""
    m = x.shape[1]
    if w is None:
        low, high = _positions(np.arange(1, m + 1, dtype=np.float64), share)
        v = np.sort(x, axis=1)
        return v[:, low], v[:, high], v
    order = np.argsort(x, axis=1)  # ties: equal values, the same quantile in any order
    v = np.take_along_axis(x, order, axis=1)
    c = np.cumsum(np.asarray(w, np.float64)[order], axis=1)
    pos = np.array([_positions(c[j], share) for j in range(x.shape[0])]).reshape(-1, 2)
    rows = np.arange(x.shape[0])
    return v[rows, pos[:, 0]], v[rows, pos[:, 1]], v


TWO_VALUED_BLOCK = 1 << 16
"""Rows read at a time by :func:`two_valued` (a column's third value usually shows in
the first block, and the read stops there)."""


def two_valued(x, sw, lo, hi) -> np.ndarray:
    """Where the column of ``x (..., n, p)`` takes exactly two values on the rows of positive
    weight ``sw`` (None: every row): its extremes ``lo < hi`` (:func:`extremes`) and nothing
    else (bool, the shape of ``lo``). A 0/1 flag, a one-hot column made before jaxtree, two
    levels coded as numbers. Each column is read a block of rows at a time until a third
    value shows, so a continuous column costs one block and no copy of ``x`` is made (10⁷
    rows stay within the in-memory fit's memory bound)."""
    x = np.asarray(x)
    keep = None if sw is None else np.asarray(sw) > 0
    lo, hi = np.asarray(lo), np.asarray(hi)
    two = np.zeros(lo.shape, bool)
    for idx in map(tuple, np.argwhere(hi > lo)):  # (..., j): a data set's column j
        col = x[idx[:-1]][:, idx[-1]]
        two[idx] = _only(col, lo[idx], hi[idx], None if keep is None else keep[idx[:-1]])
    return two


def positions(two) -> tuple:
    """The increasing positions (ints) where the mask ``two (p,)`` of :func:`two_valued` (or a
    streamed pass's) is True: the form a fit's result carries
    (:attr:`jaxtree._fit.pipeline.FitResult.two_valued`)."""
    return tuple(int(j) for j in np.flatnonzero(two))


def _only(col: np.ndarray, a, b, keep) -> bool:
    """Whether ``col (n,)`` holds only ``a`` and ``b`` where ``keep`` (None: everywhere),
    read :data:`TWO_VALUED_BLOCK` rows at a time up to the first other value."""
    a, b = col.dtype.type(a), col.dtype.type(b)
    for s in range(0, col.shape[0], TWO_VALUED_BLOCK):
        c = col[s:s + TWO_VALUED_BLOCK]
        hit = (c == a) | (c == b)
        if keep is not None:
            hit |= ~keep[s:s + TWO_VALUED_BLOCK]
        if not hit.all():
            return False
    return True


def bounded(s: Scaling, y_bound: float) -> Scaling:
    """The scaling with ``y`` mapped into ``[-y_bound, y_bound]`` instead of ``[-1, 1]``
    (the estimators' and ``fit_batch``'s ``y_bound``)."""
    return s if y_bound == 1.0 else s._replace(y_scale=np.asarray(s.y_scale) / y_bound)


def scale_rows(s: Scaling, x: np.ndarray, y: np.ndarray, sw: Optional[np.ndarray] = None):
    """Scaled ``(x, y)`` in float64; every row's covariates clipped into ``[0, 1]`` (rows
    beyond a range cut short of a far tail, :func:`far_tails`, and zero-weight rows; as
    ``jaxtree.predict`` clips them). A large table is scaled a block of rows per thread
    (:mod:`jaxtree._threads`; the same values)."""
    # one float64 result array each, written in place (no second temporary of n*p values),
    # a block of rows per thread on a large table
    xs = np.empty(np.broadcast_shapes(np.shape(x), np.shape(s.x_min[..., None, :])), np.float64)
    ys = np.empty(np.broadcast_shapes(np.shape(y), np.shape(s.y_center[..., None])), np.float64)

    def scale(rows):
        np.subtract(x[..., rows, :], s.x_min[..., None, :], out=xs[..., rows, :],
                    dtype=np.float64)
        xs[..., rows, :] *= s.x_scale[..., None, :]
        np.clip(xs[..., rows, :], 0.0, 1.0, out=xs[..., rows, :])
        np.subtract(y[..., rows], s.y_center[..., None], out=ys[..., rows], dtype=np.float64)
        ys[..., rows] /= s.y_scale[..., None]

    _threads.map_rows(scale, np.shape(x)[-2], np.size(x))
    if sw is not None:
        ys = np.where(np.asarray(sw) > 0, ys, 0.0)
    return xs, ys
