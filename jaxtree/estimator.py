"""``TreeRegressor``: a scikit-learn style estimator over the functional core.

It validates and scales the data, runs one of two engines that produce the same
:class:`jaxtree.program.Program` (``"jax"``: the jitted batched search; ``"reference"``:
the paper's algorithm in plain numpy), and wraps the result in a
:class:`jaxtree.model.TreeModel`. Prediction, formulas and files are written once and
serve both engines.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
import warnings
from typing import Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np
import tqdm

from jaxtree import _scaling as scaling_
from jaxtree import _validation as V
from jaxtree import basis as basis_
from jaxtree import export as export_
from jaxtree import model as model_
from jaxtree import program as prog
from jaxtree import reference as reference_
from jaxtree import scoring, search
from jaxtree import sharding as sharding_
from jaxtree import stream as stream_

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
PRECISIONS = {"highest": jax.lax.Precision.HIGHEST, "high": jax.lax.Precision.HIGH,
              "default": jax.lax.Precision.DEFAULT}


class TreeRegressor:
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
      chunk_size: rows per chunk of the streamed statistics (memory ``O(chunk*p*q)``).
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
      random_state: accepted for scikit-learn compatibility; the search is
        deterministic and uses no randomness.
      cache_basis: evaluate the basis once for all rows and keep it (opt-in: holds
        ``n*p*q`` floats, ``4*n*p*q`` bytes in float32 — 0.9 GB at n=700,000, p=8,
        q=40) instead of re-evaluating it chunk by chunk in every iteration.
      devices: None (one device), an int ``n`` (the first ``n`` devices) or ``'all'``:
        shard the rows over a ``'data'`` mesh (see :mod:`jaxtree.sharding`).

    Data larger than memory: pass ``X`` as a ``numpy.memmap`` (float dtype) or a
    :class:`jaxtree.stream.ChunkReader`; every pass then streams it chunk by chunk
    (engine ``'jax'`` only; see :mod:`jaxtree.stream`).

    Attributes (after ``fit``):
      model_: the fitted :class:`jaxtree.model.TreeModel` pytree.
      history_: training MSE (in ``y``'s units) after the first leaf and each insertion.
      choices_: the insertion chosen at each iteration.
      n_features_in_: number of covariates; feature_names_in_: their names when X had
        string column names.

    Examples:
      >>> import jaxtree
      >>> X, y = jaxtree.datasets.paper_synthetic(n=300, p=4, seed=0)
      >>> est = jaxtree.TreeRegressor(k=3).fit(X, y)
      >>> est.predict(X[:2]).shape
      (2,)
    """

    def __init__(self, k: int = 10, *, basis=None, refine: Optional[str] = "optax",
                 engine: str = "jax", chunk_size: int = 2048, coordinate_sweeps: int = 3,
                 refine_steps: int = 20, precision: str = "highest", clip: bool = True,
                 verbose: int = 0, callback: Optional[Callable] = None, random_state=None,
                 devices=None, cache_basis: bool = False):
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

    # -------------------------------------------------------------- scikit-learn protocol

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
                raise ValueError(f"Invalid parameter {name!r} for TreeRegressor; valid: {sorted(valid)}.")
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = {n: p.default for n, p in inspect.signature(type(self).__init__).parameters.items()}
        args = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._get_param_names()
                         if getattr(self, n) is not defaults.get(n) and getattr(self, n) != defaults.get(n))
        return f"TreeRegressor({args})"

    def __sklearn_tags__(self):
        """scikit-learn's estimator tags (imported lazily: only scikit-learn calls this)."""
        from sklearn.utils import RegressorTags, Tags, TargetTags

        return Tags(estimator_type="regressor", target_tags=TargetTags(required=True),
                    regressor_tags=RegressorTags())

    def __sklearn_is_fitted__(self) -> bool:
        """Whether ``fit`` has run (scikit-learn's ``check_is_fitted`` protocol)."""
        return hasattr(self, "model_")

    # ---------------------------------------------------------------------------- fit

    def _check_params(self):
        k = V.check_int(self.k, "k", 0)
        V.check_choice(self.refine, "refine", search.REFINE_MODES)
        V.check_choice(self.engine, "engine", ENGINES)
        V.check_choice(self.precision, "precision", tuple(PRECISIONS))
        chunk = V.check_int(self.chunk_size, "chunk_size", 1)
        sweeps = V.check_int(self.coordinate_sweeps, "coordinate_sweeps", 0)
        steps = V.check_int(self.refine_steps, "refine_steps", 0)
        V.check_bool(self.clip, "clip")
        if self.engine == "reference" and self.refine == "optax":
            raise ValueError(
                "engine='reference' implements the paper's algorithm: use refine='coordinate' "
                "or refine=None (refine='optax' needs engine='jax')."
            )
        if self.callback is not None and not callable(self.callback):
            raise TypeError(f"callback must be callable; got {type(self.callback).__name__}.")
        if self.devices is not None:
            sharding_.resolve_devices(self.devices)  # ValueError naming the count available
        return k, chunk, sweeps, steps, basis_.get_basis(self.basis)

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
        k, chunk, sweeps, steps, basis = self._check_params()
        # Data larger than memory is streamed, never materialised; the reference engine
        # (plain numpy) reads a memmap like any array.
        if stream_.is_streamable(X) and not (self.engine == "reference" and isinstance(X, np.memmap)):
            return self._fit_stream(X, y, sample_weight, k, chunk, sweeps, steps, basis)
        names = None
        if hasattr(X, "columns") and all(isinstance(c, str) for c in X.columns):
            names = tuple(X.columns)
        xa = V.check_X(X, min_samples=2)
        n, p = xa.shape
        if n < 2:
            raise ValueError(f"fit needs at least 2 samples; got {n}.")
        ya = V.check_y(y, n)
        sw = V.check_sample_weight(sample_weight, n)
        x64 = bool(jax.config.jax_enable_x64)
        dtype = V.float_dtype_for(np.asarray(xa), x64)
        V.check_representable(xa, ya, dtype)

        if np.asarray(y).ndim == 2:  # check_y accepted a column vector
            warnings.warn("A column-vector y was passed when a 1d array was expected; it was "
                          "used as y.ravel(). Pass y with shape (n_samples,) to silence this.",
                          _interop_class("DataConversionWarning", UserWarning), stacklevel=2)

        sc = scaling_.fit(xa, ya, sw)
        xs, ys = scaling_.apply(sc, xa, ya, sw)

        feature_names = names or tuple(f"x{j + 1}" for j in range(p))
        with self._progress_bar(k, feature_names, basis, sc):
            if self.engine == "jax":
                program, history, choices, status = self._fit_jax(xs, ys, sw, k, chunk, sweeps, steps, basis, dtype)
            else:
                program, history, choices, status = self._fit_reference(xs, ys, sw, k, sweeps, basis, dtype)
        return self._set_fitted(program, history, choices, status, sc, dtype, basis,
                                feature_names, names)

    def _set_fitted(self, program, history, choices, status, sc, dtype, basis, feature_names,
                    names):
        """Sets the learned attributes (all at once, at the end: an interrupted fit
        leaves the estimator as it was) and warns about a degenerate search."""
        if status != search.STATUS_OK:
            warnings.warn("The search found no finite candidate at some iteration and kept the "
                          "tree it had; the data may be degenerate.", RuntimeWarning, stacklevel=3)
        as_ = functools.partial(jnp.asarray, dtype=dtype)
        self.model_ = model_.TreeModel(program, as_(sc.x_min), as_(sc.x_scale), as_(sc.y_center),
                                       as_(sc.y_scale), basis, tuple(feature_names))
        self.history_ = np.asarray(history) * float(sc.y_scale) ** 2
        self.choices_ = choices
        self.status_ = status
        self.n_features_in_ = len(feature_names)
        if names is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return self

    @contextlib.contextmanager
    def _progress_bar(self, k, feature_names, basis, sc):
        """The progress bar of one fit (closed even when the fit fails)."""
        self._bar = _ProgressBar(k, self.verbose, feature_names, basis, float(sc.y_scale))
        try:
            yield
        finally:
            self._bar.close()
            del self._bar

    def _progress(self, it, loss, info):
        """Per-iteration hook of every engine: the progress bar, then the user's callback."""
        self._bar.update(it, loss, info)
        return bool(self.callback(it, loss, info)) if self.callback is not None else False

    def _fit_jax(self, xs, ys, sw, k, chunk, sweeps, steps, basis, dtype):
        data = scoring.chunk(jnp.asarray(xs, dtype), jnp.asarray(ys, dtype),
                             None if sw is None else jnp.asarray(sw, dtype), chunk_size=chunk)
        if self.cache_basis:
            data = scoring.cache_basis(data, basis)
        cfg = search.Config(max_k=k, refine=self.refine, sweeps=sweeps, steps=steps,
                            precision=PRECISIONS[self.precision],
                            buckets=_buckets_for(xs.shape[0], xs.shape[1], basis.q, k))
        if self.devices is not None:
            data = sharding_.shard_data(data, self.devices)
        res = search.fit(data, basis, k, cfg, callback=self._progress)
        return res.program, res.history, res.choices, res.status

    def _fit_stream(self, X, y, sample_weight, k, chunk, sweeps, steps, basis):
        """Streaming fit of a memmap / ChunkReader (see :mod:`jaxtree.stream`)."""
        if self.engine != "jax":
            raise ValueError("Streaming a memmap or ChunkReader needs engine='jax'.")
        if isinstance(X, stream_.ChunkReader):
            if y is not None or sample_weight is not None:
                raise ValueError("With a ChunkReader pass y=None and sample_weight=None: the "
                                 "reader already holds them.")
            reader = X
        else:
            y = y if isinstance(y, np.ndarray) else V.check_y(y, X.shape[0] if X.ndim else 0)
            if y.dtype.kind in "biu":  # integer targets: n numbers, cheap to hold as floats
                y = np.asarray(y, np.float64)
            reader = stream_.ChunkReader(X, y, sample_weight, chunk_size=chunk)
        x64 = bool(jax.config.jax_enable_x64)
        dtype = V.float_dtype_for(np.empty(0, reader.x.dtype), x64)
        sc = stream_.scaling(reader)
        cfg = search.Config(max_k=k, refine=self.refine, sweeps=sweeps, steps=steps,
                            precision=PRECISIONS[self.precision],
                            buckets=_buckets_for(reader.n, reader.p, basis.q, k))
        feature_names = tuple(f"x{j + 1}" for j in range(reader.p))
        with self._progress_bar(k, feature_names, basis, sc):
            res = stream_.fit(reader.scaled(sc, dtype), basis, k, cfg, callback=self._progress,
                              devices=self.devices)
        return self._set_fitted(res.program, res.history, res.choices, res.status, sc, dtype,
                                basis, feature_names, None)

    def _fit_reference(self, xs, ys, sw, k, sweeps, basis, dtype):
        phi = np.asarray(basis.evaluate(jnp.asarray(xs, jnp.float64 if jax.config.jax_enable_x64 else jnp.float32)), np.float64)

        def cb(step, tree, loss):
            return self._progress(step, loss, {})

        res = reference_.fit(phi, ys, k, sample_weight=sw, refine=self.refine, sweeps=sweeps, callback=cb)
        t = res.tree
        program = prog.from_arrays(t.op, t.left, t.right, t.feature, t.basis, t.weight,
                                   t.intercept, t.n_slots, dtype=dtype)
        choices = [dict(zip(("flat_index", "op", "slot", "feature", "basis"), c)) for c in res.choices]
        return program, res.history, choices, search.STATUS_OK

    # ------------------------------------------------------------------------ predict

    def _check_fitted(self):
        if not hasattr(self, "model_"):
            raise _interop_class("NotFittedError", V.NotFittedError)(
                "This TreeRegressor is not fitted yet. Call fit(X, y) before predict, score, "
                "formula or save."
            )

    def predict(self, X) -> np.ndarray:
        """Predictions in ``y``'s units, float64 numpy ``(n_samples,)``."""
        self._check_fitted()
        xa = V.check_X(X, n_features=self.n_features_in_)
        out = model_.predict(self.model_, jnp.asarray(xa, self.model_.x_min.dtype), clip=self.clip)
        return np.asarray(out, np.float64)

    def score(self, X, y, sample_weight=None) -> float:
        """Coefficient of determination R² of the predictions."""
        pred = self.predict(X)
        ya = V.check_y(y, pred.shape[0]).astype(np.float64)
        sw = V.check_sample_weight(sample_weight, pred.shape[0])
        w = np.ones_like(ya) if sw is None else sw
        ss_res = np.sum(w * (ya - pred) ** 2)
        ss_tot = np.sum(w * (ya - np.average(ya, weights=w)) ** 2)
        if ss_tot == 0:
            return 1.0 if ss_res == 0 else 0.0
        return float(1 - ss_res / ss_tot)

    def formula(self, digits: int = 3) -> str:
        """The fitted formula as text (covariates min-max scaled to [0, 1])."""
        self._check_fitted()
        return self.model_.formula(digits)

    # ------------------------------------------------------------------------- exports

    def to_sympy(self, **kwargs):
        """The fitted formula as a sympy expression in ``X``'s units (see :func:`jaxtree.export.to_sympy`)."""
        self._check_fitted()
        return export_.to_sympy(self.model_, **kwargs)

    def to_latex(self, **kwargs) -> str:
        """The fitted formula as LaTeX (see :func:`jaxtree.export.to_latex`)."""
        self._check_fitted()
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

    def save(self, path) -> None:
        """Writes the fitted model to ``path`` as versioned JSON (see :func:`jaxtree.load`)."""
        self._check_fitted()
        extra = {"params": {k: v for k, v in self.get_params().items()
                            if isinstance(v, (int, float, str, bool, type(None)))},
                 "history": [float(h) for h in self.history_]}
        model_.save(self.model_, path, extra)


