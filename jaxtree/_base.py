"""The estimator shell both estimators share: the scikit-learn parameter protocol, the
fitted table (encoding and column names), predict-time validation and encoding, the saved
file's parameters, and for the regressor the fitted attributes from a
:class:`jaxtree._fit.pipeline.FitResult` (:func:`set_fitted`) and its outputs (predict,
score, formulas, exports, save)."""

from __future__ import annotations

import dataclasses
import inspect
import sys
import warnings
from typing import Optional

import numpy as np

from jaxtree import _formula
from jaxtree import _target
from jaxtree import export as export_
from jaxtree import model as model_
from jaxtree import program as prog_
from jaxtree import search
from jaxtree import simplify as simplify_
from jaxtree._fit import pipeline
from jaxtree._inputs import encoding as encoding_
from jaxtree._inputs import validation as V


class ParamsProtocol:
    """The scikit-learn parameter protocol shared by the estimators: parameters are the
    keyword arguments of ``__init__``, stored under their own names."""

    @classmethod
    def _get_param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(n for n in sig.parameters if n != "self")

    def get_params(self, deep: bool = True) -> dict:
        """Hyperparameters as a dict (scikit-learn protocol).

        Args:
          deep: accepted for scikit-learn compatibility; no parameter is an estimator, so it
            changes nothing.
        """
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Sets hyperparameters (scikit-learn protocol); returns self."""
        valid = set(self._get_param_names())
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"Invalid parameter {name!r} for {type(self).__name__}; "
                                 f"valid: {sorted(valid)}.")
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = {n: p.default for n, p in inspect.signature(type(self).__init__).parameters.items()}
        args = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._get_param_names()
                         if getattr(self, n) is not defaults.get(n) and getattr(self, n) != defaults.get(n))
        return f"{type(self).__name__}({args})"

    def __sklearn_is_fitted__(self) -> bool:
        """Whether ``fit`` has run (scikit-learn's ``check_is_fitted`` protocol)."""
        return hasattr(self, "model_")


class Estimator(ParamsProtocol):
    """What both estimators do around their fit: the fitted table and predict-time input."""

    _fit_first = "predict, score, formula or save"  # named by the not-fitted error

    def _check_fitted(self):
        if not hasattr(self, "model_"):
            raise V.interop_class("NotFittedError", V.NotFittedError)(
                f"This {type(self).__name__} is not fitted yet. Call fit(X, y) before "
                f"{self._fit_first}.")

    def _rows(self, X):
        """``X`` (a table like the training one) checked by its column names and encoded as
        in ``fit``: the validated matrix the model takes."""
        self._check_fitted()
        names = getattr(self, "feature_names_in_", None)
        # the warning points at the user's line: user -> predict (etc.) -> _rows -> check
        V.check_feature_names(X, names, type(self).__name__, stacklevel=4)
        enc = self.encoding_
        if (isinstance(X, np.memmap) and not enc.is_identity and self.missing != "error"
                and X.ndim == 2 and X.dtype.kind == "f" and X.shape[1] == self.n_features_in_
                and all(c.kind == "numeric" for c in enc.columns)):
            # A memmap is encoded block by block while predicting (never whole in memory).
            return encoding_.EncodedRows(X, enc)
        Xe = encoding_.transform(enc, X, missing=self.missing)
        if Xe is X:
            return V.check_X(X, n_features=self.n_features_in_, feature_names=names)
        out = enc.feature_names_out
        return V.check_X(Xe, n_features=len(out), feature_names=out)

    def encode(self, X) -> np.ndarray:
        """``X`` (a table like the training one: a DataFrame with its categories and missing
        values, or an array) as the covariate matrix the fitted tree reads: float
        ``(n_samples, n_covariates)``, the columns named by ``model_.feature_names``
        (``"<col>=<level>"`` indicators, ``"<col> missing"`` flags), encoded by the rules of
        ``predict``. For JAX code: ``jaxtree.predict(est.model_, est.encode(X))`` is
        ``est.predict(X)`` for a regressor (the decision function for a classifier), and the
        matrix goes into ``jax.jit``, ``jax.grad`` and ``jax.vmap`` of
        :func:`jaxtree.predict`; pass ``clip=False`` there for gradients at the edge of the
        training range (clipped covariates have gradient 0).
        """
        rows = self._rows(X)  # checks that the estimator is fitted first
        if isinstance(rows, encoding_.EncodedRows):
            rows = rows[:]
        return np.asarray(rows)

    def _labels(self) -> dict:
        """``{covariate index: label}`` of the table encoding's 0/1 covariates, named
        ``[label]`` in every formula, term and plot (:func:`jaxtree._formula.indicator_labels`)."""
        return _formula.indicator_labels(getattr(self, "encoding_", None))

    def _target_name(self) -> str:
        """The target's name in formulas: ``target_name_`` (``"y"`` for an estimator fitted
        before it existed)."""
        return getattr(self, "target_name_", _target.DEFAULT_NAME)

    def _saved_params(self) -> dict:
        """The hyperparameters a model file keeps: plain values, not the devices (where a
        model was fitted says nothing about where it is loaded)."""
        return {k: v for k, v in self.get_params().items()
                if isinstance(v, (int, float, str, bool, type(None))) and k != "devices"}

    def _saved_encoding(self):
        """The file's ``encoding`` entry: None for the identity of a numeric array (``x1..``)
        or of a named numeric table (its names are the model's); kept for an unnamed table
        whose covariates were given names (``fit_batch(feature_names=...)``), so that a
        loaded model, like the fitted one, has no ``feature_names_in_``."""
        enc = getattr(self, "encoding_", None)
        if enc is None or (enc.is_identity and not any(c.two_valued for c in enc.columns) and (
                enc.named or _default_names([c.name for c in enc.columns]))):
            return None  # (a two-valued column's mark is kept: its formulas read 1.5·am)
        return enc.to_dict()

    # -------------------------------------------------- the trees' exports and plots
    # One tree for a regressor and a two-class classifier, one per class for a one-versus-rest
    # classifier: each method returns one result, or a list in the order of ``classes_``.

    def _trees(self) -> list:
        """The fitted model of each tree (the classifier's one-versus-rest members)."""
        self._check_fitted()
        return [self.model_]

    def _tree_lhs(self, c: int) -> str:
        """The left-hand side written above tree ``c`` (the target's name; the classifier:
        its logit or margin of a class)."""
        return self._target_name()

    @staticmethod
    def _each(out: list):
        return out[0] if len(out) == 1 else out

    def to_dot(self, **kwargs):
        """The fitted tree as Graphviz DOT text (see :func:`jaxtree.export.to_dot`); a list,
        one per class, for a one-versus-rest classifier."""
        return self._each([export_.to_dot(m, **kwargs) for m in self._trees()])

    def plot_tree(self, ax=None, **kwargs):
        """Draws the fitted tree with matplotlib, its leaves in the formula's notation (see
        :func:`jaxtree.export.plot_tree`); returns the Figure (a list, one per class, for a
        one-versus-rest classifier).

        Args:
          ax: a matplotlib Axes to draw on; a new figure when None (one tree only).
          kwargs: further options of :func:`jaxtree.export.plot_tree`.
        """
        trees = self._trees()
        if ax is not None and len(trees) > 1:
            raise ValueError(f"ax draws one tree; this classifier has {len(trees)} (one per "
                             "class): leave ax=None for a figure per class.")
        kwargs.setdefault("indicators", self._labels())
        return self._each([export_.plot_tree(m, ax=ax, **{"lhs": self._tree_lhs(c), **kwargs})
                           for c, m in enumerate(trees)])

    def plot_history(self, ax=None):
        """Plots the training loss after each iteration (``history_``; one line per class
        for a one-versus-rest classifier); returns the Figure.

        Args:
          ax: a matplotlib Axes to draw on; a new figure when None.
        """
        self._check_fitted()
        h = np.asarray(self.history_, np.float64)
        classes = getattr(self, "classes_", None)  # a row per class: one versus the rest
        labels = [str(c) for c in classes] if h.ndim == 2 and classes is not None else None
        return export_.plot_history(h, ax=ax, ylabel=self._history_label, labels=labels)

    _history_label = "training MSE"

    def explain(self, X):
        """The fitted model as the sum of the formula's terms, each evaluated at ``X``
        (checked and encoded as in :meth:`predict`), with its share of the explained
        variance and its mean absolute contribution, largest first, the constant last
        (a classifier's terms add up to its decision function; one table per class for a
        one-versus-rest classifier).

        Returns:
          A pandas DataFrame when pandas is importable (else a list of dicts), one row per
          term: ``term`` (named exactly as :meth:`formula` writes it: ``3·[c = red]``,
          ``-2.04·cos(π·t/9.97)``, ``f(x1)``), ``features`` (the covariates it reads: all
          of a categorical column's level covariates for its shape ``f(color)``),
          ``share``, ``mean_abs`` and ``values`` (its centred contribution per row of ``X``,
          in ``y``'s units, a classifier's in the decision function's); see
          :func:`jaxtree.export.term_values`.
        """
        xa = self._rows(X)
        return self._each([as_table(export_.term_values(m, xa, indicators=self._labels()))
                           for m in self._trees()])

    def plot_terms(self, X, **kwargs):
        """One panel per term of the formula, titled as :meth:`formula` writes it (see
        :func:`jaxtree.export.plot_terms`; a figure per class for a one-versus-rest
        classifier).

        Args:
          X: ``(n, p)`` covariates the panels are drawn over, checked as in :meth:`predict`.
          kwargs: further options of :func:`jaxtree.export.plot_terms`.
        """
        xa = self._rows(X)
        kwargs.setdefault("indicators", self._labels())
        return self._each([export_.plot_terms(m, xa, **kwargs) for m in self._trees()])

    def shape_terms(self) -> list:
        """The shape terms in ``X``'s and ``y``'s units (a classifier's in its decision
        function's): knots and values, a categorical column's term one value per level (see
        :func:`jaxtree.export.shape_terms`)."""
        return self._each([export_.shape_terms(m) for m in self._trees()])

    def plot_shapes(self, **kwargs):
        """Plots each shape term: a curve, bars by level for a categorical column's
        ``f(color)``, or a heat map (see :func:`jaxtree.export.plot_shapes`)."""
        return self._each([export_.plot_shapes(m, **kwargs) for m in self._trees()])


def loaded_target_name(d, path) -> Optional[str]:
    """The target's name a model file keeps (``extra.target_name``), or None (older files).

    Raises:
      ValueError: when it is there and not a non-empty string.
    """
    extra = d.get("extra", {}) if isinstance(d, dict) else {}
    name = extra.get("target_name") if isinstance(extra, dict) else None
    if name is not None and not (isinstance(name, str) and name.strip()):
        raise ValueError(f"{path}: not a valid jaxtree model file: extra.target_name must be a "
                         f"non-empty string; got {name!r}.")
    return name


def as_table(rows: list):
    """``explain``'s rows as a pandas DataFrame (columns ``term``, ``features``, ``share``,
    ``mean_abs``, ``values``; one row per term, the constant last) when pandas is
    importable, else the list of dicts itself."""
    try:
        import pandas as pd
    except ImportError:
        return rows
    return pd.DataFrame(rows, columns=["term", "features", "share", "mean_abs", "values"])


def _default_names(names) -> bool:
    """Whether ``names`` are the default ``x1, x2, ...`` of an unnamed array."""
    return all(n == f"x{j + 1}" for j, n in enumerate(names))


def loaded_names(d, feature_names, path) -> tuple:
    """``(names, encoding)`` of a loaded model file: the raw column names (None for the
    default ``x1, x2, ...``) and its optional ``encoding`` entry (missing values /
    categories, :mod:`jaxtree._inputs.encoding`) checked against the model's covariates."""
    names = None if _default_names(feature_names) else feature_names
    enc = None
    if isinstance(d, dict) and "encoding" in d:
        enc = encoding_.from_dict(d["encoding"], path)
        if enc.feature_names_out != tuple(feature_names):
            raise ValueError(f"{path}: not a valid jaxtree model file: the encoding makes the "
                             f"covariates {list(enc.feature_names_out)}, but the model has "
                             f"{list(feature_names)}")
        names = tuple(c.name for c in enc.columns) if enc.named else None
    return names, enc


def _check_groups(shape_spec, enc, path) -> None:
    """A loaded model's categorical shape groups against its file's encoding: each group is
    all the covariates of the categorical column it names (its levels, ``other``, its missing
    indicator), in order, as a fit writes it (:func:`jaxtree._fit.spec.shape_groups`). A
    group over other covariates would read wrong level codes and predict silently wrong."""
    groups = getattr(shape_spec, "groups", ()) or ()
    if not groups:
        return
    spans = {} if enc is None else enc.categorical_covariates()
    for name, members in groups:
        want = spans.get(str(name))
        if want != tuple(int(m) for m in members):
            raise ValueError(
                f"{path}: not a valid jaxtree model file: the shape group {name!r} covers "
                f"covariates {list(members)}, but the encoding "
                + ("has no categorical column of that name" if want is None else
                   f"gives that column the covariates {list(want)}"))


def from_file(cls, d, path, model, **set_params):
    """``(estimator, history)`` of a model file's dict ``d`` (read from ``path`` by
    :func:`jaxtree.model.load_dict`) and its ``model`` (:func:`jaxtree.model.from_dict`): an
    unfitted ``cls`` with the file's saved hyperparameters (its ``basis`` the model's,
    ``set_params`` over them), checked, and the file's training history. Both estimators'
    ``load``.

    Raises:
      ValueError: for a corrupted or foreign file, or a bad saved hyperparameter.
    """
    params, hist = model_.read_extra(d, path)
    valid = set(cls._get_param_names())
    est = cls(**{k: v for k, v in params.items() if k in valid and k not in ("basis", "devices")})
    est.basis = model.basis
    for name, value in set_params.items():
        setattr(est, name, value)
    try:
        est._check_params()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: not a valid jaxtree model file: bad saved parameter: "
                         f"{exc}") from None
    return est, hist


