"""The fitted model as a pytree, its pure predict function, and versioned JSON files.

A :class:`TreeModel` holds the program and the scaling that maps user units to the
space the search works in: each covariate ``x_j`` is mapped to ``[0, 1]`` with its range
(the training minimum and maximum, cut short of a far tail, :func:`jaxtree._scaling.far_tails`,
and widened to round bounds by at most 1% of the span where the basis acts on the scaled
covariate: :func:`jaxtree._scaling.round_bounds`), and ``y``
to ``[-1, 1]`` with the training midpoint and half-range (the paper assumes
``Y = [-1, 1]`` and ``|phi| <= 1`` on ``[0, 1]``).
Predictions are mapped back: ``yhat = y_center + y_scale * (w0 + T(x_scaled))``.

Arrays are pytree leaves; the basis and feature names are static metadata, so a model
can be passed through ``jax.jit``, ``jax.grad`` (with respect to inputs or weights)
and ``jax.vmap``.

Files (decision: JSON, never pickle, so loading never executes code) carry
``format = "jaxtree-model"``, ``version`` and a ``checksum`` (SHA-256 of the canonical
JSON of everything else); floats are written with ``repr`` so a save/load round trip is
exact. Loading is all or nothing: a file of another version, a truncated, corrupted or
foreign file raises ``ValueError``; every field is type- and range-checked and the
program must be a well-formed tree, so a damaged file never gives a silently wrong
model. A file without a ``checksum`` (e.g. written by hand) is accepted when it passes
those checks; one with a checksum must match it exactly. The checks of the entries are
:mod:`jaxtree._model_checks`; this module reads a file's top level with them.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import weakref
from typing import Any, Mapping, Optional

import jax
import jax.numpy as jnp
import numpy as np

from jaxtree import _executables
from jaxtree import _model_checks as checks
from jaxtree import _target
from jaxtree import basis as basis_
from jaxtree import program as prog
from jaxtree import shapes as shapes_
from jaxtree._inputs import validation as V

__all__ = [
    "checksum",
    "custom_function_names",
    "FORMAT",
    "from_dict",
    "load_dict",
    "MAX_FAMILY_SIZE",
    "MAX_SLOTS",
    "MISSING_RULES",
    "once_per_model",
    "predict",
    "predict_checked",
    "program_to_dict",
    "read_extra",
    "read_task",
    "save",
    "scale_x",
    "shapes_to_dict",
    "slotted",
    "to_dict",
    "TreeModel",
    "VERSION",
    "with_missing_rule",
    "with_target_transform",
]


FORMAT = "jaxtree-model"
VERSION = 1

MISSING_RULES = ("fill", "error")
"""A model's rule for missing values at predict time (:attr:`TreeModel.missing`)."""


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class TreeModel:
    """A fitted tree with its input/output scaling (a pytree).

    Attributes:
      program: the :class:`jaxtree.program.Program` in the scaled space.
      x_min: float ``(p,)`` the low end of each covariate's range: its training minimum,
        or the round number below it (:func:`jaxtree._scaling.round_bounds`), or where a far
        tail was cut (:func:`jaxtree._scaling.far_tails`).
      x_scale: float ``(p,)`` ``1 / (high - low)`` of each covariate's range (1 for
        constants); the range is the training range, cut short of a far tail (the rows
        beyond it are clipped to it, in the fit as in ``predict``) and widened to round
        bounds by at most 1% of its span where the basis acts on the scaled covariate.
      y_center: float ``()`` midpoint of the training targets.
      y_scale: float ``()`` half-range of the training targets (1 if constant).
      basis: the :class:`jaxtree.basis.Basis` (static).
      feature_names: names of the covariates (static tuple).
      target_transform: ``"identity"``, ``"log"`` or ``"square"`` (static): with ``"log"``
        the tree fits ``log y`` and predictions are ``exp(...) * smearing``; with ``"square"``
        it fits ``y²`` and predictions are ``sqrt(max(..., 0))`` (see :mod:`jaxtree._target`).
      smearing: float ``()`` Duan's smearing factor of a ``"log"`` model (1 for
        ``"square"``); None otherwise.
      shapes: the shape-function terms (:class:`jaxtree.shapes.Shapes`) added to the tree,
        or None. ``shape_spec``: their static :class:`jaxtree.shapes.ShapeSpec`.
      missing: the rule for a missing value (NaN) at predict time (static): ``"fill"``
        (default) gives it the low end of the covariate's range ``x_min`` (with a warning on
        host inputs; silently under ``jit``); ``"error"`` (a model fitted with
        ``missing="error"``) refuses it on host inputs (under ``jit`` it propagates as NaN).
        See :func:`predict`.
      y_bound: the search's scaling of ``y`` into ``[-y_bound, y_bound]`` (static), so
        ``y_scale`` is the target's half-range divided by ``y_bound``; the formula's rounding
        tolerance is a fraction of the half-range ``y_bound * y_scale``.
      clip_y: whether :func:`predict` with ``clip=True`` also keeps the prediction within
        the training targets' range widened by a tenth of its half-range on each side
        (static; a regressor's model: True, a classifier's decision function: False; a file
        saved before the twentieth session: False). See :func:`predict`.
    """

    program: prog.Program
    x_min: jax.Array
    x_scale: jax.Array
    y_center: jax.Array
    y_scale: jax.Array
    basis: basis_.Basis = dataclasses.field(metadata=dict(static=True))
    feature_names: tuple = dataclasses.field(metadata=dict(static=True))
    target_transform: str = dataclasses.field(default="identity", metadata=dict(static=True))
    smearing: Optional[jax.Array] = None
    shapes: Optional[shapes_.Shapes] = None
    shape_spec: Optional[shapes_.ShapeSpec] = dataclasses.field(default=None,
                                                                metadata=dict(static=True))
    missing: str = dataclasses.field(default="fill", metadata=dict(static=True))
    y_bound: float = dataclasses.field(default=1.0, metadata=dict(static=True))
    clip_y: bool = dataclasses.field(default=False, metadata=dict(static=True))

    @property
    def n_features(self) -> int:
        return int(self.x_min.shape[-1])

    @classmethod
    def from_scaling(cls, program, sc, dtype, basis, feature_names,
                     missing: str = "fill") -> "TreeModel":
        """A model from a search's program and the :mod:`jaxtree._scaling` record of its data
        (arrays cast to ``dtype``; with a leading batch axis when ``program`` has one).

        Args:
          program: the search's :class:`jaxtree.program.Program`.
          sc: the :class:`jaxtree._scaling.Scaling` of the training data.
          dtype: float dtype of the model's arrays.
          basis: the :class:`jaxtree.basis.Basis` the program indexes.
          feature_names: the covariates' names, one per feature.
          missing: the rule for a missing value at predict time (:data:`MISSING_RULES`).
        """
        dev = functools.partial(prog.as_device, dtype=jax.dtypes.canonicalize_dtype(dtype))
        return cls(program, dev(sc.x_min), dev(sc.x_scale), dev(sc.y_center), dev(sc.y_scale),
                   basis, tuple(feature_names), missing=missing)

    def formula(self, digits: Optional[int] = None, *, tol: float = 1e-3, scaled: bool = False,
                indicators: Optional[Mapping[int, str]] = None, lhs: str = "y") -> str:
        """The fitted formula as text, in the covariates' original units (see :mod:`jaxtree._formula`).

        Leaves are written in ``x`` itself (``(dep_time - 1730)₊³``, ``hat(age; 40 ± 8)``,
        ``sin(3π·(x1 - 0.01)/0.98)``), the weights of a product folded into one coefficient,
        equal terms merged, constants collected, and every number rounded to the fewest
        significant digits that change no prediction in the training range by more than
        ``tol`` times the target's half-range ``y_scale`` (checked at 4096 points of the
        training box with a factor 2 of margin).

        Args:
          digits: None (default): as many significant digits as ``tol`` needs; an int: that
            many (no tolerance). With ``scaled=True``: the weights' digits (default 3).
          tol: the rounding tolerance, a fraction of ``y_scale`` (default ``1e-3``).
          scaled: True gives the raw tree on the covariates min-max scaled to ``[0, 1]``
            (``c + s·[w0 + T(u)]``, one weight per leaf, nothing merged or rounded away).
          indicators: ``{covariate index: label}`` of 0/1 covariates printed as ``[label]``
            (the estimator passes its table encoding's: ``[carrier = EV]``); a label None
            marks a numeric column that took two values in training, whose leaves print as
            lines in it (``1.5·am``; :func:`jaxtree._formula.indicator_labels`).
          lhs: the left-hand side: the target's name (the estimator passes its
            ``target_name_``), or a classifier's ``logit P(y = a)``.

        Raises:
          ValueError: for a model of several trees (a leading axis: a classifier's one tree
            per class, :func:`jaxtree.fit_batch`'s stacked members), naming how to print one.
        """
        if np.ndim(self.program.op) > 1:
            n = int(np.shape(self.program.op)[0])
            raise ValueError(
                f"This model holds {n} trees (a leading axis of {n}: a classifier's one tree "
                "per class, or fit_batch's members), and a formula is one tree's. Print one "
                "with jaxtree.program.member_on_host(model, i).formula(), or call the "
                "estimator's formula() (a classifier's gives one formula per class, named).")
        c, s = float(self.y_center), float(self.y_scale)
        a = prog.to_numpy(self.program)
        target = _target.of(self)
        if not scaled:
            from jaxtree import _formula

            return _formula.text(_formula.build(self, tol=tol, digits=digits,
                                                indicators=indicators), lhs)
        digits = 3 if digits is None else digits
        if not np.any((a["op"] == prog.LEAF) & (a["weight"] != 0)):
            # Constant model (e.g. a constant y): say so instead of listing 0-weight leaves.
            return target.to_text(f"{c + s * float(a['intercept']):.{digits}g}", digits, lhs)
        inner = prog.render(self.program, self.basis, self.feature_names, digits)
        if self.shapes is not None and int(self.shapes.n_terms):
            # Shape terms are named functions (their tables: TreeRegressor.shape_terms()).
            terms = shapes_.term_names(self.shapes, self.shape_spec, self.feature_names)
            head = " + ".join(terms)
            k = float(self.shapes.intercept)
            inner = f"{head} + {inner}" if k == 0 else f"{k:.{digits}g} + {head} + {inner}"
        if c == 0.0 and s == 1.0:
            return target.to_text(inner, digits, lhs)
        return target.to_text(f"{c:.{digits}g} + {s:.{digits}g}·[{inner}]", digits, lhs)


