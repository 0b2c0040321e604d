"""``TreeClassifier``: the paper's second prediction problem on the same search.

The paper (Section 3) uses one model for regression (``t(z) = z``) and classification
(``t(z) = sign(z)``, labels ``y in {-1, +1}``). A fitted classifier holds a tree whose value
``f(x) = w0 + T(x)`` is the *decision function* (a logit for the logistic loss, a margin for
the margin loss); the predicted class is ``sign(f)``.

How it is searched (:mod:`jaxtree.losses`): every iteration of :func:`jaxtree.search.step`
with ``Config(loss=...)`` scores all ``2*D*p*q`` insertions by one Newton step each (the
least-squares scorer on the working response ``z = f - g/h`` with weights ``w*h``), inserts
the best, and refines all weights on the true loss (projected L-BFGS, ``|w| <= 1``; or the
paper's coordinate descent, iteratively reweighted). The margin loss
``min(1, max(0, 1 - y f))`` is reported; its search uses the squared hinge (see
:mod:`jaxtree.losses` for why).

Decisions:

* **Multiclass is one-versus-rest**: ``K > 2`` classes give ``K`` binary searches of class
  ``c`` against the rest, all ``K`` run as one vmapped step per iteration (the batched
  search of :func:`jaxtree.fit_batch`; the covariates are shared, only the labels and
  Newton weights differ per member). A shared-structure multinomial tree was not built:
  its Newton step couples the ``K`` logits through a ``K x K`` Hessian per row, so it is
  not the same three matrix products; one-versus-rest reuses the scorer unchanged.
* Covariates are scaled to ``[0, 1]`` as for regression; the decision function is not
  scaled (``y_center = 0``, ``y_scale = 1`` in the :class:`jaxtree.model.TreeModel`), so
  :func:`jaxtree.predict` of a classifier's ``model_`` is its decision function.
* Separable data: the logistic loss has no finite minimiser, but the box ``|w| <= 1`` and
  the bounded basis keep ``|T| <= k + 1``; only the intercept is unbounded, and on data
  with both classes its optimum is finite (a larger ``|w0|`` misclassifies a whole class).
  So logits stay finite and the fit ends with the weights on the box (tested).
* Measured consequence of the box: a tree's logit is at most ``|w0| + k + 1`` (sums) and
  usually far less (products shrink), so on (nearly) separable data the logistic search may
  spend an insertion repeating a leaf that is already at ``|w| = 1``, only to sharpen the
  probabilities (``x1 + x2 > 1`` with ``k = 3``: ``-cos(pi x1)`` and ``-cos(pi x2)`` twice
  each). A free output scale (as ``y_scale`` for regression) would remove that; not done.
* The logistic search starts from the intercept ``log(p / (1 - p))`` (the weighted class
  prior); the margin search from 0.
"""

from __future__ import annotations

import sys
import warnings
from typing import Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np

from jaxtree import _compilation_cache
from jaxtree import _scaling as scaling_
from jaxtree import _validation as V
from jaxtree import export as export_
from jaxtree import losses as losses_
from jaxtree import model as model_
from jaxtree import program as prog
from jaxtree import scoring, search
from jaxtree.estimator import ParamsProtocol, check_params

__all__ = [
    "CLASSIFIER_CONSTRAINTS",
    "decision_function",
    "load",
    "predict_proba",
    "TreeClassifier",
]


def _warn_class(name: str) -> type:
    """scikit-learn's warning class ``name`` when scikit-learn is loaded, else UserWarning."""
    cls = getattr(sys.modules.get("sklearn.exceptions"), name, None)
    return cls if isinstance(cls, type) and issubclass(cls, Warning) else UserWarning


def _not_fitted(name: str) -> type:
    theirs = getattr(sys.modules.get("sklearn.exceptions"), "NotFittedError", None)
    if isinstance(theirs, type) and not issubclass(V.NotFittedError, theirs):
        return type("NotFittedError", (V.NotFittedError, theirs), {})
    return V.NotFittedError