def loaded_result(d, path, model, history, classes=None) -> pipeline.FitResult:
    """The :class:`jaxtree._fit.pipeline.FitResult` of a loaded model file (no search, row
    plan or path: ``spec`` None): its names, encoding and target name read from ``d``."""
    names, enc = loaded_names(d, model.feature_names, path)
    _check_groups(getattr(model, "shape_spec", None), enc, path)
    return pipeline.FitResult(model=model, history=history, choices=[],
                              status=search.Status.OK, names=names, encoding=enc, spec=None,
                              target_name=loaded_target_name(d, path), classes=classes)


class WeightBoxWarning(UserWarning):
    """A fitted weight ended on the search's box ``|w| <= 1``: the box bound the fit, so the
    formula may build an effect from other terms that one weight could not hold. A smaller
    ``y_bound`` gives the weights room (:class:`jaxtree.TreeRegressor`, ``y_bound``)."""


def box_message(count: int, y_bound: float) -> str:
    """The warning for ``count`` weights on the box of a fit with this ``y_bound``."""
    return (f"{count} weight(s) of the fitted tree ended on the box |w| <= 1 (y was mapped "
            f"into [-{y_bound:g}, {y_bound:g}]): the box bound the fit, so the formula may "
            f"build an effect from several terms that one weight could not hold. A smaller "
            f"y_bound (e.g. y_bound={y_bound / 4:g}) gives the weights room; "
            f"weights_at_bound_ holds the count.")