def with_missing_rule(model: TreeModel, missing: str) -> TreeModel:
    """``model`` with its missing-value rule at predict time (:data:`MISSING_RULES`):
    ``"error"`` for an estimator fitted with ``missing="error"``."""
    if missing not in MISSING_RULES:
        raise ValueError(f"missing must be one of {list(MISSING_RULES)}; got {missing!r}.")
    return dataclasses.replace(model, missing=missing)


def with_target_transform(model: TreeModel, transform: str, x, y_fitted, sample_weight=None
                          ) -> TreeModel:
    """``model`` (fitted to ``y_fitted``, the targets in the transform's space, on the
    checked covariates ``x``) with its target transform (:mod:`jaxtree._target`): Duan's
    smearing factor for ``"log"`` from its residuals on those rows, 1 for ``"square"`` (no
    bias correction); ``"identity"`` leaves it as it is."""
    if transform == "identity":
        return model
    if transform == "square":
        s = 1.0
    else:
        f = np.asarray(predict_checked(model, x), np.float64)
        s = _target.smearing(y_fitted, f, sample_weight)
    return dataclasses.replace(model, target_transform=transform,
                               smearing=jnp.asarray(s, model.x_min.dtype))


def scale_x(model: TreeModel, x, clip: bool = True):
    """Maps covariates to the scaled space ``[0, 1]`` (clipped to it when ``clip``)."""
    xs = (x - model.x_min) * model.x_scale
    return jnp.clip(xs, 0.0, 1.0) if clip else xs


