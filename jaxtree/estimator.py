"""``TreeRegressor``: a scikit-learn style estimator over the functional core.

It validates and scales the data, runs one of two engines that produce the same
:class:`jaxtree.program.Program` (``"jax"``: the jitted batched search; ``"reference"``:
the paper's algorithm in plain numpy), and wraps the result in a
:class:`jaxtree.model.TreeModel`. Prediction, formulas and files are written once and
serve both engines.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import math
import sys
import warnings
from typing import Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np
import tqdm

from jaxtree import _compilation_cache
from jaxtree import _encoding as encoding_
from jaxtree import _executables
from jaxtree import _scaling as scaling_
from jaxtree import _validation as V
from jaxtree import basis as basis_
from jaxtree import export as export_
from jaxtree import model as model_
from jaxtree import plan as plan_
from jaxtree import program as prog
from jaxtree import reference as reference_
from jaxtree import refine as refine_
from jaxtree import scoring, search
from jaxtree import _target as target_
from jaxtree import shapes as shapes_
from jaxtree import sharding as sharding_
from jaxtree import simplify as simplify_
from jaxtree import stream as stream_

__all__ = [
    "check_params",
    "ENGINES",
    "load",
    "PARAMETER_CONSTRAINTS",
    "ParamsProtocol",
    "TARGET_TRANSFORMS",
    "TreeRegressor",
]


ENGINES = ("jax", "reference")


@functools.lru_cache(maxsize=None)
def _combined(name: str, ours: type, theirs: type) -> type:
    return type(name, (ours, theirs), {"__module__": ours.__module__, "__doc__": ours.__doc__})


def _interop_class(name: str, ours: type) -> type:
    """``ours``, or a subclass of ``ours`` and scikit-learn's class ``name`` if scikit-learn is
    already loaded, so ``except sklearn.exceptions.NotFittedError`` and scikit-learn's checks
    see their own class. Never imports scikit-learn (the core stays free of it)."""
    theirs = getattr(sys.modules.get("sklearn.exceptions"), name, None)
    if not isinstance(theirs, type) or issubclass(ours, theirs):
        return ours
    if issubclass(theirs, ours):
        return theirs
    return _combined(name, ours, theirs)

class ParamsProtocol:
    """The scikit-learn parameter protocol shared by the estimators: parameters are the
    keyword arguments of ``__init__``, stored under their own names."""

    @classmethod
    def _get_param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(n for n in sig.parameters if n != "self")

    def get_params(self, deep: bool = True) -> dict:
        """Hyperparameters as a dict (scikit-learn protocol)."""
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


class TreeRegressor(ParamsProtocol):
    """Compositional nonparametric regression tree (Xu, Honorio and Wang).

    The model is ``y = w0 + T(x)``, where ``T`` is a binary tree of ``k`` operations
    (``+`` or ``*``) over ``k+1`` leaves ``w * phi_i(x_j)``, ``|w| <= 1``, found by greedy
    structure search. Covariates are min-max scaled to ``[0, 1]`` and ``y`` to
    ``[-1, 1]`` with the training data; predictions are returned in ``y``'s units.

    Args:
      k: number of operations (the paper's ``k``: ``k=10`` gives 21 nodes, 11 leaves).
      basis: a :class:`jaxtree.basis.Basis`, a preset name (``"default"``, ``"fourier"``,
        ``"splines"``, ``"polynomial"``), a dict of family sizes for
        :func:`jaxtree.basis.make_basis`, or None for the default ``q = 40`` set.
      refine: weight adjustment after each insertion: ``"optax"`` (joint projected
        L-BFGS, default), ``"coordinate"`` (the paper's coordinate descent) or None.
      engine: ``"jax"`` (compiled, batched) or ``"reference"`` (plain numpy, the
        paper's algorithm; supports ``refine`` ``"coordinate"`` or None).
      chunk_size: rows per sequential step of every pass over the rows (memory
        ``O(chunk*p*q)``). ``"auto"`` (default): the row plan of :mod:`jaxtree.plan`, 2,048
        on a CPU and up to about a million on a GPU (one large step instead of hundreds of
        small ones); an integer wins. The plan that ran is ``row_plan_``.
      coordinate_sweeps: passes over the leaves for ``refine="coordinate"``.
      refine_steps: L-BFGS iterations for ``refine="optax"``.
      precision: matmul precision of the scorer: ``"highest"`` (default; keeps float32
        out of TF32 on GPUs), ``"high"`` or ``"default"``.
      clip: policy for covariates outside the training range at predict time. True
        (default): clip each covariate to its training ``[min, max]``, so predictions
        far outside the data stay bounded (the basis functions are only bounded on the
        scaled ``[0, 1]``). False: extrapolate the formula as is (cubics and Fourier
        terms can grow or oscillate). :func:`jaxtree.predict` takes the same ``clip``.
      verbose: print each iteration's loss and insertion to stderr when > 0.
      callback: ``callback(iteration, loss, info) -> bool`` after each iteration;
        returning True stops the search early.
      random_state: seed of the held-out split when ``validation_fraction`` is set (None
        means 0: fits are deterministic); the search itself uses no randomness.
      shapes: ``"auto"`` (default), 0 (none: the paper's model), or the number of
        shape-function terms fitted before the tree. ``"auto"``: on in-memory fits of at
        least 10,000 rows (``AUTO_SHAPES_MIN_ROWS``, engine ``"jax"``, one device), the tree
        first, exactly as without shapes, then up to 16 shape terms (``AUTO_SHAPES``) of its
        residual, as many as held-out rows support (a ``validation_fraction`` of 0.2 or the
        one given, ``shape_path_``; the held-out run stops once ``AUTO_PATIENCE`` = 3 terms in
        a row lower no held-out error; the one-standard-error rule: none where the tree
        already has the data's form, and then the model is the tree's), then the tree's weights
        refined given the shapes; smaller fits: no shapes. Matrices of at least ``2**24``
        values (read in blocks, ``CHUNKED_FIT_MIN_VALUES``), memmaps and ChunkReaders get them
        in bounded memory: the terms are chosen on at most ``SEARCH_ROWS`` training and
        ``SEARCH_ROWS`` held-out rows read from the data, then backfitted on all rows pass by
        pass (``_stream_shapes``). An integer ``S``: ``S`` shape terms before the tree.
        Each is a whole one-covariate function ``f(x_j)`` or a two-covariate function
        ``f(x_i, x_l)`` (hats, see :mod:`jaxtree.shapes`), chosen greedily by least squares
        and backfitted; the tree of ``k`` operations is then searched on their residual, and
        one backfitting round refits the shapes given the tree. Counted as one insertion
        each. The model is ``w0 + sum of shapes + T(x)``. On more than
        ``jaxtree.shapes.SEARCH_ROWS`` (200,000) rows the terms are chosen on a
        deterministic random subset of that many rows (``random_state``) and then backfitted
        on all rows (``history_``'s shape iterations are the subset's training MSE).
        Streamed and block-read fits take the same steps in bounded memory: the search on
        those rows read into memory, the backfitting and the tree on the shapes' partial
        residual pass by pass (``_stream_shapes_first``), the in-memory fit's choices.
      shape_knots: ``(n1, n2)``: hats per one-covariate shape and per axis of a
        two-covariate shape.
      beam_width: trees advanced together by ``search="beam"`` (:func:`jaxtree.search.beam_fit`:
        each iteration keeps the ``beam_width`` best distinct children by candidate SSE;
        1 is the greedy search exactly).
      search: ``"auto"`` (default), ``"greedy"`` (the paper's algorithm, one insertion at a
        time), ``"beam"`` (``beam_width`` greedy trees advanced together, the best kept) or
        ``"backfit"`` (adds pair lookahead while the tree is small and replacement moves
        after every insertion; see :func:`jaxtree.search.search_config`). ``"auto"`` is
        ``"backfit"`` on in-memory fits of fewer than 10,000 rows (``AUTO_SMALL_MAX_ROWS``;
        engine ``"jax"``, one device, at most ``AUTO_PAIR_MAX_CANDIDATES`` = 4096 basis
        columns ``p*q``, i.e. ``p <= 102`` with the default basis), where the search is cheap
        and the data too few for one-leaf-at-a-time choices, and ``"greedy"`` otherwise (larger
        tables get shape terms instead, see ``shapes``). The choice is ``search_``.
        Streaming supports ``"greedy"``. ``TreeRegressor.paper()`` is the paper's algorithm.
      validation_fraction: ``"auto"`` (default) is 0.2 on the fits where ``search="auto"``
        means ``"backfit"`` (in-memory, fewer than 10,000 rows, engine ``"jax"``, one
        device; at least ``AUTO_VALIDATION_MIN_ROWS`` = 20 rows) and None otherwise: ``k`` is
        then an upper bound and the size is chosen from the data. The value used is
        ``validation_fraction_``. None grows the tree to ``k`` operations. A float in
        ``(0, 1)`` chooses the size from the data: that fraction of the rows is held out, the
        search runs to ``k`` on the rest while recording the held-out MSE after every
        iteration, the smallest size within one standard error of the best held-out MSE
        (``MSE * sqrt(2 / n_held)``) is chosen (``k_``),
        and the tree is refitted on all rows with ``k_`` operations. ``path_`` lists every
        size with its training and held-out error and formula. Engine ``"jax"``, in memory.
        With ``search="beam"`` each size is judged by the member the beam returns at that
        size (the lowest training loss), and the refit is the beam run to ``k_``.
      cache_basis: evaluate the basis once for all rows and keep it (opt-in: holds
        ``n*p*q`` floats, ``4*n*p*q`` bytes in float32 — 0.9 GB at n=700,000, p=8,
        q=40) instead of re-evaluating it chunk by chunk in every iteration.
      devices: None (one device), an int ``n`` (the first ``n`` devices) or ``'all'``:
        shard the rows over a ``'data'`` mesh (see :mod:`jaxtree.sharding`). With shape
        terms in memory (``shapes=S`` or ``"auto"``) the tree search is sharded and the shape
        stage runs on one device (``_fit_shapes``).
      target_transform: None (fit ``y``), ``"log"`` (fit ``log y``, for ``y > 0``: products
        and powers become sums; predictions are ``exp(f) * s`` with Duan's smearing factor
        ``s``, see :mod:`jaxtree._target`), ``"square"`` (fit ``y²``, for ``y >= 0``:
        ``sqrt(x1² + x2²)`` becomes a sum; predictions are ``sqrt(max(f, 0))``) or ``"auto"``
        (fit each applicable transform on a deterministic 75/25 split of the rows, keep the one
        with the lower held-out MSE in ``y``'s units, ties to the simpler one, refit on all
        rows; ``log`` only when every ``y > 0``, ``square`` when every ``y >= 0``). The choice
        is ``target_transform_``.
      y_bound: the search maps ``y`` (or ``log y``) into ``[-y_bound, y_bound]``; 1 (default)
        is the paper's ``Y = [-1, 1]``. A value below 1 keeps the theory's assumptions
        (``[-y_bound, y_bound]`` lies in ``[-1, 1]``) and lets the weight box ``|w| <= 1``
        reach laws that would need ``|w| > 1`` otherwise: with ``x`` scaled to ``[0, 1]``,
        ``y = x1`` needs ``w = 2`` at ``y_bound=1`` and ``w = 0.5`` at ``0.25``.
      prune_tol: None (default) keeps the searched tree. A number ``>= 0``: after the search,
        drop leaves while the cheapest removal lowers the training ``R²`` by at most
        ``prune_tol``, re-fitting the weights after each (:func:`jaxtree.simplify.prune`;
        on streamed and chunked fits :func:`jaxtree.stream.prune`, the same removals).

      missing: ``"indicator"`` (default): missing values (NaN, None, ``pd.NA``) in ``X`` are
        learned from: each numeric column with missing values in training gets a fill value
        (its training minimum) and a 0/1 covariate ``"<col> missing"``; a missing value at
        predict time in a column without one takes the fill. ``"error"``: refuse them
        (``ValueError``). See :mod:`jaxtree._encoding` for every rule.
      categorical_features: which columns are categories, each level becoming a 0/1
        covariate ``"<col>=<level>"`` (e.g. ``carrier=UA``): ``"from_dtype"`` (default: a
        DataFrame's ``category``, string and object columns), None (none: a string column is
        a ``TypeError``), or column indices, names or a boolean mask (as
        ``HistGradientBoostingRegressor``). Unseen levels at predict time count as
        ``"<col>=other"`` when the column has one, else as all zeros.
      max_categories: most covariates per categorical column, ``"<col>=other"`` included
        (default 16); the least frequent levels beyond it are grouped into ``other``.
      min_frequency: levels seen in fewer training rows are grouped into ``other`` (default 5).

    Data larger than memory: pass ``X`` as a ``numpy.memmap`` (float dtype) or a
    :class:`jaxtree.stream.ChunkReader`; every pass then streams it chunk by chunk
    (engine ``'jax'`` only; see :mod:`jaxtree.stream`). A large in-memory float array
    (``n * p >= CHUNKED_FIT_MIN_VALUES``) under the default search options is read the
    same way, after the table encoding, so ``fit`` makes no copy of the whole array
    (same model as the in-memory path); ``predict`` evaluates blocks of
    ``PREDICT_CHUNK_ROWS`` rows.

    Attributes (after ``fit``):
      model_: the fitted :class:`jaxtree.model.TreeModel` pytree.
      history_: training MSE (in ``y``'s units) after the first leaf and each insertion.
      choices_: the insertion chosen at each iteration (a dict with the keys
        :data:`jaxtree.search.CHOICE_KEYS`, the same on both engines).
      status_: the search's :class:`jaxtree.search.Status` flags.
      k_: the number of operations of the fitted tree.
      search_, validation_fraction_: the search and held-out fraction this fit ran with
        (``"auto"`` resolved by the data's size, see ``search``).
      shape_path_: with ``shapes`` and ``validation_fraction``: one dict per number of shape
        terms of the selection run (``n_shapes``, ``train_mse``, ``val_mse``, ``terms``); else
        None.
      path_: with ``validation_fraction``: one dict per iteration of the selection run
        (``n_ops``, ``train_mse``, ``val_mse``, ``formula`` and ``model``, a
        :class:`jaxtree.model.TreeModel` to predict with at that size); else None.
      n_features_in_: number of covariates; feature_names_in_: their names when X had
        string column names (both count the raw columns of ``X``, before encoding).
      encoding_: the fitted :class:`jaxtree._encoding.EncodingSpec` (missing values and
        categories); encoded_feature_names_: the names of the covariates the tree sees (the
        model's ``feature_names``: ``"carrier=UA"``, ``"year missing"``, ...), equal to the
        raw names when ``X`` is numeric without missing values.
      target_transform_: ``"identity"``, ``"log"`` or ``"square"``: the transform the model
        uses.
      target_transform_scores_: with ``target_transform="auto"``, the held-out MSE of each
        candidate transform (``inf`` for one that does not apply to ``y``); else None.
      pruned_: with ``prune_tol``, the removed leaves as ``(feature, basis, R² cost)``.
      row_plan_: the :class:`jaxtree.plan.RowPlan` the fit ran: platform, rows per step,
        sequential steps per pass, streamed block size, whether the rows were held on the
        device (``chunk_size``).

    Examples:
      >>> import jaxtree
      >>> X, y = jaxtree.datasets.paper_synthetic(n=300, p=4, seed=0)
      >>> est = jaxtree.TreeRegressor(k=3).fit(X, y)
      >>> est.predict(X[:2]).shape
      (2,)
    """

    def __init__(self, k: int = 10, *, basis=None, refine: Optional[str] = "optax",
                 engine: str = "jax", chunk_size="auto", coordinate_sweeps: int = 3,
                 refine_steps: int = 20, precision: str = "highest", clip: bool = True,
                 verbose: int = 0, callback: Optional[Callable] = None, random_state=None,
                 devices=None, cache_basis: bool = False,
                 validation_fraction="auto", search: str = "auto",
                 target_transform: Optional[str] = None, y_bound: float = 1.0,
                 prune_tol: Optional[float] = None, shapes="auto",
                 shape_knots: tuple = (24, 12), beam_width: int = 4,
                 missing: str = "indicator", categorical_features="from_dtype",
                 max_categories: int = encoding_.DEFAULT_MAX_CATEGORIES,
                 min_frequency: int = encoding_.DEFAULT_MIN_FREQUENCY):
        self.k = k
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
        self.cache_basis = cache_basis
        self.devices = devices
        self.validation_fraction = validation_fraction
        self.search = search
        self.target_transform = target_transform
        self.y_bound = y_bound
        self.prune_tol = prune_tol
        self.shapes = shapes
        self.shape_knots = shape_knots
        self.beam_width = beam_width
        self.missing = missing
        self.categorical_features = categorical_features
        self.max_categories = max_categories
        self.min_frequency = min_frequency

    @classmethod
    def for_laws(cls, k: int = 20, *, basis="default+physics", y_bound: float = 0.25,
                 target_transform: Optional[str] = "auto", search: str = "backfit",
                 validation_fraction: Optional[float] = 0.2,
                 prune_tol: Optional[float] = 1e-6, **kwargs) -> "TreeRegressor":
        """The "exact laws" preset: an estimator for learning a formula (README, "Fitting a
        physical law"). Every setting is an ordinary keyword (``get_params`` shows them, so
        ``clone`` and saved models keep them) and each can be overridden.

        ``k`` is an upper bound: ``validation_fraction`` holds out that share of the rows and
        picks the size by the one-standard-error rule (see the class docstring), so noisy data
        does not buy extra leaves. The physics families with the paper's basis, ``y_bound``
        so a law's weights fit the box, ``"auto"`` chooses ``log y`` or ``y`` on held-out rows,
        the backfit search, and pruning of leaves that cost less than ``prune_tol`` of ``R²``.

        Example: ``jaxtree.TreeRegressor.for_laws().fit(X, y).law()``.
        """
        return cls(k, basis=basis, y_bound=y_bound, target_transform=target_transform,
                   search=search, validation_fraction=validation_fraction,
                   prune_tol=prune_tol, **kwargs)

    @classmethod
    def paper(cls, k: int = 10, **kwargs) -> "TreeRegressor":
        """The paper's algorithm (Xu, Honorio and Wang): the greedy search grown to exactly
        ``k`` operations, no shape terms (``search="greedy"``, ``validation_fraction=None``,
        ``shapes=0``); the weights are still refined jointly (``refine="optax"``; pass
        ``refine="coordinate"`` for the paper's coordinate descent). Every setting can be
        overridden. The reproduction scripts and the races against the numpy reference use it.
        """
        kwargs = {"search": "greedy", "validation_fraction": None, "shapes": 0, **kwargs}
        return cls(k, **kwargs)

    # -------------------------------------------------------------- scikit-learn protocol

    def __sklearn_tags__(self):
        """scikit-learn's estimator tags (imported lazily: only scikit-learn calls this)."""
        from sklearn.utils import RegressorTags, Tags, TargetTags

        from sklearn.utils import InputTags

        return Tags(estimator_type="regressor", target_tags=TargetTags(required=True),
                    regressor_tags=RegressorTags(),
                    input_tags=InputTags(allow_nan=getattr(self, "missing", None) != "error"))

    # ---------------------------------------------------------------------------- fit

    def _check_params(self) -> "_Params":
        return check_params(self.get_params())

    def fit(self, X, y, sample_weight=None):
        """Fits the tree.

        Args:
          X: ``(n_samples, n_features)`` numbers (numpy, pandas, ...); n >= 2.
          y: ``(n_samples,)`` targets.
          sample_weight: optional ``(n_samples,)`` non-negative weights.

        Returns:
          self. If interrupted (KeyboardInterrupt) the estimator is left as it was.

        Raises:
          ValueError / TypeError: for invalid data or hyperparameters, with the fix.
        """
        self._check_params()
        if self.target_transform == "auto":
            return _fit_auto_transform(self, X, y, sample_weight)
        return self._fit_fixed(X, y, sample_weight, self.target_transform or "identity")

    def _resolve_auto(self, n: int, p: int, q: int, in_memory: bool) -> None:
        """Sets ``search_`` and ``validation_fraction_``: the settings this fit runs with,
        ``"auto"`` resolved by the fit's size and path (see the class docstring).

        Why by size: below ``AUTO_SMALL_MAX_ROWS`` rows a wrong early insertion is the main
        failure of the greedy search (the paper's Experiment 1), and the pair lookahead,
        the replacement moves and a second, held-out run are cheap; above it the greedy tree
        plus shape terms (``shapes="auto"``) measured best per second (BENCHMARKS.md,
        "The default search").
        """
        small = (in_memory and self.engine == "jax" and self.devices is None
                 and n < AUTO_SMALL_MAX_ROWS)
        chosen = self.search
        if chosen == "auto":
            chosen = "backfit" if small and p * q <= AUTO_PAIR_MAX_CANDIDATES else "greedy"
        fraction = self.validation_fraction
        if isinstance(fraction, str):  # "auto"
            fraction = AUTO_VALIDATION if small and n >= AUTO_VALIDATION_MIN_ROWS else None
        if chosen == "backfit" and p * q > BACKFIT_MAX_CANDIDATES:
            raise ValueError(
                f"search='backfit' scores pairs of basis columns: p*q = {p}*{q} = {p * q} "
                f"columns need {p * q}x{p * q} Gram matrices (more than "
                f"{BACKFIT_MAX_CANDIDATES} columns is refused). Use search='greedy' or "
                "'beam', a smaller basis, or fewer covariates.")
        self.search_, self.validation_fraction_ = chosen, fraction

    def _fit_fixed(self, X, y, sample_weight, transform: str):
        """``fit`` with a fixed target transform (``"identity"``, ``"log"``, ``"square"``)."""
        _compilation_cache.enable()
        self.__dict__.pop("_path", None)  # a size path only from this fit's selection run
        self.__dict__.pop("_shape_path", None)
        params = self._check_params()
        # Data larger than memory is streamed, never materialised; the reference engine
        # (plain numpy) reads a memmap like any array.
        if stream_.is_streamable(X) and not (self.engine == "reference" and isinstance(X, np.memmap)):
            _check_streamable_options(self, transform)
            p = X.p if isinstance(X, stream_.ChunkReader) else (X.shape[1] if X.ndim == 2 else 0)
            self._resolve_auto(0, p, params.basis.q, in_memory=False)
            return self._fit_stream(X, y, sample_weight, params)
        names = None
        if hasattr(X, "columns") and all(isinstance(c, str) for c in X.columns):
            names = tuple(X.columns)
        xa, enc = self._encode_fit(X)  # missing values and categories -> numeric covariates
        n, p = xa.shape
        if n < 2:
            raise ValueError(f"fit needs at least 2 samples; got {n}.")
        ya = V.check_y(y, n)
        sw = V.check_sample_weight(sample_weight, n)
        x64 = bool(jax.config.jax_enable_x64)
        dtype = V.float_dtype_for(np.asarray(xa), x64)
        V.check_representable(xa, ya, dtype,
                               feature_names=names if enc.is_identity else enc.feature_names_out)

        if np.asarray(y).ndim == 2:  # check_y accepted a column vector
            warnings.warn("A column-vector y was passed when a 1d array was expected; it was "
                          "used as y.ravel(). Pass y with shape (n_samples,) to silence this.",
                          _interop_class("DataConversionWarning", UserWarning), stacklevel=2)

        yt = target_.forward(ya, transform, sw)  # log y for "log" (ValueError for y <= 0)
        params, self.row_plan_ = planned(params, n, p, dtype, self.chunk_size, self.devices)
        chunked = _fits_in_chunks(self, xa, transform, self.row_plan_)
        self._resolve_auto(n, p, params.basis.q, in_memory=not chunked)
        if chunked:  # a large array: no whole-array copies
            return self._fit_in_chunks(xa, yt, sw, params, dtype, enc, names)
        sc = _bounded_scaling(scaling_.fit(xa, yt, sw), self.y_bound)
        params = _bind_basis(params, sc)
        xs, ys = scaling_.apply(sc, xa, yt, sw)
        feature_names = enc.feature_names_out  # the raw names when nothing was encoded
        with self._progress_bar(params, feature_names, n_rows=xs.shape[0]):
            if self.engine == "jax":
                res = self._fit_jax(xs, ys, sw, params, dtype, sc)
            else:
                res = self._fit_reference(xs, ys, sw, params, dtype, sc)
        shape_fit = self.__dict__.pop("_shape_fit", None)
        if shape_fit is not None and self.prune_tol is not None:  # pruned against the shapes' residual
            ys = ys - np.asarray(shapes_.evaluate_jit(shape_fit[0], jnp.asarray(xs, dtype),
                                                      shape_fit[1]), np.float64)
        res, pruned = _prune_result(self, res, xs, ys, sw, params, dtype)
        model = model_.TreeModel.from_scaling(res.program, sc, dtype, params.basis, feature_names)
        if shape_fit is not None:
            model = dataclasses.replace(model, shapes=shape_fit[0], shape_spec=shape_fit[1])
        model = _attach_target(model, transform, xa, yt, sw)
        self._pending_encoding = enc
        self._set_fitted(model, res.history, res.choices, res.status, names)
        self.pruned_ = pruned
        return self

    def _fit_in_chunks(self, xa, yt, sw, params, dtype, enc, names):
        """The in-memory fit of a large numeric matrix, read ``chunk_size`` rows at a time
        (issue 12 item 7): a :class:`jaxtree.stream.ChunkReader` over ``xa`` computes the
        scaling and feeds every pass of :func:`jaxtree.stream.fit`, so no float64, scaled,
        padded or device copy of the whole matrix is made. Same scaling, same search, same
        model as the in-memory path (``tests/test_memory.py``); see :func:`_fits_in_chunks`
        for when it runs. ``xa`` is the encoded table (``enc``), so missing values and
        categories were handled before, as on the in-memory path. Shape terms as in memory,
        in bounded memory: ``shapes="auto"`` after the tree (:meth:`_stream_shapes`),
        ``shapes=S`` before it (:meth:`_stream_shapes_first`)."""
        sw = None if sw is None else np.asarray(sw, np.float64)  # integer weights: floats
        reader = stream_.ChunkReader(xa, yt, sw, chunk_size=min(params.chunk, xa.shape[0]))
        feature_names = enc.feature_names_out
        res, sc, params = self._search_reader(reader, params, dtype, feature_names)
        model = self._reader_model(res, sc, dtype, params, feature_names)
        self._pending_encoding = enc
        self._set_fitted(model, res.history, res.choices, res.status, names)
        self.pruned_ = self.__dict__.pop("_pruned", None)
        return self

    def _search_reader(self, reader, params, dtype, feature_names):
        """``(search result, scaling, params bound to it)`` of a streamed fit of ``reader``:
        the greedy tree, then with ``shapes="auto"`` (:meth:`_auto_shapes_apply`) shape terms
        of its residual (:meth:`_stream_shapes`); with ``shapes=S`` the shape terms first
        (:meth:`_stream_shapes_first`), the tree on their residual, then the backfitting
        round (the model's shapes are left in ``_shape_fit``)."""
        sc = _bounded_scaling(stream_.scaling(reader), self.y_bound)
        params = _bind_basis(params, sc)
        with self._progress_bar(params, feature_names, n_rows=reader.n):
            scaled = reader.scaled(sc, dtype)
            first = None
            if self.shapes != "auto" and self.shapes:
                first = self._stream_shapes_first(reader, scaled, sc, params, dtype)
                self._it_offset = len(first[0].history)  # the tree's iterations follow
            try:
                res = self._stream_tree(reader, scaled, sc, params, dtype,
                                        None if first is None else first[1:3])
            finally:
                self._it_offset = 0
            if first is not None:
                sres, terms, spec, gr = first
                self._path_with_shapes(terms, spec)
                terms, program, mse = self._stream_backfit(scaled, res.program, terms, spec,
                                                           params, dtype, gr=gr)
                res = self._shapes_then_tree(sres, res, program, mse, terms, spec,
                                             float(sc.y_scale) ** 2)
            elif self._auto_shapes_apply(reader.n):
                res = self._stream_shapes(reader, scaled, res, sc, params, dtype)
            if self.prune_tol is not None:
                res = self._stream_prune(scaled, res, params, dtype, reader)
        return res, sc, params

    def _stream_tree(self, reader, scaled, sc, params, dtype, shapes=None):
        """The tree search of a streamed fit (:func:`jaxtree.stream.fit`), its size chosen on
        held-out rows first with ``validation_fraction``; ``shapes``: None, or fixed shape
        terms ``(terms, spec)`` whose partial residual the tree fits (``shapes=S``)."""
        kw = dict(callback=self._progress, devices=self.devices, chunks_per_block=params.block,
                  loss_scale=float(sc.y_scale) ** 2, shapes=shapes,
                  beam_width=int(self.beam_width) if self.search_ == "beam" else None)
        cfg = self._config(params, reader.n, reader.p)
        k = params.k
        if self.validation_fraction_ is not None:
            # The size chosen on held-out rows (the in-memory split, read by index), then
            # the refit on all rows: the in-memory fit's choices.
            train, held = _split(reader.n, self.validation_fraction_, self.random_state)
            sel = stream_.fit(scaled.subset(train), params.basis, k, cfg,
                              held_out=scaled.subset(held), **kw)
            sel = sel._replace(programs=[jax.device_get(p) for p in sel.programs])
            k = self._size_path(sel, len(held), sc, dtype, params)
            if cfg.pair_leaves:  # a pair uses two operations: the capacity bounds the size
                cfg = cfg._replace(max_k=max(k, 1))
        return stream_.fit(scaled, params.basis, k, cfg, **kw)

    def _stream_shapes_first(self, reader, scaled, sc, params, dtype):
        """``shapes=S``'s terms on a streamed fit, before the tree (the streamed form of the
        first half of :meth:`_fit_shapes`), in bounded memory: the count chosen on held-out
        rows with ``validation_fraction`` (:meth:`_choose_shapes` on :func:`_shape_rows`'
        rows, as ``shapes="auto"`` reads them), the terms searched in memory on the rows the
        in-memory fit searches (:meth:`_shape_search`: all rows up to ``SEARCH_ROWS``, else
        the same deterministic subset), then backfitted on all rows pass by pass
        (:func:`jaxtree.stream.refit_shapes`, the in-memory sweeps). Returns ``(search
        result, terms, compact spec, all rows' Grams)``."""
        scale = float(sc.y_scale) ** 2
        n_shapes, pairs = int(self.shapes), None
        if self.validation_fraction_ is not None:
            train, held = _shape_rows(reader.n, self.validation_fraction_, self.random_state)
            split = (_read_rows(reader, train, sc, params, dtype),
                     _read_rows(reader, held, sc, params, dtype), held)
            n_shapes, pairs = self._choose_shapes(None, None, None, params, dtype, scale,
                                                  split=split)
        rows = _subsample(reader.n, shapes_.SEARCH_ROWS, self.random_state)
        sub = _read_rows(reader, np.arange(reader.n) if rows is None else rows, sc, params, dtype)
        sres, found, spec, _ = self._shape_search(sub, scale, n_shapes, int(self.shapes), pairs)
        del sub
        sweeps = SHAPE_SWEEPS_ALL_ROWS if rows is None else SHAPE_SWEEPS_SUBSET
        terms, gr = stream_.refit_shapes(scaled, None, params.basis, found, spec, sweeps=sweeps,
                                         devices=self.devices, dtype=dtype,
                                         chunks_per_block=params.block)
        return sres, terms, spec, gr

    def _stream_backfit(self, scaled, program, terms, spec, params, dtype, gr=None):
        """The backfitting round after a streamed tree and its shape terms: one sweep of the
        shapes given the tree (:func:`jaxtree.stream.refit_shapes`; ``gr``: all rows' Grams,
        None reads them), then with ``refine="optax"`` the tree's weights refined given the
        shapes (:func:`jaxtree.stream.refine_given_shapes`). Returns ``(terms, program, mse
        of the model on all rows)``. Shared by ``shapes="auto"`` and ``shapes=S``."""
        kw = dict(devices=self.devices, dtype=dtype, chunks_per_block=params.block)
        program = jax.tree_util.tree_map(jnp.asarray, program)
        terms, _ = stream_.refit_shapes(scaled, program, params.basis, terms, spec, sweeps=1,
                                        gr=gr, **kw)
        steps = params.steps if self.refine == "optax" else 0
        program, mse = stream_.refine_given_shapes(scaled, program, params.basis, terms, spec,
                                                   steps=steps, **kw)
        return terms, program, float(mse)

    def _stream_prune(self, scaled, res, params, dtype, reader):
        """``prune_tol`` on a streamed fit (:func:`jaxtree.stream.prune`): the in-memory
        pruning's removals, against the shape terms' partial residual when there are any
        (as in memory); the removed leaves are left in ``_pruned`` for ``pruned_``."""
        shape_fit = self.__dict__.get("_shape_fit")
        passes = None
        if shape_fit is not None:
            passes, _ = stream_.shape_residual_passes(scaled, params.basis, *shape_fit,
                                                      devices=self.devices, dtype=dtype,
                                                      chunks_per_block=params.block)
        out = stream_.prune(scaled, res.program, params.basis, float(self.prune_tol),
                            self._config(params, reader.n, reader.p), devices=self.devices,
                            dtype=dtype, passes=passes, chunks_per_block=params.block)
        self._pruned = _report_pruned(self, out.removed)
        return res._replace(program=out.program)

    def _reader_model(self, res, sc, dtype, params, feature_names):
        """The fitted model of a streamed search result, with the shape terms of
        :meth:`_stream_shapes` when it added some."""
        model = model_.TreeModel.from_scaling(res.program, sc, dtype, params.basis, feature_names)
        shape_fit = self.__dict__.pop("_shape_fit", None)
        if shape_fit is not None:
            model = dataclasses.replace(model, shapes=shape_fit[0], shape_spec=shape_fit[1])
        return model

    def _stream_shapes(self, reader, scaled, tree, sc, params, dtype):
        """``shapes="auto"`` after a streamed tree (:meth:`_fit_in_chunks`, :meth:`_fit_stream`)
        in bounded memory, the streamed form of :meth:`_fit_tree_then_shapes`:

        1. the shape search and its held-out count run in memory on a subset of rows read from
           ``reader`` (:func:`_shape_rows`: the in-memory fit's split, so the same rows, while
           its held-out part has at most ``shapes.SEARCH_ROWS`` rows; otherwise at most
           ``SEARCH_ROWS`` training and ``SEARCH_ROWS`` held-out rows drawn directly), with
           the tree's residual on them;
        2. the chosen terms (compacted) are backfitted on all rows given the tree, one pass
           per block update (:func:`jaxtree.stream.refit_shapes`);
        3. with ``refine="optax"`` the tree's weights are refined given the shapes, the
           shapes' values a per-row offset recomputed in every pass
           (:func:`jaxtree.stream.refine_given_shapes`).

        Memory: ``O(SEARCH_ROWS * p)`` for the subset plus two blocks of the passes, never
        ``O(n)``. With the same rows, the terms chosen are the in-memory fit's (the subset's
        values are the same numbers; the tree agrees to float rounding), and no accepted
        shape leaves the tree's result untouched."""
        scale = float(sc.y_scale) ** 2
        program = jax.tree_util.tree_map(jnp.asarray, tree.program)
        fraction = self._held_out_fraction()
        train, held = _shape_rows(reader.n, fraction, self.random_state)
        split = (_read_rows(reader, train, sc, params, dtype, program),
                 _read_rows(reader, held, sc, params, dtype, program), held)
        chosen = self._auto_shape_terms(tree, split, params, dtype, scale)
        if chosen is None:
            return tree
        found, spec, sres, stopped = chosen
        terms, program, mse = self._stream_backfit(scaled, program, found, spec, params, dtype)
        return self._tree_with_shapes(tree, program, sres, stopped, mse, terms, spec, scale)

    def _encode_fit(self, X):
        """``(xa, spec)``: the training table encoded (:mod:`jaxtree._encoding`: missing values
        and categories become numeric covariates) and validated by the usual checks."""
        enc = encoding_.fit(X, categorical_features=self.categorical_features,
                            missing=self.missing, max_categories=self.max_categories,
                            min_frequency=self.min_frequency)
        # An identity spec means that fit found no missing value (it would have given the
        # column an indicator) and no category: transform would return X unchanged after
        # scanning it for NaN again, so the training table skips it.
        Xe = X if enc is None or enc.is_identity else encoding_.transform(enc, X, missing=self.missing)
        xa = V.check_X(Xe, min_samples=2,
                       feature_names=None if Xe is X else enc.feature_names_out)
        if enc is None:  # pragma: no cover - check_X refuses what the encoder cannot split
            enc = encoding_.identity(xa.shape[1], V.frame_feature_names(X), np.min(xa, 0))
        return xa, enc

    def _encode(self, X) -> np.ndarray:
        """``X`` (a table like the training one) as the validated matrix the model takes."""
        names = getattr(self, "feature_names_in_", None)
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
        for row in rows or ():
            if "formula" not in row:
                row["formula"] = row["model"].formula()
        return rows

    @path_.setter
    def path_(self, rows):
        self.__dict__["_path_rows"] = rows

    def _set_fitted(self, model, history, choices, status, names, warn: bool = True):
        """The one place where a search result becomes a fitted estimator (``fit``,
        ``fit_batch`` and ``load``). Sets every learned attribute at once, at the end, so an
        interrupted fit leaves the estimator as it was; warns about a degenerate search."""
        status = search.Status(int(status))
        bad = status & search.Status.NO_CANDIDATE  # FULL: the tree reached k operations
        if warn and bad:
            warnings.warn(f"{search.message(bad)}.", RuntimeWarning, stacklevel=3)
        self.model_ = model
        self.history_ = np.asarray(history, np.float64)
        self.choices_ = list(choices)
        self.status_ = status
        self.k_ = _n_ops(model.program)
        self.path_ = self.__dict__.pop("_path", None)
        self.shape_path_ = self.__dict__.pop("_shape_path", None)
        self.target_transform_ = model.target_transform
        self.target_transform_scores_ = self.__dict__.pop("_transform_scores", None)
        self.pruned_ = None
        enc = self.__dict__.pop("_pending_encoding", None)  # set by fit and load
        if enc is None:  # numeric columns as they are; a missing value takes the training min
            x_min = np.asarray(model.x_min, np.float64).reshape(-1, model.n_features)[0]
            enc = encoding_.identity(model.n_features, names, x_min)
        self.encoding_ = enc
        self.encoded_feature_names_ = np.asarray(model.feature_names, dtype=object)
        self.n_features_in_ = enc.n_features_in
        if names is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return self

    @contextlib.contextmanager
    def _progress_bar(self, params, feature_names, n_rows: int = 0):
        """The progress bar of one fit (closed even when the fit fails); ``n_rows``: the fit's
        rows (0: none counted, so ``shapes="auto"`` adds no iterations to the bound)."""
        bound = (int(self._auto_shapes_apply(n_rows)) * AUTO_SHAPES if self.shapes == "auto"
                 else int(self.shapes or 0))
        self._bar = _ProgressBar(params.k + bound, self.verbose, feature_names,
                                 params.basis)
        try:
            yield
        finally:
            self._bar.close()
            del self._bar

    def _progress(self, it, loss, info):
        """Per-iteration hook of every engine (loss in ``y``'s units): the progress bar, then
        the user's callback (iterations numbered across the shape and tree stages)."""
        it = it + self.__dict__.get("_it_offset", 0)
        self._bar.update(it, loss, info)
        return bool(self.callback(it, loss, info)) if self.callback is not None else False

    def _config(self, params, n, p) -> search.Config:
        return search.search_config(
            self.search_, params.k, p * params.basis.q, refine=self.refine,
            coordinate_sweeps=params.sweeps, refine_steps=params.steps,
            precision=scoring.PRECISIONS[self.precision],
            buckets=scoring.buckets_for(n, p, params.basis.q, params.k))

    def _data(self, xs, ys, sw, params, dtype, shard: bool = True, rows=None):
        """The chunked data of a fit (basis cached with ``cache_basis``), its rows sharded
        over ``devices`` unless ``shard`` is False (one device: the shape stage's data,
        :meth:`_fit_shapes`); ``rows``: chunked as that many rows (:func:`scoring.chunk`)."""
        # numpy in, so that the chunks are padded on the host (nothing compiled)
        data = scoring.chunk(np.asarray(xs), np.asarray(ys), None if sw is None else np.asarray(sw),
                             chunk_size=params.chunk, rows=rows, dtype=dtype)
        if self.cache_basis:
            data = scoring.cache_basis(data, params.basis)
        if self.devices is not None and shard:
            data = sharding_.shard_data(data, self.devices)
        return data

    def _held_out_fraction(self) -> float:
        """The held-out share of a split: ``validation_fraction_``, or ``AUTO_VALIDATION`` for
        ``shapes="auto"``'s count choice on a fit that grows its tree to ``k``."""
        fraction = self.validation_fraction_
        return AUTO_VALIDATION if fraction is None else fraction

    def _held_out(self, xs, ys, sw, params, dtype, max_train=None, shard: bool = True,
                  pair_rows: int = 0):
        """``(training data, held-out data, held-out row indices)`` of the deterministic split
        (``validation_fraction``, ``random_state``), both chunked as the fit chunks; at most
        ``max_train`` training rows (a deterministic subset) when given; the training rows
        sharded as :meth:`_data` shards them (``shard``); ``pair_rows``: the search's pair
        screen (:func:`_selection_rows`)."""
        fraction = self._held_out_fraction()
        train, held = _split(xs.shape[0], fraction, self.random_state)
        if max_train is not None:
            sub = _subsample(len(train), max_train, self.random_state)
            train = train if sub is None else train[sub]
        part = lambda a: None if a is None else a[train]
        rows = None if max_train is not None else _selection_rows(
            len(train), *xs.shape, params.basis.q, params.chunk, pair_rows)
        data = self._data(xs[train], ys[train], part(sw), params, dtype, shard=shard, rows=rows)
        held_data = scoring.chunk(np.asarray(xs[held], dtype), np.asarray(ys[held], dtype),
                                  None if sw is None else np.asarray(sw[held], dtype),
                                  chunk_size=params.chunk)
        return data, held_data, held

    def _fit_jax(self, xs, ys, sw, params, dtype, sc, tree_only: bool = False):
        if not tree_only and self.shapes == "auto":
            if self._auto_shapes_apply(xs.shape[0]):
                return self._fit_tree_then_shapes(xs, ys, sw, params, dtype, sc)
        elif self.shapes and not tree_only:
            return self._fit_shapes(xs, ys, sw, params, dtype, sc)
        cfg = self._config(params, xs.shape[0], xs.shape[1])
        if scoring.compiling_dominates(*xs.shape, params.basis.q):
            # Compiling costs more than searching: run in a rounded-up capacity so that
            # nearby k (and the refit below) share the compiled step; the search still stops
            # at k operations (max_ops) and the tree is cut back to 2k+1 slots.
            cfg = cfg._replace(max_k=prog.capacity_for(params.k))
        scale = float(sc.y_scale) ** 2
        beam, width = self.search_ == "beam", int(self.beam_width)

        def search_all(k, cfg, max_ops):
            data = self._data(xs, ys, sw, params, dtype)
            if beam:  # greedy insertions only: k + 1 iterations never pass k operations
                res = search.beam_fit(data, params.basis, k, cfg, width,
                                      callback=self._progress, loss_scale=scale)
            else:
                res = search.fit(data, params.basis, k, cfg, callback=self._progress,
                                 loss_scale=scale, max_ops=max_ops)
            return res._replace(program=prog.trim(res.program, max_ops))

        if self.validation_fraction_ is None:
            return search_all(params.k, cfg, params.k)
        # Choose the size on held-out rows, then refit on all rows (same compiled step). A
        # beam is judged by the member the beam would return at that size (the lowest
        # training loss; search.beam_fit's rule).
        data, held_data, held = self._held_out(
            xs, ys, sw, params, dtype, pair_rows=cfg.pair_rows if cfg.pair_leaves else 0)
        empty = prog.empty_program(cfg.max_k, dtype)
        if beam:
            best = lambda ps: _best_member(ps, data, params.basis)  # noqa: E731
            step = search.with_validation(
                lambda ps: search.beam_step_jit(ps, data, params.basis, cfg),
                lambda ps: _held_out_mse(best(ps), held_data, params.basis))
            start = jax.tree_util.tree_map(lambda a: jnp.broadcast_to(a, (width,) + a.shape), empty)
        else:
            best = lambda p: p  # noqa: E731
            step = search.with_validation(
                lambda p: search.step_cached(p, data, params.basis, cfg,
                                             np.int32(params.k)),
                lambda p: _held_out_mse_cached(p, held_data, params.basis))
            start = empty
        sel = search.run(step, start, params.k + 1, self._progress, loss_scale=scale,
                         keep_states=True)
        sel = sel._replace(programs=[jax.device_get(prog.trim(best(p), params.k))
                                     for p in sel.programs])
        k_best = self._size_path(sel, len(held), sc, dtype, params)
        # A pair uses two operations: max_ops bounds the refit's size (same compiled step).
        return search_all(k_best, cfg, max(k_best, 1) if cfg.pair_leaves else params.k)

    def _size_path(self, sel, n_held: int, sc, dtype, params) -> int:
        """The size chosen by a selection run ``sel`` (held-out losses ``val_history``, the
        program after each iteration in ``programs``; :func:`_choose_size`), with ``path_``'s
        rows (operations, training and held-out MSE, formula, model) left in ``_path`` and
        the progress bar reset for the refit. Shared by the in-memory and streamed fits."""
        k_best = _n_ops(sel.programs[_choose_size(sel.val_history, n_held)])
        names = self._bar.names
        put = functools.partial(jax.tree_util.tree_map, jax.device_put)  # nothing compiled
        models = [model_.TreeModel.from_scaling(put(p), sc, dtype, params.basis, names)
                  for p in sel.programs]
        self._path = _path_rows(models, sel.history, sel.val_history)
        self._bar.reset(k_best, "refit")
        return k_best

    def _fit_shapes(self, xs, ys, sw, params, dtype, sc):
        """Shapes first, then the tree on their residual, then one backfitting round (the
        shapes refitted given the tree, the tree's weights refined given the shapes).

        The shape search and the tree search each run through the one driver
        (:func:`jaxtree.search.run`); their histories and choices are concatenated (the
        tree's losses are the full model's: it is fitted to the shapes' residual). With
        ``validation_fraction`` the number of shapes is chosen first (one-standard-error
        rule on held-out rows, ``shapes`` is the upper bound), then the tree's size on the
        shapes' residual, as for a tree alone.

        With ``devices`` only the tree search is sharded: the shape stage (the search, its
        held-out count, the backfitting round) runs on one device, the one-device fit's
        computation. On CPU devices (``--xla_force_host_platform_device_count``) the
        shape search run sharded deadlocked: every device runs the batched LAPACK solve of
        :func:`jaxtree.shapes.candidate_gains` at once, and each batch's solves are spread
        over the one thread pool the devices share and waited for, so with as many devices
        as the pool has workers all of them wait for tasks that no free worker is left to run.
        """
        scale = float(sc.y_scale) ** 2
        n_shapes, pairs = int(self.shapes), None
        if self.validation_fraction_ is not None:
            n_shapes, pairs = self._choose_shapes(xs, ys, sw, params, dtype, scale)
        data = self._data(xs, ys, sw, params, dtype, shard=False)
        sres, state, spec, gr = self._search_shapes(xs, ys, sw, params, dtype, scale, data,
                                                    n_shapes, int(self.shapes), pairs)
        g_rows = np.asarray(state.fit, np.float64).reshape(-1)[: xs.shape[0]]
        self._it_offset = len(sres.history)
        try:
            tree = self._fit_jax(xs, ys - g_rows, sw, params, dtype, sc, tree_only=True)
        finally:
            self._it_offset = 0
        self._path_with_shapes(state.shapes, spec)
        # One backfitting round: shapes given the tree, then the tree's weights given them
        # (on the shapes' device: a sharded tree is read back first).
        program = jax.tree_util.tree_map(jnp.asarray, jax.device_get(tree.program))
        t_fit = _tree_values(program, data.x, params.basis)
        state = shapes_.finish_jit(state, data._replace(y=data.y - t_fit), gr, spec, 1)
        resid = data._replace(y=data.y - state.fit)
        if self.refine == "optax":
            program, _ = _joint(program, resid, params.basis, steps=params.steps)
        mse = float(_held_out_mse(program, resid, params.basis))
        return self._shapes_then_tree(sres, tree, program, mse, state.shapes, spec, scale)

    def _shapes_then_tree(self, sres, tree, program, mse, terms, spec, scale):
        """The search result of ``shapes=S``: the shape search ``sres``, then the ``tree``
        searched on their residual, with ``program`` (the tree after the backfitting round)
        and ``terms`` (the shapes after it); histories and choices concatenated, the last
        loss ``mse`` (the final model's on all rows, scaled space). The shapes are left in
        ``_shape_fit``. Shared by the in-memory and streamed fits."""
        history = list(sres.history) + list(tree.history)
        history[-1] = mse * scale
        self._shape_fit = (terms, spec)
        status = search.Status(int(sres.status) & ~int(search.Status.FULL)) | tree.status
        return search.SearchResult(program, np.asarray(history, np.float64),
                                   list(sres.choices) + list(tree.choices), status)

    def _path_with_shapes(self, terms, spec):
        """The tree sizes' path (``validation_fraction``), if any: each model with the shape
        terms its tree was searched after (``shapes=S``)."""
        for row in self.__dict__.get("_path") or ():
            row["model"] = dataclasses.replace(row["model"], shapes=terms, shape_spec=spec)
            row.pop("formula", None)  # written on first access of path_

    def _search_shapes(self, xs, ys, sw, params, dtype, scale, data, n_shapes, max_terms, pairs):
        """``n_shapes`` shape terms of target ``ys`` (``data`` is its chunked form): chosen on
        at most ``shapes_.SEARCH_ROWS`` rows, then backfitted on all rows over the chosen
        terms only. Returns ``(search result, state on all rows, compact spec, its Grams)``."""
        rows = _subsample(xs.shape[0], shapes_.SEARCH_ROWS, self.random_state)
        sub = data if rows is None else self._data(xs[rows], ys[rows],
                                                   None if sw is None else sw[rows], params, dtype,
                                                   shard=False)
        sres, found, spec, gr = self._shape_search(sub, scale, n_shapes, max_terms, pairs,
                                                   grams=rows is None)
        if rows is None:
            state = shapes_.finish_jit(sres.program._replace(shapes=found), data, gr, spec,
                                       SHAPE_SWEEPS_ALL_ROWS)
        else:
            gr = shapes_.grams_jit(data, spec)
            state = shapes_.refit(found, data, spec, SHAPE_SWEEPS_SUBSET, gr=gr)
        return sres, state, spec, gr

    def _shape_search(self, sub, scale, n_shapes, max_terms, pairs, grams=False):
        """The greedy search of ``n_shapes`` shape terms (``shapes=S``) on the chunked data
        ``sub`` (all rows, or at most ``SEARCH_ROWS`` of them; read from the source on a
        streamed fit), its progress reported. ``pairs``: the candidate pairs, None screens
        them (:func:`jaxtree.shapes.screen_pairs`). Returns ``(search result, chosen terms
        and spec compacted, sub's Grams compacted or None when not ``grams``)``. Shared by
        the in-memory (:meth:`_search_shapes`) and streamed (:meth:`_stream_shapes_first`)
        fits."""
        n1, n2 = (int(v) for v in self.shape_knots)
        pairs = shapes_.screen_pairs(sub) if pairs is None else pairs
        spec = shapes_.ShapeSpec(n1=n1, n2=n2, max_terms=max_terms, pairs=pairs)
        gr = shapes_.grams_jit(sub, spec)
        sres = search.run(lambda s: search.shape_step_jit(s, sub, gr, spec),
                          shapes_.start(sub, spec), n_shapes, self._progress, loss_scale=scale)
        found, spec, gr = shapes_.compact(sres.program.shapes, spec, gr if grams else None)
        return sres, found, spec, gr

    def _auto_shapes_apply(self, n_rows: int) -> bool:
        """Whether ``shapes="auto"`` searches shape terms on a fit of ``n_rows`` (in memory,
        or read in blocks: :meth:`_stream_shapes`)."""
        return self.shapes == "auto" and n_rows >= AUTO_SHAPES_MIN_ROWS and self.engine == "jax"

    def _fit_tree_then_shapes(self, xs, ys, sw, params, dtype, sc):
        """``shapes="auto"``: the tree as without shapes, then up to :data:`AUTO_SHAPES` shape
        terms of its residual, as many as held-out rows support (the one-standard-error rule;
        often none, and then the fit is the tree's exactly), then the tree's weights refined
        given the shapes. The tree comes first so that data whose truth has the tree's form
        keeps the tree's formula: shapes fitted first take such structure with
        piecewise-linear pieces the tree cannot undo (BENCHMARKS.md, "Shape terms").
        :meth:`_stream_shapes` is the same for data read block by block. With ``devices``
        the tree is searched sharded and the shape stage runs on one device, as for
        ``shapes=S`` (:meth:`_fit_shapes` says why)."""
        scale = float(sc.y_scale) ** 2
        tree = self._fit_jax(xs, ys, sw, params, dtype, sc, tree_only=True)
        data = self._data(xs, ys, sw, params, dtype, shard=False)
        program = jax.tree_util.tree_map(jnp.asarray, jax.device_get(tree.program))
        t_fit = _tree_values(program, data.x, params.basis)
        rs = ys - np.asarray(t_fit, np.float64).reshape(-1)[: xs.shape[0]]
        split = self._held_out(xs, rs, sw, params, dtype, max_train=shapes_.SEARCH_ROWS,
                               shard=False)
        chosen = self._auto_shape_terms(tree, split, params, dtype, scale)
        if chosen is None:
            return tree
        found, spec, sres, stopped = chosen
        rdata = data._replace(y=data.y - t_fit)  # the tree's residual, chunked
        state = shapes_.refit(found, rdata, spec, 1, gr=shapes_.grams_jit(rdata, spec))
        resid = data._replace(y=data.y - state.fit)  # y minus the shapes: the tree's target
        if self.refine == "optax":
            program, _ = _joint(program, resid, params.basis, steps=params.steps)
        mse = float(_held_out_mse(program, resid, params.basis))
        return self._tree_with_shapes(tree, program, sres, stopped, mse, state.shapes, spec,
                                      scale)

    def _auto_shape_terms(self, tree, split, params, dtype, scale):
        """The shape terms ``shapes="auto"`` adds after ``tree``: the held-out selection run on
        ``split = (training data, held-out data, held-out rows)`` of the tree's residual
        (:meth:`_choose_shapes`), its progress reported (the callback may stop it), and the
        run's terms at the chosen count, compacted (no second search: the terms are those the
        held-out rows judged). Returns ``(shapes, spec, selection result cut to the count,
        status)``, or None when no term is chosen."""
        n_shapes, pairs, sel, spec = self._choose_shapes(
            None, None, None, params, dtype, scale, max_terms=AUTO_SHAPES,
            after=len(tree.history), states=True, split=split)
        stopped = search.Status.OK
        for i in range(n_shapes):  # the progress bar and callback, as for a search
            if self._progress(len(tree.history) + i, float(sel.history[i]), sel.choices[i]):
                stopped = search.Status.STOPPED if i + 1 < n_shapes else stopped
                n_shapes = i + 1  # the callback stops here
                break
        if n_shapes == 0:
            return None
        found, spec, _ = shapes_.compact(jax.device_get(sel.programs[n_shapes - 1]).shapes, spec)
        sres = sel._replace(history=sel.history[:n_shapes], choices=sel.choices[:n_shapes])
        return found, spec, sres, stopped

    def _tree_with_shapes(self, tree, program, sres, stopped, mse, terms, spec, scale):
        """The search result of the tree followed by shape terms: ``program`` (the tree given
        the shapes), the histories and choices concatenated (the last loss: ``mse``, the final
        model's on all rows, scaled space); the shapes are left in ``_shape_fit``."""
        history = list(tree.history) + list(sres.history)
        history[-1] = mse * scale
        self._shape_fit = (terms, spec)
        # The selection run's own stops (the bound, its early stop, or running out of
        # candidates: with p covariates there are p mains and at most MAX_PAIRS pairs, fewer
        # than AUTO_SHAPES at p <= 5) are not the model's status, and the count it chose lies
        # before any of them.
        status = tree.status | stopped
        return search.SearchResult(program, np.asarray(history, np.float64),
                                   list(tree.choices) + list(sres.choices), status)

    def _choose_shapes(self, xs, ys, sw, params, dtype, scale, max_terms=None, after=0,
                       states=False, split=None):
        """``(number of shapes, candidate pairs)`` chosen on held-out rows: the shape search
        on the training part with the held-out MSE after each term; the smallest count within
        one standard error of the best (counting the intercept-only model as 0 terms).
        ``max_terms``: the bound (``shapes`` when None); ``after``: iterations already run
        (the progress bar's position); ``states``: also return the selection run (its
        ``programs`` are the states after each term) and its spec. ``split``: the
        ``(training data, held-out data, held-out rows)`` to use instead of
        :meth:`_held_out`'s split of ``xs, ys, sw`` (a streamed fit's subset)."""
        n1, n2 = (int(v) for v in self.shape_knots)
        max_terms = int(self.shapes) if max_terms is None else max_terms
        data, held_data, held = split if split is not None else self._held_out(
            xs, ys, sw, params, dtype, max_train=shapes_.SEARCH_ROWS, shard=False)
        pairs = shapes_.screen_pairs(data)
        spec = shapes_.ShapeSpec(n1=n1, n2=n2, max_terms=max_terms, pairs=pairs)
        gr = shapes_.grams_jit(data, spec)
        step = search.with_validation(lambda s: search.shape_step_jit(s, data, gr, spec),
                                      lambda s: _shape_mse(s.shapes, held_data, spec))
        start = shapes_.start(data, spec)
        # "auto" shapes stop once AUTO_PATIENCE more terms have not lowered the held-out MSE
        sel = search.run(step, start, max_terms, loss_scale=scale, keep_states=True,
                         patience=AUTO_PATIENCE if states else None)
        empty = float(_shape_mse(start.shapes, held_data, spec)) * scale
        val = np.r_[empty, sel.val_history]
        n_best = _choose_size(val, len(held))
        names = self._bar.names
        self._shape_path = [dict(n_shapes=0, train_mse=float(_shape_mse(start.shapes, data, spec))
                                 * scale, val_mse=empty, terms=[])]
        for i, (st, h, v) in enumerate(zip(sel.programs, sel.history, sel.val_history)):
            self._shape_path.append(dict(n_shapes=i + 1, train_mse=float(h), val_mse=float(v),
                                         terms=shapes_.term_names(st.shapes, spec, names)))
        self._bar.reset(after + n_best if after else n_best + params.k, "refit")
        return (n_best, pairs, sel, spec) if states else (n_best, pairs)

    def _fit_stream(self, X, y, sample_weight, params):
        """Streaming fit of a memmap / ChunkReader (see :mod:`jaxtree.stream`); shape terms in
        bounded memory: ``shapes="auto"`` after the tree (:meth:`_stream_shapes`),
        ``shapes=S`` before it (:meth:`_stream_shapes_first`).

        Missing values (issue 12): with ``missing="indicator"`` one streamed pass over ``X``
        first (:func:`_streamed_encoding`) finds the columns with NaN and their minima and
        builds the spec the in-memory fit builds for the same array; when there are some, the
        search reads ``X`` encoded on demand (:class:`jaxtree._encoding.EncodedRows`: fill
        values and ``"<col> missing"`` indicators made block by block, never for the whole
        array), so the model, its ``encoding_`` and formulas are the in-memory fit's. The
        price is that one extra read of ``X``; ``missing="error"`` skips it for data known to
        hold no NaN. A user's ChunkReader is read the
        same way (its ``x`` wrapped, its ``y``, weights and chunk size kept): a reader is only
        its arrays and a chunk size, so refusing it would only make the user rebuild it. With
        ``missing="error"`` there is no extra pass: the scaling pass refuses a NaN, naming its
        row and column. ``inf`` is refused under both policies."""
        if self.engine != "jax":
            raise ValueError("Streaming a memmap or ChunkReader needs engine='jax'.")
        _check_stream_args(X, y, sample_weight, None, "them")  # held-out sizes stream
        params, self.row_plan_ = _stream_plan(self, X, params)
        if isinstance(X, stream_.ChunkReader):
            reader = X
        else:
            y = y if isinstance(y, np.ndarray) else V.check_y(y, X.shape[0] if X.ndim else 0)
            if y.dtype.kind in "biu":  # integer targets: n numbers, cheap to hold as floats
                y = np.asarray(y, np.float64)
            # A small memmap simply fits: one chunk of all its rows.
            chunk = min(params.chunk, X.shape[0]) if X.ndim and X.shape[0] else params.chunk
            reader = stream_.ChunkReader(X, y, sample_weight, chunk_size=chunk)
        reader, enc = _streamed_encoding(reader, self.missing)
        x64 = bool(jax.config.jax_enable_x64)
        dtype = V.float_dtype_for(np.empty(0, reader.x.dtype), x64)
        feature_names = (tuple(f"x{j + 1}" for j in range(reader.p)) if enc is None
                         else enc.feature_names_out)
        res, sc, params = self._search_reader(reader, params, dtype, feature_names)
        model = self._reader_model(res, sc, dtype, params, feature_names)
        self._pending_encoding = enc  # None: the identity spec, as before (from the scaling)
        self._set_fitted(model, res.history, res.choices, res.status, None)
        self.pruned_ = self.__dict__.pop("_pruned", None)
        return self

    def _fit_reference(self, xs, ys, sw, params, dtype, sc):
        """The paper's algorithm in numpy (:func:`jaxtree.reference.step`) under the same
        driver as the JAX engine: same choices' keys, history units, callback and status."""
        xdt = jnp.float64 if jax.config.jax_enable_x64 else jnp.float32
        phi = np.asarray(params.basis.evaluate(jnp.asarray(xs, xdt)), np.float64)
        ys = np.asarray(ys, np.float64)

        def step(tree):
            tree, r = reference_.step(tree, phi, ys, sw, max_k=params.k, refine=self.refine,
                                      sweeps=params.sweeps)
            choice = search.Choice(r.flat_index, r.slot, r.op, r.feature, r.basis, r.weight,
                                   r.intercept, r.sse)
            return tree, search.StepInfo(r.loss, choice, search.STATUS_OK)

        res = search.run(step, None, params.k + 1, self._progress, loss_scale=float(sc.y_scale) ** 2)
        t = res.program
        program = prog.from_arrays(t.op, t.left, t.right, t.feature, t.basis, t.weight,
                                   t.intercept, t.n_slots, dtype=dtype)
        return res._replace(program=program)

    # ------------------------------------------------------------------------ predict

    def _check_fitted(self):
        if not hasattr(self, "model_"):
            raise _interop_class("NotFittedError", V.NotFittedError)(
                "This TreeRegressor is not fitted yet. Call fit(X, y) before predict, score, "
                "formula or save."
            )

    def predict(self, X) -> np.ndarray:
        """Predictions in ``y``'s units, float64 numpy ``(n_samples,)``.

        ``X`` must have the columns of ``fit``, in the same order. A DataFrame is checked by
        its column names when the model was fitted on one (``feature_names_in_``): other
        names or another order raise ValueError; names on one side only warn
        (scikit-learn's rule, see :func:`jaxtree._validation.check_feature_names`).
        """
        self._check_fitted()
        names = getattr(self, "feature_names_in_", None)
        V.check_feature_names(X, names, type(self).__name__)
        xa = self._encode(X)
        return _predict_in_chunks(self.model_, xa, self.clip)

    def score(self, X, y, sample_weight=None) -> float:
        """Coefficient of determination R² of the predictions (``X`` is checked as in
        :meth:`predict`, column names included)."""
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
        """The fitted formula as text, in ``X``'s and ``y``'s units.

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
        from jaxtree import _formula

        return self.model_.formula(digits, tol=tol, scaled=scaled,
                                   indicators=_formula.indicator_labels(self.encoding_))

    def law(self, digits: int = 4):
        """The fitted formula as a readable sympy expression in ``X``'s and ``y``'s units,
        constants merged and rounded (see :func:`jaxtree.simplify.law`; needs sympy)."""
        self._check_fitted()
        return simplify_.law(self.model_, digits)

    # ------------------------------------------------------------------------- exports

    def to_sympy(self, **kwargs):
        """The fitted formula as a sympy expression in ``X``'s units: exact by default,
        the printed formula with ``tol=`` (see :func:`jaxtree.export.to_sympy`)."""
        self._check_fitted()
        from jaxtree import _formula

        kwargs.setdefault("indicators", _formula.indicator_labels(self.encoding_))
        return export_.to_sympy(self.model_, **kwargs)

    def to_latex(self, **kwargs) -> str:
        """The printed formula as LaTeX; ``scaled=True``: the raw scaled tree (see
        :func:`jaxtree.export.to_latex`)."""
        self._check_fitted()
        from jaxtree import _formula

        kwargs.setdefault("indicators", _formula.indicator_labels(self.encoding_))
        return export_.to_latex(self.model_, **kwargs)

    def to_dot(self, **kwargs) -> str:
        """The fitted tree as Graphviz DOT text (see :func:`jaxtree.export.to_dot`)."""
        self._check_fitted()
        return export_.to_dot(self.model_, **kwargs)

    def plot_tree(self, ax=None, **kwargs):
        """Draws the fitted tree with matplotlib; returns the Figure."""
        self._check_fitted()
        return export_.plot_tree(self.model_, ax=ax, **kwargs)

    def plot_history(self, ax=None):
        """Plots the training loss after each iteration (``history_``); returns the Figure."""
        self._check_fitted()
        return export_.plot_history(self.history_, ax=ax)

    def explain(self, X) -> list:
        """The fitted model as a sum of top-level terms, each evaluated at ``X`` (checked and
        encoded as in :meth:`predict`), with its share of the explained variance and its mean
        absolute contribution, largest first (see :func:`jaxtree.export.term_values`)."""
        self._check_fitted()
        V.check_feature_names(X, getattr(self, "feature_names_in_", None), type(self).__name__)
        return export_.term_values(self.model_, self._encode(X))

    def plot_terms(self, X, **kwargs):
        """One panel per top-level term over its covariates (see :func:`jaxtree.export.plot_terms`)."""
        self._check_fitted()
        V.check_feature_names(X, getattr(self, "feature_names_in_", None), type(self).__name__)
        return export_.plot_terms(self.model_, self._encode(X), **kwargs)

    def shape_terms(self) -> list:
        """The shape terms in ``X``'s and ``y``'s units (see :func:`jaxtree.export.shape_terms`)."""
        self._check_fitted()
        return export_.shape_terms(self.model_)

    def plot_shapes(self, **kwargs):
        """Plots each shape term, a curve or a heat map (see :func:`jaxtree.export.plot_shapes`)."""
        self._check_fitted()
        return export_.plot_shapes(self.model_, **kwargs)

    def save(self, path) -> None:
        """Writes the fitted model to ``path`` as versioned JSON (see :func:`jaxtree.load`)."""
        self._check_fitted()
        # Not the devices: where a model was fitted says nothing about where it is loaded.
        extra = {"params": {k: v for k, v in self.get_params().items()
                            if isinstance(v, (int, float, str, bool, type(None)))
                            and k != "devices"},
                 "history": [float(h) for h in self.history_]}
        enc = getattr(self, "encoding_", None)
        model_.save(self.model_, path, extra,
                    encoding=None if enc is None or enc.is_identity else enc.to_dict())


class _ProgressBar:
    """A tqdm bar over the ``k+1`` iterations of a fit, shown when ``verbose > 0``.

    Each update shows the training MSE (in ``y``'s units) and the chosen insertion; ``verbose >
    1`` also writes one line per iteration. Until the first iteration ends the bar says
    "compiling" (the first step's time includes its compilation). The CLI uses this bar too.
    """

    loss_name = "mse"  # the loss shown; TreeClassifier sets "log-loss" or "ramp"

    def __init__(self, k: int, verbose, names=None, basis=None):
        self.total, self.verbose, self.names, self.basis = k + 1, verbose, names, basis
        self.bar = (tqdm.tqdm(total=k + 1, desc="jaxtree (compiling)", unit="it", file=sys.stderr,
                              leave=True, dynamic_ncols=True) if verbose else None)

    def describe(self, it, info) -> str:
        """``'leaf 0.31·sin(3πage)'`` or ``'+ 0.2·x2² at slot 2'`` for an iteration's choice."""
        try:
            j, i, op = int(info["feature"]), int(info["basis"]), int(info["op"])
        except (KeyError, TypeError, ValueError):
            return ""
        names = self.names or tuple(f"x{m + 1}" for m in range(max(j, int(info.get("feature2", -1))) + 1))
        if info.get("move") == search.MOVE_SHAPE:
            j2 = int(info["feature2"])
            return f"shape f({names[j]})" if j2 < 0 else f"shape f({names[j]}, {names[j2]})"
        if self.basis is None or not (0 <= j < len(names) and 0 <= i < self.basis.q):
            return "no candidate"
        term = self.basis.render(i, str(names[j]))
        if "weight" in info:
            term = f"{float(info['weight']):.3g}·{term}"
        if it == 0 or op == prog.LEAF:
            return f"leaf {term}"
        return f"{prog.OP_SYMBOLS.get(op, '?')} {term} at slot {int(info['slot'])}"

    def update(self, it, loss, info) -> None:
        if self.bar is None:
            return
        if self.bar.desc == "jaxtree (compiling)":
            self.bar.set_description_str("jaxtree", refresh=False)
        text = f"{self.loss_name}={loss:.4g} {self.describe(it, info)}".rstrip()
        self.bar.set_postfix_str(text, refresh=False)
        self.bar.update(1)
        if self.verbose > 1:
            self.bar.write(f"[jaxtree] iteration {it:3d}  {text}", file=sys.stderr)

    def reset(self, k: int, what: str) -> None:
        """Starts a second phase of the fit (e.g. the refit after choosing the size)."""
        self.total = k + 1
        if self.bar is not None:
            self.bar.reset(total=k + 1)
            self.bar.set_description_str(f"jaxtree {what}", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def load(path, custom_functions=None) -> TreeRegressor:
    """Loads a model file written by :meth:`TreeRegressor.save` into a fitted estimator.

    Args:
      path: the JSON file.
      custom_functions: ``{name: fn}`` for custom basis functions (they are saved by name).

    Raises:
      ValueError: for a file of another version, a corrupted or foreign file.
    """
    d = model_.load_dict(path)
    m = model_.from_dict(d, custom_functions, path)
    params, hist = model_.read_extra(d, path)
    valid = set(TreeRegressor._get_param_names())
    est = TreeRegressor(**{k: v for k, v in params.items()
                           if k in valid and k not in ("basis", "devices")})
    est.basis = m.basis
    try:
        est._check_params()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: not a valid jaxtree model file: bad saved parameter: {exc}") from None
    names = _loaded_names(est, d, m.feature_names, path)
    return est._set_fitted(m, hist, [], search.Status.OK, names)


def _loaded_names(est, d, feature_names, path):
    """The raw column names of a loaded model (None for the default ``x1, x2, ...``), and
    its optional ``encoding`` entry (missing values / categories, :mod:`jaxtree._encoding`)
    checked against the model's covariates and left on ``est`` for ``_set_fitted``."""
    default_names = all(n == f"x{j + 1}" for j, n in enumerate(feature_names))
    names = None if default_names else feature_names
    if isinstance(d, dict) and "encoding" in d:
        enc = encoding_.from_dict(d["encoding"], path)
        if enc.feature_names_out != tuple(feature_names):
            raise ValueError(f"{path}: not a valid jaxtree model file: the encoding makes the "
                             f"covariates {list(enc.feature_names_out)}, but the model has "
                             f"{list(feature_names)}")
        est._pending_encoding = enc
        names = tuple(c.name for c in enc.columns) if enc.named else None
    return names


class _Params(NamedTuple):
    """Validated hyperparameters that the fit paths use."""

    k: int
    chunk: Optional[int]  # None: "auto", set by planned() once n, p and the dtype are known
    sweeps: int
    steps: int
    basis: basis_.Basis
    block: int = plan_.CPU_CHUNKS_PER_BLOCK  # chunks per streamed block (the plan's)


def _check_callback(value, name):
    if value is not None and not callable(value):
        raise TypeError(f"{name} must be callable; got {type(value).__name__}.")


def _check_devices(value, name):
    if value is not None:
        sharding_.resolve_devices(value)  # ValueError naming the count available


# One declarative table of the estimator's constraints (scikit-learn's
# ``_parameter_constraints``): name -> check(value, name). fit_batch checks its own
# arguments with the same table.
def _check_shape_knots(value, name):
    ok = (isinstance(value, (tuple, list)) and len(value) == 2
          and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 2 <= v <= 64
                  for v in value))
    if not ok:
        raise ValueError(f"{name} must be a pair (n1, n2) of integers in [2, 64] (hats per "
                         f"one-covariate shape, hats per axis of a two-covariate shape); got "
                         f"{value!r}.")


PARAMETER_CONSTRAINTS = {
    "k": lambda v, n: V.check_int(v, n, 0),
    "refine": lambda v, n: V.check_choice(v, n, search.REFINE_MODES),
    "engine": lambda v, n: V.check_choice(v, n, ENGINES),
    "precision": lambda v, n: V.check_choice(v, n, tuple(scoring.PRECISIONS)),
    "chunk_size": lambda v, n: plan_.check_chunk_size(v, n),
    "coordinate_sweeps": lambda v, n: V.check_int(v, n, 0),
    "refine_steps": lambda v, n: V.check_int(v, n, 0),
    "clip": V.check_bool,
    "callback": _check_callback,
    "devices": _check_devices,
    "search": lambda v, n: V.check_choice(v, n, ("auto",) + search.SEARCHES),
    "shapes": lambda v, n: v if isinstance(v, str) and v == "auto" else _check_shapes(v, n),
    "beam_width": lambda v, n: V.check_int(v, n, 1),
    "shape_knots": _check_shape_knots,
}


def check_params(params) -> _Params:
    """Checks hyperparameters against :data:`PARAMETER_CONSTRAINTS` (names not in ``params``
    are not checked) and returns the ones the fit paths use.

    Raises:
      ValueError / TypeError: naming the parameter, the value and the valid choices.
    """
    for name, check in PARAMETER_CONSTRAINTS.items():
        if name in params:
            check(params[name], name)
    if params.get("engine", "jax") == "reference" and params.get("search", "auto") not in ("greedy", "auto"):
        raise ValueError("engine='reference' implements the paper's algorithm: use search='greedy' "
                         "(other searches need engine='jax').")
    if (params.get("engine", "jax") == "reference"
            and params.get("validation_fraction") not in (None, "auto")):
        raise ValueError("validation_fraction needs engine='jax' (the reference engine runs the "
                         "paper's algorithm with a fixed k).")
    if params.get("shapes") not in (None, 0, "auto") and params.get("engine", "jax") == "reference":
        raise ValueError("shapes > 0 needs engine='jax' (the reference engine runs the paper's "
                         "algorithm, which has no shape terms).")
    if params.get("engine", "jax") == "reference" and params.get("refine", "optax") == "optax":
        raise ValueError(
            "engine='reference' implements the paper's algorithm: use refine='coordinate' "
            "or refine=None (refine='optax' needs engine='jax')."
        )
    chunk = params.get("chunk_size", "auto")
    return _Params(int(params.get("k", 10)), None if chunk == "auto" else int(chunk),
                   int(params.get("coordinate_sweeps", 3)), int(params.get("refine_steps", 20)),
                   basis_.get_basis(params.get("basis")))


def planned(params: _Params, n: int, p: int, dtype, chunk_size="auto",
            devices=None, batch: int = 1) -> tuple:
    """``(params, plan)``: the row plan (:func:`jaxtree.plan.row_plan`) of a fit of ``n`` rows
    and ``p`` covariates on the platform of ``devices`` (None: JAX's default backend), and
    ``params`` with its chunk and streamed block size. Every fit entry point calls this once,
    as soon as it knows ``n``, ``p`` and the dtype."""
    platform = plan_.platform_of(None if devices is None else sharding_.resolve_devices(devices))
    plan = plan_.row_plan(n, p, params.basis.q, dtype, chunk_size=chunk_size, platform=platform,
                          cpu_chunked_values=CHUNKED_FIT_MIN_VALUES, batch=batch)
    return params._replace(chunk=plan.chunk, block=plan.chunks_per_block), plan


_held_out_mse = jax.jit(refine_.mse, static_argnames=("basis",))
_held_out_mse_cached = _executables.cached(_held_out_mse, static_argnums=(2,))


@functools.partial(jax.jit, static_argnames=("basis",))
def _best_member(programs, data, basis):
    """The beam member with the lowest training MSE (the one :func:`jaxtree.search.beam_fit`
    returns)."""
    loss = jax.vmap(lambda p: refine_.mse(p, data, basis))(programs)
    i = jnp.argmin(jnp.where(jnp.isfinite(loss), loss, jnp.inf))
    return jax.tree_util.tree_map(lambda a: a[i], programs)
_joint = jax.jit(refine_.joint, static_argnames=("basis", "steps"))


@functools.partial(jax.jit, static_argnames=("spec",))
def _shape_mse(shapes, data, spec):
    """Weighted MSE of shape terms alone on chunked data (scaled space)."""
    return shapes_.mse(data, jax.vmap(lambda xb: shapes_.evaluate(shapes, xb, spec))(data.x))


@functools.partial(jax.jit, static_argnames=("basis",))
def _tree_values(program, x, basis):
    """The tree's predictions (scaled space) on chunked covariates ``(n_chunks, m, p)``."""
    return jax.vmap(lambda xb: prog.evaluate(program, xb, basis))(x)

def _path_rows(models, history, val_history) -> list:
    """``path_``'s rows: per size the operations, training and held-out MSE (``y``'s units)
    and model (shared by the estimator's paths and :func:`jaxtree.fit_batch`); the formula is
    added on first access (``TreeRegressor.path_``)."""
    return [dict(n_ops=_n_ops(m.program), train_mse=float(h), val_mse=float(v), model=m)
            for m, h, v in zip(models, history, val_history)]


def _n_ops(program) -> int:
    return int((int(np.asarray(program.n_slots)) - 1) // 2) if int(np.asarray(program.n_slots)) else 0


def _subsample(n: int, m: int, random_state):
    """Sorted indices of a deterministic random subset of ``m`` of ``n`` rows (seeded by
    ``random_state``, None as 0), or None when ``n <= m`` (all rows)."""
    if n <= m:
        return None
    rng = np.random.default_rng(0 if random_state is None else random_state)
    return np.sort(rng.choice(n, m, replace=False))


def _read_rows(reader, rows, sc, params, dtype, program=None) -> scoring.Data:
    """The rows ``rows`` (sorted) of ``reader`` read into memory, scaled by ``sc`` and chunked
    as an in-memory fit chunks them, with ``y`` the target or, given ``program``, the tree's
    residual (a streamed fit's shape search: :meth:`TreeRegressor._stream_shapes`,
    :meth:`TreeRegressor._stream_shapes_first`)."""
    x, y, w = reader.take(rows)
    xs, ys = scaling_.apply(sc, x, y, w)
    xj = jnp.asarray(xs, dtype)
    if program is not None:
        t_fit = _tree_values(program, scoring.chunk(xj, jnp.zeros(len(rows), dtype),
                                                    chunk_size=params.chunk).x, params.basis)
        ys = ys - np.asarray(t_fit, np.float64).reshape(-1)[: len(rows)]
    return scoring.chunk(xj, jnp.asarray(ys, dtype), None if w is None else jnp.asarray(w, dtype),
                         chunk_size=params.chunk)


def _shape_rows(n: int, fraction, random_state):
    """``(train_rows, held_rows)``, sorted: the rows of ``shapes="auto"``'s selection run on
    a streamed fit (:meth:`TreeRegressor._stream_shapes`), read into memory.

    While the in-memory fit's held-out part (``fraction`` of ``n``) has at most
    ``shapes.SEARCH_ROWS`` rows, exactly the in-memory rows (:func:`_split`, then at most
    ``SEARCH_ROWS`` training rows by :func:`_subsample`), so both fits choose on the same
    rows. Beyond, ``SEARCH_ROWS`` held-out and at most ``SEARCH_ROWS`` training rows, drawn
    without replacement in ``O(SEARCH_ROWS)`` memory (a permutation of ``n`` would not be):
    the one-standard-error tolerance is then that of ``SEARCH_ROWS`` held-out rows (0.3% of
    the MSE at 200,000) instead of ``fraction * n``'s."""
    cap = shapes_.SEARCH_ROWS
    n_held = min(max(int(round(fraction * n)), 1), n - 2)
    if n_held <= cap:
        train, held = _split(n, fraction, random_state)
        sub = _subsample(len(train), cap, random_state)
        return (train if sub is None else train[sub]), held
    n_held = cap
    m = n_held + min(cap, n - n_held)
    rng = np.random.default_rng(0 if random_state is None else random_state)
    picked = np.unique(rng.integers(0, n, size=m + m // 4))
    while len(picked) < m:  # rare: more duplicates than the margin
        picked = np.union1d(picked, rng.integers(0, n, size=m))
    picked = rng.permutation(picked)[:m]  # a uniform random subset of m distinct rows
    return np.sort(picked[n_held:]), np.sort(picked[:n_held])


def _selection_rows(n_train: int, n: int, p: int, q: int, chunk_size: int,
                    pair_rows: int = 0):
    """The row count to chunk a held-out split's training part as (``scoring.chunk``'s
    ``rows``), or None to chunk it by its own size.

    ``n``: all rows, so that the selection run and the refit share one compiled step (their
    data have one shape; zero-weight padding rows change no sum), where compiling costs more
    than searching (``n*p*q`` below :data:`jaxtree.scoring.BUCKET_MIN_WORK`, the capacity
    buckets' rule) and, with a pair screen of ``pair_rows > 0`` rows, where the padding
    leaves its stride unchanged (``search._screen_rows`` takes every ``stride``-th row of
    the chunked shape: a longer shape would screen fewer of the training rows)."""
    if not scoring.compiling_dominates(n, p, q):
        return None
    if pair_rows > 0:
        stride = lambda r: search.screen_stride(math.prod(scoring.chunk_shape(r, chunk_size)),  # noqa: E731
                                                pair_rows)
        if stride(n) != stride(n_train):
            return None
    return n


def _split(n: int, fraction, random_state):
    """Deterministic held-out split: ``(train_rows, held_rows)``, each non-empty."""
    rng = np.random.default_rng(0 if random_state is None else random_state)
    order = rng.permutation(n)
    n_held = min(max(int(round(fraction * n)), 1), n - 2)
    return np.sort(order[n_held:]), np.sort(order[:n_held])


def _choose_size(val_history, n_held: int) -> int:
    """The smallest number of operations whose held-out MSE is within one standard error of
    the best (the "one-standard-error rule"; the path starts at 0 operations, the first leaf).

    The standard error of a held-out MSE over ``n_held`` rows with Gaussian residuals is
    ``MSE * sqrt(2 / n_held)``; it is the tolerance, so a larger tree must beat a smaller
    one by more than the held-out set can resolve.
    """
    val = np.asarray(val_history, np.float64)
    best = np.min(val)
    tol = np.sqrt(2.0 / max(int(n_held), 1)) * abs(best)
    return int(np.flatnonzero(val <= best + tol)[0])


def _check_fraction(value, name):
    if value is None or (isinstance(value, str) and value == "auto"):
        return
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not 0 < value < 1:
        raise ValueError(f"{name} must be 'auto', None or a number strictly between 0 and 1; "
                         f"got {value!r}.")


PARAMETER_CONSTRAINTS["validation_fraction"] = _check_fraction


# ------------------------------------------------------------------ exact laws (issue 14)
# Target transforms, the y bound, binding per-covariate basis families to the training
# ranges and pruning: each a small function called once from ``fit``.

TARGET_TRANSFORMS = (None, "identity", "log", "square", "auto")


def _check_y_bound(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not (
            0 < value <= 1):
        raise ValueError(f"{name} must be a number in (0, 1] (y is mapped into [-{name}, {name}]"
                         f"); got {value!r}.")


def _check_prune_tol(value, name):
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not (
            np.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be None or a number >= 0 (the largest drop of training "
                         f"R² a removed leaf may cost, e.g. 1e-4); got {value!r}.")


PARAMETER_CONSTRAINTS["target_transform"] = lambda v, n: V.check_choice(v, n, TARGET_TRANSFORMS)
PARAMETER_CONSTRAINTS["y_bound"] = _check_y_bound
PARAMETER_CONSTRAINTS["prune_tol"] = _check_prune_tol
# Tables (issue 12): missing values and categories, encoded at the boundary (jaxtree._encoding).
PARAMETER_CONSTRAINTS["missing"] = encoding_.check_missing
PARAMETER_CONSTRAINTS["categorical_features"] = encoding_.check_categorical_features
PARAMETER_CONSTRAINTS["max_categories"] = lambda v, n: V.check_int(v, n, 2)
PARAMETER_CONSTRAINTS["min_frequency"] = lambda v, n: V.check_int(v, n, 1)


def _check_stream_args(X, y, sample_weight, validation_fraction, held: str) -> None:
    """What both estimators refuse before streaming ``X`` (a memmap or a ChunkReader): a
    held-out size, and ``y``/``sample_weight`` beside a ChunkReader (which holds ``held``)."""
    if validation_fraction is not None:
        raise ValueError("validation_fraction is not supported for streamed data (a memmap or "
                         "ChunkReader) yet; set validation_fraction=None and choose k, or fit an "
                         "in-memory array.")
    if isinstance(X, stream_.ChunkReader) and (y is not None or sample_weight is not None):
        raise ValueError("With a ChunkReader pass y=None and sample_weight=None: the reader "
                         f"already holds {held}.")


def _check_streamable_options(est, transform):
    if transform != "identity":
        raise ValueError("target_transform is not supported for streamed data (a memmap or "
                         "ChunkReader) yet; fit an in-memory array, or leave it at None.")


def _streamed_encoding(reader, missing: str):
    """``(reader, spec or None)`` for :meth:`TreeRegressor._fit_stream`: with
    ``missing="indicator"``, one pass over ``reader.x`` (:func:`jaxtree._encoding.fit_streamed`,
    ``chunk_size`` rows at a time; refuses ``inf``) gives the spec the in-memory fit builds;
    when a column holds NaN, the returned reader reads the same rows, chunk size, dtype, ``y``
    and weights with ``x`` encoded on demand (:class:`jaxtree._encoding.EncodedRows`), else
    ``reader`` itself and None (the identity spec, set from the scaling as before)."""
    x, spec = _encoded_rows(reader.x, reader.chunk_size, missing)
    if spec is None:
        return reader, None
    enc = stream_.ChunkReader(x, reader.y, reader.sample_weight, chunk_size=reader.chunk_size,
                              dtype=reader.dtype)
    return enc, spec


def _encoded_rows(x, chunk_size: int, missing: str):
    """``(x, spec or None)``: a streamed ``x (n, p)`` read encoded on demand
    (:class:`jaxtree._encoding.EncodedRows`) when ``missing="indicator"`` and one pass
    (:func:`jaxtree._encoding.fit_streamed`) finds NaN; else ``x`` itself and None. Both
    estimators' streamed fits (the classifier reads ``x`` once per class)."""
    if missing != "indicator":  # "error": the scaling pass refuses NaN, naming row and column
        return x, None
    spec = encoding_.fit_streamed(x, chunk_size)
    if spec.is_identity:
        return x, None
    return encoding_.EncodedRows(x, spec), spec


CHUNKED_FIT_MIN_VALUES = 1 << 24
"""An in-memory ``X`` with at least this many values (``n * p``; 16.8 million, e.g. 2.1
million rows of 8 columns, 128 MiB as float64) is fitted chunk by chunk
(:meth:`TreeRegressor._fit_in_chunks`) when the options allow it (:func:`_fits_in_chunks`)."""

# The defaults' "auto" rules (see the class docstring and TreeRegressor._resolve_auto).
SHAPE_SWEEPS_ALL_ROWS = 2  # shapes=S: backfitting sweeps after a search on all rows ...
SHAPE_SWEEPS_SUBSET = 1  # ... and after one on a subset (a close start; each sweep S passes)
AUTO_SHAPES = 16  # shapes="auto": at most this many shape terms after the tree
AUTO_SHAPES_MIN_ROWS = 10_000  # ... on fits of at least this many rows
AUTO_PATIENCE = 3  # ... searched until this many terms in a row lower no held-out error
AUTO_SMALL_MAX_ROWS = AUTO_SHAPES_MIN_ROWS  # search="auto": "backfit" and a held-out size below
AUTO_PAIR_MAX_CANDIDATES = 4096  # ... with at most this many basis columns p*q
AUTO_VALIDATION = 0.2  # validation_fraction="auto": this share held out ...
AUTO_VALIDATION_MIN_ROWS = 20  # ... on small fits of at least this many rows
BACKFIT_MAX_CANDIDATES = 8192  # search="backfit" refuses more basis columns (pq x pq Grams)


def _check_shapes(value, name):
    if isinstance(value, str):
        raise ValueError(f"{name} must be 'auto' or an integer >= 0; got {value!r}.")
    return V.check_int(value, name, 0)


def _stream_plan(est, X, params) -> tuple:
    """``(params, plan)`` of a streamed fit of ``X`` (a memmap or a
    :class:`jaxtree.stream.ChunkReader`, whose own chunk size wins over ``chunk_size``):
    :func:`planned` with the rows, covariates and dtype of ``X``."""
    if isinstance(X, stream_.ChunkReader):
        n, p, raw, chunk = X.n, X.p, X.x.dtype, X.chunk_size
    else:
        n, p = (X.shape[0], X.shape[1]) if X.ndim == 2 else (0, 0)
        raw, chunk = X.dtype, est.chunk_size
    dtype = V.float_dtype_for(np.empty(0, raw), bool(jax.config.jax_enable_x64))
    return planned(params, n, p, dtype, chunk, est.devices)


def _fits_in_chunks(est, xa, transform, plan: plan_.RowPlan) -> bool:
    """Whether ``fit`` reads the (encoded) in-memory matrix ``xa`` chunk by chunk.

    For a large floating matrix (:data:`CHUNKED_FIT_MIN_VALUES`) under the options the
    streamed search supports: ``engine="jax"``, any ``search``, ``validation_fraction``
    (``"auto"`` means the greedy search grown to ``k`` there) and ``shapes`` (0, ``"auto"``
    or ``S``: :meth:`TreeRegressor._stream_shapes`, :meth:`TreeRegressor._stream_shapes_first`),
    no target transform, ``cache_basis=False`` (which asks for the basis values of every row
    in memory). Other options keep the in-memory path
    and its copies of the whole matrix; an integer matrix too (stream it as floats, or pass
    a float32 array). "Large" is the row plan's (``plan.in_memory`` False,
    :mod:`jaxtree.plan`): on a CPU from :data:`CHUNKED_FIT_MIN_VALUES` values on, on an
    accelerator once the covariates would not fit :data:`jaxtree.plan.ACCEL_IN_MEMORY_BYTES`
    on the device."""
    return (est.engine == "jax"
            and transform == "identity" and not est.cache_basis
            and xa.dtype.kind == "f" and xa.ndim == 2 and not plan.in_memory)


PREDICT_CHUNK_ROWS = 1 << 18
"""``predict`` evaluates at most this many rows per call (more rows: blocks of this size,
the last one padded, one compiled program), so the device and float64 copies of the input
and the intermediates stay ``O(block)`` (issue 12 item 7)."""


def _predict_in_chunks(model, xa, clip) -> np.ndarray:
    """Float64 predictions ``(n,)`` of the validated matrix ``xa (n, p)``, by row blocks
    (``xa`` may be a memmap's :class:`jaxtree._encoding.EncodedRows`: each block is encoded
    when read, and checked for infinite values there)."""
    dt = model.x_min.dtype
    n, m = xa.shape[0], PREDICT_CHUNK_ROWS
    lazy = not isinstance(xa, np.ndarray)  # EncodedRows: rows encoded when read
    if n <= m:
        xa = _finite_block(xa[0:n], 0) if lazy else xa
        return np.asarray(model_.predict(model, jnp.asarray(xa, dt), clip=clip), np.float64)
    out = np.empty(n, np.float64)
    for s in range(0, n, m):
        block = np.asarray(_finite_block(xa[s:s + m], s) if lazy else xa[s:s + m], dt)
        if block.shape[0] < m:  # pad the last block: the same compiled shape
            block = np.concatenate([block, np.repeat(block[-1:], m - block.shape[0], 0)])
        pred = model_.predict(model, jnp.asarray(block), clip=clip)
        out[s:s + m] = np.asarray(pred, np.float64)[: min(m, n - s)]
    return out


def _finite_block(block, start: int) -> np.ndarray:
    """An encoded block of rows from ``start``: ValueError naming the first infinite value."""
    if not np.isfinite(block).all():
        row, col = (int(i) for i in np.argwhere(~np.isfinite(block))[0])
        raise ValueError(f"X contains an infinite value at row {start + row} (the first); "
                         "remove or replace infinite values before predicting.")
    return block


def _bounded_scaling(sc, y_bound):
    """The scaling with ``y`` mapped into ``[-y_bound, y_bound]`` instead of ``[-1, 1]``."""
    y_bound = float(y_bound)
    return sc if y_bound == 1.0 else sc._replace(y_scale=np.asarray(sc.y_scale) / y_bound)


def _bind_basis(params, sc):
    """Binds families on the covariates' original units to the training ranges."""
    x_max = np.asarray(sc.x_min) + 1.0 / np.asarray(sc.x_scale)
    return params._replace(basis=params.basis.bind(sc.x_min, x_max))


def _prune_result(est, res, xs, ys, sw, params, dtype):
    """``(res, removed)``: the search result with leaves pruned when ``prune_tol`` is set."""
    if est.prune_tol is None:
        return res, None
    data = est._data(xs, ys, sw, params, dtype)
    program = jax.tree_util.tree_map(jnp.asarray, res.program)
    out = simplify_.prune(program, data, params.basis, float(est.prune_tol), refine=est.refine,
                          refine_steps=params.steps, coordinate_sweeps=params.sweeps)
    return res._replace(program=out.program), _report_pruned(est, out.removed)


def _report_pruned(est, removed):
    """``removed`` (for ``pruned_``), said on stderr with ``verbose > 0``."""
    if est.verbose > 0 and removed:
        print(f"[jaxtree] pruned {len(removed)} leaf(s) at prune_tol={est.prune_tol}",
              file=sys.stderr)
    return removed


def _attach_target(model, transform, xa, yt, sw):
    """The model with its target transform (and Duan's smearing factor for ``"log"``; 1 for
    ``"square"``, which applies no bias correction: see :mod:`jaxtree._target`)."""
    if transform == "identity":
        return model
    import dataclasses

    if transform == "square":
        s = 1.0
    else:
        f = np.asarray(model_.predict(model, jnp.asarray(xa, model.x_min.dtype)), np.float64)
        s = target_.smearing(yt, f, sw)
    return dataclasses.replace(model, target_transform=transform,
                               smearing=jnp.asarray(s, model.x_min.dtype))


def _fit_auto_transform(est, X, y, sample_weight):
    """``target_transform="auto"``: choose identity, log or square on held-out rows, refit on
    all.

    A deterministic split (``random_state``, 25% held out) fits each applicable transform on
    the rest; the held-out MSE in ``y``'s units (predictions back-transformed) decides, ties
    to the earlier of identity, log, square. ``log`` is not tried when some ``y <= 0``,
    ``square`` when some ``y < 0``. Then the chosen transform is refitted on all rows. The
    estimator is left as it was if a fit fails.
    """
    if stream_.is_streamable(X):
        _check_streamable_options(est, "auto")
    xa, _ = est._encode_fit(X)  # the candidates are fitted on the encoded matrix
    n = xa.shape[0]
    ya = V.check_y(y, n)
    sw = V.check_sample_weight(sample_weight, n)
    keep = np.ones(n, bool) if sw is None else sw > 0
    scores = {"identity": np.inf, "log": np.inf, "square": np.inf}
    tried = ["identity"] + (["log"] if (ya[keep] > 0).all() else []) + (
        ["square"] if (ya[keep] >= 0).all() else [])
    saved = dict(est.__dict__)
    try:
        if n >= 8 and len(tried) > 1:
            train, held = _split(n, 0.25, est.random_state)
            w = np.ones(len(held)) if sw is None else sw[held]
            est.categorical_features = None  # xa is already encoded: numeric columns only
            for t in tried:
                est._fit_fixed(xa[train], ya[train], None if sw is None else sw[train], t)
                err = (est.predict(xa[held]) - ya[held]) ** 2
                scores[t] = float(np.sum(w * err) / max(np.sum(w), 1e-300))
            est.categorical_features = saved["categorical_features"]
        else:
            scores["identity"] = np.nan  # not compared: no other transform applies
        choice = min(tried, key=lambda t: (scores[t], tried.index(t)))
        choice = choice if np.isfinite(scores[choice]) else "identity"
        est._fit_fixed(X, y, sample_weight, choice)
    except BaseException:
        est.__dict__.clear()
        est.__dict__.update(saved)
        raise
    est.target_transform_scores_ = scores
    if est.verbose > 0:
        said = ", ".join(f"{t} {scores[t]:.4g}" for t in scores)
        print(f"[jaxtree] target_transform='auto' chose {choice!r} (held-out MSE: {said})",
              file=sys.stderr)
    return est