class _ProgressBar:
    """A tqdm bar over the ``k+1`` iterations of a fit, shown when ``verbose > 0``.

    Each update shows the training loss (in ``y``'s units when the scale is known) and the
    chosen insertion; ``verbose > 1`` also writes one line per iteration.
    """

    def __init__(self, k: int, verbose, names=None, basis=None, y_scale: float = 1.0):
        self.total, self.verbose, self.names, self.basis = k + 1, verbose, names, basis
        self.y_scale = float(y_scale)
        self.bar = (tqdm.tqdm(total=k + 1, desc="jaxtree", unit="it", file=sys.stderr,
                              leave=True, dynamic_ncols=True) if verbose else None)

    def describe(self, it, info) -> str:
        try:
            j, i, op = int(info["feature"]), int(info["basis"]), int(info["op"])
        except (KeyError, TypeError, ValueError):
            return ""
        names = self.names or tuple(f"x{m + 1}" for m in range(j + 1))
        if self.basis is None or not (0 <= j < len(names) and 0 <= i < self.basis.q):
            return f"feature {names[j] if 0 <= j < len(names) else j}, basis {i}"
        leaf = self.basis.render(i, str(names[j]))
        return f"first leaf {leaf}" if it == 0 else f"{prog.OP_SYMBOLS.get(op, '?')} {leaf}"

    def update(self, it, loss, info) -> None:
        if self.bar is None:
            return
        text = f"loss={loss * self.y_scale ** 2:.4g} {self.describe(it, info)}".rstrip()
        self.bar.set_postfix_str(text, refresh=False)
        self.bar.update(1)
        if self.verbose > 1:
            self.bar.write(f"[jaxtree] iteration {it:3d}  {text}", file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


BUCKET_MIN_WORK = 10_000_000


def _buckets_for(n: int, p: int, q: int, k: int) -> tuple:
    """Row buckets for the scorer when a fit is large enough to repay their compilation.

    Decision: below ``n*p*q = 1e7`` compilation dominates a fit, so the scorer uses one
    row count; above it, power-of-two buckets roughly halve the scoring work.
    """
    return scoring.default_buckets(k + 1) if n * p * q >= BUCKET_MIN_WORK else ()


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
    est = TreeRegressor(**{k: v for k, v in params.items() if k in valid and k != "basis"})
    est.basis = m.basis
    try:
        est._check_params()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: not a valid jaxtree model file: bad saved parameter: {exc}") from None
    est.model_ = m
    est.history_ = np.asarray(hist, np.float64)
    est.choices_ = []
    est.status_ = search.STATUS_OK
    est.n_features_in_ = m.n_features
    if not all(n == f"x{j + 1}" for j, n in enumerate(m.feature_names)):
        est.feature_names_in_ = np.asarray(m.feature_names, dtype=object)
    return est