def predict(model: TreeModel, X, *, clip: bool = True) -> jax.Array:
    """Predictions of a fitted model; pure, works under ``jit``, ``vmap`` and ``grad``.

    Args:
      model: a :class:`TreeModel` (e.g. ``TreeRegressor().fit(X, y).model_``).
      X: float ``(n, p)`` covariates in user units (or ``(p,)`` for one row).
      clip: clip covariates to their range first (``x_min`` to ``x_min + 1 / x_scale``:
        the training range, rounded out as :func:`jaxtree._scaling.round_bounds` does;
        default; the basis functions
        are only bounded on ``[0, 1]``, extrapolating a cubic or a Fourier term is rarely
        wise), and for a regressor's model (``model.clip_y``) the prediction to the
        training targets' range widened by :data:`jaxtree._target.Y_CLIP_MARGIN` (a tenth)
        of its half-range on each side (in the fitted space: ``log y`` for a ``"log"``
        target transform). ``clip=False`` evaluates the formula as is.

    Decision (twentieth session): clipping each covariate does not keep a row inside the
    training data: a row whose covariates are each in range may combine them as no training
    row did (a diamond recorded with ``x = z = 0``), and there a product of leaves or a pair
    shape can take values the fit never saw (that diamond: ``log price`` predicted 7.8 above
    the truth, against at most 1.7 on any training row). So a regressor's prediction stays
    near the range of its training targets, as a tree ensemble's stays inside it by
    construction. Measured on the benchmark's regression tables (5 folds, pooled test RMSE)
    with the margin 0.1: never worse, and better where a test row left the training data
    (R's airquality 26.98 -> 23.59, ggplot2 mpg 1.857 -> 1.829, Boston 4.745 -> 4.690,
    diamonds at 40,000 training rows 0.131 -> 0.106). Without a margin the gains were a
    little larger (23.39, 1.807, 4.654), but the clip then also bound inside the training
    box where a smooth law rises beyond the sampled targets (a corner no training row
    reached; tests/test_laws.py's recovered laws lost their exact predictions there); wider
    margins (a quarter to a whole half-range) helped less (BENCHMARKS.md, "Predictions near
    the training targets' range"). The printed formula is the unclipped function;
    ``clip=False`` evaluates it.

    Missing values (NaN; the rule of the estimators' ``predict`` for a column that had none
    in training, docs/quickstart.md, "Raw tables: categories and missing values"): each takes the
    low end of its covariate's range ``model.x_min`` (the training minimum, or the round number
    below it), with one
    :class:`jaxtree._inputs.validation.MissingValueWarning` naming the columns for host inputs; JAX
    arrays are filled the same way, silently. A model fitted with ``missing="error"``
    (``model.missing``) refuses them on host inputs with a ``ValueError``. A table with
    ``"<col> missing"`` indicator covariates is encoded by the estimator's ``predict`` (which
    sets them), not by this function.

    Raises:
      ValueError / TypeError: only for concrete host inputs (numpy arrays, lists,
        pandas): wrong shape or feature count, inf, NaN for a ``missing="error"`` model,
        non-numeric data. JAX arrays and tracers are never inspected, so ``jit``, ``vmap``
        and ``grad`` are unaffected.

    Returns:
      float ``(n,)`` (or ``()``) predictions in the units of ``y``.

    Examples:
      >>> import jax, numpy as np, jaxtree
      >>> X = np.random.default_rng(0).uniform(size=(200, 2))
      >>> m = jaxtree.TreeRegressor(k=1, refine=None).fit(X, X[:, 0] ** 2).model_
      >>> yhat = jax.jit(jaxtree.predict)(m, X)
      >>> yhat.shape
      (200,)
    """
    if not isinstance(model, TreeModel):
        hint = " Pass est.model_, or call est.predict(X)." if hasattr(model, "model_") else ""
        raise TypeError(f"jaxtree.predict takes a TreeModel (an estimator's model_); got "
                        f"{type(model).__name__}.{hint}")
    if V.is_host_array(X):
        _check_covariates(model, X)
        X = V.check_X(X, n_features=model.x_min.shape[-1], allow_1d=True, allow_nan=True)
        X = V.fill_missing(X, np.asarray(model.x_min).reshape(-1, model.n_features)[0],
                           refuse=model.missing == "error", names=model.feature_names)
    return predict_checked(model, X, clip=clip)