class TargetPrecisionWarning(UserWarning):
    """The targets are far from 0 for their spread, so the model's float32 arithmetic rounds
    its predictions (and the formula's constant) by more than the formula's default
    tolerance: shift ``y`` by a round number before fitting, or fit in float64
    (:func:`precision_message`)."""


def precision_message(model) -> Optional[str]:
    """The :class:`TargetPrecisionWarning` for a regressor's ``model``, or None.

    Decision (fifty-eighth session): the covariates and targets are scaled on the host in
    float64, but a float32 model keeps ``y_center`` in float32 and predicts
    ``y_center + y_scale * f``, so targets such as ``1e8 + 3a + b`` (prices in cents, time
    stamps) came back rounded to steps of 8 with no word (a new user's check: training RMSE
    2.28 where float64 gives the noise's 0.0102; at an offset of 1e6, 0.0226). The fix that
    keeps ``jaxtree.predict`` one float32 program is the user's shift of ``y`` (or float64),
    so the fit says so, where the step passes the formula's default tolerance
    (:data:`jaxtree._formula.DEFAULT_TOL` of the half-range)."""
    if np.dtype(np.asarray(model.y_center).dtype).itemsize > 4:
        return None
    c = float(np.asarray(model.y_center))
    half = float(np.asarray(model.y_scale)) * float(getattr(model, "y_bound", 1.0))
    step = float(np.spacing(np.float32(abs(c))))
    if not step > _formula.DEFAULT_TOL * half:
        return None
    return (f"y's values are far from 0 for their spread (center {c:.7g}, half-range "
            f"{half:.3g}): the float32 model rounds a prediction near {c:.3g} to steps of "
            f"{step:.2g}, {step / half:.1e} of the half-range, so predictions and the "
            f"formula's constant lose precision. Subtract a round number from y before "
            f"fitting (e.g. y - {float(f'{c:.2g}'):g}) and add it back to the predictions, or "
            "fit in float64 (jax.config.update('jax_enable_x64', True) before any JAX work, "
            "and float64 arrays).")


