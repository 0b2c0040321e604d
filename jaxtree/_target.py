r"""Target transforms: fit ``log y`` (or ``y²``), predict in ``y``'s units.

With ``target_transform="log"`` the search fits ``f(x) ~ log y`` (products and powers of the
covariates become sums, which the tree holds with small weights). Predictions are mapped back
with Duan's (1983) *smearing* estimate of the back-transform's bias:

.. math::

    \hat y(x) = e^{f(x)} \cdot \hat s, \qquad
    \hat s = \frac{\sum_i v_i e^{\log y_i - f(x_i)}}{\sum_i v_i},

(``v`` the sample weights). ``exp(f)`` alone estimates the conditional *median* (the geometric
mean) of ``y``; if ``log y = f(x) + e`` with ``e`` independent of ``x``, ``E[y | x] =
e^{f(x)} E[e^{e}]``, and ``\hat s`` estimates ``E[e^e]`` from the training residuals without
assuming their distribution. On noise-free data ``\hat s = 1`` to rounding.

With ``target_transform="square"`` the search fits ``f(x) ~ y²`` for a non-negative target
(a Box-Cox power of 2: ``sqrt(x1² + x2²)`` becomes the sum ``x1² + x2²``) and predicts
``sqrt(max(f(x), 0))``. No bias correction is applied (decision): ``sqrt(f)`` estimates
``sqrt(E[y² | x]) = sqrt(E[y | x]² + Var(y | x))``, above ``E[y | x]`` by about
``Var(y | x) / (2 E[y | x])``, a relative bias of half the squared coefficient of variation
(``5·10⁻⁵`` at 1% noise): below the noise by orders of magnitude where the law is worth
printing, and a correction would need the residuals' distribution, not one factor. Its
``smearing`` is stored as 1.

The transform and ``\hat s`` belong to the fitted model (:class:`jaxtree.model.TreeModel`
fields ``target_transform`` and ``smearing``), are written in its file and applied by
``predict`` and every export. This module is the one owner of that arithmetic.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

TRANSFORMS = ("identity", "log", "square")
"""Transforms a model can carry; the estimator also accepts ``None`` (identity) and ``"auto"``."""

Y_CLIP_MARGIN = 0.1
"""A regressor's ``predict`` (``clip=True``) keeps its prediction, in the fitted space
(``y``, ``log y`` or ``y²``), within the training targets' range widened by this fraction
of the half-range on each side (:func:`jaxtree.model.predict`; ``TreeModel.clip_y``)."""


def forward(y: np.ndarray, name: str, sw: Optional[np.ndarray] = None) -> np.ndarray:
    """``y`` in the space the search fits (``log y`` for ``"log"``, ``y²`` for ``"square"``),
    float64.

    Raises:
      ValueError: for ``"log"`` when a target with positive weight is ``<= 0``; for
        ``"square"`` when one is negative.
    """
    y = np.asarray(y, np.float64)
    if name == "identity":
        return y
    keep = np.ones(y.shape, bool) if sw is None else np.asarray(sw) > 0
    if name == "square":
        bad = keep & ~(y >= 0)
        if bad.any():
            raise ValueError(
                f"target_transform='square' needs every target y >= 0 (predictions are "
                f"sqrt(f)); got {int(bad.sum())} negative value(s) (smallest "
                f"{float(y[keep].min())!r}). Use target_transform=None ('auto' falls back to "
                "the identity for such y).")
        return np.where(keep, y, 0.0) ** 2
    bad = keep & ~(y > 0)
    if bad.any():
        raise ValueError(
            f"target_transform='log' needs every target y > 0; got {int(bad.sum())} value(s) "
            f"<= 0 (smallest {float(y[keep].min())!r}). Shift or rescale y to be positive, or "
            "use target_transform=None ('auto' falls back to the identity for such y).")
    return np.log(np.where(keep, y, 1.0))


def smearing(y_log: np.ndarray, f: np.ndarray, sw: Optional[np.ndarray] = None) -> float:
    """Duan's smearing factor ``sum v e^(log y - f) / sum v`` (see the module docstring)."""
    r = np.asarray(y_log, np.float64) - np.asarray(f, np.float64)
    w = np.ones_like(r) if sw is None else np.asarray(sw, np.float64)
    return float(np.sum(w * np.exp(r)) / np.sum(w))