def _check_covariates(model: TreeModel, X) -> None:
    """Refuses a host table that is not the model's covariates (non-numeric columns, or
    another number of columns), saying what :func:`predict` reads: the covariates the tree
    was fitted on, which for a table with categories or missing values are its encoded
    columns (``est.encode(X)``), not the table."""
    p = model.n_features
    dtypes = getattr(X, "dtypes", None)
    text = None if dtypes is None else [str(c) for c, d in zip(X.columns, dtypes)
                                         if getattr(d, "kind", "O") not in "biuf"]
    if text:
        problem, kind = f"column(s) {text} of X are not numbers", TypeError
    elif np.ndim(X) == 2 and np.shape(X)[1] != p:
        problem, kind = (f"X has {np.shape(X)[1]} features, but jaxtree.predict is expecting "
                         f"{p} features as input"), ValueError
    else:
        return
    names = ", ".join(model.feature_names[:6]) + (", ..." if p > 6 else "")
    raise kind(f"{problem}: the {p} covariates the model's tree reads, as numbers "
               f"({names}). A model fitted on a table with categories or missing values "
               "reads them encoded: pass est.encode(X), the estimator's encoding of the "
               "table, or call est.predict(X).")


def predict_checked(model: TreeModel, x, *, clip: bool = True, terms=None) -> jax.Array:
    """:func:`predict` of covariates already checked, with no host checks: the estimators'
    validated and encoded matrix (their ``predict``, the held-out and training rows of a
    fit). A NaN takes its covariate's training minimum, silently (the estimators' encoding
    warns or refuses before); one compiled program per shape, dtype and basis.

    ``terms``: the model's shape terms in the form :func:`slotted` gives (``model`` is then
    the rest of the model, as it returns); the program is then the same for every model of
    the same settings, whichever pairs and tree size it chose."""
    dtype = model.x_min.dtype  # a host matrix is cast on the host: no eager cast compiled
    x = np.asarray(x, dtype) if isinstance(x, np.ndarray) else jnp.asarray(x, dtype)
    return _predict_cached(model, x, clip, terms)


def slotted(model: TreeModel, bucket_tree: bool = True) -> tuple:
    """``(rest, terms)``: a concrete model's shape terms with their pairs as data, and (with
    ``bucket_tree``) its tree in its capacity bucket, for :func:`predict_checked` (``rest``
    the model without the shape terms, its tree padded by :func:`jaxtree.program.pad` to the
    capacity of :func:`jaxtree.program.capacity_for`; ``terms`` None for a model without
    shape terms).

    Decision (issue 27): a model's :class:`jaxtree.shapes.ShapeSpec` is static (its chosen
    pairs a tuple), so every set of chosen pairs compiled the prediction again: the folds of
    a cross-validation, or a refit on new rows of the same table, each compiled it once more
    (0.4-0.8 s on a 2-core CPU). The terms here are the same pairs first in a
    :class:`jaxtree.shapes.SlotSpec` of ``max(max_terms, pairs)`` slots (``(0, 0)`` padding
    slots with zero, unused coefficients), so the program depends only on the settings
    (``n1``, ``n2``, ``max_terms``, groups), a model without pairs included (its padding
    slots read from pair axes as a few pairs' do, :func:`jaxtree.shapes.slots`); the values
    are the static form's (a test checks them bitwise; for a model without pairs to
    rounding: its padding pairs' zeros are summed with the mains). On the host; nothing
    compiled.

    Decision (fortieth session, issue 27): the tree's slots are a shape of the prediction's
    program too, so every tree size compiled it again: the folds of a cross-validation
    (each choosing its size on held-out rows), a grid over ``k``, the target transforms
    ``"auto"`` tries. The tree is padded with empty slots to the capacity its search
    compiles for (:func:`jaxtree.program.capacity_for`: every ``k <= 8`` in 17 slots, then
    25, 33, 49, ...); an empty slot is never read by a node, so every value is the unpadded
    program's bitwise (a test checks it). The padded leaves cost basis evaluations per row:
    at most 9 leaves up to ``k = 8``, less than 1.5x the tree's own above, so the
    estimators pad where compiling costs more than the padding
    (:data:`jaxtree._fit.pipeline.BUCKET_TREE_MAX_ROWS`)."""
    if bucket_tree:
        model = _tree_in_bucket(model)
    if model.shapes is None:
        return model, None
    return once_per_model(_SLOTTED, model, _slotted_terms)