def set_result(est, result: pipeline.FitResult, model, warn: bool) -> search.Status:
    """What both estimators' ``set_fitted`` set from a fit's result: ``model_`` (``model``),
    ``shape_order_`` and ``shape_order_scores_`` (the fit's order or additive choice),
    ``history_``, ``choices_``, ``status_`` (returned), the resolved ``search_``,
    ``validation_fraction_``, ``row_plan_`` and ``refine_steps_`` (not for a loaded model:
    ``result.spec`` None), the table's names and encoding (``encoding_``: the identity spec
    of the model's covariates when the result has none) and the target's name; warns about
    a degenerate search (``warn``; ``FULL``, the tree at ``k`` operations, is no warning)."""
    status = search.Status(int(result.status))
    bad = status & search.Status.NO_CANDIDATE
    if warn and bad:
        warnings.warn(f"{search.message(bad)}.", RuntimeWarning, stacklevel=4)
    est.model_ = model
    est.shape_order_, est.shape_order_scores_ = result.order or (None, None)
    est.history_ = np.asarray(result.history, np.float64)
    est.choices_ = list(result.choices)
    est.status_ = status
    if result.spec is not None:
        est.search_ = result.spec.search
        est.validation_fraction_ = result.spec.validation_fraction
        est.row_plan_ = result.spec.plan
        est.refine_steps_ = result.spec.steps
    names, encoding = result.names, result.encoding
    if encoding is None:  # numeric columns as they are; a missing value takes the minimum
        x_min = np.asarray(model.x_min, np.float64).reshape(-1, model.n_features)[0]
        encoding = encoding_.identity(model.n_features, names, x_min)
    est.encoding_ = encoding_.with_two_valued(encoding, result.two_valued)  # lines in formulas
    est.encoded_feature_names_ = np.asarray(model.feature_names, dtype=object)
    est.far_tails_ = {model.feature_names[j]: (low, high) for j, low, high in result.cut}
    if result.cut and getattr(est, "verbose", 0) > 0:
        _say_far_tails(model, result.cut)
    # the target's name in every formula, clear of each covariate's (raw and encoded)
    est.target_name_ = _target.display_name(result.target_name,
                                            [*(names or ()), *model.feature_names])
    est.n_features_in_ = encoding.n_features_in
    if names is not None:
        est.feature_names_in_ = np.asarray(names, dtype=object)
    elif hasattr(est, "feature_names_in_"):  # a refit on an array forgets a table's names
        del est.feature_names_in_
    return status


