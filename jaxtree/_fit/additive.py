"""``shapes="additive"``: penalised main effects of every covariate, their smoothness chosen by
generalised cross-validation (GCV), then the tree on their residual.

Every covariate's main shape is the shape terms' own basis (``n1`` hats on its scaled range,
:mod:`jaxtree.shapes`; a categorical column of 3 to ``n1 - 1`` covariates one group term,
its levels on the knots), all of them fitted at once by penalised least squares on the
training rows (numpy, float64, on the host: nothing is compiled for it):

    minimise  sum_i w_i (y_i - c0 - sum_j f_j(x_ij))^2
              + s * lam * sum_j (|D2 c_j|^2 + delta |c_j|^2)

with ``D2`` second differences along a numeric covariate's hats (a P-spline: a line is not
penalised; a category's levels have no order, so only the ridge ``delta`` term), ``s`` the
mean diagonal of the weighted Gram (so ``lam`` is scale-free), and each term's first hat
fixed at 0 (the intercept ``c0`` holds the level). ``(lam, delta)`` is the pair of
:data:`LAMBDAS` x :data:`DELTAS` of least GCV, ``n * RSS / (n - GAMMA * tr H)^2`` (``H`` the
hat matrix, ``tr H`` the effective degrees of freedom). The tree (the estimator's search,
its size chosen on held-out rows as always) is then fitted to the terms' residual.

Decision (sixtieth session, issue 29): measured outside the library first, then as built
(BENCHMARKS.md, "``shapes="additive"``: the GCV main effects in the library"), on the five
small regression tables at three split seeds: below the default on every table on average
(mtcars -7%, airquality -15%, ggplot2 mpg -7%, diabetes -0.4%, Boston -13%), issue 29's
targets met on 8 of the 15 table-seeds against the default's 2; 1-4% above the default on
the paper's function with about 10 terms (its truth is a tree: the terms take its main
effects first). So it is an option, not the default: the order choice's held-out rows
(:data:`jaxtree._fit.spec.ADDITIVE_ORDER`) kept the tree first on most folds of those
tables and lost the gain.
``GAMMA = 1.4`` (mgcv's choice against GCV's known undersmoothing) and the ridge ``delta``
(mgcv's "double penalty", which shrinks the lines too) are what kept it safe on 25
training rows (mtcars: 5.4 RMSE without them, against 3.4 with).

No held-out rows choose anything here. A covariate keeps its term unless GCV says
otherwise: backward elimination at the chosen penalty drops, one at a time, the term whose
removal lowers GCV most, while one does (:func:`_eliminate`); of more than ``max_terms`` left,
the ``max_terms`` of largest variance over the training rows are kept. The kept terms are
refitted, the penalty chosen again.
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

import jax
import numpy as np

from .. import shapes as shapes_

__all__ = ["ADDITIVE_KNOTS", "DELTAS", "GAMMA", "LAMBDAS", "TERMS", "Additive", "design", "fit",
           "fit_logistic"]

ADDITIVE_KNOTS = (16, 2)
"""``shape_knots`` of ``shapes="additive"``: 16 hats per main shape (pairs are not fitted)."""
GAMMA = 1.4
"""GCV's inflation of the effective degrees of freedom (mgcv's ``gamma``)."""
LAMBDAS = tuple(float(v) for v in 10.0 ** np.arange(-4, 4.5, 0.5))
"""The smoothing parameters tried (relative to the Gram's mean diagonal)."""
DELTAS = (0.0, 0.01, 0.1, 1.0)
"""The ridge on every coefficient, as a share of the smoothing penalty (the double penalty)."""
_TINY = 1e-6  # a ridge that keeps every system solvable (hats with no row in their support)
_CHUNK = 65_536  # rows per block of the Gram's accumulation


class Additive(NamedTuple):
    """A GCV fit: the terms as the model keeps them, and what chose them.

    Attributes:
      terms: :class:`jaxtree.shapes.Shapes` (host arrays), the kept main shapes.
      spec: their :class:`jaxtree.shapes.ShapeSpec` (no pairs).
      values: float64 ``(n,)`` the terms' values on the training rows (intercept included).
      lam, delta: the chosen penalty; edf: the effective degrees of freedom ``tr H``;
      gcv: its GCV score (the scaled target's units).
    """

    terms: shapes_.Shapes
    spec: shapes_.ShapeSpec
    values: np.ndarray
    lam: float
    delta: float
    edf: float
    gcv: float


def _candidates(xs: np.ndarray, spec: shapes_.ShapeSpec) -> list:
    """``[(j, smooth)]``: the covariates with a main term (a group's first covariate for the
    group; a constant column has none), ``smooth`` whether its hats are ordered (a numeric
    covariate) rather than a category's levels."""
    groups = {members[0] for _, members in spec.groups}
    members = {j for _, m in spec.groups for j in m[1:]}
    out = []
    for j in range(xs.shape[1]):
        if j in members:
            continue
        if j in groups or np.ptp(xs[:, j]) > 0:
            out.append((j, j not in groups))
    return out


def design(xs: np.ndarray, spec: shapes_.ShapeSpec, cand: list) -> np.ndarray:
    """``(n, 1 + (n1 - 1) * len(cand))`` float64: a column of ones, then each candidate's hats
    but its first (:func:`jaxtree.shapes.view`, the model's own values of them)."""
    n1 = spec.n1
    view = shapes_.view(np.asarray(xs, np.float64), spec, n1, xp=np)
    cols = [np.ones((xs.shape[0], 1))]
    for j, _ in cand:
        z = np.clip(view[:, j], 0.0, 1.0)
        cols.append(np.maximum(1 - np.abs(z[:, None] * (n1 - 1) - np.arange(1, n1)), 0))
    return np.hstack(cols)


def _penalties(cand: list, n1: int) -> tuple:
    """``(P, I)``: the smoothness penalty (second differences of each numeric term's hats, its
    dropped first hat at 0) and the ridge (every coefficient but the intercept)."""
    m = 1 + (n1 - 1) * len(cand)
    P = np.zeros((m, m))
    d2 = np.diff(np.eye(n1), 2, axis=0)[:, 1:]
    for t, (_, smooth) in enumerate(cand):
        if smooth:
            P[_block(t, n1), _block(t, n1)] = d2.T @ d2
    ridge = np.eye(m)
    ridge[0, 0] = 0.0
    return P, ridge


def _evaluate(xs, spec, cand, coef, per_term: bool = False) -> np.ndarray:
    """The fit's values at ``xs`` (the design times ``coef``, block by block of rows; a
    matrix ``coef (m, k)`` gives ``(n, k)``), or with ``per_term`` each term's own values
    ``(n, len(cand))`` (no intercept)."""
    n1 = spec.n1
    out = []
    for a in range(0, xs.shape[0], _CHUNK):
        X = design(xs[a:a + _CHUNK], spec, cand)
        out.append(np.column_stack([X[:, _block(t, n1)] @ coef[_block(t, n1)]
                                    for t in range(len(cand))]) if per_term else X @ coef)
    return np.concatenate(out) if out else np.zeros((0, len(cand)) if per_term else 0)


def _gram(xs, y, w, spec, cand):
    """``(X' W X, X' W y, sum w y^2)`` over blocks of rows (the design is never whole)."""
    m = 1 + (spec.n1 - 1) * len(cand)
    G, b, yy = np.zeros((m, m)), np.zeros(m), 0.0
    for a in range(0, xs.shape[0], _CHUNK):
        X = design(xs[a:a + _CHUNK], spec, cand)
        wb, yb = w[a:a + _CHUNK], y[a:a + _CHUNK]
        Xw = X * wb[:, None]
        G += Xw.T @ X
        b += Xw.T @ yb
        yy += float(np.sum(wb * yb * yb))
    return G, b, yy


def _gcv(rss: float, edf: float, n: int, gamma: float) -> float:
    """GCV, ``n * RSS / (n - gamma * edf)^2`` (a regression: the noise's scale unknown)."""
    den = n - gamma * edf
    return n * rss / den ** 2 if den > 0 else np.inf


def _ubre(rss: float, edf: float, n: int, gamma: float) -> float:
    """UBRE of a working model whose scale is known to be 1 (a logistic fit's iteratively
    reweighted least squares: ``var z_i = 1 / h_i``): ``RSS / n - 1 + 2 gamma edf / n``,
    the estimate of the mean squared prediction error that Mallows' Cp and mgcv's UBRE
    give."""
    return rss / n - 1.0 + 2.0 * gamma * edf / n


def _gram_trace(xs, w, spec, cand) -> float:
    """``tr(X' W X) = sum_i w_i |x_i|^2`` over blocks of rows (the Gram's trace without the
    Gram: ``O(n m)``, not ``O(n m^2)``)."""
    return float(sum(np.sum(w[a:a + _CHUNK] @ np.square(design(xs[a:a + _CHUNK], spec, cand)))
                     for a in range(0, xs.shape[0], _CHUNK)))


def _solve(G, b, yy, n, P, ridge, lams=LAMBDAS, deltas=DELTAS, gamma=GAMMA, scale=None,
           criterion=_gcv):
    """``(coef, lam, delta, edf, score)`` of the least ``criterion`` (GCV, or :func:`_ubre`)
    over the grid; ``scale``: the penalty's (None: the Gram's mean diagonal).

    Each ``delta`` diagonalises the whole ``lam`` path at once: with ``G' = G + s TINY R``
    (``s`` the scale, ``R`` the ridge) factored ``L L'`` and ``L^-1 (P + delta R) L^-T =
    U diag(e) U'``, the system ``A = G' + s lam (P + delta R)`` has ``A^-1 = M D M'`` with
    ``M = L^-T U`` and ``D = 1 / (1 + s lam e)``, so every ``lam`` costs ``O(m^2)``: the
    coefficients ``M D M' b``, ``tr(A^-1 G) = sum D (1 - s TINY diag(M' R M))`` and the
    residual sum of squares from ``M' b``. Exact algebra (the solves of each pair's system
    gave the same choices, tests/test_additive.py); one factorisation and one symmetric
    eigendecomposition per ``delta`` instead of a solve with ``m + 1`` right-hand sides
    per pair (sixty-first session, ``benchmarks/results/gam61/solve_time.py``: the 1,900 x
    30 regression 1.21 -> 0.67 s; breast cancer's logistic fit 6.66 -> 1.43 s with
    :data:`PERFORMANCE_TOL`; the same choices)."""
    scale = np.trace(G) / G.shape[0] if scale is None else scale
    if len(lams) * len(deltas) == 1:  # one pair: one solve (the logistic fit's last steps)
        return _solve_each(G, b, yy, n, P, ridge, lams, deltas, gamma, scale, criterion)
    tiny = scale * _TINY
    try:
        L = np.linalg.cholesky(G + tiny * ridge)
    except np.linalg.LinAlgError:
        return _solve_each(G, b, yy, n, P, ridge, lams, deltas, gamma, scale, criterion)
    Linv = _lower_inverse(L)
    rdiag = np.diag(ridge)
    best = None
    for delta in deltas:
        e, U = np.linalg.eigh(Linv @ (P + delta * ridge) @ Linv.T)
        e = np.maximum(e, 0.0)
        M = Linv.T @ U
        mb = M.T @ b
        r = rdiag @ (M * M)  # diag(M' R M), R diagonal
        for lam in lams:
            d = 1.0 / (1.0 + scale * lam * e)
            coef = M @ (d * mb)
            edf = float(np.sum(d * (1.0 - tiny * r)))
            quad = float(np.sum((d * mb) ** 2) - tiny * np.sum(rdiag * coef * coef))
            rss = max(yy - 2 * float(np.sum(d * mb * mb)) + quad, 0.0)
            score = criterion(rss, edf, n, gamma)
            if best is None or score < best[4]:
                best = (coef, lam, delta, edf, score)
    return best


def _lower_inverse(L):
    """``L^-1`` of a lower-triangular ``L`` (numpy's solve: scipy's triangular one is not
    imported for it, whose import costs a first fit a few tenths of a second)."""
    return np.linalg.solve(L, np.eye(L.shape[0]))


def _solve_each(G, b, yy, n, P, ridge, lams, deltas, gamma, scale, criterion):
    """:func:`_solve` by one solve per pair (where ``G + s TINY R`` has no Cholesky factor)."""
    best = None
    for delta in deltas:
        for lam in lams:
            A = G + scale * (lam * (P + delta * ridge) + _TINY * ridge)
            try:
                sol = np.linalg.solve(A, np.column_stack([b, G]))
            except np.linalg.LinAlgError:
                continue
            coef = sol[:, 0]
            edf = float(np.trace(sol[:, 1:]))
            rss = max(yy - 2 * coef @ b + coef @ G @ coef, 0.0)
            score = criterion(rss, edf, n, gamma)
            if best is None or score < best[4]:
                best = (coef, lam, delta, edf, score)
    return best


def _block(t: int, n1: int) -> slice:
    """Term ``t``'s coefficients among the design's columns (after the intercept's)."""
    return slice(1 + t * (n1 - 1), 1 + (t + 1) * (n1 - 1))


def _indices(t: int, n1: int) -> np.ndarray:
    """Term ``t``'s columns (:func:`_block`) as indices."""
    b = _block(t, n1)
    return np.arange(b.start, b.stop)


def _columns(terms, n1: int) -> np.ndarray:
    """The design's columns of the intercept and ``terms``."""
    return np.concatenate([[0]] + [_indices(t, n1) for t in terms]).astype(int)


def _eliminate(G, b, yy, n, P, ridge, count, n1, lam, delta, score, gamma=GAMMA, scale=None,
               criterion=_gcv) -> list:
    """The terms kept by backward elimination on GCV (or ``criterion``; ``scale``: the
    penalty's, None: the Gram's mean diagonal) at the chosen penalty: while leaving
    out some term lowers the score, the one whose removal lowers it most goes. A term of no
    effect costs GCV its degrees of freedom, so noise covariates leave the formula (the
    fitted shrinkage alone never makes a term exactly 0).

    Decision (sixtieth session): each candidate system is the full one without the term's
    rows and columns (the penalty's scale, the Gram's mean diagonal, is the full system's
    throughout), so its inverse is the full inverse downdated by the term's block,
    ``B_RR - B_RS B_SS^-1 B_SR``: ``O(m^2)`` a candidate instead of a solve of ``O(m^3)``.
    Solving each candidate afresh (with its own scale) took 3.3 s at 1,900 x 30
    (``m = 451``), and would grow as ``p^2 m^3``; with the downdate the whole fit takes 1.2
    s there, most of it the penalty's grid. The choices moved on some folds of the small
    tables (the scale), for the same count of targets met (BENCHMARKS.md,
    "``shapes="additive"``: the GCV main effects in the library")."""
    m = G.shape[0]
    scale = np.trace(G) / m if scale is None else scale
    B = np.linalg.inv(G + scale * (lam * (P + delta * ridge) + _TINY * ridge))
    cols = np.arange(m)
    kept = list(range(count))

    def without(t):
        own = np.isin(cols, _indices(t, n1))
        S, R = np.flatnonzero(own), np.flatnonzero(~own)
        inv = B[np.ix_(R, R)] - B[np.ix_(R, S)] @ np.linalg.solve(B[np.ix_(S, S)],
                                                                   B[np.ix_(S, R)])
        c = cols[R]
        g, bb = G[np.ix_(c, c)], b[c]
        coef = inv @ bb
        edf = float(np.sum(inv * g))  # tr(inv @ g), both symmetric
        rss = max(yy - 2 * coef @ bb + coef @ g @ coef, 0.0)
        return criterion(rss, edf, n, gamma), inv, R

    while len(kept) > 1:
        best = None
        for t in kept:
            out = without(t)
            if best is None or out[0] < best[1][0]:
                best = (t, out)
        if best[1][0] >= score:
            break
        t, (score, B, R) = best
        cols = cols[R]
        kept.remove(t)
    return kept


TERMS = ("eliminate", "all", "lines")
"""The ways :func:`fit` and :func:`fit_logistic` fit the terms (``terms``): ``"eliminate"``
(every covariate's shape, then backward elimination, :func:`_eliminate`), ``"all"`` (every
covariate's shape kept: the penalty's shrinkage alone) and ``"lines"`` (every numeric
covariate's term a line: a ridge regression, :func:`_fit_lines`). Of more than
``max_terms`` terms left, the ``max_terms`` of largest variance are refitted."""


def _check_terms(terms: str) -> None:
    if terms not in TERMS:
        raise ValueError(f"terms must be one of {TERMS}; got {terms!r}.")


def fit(xs, y, w, groups: tuple = (), max_terms: int = 20, n1: int = ADDITIVE_KNOTS[0],
        dtype=np.float32, terms: str = "eliminate") -> Additive:
    """The GCV fit of every covariate's main shape (module docstring); ``terms="all"`` keeps
    every covariate's term (no backward elimination: the penalty's shrinkage alone, the
    ``max_terms`` of largest variance where there are more); ``terms="lines"`` fits each
    numeric covariate's term as a line, a ridge regression (:func:`_fit_lines`; no
    elimination either).

    Args:
      xs: float ``(n, p)`` scaled covariates (the model's, in ``[0, 1]``).
      y: float ``(n,)`` the scaled target; w: ``(n,)`` row weights or None.
      groups: the table's categorical groups (:class:`jaxtree.shapes.ShapeSpec`'s).
      max_terms: at most this many terms (the largest by variance, refitted).
      n1: hats per main shape.
      dtype: the terms' dtype (the model's).
      terms: one of :data:`TERMS`.

    Raises:
      ValueError: no covariate varies; an unknown ``terms``.
    """
    _check_terms(terms)
    xs, y, w, n, spec, cand = _setup(xs, y, w, groups, n1)
    G, b, yy = _gram(xs, y, w, spec, cand)
    if terms == "lines":
        return _fit_lines(xs, w, n, spec, cand, G, b, yy, max_terms, dtype)
    P, ridge = _penalties(cand, n1)
    coef, lam, delta, edf, score = _solve(G, b, yy, n, P, ridge)
    kept = _kept(xs, w, spec, cand, coef, max_terms,
                 _eliminate(G, b, yy, n, P, ridge, len(cand), n1, lam, delta, score)
                 if terms == "eliminate" else list(range(len(cand))))
    if len(kept) < len(cand):  # refitted on the kept terms, the penalty chosen again
        cols = _columns(kept, n1)
        coef, lam, delta, edf, score = _solve(G[np.ix_(cols, cols)], b[cols], yy, n,
                                              P[np.ix_(cols, cols)], ridge[np.ix_(cols, cols)])
        cand = [cand[t] for t in kept]
    return _result(xs, spec, cand, coef, dtype, _evaluate(xs, spec, cand, coef), lam, delta,
                   edf, score)


def _lines(cand: list, n1: int) -> np.ndarray:
    """``T``, ``(m, 1 + c)``: the hats' coefficients (the design's ``m`` columns, intercept
    first) from a line model's ``1 + c`` (the intercept, one slope a numeric term, one
    coefficient a level of a category). A numeric term's hats carry ``s * u_h``, ``u_h = h /
    (n1 - 1)`` the hat's knot, which interpolates to ``s * z`` on its scaled range (the hats
    are piecewise linear and sum to one), so one column ``u`` serves it; a category's levels
    keep their own coefficients (their hats are indicators)."""
    m = 1 + (n1 - 1) * len(cand)
    cols = [np.eye(m, 1)]
    knots = np.arange(1, n1) / (n1 - 1)
    for t, (_, smooth) in enumerate(cand):
        block = np.zeros((m, 1 if smooth else n1 - 1))
        block[_block(t, n1), :] = knots[:, None] if smooth else np.eye(n1 - 1)
        cols.append(block)
    return np.hstack(cols)


def _fit_lines(xs, w, n, spec, cand, G, b, yy, max_terms: int, dtype) -> Additive:
    """``terms="lines"`` of :func:`fit`: a ridge regression on the numeric covariates (and a
    category's levels), the model's hats carrying each line (:func:`_lines`). The penalty is
    ``lam * sum_c var_c beta_c^2`` (``var_c`` a column's weighted variance over the rows:
    the ridge on standardised columns a user would fit), the intercept free, ``lam`` of least
    GCV over :data:`LAMBDAS` (times ``n``); of more than ``max_terms`` terms, the
    ``max_terms`` of largest variance are refitted.

    Decision (seventy-eighth session, issue 29): on the small regressions a ridge regression
    beat every setting of the cross-validated choice (mtcars 2.93 against 3.16 RMSE,
    diabetes 54.65 against 54.75): their curves, even at their strongest double penalty,
    shrink a line's slope less than a ridge on standardised covariates does, and with
    25-400 training rows of correlated covariates that shrinkage is what predicts. It is
    the choice's fifth setting (:data:`jaxtree._fit.pipeline.LINES`), a line per covariate
    in the model's own terms (a main shape on a line prints as the line)."""
    T = _lines(cand, spec.n1)
    Gl = T.T @ G @ T
    pen, free = _line_penalty(Gl, n)
    coef, lam, delta, edf, score = _solve(Gl, T.T @ b, yy, n, pen, free, deltas=(0.0,), scale=n)
    coef = T @ coef
    kept = _kept(xs, w, spec, cand, coef, max_terms, list(range(len(cand))))
    if len(kept) < len(cand):
        cols = _columns(kept, spec.n1)
        return _fit_lines(xs, w, n, spec, [cand[t] for t in kept], G[np.ix_(cols, cols)],
                          b[cols], yy, max_terms, dtype)
    return _result(xs, spec, cand, coef, dtype, _evaluate(xs, spec, cand, coef), lam, delta,
                   edf, score)


def _line_penalty(Gl, n: int) -> tuple:
    """``(pen, free)`` of a line model whose weighted Gram is ``Gl`` (``(1 + c, 1 + c)``,
    the intercept's column first, the weights summing to ``n``): ``pen = diag(var_c)``, each
    column's weighted variance (0 for the intercept: it is not penalised), so that
    ``lam * b' pen b`` is the ridge on standardised columns; ``free`` the identity but the
    intercept (the tiny ridge that keeps every system solvable)."""
    var = np.maximum(np.diag(Gl) / n - (Gl[0] / n) ** 2, 0.0)
    var[0] = 0.0
    return np.diag(var), np.diag((np.arange(len(var)) > 0).astype(np.float64))


def _setup(xs, y, w, groups, n1) -> tuple:
    """``(xs, y, w, n, spec, cand)``: the rows in float64, the weights of mean 1 over the
    ``n`` rows of positive weight (GCV's and UBRE's ``n``), the terms' spec and the
    candidates (:func:`_candidates`). Raises ValueError where no covariate varies."""
    xs = np.asarray(xs, np.float64)
    y = np.asarray(y, np.float64)
    w = np.ones_like(y) if w is None else np.asarray(w, np.float64)
    n = int(np.count_nonzero(w > 0))
    w = w * (n / np.sum(w))
    spec = shapes_.ShapeSpec(n1=n1, n2=ADDITIVE_KNOTS[1], max_terms=1, pairs=(),
                             groups=tuple(groups))
    cand = _candidates(xs, spec)
    if not cand:
        raise ValueError("shapes='additive' needs a covariate that varies; every column of X "
                         "is constant.")
    return xs, y, w, n, spec, cand


def _kept(xs, w, spec, cand, coef, max_terms: int, kept: list) -> list:
    """The eliminated fit's terms ``kept``, at most ``max_terms`` of them: the largest by
    their weighted variance on the training rows."""
    if len(kept) <= max_terms:
        return kept
    each = _evaluate(xs, spec, cand, coef, per_term=True)
    var = [np.cov(each[:, t], aweights=w + 1e-300) for t in kept]
    return sorted(kept[i] for i in np.argsort(var)[::-1][:max_terms])


IRLS_ITERATIONS = 30
"""The most iterations of each of :func:`fit_logistic`'s two loops."""
PERFORMANCE_TOL = 1e-6
""":func:`fit_logistic`'s first loop (the penalty chosen on every step) ends once no
coefficient moves by more than this relative to the largest (the grid's eigendecompositions
round at about 1e-8 on breast cancer's 451 coefficients, so a tighter bound ran all
:data:`IRLS_ITERATIONS`: 4 s of its 569 rows' fit)."""
IRLS_TOL = 1e-9
"""Its second loop (Newton steps at the chosen penalty, one solve each) ends once no
coefficient moves by more than this relative to the largest."""
HALVINGS = 30
"""The most halvings of one Newton step of :func:`fit_logistic` (its objective must not rise)."""
_H_MIN = 1e-6  # the curvature's floor (a row the fit classifies with |logit| > ~14)


def _working_gram(xs, y, w, spec, cand, coef) -> tuple:
    """``(G, b, zz)`` of the Newton step of the log-loss at ``coef``: the weighted least
    squares of the working response ``z = eta + (y - mu) / h`` with weights ``w h``
    (``eta`` the fit's logit, ``mu`` its probability, ``h = mu (1 - mu)`` floored at
    :data:`_H_MIN`), over blocks of rows. Its solution with the penalty ``Q`` is the Newton
    step of ``sum w loss + b' Q b / 2`` (iteratively reweighted least squares); at its fixed
    point the penalised objective's gradient is exactly 0 whatever the floor."""
    m = coef.shape[0]
    G, b, zz = np.zeros((m, m)), np.zeros(m), 0.0
    for a in range(0, xs.shape[0], _CHUNK):
        g, bb, z2 = _newton_sums(design(xs[a:a + _CHUNK], spec, cand), y[a:a + _CHUNK],
                                 w[a:a + _CHUNK], coef)
        G += g
        b += bb
        zz += z2
    return G, b, zz


def _newton_sums(X, y, w, coef) -> tuple:
    """:func:`_working_gram`'s ``(G, b, zz)`` of the rows of design ``X``."""
    eta = X @ coef
    mu = 0.5 * (1.0 + np.tanh(0.5 * eta))
    h = np.maximum(mu * (1.0 - mu), _H_MIN)
    z = eta + (y - mu) / h
    wh = w * h
    Xw = X * wh[:, None]
    return Xw.T @ X, Xw.T @ z, float(np.sum(wh * z * z))


def _loss_at(eta, y, w) -> float:
    """``sum w log(1 + exp(-y' eta))`` at logits ``eta`` (``y' = +-1``)."""
    return float(np.sum(w * np.logaddexp(0.0, np.where(y > 0, -eta, eta))))


def _log_loss(xs, y, w, spec, cand, coef) -> float:
    """``sum w log(1 + exp(-y' eta))`` of the fit ``coef`` (``y' = +-1``), block by block."""
    return _loss_at(_evaluate(xs, spec, cand, coef), y, w)


def _irls(xs, y, w, spec, cand, P, ridge, scale, n, coef, Z=None, deltas=DELTAS) -> tuple:
    """The penalised logistic fit from ``coef``: first the penalty chosen afresh on every
    Newton step's working model by UBRE (Gu's performance iteration, mgcv's default for a
    known scale), then Newton steps at the last chosen ``(lam, delta)`` until the
    coefficients settle, so that they are the minimiser of ``sum w loss + b' Q b / 2`` at
    that penalty. Every step is halved (up to :data:`HALVINGS` times) until it does not
    raise that objective at its penalty: a full Newton step from a poor start overshoots
    where the labels are nearly separable (ISLR Default, 3% positives: the logits reached
    1e5 without it). Returns ``(coef, lam, delta, edf, ubre, (G, b, zz))``, the last
    working model's Gram (the elimination's).

    ``Z``: the rows' design in other coefficients ``c`` (``(n, len(c))``: the lines'
    ``design @ T``, :func:`_lines`), on which the fit runs instead of the hats' design;
    ``coef``, ``P``, ``ridge`` and everything returned are then ``c``'s. ``deltas``: the
    ridge shares tried."""
    grids = (LAMBDAS, deltas)
    if Z is None:
        def gram(c):
            return _working_gram(xs, y, w, spec, cand, c)

        def log_loss(c):
            return _log_loss(xs, y, w, spec, cand, c)
    else:
        def gram(c):
            return _newton_sums(Z, y, w, c)

        def log_loss(c):
            return _loss_at(Z @ c, y, w)
    loss = log_loss(coef)
    for final in (False, True):
        for _ in range(IRLS_ITERATIONS):
            G, b, zz = gram(coef)
            new, lam, delta, edf, score = _solve(G, b, zz, n, P, ridge, *grids, scale=scale,
                                                 criterion=_ubre)
            Q = scale * (lam * (P + delta * ridge) + _TINY * ridge)
            before = loss + 0.5 * coef @ Q @ coef
            for _ in range(HALVINGS):
                new_loss = log_loss(new)
                if new_loss + 0.5 * new @ Q @ new <= before * (1 + 1e-12):
                    break
                new = 0.5 * (coef + new)
            step = float(np.max(np.abs(new - coef)))
            coef, loss = new, new_loss
            if step < (IRLS_TOL if final else PERFORMANCE_TOL) * (1.0 + np.max(np.abs(coef))):
                break
        grids = ((lam,), (delta,))
    return coef, lam, delta, edf, score, (G, b, zz)


def fit_logistic(xs, y, w, groups: tuple = (), max_terms: int = 20,
                 n1: int = ADDITIVE_KNOTS[0], dtype=np.float32,
                 terms: str = "eliminate") -> Additive:
    """The classifier's twin of :func:`fit`: every covariate's main shape in the logit of a
    binary label, by penalised iteratively reweighted least squares with the same design
    and double penalty, the penalty chosen by UBRE (the binomial's scale is known, so
    mgcv's choice is UBRE, with the same ``GAMMA``), the terms by backward elimination on
    the converged fit's working model, then the kept terms refitted. ``values`` are the
    fit's logits on the rows (the trees' offset); ``gcv`` holds the UBRE score.
    ``terms="all"`` keeps every covariate's term, as :func:`fit`'s; ``terms="lines"`` fits
    a ridge logistic regression (:func:`_fit_logistic_lines`).

    The penalty's scale is fixed once: the mean diagonal of the Gram with every row's
    curvature at 1/4 (the logit's at 0), so that the objective minimised at the chosen pair
    is ``sum w log(1 + exp(-y' eta)) + b' Q b / 2`` with
    ``Q = scale * (lam * (P + delta I) + TINY I)``, the regressor's penalty.

    Args:
      xs: float ``(n, p)`` scaled covariates (the model's, in ``[0, 1]``).
      y: ``(n,)`` binary labels: positive where ``y > 0`` (``+-1`` or ``0/1``).
      w, groups, max_terms, n1, dtype, terms: as :func:`fit`'s.

    Raises:
      ValueError: no covariate varies; an unknown ``terms``.
    """
    _check_terms(terms)
    xs, y, w, n, spec, cand = _setup(xs, (np.asarray(y) > 0).astype(np.float64), w, groups, n1)
    if terms == "lines":
        return _fit_logistic_lines(xs, y, w, n, spec, cand, max_terms, dtype)
    P, ridge = _penalties(cand, n1)
    scale, (coef, lam, delta, edf, score, (G, b, zz)) = _full_logistic(xs, y, w, n, spec, cand,
                                                                       P, ridge, groups, n1)
    kept = _kept(xs, w, spec, cand, coef, max_terms,
                 _eliminate(G, b, zz, n, P, ridge, len(cand), n1, lam, delta, score,
                            scale=scale, criterion=_ubre)
                 if terms == "eliminate" else list(range(len(cand))))
    if len(kept) < len(cand):  # refitted on the kept terms, the penalty chosen again
        cols = _columns(kept, n1)
        cand = [cand[t] for t in kept]
        coef, lam, delta, edf, score, _ = _irls(xs, y, w, spec, cand, P[np.ix_(cols, cols)],
                                                ridge[np.ix_(cols, cols)], scale, n, coef[cols])
    return _result(xs, spec, cand, coef, dtype, _evaluate(xs, spec, cand, coef), lam, delta,
                   edf, score)


def _fit_logistic_lines(xs, y, w, n, spec, cand, max_terms: int, dtype) -> Additive:
    """``terms="lines"`` of :func:`fit_logistic`: a ridge logistic regression on the numeric
    covariates (and a category's levels), each line carried by the model's hats
    (:func:`_lines`), as :func:`_fit_lines` is the regressor's. The penalty is
    ``s * lam * sum_c var_c beta_c^2`` (:func:`_line_penalty`: the ridge on standardised
    columns; ``s = n / 4``, the Gram's at every row's curvature 1/4, as
    :func:`fit_logistic`'s scale is), the intercept free, ``lam`` chosen by UBRE on each
    Newton step (:func:`_irls`) from the prior's intercept; of more than ``max_terms``
    terms, the ``max_terms`` of largest variance are refitted.

    Decision (seventy-ninth session, issue 29): the regressor's choice weighs a ridge
    regression since the seventy-eighth session (:data:`jaxtree._fit.pipeline.LINES`); a
    logistic regression is the classifier's linear model, and issue 29 asks that its AUC
    be reached, so the classifier's choice weighs this fit where the table has more
    covariates than ``max_terms`` (:data:`jaxtree._fit.classify.WIDE_CHOICES`, whose
    decision says why only there)."""
    T = _lines(cand, spec.n1)
    # the rows' design in the lines' coefficients, (n, 1 + c): the fit's Newton steps read
    # it, not the hats' (n, 1 + 15 c) design (breast cancer's 30 covariates: 31 columns
    # against 451)
    Z = _evaluate(xs, spec, cand, T)
    pen, free = _line_penalty(Z.T @ (Z * w[:, None]), n)
    prior = np.clip(np.sum(w * y) / np.sum(w), 1e-6, 1 - 1e-6)
    start = np.zeros(T.shape[1])
    start[0] = np.log(prior / (1 - prior))
    c, lam, delta, edf, score, _ = _irls(xs, y, w, spec, cand, pen, free, 0.25 * n, n, start,
                                         Z=Z, deltas=(0.0,))
    coef = T @ c
    kept = _kept(xs, w, spec, cand, coef, max_terms, list(range(len(cand))))
    if len(kept) < len(cand):
        return _fit_logistic_lines(xs, y, w, n, spec, [cand[t] for t in kept], max_terms,
                                   dtype)
    return _result(xs, spec, cand, coef, dtype, Z @ c, lam, delta, edf, score)


_LAST_FULL: list = [None, None]  # [key, (scale, irls)]: the last call's, see _full_logistic


def _full_logistic(xs, y, w, n, spec, cand, P, ridge, groups, n1) -> tuple:
    """``(scale, _irls(...))``: :func:`fit_logistic`'s penalty scale and its penalised fit of
    every candidate from the prior's intercept, remembered for the next call on the same
    rows (a digest of the rows, the labels, the weights, the groups, ``n1`` and the fit's
    settings).

    Decision (seventy-first session, issue 29): the binary classifier's cross-validated
    choice fits ``"additive k=0"`` and ``"additive k=0 all terms"`` one after the other on
    the same rows, and the fit of every candidate is the first step of both (the
    elimination's fit continues from it); this fit was most of the choice's time (a profile
    of Pima's warm fit: ``fit_logistic`` 2.0 of 3.0 s, twelve calls). The remembered result
    is returned as copies, so the caller cannot change it."""
    key = hashlib.sha256()
    for a in (xs, y, w):
        key.update(np.ascontiguousarray(a, np.float64).tobytes())
    key.update(repr((xs.shape, groups, n1, LAMBDAS, DELTAS, GAMMA, IRLS_ITERATIONS, IRLS_TOL,
                     PERFORMANCE_TOL, HALVINGS)).encode())
    digest = key.hexdigest()
    last_key, last = _LAST_FULL
    if last_key != digest:
        m = P.shape[0]
        scale = 0.25 * _gram_trace(xs, w, spec, cand) / m
        prior = np.clip(np.sum(w * y) / np.sum(w), 1e-6, 1 - 1e-6)
        start = np.zeros(m)
        start[0] = np.log(prior / (1 - prior))
        last = (scale, _irls(xs, y, w, spec, cand, P, ridge, scale, n, start))
        _LAST_FULL[:] = [digest, last]
    scale, (coef, lam, delta, edf, score, (G, b, zz)) = last
    return scale, (coef.copy(), lam, delta, edf, score, (G.copy(), b.copy(), zz))


def _result(xs, spec, cand, coef, dtype, values, lam, delta, edf, score) -> Additive:
    """The fit as the model keeps it (:class:`Additive`) from the kept candidates' ``coef``."""
    n1 = spec.n1
    p = xs.shape[1]
    main = np.zeros((p, n1), dtype)
    on = np.zeros(p, bool)
    for t, (j, _) in enumerate(cand):
        main[j, 1:] = coef[_block(t, n1)]
        on[j] = True
    spec = spec._replace(max_terms=len(cand))
    terms = shapes_.Shapes(main, on, np.zeros((0, spec.n2 ** 2), dtype), np.zeros(0, bool),
                           np.asarray(coef[0], dtype),
                           np.asarray([j for j, _ in cand], np.int32),
                           np.asarray(len(cand), np.int32))
    return Additive(terms, spec, values, float(lam), float(delta), float(edf),
                    float(score))


def values(terms: shapes_.Shapes, spec: shapes_.ShapeSpec, xs) -> np.ndarray:
    """The terms' values (intercept included) at scaled covariates ``xs (n, p)``, float64, on
    the host (the model's :func:`jaxtree.shapes.evaluate`, in numpy)."""
    order = [int(j) for j in np.asarray(terms.order)]
    main = np.asarray(terms.main, np.float64)
    coef = np.concatenate([[float(terms.intercept)]] + [main[j, 1:] for j in order])
    return _evaluate(np.asarray(xs, np.float64), spec, [(j, None) for j in order], coef)


def on_device(terms: shapes_.Shapes) -> shapes_.Shapes:
    """The terms as device arrays (``device_put``: nothing compiled)."""
    return shapes_.Shapes(*jax.device_put(tuple(terms)))