_SLOTTED: dict = {}
"""``id(model) -> (a weak reference to the model, its slotted form)``: :func:`slotted`'s shape
terms, made once per live model (a one-row ``predict`` of a model with a pair spent 0.23 of
its 1.36 ms making them again)."""


def _slotted_terms(model: TreeModel) -> tuple:
    """:func:`slotted` of a model with shape terms (its tree as it is)."""
    sh, spec = model.shapes, model.shape_spec
    n = max(spec.max_terms, len(spec.pairs), 1)
    pad = n - len(spec.pairs)

    def grow(a):  # the pairs' rows, then `pad` zero rows
        a = np.asarray(a)
        return jax.device_put(np.concatenate([a, np.zeros((pad,) + a.shape[1:], a.dtype)]))

    terms = (sh._replace(pair=grow(sh.pair), pair_on=grow(sh.pair_on)),
             shapes_.slots(spec, model.n_features, n, axes_without_pairs=True))
    return dataclasses.replace(model, shapes=None, shape_spec=None), terms


_BUCKETED: dict = {}
"""``id(model) -> (a weak reference to the model, the model in its bucket)``: each live
model's padded tree, made once (:func:`_tree_in_bucket`), so that a model predicting row by
row pays no padding per call (0.1-0.2 ms of transfers on a CPU, against 0.3 ms of a call)."""


def _tree_in_bucket(model: TreeModel) -> TreeModel:
    """``model`` with its (one, concrete) tree padded to its capacity bucket (:func:`slotted`);
    a batch of trees (leading axes) as it is."""
    program = model.program
    if np.ndim(program.op) != 1:
        return model
    bucket = prog.capacity_for(program.max_k)
    if bucket == program.max_k:
        return model
    return once_per_model(_BUCKETED, model,
                          lambda m: dataclasses.replace(m, program=prog.pad(program, bucket)))


def once_per_model(store: dict, model, make):
    """``make(model)``, made once per live ``model`` and kept in ``store`` (``id(model) ->
    (a weak reference to the model, the value)``), forgotten with the model: what a model
    predicting row by row would otherwise make again at every call (:data:`_BUCKETED`; a
    one-versus-rest model's slotted terms, :func:`jaxtree._fit.classify.slotted`)."""
    key = id(model)
    hit = store.get(key)
    if hit is not None and hit[0]() is model:
        return hit[1]
    value = make(model)
    store[key] = (weakref.ref(model, lambda _, key=key: store.pop(key, None)), value)
    return value


def _predict_impl(model: TreeModel, x, clip, terms=None):
    shapes, spec = (model.shapes, model.shape_spec) if terms is None else terms
    single = x.ndim == 1
    x2 = x[None, :] if single else x
    if model.missing != "error":  # the missing-value rule (see predict): the range's low end
        x2 = jnp.where(jnp.isnan(x2), model.x_min, x2)
    xs = scale_x(model, x2, clip)
    inner = prog.evaluate(model.program, xs, model.basis)
    if shapes is not None:  # hats are defined on [0, 1]: shapes always see clipped x
        inner = inner + shapes_.evaluate(shapes, jnp.clip(xs, 0.0, 1.0), spec)
    bound = _target.clip_bound(model)  # the training targets map to [-y_bound, y_bound]
    if clip and bound is not None:
        inner = jnp.clip(inner, -bound, bound)
    out = model.y_center + model.y_scale * inner
    if model.target_transform == "log":  # the tree fits log y (jaxtree._target)
        out = jnp.exp(out) * model.smearing
    elif model.target_transform == "square":  # the tree fits y²
        out = jnp.sqrt(jnp.maximum(out, 0))
    return out[0] if single else out


# One compiled program per (shape, dtype, basis) instead of dozens of eager dispatches; under
# an outer jit/vmap/grad it is simply inlined.
_predict_jit = jax.jit(_predict_impl, static_argnums=2)

_predict_cached = _executables.cached(_predict_jit, static_argnums=(2,),
                                      light=_executables.LIGHT_LLVM1)
""":data:`_predict_jit` through jaxtree's executable cache (:mod:`jaxtree._executables`, on
with the compilation cache): a later process predicting the same model structure and rows
neither traces nor lowers it (issue 27; the demo's second process: 0.20-0.27 -> 0.002 s of
prediction, BENCHMARKS.md). Inside a trace (a user's jit, vmap, grad) it is the jitted
function. A basis with a custom Python function is not kept there (the key cannot see the
function's code): :func:`jaxtree._executables.cached` calls :data:`_predict_jit` for it.

Its light options (:data:`jaxtree._executables.LIGHT_LLVM1`) apply in a
:func:`jaxtree._executables.light` block only: the estimators' ``predict`` opens one for
blocks of :data:`jaxtree._fit.pipeline.PREDICT_LIGHT_ROWS` rows or fewer (its reason
there); larger blocks compile with XLA's defaults, which ran faster there."""


# ------------------------------------------------------------------------------ files

MAX_FAMILY_SIZE = checks.MAX_FAMILY_SIZE  # the bounds a file's values are checked against
MAX_SLOTS = checks.MAX_SLOTS

def _floats(a) -> list:
    return [float(v) for v in np.asarray(a, np.float64).ravel()]


