"""Choices made on held-out rows, written once for every estimator and path (``fit``,
streamed fits, ``fit_batch``): deterministic splits and subsets, the one-standard-error
rule, the size path, the best beam member, and the small jitted evaluations they use."""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxtree import _executables
from jaxtree import model as model_
from jaxtree import program as prog
from jaxtree import refine as refine_
from jaxtree import scoring, search
from jaxtree import shapes as shapes_


def split(n: int, fraction, random_state):
    """Deterministic held-out split: ``(train_rows, held_rows)``, each non-empty."""
    rng = np.random.default_rng(0 if random_state is None else random_state)
    order = rng.permutation(n)
    n_held = min(max(int(round(fraction * n)), 1), n - 2)
    return np.sort(order[n_held:]), np.sort(order[:n_held])


def subsample(n: int, m: int, random_state):
    """Sorted indices of a deterministic random subset of ``m`` of ``n`` rows (seeded by
    ``random_state``, None as 0), or None when ``n <= m`` (all rows)."""
    if n <= m:
        return None
    rng = np.random.default_rng(0 if random_state is None else random_state)
    return np.sort(rng.choice(n, m, replace=False))


def shape_rows(n: int, fraction, random_state):
    """``(train_rows, held_rows)``, sorted: the rows of a shape-count selection run on a fit
    read block by block, read into memory.

    While the in-memory fit's held-out part (``fraction`` of ``n``) has at most
    ``shapes.SEARCH_ROWS`` rows, exactly the in-memory rows (:func:`split`, then at most
    ``SEARCH_ROWS`` training rows by :func:`subsample`), so both fits choose on the same
    rows. Beyond, ``SEARCH_ROWS`` held-out and at most ``SEARCH_ROWS`` training rows, drawn
    without replacement in ``O(SEARCH_ROWS)`` memory (a permutation of ``n`` would not be):
    the one-standard-error tolerance is then that of ``SEARCH_ROWS`` held-out rows (0.3% of
    the MSE at 200,000) instead of ``fraction * n``'s."""
    cap = shapes_.SEARCH_ROWS
    n_held = min(max(int(round(fraction * n)), 1), n - 2)
    if n_held <= cap:
        train, held = split(n, fraction, random_state)
        sub = subsample(len(train), cap, random_state)
        return (train if sub is None else train[sub]), held
    n_held = cap
    m = n_held + min(cap, n - n_held)
    rng = np.random.default_rng(0 if random_state is None else random_state)
    picked = np.unique(rng.integers(0, n, size=m + m // 4))
    while len(picked) < m:  # rare: more duplicates than the margin
        picked = np.union1d(picked, rng.integers(0, n, size=m))
    picked = rng.permutation(picked)[:m]  # a uniform random subset of m distinct rows
    return np.sort(picked[n_held:]), np.sort(picked[:n_held])


def _stride(rows: int, chunk_size: int, pair_rows: int) -> int:
    return search.screen_stride(math.prod(scoring.chunk_shape(rows, chunk_size)), pair_rows)


def tree_rows(n: int, p: int, q: int, chunk_size: int, pair_rows: int = 0):
    """The row count to chunk an in-memory tree search's ``n`` rows as (``scoring.chunk``'s
    ``rows``): the row bucket :func:`jaxtree.scoring.rows_for` where compiling costs more
    than searching (:func:`jaxtree.scoring.compiling_dominates`) and, with a pair screen of
    ``pair_rows > 0`` rows, where the padding leaves the screen's stride unchanged (so the
    same rows are screened); else None (chunked by its own size)."""
    if not scoring.compiling_dominates(n, p, q):
        return None
    rows = scoring.rows_for(n, chunk_size)
    if pair_rows > 0 and _stride(rows, chunk_size, pair_rows) != _stride(n, chunk_size,
                                                                          pair_rows):
        return None
    return rows


def column_bucket(n: int, p: int, basis) -> int:
    """The width a search over ``n`` rows of ``p`` covariates is padded to
    (:func:`jaxtree.scoring.columns_for`) where compiling dominates
    (:func:`jaxtree.scoring.compiling_dominates`), else 0 (none). Never with a
    per-covariate family (``basis.PowerLaws`` is bound to the table's own covariates). The
    one rule of the regressor's spec and the classifier's search."""
    if basis.per_feature or not scoring.compiling_dominates(n, p, basis.q):
        return 0
    return scoring.columns_for(p)


def unpadded_choices(choices: list, p: int, columns: int, q: int) -> list:
    """Choice records (one tree's, or a list per member) with ``flat_index`` in the table's
    own candidate layout ``row*p*q + j*q + i``, from a search that ran on ``columns``
    covariates (padding columns, :func:`column_bucket`); unchanged where none were added."""
    if not columns or columns == p:
        return choices

    def one(c):
        if c["flat_index"] < 0:
            return c
        row, col = divmod(c["flat_index"], columns * q)
        return dict(c, flat_index=row * p * q + col)

    return [[one(c) for c in cs] if isinstance(cs, list) else one(cs) for cs in choices]


def selection_rows(n_train: int, n: int, p: int, q: int, chunk_size: int, pair_rows: int = 0,
                   rows=None):
    """The row count to chunk a held-out split's training part as (``scoring.chunk``'s
    ``rows``), or None to chunk it by its own size.

    ``rows`` (all rows' chunking, :func:`tree_rows`; None: ``n``), so that the selection
    run and the refit share one compiled step (their data have one shape; zero-weight
    padding rows change no sum), where compiling costs more than searching (``n*p*q`` below
    :data:`jaxtree.scoring.BUCKET_MIN_WORK`, the capacity buckets' rule) and, with a pair
    screen of ``pair_rows > 0`` rows, where the padding leaves its stride unchanged
    (``search._screen_rows`` takes every ``stride``-th row of the chunked shape: a longer
    shape would screen fewer of the training rows)."""
    if not scoring.compiling_dominates(n, p, q):
        return None
    rows = n if rows is None else rows
    if pair_rows > 0 and (_stride(rows, chunk_size, pair_rows)
                          != _stride(n_train, chunk_size, pair_rows)):
        return None
    return rows


MSE_FLOOR = 1e-14
"""Held-out MSEs (of the scaled ``y``, in ``[-y_bound, y_bound]``) closer than this are equal
in :func:`choose_size`: an RMSE of 1e-7, float32's resolution of ``y``'s range."""


def choose_size(val_history, n_held: int) -> int:
    """The smallest number of operations whose held-out MSE is within one standard error of
    the best (the "one-standard-error rule"; the path starts at 0 operations, the first leaf).

    The standard error of a held-out MSE over ``n_held`` rows with Gaussian residuals is
    ``MSE * sqrt(2 / n_held)``; it is the tolerance, so a larger tree must beat a smaller
    one by more than the held-out set can resolve. It is at least :data:`MSE_FLOOR`: on
    noise-free data (an exact law) every size's held-out MSE is rounding (1e-30 in float64)
    and the rule would otherwise pick a size by rounding noise, with terms of 1e-14.
    """
    val = np.asarray(val_history, np.float64)
    best = np.min(val)
    tol = max(np.sqrt(2.0 / max(int(n_held), 1)) * abs(best), MSE_FLOOR)
    return int(np.flatnonzero(val <= best + tol)[0])


def n_ops(program) -> int:
    """The operations of a (host or device) program: ``(n_slots - 1) // 2``."""
    n = int(np.asarray(program.n_slots))
    return (n - 1) // 2 if n else 0


def path_rows(models, history, val_history) -> list:
    """``path_``'s rows: per size the operations, training and held-out MSE (``y``'s units)
    and model; the formula is added on first access (``TreeRegressor.path_``)."""
    return [dict(n_ops=n_ops(m.program), train_mse=float(h), val_mse=float(v), model=m)
            for m, h, v in zip(models, history, val_history)]


def size_path(sel, n_held: int, sc, dtype, basis, names) -> tuple:
    """``(k_best, path)``: the size chosen by a selection run ``sel`` (held-out losses
    ``val_history``, the program after each iteration in ``programs``; :func:`choose_size`)
    and ``path_``'s rows (operations, training and held-out MSE, model)."""
    k_best = n_ops(sel.programs[choose_size(sel.val_history, n_held)])
    put = functools.partial(jax.tree_util.tree_map, jax.device_put)  # nothing compiled
    models = [model_.TreeModel.from_scaling(put(p), sc, dtype, basis, names)
              for p in sel.programs]
    return k_best, path_rows(models, sel.history, sel.val_history)


def shape_path(start_train: float, start_val: float, sel, spec, names) -> list:
    """``shape_path_``'s rows: per count of shape terms (0 first) the training and held-out
    MSE and the terms' names."""
    rows = [dict(n_shapes=0, train_mse=start_train, val_mse=start_val, terms=[])]
    for i, (st, h, v) in enumerate(zip(sel.programs, sel.history, sel.val_history)):
        rows.append(dict(n_shapes=i + 1, train_mse=float(h), val_mse=float(v),
                         terms=shapes_.term_names(st.shapes, spec, names)))
    return rows


# ------------------------------------------------------------ small jitted evaluations

held_out_mse = jax.jit(refine_.mse, static_argnames=("basis",))
held_out_mse_cached = _executables.cached(held_out_mse, static_argnums=(2,))
joint = jax.jit(refine_.joint, static_argnames=("basis", "steps"))


@functools.partial(jax.jit, static_argnames=("basis",))
def best_member(programs, data, basis):
    """The beam member with the lowest training MSE (the one :func:`jaxtree.search.beam_fit`
    returns)."""
    loss = jax.vmap(lambda p: refine_.mse(p, data, basis))(programs)
    i = jnp.argmin(jnp.where(jnp.isfinite(loss), loss, jnp.inf))
    return jax.tree_util.tree_map(lambda a: a[i], programs)


@functools.partial(jax.jit, static_argnames=("spec",))
def shape_mse(shapes, data, spec):
    """Weighted MSE of shape terms alone on chunked data (scaled space)."""
    return shapes_.mse(data, jax.vmap(lambda xb: shapes_.evaluate(shapes, xb, spec))(data.x))


@functools.partial(jax.jit, static_argnames=("basis",))
def tree_values(program, x, basis):
    """The tree's predictions (scaled space) on chunked covariates ``(n_chunks, m, p)``."""
    return jax.vmap(lambda xb: prog.evaluate(program, xb, basis))(x)
