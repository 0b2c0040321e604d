"""Fitting many data sets of one shape at once: ``B`` greedy searches in one compiled call.

:func:`fit_batch` stacks ``B`` data sets ``X[b]`` of shape ``(n, p)`` and runs the pure
search step :func:`jaxtree.search.step` under ``jax.vmap`` over a batch of programs and
data (basis and config shared and static). Every iteration is one call of one compiled
function for the whole batch, and one host transfer (the ``B`` losses and choices).

Each data set is scaled on its own, exactly as :class:`jaxtree.TreeRegressor` does:
``x_j -> (x_j - min_j) / (max_j - min_j)`` in ``[0, 1]`` and ``y -> (y - c) / s`` in
``[-1, 1]`` with ``c`` the midpoint and ``s`` the half-range of that data set's ``y``.
So ``fit_batch(X, y)[b]`` makes the same choices as ``TreeRegressor().fit(X[b], y[b])``.

Design decision: the batch runs ``k + 1`` iterations for every member (no early stop);
a member whose search found no finite candidate keeps its tree (masked inside ``step``)
and reports it in ``status``.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxtree import _compilation_cache
from jaxtree import _scaling as scaling_
from jaxtree import _validation as V
from jaxtree import model as model_
from jaxtree import program as prog
from jaxtree import scoring, search
from jaxtree.estimator import TreeRegressor, check_params

__all__ = [
    "BatchResult",
    "fit_batch",
    "step_batch_jit",
]



def _step_batch(programs: prog.Program, data: scoring.Data, basis, config: search.Config):
    """:func:`jaxtree.search.step` over a leading batch axis of programs and data."""
    return jax.vmap(search.step, in_axes=(0, 0, None, None))(programs, data, basis, config)


step_batch_jit = jax.jit(_step_batch, static_argnames=("basis", "config"))
"""The batched step, compiled once per (shapes, dtype, basis, config)."""


@dataclasses.dataclass(frozen=True)
class BatchResult:
    """The outcome of :func:`fit_batch`; behaves as the list of its ``B`` estimators.

    Attributes:
      estimators: list of ``B`` fitted :class:`jaxtree.TreeRegressor`.
      models: the batched :class:`jaxtree.TreeModel` pytree (every array leaf has a
        leading ``B`` axis); predict all at once with
        ``jax.vmap(jaxtree.predict)(models, X)``.
      history: float64 ``(B, k+1)`` training MSE in each data set's ``y`` units.
      status: int ``(B,)`` search status per data set (0 = ok).
    """

    estimators: list
    models: model_.TreeModel
    history: np.ndarray
    status: np.ndarray

    def __len__(self) -> int:
        return len(self.estimators)

    def __getitem__(self, i):
        return self.estimators[i]

    def __iter__(self):
        return iter(self.estimators)


def _check_batch(X, y, sample_weight):
    """Validates ``(B, n, p)`` / ``(B, n)`` / ``(B, n)`` or ``(n,)`` inputs (numpy out)."""
    xa = V.as_float_array(X, "X")
    if xa.ndim != 3:
        hint = " For a single data set use TreeRegressor, or X[None]." if xa.ndim == 2 else ""
        raise ValueError(f"X must be 3-D (n_datasets, n_samples, n_features); got shape {xa.shape}.{hint}")
    B, n, p = xa.shape
    if B == 0 or n == 0 or p == 0:
        raise ValueError(f"X is empty (shape {xa.shape}); it needs at least one data set, row and column.")
    if n < 2:
        raise ValueError(f"fit_batch needs at least 2 samples per data set; got {n}.")
    ya = V.as_float_array(y, "y")
    if ya.ndim == 3 and ya.shape[2] == 1:
        ya = ya[..., 0]
    if ya.ndim != 2:
        raise ValueError(f"y must be 2-D (n_datasets, n_samples); got shape {ya.shape}.")
    if ya.shape != (B, n):
        raise ValueError(f"X has shape {xa.shape} so y must have shape ({B}, {n}); got {ya.shape}. "
                         "Every data set needs one target per row.")
    for name, arr in (("X", xa), ("y", ya)):
        V.check_finite(arr, name, axes=("data set", "row", "column"))
    sw = None
    if sample_weight is not None:
        sw = V.as_float_array(sample_weight, "sample_weight")
        if sw.ndim == 1 and sw.shape == (n,):
            sw = np.broadcast_to(sw, (B, n))
        if sw.shape != (B, n):
            raise ValueError(f"sample_weight must have shape ({B}, {n}) or ({n},); got {sw.shape}.")
        if not np.isfinite(sw).all() or (sw < 0).any():
            raise ValueError("sample_weight must be finite and non-negative.")
        if not (sw.sum(axis=1) > 0).all():
            bad = int(np.argmin(sw.sum(axis=1) > 0))
            raise ValueError(f"sample_weight must have a positive sum in every data set; data set {bad} has not.")
    return xa, ya, sw


def _chunk_batch(xs, ys, sw, chunk_size: int, dtype) -> scoring.Data:
    """:func:`jaxtree.scoring.chunk` for every data set: ``(B, n_chunks, m, ...)``."""
    w = np.ones(np.shape(ys)) if sw is None else sw
    chunk = jax.vmap(lambda x_, y_, w_: scoring.chunk(x_, y_, w_, chunk_size))
    return chunk(jnp.asarray(xs, dtype), jnp.asarray(ys, dtype), jnp.asarray(w, dtype))


def fit_batch(X, y, *, k: int = 10, basis=None, refine: Optional[str] = "optax",
              sample_weight=None, chunk_size: int = 2048, coordinate_sweeps: int = 3,
              refine_steps: int = 20, precision: str = "highest",
              feature_names: Optional[Sequence[str]] = None) -> BatchResult:
    """Fits ``B`` data sets of the same shape with one batched compiled step per iteration.

    Args:
      X: float ``(B, n, p)``: ``B`` data sets of ``n`` rows and ``p`` covariates.
      y: float ``(B, n)`` targets.
      k: number of operations of every tree.
      basis: as for :class:`jaxtree.TreeRegressor` (None, a preset name, a Basis, a dict).
      refine: ``"optax"``, ``"coordinate"`` or None.
      sample_weight: optional non-negative ``(B, n)``, or ``(n,)`` shared by all.
      chunk_size: rows per chunk of the streamed statistics.
      coordinate_sweeps: passes over the leaves for ``refine="coordinate"``.
      refine_steps: L-BFGS iterations for ``refine="optax"``.
      precision: matmul precision: ``"highest"``, ``"high"`` or ``"default"``.
      feature_names: optional ``p`` names of the covariates (default ``x1..xp``).

    Returns:
      A :class:`BatchResult`: indexable and iterable as the list of ``B`` fitted
      :class:`jaxtree.TreeRegressor` (``result[b]``), with the batched
      :class:`jaxtree.TreeModel` in ``result.models``.

    Raises:
      ValueError / TypeError: for bad shapes, values or hyperparameters.

    Examples:
      >>> import numpy as np, jaxtree
      >>> from jaxtree.batch import fit_batch
      >>> X = np.random.default_rng(0).uniform(size=(3, 200, 2))
      >>> res = fit_batch(X, X[..., 0] ** 2 + X[..., 1], k=2, refine=None)
      >>> len(res), res.models.x_min.shape
      (3, (3, 2))
    """
    _compilation_cache.enable()
    settings = dict(k=k, basis=basis, refine=refine, chunk_size=chunk_size,
                    coordinate_sweeps=coordinate_sweeps, refine_steps=refine_steps,
                    precision=precision)
    params = check_params(settings)
    if params.basis.per_feature:  # each problem has its own ranges; one static basis cannot
        raise ValueError("fit_batch does not support basis families on the covariates' original "
                         "units (PowerLaws, e.g. the 'physics' preset): their constants depend on "
                         "each problem's ranges. Fit each problem with TreeRegressor instead.")
    xa, ya, sw = _check_batch(X, y, sample_weight)
    B, n, p = xa.shape
    if feature_names is None:
        names = tuple(f"x{j + 1}" for j in range(p))
    else:
        names = tuple(str(s) for s in feature_names)
        if len(names) != p:
            raise ValueError(f"feature_names has {len(names)} names but X has {p} features.")
    dtype = V.float_dtype_for(xa, bool(jax.config.jax_enable_x64))
    sc = scaling_.fit(xa, ya, sw)
    xs, ys = scaling_.apply(sc, xa, ya, sw)
    data = _chunk_batch(xs, ys, sw, params.chunk, dtype)
    cfg = search.Config(max_k=params.k, refine=refine, coordinate_sweeps=params.sweeps,
                        refine_steps=params.steps,
                        precision=scoring.PRECISIONS[precision])
    # No row buckets here: under vmap, lax.switch on a batched index becomes a select that
    # runs every branch, which would cost more than scoring all rows.

    one = prog.empty_program(params.k, dtype)
    programs = jax.tree_util.tree_map(lambda a: jnp.broadcast_to(a, (B,) + a.shape), one)
    res = search.run(lambda prg: step_batch_jit(prg, data, params.basis, cfg), programs,
                     params.k + 1, loss_scale=np.asarray(sc.y_scale, np.float64) ** 2)
    status = np.asarray(res.status, np.int64)
    if (status != search.STATUS_OK).any():
        bad = np.flatnonzero(status != search.STATUS_OK).tolist()
        why = search.message(np.bitwise_or.reduce(status))
        warnings.warn(f"For data set(s) {bad}: {why}.", RuntimeWarning, stacklevel=2)

    models = model_.TreeModel.from_scaling(res.program, sc, dtype, params.basis, names)
    estimators = []
    for b in range(B):
        est = TreeRegressor(**settings)
        est.search_, est.validation_fraction_ = "greedy", None  # what every batched fit runs
        member = jax.tree_util.tree_map(lambda a, b=b: a[b], models)
        estimators.append(est._set_fitted(member, res.history[b], res.choices[b], int(status[b]),
                                          names if feature_names is not None else None, warn=False))
    return BatchResult(estimators, models, res.history, status)