def checksum(d: Mapping) -> str:
    """``"sha256:<hex>"`` of the canonical JSON of ``d`` without its ``checksum`` key.

    Raises:
      ValueError / TypeError: if ``d`` is not JSON-serialisable (e.g. holds NaN).
    """
    body = {k: v for k, v in d.items() if k != "checksum"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)
    return "sha256:" + hashlib.sha256(text.encode("ascii")).hexdigest()


def program_to_dict(program: prog.Program) -> dict:
    """The file entry of one program (exact floats)."""
    a = prog.to_numpy(program)
    return {"op": a["op"].tolist(), "left": a["left"].tolist(), "right": a["right"].tolist(),
            "feature": a["feature"].tolist(), "basis": a["basis"].tolist(),
            "weight": _floats(a["weight"]), "intercept": float(a["intercept"]),
            "n_slots": int(a["n_slots"])}


def to_dict(model: TreeModel, extra: Optional[Mapping[str, Any]] = None,
            task: Optional[Mapping[str, Any]] = None,
            encoding: Optional[Mapping[str, Any]] = None) -> dict:
    """A JSON-serialisable description of ``model`` (exact floats, with a checksum).

    ``task``: optional JSON entry of a classifier (see :func:`read_task`), written as the
    file's ``task``; regression files have none (they stay byte-identical). ``encoding``:
    optional JSON entry of the estimator's table encoder (:mod:`jaxtree._inputs.encoding`: missing
    values and categories), written as the file's ``encoding`` and read back by
    :func:`jaxtree.load`; files of numeric tables without missing values have none.
    """
    d = {
        "format": FORMAT,
        "version": VERSION,
        "dtype": str(np.asarray(model.program.weight).dtype),
        "basis": model.basis.to_config(),
        "feature_names": list(model.feature_names),
        "scaling": {
            "x_min": _floats(model.x_min),
            "x_scale": _floats(model.x_scale),
            "y_center": float(model.y_center),
            "y_scale": float(model.y_scale),
        },
        "program": program_to_dict(model.program),
        "extra": dict(extra or {}),
    }
    target = _target.of(model)
    if target.name != "identity":  # written only when used: older files stay byte-identical
        d["target"] = {"transform": target.name, "smearing": target.smearing}
    if model.shapes is not None:  # written only when used: older files stay byte-identical
        d["shapes"] = shapes_to_dict(model.shapes, model.shape_spec)
    if task is not None:
        d["task"] = dict(task)
    if encoding is not None:  # the estimator's table encoder (jaxtree._inputs.encoding); only when
        d["encoding"] = dict(encoding)  # it is not the identity: older files stay byte-identical
    if model.missing != "fill":  # written only when used: older files stay byte-identical
        d["missing"] = model.missing
    if model.y_bound != 1.0:  # written only when used: older files stay byte-identical
        d["y_bound"] = float(model.y_bound)
    if model.clip_y:  # written only when set: older files load without it (False)
        d["clip_y"] = True
    d["checksum"] = checksum(d)
    return d


def shapes_to_dict(sh: shapes_.Shapes, spec: shapes_.ShapeSpec) -> dict:
    """The file entry of one model's shape terms (exact floats)."""
    d = {"n1": spec.n1, "n2": spec.n2, "pairs": [list(pr) for pr in spec.pairs],
         "main": [_floats(r) for r in np.asarray(sh.main)],
         "main_on": [bool(v) for v in np.asarray(sh.main_on)],
         "pair": [_floats(r) for r in np.asarray(sh.pair)],
         "pair_on": [bool(v) for v in np.asarray(sh.pair_on)],
         "intercept": float(sh.intercept),
         "order": [int(v) for v in np.asarray(sh.order)], "n_terms": int(sh.n_terms)}
    if spec.groups:  # written only when used: older files stay byte-identical
        d["groups"] = [{"name": str(name), "covariates": [int(j) for j in members]}
                       for name, members in spec.groups]
    return d


