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

:func:`law` writes a fitted model as a sympy expression in original units with constants merged
(expanded, products of powers collected, ``exp(a log x)`` turned into ``x**a`` for a ``log``
target), numbers rounded to ``digits`` significant digits and exponents within ``1e-3`` of a
simple fraction written as that fraction. It is for reading: the unrounded expression is
:func:`jaxtree.export.to_sympy`, which equals ``predict``.
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from jaxtree import moves, refine as refine_, scoring
from jaxtree import program as prog

__all__ = ["check_prune_args", "law", "prune", "prune_with", "PruneResult"]


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
    """The arguments every pruning checks (:func:`prune`, :func:`jaxtree.stream.prune`)."""
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
    target. The streamed pruning (:func:`jaxtree.stream.prune`) runs the same loop."""
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


def _snap(v: float, tol: float = 1e-3, max_den: int = 6):
    """``v`` as a fraction ``n/d`` (``d <= max_den``) when within ``tol``, else None."""
    import fractions

    f = fractions.Fraction(v).limit_denominator(max_den)
    return f if abs(float(f) - v) <= tol * max(1.0, abs(v)) else None


def law(model, digits: int = 4):
    """The fitted formula as a readable sympy expression in original units.

    Constants are merged (the expression is expanded; for a ``log`` target the exponent is
    expanded and ``exp(a log x + b)`` becomes ``e^b x**a``; for a ``square`` target the law is
    ``sqrt`` of the expanded sum, which ``predict`` clips at 0), numbers are rounded to ``digits``
    significant digits and exponents within ``1e-3`` of a fraction with denominator ``<= 6``
    are written as that fraction (``x**2.0003`` becomes ``x**2``). For reading only: use
    :func:`jaxtree.export.to_sympy` for the exact expression.

    Args:
      model: a fitted :class:`jaxtree.model.TreeModel` (``est.model_``).
      digits: significant digits of the printed numbers.

    Returns:
      A sympy expression.

    Raises:
      ImportError: if sympy is not installed (``pip install jaxtree[export]``).
    """
    from jaxtree import export as export_

    sp = export_.require("sympy", "law")
    if getattr(model, "target_transform", "identity") == "log":
        import dataclasses

        # y = s * exp(u): expand u and pull its logarithms out as powers.
        s = sp.Float(float(model.smearing))
        u = export_.to_sympy(dataclasses.replace(model, target_transform="identity",
                                                 smearing=None))
        powers, const, other = sp.Integer(1), sp.Integer(0), sp.Integer(0)
        for t in sp.Add.make_args(sp.expand(u)):
            c, logs = t.as_independent(sp.log)
            if isinstance(logs, sp.log) and c.is_number:
                powers *= logs.args[0] ** c
            elif t.is_number:
                const += t
            else:
                other += t
        expr = s * sp.exp(const) * powers * sp.exp(other)
    elif getattr(model, "target_transform", "identity") == "square":
        import dataclasses

        # y = sqrt(u), u fitted to y² (the law's form; predict clips u at 0).
        u = export_.to_sympy(dataclasses.replace(model, target_transform="identity",
                                                 smearing=None))
        expr = sp.sqrt(sp.expand(u))
    else:
        expr = sp.expand(export_.to_sympy(model))

    def snap_pow(e):
        if e.is_Pow and e.exp.is_Float:
            f = _snap(float(e.exp))
            if f is not None:
                return e.base ** sp.Rational(f.numerator, f.denominator)
        return e

    expr = expr.replace(lambda e: e.is_Pow and e.exp.is_Float, snap_pow)
    floats = {f: sp.Float(f, digits) for f in expr.atoms(sp.Float)}
    return expr.xreplace(floats)