def check_labels(y, n_samples: int):
    """Validates class labels; returns ``(classes, index)``.

    Any label type numpy can sort (ints, strings, booleans, integral floats). ``classes`` is
    sorted (``numpy.unique``); ``index[i]`` is row ``i``'s position in it.

    Raises:
      ValueError: no y, wrong shape or length, NaN, continuous targets ("Unknown label
        type"), fewer than two classes.
      TypeError: labels of mixed, incomparable types.
    """
    if y is None:
        raise ValueError("fit requires y to be passed, but the target y is None. TreeClassifier "
                         "is supervised: call fit(X, y) with one class label per row.")
    arr = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        warnings.warn("A column-vector y was passed when a 1d array was expected; it was used "
                      "as y.ravel(). Pass y with shape (n_samples,) to silence this.",
                      _warn_class("DataConversionWarning"), stacklevel=3)
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"y must be 1-D (n_samples,) class labels; got shape {arr.shape}. "
                         "Multi-output and multilabel classification are not supported.")
    if arr.shape[0] != n_samples:
        raise ValueError(f"X has {n_samples} rows but y has {arr.shape[0]}; they must match "
                         "(one class label per row of X).")
    if arr.dtype.kind == "c":
        raise V.ComplexDataError("Complex data not supported: y holds complex numbers.")
    if arr.dtype.kind == "f" or (arr.dtype.kind == "O" and all(isinstance(v, (float, np.floating))
                                                              for v in arr[:50])):
        fl = arr.astype(np.float64)
        if not np.isfinite(fl).all():
            raise ValueError("Input y contains NaN or infinity; every row needs a class label.")
        if (fl != np.round(fl)).any():
            raise ValueError("Unknown label type: 'continuous'. TreeClassifier needs class labels "
                             "(ints, strings, booleans); for a real-valued target use "
                             "TreeRegressor.")
    if arr.dtype.kind == "O":
        if any(v is None or (isinstance(v, float) and np.isnan(v)) for v in arr):
            raise ValueError("y contains missing labels (None or NaN); every row needs a class.")
        try:
            classes, index = np.unique(arr, return_inverse=True)
        except TypeError:
            raise TypeError("y mixes label types that cannot be compared (e.g. strings and "
                            "numbers); use one type for all labels.") from None
    else:
        classes, index = np.unique(arr, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(f"TreeClassifier needs samples of at least 2 classes in y; got only one "
                         f"class: {classes[0].item() if hasattr(classes[0], 'item') else classes[0]!r}. Check the labels (or the sample selection).")
    return classes, np.asarray(index, np.int64).reshape(-1)


CLASSIFIER_CONSTRAINTS = {
    "loss": lambda v, n: V.check_choice(v, n, losses_.CLASSIFICATION_LOSSES),
    "engine": lambda v, n: V.check_choice(v, n, ("jax",)),
    "search": lambda v, n: V.check_choice(v, n, ("greedy",)),
}
"""The classifier's own constraints; the shared ones are
:data:`jaxtree.estimator.PARAMETER_CONSTRAINTS` (checked by :func:`check_params`)."""


def _ovr_step(programs, data: scoring.Data, ys, basis, config: search.Config):
    """:func:`jaxtree.search.step` vmapped over ``K`` one-versus-rest label vectors
    ``ys (K, n_chunks, m)`` with shared covariates and weights."""
    return jax.vmap(lambda p, y: search.step(p, data._replace(y=y), basis, config))(programs, ys)


_ovr_step_jit = jax.jit(_ovr_step, static_argnames=("basis", "config"))


def decision_function(model: model_.TreeModel, X, *, clip: bool = True) -> jax.Array:
    """The decision function of a classifier's model: ``(n,)`` for one tree, ``(n, K)`` for a
    one-versus-rest batch (a model with a leading class axis). Pure: ``jit``/``vmap``/``grad``.
    """
    if model.program.weight.ndim == 1:
        return model_.predict(model, X, clip=clip)
    if V.is_host_array(X):
        X = V.check_X(X, n_features=model.x_min.shape[-1], allow_1d=True)
    x = jnp.asarray(X, model.x_min.dtype)
    out = jax.vmap(lambda m: model_.predict(m, x, clip=clip))(model)
    return jnp.moveaxis(out, 0, -1)


def predict_proba(model: model_.TreeModel, X, *, loss: str = "logistic",
                  clip: bool = True) -> jax.Array:
    """Class probabilities ``(n, K)`` of a classifier's model (pure; see
    :meth:`TreeClassifier.predict_proba` for what the margin loss returns)."""
    return _proba(decision_function(model, X, clip=clip), loss,
                  binary=model.program.weight.ndim == 1)


def _proba(f, loss: str, binary: bool, xp=jnp):
    """Probabilities from decision values (``xp``: ``jnp``, or ``np`` for float64 on the host)."""
    if loss == "logistic":
        s = 0.5 * (1 + xp.tanh(0.5 * f))  # the sigmoid, without overflow for large |f|
    else:
        s = xp.clip((1 + f) / 2, 0, 1)
    if binary:
        return xp.stack([1 - s, s], -1)
    tot = xp.sum(s, -1, keepdims=True)
    k = s.shape[-1]
    return xp.where(tot > 0, s / xp.where(tot > 0, tot, 1), 1.0 / k)


class TreeClassifier(ParamsProtocol):
    """Compositional nonparametric classification (Xu, Honorio and Wang, Section 3).

    The decision function is ``f(x) = w0 + T(x)``, a tree of ``k`` operations over leaves
    ``w * phi_i(x_j)`` (``|w| <= 1``) found by the greedy search with Newton-step candidate
    scoring (:mod:`jaxtree.losses`); the class is ``sign(f)``. More than two classes: one tree
    per class against the rest, searched as one batch (see the module docstring).

    Args:
      k: number of operations per tree.
      loss: ``"logistic"`` (default; calibrated probabilities) or ``"margin"`` (the paper's
        ``min(1, max(0, 1 - y f))``, reported; searched through the squared hinge).
      basis, refine, chunk_size, coordinate_sweeps, refine_steps, precision, clip: as for
        :class:`jaxtree.TreeRegressor` (``refine="coordinate"`` is the paper's coordinate
        descent, iteratively reweighted: :func:`jaxtree.refine.coordinate_newton`).
      engine: ``"jax"`` (the only engine for classification).
      search: ``"greedy"`` (the paper's search; the only one for classification).
      verbose: print each iteration's training loss to stderr when > 0.
      callback: ``callback(iteration, loss, info) -> bool`` after each iteration of a binary
        fit (not called for more than two classes); True stops early.
      random_state: unused (the search is deterministic); kept for scikit-learn tools.

    Shape terms (``TreeRegressor(shapes=...)``), streaming, sharding and held-out size
    selection are regression-only for now.

    Attributes (after ``fit``):
      classes_: the sorted class labels. n_features_in_, feature_names_in_: as for
      :class:`jaxtree.TreeRegressor`.
      model_: the fitted :class:`jaxtree.model.TreeModel` whose prediction is the decision
        function (for ``K > 2`` classes every array has a leading class axis).
      history_: the training loss (mean log-loss, or the mean ramp loss for ``"margin"``)
        after the first leaf and each insertion; ``(K, k+1)`` for ``K > 2`` (per class
        against the rest). choices_: the chosen insertions (per class for ``K > 2``).
      status_: the search's :class:`jaxtree.search.Status`. k_: operations of the tree(s).

    Examples:
      >>> import numpy as np, jaxtree
      >>> X = np.random.default_rng(0).uniform(size=(200, 2))
      >>> y = np.where(X[:, 0] + X[:, 1] > 1, "yes", "no")
      >>> clf = jaxtree.TreeClassifier(k=3).fit(X, y)
      >>> clf.classes_.tolist(), bool(clf.score(X, y) > 0.9)
      (['no', 'yes'], True)
    """

    def __init__(self, k: int = 10, *, loss: str = "logistic", basis=None,
                 refine: Optional[str] = "optax", engine: str = "jax", chunk_size: int = 2048,
                 coordinate_sweeps: int = 3, refine_steps: int = 20, precision: str = "highest",
                 clip: bool = True, verbose: int = 0, callback: Optional[Callable] = None,
                 random_state=None, search: str = "greedy"):
        self.k = k
        self.loss = loss
        self.basis = basis
        self.refine = refine
        self.engine = engine
        self.chunk_size = chunk_size
        self.coordinate_sweeps = coordinate_sweeps
        self.refine_steps = refine_steps
        self.precision = precision
        self.clip = clip
        self.verbose = verbose
        self.callback = callback
        self.random_state = random_state
        self.search = search

    # -------------------------------------------------------------- scikit-learn protocol

    def __sklearn_tags__(self):
        """scikit-learn's estimator tags (imported lazily: only scikit-learn calls this)."""
        from sklearn.utils import ClassifierTags, Tags, TargetTags

        return Tags(estimator_type="classifier", target_tags=TargetTags(required=True),
                    classifier_tags=ClassifierTags())

    def _check_params(self):
        params = self.get_params()
        for name, check in CLASSIFIER_CONSTRAINTS.items():
            check(params[name], name)
        return check_params({k: v for k, v in params.items() if k != "engine"})

    # ---------------------------------------------------------------------------- fit

    def fit(self, X, y, sample_weight=None):
        """Fits the classifier.

        Args:
          X: ``(n_samples, n_features)`` numbers; n >= 2.
          y: ``(n_samples,)`` class labels of any sortable type (at least two classes).
          sample_weight: optional ``(n_samples,)`` non-negative weights (a weight of ``m``
            is the same as ``m`` copies of the row).

        Returns:
          self.

        Raises:
          ValueError / TypeError: invalid data, labels or hyperparameters, with the fix.
        """
        _compilation_cache.enable()
        params = self._check_params()
        names = V.frame_feature_names(X)
        xa = V.check_X(X, min_samples=2)
        n, p = xa.shape
        classes, idx = check_labels(y, n)
        sw = V.check_sample_weight(sample_weight, n)
        dtype = V.float_dtype_for(np.asarray(xa), bool(jax.config.jax_enable_x64))
        V.check_representable(xa, np.zeros(n), dtype, feature_names=names)
        sc = scaling_.fit(xa, np.zeros(n), sw)  # y_center 0, y_scale 1: f is not scaled
        x_max = np.asarray(sc.x_min) + 1.0 / np.asarray(sc.x_scale)
        basis = params.basis.bind(sc.x_min, x_max)
        xs, _ = scaling_.apply(sc, xa, np.zeros(n), sw)
        w = np.ones(n) if sw is None else sw
        K = len(classes)
        # One-versus-rest labels +-1: one row for two classes (class 1 positive), else K rows.
        pos = (idx[None, :] == (np.arange(K)[:, None] if K > 2 else np.ones((1, 1))))
        ypm = np.where(pos, 1.0, -1.0)
        data = scoring.chunk(jnp.asarray(xs, dtype), jnp.zeros(n, dtype),
                             jnp.asarray(w, dtype), chunk_size=params.chunk)
        m_total = data.y.size
        ys = jnp.asarray(np.pad(ypm, ((0, 0), (0, m_total - n)), constant_values=1.0),
                         dtype).reshape((ypm.shape[0],) + data.y.shape)
        if self.loss == "logistic":
            prior = np.clip((pos * w).sum(1) / w.sum(), 1e-6, 1 - 1e-6)
            a0 = np.log(prior / (1 - prior))
        else:
            a0 = np.zeros(ypm.shape[0])
        cfg = search.Config(max_k=params.k, refine=self.refine, coordinate_sweeps=params.sweeps,
                            refine_steps=params.steps, precision=scoring.PRECISIONS[self.precision],
                            loss=self.loss,
                            buckets=scoring.buckets_for(n, p, basis.q, params.k) if K == 2 else ())
        empty = prog.empty_program(params.k, dtype)
        feature_names = names or tuple(f"x{j + 1}" for j in range(p))
        self._bar = _Progress(params.k, self.verbose, self.loss)
        try:
            if K == 2:
                start = empty._replace(intercept=jnp.asarray(a0[0], dtype))
                data = data._replace(y=ys[0])
                res = search.run(lambda pr: search.step_jit(pr, data, basis, cfg), start,
                                 params.k + 1, self._progress)
            else:
                start = jax.tree_util.tree_map(lambda a: jnp.broadcast_to(a, (K,) + a.shape), empty)
                start = start._replace(intercept=jnp.asarray(a0, dtype))

                def step(pr):
                    out = _ovr_step_jit(pr, data, ys, basis, cfg)
                    self._bar.tick()
                    return out

                res = search.run(step, start, params.k + 1)
        finally:
            self._bar.close()
            del self._bar
        model = model_.TreeModel.from_scaling(res.program, sc, dtype, basis, feature_names)
        if K > 2:
            model = _batched(model, K)
        status = search.Status(int(np.bitwise_or.reduce(np.atleast_1d(np.asarray(res.status)))))
        if status & search.Status.NO_CANDIDATE:
            warnings.warn(f"{search.message(status & search.Status.NO_CANDIDATE)}.",
                          RuntimeWarning, stacklevel=2)
        self._set_fitted(model, classes, res.history, res.choices, status, names)
        return self

    def _set_fitted(self, model, classes, history, choices, status, names):
        self.model_ = model
        self.classes_ = classes
        self.history_ = np.asarray(history, np.float64)
        self.choices_ = list(choices)
        self.status_ = search.Status(int(status))
        slots = np.atleast_1d(np.asarray(model.program.n_slots))
        self.k_ = int((slots.max() - 1) // 2) if slots.max() > 0 else 0
        self.n_features_in_ = model.n_features
        if names is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return self

    def _progress(self, it, loss, info):
        self._bar.update(it, loss)
        return bool(self.callback(it, loss, info)) if self.callback is not None else False

    # ------------------------------------------------------------------------ predict

    def _check_fitted(self):
        if not hasattr(self, "model_"):
            raise _not_fitted("NotFittedError")(
                "This TreeClassifier is not fitted yet. Call fit(X, y) before predict, "
                "decision_function, predict_proba, score, formula or save.")

    def decision_function(self, X) -> np.ndarray:
        """The decision function ``f(x)``: float64 ``(n,)`` for two classes (positive
        favours ``classes_[1]``; the logit for the logistic loss), ``(n, K)`` for more (one
        column per class against the rest)."""
        self._check_fitted()
        names = getattr(self, "feature_names_in_", None)
        V.check_feature_names(X, names, type(self).__name__)
        xa = V.check_X(X, n_features=self.n_features_in_, feature_names=names)
        f = decision_function(self.model_, jnp.asarray(xa, self.model_.x_min.dtype),
                              clip=self.clip)
        return np.asarray(f, np.float64)

    def predict(self, X) -> np.ndarray:
        """Predicted class labels ``(n,)`` (``classes_[1]`` where ``f > 0`` for two classes;
        the class with the largest decision function for more)."""
        f = self.decision_function(X)
        return self.classes_[(f > 0).astype(np.int64) if f.ndim == 1 else np.argmax(f, 1)]

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities ``(n, K)``, columns in the order of ``classes_``.

        Logistic loss: ``sigmoid(f)`` for ``classes_[1]`` (two classes); for more classes the
        ``K`` one-versus-rest sigmoids normalised to sum to 1 (as scikit-learn's
        one-versus-rest logistic regression). Margin loss: not calibrated probabilities but
        the margin mapped to ``[0, 1]``, ``clip((1 + f) / 2, 0, 1)`` (0.5 on the decision
        boundary, 0 / 1 at margin ``-1`` / ``+1``), normalised over classes for ``K > 2``
        (uniform where all are 0); use the logistic loss for probabilities.
        """
        f = self.decision_function(X)
        return _proba(f, self.loss, binary=f.ndim == 1, xp=np)

    def predict_log_proba(self, X) -> np.ndarray:
        """``log(predict_proba(X))``."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy (weighted by ``sample_weight`` when given)."""
        pred = self.predict(X)
        ya = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y)
        ya = ya.reshape(-1) if ya.ndim == 2 and ya.shape[1] == 1 else ya
        if ya.shape != pred.shape:
            raise ValueError(f"y must have shape {pred.shape} (one label per row of X); got {ya.shape}.")
        sw = V.check_sample_weight(sample_weight, pred.shape[0])
        w = np.ones(pred.shape[0]) if sw is None else sw
        return float(np.sum(w * (pred == ya)) / np.sum(w))

    # ------------------------------------------------------------------------- exports

    def _members(self):
        """The model of each tree: one for two classes, one per class for more."""
        if self.model_.program.weight.ndim == 1:
            return [self.model_]
        K = self.model_.program.weight.shape[0]
        return [jax.tree_util.tree_map(lambda a, c=c: a[c], self.model_) for c in range(K)]

    def formula(self, digits: int = 3):
        """The decision function as text (a list, one per class, for more than two classes)."""
        self._check_fitted()
        out = [m.formula(digits) for m in self._members()]
        return out[0] if len(out) == 1 else out

    def to_sympy(self, *, probability: bool = False, **kwargs):
        """The decision function as a sympy expression in ``X``'s units
        (:func:`jaxtree.export.to_sympy`); ``probability=True`` wraps it in the logistic
        sigmoid ``1 / (1 + exp(-f))`` (logistic loss). A list for more than two classes."""
        self._check_fitted()
        out = [export_.to_sympy(m, **kwargs) for m in self._members()]
        if probability:
            import sympy as sp

            out = [1 / (1 + sp.exp(-e)) for e in out]
        return out[0] if len(out) == 1 else out

    def to_latex(self, **kwargs):
        """The decision function as LaTeX (a list for more than two classes)."""
        self._check_fitted()
        out = [export_.to_latex(m, **kwargs) for m in self._members()]
        return out[0] if len(out) == 1 else out

    def save(self, path) -> None:
        """Writes the classifier to ``path``: the versioned JSON of
        :func:`jaxtree.model.save` with a ``task`` entry (loss, classes, and one program per
        class for more than two classes); read it with :func:`jaxtree.load`."""
        self._check_fitted()
        members = self._members()
        classes = [c.item() if hasattr(c, "item") else c for c in self.classes_]
        task = {"kind": "classify", "loss": self.loss, "classes": classes,
                "programs": ([model_.program_to_dict(m.program) for m in members]
                             if len(members) > 1 else [])}
        extra = {"params": {k: v for k, v in self.get_params().items()
                            if isinstance(v, (int, float, str, bool, type(None)))},
                 "history": [float(h) for h in np.ravel(self.history_)]}
        model_.save(members[0], path, extra, task)


def _batched(model: model_.TreeModel, K: int) -> model_.TreeModel:
    """A model whose every array has a leading class axis (scaling shared)."""
    import dataclasses

    b = lambda a: jnp.broadcast_to(a, (K,) + a.shape)
    return dataclasses.replace(model, x_min=b(model.x_min), x_scale=b(model.x_scale),
                               y_center=b(model.y_center), y_scale=b(model.y_scale))


class _Progress:
    """A minimal progress report: with ``verbose > 0``, one line per iteration on stderr."""

    def __init__(self, k: int, verbose, loss: str):
        self.k, self.verbose, self.loss, self.it = k, verbose, loss, 0

    def update(self, it, value) -> None:
        self.it = it + 1
        if self.verbose:
            name = "log-loss" if self.loss == "logistic" else "ramp loss"
            print(f"[jaxtree] iteration {it:3d}/{self.k}  {name}={value:.4g}", file=sys.stderr)

    def tick(self) -> None:
        self.update(self.it, float("nan"))

    def close(self) -> None:
        pass


def load(path, custom_functions=None):
    """Loads a model file: a :class:`TreeClassifier` for a file written by
    :meth:`TreeClassifier.save` (it has a ``task`` entry), else a
    :class:`jaxtree.TreeRegressor` (:func:`jaxtree.estimator.load`).

    Raises:
      ValueError: for a file of another version, a corrupted or foreign file.
    """
    from jaxtree import estimator as estimator_

    d = model_.load_dict(path)
    if not (isinstance(d, dict) and "task" in d):
        return estimator_.load(path, custom_functions)
    m = model_.from_dict(d, custom_functions, path)
    task = model_.read_task(d, m.n_features, m.basis.q, path)
    params, hist = model_.read_extra(d, path)
    valid = set(TreeClassifier._get_param_names())
    est = TreeClassifier(**{k: v for k, v in params.items() if k in valid and k != "basis"})
    est.basis = m.basis
    est.loss = task["loss"]
    try:
        est._check_params()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: not a valid jaxtree model file: bad saved parameter: {exc}") from None
    classes = np.asarray(task["classes"])
    model = m
    if task["programs"]:
        K = len(task["programs"])
        programs = jax.tree_util.tree_map(lambda *a: jnp.stack(a), *task["programs"])
        model = _batched(m, K)
        import dataclasses

        model = dataclasses.replace(model, program=programs)
        hist = np.asarray(hist, np.float64).reshape(K, -1) if len(hist) % K == 0 else hist
    default = all(nm == f"x{j + 1}" for j, nm in enumerate(m.feature_names))
    return est._set_fitted(model, classes, hist, [], search.Status.OK,
                           None if default else m.feature_names)
