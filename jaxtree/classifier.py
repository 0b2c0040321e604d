"""``TreeClassifier``: the paper's second prediction problem on the same search.

Why over 800 lines (a debt, not a design): the classifier is not yet on the fit pipeline
(:mod:`jaxtree._fit`, issue 26); its in-memory, streamed and held-out fits are still
written here and will become the pipeline's stages with a classification loss.

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
* Tables (missing values, categories) go through the regressor's encoder
  (:mod:`jaxtree._encoding`, the same parameters and rules); the trees see its covariates.
* ``engine="reference"``: the numpy oracle (:mod:`jaxtree.reference`, "Classification") on
  the driver's state, a :class:`jaxtree.program.Program`, converted to and from the
  reference's tree each iteration, so every path after the search (models, held-out
  sizes, save/load) is shared. Tested to choose the JAX engine's insertions.
* Streamed data (a memmap or a ChunkReader): :func:`jaxtree.stream.loss_step`, the
  in-memory step with every pass read block by block; the Newton working data is computed
  per block on the device, never stored.
* Sharding (``devices=``) is the regressor's (:mod:`jaxtree.sharding`): the chunked
  covariates, weights and the one-versus-rest labels ``(K, n_chunks, m)`` have their rows
  within each chunk split over a ``"data"`` mesh, and the unchanged step (vmapped over the
  classes) runs SPMD; streamed blocks are placed the same way.
* Many data sets at once: :func:`jaxtree.fit_batch_classifier` runs this search (binary, or
  each data set's one-versus-rest trees) for ``B`` data sets in one vmapped step.
* Size selection (``validation_fraction``) is the regressor's: the same split, the
  one-standard-error rule on the held-out loss, a refit on all rows; one-versus-rest trees
  choose their sizes one class at a time (see :class:`TreeClassifier`).
* Defaults (issues 26 and 29): ``search="auto"`` and ``validation_fraction="auto"`` resolve
  by the regressor's rule (:func:`jaxtree._fit.spec.resolve_auto`): the backfit search
  (pair lookahead, replacement moves; :func:`jaxtree.search._loss_backfit` keeps a move only
  by the true loss) with 0.2 held out on in-memory fits below 10,000 rows, the greedy search
  grown to ``k`` otherwise. The engine ``"reference"`` is greedy only.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from typing import Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from jaxtree import _compilation_cache
from jaxtree import _encoding as encoding_
from jaxtree import _executables
from jaxtree import _scaling as scaling_
from jaxtree import _validation as V
from jaxtree import export as export_
from jaxtree import losses as losses_
from jaxtree import model as model_
from jaxtree import program as prog
from jaxtree import reference as reference_
from jaxtree import scoring, search
from jaxtree import sharding as sharding_
from jaxtree import stream as stream_
from jaxtree import _target
from jaxtree._base import Estimator, loaded_names, loaded_target_name, set_table, set_target_name
from jaxtree._fit import pipeline, select
from jaxtree._fit import spec as spec_
from jaxtree._fit.progress import Reporter

__all__ = [
    "CLASSIFIER_CONSTRAINTS",
    "decision_function",
    "load",
    "predict_proba",
    "TreeClassifier",
]


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
                      V.interop_class("DataConversionWarning", UserWarning), stacklevel=3)
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


SEARCHES = ("auto", "greedy", "backfit")
"""The classifier's ``search`` values (the regressor's beam is not built for a loss)."""


CLASSIFIER_CONSTRAINTS = {
    "loss": lambda v, n: V.check_choice(v, n, losses_.CLASSIFICATION_LOSSES),
    "engine": lambda v, n: V.check_choice(v, n, ("jax", "reference")),
    "search": lambda v, n: V.check_choice(v, n, SEARCHES),
    "validation_fraction": spec_.check_fraction,
}
"""The classifier's own constraints; the shared ones are
:data:`jaxtree.estimator.PARAMETER_CONSTRAINTS` (checked by :func:`check_params`)."""


def check_classifier_params(params: dict):
    """Checks a classifier's hyperparameters (:data:`CLASSIFIER_CONSTRAINTS`, then the shared
    table) and returns the ones every path needs (:class:`jaxtree._fit.spec.Params`)."""
    for name, check in CLASSIFIER_CONSTRAINTS.items():
        check(params[name], name)
    if params["engine"] == "reference" and params["refine"] == "optax":
        raise ValueError("engine='reference' runs the paper's algorithm in numpy: use "
                         "refine='coordinate' or refine=None (refine='optax' needs "
                         "engine='jax').")
    if params["engine"] == "reference" and params["search"] == "backfit":
        raise ValueError("engine='reference' runs the paper's greedy algorithm in numpy: use "
                         "search='greedy' (or 'auto', which is 'greedy' there); "
                         "search='backfit' needs engine='jax'.")
    if params["engine"] == "reference" and params["devices"] is not None:
        raise ValueError("devices= shards the rows of the JAX engine's search; "
                         "engine='reference' runs in numpy on the host: use engine='jax', "
                         "or devices=None.")
    return spec_.check_params({k: v for k, v in params.items() if k != "engine"})


def classifier_config(hyper: dict, params, n: int, p: int, q: int, K: int,
                      search_: str = "greedy") -> search.Config:
    """The search configuration of a classifier fit (``hyper``: its ``get_params()``;
    ``search_``: the resolved search, ``"greedy"`` or ``"backfit"``,
    :func:`jaxtree.search.search_config` with ``p*q`` basis columns)."""
    return search.search_config(search_, params.k, p * q, refine=hyper["refine"],
                                coordinate_sweeps=params.sweeps, refine_steps=params.steps,
                                precision=scoring.PRECISIONS[hyper["precision"]],
                                loss=hyper["loss"],
                                buckets=scoring.buckets_for(n, p, q, params.k) if K == 2 else ())


def ovr_step(programs, data: scoring.Data, ys, basis, config: search.Config, max_ops=None):
    """:func:`jaxtree.search.step` vmapped over ``K`` one-versus-rest label vectors
    ``ys (K, n_chunks, m)`` with shared covariates and weights. ``max_ops``: None, or int
    ``(K,)`` the most operations each tree may hold (a tree at its bound keeps its tree with
    status ``FULL``).

    With pair lookahead (``search="backfit"``) the pair scoring runs only while some tree is
    small enough for it (as :func:`jaxtree.batch.fit_batch`'s step: under ``vmap`` the
    step's own ``lax.cond`` becomes a ``select`` that would score pairs every iteration; this
    ``lax.cond`` is not batched, and a tree that may not take a pair moves the same either
    way)."""
    def vstep(cfg):
        if max_ops is None:
            return jax.vmap(lambda p, y: search.step(p, data._replace(y=y), basis, cfg))(
                programs, ys)
        return jax.vmap(lambda p, y, m: search.step(p, data._replace(y=y), basis, cfg, m))(
            programs, ys, max_ops)

    if not config.pair_leaves:
        return vstep(config)
    small = (programs.n_slots > 0) & (jax.vmap(prog.n_leaves)(programs) <= config.pair_max_leaves)
    return jax.lax.cond(jnp.any(small), lambda: vstep(config),
                        lambda: vstep(config._replace(pair_leaves=0)))


_ovr_step_jit = jax.jit(ovr_step, static_argnames=("basis", "config"))
_ovr_step_cached = _executables.cached(_ovr_step_jit, static_argnums=(3, 4))


def decision_function(model: model_.TreeModel, X, *, clip: bool = True) -> jax.Array:
    """The decision function of a classifier's model: ``(n,)`` for one tree, ``(n, K)`` for a
    one-versus-rest batch (a model with a leading class axis). Pure: ``jit``/``vmap``/``grad``.
    """
    if model.program.weight.ndim == 1:
        return model_.predict(model, X, clip=clip)
    if V.is_host_array(X):  # the missing-value rule of jaxtree.predict (shared scaling)
        X = V.check_X(X, n_features=model.x_min.shape[-1], allow_1d=True, allow_nan=True)
        X = V.fill_missing(X, np.asarray(model.x_min).reshape(-1, model.n_features)[0],
                           refuse=model.missing == "error", names=model.feature_names)
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


class TreeClassifier(Estimator):
    """Compositional nonparametric classification (Xu, Honorio and Wang, Section 3).

    The decision function is ``f(x) = w0 + T(x)``, a tree of ``k`` operations over leaves
    ``w * phi_i(x_j)`` (``|w| <= 1``) found by the greedy search with Newton-step candidate
    scoring (:mod:`jaxtree.losses`), on small fits with the backfit moves and a held-out size
    (the regressor's defaults, see ``search``); the class is ``sign(f)``. More than two classes: one tree
    per class against the rest, searched as one batch (see the module docstring).

    Args:
      k: number of operations per tree. In memory (engine ``"jax"``) where ``n*p*q`` is below
        :data:`jaxtree.scoring.BUCKET_MIN_WORK`, the search compiles for the rounded-up
        capacity :func:`jaxtree.program.capacity_for` ``(k)`` and the trees are cut back to
        ``2k+1`` slots, as :class:`jaxtree.TreeRegressor`'s, so that fits of nearby ``k``
        share one compiled step (the results are the exact-capacity search's).
      loss: ``"logistic"`` (default; calibrated probabilities) or ``"margin"`` (the paper's
        ``min(1, max(0, 1 - y f))``, reported; searched through the squared hinge).
      basis, refine, chunk_size, coordinate_sweeps, refine_steps, precision, clip: as for
        :class:`jaxtree.TreeRegressor` (``refine="coordinate"`` is the paper's coordinate
        descent, iteratively reweighted: :func:`jaxtree.refine.coordinate_newton`).
      engine: ``"jax"`` (compiled) or ``"reference"``: the search in plain float64 numpy
        (:func:`jaxtree.reference.step` with this loss), the oracle of the JAX engine, run
        by the same driver (the same ``history_``, ``choices_``, ``status_``, callback and
        ``validation_fraction``); it needs ``refine="coordinate"`` or None (optax is
        JAX-only) and searches one-versus-rest trees one after the other. The margin loss is
        searched through the same squared hinge on both engines.
      search: ``"auto"`` (default), ``"greedy"`` (the paper's search, one insertion at a
        time) or ``"backfit"``: pair lookahead while the tree has at most 4 leaves and up to
        2 replacement moves after every insertion (:func:`jaxtree.search.search_config`),
        each candidate scored by one Newton step on the working data of the current tree,
        and each move kept by the *true* loss after refinement: a pair only where its gain
        per operation beats the single insertion's and its loss is no higher, a replacement
        only where the loss falls, so a backfit iteration never ends above the greedy
        iteration's loss from the same tree (:func:`jaxtree.search._loss_backfit`).
        ``"auto"`` is the regressor's rule (:func:`jaxtree._fit.spec.resolve_auto`):
        ``"backfit"`` on in-memory fits of fewer than 10,000 rows (engine ``"jax"``, one
        device, at most 4,096 basis columns ``p*q``), ``"greedy"`` otherwise (streamed data,
        ``engine="reference"``, which refuses ``"backfit"``, ``devices=``). The choice is
        ``search_``.
      verbose: > 0 shows the progress bar of :class:`jaxtree.TreeRegressor` on stderr (the
        training log-loss, or ramp loss, and the chosen insertion; for ``K > 2`` classes the
        loss is the mean over the one-versus-rest trees); > 1 also writes a line per iteration.
      callback: ``callback(iteration, loss, info) -> bool`` after each iteration (iteration 0
        is the first leaf), ``loss`` the training loss of the history. Two classes: once per
        iteration, ``info`` the chosen insertion (keys :data:`jaxtree.search.CHOICE_KEYS`).
        ``K > 2`` classes: once per iteration *per class*, in the order of ``classes_``, with
        that class's tree's loss against the rest and its insertion; ``info`` also has
        ``class`` (the label) and ``class_index``. Returning True stops the search after the
        iteration (for ``K > 2``: every tree, once all classes of the iteration were called).
        With ``validation_fraction`` it is called in the selection run and again in the refit
        (iterations restart at 0), as for :class:`jaxtree.TreeRegressor`.
      random_state: seed of the held-out split when ``validation_fraction`` is set (None
        means 0: fits are deterministic); the search itself uses no randomness.
      validation_fraction: ``"auto"`` (default) is the regressor's rule: 0.2 on the fits where
        ``search="auto"`` is ``"backfit"`` (in memory, fewer than 10,000 rows, engine
        ``"jax"``, one device; at least 20 rows), whatever the search, and None otherwise;
        ``k`` is then an upper bound. The value used is ``validation_fraction_``.
        None grows every tree to ``k`` operations. A float in
        ``(0, 1)`` chooses the size from the data, as :class:`jaxtree.TreeRegressor` does: the
        same deterministic split (:func:`jaxtree._fit.select.split`, not stratified) holds out
        that fraction of the rows, the search runs to ``k`` on the rest, the held-out loss
        (mean log-loss, or mean ramp loss for ``"margin"``; weighted by ``sample_weight``) of
        every size is computed, the smallest size within one standard error of the best is
        chosen (the one-standard-error rule; the standard error is estimated from the best
        size's per-row held-out losses, since a log-loss has no closed form like the
        regressor's ``MSE sqrt(2/n)``), and the tree is refitted on all rows to that size.
        **More than two classes: each one-versus-rest tree chooses its own size** from its
        own held-out binary loss (``k_per_class_``). The trees are searched independently
        (the batch only shares the covariates), a class with a simple rule needs a smaller
        tree than a class with a complex one, and one size for all would either under-fit
        the complex class or give the simple one spurious leaves. The refit is still one
        batch to the largest size; each tree is kept after its own size.
      devices: None (one device), an int ``n`` (the first ``n`` devices), ``'all'`` or a list
        of devices, as for :class:`jaxtree.TreeRegressor`: the rows within each chunk (and
        the one-versus-rest labels) are sharded over a ``'data'`` mesh
        (:mod:`jaxtree.sharding`) and the unchanged step runs SPMD, making the one-device
        fit's choices (in memory, streamed, with ``validation_fraction``: its held-out rows
        are evaluated on one device). Engine ``"jax"`` only. Not saved with the model.
      missing, categorical_features, max_categories, min_frequency: table encoding, exactly as
        for :class:`jaxtree.TreeRegressor` (:mod:`jaxtree._encoding`): a numeric column with
        missing values gets a fill value and a 0/1 covariate ``"<col> missing"``
        (``missing="indicator"``, default; ``"error"`` refuses them); ``category``, string and
        object columns of a DataFrame (``"from_dtype"``, default; or indices, names, a mask,
        None) give one 0/1 covariate per level ``"<col>=<level>"``, rare levels grouped into
        ``"<col>=other"``. Applied in ``fit``, ``predict``, ``predict_proba``,
        ``decision_function`` and ``score``, and saved with the model.
      tol: as for :class:`jaxtree.TreeRegressor`: a tree's search stops once no candidate
        lowers the training loss by this relative amount (default ``1e-6``) or the loss
        reaches the float precision's floor (``status_`` has ``Status.CONVERGED``); None or
        0: grow to ``k``. For more than two classes each one-versus-rest tree stops on its
        own (its last move undone; the batch goes on for the others, and a stopped tree
        repeats its final loss in ``history_``). ``k`` is bounded by the rows, as the
        regressor's.

    Streaming: ``fit`` of a ``numpy.memmap`` (with ``y`` the labels in memory) or of a
    :class:`jaxtree.stream.ChunkReader` (its ``y`` the numeric labels; pass ``y=None``) reads
    the covariates ``chunk_size`` rows at a time in every pass
    (:func:`jaxtree.stream.loss_step`) and makes the in-memory fit's choices; one-versus-rest
    trees read them once per class; no table encoding, no ``validation_fraction``.
    Shape terms (``TreeRegressor(shapes=...)``) are regression-only for now. Many data sets
    of one shape are fitted at once by :func:`jaxtree.fit_batch_classifier`.

    Attributes (after ``fit``):
      classes_: the sorted class labels. n_features_in_, feature_names_in_: as for
        :class:`jaxtree.TreeRegressor` (the raw columns of ``X``, before encoding).
      encoding_: the fitted :class:`jaxtree._encoding.EncodingSpec`; encoded_feature_names_:
        the covariates the trees see (``"carrier=UA"``, ``"year missing"``, ...).
      model_: the fitted :class:`jaxtree.model.TreeModel` whose prediction is the decision
        function (for ``K > 2`` classes every array has a leading class axis).
      history_: the training loss (mean log-loss, or the mean ramp loss for ``"margin"``)
        after the first leaf and each insertion; ``(K, k+1)`` for ``K > 2`` (per class
        against the rest; with ``validation_fraction`` a tree smaller than the largest
        repeats its final loss). choices_: the chosen insertions (per class for ``K > 2``).
      search_, validation_fraction_: the search and held-out fraction this fit ran with
        (``"auto"`` resolved, see ``search`` and ``validation_fraction``).
      status_: the search's :class:`jaxtree.search.Status`. k_: operations of the (largest)
        tree; k_per_class_: ``(K,)`` operations of each tree for ``K > 2``, else None.
      row_plan_: the :class:`jaxtree.plan.RowPlan` the fit ran (as the regressor's).
      path_: with ``validation_fraction``, the selection run: one dict per size with
        ``n_ops``, ``train_loss`` (on the training part), ``val_loss`` (on the held-out
        rows), ``formula`` and ``model`` (the decision function's
        :class:`jaxtree.model.TreeModel` at that size, taking the encoded matrix); for
        ``K > 2`` a list of such paths, one per class in the order of ``classes_``. Else None.

    Examples:
      >>> import numpy as np, jaxtree
      >>> X = np.random.default_rng(0).uniform(size=(200, 2))
      >>> y = np.where(X[:, 0] + X[:, 1] > 1, "yes", "no")
      >>> clf = jaxtree.TreeClassifier(k=3).fit(X, y)
      >>> clf.classes_.tolist(), bool(clf.score(X, y) > 0.9)
      (['no', 'yes'], True)
    """

    def __init__(self, k: int = 10, *, loss: str = "logistic", basis=None,
                 refine: Optional[str] = "optax", engine: str = "jax", chunk_size="auto",
                 coordinate_sweeps: int = 3, refine_steps: int = 20, precision: str = "highest",
                 clip: bool = True, verbose: int = 0, callback: Optional[Callable] = None,
                 random_state=None, search: str = "auto",
                 validation_fraction="auto", devices=None,
                 missing: str = "indicator",
                 categorical_features="from_dtype",
                 max_categories: int = encoding_.DEFAULT_MAX_CATEGORIES,
                 min_frequency: int = encoding_.DEFAULT_MIN_FREQUENCY,
                 tol: Optional[float] = spec_.DEFAULT_TOL):
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
        self.validation_fraction = validation_fraction
        self.devices = devices
        self.missing = missing
        self.categorical_features = categorical_features
        self.max_categories = max_categories
        self.min_frequency = min_frequency
        self.tol = tol

    # -------------------------------------------------------------- scikit-learn protocol

    def __sklearn_tags__(self):
        """scikit-learn's estimator tags (imported lazily: only scikit-learn calls this)."""
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        return Tags(estimator_type="classifier", target_tags=TargetTags(required=True),
                    classifier_tags=ClassifierTags(),
                    input_tags=InputTags(allow_nan=getattr(self, "missing", None) != "error"))

    def _check_params(self):
        return check_classifier_params(self.get_params())

    # ---------------------------------------------------------------------------- fit

    def fit(self, X, y, sample_weight=None):
        """Fits the classifier.

        Args:
          X: ``(n_samples, n_features)`` table (numpy, pandas, ...); n >= 2. Missing values
            and categorical columns are encoded as for :class:`jaxtree.TreeRegressor`
            (``missing``, ``categorical_features``; :mod:`jaxtree._encoding`).
          y: ``(n_samples,)`` class labels of any sortable type (at least two classes).
          sample_weight: optional ``(n_samples,)`` non-negative weights (a weight of ``m``
            is the same as ``m`` copies of the row).

        Returns:
          self. If the fit fails or is interrupted the estimator is left as it was.

        Raises:
          ValueError / TypeError: invalid data, labels or hyperparameters, with the fix.
        """
        _compilation_cache.enable()
        params = self._check_params()
        # Data larger than memory is streamed, never materialised; the reference engine
        # (plain numpy) reads a memmap like any array.
        if stream_.is_streamable(X) and not (self.engine == "reference"
                                             and isinstance(X, np.memmap)):
            return self._fit_stream(X, y, sample_weight, params)
        names = V.frame_feature_names(X)
        xa, enc = pipeline.encode_fit(X, self.get_params())  # the regressor's table encoder
        n, p = xa.shape
        classes, idx = check_labels(y, n)
        sw = V.check_sample_weight(sample_weight, n)
        dtype = V.float_dtype_for(np.asarray(xa), bool(jax.config.jax_enable_x64))
        V.check_representable(xa, np.zeros(n), dtype,
                               feature_names=names if enc.is_identity else enc.feature_names_out)
        params, plan = spec_.planned(params, n, p, dtype, self.chunk_size, self.devices,
                                     batch=len(classes) if len(classes) > 2 else 1)  # K trees
        sc = scaling_.fit(xa, np.zeros(n), sw)  # y_center 0, y_scale 1: f is not scaled
        x_max = np.asarray(sc.x_min) + 1.0 / np.asarray(sc.x_scale)
        basis = params.basis.bind(sc.x_min, x_max)
        xs, _ = scaling_.apply(sc, xa, np.zeros(n), sw)
        w = np.ones(n) if sw is None else np.asarray(sw, np.float64)
        K = len(classes)
        ypm = one_vs_rest(idx, K)
        # "auto": the regressor's rule (jaxtree._fit.spec.resolve_auto), on the encoded table
        chosen, fraction = spec_.resolve_auto(self.search, self.validation_fraction, n, p,
                                              basis.q, in_memory=True, engine=self.engine,
                                              devices=self.devices)
        cfg = classifier_config(self.get_params(), params, n, p, basis.q, K, chosen)
        if self.engine == "jax" and scoring.compiling_dominates(n, p, basis.q):
            # Compiling costs more than searching: the regressor's capacity buckets
            # (program.capacity_for), so that nearby k (and the refit) share the compiled
            # step; the step's max_ops bounds every tree at k operations (_Job.search: a
            # pair move inserts two), and the trees are cut back to 2k+1 slots.
            cfg = cfg._replace(max_k=prog.capacity_for(params.k))
        feature_names = enc.feature_names_out  # the raw names when nothing was encoded
        with self._reporting(params, feature_names, basis) as rep:
            job = _Job(self, params, basis, cfg, dtype, sc, feature_names, classes, rep,
                       fraction)
            if fraction is None:
                res, path = job.search(xs, ypm, w, params.k), None
            else:
                res, path = job.select_and_refit(xa, xs, ypm, w)
        self._finish(res, sc, dtype, basis, feature_names, classes, names, path, enc, plan,
                     _target.name_of(y))
        self.search_, self.validation_fraction_ = chosen, fraction
        return self

    @contextlib.contextmanager
    def _reporting(self, params, feature_names, basis):
        """The progress bar and callback of one fit (:class:`jaxtree._fit.progress.Reporter`),
        closed even when the fit fails."""
        rep = Reporter(params.k, self.verbose, self.callback, feature_names, basis,
                       "log-loss" if self.loss == "logistic" else "ramp")
        try:
            yield rep
        finally:
            rep.close()

    def _finish(self, res, sc, dtype, basis, feature_names, classes, names, path, enc, plan,
                target=None):
        """The fitted attributes from a search result (every fit path ends here); ``target``:
        the labels' own name (a Series' ``name``), or None."""
        K = len(classes)
        model = model_.TreeModel.from_scaling(res.program, sc, dtype, basis, feature_names)
        if self.missing == "error":  # the model refuses NaN at predict on every path
            model = model_.with_missing_rule(model, "error")
        if K > 2:
            model = batched(model, K)
        status = search.Status(int(np.bitwise_or.reduce(np.atleast_1d(np.asarray(res.status)))))
        if status & search.Status.NO_CANDIDATE:
            warnings.warn(f"{search.message(status & search.Status.NO_CANDIDATE)}.",
                          RuntimeWarning, stacklevel=3)
        set_fitted(self, model, classes, res.history, res.choices, status, names, enc, plan,
                   target=target)
        for c, rows in enumerate([] if path is None else [path] if K == 2 else path):
            for row in rows:  # the notation of formula(): labelled, indicators
                row["formula"] = row["model"].formula(indicators=self._labels(),
                                                      lhs=self._lhs(c if K > 2 else 1))
        self.path_ = path
        return self

    def _fit_stream(self, X, y, sample_weight, params):
        """Streaming fit of a memmap / :class:`jaxtree.stream.ChunkReader` (engine ``"jax"``):
        the in-memory search with every pass read ``chunk_size`` rows at a time
        (:func:`jaxtree.stream.loss_step`); the labels and weights (``n`` numbers) are held in
        memory, the covariates never are. A ``ChunkReader``'s ``y`` holds the class labels
        (numbers). One-versus-rest trees read the covariates once per class and pass. Missing
        values as in the regressor's streamed fit (one extra pass finds NaN columns; the
        rows are then read with fills and indicators made block by block)."""
        if self.engine != "jax":
            raise ValueError("Streaming a ChunkReader needs engine='jax' (the reference engine "
                             "reads a memmap, or an array, in memory).")
        if self.search == "backfit":
            raise ValueError("search='backfit' is not supported for streamed data (a memmap or "
                             "ChunkReader) in a classifier; use search='greedy' (or 'auto', "
                             "which is 'greedy' there), or fit an in-memory array.")
        # "auto" on streamed data: "greedy", no held-out rows (the regressor's rule)
        chosen, fraction = spec_.resolve_auto(self.search, self.validation_fraction, 0, 1, 1,
                                              in_memory=False)
        pipeline.check_stream_args(X, y, sample_weight, "the labels and weights", fraction)
        params, plan = pipeline.stream_plan(X, params, self.chunk_size, self.devices)
        if isinstance(X, stream_.ChunkReader):
            x, labels, sw, chunk = X.x, np.asarray(X.y), X.sample_weight, X.chunk_size
        else:
            x, labels, sw = X, y, sample_weight
            chunk = min(params.chunk, X.shape[0]) if X.ndim and X.shape[0] else params.chunk
        if len(x.shape) != 2:
            raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {tuple(x.shape)}.")
        x, enc = pipeline.encoded_rows(x, chunk, self.missing)  # NaN: the regressor's streamed rule
        n = x.shape[0]
        classes, idx = check_labels(labels, n)
        sw = V.check_sample_weight(sw, n)
        K = len(classes)
        ypm = one_vs_rest(idx, K)
        readers = [stream_.ChunkReader(x, ypm[b], sw, chunk_size=chunk) for b in range(len(ypm))]
        sc = stream_.scaling(readers[0])  # the covariates' range; the logit is not scaled
        sc = sc._replace(y_center=np.zeros(()), y_scale=np.ones(()))
        x_max = np.asarray(sc.x_min) + 1.0 / np.asarray(sc.x_scale)
        basis = params.basis.bind(sc.x_min, x_max)
        dtype = V.float_dtype_for(np.empty(0, x.dtype), bool(jax.config.jax_enable_x64))
        cfg = classifier_config(self.get_params(), params, n, x.shape[1], basis.q, K)
        feature_names = (tuple(f"x{j + 1}" for j in range(x.shape[1])) if enc is None
                         else enc.feature_names_out)
        steps = [stream_.loss_step(r.scaled(sc, dtype), basis, cfg, dtype=dtype,
                                   devices=self.devices, chunks_per_block=params.block)
                 for r in readers]
        w = np.ones(n) if sw is None else np.asarray(sw, np.float64)
        with self._reporting(params, feature_names, basis) as rep:
            job = _Job(self, params, basis, cfg, dtype, sc, feature_names, classes, rep)
            res = job.run(_stack_steps(steps), job._start(ypm, w), params.k)
        self._finish(res, sc, dtype, basis, feature_names, classes, None, None, enc, plan,
                     _target.name_of(y))
        self.search_, self.validation_fraction_ = chosen, fraction
        return self

    # ------------------------------------------------------------------------ predict

    _fit_first = "predict, decision_function, predict_proba, score, formula or save"

    def decision_function(self, X) -> np.ndarray:
        """The decision function ``f(x)``: float64 ``(n,)`` for two classes (positive
        favours ``classes_[1]``; the logit for the logistic loss), ``(n, K)`` for more (one
        column per class against the rest). ``X`` is a table like the training one: checked
        by column names and encoded as in ``fit`` (missing values, categories)."""
        xa = self._rows(X)  # checked by column names, encoded as in fit (jaxtree._encoding)
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

    def _lhs(self, c: int) -> str:
        """The left-hand side of class ``c``'s formula: ``logit P(y = a)`` (logistic loss),
        ``margin(y = a)`` (margin loss), ``y`` the labels' name (``target_name_``)."""
        cls = self.classes_[c]
        cls = cls.item() if hasattr(cls, "item") else cls
        event = f"{self._target_name()} = {cls}"
        return f"logit P({event})" if self.loss == "logistic" else f"margin({event})"

    def formula(self, digits: Optional[int] = None, *, tol: float = 1e-3, scaled: bool = False):
        """The decision function as text, labelled with what it is: two classes give one
        line, ``logit P(y = b) = ...`` for ``classes_[1]`` (``margin(y = b) = ...`` for the
        margin loss; ``y`` is the labels' own name, ``target_name_``); more classes a list of
        one such line per class, in the order of ``classes_`` (one versus the rest). Printed
        as :meth:`jaxtree.TreeRegressor.formula` prints a regression: in ``X``'s units, table
        covariates as indicators ``[col = level]``, numbers rounded so that no decision value
        in the training range moves by more than ``tol`` (the logit's own units: the
        decision function is not scaled); ``scaled=True``: the raw tree."""
        self._check_fitted()
        members = self._members()
        out = [m.formula(digits, tol=tol, scaled=scaled, indicators=self._labels(),
                         lhs=self._lhs(c if len(members) > 1 else 1))
               for c, m in enumerate(members)]
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
        """The decision function as LaTeX, labelled as :meth:`formula`
        (``\\operatorname{logit} P(y = \\text{b}) = ...``; a list for more than two classes)."""
        self._check_fitted()
        kwargs.setdefault("indicators", self._labels())
        members = self._members()
        out = []
        for c, m in enumerate(members):
            cls = self.classes_[c if len(members) > 1 else 1]
            cls = re.sub(r"([\\_#$%&{}])", r"\\\1", str(cls.item() if hasattr(cls, "item") else cls))
            event = f"{export_.latex_var(self._target_name())} = \\text{{{cls}}}"
            lhs = (f"\\operatorname{{logit}} P({event})" if self.loss == "logistic"
                   else f"\\operatorname{{margin}}({event})")
            out.append(export_.to_latex(m, lhs=lhs, **kwargs))
        return out[0] if len(out) == 1 else out

    def save(self, path) -> None:
        """Writes the classifier to ``path``: the versioned JSON of
        :func:`jaxtree.model.save` with a ``task`` entry (loss, classes, and one program per
        class for more than two classes) and, for a table with missing values or categories,
        the ``encoding`` entry (as :meth:`jaxtree.TreeRegressor.save`); read it with
        :func:`jaxtree.load`. The size path ``path_`` is not saved, nor ``devices`` (where a
        fit ran, not part of the model: a model fitted on 4 devices loads on one)."""
        self._check_fitted()
        members = self._members()
        classes = [c.item() if hasattr(c, "item") else c for c in self.classes_]
        task = {"kind": "classify", "loss": self.loss, "classes": classes,
                "programs": ([model_.program_to_dict(m.program) for m in members]
                             if len(members) > 1 else [])}
        extra = {"params": self._saved_params(),
                 "history": [float(h) for h in np.ravel(self.history_)],
                 "target_name": self._target_name()}
        model_.save(members[0], path, extra, task, encoding=self._saved_encoding())


def set_fitted(est, model, classes, history, choices, status, names, enc, plan=None,
               target=None):
    """Sets every learned attribute of the classifier ``est`` at once (``fit``,
    ``fit_batch_classifier`` and ``load``); ``enc``: the table encoding, None for numeric
    columns as they are; ``plan``: the row plan the fit ran (None for a loaded model);
    ``target``: the labels' own name, or None (``target_name_``: see
    :func:`jaxtree._base.set_target_name`)."""
    est.model_ = model
    est.classes_ = classes
    est.history_ = np.asarray(history, np.float64)
    est.choices_ = list(choices)
    est.status_ = search.Status(int(status))
    slots = np.atleast_1d(np.asarray(model.program.n_slots))
    est.k_ = int((slots.max() - 1) // 2) if slots.max() > 0 else 0
    est.k_per_class_ = ((np.maximum(slots - 1, 0) // 2).astype(np.int64)
                        if model.program.weight.ndim == 2 else None)
    est.path_ = None
    if plan is not None:
        est.row_plan_ = plan
    set_table(est, model, enc, names)
    set_target_name(est, target)
    return est


_CHOICE_FIELDS = ("flat_index", "slot", "op", "feature", "basis", "weight", "intercept", "sse")
"""The fields of a :class:`jaxtree.reference.StepRecord` that make a search choice."""


def one_vs_rest(idx, K: int) -> np.ndarray:
    """Labels +-1 ``(B, n)``: one row for two classes (``classes_[1]`` positive), else one
    row per class against the rest."""
    pos = (idx[None, :] == (np.arange(K)[:, None] if K > 2 else np.ones((1, 1))))
    return np.where(pos, 1.0, -1.0)


def chunk_labels(ypm, shape, dtype) -> jax.Array:
    """Labels ``ypm (..., n)`` in the chunks ``shape = (n_chunks, m)`` of the covariates:
    ``(..., n_chunks, m)``; the padded rows (weight 0) get the label +1."""
    pad = shape[0] * shape[1] - ypm.shape[-1]
    widths = [(0, 0)] * (ypm.ndim - 1) + [(0, pad)]
    return jnp.asarray(np.pad(ypm, widths, constant_values=1.0),
                       dtype).reshape(ypm.shape[:-1] + tuple(shape))


def _shard(data: scoring.Data, ys, devices):
    """``(data, ys)`` with the rows within each chunk sharded over ``devices``: the data by
    :func:`jaxtree.sharding.shard_data`, the labels ``ys (B, n_chunks, m)`` the same way
    (``P(None, None, "data")``), both padded to a multiple of the device count (weight 0,
    label +1). The unchanged one-versus-rest step then runs SPMD, as the regressor's."""
    mesh = sharding_.data_mesh(devices)
    m2 = sharding_.padded_chunk(ys.shape[-1], mesh.size)
    ys = jnp.pad(ys, ((0, 0), (0, 0), (0, m2 - ys.shape[-1])), constant_values=1.0)
    spec = NamedSharding(mesh, PartitionSpec(None, None, sharding_.AXIS))
    return sharding_.shard_data(data, devices), jax.device_put(ys, spec)


def start_intercepts(loss: str, ypm, w) -> np.ndarray:
    """Float64 ``(B,)`` starting intercepts of the searches of labels ``ypm (B, n)`` with
    weights ``w`` (``(n,)`` shared, or ``(B, n)``): the logit of the weighted share of
    positive labels, ``log(p / (1 - p))`` (logistic loss), or 0 (margin loss)."""
    if loss != "logistic":
        return np.zeros(ypm.shape[0])
    prior = np.clip(((ypm > 0) * w).sum(-1) / np.sum(w, -1), 1e-6, 1 - 1e-6)
    return np.log(prior / (1 - prior))


def _restore(state, before, mask):
    """``state`` with the members ``mask (B,)`` put back to ``before`` (on the host: nothing
    is compiled)."""
    def one(a, b):
        a, b = np.asarray(a), np.asarray(b)
        return jnp.asarray(np.where(mask.reshape((-1,) + (1,) * (a.ndim - 1)), b, a))

    return jax.tree_util.tree_map(one, state, before)


def _stack_steps(steps):
    """One driver step from per-member steps (host-driven engines: the numpy reference, the
    streamed search). One member: its step. More: a step over ``B`` stacked programs that
    runs each member's step on its program and stacks the programs and the records, as the
    vmapped step of the in-memory one-versus-rest batch returns them."""
    if len(steps) == 1:
        return steps[0]

    def step(programs):
        out = [s(jax.tree_util.tree_map(lambda a, b=b: a[b], programs))
               for b, s in enumerate(steps)]
        new = jax.tree_util.tree_map(lambda *t: jnp.stack(t), *[o[0] for o in out])
        infos = [jax.device_get(o[1]) for o in out]
        stack = lambda get: np.stack([np.asarray(get(i)) for i in infos])
        choice = search.Choice(*(stack(lambda i, f=f: getattr(i.choice, f))
                                 for f in search.Choice._fields))
        return new, search.StepInfo(stack(lambda i: i.loss), choice,
                                    stack(lambda i: i.status).astype(np.int32))

    return step


def batched(model: model_.TreeModel, K: int) -> model_.TreeModel:
    """A model whose every array has a leading class axis (scaling shared)."""
    import dataclasses

    b = lambda a: jnp.broadcast_to(a, (K,) + a.shape)
    return dataclasses.replace(model, x_min=b(model.x_min), x_scale=b(model.x_scale),
                               y_center=b(model.y_center), y_scale=b(model.y_scale))


def _row_losses(loss: str, y, f):
    """Per-row reported loss in float64 on the host: the log-loss ``log(1 + e^{-y f})`` or the
    paper's ramp ``min(1, max(0, 1 - y f))``; ``y = +-1``."""
    yf = np.asarray(y, np.float64) * np.asarray(f, np.float64)
    return np.logaddexp(0.0, -yf) if loss == "logistic" else np.clip(1.0 - yf, 0.0, 1.0)


def _one_se_choice(row_losses, w):
    """``(index, val, se)``: the held-out loss ``val[s]`` of every size ``s`` (the weighted mean
    of ``row_losses (S, n_held)``), and the smallest size within one standard error of the
    best (the one-standard-error rule).

    The standard error is the best size's own: the weighted standard deviation of its per-row
    losses over ``sqrt(n_eff)``, ``n_eff = (sum w)^2 / sum w^2`` (Kish's effective count; the
    number of held-out rows without weights). :func:`jaxtree._fit.select.choose_size` uses the
    Gaussian closed form ``MSE sqrt(2 / n)`` of a squared error instead; a log-loss or ramp
    loss has no such form, so it is estimated from the rows.
    """
    L = np.asarray(row_losses, np.float64)
    w = np.asarray(w, np.float64)
    tot = w.sum()
    val = L @ w / tot
    best = int(np.argmin(val))
    var = np.sum(w * (L[best] - val[best]) ** 2) / tot
    se = float(np.sqrt(var * np.sum(w ** 2)) / tot)  # sqrt(var / n_eff)
    return int(np.flatnonzero(val <= val[best] + se)[0]), val, se


def member(model: model_.TreeModel, c: int) -> model_.TreeModel:
    """Member ``c`` of a one-versus-rest model (every array has a leading class axis), or of
    any batched pytree (``jaxtree.batch`` uses it for its members)."""
    return jax.tree_util.tree_map(lambda a: a[c], model)


class _Job:
    """The searches of one ``fit``: the plain search (binary, or ``K`` one-versus-rest trees as
    one vmapped batch) and the held-out size selection with its refit, sharing the settings."""

    def __init__(self, est, params, basis, cfg, dtype, sc, feature_names, classes, rep,
                 fraction=None):
        self.est, self.params, self.basis, self.cfg, self.dtype = est, params, basis, cfg, dtype
        self.sc, self.feature_names, self.classes = sc, feature_names, classes
        self.rep = rep  # the progress bar and callback (a binary fit's driver hook)
        self.fraction = fraction  # the resolved validation_fraction (select_and_refit)
        # the stop on negligible progress (tol; the logit is not scaled: y_bound 1)
        self.stop = search.stop_rule(getattr(est, "tol", None), dtype)

    def _data(self, xs, ypm, w, rows=None):
        """Chunked covariates and weights, and the ``(B, n_chunks, m)`` +-1 labels; with
        ``devices`` the rows within each chunk are sharded (:func:`_shard`); ``rows``:
        chunked as that many rows (:func:`jaxtree.scoring.chunk`)."""
        n, dtype = xs.shape[0], self.dtype
        rows, cols = self._buckets(n if rows is None else rows, xs.shape[1])
        # numpy in: padded on the host (nothing compiled), with the buckets' padding columns
        data = scoring.chunk(np.asarray(xs), np.zeros(n), np.asarray(w), dtype=dtype,
                             chunk_size=self.params.chunk, rows=rows, columns=cols)
        ys = chunk_labels(ypm, data.y.shape, dtype)
        if self.est.devices is not None:
            return _shard(data, ys, self.est.devices)
        return data, ys

    def _buckets(self, rows: int, p: int) -> tuple:
        """``(rows, columns)`` to chunk a search's data as: the row and column buckets where
        compiling dominates (:func:`jaxtree._fit.select.column_bucket`, the regressor's rule;
        :func:`jaxtree.scoring.rows_for`), else ``(rows, None)``."""
        cols = select.column_bucket(rows, p, self.basis)
        if not cols:
            return rows, None
        # With a pair screen, rows are padded only where its stride stays (the regressor's rule)
        padded = select.tree_rows(rows, p, self.basis.q, self.params.chunk, self._pair_rows())
        return (rows if padded is None else padded), cols

    def _pair_rows(self) -> int:
        """The pair screen's rows (``search="backfit"``), 0 without pairs."""
        return self.cfg.pair_rows if self.cfg.pair_leaves else 0

    def _start(self, ypm, w):
        """The empty tree(s): intercept ``log(p / (1 - p))`` (logistic) or 0 (margin)."""
        a0 = start_intercepts(self.est.loss, ypm, w)
        empty = prog.empty_program(self.cfg.max_k, self.dtype)
        if ypm.shape[0] == 1:
            return empty._replace(intercept=jnp.asarray(a0[0], self.dtype))
        B = ypm.shape[0]
        start = jax.tree_util.tree_map(lambda a: jnp.broadcast_to(a, (B,) + a.shape), empty)
        return start._replace(intercept=jnp.asarray(a0, self.dtype))

    def run(self, step, start, k: int, keep_states: bool = False,
            sizes=None) -> search.SearchResult:
        """The driver over ``step`` from ``start`` for the first leaf and ``k`` insertions:
        :func:`jaxtree.search.run` with the estimator's callback for one tree, once per
        iteration with every class's callback for a one-versus-rest batch (``sizes``: see
        :meth:`_run_ovr`)."""
        if np.ndim(start.weight) == 1:
            return search.run(step, start, k + 1, self.rep, keep_states=keep_states,
                              stop=self.stop)
        return self._run_ovr(step, start, k + 1, keep_states, sizes)

    def trim(self, program):
        """``program`` cut back to the ``2k+1`` slots of ``k = params.k`` on the host
        (:func:`jaxtree.program.trim`; unchanged when the search ran at exactly ``k``)."""
        return prog.trim(program, self.params.k)

    def search(self, xs, ypm, w, k: int, keep_states: bool = False,
               rows=None, sizes=None) -> search.SearchResult:
        """The first leaf and ``k`` insertions on these rows (labels ``ypm (B, n)``).

        The final program is cut back to ``2 * params.k + 1`` slots (:meth:`trim`) when the
        search ran in the rounded-up capacity :func:`jaxtree.program.capacity_for` ``(k)``;
        the step's ``max_ops`` (traced: every ``k`` shares the compiled step) bounds each tree
        at ``k`` operations (a pair move inserts two; a tree at its bound is done, status
        ``FULL`` not reported). The kept states (``keep_states``) keep the search's capacity.
        ``rows``: the rows chunked as that many (:meth:`_data`). ``sizes``: int ``(B,)``,
        each one-versus-rest tree's own bound (the refit of :meth:`select_and_refit`)."""
        start = self._start(ypm, w)
        if self.est.engine == "reference":
            return self.run(self._reference_step(xs, ypm, w), start, k, keep_states, sizes)
        data, ys = self._data(xs, ypm, w, rows)
        basis, cfg = self.basis, self.cfg
        if ypm.shape[0] == 1:
            one = data._replace(y=ys[0])
            limit = np.int32(k)
            res = search.run(lambda pr: search.step_cached(pr, one, basis, cfg, limit), start,
                             k + 1, self.rep, keep_states=keep_states, stop=self.stop)
        else:
            limit = np.full(ypm.shape[0], k, np.int32) if sizes is None else np.asarray(
                sizes, np.int32)
            res = self._run_ovr(lambda pr: _ovr_step_cached(pr, data, ys, basis, cfg, limit),
                                start, k + 1, keep_states, sizes)
        choices = select.unpadded_choices(res.choices, xs.shape[1], data.x.shape[-1],
                                          basis.q)
        return res._replace(program=self.trim(res.program), choices=choices)

    def _reference_step(self, xs, ypm, w):
        """The numpy reference's iteration (:func:`jaxtree.reference.step` with this loss) as
        a driver step over the same state as the JAX engine's, a :class:`Program` (``B``
        stacked for one-versus-rest), so both engines share :func:`jaxtree.search.run`, the
        history, the choice records, the status and the callback. The members are searched
        one after the other (plain numpy, float64)."""
        xdt = jnp.float64 if jax.config.jax_enable_x64 else jnp.float32
        phi = np.asarray(self.basis.evaluate(jnp.asarray(xs, xdt)), np.float64)
        ypm = np.asarray(ypm, np.float64)
        w = np.asarray(w, np.float64)
        cfg, loss = self.cfg, self.est.loss

        def one(arrays, y):
            tree = reference_.ReferenceTree(
                *(np.asarray(arrays[f], np.int64) for f in ("op", "left", "right", "feature",
                                                             "basis")),
                np.asarray(arrays["weight"], np.float64), float(arrays["intercept"]),
                int(arrays["n_slots"]))
            tree, r = reference_.step(tree, phi, y, w, max_k=cfg.max_k, refine=cfg.refine,
                                      sweeps=cfg.coordinate_sweeps, loss=loss)
            new = prog.from_arrays(tree.op, tree.left, tree.right, tree.feature, tree.basis,
                                   tree.weight, tree.intercept, tree.n_slots, dtype=self.dtype)
            return new, r

        def member(b):
            def step(program):
                new, r = one(prog.to_numpy(program), ypm[b])
                choice = search.Choice(*(np.asarray(getattr(r, f)) for f in _CHOICE_FIELDS))
                return new, search.StepInfo(np.asarray(r.loss), choice, np.int32(r.status))
            return step

        return _stack_steps([member(b) for b in range(ypm.shape[0])])

    def _run_ovr(self, step, start, n_iter: int, keep_states: bool,
                 sizes=None) -> search.SearchResult:
        """The ``K`` one-versus-rest searches: the driver's loop (:func:`jaxtree.search.run`'s
        rules) over the batched ``step``, one host transfer per iteration, so that the
        callback sees every class after every iteration and can stop the search.

        Each tree's search ends on its own: when its tree is full (its ``max_ops`` bound or
        the capacity; status ``FULL`` is not reported, as by the driver), when it reaches
        ``sizes[b]`` operations (``sizes``: int ``(B,)`` or None), or by the ``tol`` stop
        (:class:`jaxtree.search.Stop`, per tree: an iteration that lowers its loss by less
        than ``rtol`` relative is undone and ends it, as does a loss at most ``atol``;
        ``Status.CONVERGED``). A tree whose search has ended keeps its program (any move the
        batched step made for it is undone on the host), repeats its last loss in the history
        and records no more choices; the loop ends once every tree's search has."""
        B = int(np.shape(start.n_slots)[0])
        stop = self.stop
        state, hist, choices, states = start, [], [[] for _ in range(B)], []
        status = np.zeros(B, np.int64)
        done = np.zeros(B, bool)
        last = np.full(B, np.nan)  # the previous judged loss per tree (NaN: none)
        prev = np.full(B, np.nan)  # the previous recorded loss per tree
        for it in range(n_iter):
            before = state
            state, info = step(state)
            host = jax.device_get(info)  # one transfer
            loss = np.asarray(host.loss, np.float64).reshape(B)
            flags = np.asarray(host.status, np.int64).reshape(B)
            full = (flags & search.STATUS_FULL) != 0
            judged = ~done & (flags == search.STATUS_OK)
            undone = np.zeros(B, bool)
            if stop is not None:
                undone = judged & ~np.isnan(last) & ~(loss < last * (1.0 - stop.rtol))
            ended = done | undone  # trees whose move of this iteration is not kept
            if ended.any():
                state = _restore(state, before, ended)
            active = ~ended & ~full
            status |= np.where(active, flags, 0)
            status |= np.where(undone, search.STATUS_CONVERGED, 0)
            loss = np.where(active, loss, prev)
            hist.append(loss)
            prev = loss
            fields = {f: np.asarray(getattr(host.choice, f)).reshape(B)
                      for f in search.CHOICE_KEYS}
            now = [{f: v[b].item() for f, v in fields.items()} if active[b]
                   else (choices[b][-1] if choices[b] else {}) for b in range(B)]
            for b in np.flatnonzero(active):
                choices[b].append(now[b])
            if keep_states:
                states.append(jax.device_get(state))
            done = ended | full
            if stop is not None:
                ok = active & (flags == search.STATUS_OK)
                last = np.where(ok, loss, np.nan)
                floor = ok & (loss <= stop.atol) & (it + 1 < n_iter)
                status |= np.where(floor, search.STATUS_CONVERGED, 0)
                done |= floor
            if sizes is not None:
                ops = np.maximum(np.asarray(jax.device_get(state.n_slots)).reshape(B) - 1, 0) // 2
                done |= ops >= np.asarray(sizes)
            if self._class_progress(it, loss, now):
                if it + 1 < n_iter:
                    status |= search.STATUS_STOPPED
                break
            if done.all():
                break
        return search.SearchResult(state, np.stack(hist, 1), choices, status, None,
                                   states if keep_states else None)

    def _class_progress(self, it, loss, choices) -> bool:
        """The user's callback once per class, in the order of ``classes_`` (``info``: the
        class's choice plus ``class`` and ``class_index``), then the bar (the mean loss over
        the classes). True when any call asked to stop."""
        est, stop = self.est, False
        if est.callback is not None:
            for c, (value, ch) in enumerate(zip(loss, choices)):
                info = dict(ch, **{"class": self.classes[c], "class_index": c})
                stop = bool(est.callback(it, float(value), info)) or stop
        self.rep.bar.update(it, float(np.mean(loss)), {})
        return stop

    def _model(self, program) -> model_.TreeModel:
        program = jax.tree_util.tree_map(jnp.asarray, program)
        m = model_.TreeModel.from_scaling(program, self.sc, self.dtype, self.basis,
                                          self.feature_names)
        return batched(m, len(self.classes)) if program.weight.ndim == 2 else m

    def select_and_refit(self, xa, xs, ypm, w):
        """``validation_fraction``: ``(result, path)``. The search runs to ``k`` on the training
        part of :func:`jaxtree._fit.select.split`; every size's held-out loss decides each
        tree's size (:func:`_one_se_choice`); then the trees are refitted on all rows to
        their sizes (one batch for ``K > 2``: member ``c`` is kept after its own ``k_c``
        insertions; its history repeats its final loss after that)."""
        est = self.est
        n, B = xs.shape[0], ypm.shape[0]
        train, held = select.split(n, self.fraction, est.random_state)
        if w[train].sum() <= 0 or w[held].sum() <= 0:
            raise ValueError("validation_fraction: the held-out or the training rows all have "
                             "sample_weight 0; give more rows a positive weight, or set "
                             "validation_fraction=None.")
        # Chunked as all rows where compiling dominates: one compiled step with the refit
        # (where the pair screen's stride allows it, the regressor's rule).
        p, q, chunk, pair_rows = xs.shape[1], self.basis.q, self.params.chunk, self._pair_rows()
        rows = select.selection_rows(len(train), n, p, q, chunk, pair_rows,
                                     rows=select.tree_rows(n, p, q, chunk, pair_rows))
        sel = self.search(xs[train], ypm[:, train], w[train], self.params.k, keep_states=True,
                          rows=rows)
        hist = np.asarray(sel.history, np.float64).reshape(B, -1)
        xh = jnp.asarray(xa[held], self.dtype)
        # The held-out losses on the search's programs (their capacity: one compiled
        # prediction for nearby k); the path's models cut back to 2k+1 slots.
        f = np.stack([np.asarray(decision_function(self._model(pr), xh, clip=est.clip),
                                 np.float64).reshape(len(held), -1).T
                      for pr in sel.programs], 1)  # (B, sizes, n_held)
        models = [self._model(self.trim(pr)) for pr in sel.programs]
        rows = _row_losses(est.loss, ypm[:, held][:, None, :], f)
        path, sizes = [], []
        for b in range(B):
            pick, val, _ = _one_se_choice(rows[b], w[held])
            # Members split on the host, placed back without compiling (an eager slice of a
            # device array would compile once per trimmed size, i.e. per k).
            members = [m if B == 1 else jax.tree_util.tree_map(
                jax.device_put, member(jax.device_get(m), b)) for m in models]
            path.append([dict(n_ops=select.n_ops(m.program), train_loss=float(hist[b, s]),
                              val_loss=float(val[s]), model=m)
                         for s, m in enumerate(members)])
            sizes.append(select.n_ops(members[pick].program))
        self.rep.reset(max(sizes), "refit")
        if B == 1:
            return self.search(xs, ypm, w, sizes[0]), path[0]
        # One batch to the largest size; each tree's search ends at its own (:meth:`_run_ovr`)
        return self.search(xs, ypm, w, max(sizes), sizes=sizes), path


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
    est = TreeClassifier(**{k: v for k, v in params.items()
                            if k in valid and k not in ("basis", "devices")})
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
        model = batched(m, K)
        import dataclasses

        model = dataclasses.replace(model, program=programs)
        hist = np.asarray(hist, np.float64).reshape(K, -1) if len(hist) % K == 0 else hist
    names, enc = loaded_names(d, m.feature_names, path)  # and the encoding, as for regression
    return set_fitted(est, model, classes, hist, [], search.Status.OK, names, enc,
                      target=loaded_target_name(d, path))