def from_dict(d: Any, custom_functions: Optional[Mapping] = None, path="<dict>") -> TreeModel:
    """Rebuilds a :class:`TreeModel` from :func:`to_dict` output, validating everything.

    Raises:
      ValueError: for another version, a foreign, malformed or corrupted description
        (the message starts with ``path``). Never any other exception for bad content.
    """
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        checks.fail(path, f"missing format marker {FORMAT!r} (is this a jaxtree model?)")
    if not checks.is_int(d.get("version")) or d.get("version") != VERSION:
        raise ValueError(
            f"{path}: model file version {d.get('version')!r} is not supported by this jaxtree "
            f"(which reads version {VERSION}). Re-fit or re-save the model with a matching version."
        )
    checks.entry(d, "the file", path, checks.TOP_KEYS, checks.OPTIONAL_KEYS)
    if d.get("dtype") not in ("float32", "float64"):
        checks.fail(path, f"unsupported dtype {d.get('dtype')!r}; expected 'float32' or 'float64'")
    dtype = np.dtype(d["dtype"])
    names = d["feature_names"]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        checks.fail(path, "feature_names must be a non-empty list of strings")
    names = tuple(names)
    p = len(names)
    checks.basis_config(d["basis"], path)
    needed = custom_function_names(d)
    absent = [n for n in needed if n not in dict(custom_functions or {})]
    if absent:  # a valid file: the functions are saved by name only (loading never runs code)
        pairs = ", ".join(f"{n!r}: fn" for n in absent)
        raise ValueError(
            f"{path}: the model uses custom basis function(s) {absent}, saved by name only (a "
            f"model file never holds code). Pass them when loading: jaxtree.load(path, "
            f"custom_functions={{{pairs}}}), each fn the jnp function the model was fitted "
            f"with (jaxtree.load takes the same custom_functions argument).")
    try:
        basis = basis_.Basis.from_config(d["basis"], custom_functions=custom_functions)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, OverflowError) as exc:
        checks.fail(path, f"bad basis ({exc})")
    for fam in basis.families:  # families on original units carry one range per covariate
        if fam.per_feature and (not fam.bound or len(fam.lo) != p):
            checks.fail(path, f"basis family {fam.to_config()['kind']!r} must hold the "
                              f"training range of each of the {p} covariates (lo and hi "
                              f"lists of length {p})")
    sc = checks.entry(d["scaling"], "scaling", path, checks.SCALING_KEYS)
    x_min = np.asarray(checks.number_list(sc["x_min"], "scaling x_min", path, p), np.float64)
    x_scale = np.asarray(checks.number_list(sc["x_scale"], "scaling x_scale", path, p), np.float64)
    if not all(checks.is_number(sc[k]) for k in ("y_center", "y_scale")):
        checks.fail(path, "scaling y_center and y_scale must be finite numbers")
    y_center, y_scale = float(sc["y_center"]), float(sc["y_scale"])
    if not ((x_scale > 0).all() and y_scale > 0):
        checks.fail(path, "scaling holds non-positive scales")
    pg = d["program"]
    checks.program(pg, p, basis.q, path)
    if "extra" in d and not isinstance(d["extra"], dict):
        checks.fail(path, "extra must be a JSON object")
    transform, smear = "identity", None
    if "target" in d:
        tg = checks.entry(d["target"], "target", path, ("transform", "smearing"))
        if tg["transform"] not in _target.TRANSFORMS or tg["transform"] == "identity":
            checks.fail(path, f"target transform {tg['transform']!r} is not one of "
                              f"{[t for t in _target.TRANSFORMS if t != 'identity']}")
        if not (checks.is_number(tg["smearing"]) and float(tg["smearing"]) > 0):
            checks.fail(path, "target smearing must be a positive finite number")
        transform, smear = tg["transform"], float(tg["smearing"])
    missing = d.get("missing", "fill")
    if missing not in MISSING_RULES:
        checks.fail(path, f"missing must be one of {list(MISSING_RULES)}; got {missing!r}")
    y_bound = d.get("y_bound", 1.0)
    if not (checks.is_number(y_bound) and 0 < float(y_bound) <= 1):
        checks.fail(path, f"y_bound must be a number in (0, 1]; got {y_bound!r}")
    clip_y = d.get("clip_y", False)
    if not isinstance(clip_y, bool):
        checks.fail(path, f"clip_y must be true or false; got {clip_y!r}")
    if "checksum" in d:
        try:
            ok = isinstance(d["checksum"], str) and d["checksum"] == checksum(d)
        except (TypeError, ValueError):
            ok = False
        if not ok:
            checks.fail(path, "checksum mismatch: the file was corrupted or edited after saving. "
                              "Re-save it from the model, or delete the 'checksum' entry to load a "
                              "deliberately hand-edited file")
    if not jax.config.jax_enable_x64:
        dtype = np.dtype(np.float32)
    with np.errstate(over="ignore"):
        values = [x_min, x_scale, np.float64(y_center), np.float64(y_scale),
                  np.asarray(pg["weight"], np.float64), np.float64(pg["intercept"])]
        if not all(np.isfinite(np.asarray(v, dtype)).all() for v in values) or not (
                np.asarray(x_scale, dtype) > 0).all() or not np.asarray(y_scale, dtype) > 0:
            checks.fail(path, f"values do not fit in {dtype.name}")
    program = prog.from_arrays(pg["op"], pg["left"], pg["right"], pg["feature"], pg["basis"],
                               np.asarray(pg["weight"], dtype), float(pg["intercept"]),
                               pg["n_slots"], dtype=dtype)
    sh, spec = (checks.shapes_from_dict(d["shapes"], p, dtype, path) if "shapes" in d
                else (None, None))
    dev = functools.partial(prog.as_device, dtype=dtype)
    return TreeModel(program, dev(x_min), dev(x_scale), dev(y_center), dev(y_scale), basis, names,
                     transform, None if smear is None else dev(smear), sh, spec,
                     missing, float(y_bound), clip_y)


def read_extra(d: Mapping, path="<dict>") -> tuple:
    """Validated ``(params, history)`` from a model file's ``extra`` entry.

    ``params`` maps names to JSON scalars (estimator hyperparameters); ``history`` is a
    list of finite numbers. Both default to empty.

    Raises:
      ValueError: if they are malformed.
    """
    extra = d.get("extra", {}) if isinstance(d, dict) else {}
    if not isinstance(extra, dict):
        checks.fail(path, "extra must be a JSON object")
    params = extra.get("params", {})
    if not isinstance(params, dict) or not all(
            isinstance(v, (str, bool, type(None))) or checks.is_number(v) for v in params.values()):
        checks.fail(path, "extra.params must map names to strings, numbers, booleans or null")
    history = checks.number_list(extra.get("history", []), "extra.history", path)
    return dict(params), list(history)


