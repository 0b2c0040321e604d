"""Losses of the search: squared error (regression) and two classification losses.

The paper (Section 3) has one model for two problems: regression, ``t(z) = z`` with the
squared loss, and classification, ``t(z) = sign(z)`` with labels ``y in {-1, +1}`` and the
loss ``d(y, f) = min(1, max(0, 1 - y f))`` (the ramp, Theorem 1's setting). Here the
classification data hold ``y = +-1`` and the tree's value ``f = w0 + T(x)`` is a logit
(a margin).

Newton-step scoring (DESIGN.md section 9). Every candidate insertion changes ``f`` by a
term that is linear in ``(w0' - w0, w')``. With the per-row gradient ``g_i`` and curvature
``h_i`` of the loss at the current ``f``, the second-order model of the new loss is
``L(f) + sum w_i (g_i D_i + h_i D_i^2 / 2) = const + 1/2 sum w_i h_i (z_i - f'_i)^2`` with
``D = f' - f`` and the working response ``z = f - g/h``. So one Newton step of every
candidate (a clipped weight, a free intercept) is the existing least-squares scorer run on
``Data(x, z, w*h)``: the same three matrix products, the same clipped closed form, the
same ``+``/``*`` targets built from ``z`` as from ``y`` (:func:`working_data`). The
scorer's "SSE" of a candidate is then ``2 (Q - L(f)) + sum w g^2/h``: the candidates are
ranked by their Newton-model loss ``Q``.

Losses (``loss=`` of :class:`jaxtree.search.Config`):

* ``"squared"``: regression; the search reads ``y`` directly (no working data).
* ``"logistic"``: ``log(1 + exp(-y f))``; ``g = -y sigmoid(-y f)``,
  ``h = sigmoid(f) sigmoid(-f)``. Decision: ``h`` is floored at :data:`H_MIN` (the weights
  are ``w*max(h, H_MIN)`` and the working response ``-g/max(h, H_MIN)``, so the gradient
  ``sum w g s`` is kept exactly and only the curvature of rows the tree already classifies
  with ``|f| > ~9`` is raised). Without the floor a confidently wrong row has ``h -> 0`` and
  a working response ``~ e^|f|`` that swamps float32 sums (and is ``inf/0`` past
  ``|f| ~ 88``). Refinement minimises the true logistic loss.
* ``"margin"``: the paper's ramp ``min(1, max(0, 1 - y f))`` is reported (history, the
  estimator's losses). It is flat (zero gradient, zero curvature) outside ``[0, 2]`` of
  ``1 - y f`` and non-convex, so neither a Newton step nor L-BFGS can search it directly.
  Decision: the search optimises the smooth convex surrogate
  ``max(0, 1 - y f)^2 / 2`` (the squared hinge, equal to the ramp's linear part to second
  order at the margin and an upper bound of the ramp's zero set): its Newton step is exact
  (the loss is piecewise quadratic): weight ``w`` on the rows with ``y f < 1`` and 0 on the
  others, working response ``z = y``. So scoring is least squares on the labels over the
  rows inside the margin (the L2-SVM's active set), and refinement minimises the squared
  hinge with the same projected L-BFGS.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxtree import program as prog
from jaxtree import scoring

__all__ = [
    "CLASSIFICATION_LOSSES",
    "grad_hess",
    "H_MIN",
    "LOSSES",
    "mean_loss",
    "newton_rows",
    "pointwise",
    "reported",
    "working_data",
]


LOSSES = ("squared", "logistic", "margin")
"""Every loss a search can minimise (:class:`jaxtree.search.Config` ``loss``)."""

CLASSIFICATION_LOSSES = ("logistic", "margin")
"""The classification losses (labels ``y = +-1``, ``f`` a logit or margin)."""

H_MIN = 1e-4
"""Floor of the logistic curvature in the Newton step (see the module docstring)."""


def _check(loss: str) -> None:
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {list(LOSSES)}; got {loss!r}.")


def pointwise(loss: str, y, f):
    """The loss the search minimises, per row: ``(y - f)^2``, ``log(1 + e^{-y f})`` or
    ``max(0, 1 - y f)^2 / 2`` (the margin loss's surrogate). Same shape as ``y``."""
    _check(loss)
    if loss == "squared":
        return (y - f) ** 2
    if loss == "logistic":
        return jax.nn.softplus(-y * f)
    return 0.5 * jnp.maximum(0, 1 - y * f) ** 2


def reported(loss: str, y, f):
    """The loss reported to users, per row: as :func:`pointwise`, except the paper's ramp
    ``min(1, max(0, 1 - y f))`` for ``"margin"``."""
    if loss == "margin":
        return jnp.clip(1 - y * f, 0, 1)
    return pointwise(loss, y, f)


def grad_hess(loss: str, y, f):
    """``(g, h)``: first and second derivatives of :func:`pointwise` with respect to ``f``
    (``h`` of ``"logistic"`` not yet floored).

    Args:
      loss: the loss's name, one of :data:`LOSSES`.
      y: float targets: labels ``+-1`` for a classification loss.
      f: float model values ``w0 + T(x)``, the shape of ``y``.
    """
    _check(loss)
    if loss == "squared":
        return -2 * (y - f), 2 * jnp.ones_like(f)
    if loss == "logistic":
        return -y * jax.nn.sigmoid(-y * f), jax.nn.sigmoid(f) * jax.nn.sigmoid(-f)
    active = (y * f < 1).astype(f.dtype)
    return -y * jnp.maximum(0, 1 - y * f), active


def newton_rows(loss: str, y, f):
    """``(z, h)``: working response and Newton weight per row for a classification loss
    (``z = f - g/h`` with the floored ``h``; ``z = f`` where ``h = 0``).

    Args:
      loss: the loss's name, one of :data:`LOSSES`.
      y: float targets: labels ``+-1`` for a classification loss.
      f: float model values ``w0 + T(x)``, the shape of ``y``.
    """
    g, h = grad_hess(loss, y, f)
    if loss == "logistic":
        h = jnp.maximum(h, H_MIN)
    z = f - scoring.safe_div(g, h)
    return z, h


def working_data(program: prog.Program, data: scoring.Data, basis, loss: str) -> scoring.Data:
    """The data whose least-squares scores are the Newton-step scores of ``program`` under
    ``loss``: ``Data(x, z, w*h, phi)`` (see the module docstring). Pure and traceable; one
    pass of tree evaluation over the chunks.

    Args:
      program: the current tree (its value plus intercept is ``f``); data: chunked data
        with ``y = +-1`` (and an optional per-row ``offset``: the Newton step is taken at
        ``offset + f`` and its working response returned in the tree's units, ``z - offset``,
        with no offset); basis: the basis; loss: ``"logistic"`` or ``"margin"``.
    """
    if loss not in CLASSIFICATION_LOSSES:
        raise ValueError(f"working_data needs a classification loss {list(CLASSIFICATION_LOSSES)}; "
                         f"got {loss!r}.")

    def one(xb, yb, wb, ob=None):
        f = prog.evaluate(program, xb, basis)  # w0 + T(x)
        if ob is None:
            z, h = newton_rows(loss, yb, f)
        else:  # the Newton step of the whole logit, its response in the tree's units
            z, h = newton_rows(loss, yb, f + ob)
            z = z - ob
        return z.astype(yb.dtype), (wb * h).astype(wb.dtype)

    z, w = jax.lax.map(lambda ch: one(*ch), _row_arrays(data))
    # a least-squares problem of the tree's own value: the offset is in z
    return data._replace(y=z, w=w, offset=None)


def _row_arrays(data: scoring.Data) -> tuple:
    """``(x, y, w)``, and ``offset`` where ``data`` holds one (without one the programs
    are those of a fit with no offset)."""
    base = (data.x, data.y, data.w)
    return base if data.offset is None else base + (data.offset,)


def mean_loss(program: prog.Program, data: scoring.Data, basis, loss: str, *,
              report: bool = False) -> jax.Array:
    """Weighted mean of :func:`pointwise` (or of :func:`reported` when ``report``) of
    ``program`` over chunked ``data`` (a classification loss at ``data.offset + f`` where
    the data hold an offset).

    Args:
      program: the tree.
      data: chunked training data (:func:`jaxtree.scoring.chunk`).
      basis: the :class:`jaxtree.basis.Basis` the program indexes.
      loss: the loss's name, one of :data:`LOSSES`.
      report: average :func:`reported` instead of :func:`pointwise`.
    """
    fn = reported if report else pointwise

    def body(acc, ch):
        xb, yb, wb = ch[:3]
        f = prog.evaluate(program, xb, basis)  # w0 + T(x)
        if len(ch) > 3 and loss != "squared":  # a classification loss reads the offset
            f = f + ch[3]
        return (acc[0] + jnp.sum(wb * fn(loss, yb, f)), acc[1] + jnp.sum(wb)), None

    z = jnp.zeros((), data.x.dtype)
    # a plain scan (not scoring.scan_live): a public function, reverse differentiable
    (tot, n), _ = jax.lax.scan(body, (z, z), _row_arrays(data))
    return scoring.safe_div(tot, n)
