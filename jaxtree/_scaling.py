"""The one place that maps user units to the search's space and back.

Covariates go to ``[0, 1]`` with the training minimum and range, ``y`` to ``[-1, 1]``
with the training midpoint and half-range (the paper needs ``|phi| <= 1`` on ``[0, 1]``
and ``Y = [-1, 1]``). Rows with zero sample weight do not count, so a zero weight is the
same as removing the row; they are clipped into range so the basis stays bounded.
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


def from_extremes(x_min, x_max, y_min, y_max) -> Scaling:
    """The scaling given training extremes (any leading batch shape)."""
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
        z = (np.asarray(sorted(v), np.float64) - s.x_min[j]) * s.x_scale[j]
        return bool(np.all((z == 0) | (z == 1)))

    return tuple(j for j, v in enumerate(values) if v is not None and binary(j, v))


def from_rows(x: np.ndarray, y: np.ndarray, sw: Optional[np.ndarray] = None) -> Scaling:
    """Scaling from data ``x (..., n, p)``, ``y (..., n)``; rows with ``sw == 0`` ignored."""
    return from_extremes(*extremes(x, y, sw))


def bounded(s: Scaling, y_bound: float) -> Scaling:
    """The scaling with ``y`` mapped into ``[-y_bound, y_bound]`` instead of ``[-1, 1]``
    (the estimators' and ``fit_batch``'s ``y_bound``)."""
    return s if y_bound == 1.0 else s._replace(y_scale=np.asarray(s.y_scale) / y_bound)


def scale_rows(s: Scaling, x: np.ndarray, y: np.ndarray, sw: Optional[np.ndarray] = None):
    """Scaled ``(x, y)`` in float64; zero-weight rows clipped into range. A large table is
    scaled a block of rows per thread (:mod:`jaxtree._threads`; the same values)."""
    # one float64 result array each, written in place (no second temporary of n*p values),
    # a block of rows per thread on a large table
    xs = np.empty(np.broadcast_shapes(np.shape(x), np.shape(s.x_min[..., None, :])), np.float64)
    ys = np.empty(np.broadcast_shapes(np.shape(y), np.shape(s.y_center[..., None])), np.float64)

    def scale(rows):
        np.subtract(x[..., rows, :], s.x_min[..., None, :], out=xs[..., rows, :],
                    dtype=np.float64)
        xs[..., rows, :] *= s.x_scale[..., None, :]
        np.subtract(y[..., rows], s.y_center[..., None], out=ys[..., rows], dtype=np.float64)
        ys[..., rows] /= s.y_scale[..., None]

    _threads.map_rows(scale, np.shape(x)[-2], np.size(x))
    if sw is not None:
        keep = np.asarray(sw) > 0
        xs = np.where(keep[..., None], xs, np.clip(xs, 0.0, 1.0))
        ys = np.where(keep, ys, 0.0)
    return xs, ys
