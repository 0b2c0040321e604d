"""Choices made on held-out rows, written once for every estimator and path (``fit``,
streamed fits, ``fit_batch``): deterministic splits and subsets, the paired standard-error
rule on per-row held-out losses (:func:`choose_size`), the size path, the best beam member,
and the small jitted evaluations they use."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxtree import _executables
from jaxtree import basis as basis_
from jaxtree import model as model_
from jaxtree import program as prog
from jaxtree import reference as reference_
from jaxtree import refine as refine_
from jaxtree import scoring
from jaxtree import shapes as shapes_


def split(n: int, fraction, random_state, weights=None):
    """Deterministic held-out split: ``(train_rows, held_rows)``, each non-empty.

    With ``weights`` (``(n,)`` non-negative, or None) the held-out rows are drawn among the
    rows of positive weight only, as if the others were not there (they join the training
    rows, where they count for nothing); with every weight positive the split is the
    unweighted one.

    Decision (fifty-eighth session): the split ignored the weights, so a weighted table with
    few rows of positive weight (2 of 400) could hold out none of them, and the size choice
    failed with an internal message; and a row of weight 0 moved the split, though it is no
    row of the fit. Drawing among the weighted rows makes a row of weight 0 the same as a
    removed row for the split too.

    Raises:
      ValueError: fewer than 3 rows of positive weight (a held-out row and two to train).
    """
    pos = None
    if weights is not None:
        on = np.asarray(weights) > 0
        if not on.all():
            pos = np.flatnonzero(on)
            if len(pos) < 3:
                raise ValueError(
                    f"validation_fraction needs at least 3 rows of positive sample_weight to "
                    f"hold some out (a held-out row and two to train on); got {len(pos)}. "
                    "Give more rows a positive weight, or set validation_fraction=None.")
    m = n if pos is None else len(pos)
    rng = np.random.default_rng(0 if random_state is None else random_state)
    order = rng.permutation(m)
    n_held = min(max(int(round(fraction * m)), 1), m - 2)
    if pos is None:
        return np.sort(order[n_held:]), np.sort(order[:n_held])
    held = np.sort(pos[order[:n_held]])
    return np.setdiff1d(np.arange(n), held), held


def folds(n: int, k: int, random_state, weights=None, strata=None) -> list:
    """Deterministic ``k``-fold split: ``[(train_rows, held_rows), ...]``, every row of
    positive weight held out exactly once (sorted rows; the folds' sizes differ by at most
    one). Rows of weight 0 are never held out (they join every training part, where they
    count for nothing), as :func:`split` treats them. ``strata`` (``(n,)`` labels, or
    None): each label's rows are dealt to the folds in turn, so that every fold holds out
    each label's share (a classifier's folds: every training part keeps every class).

    Raises:
      ValueError: fewer than ``2 * k`` rows of positive weight (of some label, with
        ``strata``)."""
    pos = np.arange(n) if weights is None else np.flatnonzero(np.asarray(weights) > 0)
    groups = [pos] if strata is None else [pos[np.asarray(strata)[pos] == s]
                                           for s in np.unique(np.asarray(strata)[pos])]
    if min(len(g) for g in groups) < 2 * k:
        raise ValueError(f"{k}-fold cross-validation needs at least {2 * k} rows of positive "
                         f"weight{'' if strata is None else ' of each label'}; got "
                         f"{min(len(g) for g in groups)}.")
    rng = np.random.default_rng(0 if random_state is None else random_state)
    if strata is None:
        parts = [np.sort(part) for part in np.array_split(pos[rng.permutation(len(pos))], k)]
    else:
        held = [[] for _ in range(k)]
        start = 0
        for g in groups:  # each label dealt on from where the last one stopped: even sizes
            for i, row in enumerate(g[rng.permutation(len(g))]):
                held[(start + i) % k].append(row)
            start = (start + len(g)) % k
        parts = [np.sort(np.asarray(h, np.int64)) for h in held]
    return [(np.setdiff1d(np.arange(n), part), part) for part in parts]


def subsample(n: int, m: int, random_state):
    """Sorted indices of a deterministic random subset of ``m`` of ``n`` rows (seeded by
    ``random_state``, None as 0), or None when ``n <= m`` (all rows)."""
    if n <= m:
        return None
    rng = np.random.default_rng(0 if random_state is None else random_state)
    return np.sort(rng.choice(n, m, replace=False))


def shape_rows(n: int, fraction, random_state, weights=None):
    """``(train_rows, held_rows)``, sorted: the rows of a shape-count selection run on a fit
    read block by block, read into memory.

    While the in-memory fit's held-out part (``fraction`` of ``n``) has at most
    ``shapes.SEARCH_ROWS`` rows, exactly the in-memory rows (:func:`split`, then at most
    ``SEARCH_ROWS`` training rows by :func:`subsample`), so both fits choose on the same
    rows. Beyond, ``SEARCH_ROWS`` held-out and at most ``SEARCH_ROWS`` training rows, drawn
    without replacement in ``O(SEARCH_ROWS)`` memory (a permutation of ``n`` would not be):
    the standard errors of :func:`choose_size` are then those of ``SEARCH_ROWS`` held-out
    rows instead of ``fraction * n``'s. ``weights``: as :func:`split`'s, in the first case
    (the second draws among all rows, without a list of the weighted ones)."""
    cap = shapes_.SEARCH_ROWS
    n_held = min(max(int(round(fraction * n)), 1), n - 2)
    if n_held <= cap:
        train, held = split(n, fraction, random_state, weights)
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


def unpadded_choices(choices: list, p: int, columns: int, q: int) -> list:
    """Choice records (one tree's, or a list per member) with ``flat_index`` in the table's
    own candidate layout ``row*p*q + j*q + i``, from a search that ran on ``columns``
    covariates (padding columns, :func:`jaxtree.scoring.column_bucket`); unchanged where
    none were added."""
    if not columns or columns == p:
        return choices

    def one(c):
        if c["flat_index"] < 0:
            return c
        row, col = divmod(c["flat_index"], columns * q)
        return dict(c, flat_index=row * p * q + col)

    return [[one(c) for c in cs] if isinstance(cs, list) else one(cs) for cs in choices]


def selection_rows(n: int, p: int, q: int, rows=None):
    """The row count to chunk a held-out split's training part as (``scoring.chunk``'s
    ``rows``), or None to chunk it by its own size; ``n`` rows in all, ``p`` covariates,
    ``q`` basis functions.

    ``rows`` (all rows' chunking, :func:`jaxtree.scoring.tree_rows`; None: ``n``), so that
    the selection run and the refit share every compiled program (their data have one shape;
    zero-weight padding rows change no sum), where compiling costs more than searching
    (``n*p*q`` below :data:`jaxtree.scoring.BUCKET_MIN_WORK`, the capacity buckets' rule).

    Decision (sixty-seventh session, issue 27): also where a pair screen's stride over the
    longer shape differs from its stride over the training part's own chunks, so that the
    selection run screens fewer of its training rows (every ``stride``-th of the padded
    shape: at 5,000 rows and ``p = 10`` every second of 8,192 padded rows, about 2,000 of
    the 4,000 instead of all).
    Until then the training part kept its own chunks there, and a first fit compiled every
    program of the search twice: ``n`` from 4,097 to 5,120 at ``p <= 12``, and most sizes
    from 2,049 to 10,000 rows with more covariates (the screen then reads fewer than 4,096
    rows). The selection run only chooses the size (the refit searches all rows again,
    screening as before); over 28 synthetic tables of 2,500-9,000 rows and 10 or 20
    covariates where the strides differ the chosen ``k`` and the test RMSE were the same
    to the last digit, and the first fit 27-30% shorter (5,000 x 20: 8.7-9.1 -> 6.4-6.5 s;
    warm 2-8% longer, the selection run's passes over the padded chunks; BENCHMARKS.md,
    "The held-out size's run in the refit's programs").

    Decision (sixty-eighth session, issue 27): also below :data:`SHARED_SELECTION_ROWS`
    rows at any width. A wide table of a few thousand rows (5,000 x 100: ``n*p*q`` of
    2·10⁷) is not one where compiling dominates by the capacity buckets' rule, yet its
    first fit compiled the backfit search's insertion and refinement twice (4.9 and 2.3 s
    each on the 2-core CPU) around a 1.8 s warm fit. Sharing costs the selection run no
    work on a CPU (its trailing chunks hold only padding rows, which
    :func:`jaxtree.scoring.scan_live` skips): first fits 20.5-21.3 -> 12.8-13.1 s at
    9,000 x 50 and 20.4-21.9 -> 12.6-13.1 s at 5,000 x 100 (with the pair pre-screen there),
    the same k and test RMSE; the 9,000 x 50 warm fit 1.61-1.65 -> 1.76-1.78 s in that
    alternating run (1.73 -> 1.68 s in an earlier pair) (BENCHMARKS.md, "Wide tables of a
    few thousand rows")."""
    if not (scoring.compiling_dominates(n, p, q) or n < SHARED_SELECTION_ROWS):
        return None
    return n if rows is None else rows


SHARED_SELECTION_ROWS = 10_000
"""Below this many rows a held-out split's selection run always shares the refit's chunking
(:func:`selection_rows`); the default search's held-out size applies below the same count
(``jaxtree._fit.spec.AUTO_SMALL_MAX_ROWS``), above it a split is the user's choice."""


MSE_FLOOR = 1e-14
"""Mean held-out loss differences (per-row squared errors of the scaled ``y``, in
``[-y_bound, y_bound]``) up to this are ties in :func:`choose_size_rows`: an RMSE of 1e-7,
float32's resolution of ``y``'s range."""

SE_FACTOR = 0.5
"""The tolerance of :func:`choose_size`, in paired standard errors: a smaller size is kept
while its mean held-out loss is within ``SE_FACTOR`` standard errors of the best size's
(measured against 1 and 0, the argmin: :func:`choose_size`)."""


def choose_size_rows(row_losses, w=None, floor: float = MSE_FLOOR,
                     n_se: float = SE_FACTOR) -> tuple:
    """The paired standard-error rule on per-row held-out losses: ``(index, val, se)``.

    For every size ``s`` (row ``s`` of ``row_losses``, sizes in increasing order) and the
    best size ``b`` (the lowest weighted mean loss ``val[b]``; the first on ties), the
    per-row differences ``d_i = L[s, i] - L[b, i]`` are measured on the same held-out rows;
    the chosen size is the smallest ``s`` with ``mean(d) <= max(n_se * SE(d), floor)``. The
    means and the standard error are weighted by ``w``: ``mean(d) = sum(w d) / sum(w)``,
    ``SE(d)^2 = var_w(d) / n_eff`` with ``var_w(d) = sum(w (d - mean(d))^2) / sum(w)`` and
    Kish's effective count ``n_eff = sum(w)^2 / sum(w^2)`` (the number of rows when every
    weight is 1). ``b`` itself always qualifies (``d = 0``). Sizes whose mean loss is not
    finite are never chosen. Why paired and why this tolerance: :func:`choose_size`.

    Args:
      row_losses: float ``(S, m)``: the loss of each of ``S`` sizes on each of ``m``
        held-out rows (any loss: squared error, log-loss, ramp), in the units of ``floor``.
      w: float ``(m,)`` row weights (``sample_weight``), or None for equal weights; rows of
        weight 0 do not count.
      floor: differences of mean loss up to this are ties (exact laws, where every loss is
        rounding); :data:`MSE_FLOOR` for squared errors of the scaled ``y``.
      n_se: the tolerance in standard errors (:data:`SE_FACTOR`; 1 is the classic
        one-standard-error rule, 0 the argmin).

    Returns:
      ``(index, val, se)``: the chosen size's row ``index`` (an int), ``val`` float64
      ``(S,)`` every size's weighted mean loss, ``se`` float64 ``(S,)`` the standard error of
      every size's mean difference to the best (0 at the best).

    Examples:
      >>> L = np.array([[1.0, 1.0, 1.0, 1.0], [0.5, 0.6, 0.5, 0.48], [0.5, 0.5, 0.5, 0.5]])
      >>> choose_size_rows(L)[0]  # size 1 is 0.02 worse, SE 0.023: more than half an SE
      2
      >>> choose_size_rows(L, n_se=1.0)[0]
      1
    """
    L = np.asarray(row_losses, np.float64)
    if L.ndim != 2 or L.shape[0] == 0:
        raise ValueError(f"row_losses must be 2-D (sizes, rows) with a size; got shape {L.shape}.")
    w = np.ones(L.shape[1]) if w is None else np.asarray(w, np.float64).reshape(-1)
    if w.shape != (L.shape[1],):
        raise ValueError(f"w must have one weight per row ({L.shape[1]}); got shape {w.shape}.")
    on = w > 0  # zero-weight rows (padding, sample_weight 0) add nothing, not even NaN
    if not w[on].sum() > 0:
        raise ValueError("choose_size_rows: no held-out row has a positive weight.")
    val = held_mean(L, w)
    L, w = L[:, on], w[on]
    tot = w.sum()
    finite = np.isfinite(val)
    if not finite.any():
        return 0, val, np.zeros_like(val)
    best = int(np.argmin(np.where(finite, val, np.inf)))
    d = L - L[best]
    mean = d @ w / tot
    var = ((d - mean[:, None]) ** 2) @ w / tot
    se = np.sqrt(np.maximum(var, 0.0) * np.sum(w * w)) / tot  # sqrt(var / n_eff)
    ok = finite & (mean <= np.maximum(n_se * se, floor))
    return int(np.flatnonzero(ok)[0]), val, se


def held_mean(row_losses, w) -> np.ndarray:
    """The weighted mean held-out loss ``(...)`` of per-row losses ``(..., m)`` over the rows
    of positive weight ``w (m,)`` (zero-weight rows, padding or ``sample_weight`` 0, add
    nothing, not even NaN): the ``val`` of :func:`choose_size_rows`. A stack of rows is
    taken one row at a time, so that a row's mean has the same bits alone as in a stack (a
    matrix product sums in another order): an order's held-out score is compared as
    computed alone and among the orders (:func:`jaxtree._fit.stages.order_choice`)."""
    L = np.asarray(row_losses, np.float64)
    w = np.asarray(w, np.float64).reshape(-1)
    on = w > 0
    won, total = w[on], w[on].sum()
    means = [r[on] @ won / total for r in L.reshape(-1, L.shape[-1])]
    return np.array(means).reshape(L.shape[:-1])[()]  # a scalar for one row


def choose_size(row_losses, w=None) -> int:
    """The size chosen on held-out rows (row of ``row_losses (S, m)``; the tree path starts
    at 0 operations, the first leaf; the shape path at 0 terms): the smallest size whose
    mean held-out loss is within half a *paired* standard error of the best size's
    (:func:`choose_size_rows` with :data:`SE_FACTOR`). Every held-out size choice of the
    regressor calls it: ``fit`` in memory and streamed, the shape count of ``shapes``, and
    ``fit_batch``'s trees and shape counts.

    Decision (issue 29) and why:

    * **Paired.** Every size is measured on the same held-out rows, so what decides between
      two sizes is the error of their *difference*, ``SE(L_s - L_b)``, not the error of a
      held-out MSE itself. The rule before was ``MSE_best * sqrt(2 / m)`` (a Gaussian MSE's
      own standard error, unpaired): it ignores that a row's noise is common to every size,
      so on thousands of rows it kept trees smaller than the held-out rows support (Wage,
      weather, flights).
    * **Half a standard error.** Measured with ``benchmarks/bench_size_rule.py`` (every rule
      on the same selection run, then refitted; BENCHMARKS.md, "The held-out size rule"):
      on 86 fold fits of the nine regression tables of ``bench_accuracy.py --quick`` (3
      folds at seed 0, and 5 folds at seeds 1 and 2 for the five tables under 1,000 rows,
      3 at seed 1 for Wage, weather, flights), the test RMSE against the old rule changed
      by a mean log ratio of -1.16% (standard error 1.07%) with half a paired SE, +0.54%
      (1.10%) with one, -2.25% (1.59%) with the argmin. Half an SE beat one SE by -1.70%
      (0.78%; 20 fold fits better, 7 worse) and is below the old rule on 15 of the 21 larger
      fits (3,000-5,000 rows; -1.39%, 0.32%). The argmin's further -1.09% (1.32%) is not
      resolved, costs 0.4 terms more and had the worst fit (2.2 times the old rule's RMSE:
      airquality, k = 9 on 93 rows); one SE gains nothing on the small tables because
      squared errors are heavy-tailed: a few rows inflate ``SE(d)`` and keep one or two
      leaves.
    * **Not the small tables' cure.** Below 1,000 rows every rule is within noise of every
      other (6 to 100 held-out rows), and none reaches ridge on mtcars, mpg or diabetes: on
      mtcars the argmin's RMSE is 3.17-3.51 against ridge's 2.67-2.79 (three shuffles), on
      diabetes the argmin is 1 or 2 operations on 12 of 13 folds (the path overfits after
      them). Repeated splits (the size chosen on 5-fold selection runs, every row held out
      once; prototyped with the paired one-SE rule, 3 folds at seed 0) changed nothing on
      mtcars, helped airquality and mpg, hurt diabetes and Boston, at 5 times the
      selection's cost: not adopted.
    * **The floor.** :data:`MSE_FLOOR`: on noise-free data (an exact law) every size's
      loss is rounding (1e-30 in float64) and the rule would otherwise pick a size by
      rounding noise, with terms of 1e-14.
    """
    return choose_size_rows(row_losses, w)[0]


def held_rows(states, n_held: int) -> np.ndarray:
    """Per-row held-out losses ``(S, n_held)`` (float64; a batch: ``(B, S, n_held)``) from the
    kept rows of a run with :func:`with_held_out_rows`: per size the chunked
    ``(n_chunks, m)`` (a batch: ``(B, n_chunks, m)``) losses, padding rows last."""
    rows = np.stack([np.asarray(r, np.float64) for r in states])
    rows = rows.reshape(rows.shape[: rows.ndim - 2] + (-1,))[..., :n_held]
    return np.moveaxis(rows, 0, 1) if rows.ndim == 3 else rows


def with_held_out_rows(step, errors):
    """A search step over ``(state, rows)``: ``step``'s, with ``errors(state) -> (mse,
    rows)`` on the held-out data reported as ``info.val_loss`` (the MSE) and its per-row
    losses kept beside the state (:func:`jaxtree.search.run` with ``keep_states`` brings both
    to the host in its one transfer per iteration; :func:`split_run` takes them apart).
    Start it at ``(state, zeros of the rows' shape)``. The held-out MSE and the rows come
    from one compiled program (:func:`held_out_errors`), the one a fit compiled for the MSE
    alone before."""

    def monitored(st):
        state, info = step(st[0])
        val, rows = errors(state)
        return (state, rows), info._replace(val_loss=val)

    return monitored


def split_run(sel, n_held: int):
    """``(run, rows)``: a run of :func:`with_held_out_rows` with its final state and kept
    states the plain states again, and the per-row held-out losses of every kept state
    (:func:`held_rows`)."""
    rows = held_rows([s[1] for s in sel.programs], n_held)
    return sel._replace(program=sel.program[0], programs=[s[0] for s in sel.programs]), rows


def held_weights(held_data, n_held: int) -> np.ndarray:
    """The held-out rows' weights ``(n_held,)`` (float64) of chunked held-out data (a batch:
    ``(B, n_held)``); one transfer, nothing compiled."""
    w = np.asarray(jax.device_get(held_data.w), np.float64)
    return w.reshape(w.shape[: w.ndim - 2] + (-1,))[..., :n_held]


def path_rows(models, history, val_history) -> list:
    """``path_``'s rows: per size the operations, training and held-out MSE (``y``'s units)
    and model; the formula is added on first access (``TreeRegressor.path_``)."""
    return [dict(n_ops=prog.n_ops(m.program), train_mse=float(h), val_mse=float(v), model=m)
            for m, h, v in zip(models, history, val_history)]


def size_path(sel, held, sc, dtype, basis, names) -> tuple:
    """``(k_best, path)``: the size chosen by a selection run ``sel`` (the program after each
    iteration in ``programs``, the held-out MSE after each in ``val_history``) from its
    per-row held-out losses ``held = (rows (S, n_held), w (n_held,))`` (a source's
    ``selection_run``; :func:`choose_size`), and ``path_``'s rows (operations, training and
    held-out MSE, model)."""
    k_best = prog.n_ops(sel.programs[choose_size(*held)])
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


def mse_and_errors(program, data: scoring.Data, basis) -> tuple:
    """``(mse, errors)``: :func:`jaxtree.refine.mse` of ``program`` on chunked ``data`` (the
    same sums) and the per-row squared errors ``(n_chunks, m)`` (unweighted; padding rows
    included), scaled units."""
    nc, m = data.y.shape
    data = refine_.coarse(data)

    def body(acc, ch):
        xb, yb, wb, phb = ch
        res = yb - prog.evaluate(program, xb, basis, phb)
        err = res * res
        return (acc[0] + jnp.sum(wb * err), acc[1] + jnp.sum(wb)), err

    z = jnp.zeros((), data.x.dtype)
    (sse, n), err = scoring.scan_live(body, (z, z), (data.x, data.y, data.w, data.phi), data.w,
                                      skipped=lambda ch: jnp.zeros_like(ch[1]))
    return sse / n, err.reshape(nc, m)


held_out_errors = jax.jit(mse_and_errors, static_argnames=("basis",))
"""The held-out MSE and per-row squared errors of a selection run
(:func:`with_held_out_rows`)."""
held_out_errors_cached = _executables.cached(held_out_errors, static_argnums=(2,),
                                             light=_executables.LIGHT_LLVM1)


def _minus(a, b):
    return a - b


minus = _executables.cached(jax.jit(_minus), static_argnums=())
"""``a - b`` as one program through the executable cache (an eager subtraction compiles a
small program that neither cache keeps: JAX's stores only programs that took 0.05 s)."""


def _joint(program, data, basis, steps):
    return refine_.joint(program, data, basis, steps=steps)


joint_cached = _executables.cached(jax.jit(_joint, static_argnums=(2, 3)), static_argnums=(2, 3),
                                    quick=True)
"""``joint_cached(program, data, basis, steps)``: :func:`jaxtree.refine.joint` (squared loss)
through the executable cache (a second process loads it); compiled for compile time in a
small table's shape stage (:func:`jaxtree._executables.quick`; measured when the backfitting
round after the backfit search used it: 1.4 -> 0.6 s of compiling at 64 rows; at 1,500 rows
a first fit 0.3-0.5 s shorter and a warm one about 0.05 s longer, the same model). Since the
fortieth session that round refines through the search's own second program
(:func:`jaxtree.search.refines`); this one serves the backfitting round where the search
compiled none it can use (:meth:`jaxtree._fit.source.InMemory._refine`)."""


@functools.partial(jax.jit, static_argnames=("basis",))
def best_member(programs, data, basis):
    """The beam member with the lowest training MSE (the one :func:`jaxtree.search.beam_fit`
    returns)."""
    loss = jax.vmap(lambda p: refine_.mse(p, data, basis))(programs)
    i = jnp.argmin(jnp.where(jnp.isfinite(loss), loss, jnp.inf))
    return jax.tree_util.tree_map(lambda a: a[i], programs)


def start_mse(y, w) -> float:
    """The weighted MSE of the shape search's intercept-only start (:func:`jaxtree.shapes.start`:
    the weighted mean of ``y``) on chunked targets ``y`` and weights ``w`` (scaled space), in
    float64 on the host: the shape path's first row. Host arithmetic compiles nothing; the
    jitted evaluation of the empty shapes it replaces was one more program to compile in
    every first fit with a shape stage (0.3-0.5 s on two cores)."""
    w = np.asarray(w, np.float64).reshape(-1)
    return reference_.weighted_tss(np.asarray(y).reshape(-1), w) / float(np.sum(w))


def shape_mse_and_errors(shapes, data, spec) -> tuple:
    """``(mse, errors)``: the weighted MSE and the per-row squared errors ``(n_chunks, m)``
    of shape terms alone on chunked data (scaled space)."""
    err = (data.y - shapes_.evaluate_chunks(shapes, data.x, spec)) ** 2
    return jnp.sum(data.w * err) / jnp.sum(data.w), err


shape_errors = shapes_.spec_jit(shape_mse_and_errors)
"""The held-out MSE and per-row squared errors of a shape-count selection run."""


@functools.partial(jax.jit, static_argnames=("basis",))
def block_errors(program, xb, yb, basis):
    """Per-row squared errors ``(B, m)`` of ``program`` on a streamed block ``(B, m, p)``."""
    return jax.vmap(lambda x, y: (y - prog.evaluate(program, x, basis)) ** 2)(xb, yb)


def _tree_values(program, x, basis):
    return jax.vmap(lambda xb: prog.evaluate(program, xb, basis))(x)


def numpy_basis(basis) -> bool:
    """Whether every function of ``basis`` has numpy code (no
    :class:`jaxtree.basis.CustomFunction`, a user's function that may not take numpy
    arrays)."""
    return not any(isinstance(f, basis_.CustomFunction) for f in basis.families)


def host_tree_values(program, x, basis):
    """The tree's values ``(N,)`` float64 at scaled rows ``x (N, p)``, on the host: each leaf
    by its family's ``to_numeric`` in numpy (written as :meth:`jaxtree.basis.Basis.evaluate`
    computes the function), so :data:`tree_values`' numbers to float rounding, with nothing
    compiled. None where the basis has a :class:`jaxtree.basis.CustomFunction` (a user's
    function, which may not take numpy arrays).

    Why (sixty-second session, issue 27): a small table's shape stage runs on the host
    (:class:`jaxtree._fit.stages.HostFit`); the tree's values on its rows were then the one
    program left between the search and that stage, 0.2-0.3 s to trace, lower and compile
    on the demo's first fit for a pass of microseconds."""
    if not numpy_basis(basis):
        return None
    functions = [basis.locate(i) for i in range(basis.q)]
    a = prog.to_numpy(program)
    u = np.asarray(x, np.float64)

    def value(slot: int):
        op = int(a["op"][slot])
        if op == prog.LEAF:
            fam, m = functions[int(a["basis"][slot])]
            j = int(a["feature"][slot])
            col = fam.to_numeric(np, m, u[:, j], feature=j) if fam.per_feature else \
                fam.to_numeric(np, m, u[:, j])
            return float(a["weight"][slot]) * np.asarray(col, np.float64)
        left, right = value(int(a["left"][slot])), value(int(a["right"][slot]))
        return left + right if op == prog.ADD else left * right

    tree = value(0) if int(a["n_slots"]) else 0.0
    return float(a["intercept"]) + tree + np.zeros(u.shape[0])


def host_held_out_errors(held_data, basis):
    """:data:`held_out_errors_cached` on the host for chunked held-out ``held_data``: a
    function ``program -> (mse, errors (n_chunks, m))`` (float64; the tree by
    :func:`host_tree_values`), or None where that one is (a custom function's basis). The
    rows are read to the host once.

    Why (sixty-second session, issue 27): on a small table the held-out errors of the size
    selection run are a pass over a few hundred rows, yet their program cost 0.25-0.3 s of
    a first fit's CPU to trace, lower and compile beside the search step's two programs
    (the demo's first fit, BENCHMARKS.md, "The small table's shape stage on the host")."""
    if not numpy_basis(basis):
        return None
    x = np.asarray(held_data.x, np.float64)
    x = x.reshape(-1, x.shape[-1])
    y, w = (np.asarray(a, np.float64) for a in (held_data.y, held_data.w))

    def errors(program):
        err = (y.reshape(-1) - host_tree_values(jax.device_get(program), x, basis)) ** 2
        return np.sum(w.reshape(-1) * err) / np.sum(w), err.reshape(y.shape)

    return errors


tree_values = _executables.cached(jax.jit(_tree_values, static_argnames=("basis",)),
                                  static_argnums=(2,), quick=True,
                                  light=_executables.LIGHT_LLVM1, light_anywhere=True)
"""The tree's predictions (scaled space) on chunked covariates ``(n_chunks, m, p)``:
``tree_values(program, x, basis)``, positional arguments (through the executable cache,
:mod:`jaxtree._executables`; compiled for compile time in a small table's shape stage,
:func:`jaxtree._executables.quick`)."""