def _say_far_tails(model, cut: tuple) -> None:
    """The verbose line naming the covariates whose range a fit cut short of a far tail
    (``far_tails_``): each one's range against its observed extremes."""
    p = model.n_features
    lo = np.asarray(model.x_min, np.float64).reshape(-1, p)[0]
    hi = lo + 1.0 / np.asarray(model.x_scale, np.float64).reshape(-1, p)[0]
    said = "; ".join(f"{model.feature_names[j]} on [{lo[j]:.4g}, {hi[j]:.4g}] (observed "
                     f"[{a:.4g}, {b:.4g}])" for j, a, b in cut)
    print(f"[jaxtree] ranges cut short of a far tail, the rows beyond clipped to them: {said}",
          file=sys.stderr)


def set_fitted(est, result: pipeline.FitResult, warn: bool = True):
    """The one place where a fit's result becomes a fitted regressor (``fit``, ``fit_batch``
    and ``load``). Sets every learned attribute at once, at the end, so an interrupted or
    failed fit leaves the estimator as it was; warns about a degenerate search and a weight
    held by the box."""
    model = pipeline.fitted_model(result)
    set_result(est, result, model, warn)
    est.k_ = prog_.n_ops(model.program)
    est.path_ = result.path
    est.shape_path_ = result.shape_path
    est.target_transform_ = model.target_transform
    est.target_transform_scores_ = result.transform_scores
    est.pruned_ = result.pruned
    # issue 28: the box never binds silently (a loaded model was warned about at its fit)
    est.weights_at_bound_ = prog_.weights_at_bound(model.program)
    if warn and est.weights_at_bound_ and result.spec is not None:
        warnings.warn(box_message(est.weights_at_bound_, result.spec.y_bound), WeightBoxWarning,
                      stacklevel=3)
    rounded = precision_message(model) if warn and result.spec is not None else None
    if rounded:
        warnings.warn(rounded, TargetPrecisionWarning, stacklevel=3)
    return est