class Target(NamedTuple):
    """A model's transform: maps the tree's output ``u`` (in ``log y``, ``y²`` or ``y``) to ``y``."""

    name: str
    smearing: float

    def to_numeric(self, u, xp):
        """``u``, ``exp(u) * s`` or ``sqrt(max(u, 0))`` with ``xp`` = numpy or jax.numpy."""
        if self.name == "square":
            return xp.sqrt(xp.maximum(u, 0))
        return u if self.name == "identity" else xp.exp(u) * self.smearing

    def to_sympy(self, u, sp):
        """The sympy form of :meth:`to_numeric`."""
        if self.name == "square":
            return sp.sqrt(sp.Max(u, 0))
        return u if self.name == "identity" else sp.Float(self.smearing) * sp.exp(u)

    def to_text(self, inner: str, digits: int, lhs: str = "y") -> str:
        """``y = inner``, ``y = s·exp(inner)`` or ``y = √(inner)`` (``inner`` the right-hand
        side, ``lhs`` the left: the target's name, :func:`display_name`)."""
        if self.name == "identity":
            return f"{lhs} = {inner}"
        if self.name == "square":
            return f"{lhs} = √({inner})"
        return f"{lhs} = {self.smearing:.{digits}g}·exp({inner})"

    def to_latex(self, inner: str, smearing: str, lhs: str = "y") -> str:
        """LaTeX counterpart of :meth:`to_text` (``lhs`` already LaTeX; ``smearing``, the
        factor as the LaTeX writer formats its numbers: :func:`jaxtree.basis.latex_number`,
        so that this module of target arithmetic depends on no renderer)."""
        if self.name == "identity":
            return f"{lhs} = {inner}"
        if self.name == "square":
            return f"{lhs} = \\sqrt{{{inner}}}"
        return f"{lhs} = {smearing}\\,\\exp\\left({inner}\\right)"


def clip_bound(model) -> Optional[float]:
    """The bound of a regressor's predictions in the scaled fitted space, ``|w0 + T| <=
    bound`` (:data:`Y_CLIP_MARGIN` beyond the training targets' ``[-y_bound, y_bound]``), or
    None for a model that is not clipped (``clip_y`` False: a classifier's, a file saved
    before). :func:`jaxtree.model.predict` and the exports clip with it."""
    if not getattr(model, "clip_y", False):
        return None
    return (1.0 + Y_CLIP_MARGIN) * model.y_bound


def of(model) -> Target:
    """The :class:`Target` of a fitted model (identity for models without a transform)."""
    name = getattr(model, "target_transform", "identity")
    s = getattr(model, "smearing", None)
    return Target(name, 1.0 if s is None else float(np.asarray(s)))


DEFAULT_NAME = "y"
"""The target's name in formulas when it has none of its own."""


def name_of(y) -> Optional[str]:
    """The target's own name: ``y.name`` when it is a non-empty string (a pandas or polars
    Series), else None (a numpy array, an unnamed Series)."""
    name = getattr(y, "name", None)
    return name.strip() if isinstance(name, str) and name.strip() else None


def display_name(proposed: Optional[str], covariates) -> str:
    """The name the formulas give the target: ``proposed`` (a Series name, the CLI's
    ``--target``), else :data:`DEFAULT_NAME` (``"y"``), with ``_`` appended while it equals
    the name of a covariate (a raw column or an encoded one), so that ``y = ... + f(x, y)``
    never reads as if the target were a covariate: the diamonds table, whose covariates
    include ``y``, gets ``y_ = ...``.

    Args:
      proposed: the target's own name, or None.
      covariates: the names of the model's columns (raw and encoded).
    """
    name = proposed.strip() if isinstance(proposed, str) and proposed.strip() else DEFAULT_NAME
    taken = {str(c) for c in covariates}
    while name in taken:
        name += "_"
    return name