TASK_KINDS = ("classify",)
TASK_LOSSES = ("logistic", "margin")


def read_task(d: Mapping, p: int, q: int, path="<dict>") -> Optional[dict]:
    """The validated ``task`` entry of a model file, or None for a regression file
    (``p`` covariates and ``q`` basis functions: those of the file's model).

    A classifier's entry is ``{"kind": "classify", "loss": "logistic" | "margin",
    "classes": [c1, c2, ...], "programs": [...]}``: the class labels (JSON strings,
    numbers or booleans, distinct, at least two) and, for more than two classes, one
    program per class (one-versus-rest; the file's ``program`` is the first); for two
    classes ``programs`` is empty and the file's ``program`` gives the logit of the second
    class. A one-versus-rest model with shape terms also has ``"shapes"``: one entry per
    class, as the file's ``shapes`` (the first class's), all in one spec
    (:func:`jaxtree.shapes.stacked`). Returns the entry with ``programs`` as
    :class:`jaxtree.program.Program` and ``shapes`` as ``(stacked terms, spec)`` or None.

    Raises:
      ValueError: for a malformed entry.
    """
    if not isinstance(d, dict) or "task" not in d:
        return None
    t = checks.entry(d["task"], "task", path, ("kind", "loss", "classes", "programs"),
                     ("shapes",))
    if t["kind"] not in TASK_KINDS:
        checks.fail(path, f"task kind {t['kind']!r} is not one of {list(TASK_KINDS)}")
    if t["loss"] not in TASK_LOSSES:
        checks.fail(path, f"task loss {t['loss']!r} is not one of {list(TASK_LOSSES)}")
    classes = t["classes"]
    ok = isinstance(classes, list) and len(classes) >= 2 and all(
        isinstance(c, (str, bool)) or checks.is_number(c) for c in classes)
    if not ok or len({(type(c), c) for c in classes}) != len(classes):
        checks.fail(path, "task classes must be a list of at least two distinct strings, "
                          "numbers or booleans")
    programs = t["programs"]
    want = len(classes) if len(classes) > 2 else 0
    if not isinstance(programs, list) or len(programs) != want:
        checks.fail(path, f"task programs must be a list of {want} programs (one per class "
                          "for more than two classes)")
    dtype = np.dtype(d.get("dtype", "float32")) if jax.config.jax_enable_x64 else np.dtype(np.float32)
    out = []
    for pg in programs:
        checks.program(pg, p, q, path)
        out.append(prog.from_arrays(pg["op"], pg["left"], pg["right"], pg["feature"],
                                    pg["basis"], np.asarray(pg["weight"], dtype),
                                    float(pg["intercept"]), pg["n_slots"], dtype=dtype))
    shapes = None
    if "shapes" in t:
        if not (isinstance(t["shapes"], list) and len(t["shapes"]) == want and want):
            checks.fail(path, f"task shapes must be a list of {want} shape entries (one per "
                              "class of a one-versus-rest model)")
        each = [checks.shapes_from_dict(sh, p, dtype, path) for sh in t["shapes"]]
        if any(spec != each[0][1] for _, spec in each):
            checks.fail(path, "task shapes must share one spec (n1, n2, pairs, groups and the "
                              "length of order)")
        shapes = (prog.stack_on_host([sh for sh, _ in each]), each[0][1])
    return {"kind": t["kind"], "loss": t["loss"], "classes": list(classes), "programs": out,
            "shapes": shapes}


def save(model: TreeModel, path, extra: Optional[Mapping[str, Any]] = None,
         task: Optional[Mapping[str, Any]] = None,
         encoding: Optional[Mapping[str, Any]] = None) -> None:
    """Writes ``model`` to ``path`` as versioned JSON (atomically: the file is either
    the old one or the complete new one, never half written). ``task``: as for
    :func:`to_dict`."""
    text = json.dumps(to_dict(model, extra, task, encoding), indent=1, allow_nan=False)
    folder = os.path.dirname(os.path.abspath(os.fspath(path)))
    if not os.path.isdir(folder):  # named here: the open below would name the temporary file
        raise FileNotFoundError(f"Cannot save the model to {os.fspath(path)!r}: the folder "
                                f"{folder!r} does not exist. Create it first (os.makedirs).")
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def load_dict(path) -> dict:
    """Reads and parses a model file (no validation of the contents)."""
    try:
        with open(path, "r", encoding="utf-8") as f:
            return json.load(f)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise ValueError(f"{path}: not a valid jaxtree model file: not JSON ({exc}).") from None


def custom_function_names(d: Any) -> list:
    """Names of the custom basis functions a model file's dict needs (``[]`` for none or for a
    malformed basis entry, which :func:`from_dict` reports)."""
    fams = d.get("basis", {}).get("families") if isinstance(d, dict) and isinstance(
        d.get("basis"), dict) else None
    if not isinstance(fams, list):
        return []
    return [f["name"] for f in fams if isinstance(f, dict) and f.get("kind") == "function"
            and isinstance(f.get("name"), str)]