class Regressor(Estimator):
    """The regressor's outputs over ``model_``: predictions, R², the formula and its exports,
    the size path, the saved file."""

    @property
    def path_(self):
        """The size path (class docstring). Its formulas are written on first access: each
        is rounded number by number (10-15 ms a row on a CPU), and most fits never read
        them, while a new process's whole first fit takes about a second (issue 12 item 6)."""
        try:
            rows = self.__dict__["_path_rows"]
        except KeyError:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute 'path_' "
                                 "(it is set by fit)") from None
        y_bound, clip_y = self.model_.y_bound, self.model_.clip_y
        for row in rows or ():
            if "formula" not in row:  # the notation of formula(): indicators, target's name
                if (row["model"].y_bound, row["model"].clip_y) != (y_bound, clip_y):
                    # the tolerance's half-range; predictions within the targets' range
                    row["model"] = dataclasses.replace(row["model"], y_bound=y_bound,
                                                       clip_y=clip_y)
                row["formula"] = row["model"].formula(indicators=self._labels(),
                                                      lhs=self._target_name())
        return rows

    @path_.setter
    def path_(self, rows):
        self.__dict__["_path_rows"] = rows

    def predict(self, X) -> np.ndarray:
        """Predictions in ``y``'s units, float64 numpy ``(n_samples,)``.

        ``X`` must have the columns of ``fit``, in the same order. A DataFrame is checked by
        its column names when the model was fitted on one (``feature_names_in_``): other
        names or another order raise ValueError; names on one side only warn
        (scikit-learn's rule, see :func:`jaxtree._inputs.validation.check_feature_names`).
        """
        xa = self._rows(X)  # checks that the estimator is fitted first
        return pipeline.predict_rows(self.model_, xa, self.clip)

    def score(self, X, y, sample_weight=None) -> float:
        """Coefficient of determination R² of the predictions (``X`` is checked as in
        :meth:`predict`, column names included).

        Args:
          X: ``(n, p)`` covariates, checked as in :meth:`predict`.
          y: ``(n,)`` true targets.
          sample_weight: ``(n,)`` weights of the rows, or None.
        """
        pred = self.predict(X)
        ya = V.check_y(y, pred.shape[0]).astype(np.float64)
        sw = V.check_sample_weight(sample_weight, pred.shape[0])
        w = np.ones_like(ya) if sw is None else sw
        ss_res = np.sum(w * (ya - pred) ** 2)
        ss_tot = np.sum(w * (ya - np.average(ya, weights=w)) ** 2)
        if ss_tot == 0:
            return 1.0 if ss_res == 0 else 0.0
        return float(1 - ss_res / ss_tot)

    def formula(self, digits: Optional[int] = None, *, tol: float = 1e-3,
                scaled: bool = False) -> str:
        """The fitted formula as text, in ``X``'s and ``y``'s units, the target by its own name
        (``target_name_``: a Series' name, ``--target`` in the CLI, else ``y``; ``_`` appended
        while it equals a covariate's name). ``path_``, :meth:`explain`, the plots and
        ``jaxtree show`` name the terms exactly as this does.

        Leaves in the covariates' own units (``(dep_time - 1730)₊³``), the table encoding's
        0/1 covariates as indicators (``[carrier = EV]``, ``[dep_time missing]``), the weights
        of a product folded into one coefficient, equal terms merged, and numbers rounded to
        the fewest significant digits that change no prediction in the training range by more
        than ``tol`` (default ``1e-3``) times the target's half-range (see
        :meth:`jaxtree.TreeModel.formula`; the rules: :mod:`jaxtree._formula`).

        Args:
          digits: a fixed number of significant digits instead of ``tol`` (None: from ``tol``).
          tol: the rounding tolerance, a fraction of the target's half-range.
          scaled: True gives the raw tree on the covariates min-max scaled to ``[0, 1]``, one
            weight per leaf (``digits`` then defaults to 3).
        """
        self._check_fitted()
        return self.model_.formula(digits, tol=tol, scaled=scaled, indicators=self._labels(),
                                   lhs=self._target_name())

    def law(self, digits=None, *, tol: float = simplify_.LAW_TOL,
            max_terms=simplify_.MAX_LAW_TERMS):
        """The fitted law as a sympy expression in ``X``'s and ``y``'s units (negligible terms
        dropped, numbers rounded within ``tol`` of the model), or None with a
        :class:`jaxtree.simplify.NoLawWarning` saying why when the simplified expression has
        more than ``max_terms`` additive terms or does not hold to ``tol`` (its number of
        terms and the fit's held-out MSE). See :func:`jaxtree.simplify.law`; needs sympy.

        Args:
          digits: a fixed number of significant digits instead of the fewest ``tol`` allows.
          tol: how far the law may be from the model, a share of the target's half-range.
          max_terms: the most additive terms a law may have.
        """
        self._check_fitted()
        rows = self.__dict__.get("_path_rows") or ()
        held = [r["val_mse"] for r in rows if r.get("n_ops") == getattr(self, "k_", None)]
        return simplify_.law(self.model_, digits, tol=tol, max_terms=max_terms,
                             held_out_mse=held[0] if held else None, stacklevel=3)

    def to_sympy(self, **kwargs):
        """The fitted formula as a sympy expression in ``X``'s units: exact by default,
        the printed formula with ``tol=`` (see :func:`jaxtree.export.to_sympy`)."""
        self._check_fitted()
        kwargs.setdefault("indicators", self._labels())
        return export_.to_sympy(self.model_, **kwargs)

    def to_latex(self, **kwargs) -> str:
        """The printed formula as LaTeX; ``scaled=True``: the raw scaled tree (see
        :func:`jaxtree.export.to_latex`)."""
        self._check_fitted()
        kwargs.setdefault("indicators", self._labels())
        kwargs.setdefault("lhs", _formula.latex_var(self._target_name()))
        return export_.to_latex(self.model_, **kwargs)

    def save(self, path) -> None:
        """Writes the fitted model to ``path`` as versioned JSON (see :func:`jaxtree.load`)."""
        self._check_fitted()
        extra = {"params": self._saved_params(),
                 "history": [float(h) for h in self.history_],
                 "target_name": self._target_name()}
        model_.save(self.model_, path, extra, encoding=self._saved_encoding())
