r"""Simpler formulas after the search: drop leaves that do not pay for themselves, and print
the law in original units.

:func:`prune` runs the deletion move of :mod:`jaxtree.moves` (``score_delete`` scores the
removal of every leaf at once, its sibling taking the parent's place and the intercept
re-fitted; ``select_delete`` takes the cheapest, lowest leaf rank on ties; ``apply_delete``
collapses the parent) as long as the cheapest removal raises the training sum of squares by at
most ``tol`` times the total sum of squares (so ``tol`` is the largest drop of training
``R²`` a removal may cost), re-fitting the weights after each removal. Every call runs on the
program's fixed capacity, so the compiled scoring serves every size (no retracing as the
tree shrinks). It is a post-processing pass: a Python loop over at most ``k`` removals, one
host transfer per removal.

:func:`law` writes a fitted model as a sympy expression in original units, and only when it is
a law: the exact expression expanded (for a ``log`` target constants merged into one factor
and ``c*log(x)`` terms turned into powers ``x**c``; for a ``square`` target the ``sqrt`` of the
expanded sum), its negligible terms dropped and its numbers rounded within ``tol`` of the
model on points of the training box (integers as integers, exponents near simple fractions
as those fractions), and then kept only if it has at most :data:`MAX_LAW_TERMS` additive
terms; otherwise it warns (:class:`NoLawWarning`, with the number of terms and the held-out
error) and returns None. :func:`find_law` returns the whole record (:class:`Law`). It is for
reading: the unrounded expression is :func:`jaxtree.export.to_sympy`, which equals
``predict``.
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from jaxtree import _formula, moves, refine as refine_, scoring
from jaxtree import program as prog

__all__ = ["check_prune_args", "count_terms", "find_law", "law", "Law", "LAW_TOL",
           "MAX_LAW_TERMS", "N_LAW_CHECK", "NoLawWarning", "prune", "prune_with", "PruneResult"]


class PruneResult(NamedTuple):
    """What :func:`prune` did.

    Attributes:
      program: the pruned, re-fitted program (same capacity).
      removed: one ``(feature, basis, sse_increase / total_ss)`` per removed leaf, in order.
    """

    program: prog.Program
    removed: list


@jax.jit
def _total_ss(y, w):
    ybar = jnp.sum(w * y) / jnp.maximum(jnp.sum(w), jnp.finfo(y.dtype).tiny)
    return jnp.sum(w * (y - ybar) ** 2)


_score_delete = jax.jit(moves.score_delete, static_argnames=("basis", "max_leaves"))
_apply_delete = jax.jit(moves.apply_delete)
_joint = jax.jit(refine_.joint, static_argnames=("basis", "steps"))
_coordinate = jax.jit(refine_.coordinate, static_argnames=("basis", "sweeps", "max_leaves"))


def prune(program: prog.Program, data: scoring.Data, basis, tol: float, *,
          refine: Optional[str] = "optax", refine_steps: int = 20,
          coordinate_sweeps: int = 3) -> PruneResult:
    """Removes leaves while the cheapest removal costs at most ``tol`` of the total SS.

    Args:
      program: a fitted program in the scaled space (e.g. ``search.fit(...).program``).
      data: the chunked, scaled training data it was fitted on (:func:`jaxtree.scoring.chunk`).
      basis: the :class:`jaxtree.basis.Basis` the program indexes (bound, if it must be).
      tol: float ``>= 0``: a removal is taken when it raises the training SSE by at most
        ``tol * sum w (y - ybar)^2``, i.e. lowers training ``R²`` by at most ``tol``.
      refine: weight re-fit after each removal: ``"optax"`` (joint L-BFGS in the box),
        ``"coordinate"`` (the paper's coordinate descent) or None.
      refine_steps, coordinate_sweeps: as for :class:`jaxtree.TreeRegressor`.

    Returns:
      :class:`PruneResult`. A one-leaf tree is never emptied.

    Raises:
      ValueError: for a negative or non-finite ``tol`` or an unknown ``refine``.
    """
    check_prune_args(tol, refine)
    max_leaves = (program.capacity + 1) // 2

    def refit(p):
        if refine == "optax":
            return _joint(p, data, basis, steps=refine_steps)[0]
        if refine == "coordinate":
            return _coordinate(p, data, basis, sweeps=coordinate_sweeps, max_leaves=max_leaves)[0]
        return p

    return prune_with(program, tol, float(_total_ss(data.y, data.w)),
                      lambda p: _score_delete(p, data, basis, max_leaves=max_leaves), refit)


def check_prune_args(tol, refine) -> None:
    """The arguments every pruning checks (:func:`prune`, :func:`jaxtree.stream.prune`).

    Args:
      tol: the pruning tolerance: a finite number >= 0 (a fraction of R²).
      refine: ``"optax"``, ``"coordinate"`` or None.
    """
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating)) or not (
            math.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol must be a finite number >= 0 (a fraction of R²); got {tol!r}.")
    if refine not in ("optax", "coordinate", None):
        raise ValueError(f"refine must be 'optax', 'coordinate' or None; got {refine!r}.")


def prune_with(program: prog.Program, tol: float, tss: float,
               score: Callable[[prog.Program], moves.DeleteScores],
               refit: Callable[[prog.Program], prog.Program]) -> PruneResult:
    """The pruning loop of :func:`prune`, over any data path: ``score(program)`` scores every
    deletion (:func:`jaxtree.moves.score_delete` or its streamed form), ``refit(program)``
    re-fits the weights after a removal, ``tss`` is the weighted total sum of squares of the
    target. The streamed pruning (:func:`jaxtree.stream.prune`) runs the same loop.

    Args:
      program: the tree to prune.
      tol: a removal is taken when it raises the SSE by at most ``tol * tss``.
      tss: the weighted total sum of squares of the target.
      score: ``score(program)``: the :class:`jaxtree.moves.DeleteScores`.
      refit: ``refit(program)``: the program with its weights re-fitted.
    """
    removed = []
    while int(np.sum(np.asarray(program.op) == prog.LEAF)) > 1:
        scores = score(program)
        choice = moves.select_delete(scores)
        cost = float(choice.sse) - float(scores.rss)
        if not cost <= tol * tss:
            break
        slot = int(choice.slot)
        what = (int(program.feature[slot]), int(program.basis[slot]), cost / tss if tss else 0.0)
        program = refit(_apply_delete(program, choice))
        removed.append(what)
    return PruneResult(program, removed)


# ------------------------------------------------------------------------------ printing



MAX_LAW_TERMS = 6
"""The most additive terms a law may have (:func:`find_law`): every summand of every sum in
the expression counts, inside functions too (``sqrt(x1**2 + x2**2)`` has 2, ``8.99*q1*q2/r**2``
has 1). The planted laws of the docs (docs/laws.md) and the tests have 1 to 3; the expansions that fit
``x1/(x2 + x3)`` or ``exp(-x1)*sin(x2)`` to R² 0.9999 have 40 or more."""

LAW_TOL = 1e-3
"""Default tolerance of a law: the share of the target's half-range by which the printed law
may differ from the fitted model in the training box (as :meth:`TreeModel.formula
<jaxtree.model.TreeModel.formula>`'s ``tol``)."""

N_LAW_CHECK = 4096
"""Points drawn uniformly in the training box at which a law is checked against the model."""

_FINE_TERMS = 24  # numbers rounded one by one only in expressions of at most this many terms


class NoLawWarning(UserWarning):
    """:func:`law` found no compact law; the message says why (terms, error, held-out error)."""


class Law(NamedTuple):
    """What :func:`find_law` found.

    Attributes:
      expr: the simplified, cleaned and rounded sympy expression in original units, also when
        it is not a law (then an expansion that approximates the fit); None for a model with
        shape terms.
      found: True when ``expr`` is a law: at most ``max_terms`` terms and within ``tol`` of
        the fitted model.
      n_terms: the additive terms of ``expr`` (:data:`MAX_LAW_TERMS` says how they count).
      error: the largest difference between ``expr`` and the model at the checked points, as
        a share of the target's half-range there (in ``log y`` for a ``log`` target, in ``y²``
        for ``square``); NaN when it could not be evaluated (a custom basis function with no
        numeric sympy form: then the number of terms alone decides).
      digits: the significant digits of the rounding (numbers may have fewer).
      reason: why no law was found; empty when ``found``.
    """

    expr: object
    found: bool
    n_terms: int
    error: float
    digits: int
    reason: str


def _snap(v: float, tol: float = 1e-3, max_den: int = 6):
    """``v`` as a fraction ``n/d`` (``d <= max_den``) when within ``tol``, else None."""
    import fractions

    f = fractions.Fraction(v).limit_denominator(max_den)
    return f if abs(float(f) - v) <= tol * max(1.0, abs(v)) else None


def _check_law_args(digits, tol, max_terms) -> None:
    _formula.check_digits(digits)
    _formula.check_tol(tol)
    if max_terms is not None and (isinstance(max_terms, bool) or not isinstance(
            max_terms, (int, np.integer)) or max_terms < 1):
        raise ValueError(f"max_terms must be an int >= 1 or None (no limit); got {max_terms!r}.")


def count_terms(expr) -> int:
    """The additive terms of a sympy expression: the summands of every sum in it, inside
    functions and products too, at least 1 (``x1*x2``: 1, ``sqrt(x1**2 + x2**2)``: 2,
    ``(a + b)*(c + d)``: 4).

    Args:
      expr: a sympy expression.
    """
    import sympy as sp

    return max(1, sum(len(e.args) for e in sp.preorder_traversal(expr) if e.is_Add))


class _Rounding:
    """Builds the printed law from the kept terms of the expansion in the fitted space
    (``y``, ``log y`` or ``y²``), every number rounded: to ``d`` significant digits, or to
    ``digits[key]`` for the numbers listed there; integers print as integers, exponents
    within ``1e-3`` of a fraction with denominator ``<= 6`` as that fraction."""

    def __init__(self, sp, kind: str, terms):
        self.sp, self.kind, self.terms = sp, kind, list(terms)
        self.keys: list = []  # the numbers met, in a fixed order (the per-number pass)

    def num(self, v: float, key, d: int, digits: dict):
        sp = self.sp
        if key not in self.keys:
            self.keys.append(key)
        k = digits.get(key, d)
        r = float(f"{v:.{k}g}") if v != 0 and math.isfinite(v) else v
        if r == round(r) and abs(r) < 1e15:
            return sp.Integer(int(round(r)))
        dps = next(j for j in range(1, k + 1) if float(f"{r:.{j}g}") == r)
        return sp.Float(r, dps)

    def exponent(self, v: float, key, d: int, digits: dict):
        f = _snap(v)
        if f is not None:
            return self.sp.Rational(f.numerator, f.denominator)
        return self.num(v, key, d, digits)

    def rounded(self, expr, d: int, digits: dict):
        sp = self.sp
        expr = expr.replace(
            lambda e: e.is_Pow and e.exp.is_Float,
            lambda e: e.base ** self.exponent(float(e.exp), ("exp", float(e.exp)), d, digits))
        floats = sorted(expr.atoms(sp.Float), key=lambda f: (abs(float(f)), float(f)))
        return expr.xreplace({f: self.num(float(f), float(f), d, digits) for f in floats})

    def build(self, d: int, digits: dict):
        """``(law, the same in the fitted space)``: sympy expressions."""
        sp = self.sp
        if self.kind != "log":
            inner = self.rounded(sp.Add(*self.terms), d, digits)
            return (sp.sqrt(inner) if self.kind == "square" else inner), inner
        # y = exp(sum): constants merge into one factor, c*log(x) terms become powers.
        const = sum(float(t) for t in self.terms if t.is_number)
        factor = self.num(math.exp(const), "factor", d, digits)
        powers, logs, other = sp.Integer(1), sp.Integer(0), sp.Integer(0)
        for t in self.terms:
            if t.is_number:
                continue
            c, rest = t.as_independent(sp.log)
            if isinstance(rest, sp.log) and c.is_number:
                e = self.exponent(float(c), ("log", str(rest)), d, digits)
                powers *= rest.args[0] ** e
                logs += e * rest
            else:
                other += t
        other = self.rounded(other, d, digits)
        return factor * powers * sp.exp(other), sp.log(factor) + logs + other


class _Grid:
    """The model's covariates at :data:`N_LAW_CHECK` points drawn uniformly in the training
    box (seeded), and sympy expressions evaluated there in float64 (numpy, each distinct
    subexpression once per call; nodes it does not know go through ``sympy.lambdify``)."""

    def __init__(self, sp, model, n_check: int = N_LAW_CHECK):
        self.sp = sp
        x_min = np.asarray(model.x_min, np.float64).reshape(-1)
        x_scale = np.asarray(model.x_scale, np.float64).reshape(-1)
        rng = np.random.default_rng(0)
        x = x_min + rng.uniform(size=(n_check, x_min.shape[0])) / x_scale
        self.n = n_check
        self.cols = {str(name): x[:, j] for j, name in enumerate(model.feature_names)}
        self.funcs = {sp.sin: np.sin, sp.cos: np.cos, sp.tan: np.tan, sp.exp: np.exp,
                      sp.log: np.log, sp.Abs: np.abs, sp.tanh: np.tanh, sp.sinh: np.sinh,
                      sp.cosh: np.cosh, sp.atan: np.arctan}

    def _eval(self, e, cache):
        v = cache.get(e)
        if v is not None:
            return v
        sp = self.sp
        if e.is_Symbol:
            v = self.cols[e.name]
        elif e.is_number and not e.has(sp.I):
            v = float(e)
        elif e.is_Add:
            v = sum(self._eval(a, cache) for a in e.args)
        elif e.is_Mul:
            v = 1.0
            for a in e.args:
                v = v * self._eval(a, cache)
        elif e.is_Pow:
            v = np.power(self._eval(e.base, cache), self._eval(e.exp, cache))
        elif e.func in self.funcs:
            v = self.funcs[e.func](self._eval(e.args[0], cache))
        elif e.func in (sp.Max, sp.Min):
            op = np.maximum if e.func is sp.Max else np.minimum
            v = self._eval(e.args[0], cache)
            for a in e.args[1:]:
                v = op(v, self._eval(a, cache))
        else:
            syms = sorted(e.free_symbols, key=lambda s: s.name)
            v = sp.lambdify(syms, e, "numpy", dummify=True)(*[self.cols[s.name] for s in syms])
        cache[e] = v
        return v

    def __call__(self, *exprs) -> list:
        """Each expression's values ``(n_check,)`` float64."""
        cache: dict = {}
        with np.errstate(all="ignore"):
            return [np.broadcast_to(np.asarray(self._eval(e, cache), np.float64), (self.n,))
                    for e in exprs]


def _fitted_space(model, sp):
    """``(kind, expansion)``: the model's exact expression in the space its tree was fitted in
    (``y``, ``log y`` or ``y²``), expanded."""
    import dataclasses

    from jaxtree import export as export_

    kind = getattr(model, "target_transform", "identity") or "identity"
    if kind in ("log", "square"):
        inner = export_.to_sympy(dataclasses.replace(model, target_transform="identity",
                                                     smearing=None))
        g = sp.expand(inner)
        if kind == "log":  # y = s * exp(u): log y = log s + u
            g = g + sp.Float(math.log(float(np.asarray(model.smearing))))
        return kind, g
    return "identity", sp.expand(export_.to_sympy(model))


def find_law(model, digits: Optional[int] = None, *, tol: float = LAW_TOL,
             max_terms: Optional[int] = MAX_LAW_TERMS,
             held_out_mse: Optional[float] = None) -> Law:
    """Looks for a compact law in a fitted model: the expression :func:`law` returns, and
    whether it is one.

    The model's exact expression (:func:`jaxtree.export.to_sympy`) is expanded in the space
    the tree was fitted in (``y``; ``log y`` for a ``log`` target, where constants merge into
    one factor and ``c*log(x)`` terms become powers ``x**c``; ``y²`` for ``square``, whose law
    is the ``sqrt`` of the sum). Then, as :meth:`TreeModel.formula
    <jaxtree.model.TreeModel.formula>` rounds: at :data:`N_LAW_CHECK` points drawn in the
    training box, the smallest terms whose largest values sum to at most ``tol/4`` of the
    target's half-range are dropped (``- 2.708e-7``, ``6.3e-8*x1``), every number is rounded
    to the fewest significant digits (the same for all, then fewer number by number) that
    keep the law within ``tol/2`` of the half-range of the model at those points (the other
    half a margin for the points between), integers print as integers (``1.0*x1`` is ``x1``)
    and exponents within ``1e-3`` of a fraction with denominator ``<= 6`` as that fraction
    (``x**2.0003`` is ``x**2``).

    It is a **law** when it has at most ``max_terms`` additive terms (:func:`count_terms`) and
    holds to that tolerance; otherwise ``reason`` says which failed, with the numbers (and
    the fit's held-out error when given). A model with shape terms (curves on knots) has no
    law.

    Args:
      model: a fitted :class:`jaxtree.model.TreeModel` (``est.model_``).
      digits: a fixed number of significant digits instead of the fewest ``tol`` allows.
      tol: float ``> 0``: how far the law may be from the model, a share of the target's
        half-range (of ``log y`` or ``y²`` for those targets) over the training box.
      max_terms: the most additive terms a law may have (:data:`MAX_LAW_TERMS`); None: any.
      held_out_mse: the fit's held-out MSE (``y``'s units), quoted in ``reason``.

    Returns:
      :class:`Law`.

    Raises:
      ValueError: for a ``digits``, ``tol`` or ``max_terms`` out of range.
      ImportError: if sympy is not installed (``pip install jaxtree[export]``).
    """
    from jaxtree import export as export_

    sp = export_.require("sympy", "law")
    _check_law_args(digits, tol, max_terms)
    held = "" if held_out_mse is None else (
        f"; the fit's held-out MSE is {float(held_out_mse):.3g} (y's units)")
    shapes = getattr(model, "shapes", None)
    n_shapes = 0 if shapes is None else int(shapes.n_terms)
    if n_shapes:
        return Law(None, False, 0, math.nan, 0,
                   f"no compact law found: the model has {n_shapes} shape term(s), curves on "
                   f"knots that no compact expression holds{held}. est.formula() prints the "
                   "fitted model.")
    kind, g = _fitted_space(model, sp)
    terms = list(sp.Add.make_args(g))
    grid = _Grid(sp, model)
    try:
        values = grid(g, *terms)
    except Exception as e:  # e.g. a custom basis function with no numeric form: unchecked
        expr = _Rounding(sp, kind, terms).build(digits or 4, {})[0]
        n = count_terms(expr)
        if max_terms is None or n <= max_terms:
            return Law(expr, True, n, math.nan, digits or 4, "")
        return Law(expr, False, n, math.nan, digits or 4,
                   f"no compact law found: the simplified expression has {n} terms (a law has "
                   f"at most {max_terms}, max_terms){held} (not checked against the model, "
                   f"which could not be evaluated numerically: {e}).")
    ref, parts = values[0], [float(np.max(np.abs(v))) for v in values[1:]]
    half = 0.5 * float(np.max(ref) - np.min(ref))
    if not half > 0:
        half = max(float(np.max(np.abs(ref))), 1.0)
    budget = 0.5 * float(tol) * half

    # Drop the smallest terms while their largest values sum to at most half the budget.
    order = sorted(range(len(terms)), key=lambda i: (parts[i], str(terms[i])))
    dropped, spent = set(), 0.0
    for i in order:
        if not math.isfinite(parts[i]) or spent + parts[i] > 0.5 * budget:
            break
        spent += parts[i]
        dropped.add(i)
    if len(dropped) == len(terms):  # keep the largest: a model is never printed as 0
        dropped.discard(order[-1])
    rounding = _Rounding(sp, kind, [t for i, t in enumerate(terms) if i not in dropped])

    def err(d, per_number):
        e = float(np.max(np.abs(grid(rounding.build(d, per_number)[1])[0] - ref)))
        return e if math.isfinite(e) else math.inf

    # A long expansion is no law at any rounding: it is rounded once, to `digits` or 4
    # (rebuilding a large expression per trial costs seconds in sympy).
    d = 4 if digits is None else int(digits)
    expr = rounding.build(d, {})[0]
    n = count_terms(expr)
    compact = max_terms is None or n <= max_terms
    per_number: dict = {}
    if compact and digits is None:
        # the fewest digits for all numbers, then (up to _FINE_TERMS terms) fewer number by
        # number, within the budget
        d = next((d for d in range(1, 18) if err(d, {}) <= budget), 17)
        for key in list(rounding.keys) if n <= _FINE_TERMS else ():
            for k in range(1, d):
                if err(d, {**per_number, key: k}) <= budget:
                    per_number[key] = k
                    break
        expr = rounding.build(d, per_number)[0]
        n = count_terms(expr)
        compact = max_terms is None or n <= max_terms
    error = err(d, per_number)
    reasons = []
    if not compact:
        reasons.append(f"the simplified expression has {n} terms (a law has at most "
                       f"{max_terms}, max_terms): it is an expansion that approximates the fit, "
                       "not a law")
    elif not error <= budget:
        reasons.append(f"rounded to {d} digits it differs from the fitted model by "
                       f"{error / half:.2g} of the target's half-range (tol={tol:g})")
    reason = ""
    if reasons:
        reason = ("no compact law found: " + "; ".join(reasons) + held + ". est.formula() "
                  "prints the fitted model; jaxtree.simplify.find_law(est.model_).expr is the "
                  "expansion.")
    return Law(expr, not reasons, n, error / half, d, reason)


def law(model, digits: Optional[int] = None, *, tol: float = LAW_TOL,
        max_terms: Optional[int] = MAX_LAW_TERMS, held_out_mse: Optional[float] = None,
        stacklevel: int = 2):
    """The fitted model's law as a readable sympy expression in original units, or None with a
    :class:`NoLawWarning` that says why no compact law was found.

    The law is the model's expression expanded, its negligible terms dropped and its numbers
    rounded within ``tol`` of the model (see :func:`find_law`, which also returns the
    expansion and the numbers when there is no law). It is returned only when it has at most
    ``max_terms`` additive terms (:data:`MAX_LAW_TERMS` = 6) and holds to ``tol``; a long
    expansion that approximates the fit (R² 0.9999 from 40 terms) is not a law, and the
    warning gives its number of terms and, from the estimator, the fit's held-out error.
    Decision: None and a warning rather than an exception, since finding no law is an
    ordinary outcome of a fit, and rather than a result object, so that a law stays a sympy
    expression (``str(law)``, ``sympy.simplify(law / ...)``).

    Args:
      model: a fitted :class:`jaxtree.model.TreeModel` (``est.model_``).
      digits: a fixed number of significant digits instead of the fewest ``tol`` allows.
      tol: float ``> 0``: how far the law may be from the model, a share of the target's
        half-range over the training box (:data:`LAW_TOL`, as ``formula()``'s ``tol``).
      max_terms: the most additive terms a law may have; None: any (the check of ``tol``
        stays).
      held_out_mse: the fit's held-out MSE, quoted in the warning.
      stacklevel: of the warning (2: the caller of this function).

    Returns:
      A sympy expression, or None when no compact law was found.

    Raises:
      ValueError: for a ``digits``, ``tol`` or ``max_terms`` out of range.
      ImportError: if sympy is not installed (``pip install jaxtree[export]``).

    """
    import warnings

    found = find_law(model, digits, tol=tol, max_terms=max_terms, held_out_mse=held_out_mse)
    if found.found:
        return found.expr
    warnings.warn(found.reason, NoLawWarning, stacklevel=stacklevel)
    return None
