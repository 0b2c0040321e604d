"""Fitting many data sets of one shape at once: ``B`` searches in one compiled call.

Why over 800 lines: two public entry points (:func:`fit_batch`, :func:`fit_batch_classifier`)
with their checks, the batched kernels (the search step, the beam, the shape stage's pieces)
and the batch's source. The stages are the estimators' own (:mod:`jaxtree._fit.stages`: the
tree's held-out size and refit, and with ``shapes=S`` the shape terms first), run on a
batched source (:class:`_Members`) with batched kernels (:class:`_BatchShapes`).

:func:`fit_batch` stacks ``B`` data sets ``X[b]`` of shape ``(n, p)`` and runs the pure
search step :func:`jaxtree.search.step` (the greedy or the backfit search) or
:func:`jaxtree.search.beam_step` under ``jax.vmap`` over a batch of programs and
data (basis and config shared and static). Every iteration is one call of one compiled
function for the whole batch, and one host transfer (the ``B`` losses and choices).

Each data set is scaled on its own, exactly as :class:`jaxtree.TreeRegressor` does:
``x_j -> (x_j - min_j) / (max_j - min_j)`` in ``[0, 1]`` and ``y -> (y - c) / s`` in
``[-1, 1]`` with ``c`` the midpoint and ``s`` the half-range of that data set's ``y``.
So ``fit_batch(X, y, search=s)[b]`` makes the same choices as
``TreeRegressor(search=s, validation_fraction=None, shapes=0).fit(X[b], y[b])``.

With ``shapes=S`` each member is ``TreeRegressor(shapes=S, ...)``'s fit: the estimators'
shape stage (:func:`jaxtree._fit.stages.shapes_first`) run on the batch, the pure functions of
:mod:`jaxtree.shapes` vmapped over the members (one compiled shape step for all,
:data:`shape_step_batch_jit`): the shape terms first (Grams, greedy insertions with
backfitting, each member on its own ``y``), the tree searched on each member's own
residual, then one backfitting round (shapes given the tree, the tree's weights given the
shapes). Host-side per member, as in the estimator: the pair screen when there are more than
:data:`jaxtree.shapes.MAX_PAIRS` pairs (``p >= 13``; a loop over the members, then their
union searched with each member's other pairs closed) and the final cut of each member's
terms to its chosen pairs (:func:`jaxtree.shapes.compact`).

:func:`fit_batch_classifier` is the same for classification: member ``b`` is the
:class:`jaxtree.TreeClassifier` fitted to ``(X[b], y[b])``; one-versus-rest trees of all
data sets are flattened into one batch axis (every data set must have the same number of
classes, so the batch and its ``models`` have static shapes).

Design decision: without ``tol`` (the default) the batch runs ``k + 1`` iterations for
every member; a member whose search found no finite candidate keeps its tree (masked inside
``step``) and reports it in ``status``. With ``tol`` each member stops as its estimator's fit
would (:func:`jaxtree.search.run`'s stop, member by member): the vmapped step still runs for
every member until the last one stops, and a stopped member's later steps are discarded (its
tree reverted to the one it stopped with, one device select per iteration), so a member's
result is the separate fit's while the batch pays for its longest member.

Design decision: where each member's ``n*p*q`` is below
:data:`jaxtree.scoring.BUCKET_MIN_WORK` (compilation dominates), :func:`fit_batch` compiles
its step for :func:`jaxtree.program.capacity_for` ``(k)``, bounds every member by ``k``
operations (the step's traced ``max_ops``) and cuts the trees back to ``2k+1`` slots
(:func:`jaxtree.program.trim`), as :class:`jaxtree.TreeRegressor` does, so batches of nearby
``k`` share one compiled step and give the exact-capacity results. :func:`fit_batch_classifier`
does the same as :class:`jaxtree.TreeClassifier` (its greedy step inserts one operation per
iteration, so ``k + 1`` iterations need no bound).
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from typing import Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxtree import _compilation_cache, _executables
from jaxtree import _scaling as scaling_
from jaxtree import classifier as classifier_
from jaxtree import model as model_
from jaxtree import plan as plan_
from jaxtree import program as prog
from jaxtree import refine as refine_
from jaxtree import scoring, search
from jaxtree import search as search_
from jaxtree import shapes as shapes_
from jaxtree._base import WeightBoxWarning, box_message, set_fitted
from jaxtree._fit import classify, pipeline, progress, select, source, stages
from jaxtree._fit import spec as spec_
from jaxtree._inputs import encoding as encoding_
from jaxtree._inputs import validation as V
from jaxtree.estimator import TreeRegressor

__all__ = [
    "BatchResult",
    "beam_step_batch_jit",
    "fit_batch",
    "fit_batch_classifier",
    "shape_step_batch_jit",
    "step_batch_jit",
]



def _step_batch(programs: prog.Program, data: scoring.Data, basis, config: search.Config,
                max_ops=None):
    """:func:`jaxtree.search.step` over a leading batch axis of programs and data.

    With the pair lookahead (the backfit search) the pair scoring runs only while some
    member's tree is small enough for it: under ``vmap`` the step's own ``lax.cond`` on each
    member's size becomes a ``select`` that would score pairs at every iteration. The
    outer ``lax.cond`` on "any member may take a pair" is not batched, and a member that
    may not take a pair makes the same move either way. ``max_ops``: None, or int ``(B,)``
    the most operations each member's tree may hold (:func:`jaxtree.search.step`; a member
    whose tree is full ends its search, so members of different sizes share one run).

    Args:
      programs: the members' trees (leading axis ``B``).
      data: the members' chunked data (:class:`jaxtree.scoring.Data`, leading axis ``B``).
      basis: the :class:`jaxtree.basis.Basis` (shared).
      config: the search's :class:`jaxtree.search.Config` (shared).
    """
    def vstep(cfg):
        if max_ops is None:
            return jax.vmap(search.step, in_axes=(0, 0, None, None))(programs, data, basis, cfg)
        return jax.vmap(search.step, in_axes=(0, 0, None, None, 0))(programs, data, basis, cfg,
                                                                      max_ops)

    if not config.pair_leaves:
        _, nc, m, p = data.x.shape
        if (config.refine is not None and not config.replace_moves and config.loss == "squared"
                and not scoring.compiling_dominates(nc * m, p, basis.q)):
            # Iteration 0 (every tree empty): search.step keeps the first leaf unrefined and
            # discards the refinement's result, but under vmap its lax.cond on the empty tree
            # is a select that runs the refinement anyway (the same L-BFGS passes as a later
            # iteration: 20% of a batch's passes at B = 32, n = 1e4). This cond is not
            # batched, so the batch skips it; results are bitwise the same. Only where the
            # search outweighs compiling (the second copy of the step costs compile time).
            empty = jnp.all(programs.n_slots == 0)
            return jax.lax.cond(empty, lambda: vstep(config._replace(refine=None)),
                                lambda: vstep(config))
        return vstep(config)
    small = (programs.n_slots > 0) & (jax.vmap(prog.n_leaves)(programs) <= config.pair_max_leaves)
    return jax.lax.cond(jnp.any(small), lambda: vstep(config),
                        lambda: vstep(config._replace(pair_leaves=0)))


def _beam_step_batch(programs: prog.Program, data: scoring.Data, basis, config: search.Config):
    """:func:`jaxtree.search.beam_step` over a leading batch axis (programs ``(B, width, ...)``).

    Args:
      programs: the members' beams, ``(B, width, ...)``.
      data: the members' chunked data (:class:`jaxtree.scoring.Data`, leading axis ``B``).
      basis: the :class:`jaxtree.basis.Basis` (shared).
      config: the search's :class:`jaxtree.search.Config` (shared).
    """
    return jax.vmap(search.beam_step, in_axes=(0, 0, None, None))(programs, data, basis, config)


@jax.jit
def _best_members(programs: prog.Program, loss) -> prog.Program:
    """Each data set's beam member with the lowest training loss (``search.beam_fit``'s rule)."""
    best = jnp.argmin(jnp.where(jnp.isfinite(loss), loss, jnp.inf), axis=1)
    return jax.tree_util.tree_map(lambda a: jax.vmap(lambda t, i: t[i])(a, best), programs)


beam_step_batch_jit = jax.jit(_beam_step_batch, static_argnames=("basis", "config"))


@functools.partial(jax.jit, static_argnames=("basis",))
def _members_mse(programs: prog.Program, data: scoring.Data, basis):
    """Training MSE ``(B, width)`` of every beam member of every data set."""
    return jax.vmap(lambda ps, d: jax.vmap(lambda p: refine_.mse(p, d, basis))(ps))(programs, data)


_held_out_errors = jax.jit(jax.vmap(select.mse_and_errors, in_axes=(0, 0, None)),
                           static_argnums=2)
"""Each member's weighted MSE and per-row squared errors on its own held-out rows
(:func:`jaxtree._fit.select.mse_and_errors` vmapped)."""


step_batch_jit = jax.jit(_step_batch, static_argnames=("basis", "config"))
"""The batched step, compiled once per (shapes, dtype, basis, config)."""

step_batch_cached = _executables.cached(step_batch_jit, static_argnums=(2, 3), light=False)
"""``step_batch_jit`` through jaxtree's executable cache (:mod:`jaxtree._executables`: a new
process loads it instead of tracing, lowering and compiling it; positional arguments), at
XLA's defaults everywhere (the batch races the paper's search warm)."""


# ------------------------------------------------------------------ shape terms (shapes=S)
# The estimator's in-memory shape stage (jaxtree._fit.stages.shapes_first), each
# pure function of jaxtree.shapes vmapped over the batch axis (spec shared and static).

def _shape_step_batch(states: shapes_.State, data: scoring.Data, grams, spec: shapes_.ShapeSpec):
    """:func:`jaxtree.search.shape_step` (one shape insertion) over a leading batch axis.

    Args:
      states: the members' :class:`jaxtree.shapes.State` (leading axis ``B``).
      data: the members' chunked data (:class:`jaxtree.scoring.Data`, leading axis ``B``).
      grams: the members' :func:`jaxtree.shapes.grams` (leading axis ``B``).
      spec: the :class:`jaxtree.shapes.ShapeSpec` (shared).
    """
    return jax.vmap(search.shape_step, in_axes=(0, 0, 0, None))(states, data, grams, spec)


shape_step_batch_jit = jax.jit(_shape_step_batch, static_argnames=("spec",))
"""The batched shape insertion, compiled once per (shapes, dtype, spec)."""

_shape_grams_batch = jax.jit(jax.vmap(shapes_.grams, in_axes=(0, None)), static_argnums=1)
_shape_factors_batch = jax.jit(jax.vmap(shapes_.with_factors, in_axes=(0, None)), static_argnums=1)
_shape_start_batch = jax.jit(jax.vmap(shapes_.start, in_axes=(0, None)), static_argnums=1)
_shape_finish_batch = jax.jit(jax.vmap(shapes_.finish, in_axes=(0, 0, 0, None, None)),
                              static_argnums=(3, 4))


@functools.partial(jax.jit, static_argnames=("spec", "sweeps"))
def _shape_refit_batch(shapes: shapes_.Shapes, data: scoring.Data, grams, spec, sweeps: int):
    """:func:`jaxtree.shapes.refit` of every member's terms on its own (all) rows."""
    return jax.vmap(lambda s, d, g: shapes_.refit(s, d, spec, sweeps, gr=g))(shapes, data, grams)


@functools.partial(jax.jit, static_argnames=("basis", "spec", "steps"))
def _shape_tree_round(programs: prog.Program, states: shapes_.State, data: scoring.Data, grams,
                      basis, spec, steps):
    """The estimator's backfitting round after the tree (``jaxtree._fit.source.InMemory.backfit``), per
    member: the shapes given the tree (one sweep), then with ``steps`` (``refine="optax"``)
    the tree's weights given the shapes (:func:`jaxtree.refine.joint`). Returns
    ``(programs, states, mse (B,))``, the MSE of the final model (scaled units)."""
    def one(program, state, d, gr):
        t_fit = jax.vmap(lambda xb: prog.evaluate(program, xb, basis))(d.x)
        state = shapes_.finish(state, d._replace(y=d.y - t_fit), gr, spec, 1)
        resid = d._replace(y=d.y - state.fit)
        if steps is not None:
            program, _ = refine_.joint(program, resid, basis, steps=steps)
        return program, state, refine_.mse(program, resid, basis)

    return jax.vmap(one)(programs, states, data, grams)


_member = classify.member  # member b of a batched pytree (every leaf indexed)


def _stack_members(members: list):
    return jax.tree_util.tree_map(lambda *a: jnp.stack(a), *members)


def _screened_pairs(sub: scoring.Data, p: int):
    """``(candidates, allowed)``: the pair candidates of the batched shape search. With at most
    :data:`jaxtree.shapes.MAX_PAIRS` pairs every pair, for every member (``allowed`` None).
    Otherwise each member's own :func:`jaxtree.shapes.screen_pairs` (a loop over the members
    on the host: the screen's choice is data-dependent), the candidates their union (in pair
    order) and ``allowed`` bool ``(B, len(candidates))`` each member's own."""
    pairs = shapes_.pair_list(p)
    if len(pairs) <= shapes_.MAX_PAIRS:
        return pairs, None
    own = [set(shapes_.screen_pairs(_member(sub, b))) for b in range(sub.x.shape[0])]
    union = tuple(q for q in pairs if any(q in s for s in own))
    allowed = np.array([[q in s for q in union] for s in own], bool)
    return union, allowed


def _compact_batch(shapes: shapes_.Shapes, spec: shapes_.ShapeSpec, grams=None):
    """:func:`jaxtree.shapes.compact` of a batch: the candidates cut to the pairs some member
    chose (their union, in candidate order; a member's pair outside its own choice stays off),
    ``(shapes, spec, grams)`` as there (``grams`` batched, None stays None)."""
    if not spec.pairs:  # one covariate: nothing to cut
        return shapes, spec, grams
    on = np.asarray(shapes.pair_on)
    union = jnp.asarray(on.any(axis=0))
    members = []
    for b in range(on.shape[0]):
        out, new_spec, _ = shapes_.compact(_member(shapes, b)._replace(pair_on=union), spec)
        members.append(out._replace(pair_on=jnp.asarray(on[b][np.asarray(union)])))
    if grams is not None:
        sel = jnp.asarray(np.flatnonzero(np.asarray(union)), jnp.int32)
        g1, s1, g2, s2, n = grams[:5]
        grams = (g1, s1, g2[:, sel], s2[:, sel], n)
    return _stack_members(members), new_spec, grams


def _allowed_start(start: shapes_.State, allowed) -> shapes_.State:
    """The empty model with every pair outside a member's own screen marked taken (so never
    chosen); ``allowed`` None: all pairs open."""
    if allowed is None:
        return start
    return start._replace(shapes=start.shapes._replace(pair_on=jnp.asarray(~allowed)))


def _shape_run(step, start: shapes_.State, n_shapes: np.ndarray, scale):
    """:func:`jaxtree.search.run` of a batched shape step where member ``b`` takes
    ``n_shapes[b]`` terms: all run ``max(n_shapes)`` iterations and each member keeps its
    state, history, choices and status after its own count (the states are deterministic,
    so the first ``n_shapes[b]`` iterations are member ``b``'s own search)."""
    n_shapes = np.asarray(n_shapes, np.int64)
    B, most = len(n_shapes), int(n_shapes.max())
    if most == 0:
        return search_.SearchResult(start, np.zeros((B, 0)), [[] for _ in range(B)],
                                    np.zeros(B, np.int64))
    flags = []

    def recorded(s):
        s, info = step(s)
        flags.append(info.status)
        return s, info

    res = search_.run(recorded, start, most, loss_scale=scale, keep_states=True)
    flags = np.asarray(jax.device_get(flags), np.int64)  # (most, B)
    pick = [res.programs[max(int(c), 1) - 1] for c in n_shapes]
    state = _stack_members([_member(start, b) if c == 0 else _member(pick[b], b)
                            for b, c in enumerate(n_shapes)])
    status = np.array([np.bitwise_or.reduce(flags[:c, b]) if c else 0
                       for b, c in enumerate(n_shapes)], np.int64)
    return search_.SearchResult(state, [res.history[b][:c] for b, c in enumerate(n_shapes)],
                                [res.choices[b][:c] for b, c in enumerate(n_shapes)], status)


_shape_errors_batch = jax.jit(jax.vmap(select.shape_mse_and_errors, in_axes=(0, 0, None)),
                              static_argnums=2)
"""Each member's weighted MSE and per-row squared errors of its shape terms alone
(:func:`jaxtree._fit.select.shape_mse_and_errors` vmapped)."""


class _BatchShapes:
    """The batch's twin of :class:`jaxtree._fit.stages.OneFit`: the shape stage's pieces
    vmapped over the data sets (spec shared and static), each member's pairs screened, its
    search run to its own count (:func:`_shape_run`) and its count chosen on its own held-out
    rows, so that :func:`jaxtree._fit.stages.shape_search` and
    :func:`jaxtree._fit.stages.choose_shapes` run a batch too."""

    @staticmethod
    def screen_terms(data, spec, p) -> tuple:
        return _screened_pairs(data, data.x.shape[-1])

    term_grams = staticmethod(_shape_grams_batch)
    factored = staticmethod(_shape_factors_batch)
    add_term = staticmethod(shape_step_batch_jit)
    held_errors = staticmethod(_shape_errors_batch)

    @staticmethod
    def empty_model(data, sspec, allowed):
        return _allowed_start(_shape_start_batch(data, sspec), allowed)

    @staticmethod
    def compile_ahead(data, held_data, sspec) -> None:
        """Nothing: the batch's programs are plain jitted functions (JAX's own cache), each
        compiled at its first call."""

    @staticmethod
    def run_terms(step, start, n_shapes, rep, scale):
        """:func:`_shape_run`; ``n_shapes`` each member's count, or one for all."""
        B = len(jax.tree_util.tree_leaves(start)[0])
        return _shape_run(step, start, np.broadcast_to(np.asarray(n_shapes, np.int64), (B,)),
                          scale)

    @staticmethod
    def compacted(found, sspec, gr, allowed) -> tuple:
        if allowed is not None:  # a member's pairs outside its own screen stay off
            found = found._replace(pair_on=found.pair_on & jnp.asarray(allowed))
        return _compact_batch(found, sspec, gr)

    @staticmethod
    def own_ids(run, data, p, pairs, allowed):
        """The run's shape records with each member's own term ids (:func:`_own_term_ids`)."""
        return run._replace(choices=_own_term_ids(run.choices, data.x.shape[-1], pairs, allowed))

    @staticmethod
    def with_shapes(paths, terms, sspec):
        """Each member's size path (if any) with its own shape terms before the round (the
        estimator's, :func:`jaxtree._fit.stages.shapes_first`)."""
        for b, path in enumerate(paths or ()):
            own = _own_shapes(_member(terms, b), sspec)
            stages.OneFit.with_shapes(path, own["shapes"], own["shape_spec"])
        return paths

    @staticmethod
    def counted(rows, weights, sel, data, empty, sspec, scale, names) -> tuple:
        """``(counts (B,), shape paths)``: each member's count by the paired standard-error
        rule and its ``shape_path_`` rows."""
        ys_, ws_ = np.asarray(data.y), np.asarray(data.w)  # each member's start, on the host
        train0 = np.array([select.start_mse(ys_[b], ws_[b]) for b in range(len(ys_))]) * scale
        counts, paths = np.zeros(len(ys_), np.int64), []
        for b in range(len(ys_)):
            counts[b] = select.choose_size(rows[b], weights[b])
            own = sel._replace(programs=[_member(st, b) for st in sel.programs],
                               history=sel.history[b], val_history=sel.val_history[b])
            paths.append(select.shape_path(float(train0[b]), float(empty[b]), own, sspec, names))
        return counts, paths


def _own_term_ids(choices: list, p: int, pairs: tuple, allowed) -> list:
    """Shape records with ``flat_index`` (the term id) as member's own search numbers it:
    a pair ``p + c`` among its own screened pairs rather than the batch's union."""
    if allowed is None:
        return choices
    out = []
    for b, member in enumerate(choices):
        own = [q for q, ok in zip(pairs, allowed[b]) if ok]
        out.append([dict(c, flat_index=p + own.index(pairs[c["flat_index"] - p]))
                    if c["flat_index"] >= p else c for c in member])
    return out


@dataclasses.dataclass(frozen=True)
class BatchResult:
    """The outcome of :func:`fit_batch` (and :func:`fit_batch_classifier`); behaves as the
    list of its ``B`` estimators.

    Attributes:
      estimators: list of ``B`` fitted :class:`jaxtree.TreeRegressor` (or
        :class:`jaxtree.TreeClassifier`: then ``models`` is the decision function's and
        ``history`` the training loss, see :func:`fit_batch_classifier`).
      models: the batched :class:`jaxtree.TreeModel` pytree (every array leaf has a
        leading ``B`` axis); predict all at once with
        ``jax.vmap(jaxtree.predict)(models, X)``.
      history: float64 ``(B, k+1)`` training MSE in each data set's ``y`` units (with
        ``shapes=S``: the shape iterations first, ``(B, S + k + 1)``, NaN-padded; with
        ``tol``: NaN after a member's end, and fewer columns when every member stopped
        before ``k``).
      status: int ``(B,)`` search status per data set (0 = ok).
      row_plan: the :class:`jaxtree.plan.RowPlan` the batch ran (its chunk shared by the
        ``B`` data sets: :func:`jaxtree.plan.row_plan` with ``batch=B``).
    """

    estimators: list
    models: model_.TreeModel
    history: np.ndarray
    status: np.ndarray
    row_plan: Optional[plan_.RowPlan] = None

    def __len__(self) -> int:
        return len(self.estimators)

    def __getitem__(self, i):
        return self.estimators[i]

    def __iter__(self):
        return iter(self.estimators)


def _check_batch_x(X, estimator: str = "TreeRegressor") -> np.ndarray:
    """Validates the ``(B, n, p)`` covariates of a batch (numpy out; finiteness not checked)."""
    xa = V.as_float_array(X, "X")
    if xa.ndim != 3:
        hint = f" For a single data set use {estimator}, or X[None]." if xa.ndim == 2 else ""
        raise ValueError(f"X must be 3-D (n_datasets, n_samples, n_features); got shape {xa.shape}.{hint}")
    B, n, p = xa.shape
    if B == 0 or n == 0 or p == 0:
        raise ValueError(f"X is empty (shape {xa.shape}); it needs at least one data set, row and column.")
    if n < 2:
        raise ValueError(f"fit_batch needs at least 2 samples per data set; got {n}.")
    return xa


def _check_batch_weight(sample_weight, B: int, n: int) -> Optional[np.ndarray]:
    """Validates ``(B, n)`` or shared ``(n,)`` sample weights; ``(B, n)`` or None out."""
    if sample_weight is None:
        return None
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
    rows = np.count_nonzero(sw > 0, axis=1)  # a row of weight 0 is no row (as the estimators)
    if (rows < 2).any():
        bad = int(np.argmax(rows < 2))
        raise ValueError(f"fit_batch needs at least 2 samples with positive sample_weight in "
                         f"every data set; data set {bad} has {int(rows[bad])} (of {n} rows).")
    return sw


def _check_batch(X, y, sample_weight):
    """Validates ``(B, n, p)`` / ``(B, n)`` / ``(B, n)`` or ``(n,)`` inputs (numpy out)."""
    xa = _check_batch_x(X)
    B, n, p = xa.shape
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
    return xa, ya, _check_batch_weight(sample_weight, B, n)


_designs_batch = jax.jit(jax.vmap(scoring.designs, in_axes=(0, None)), static_argnums=1)
"""Every data set's kept basis values (:func:`jaxtree.scoring.designs` vmapped)."""
_designs_batch_cached = _executables.cached(_designs_batch, static_argnums=(1,), light=False)
"""``_designs_batch`` through jaxtree's executable cache (a new process loads it)."""


def _chunk_batch(xs, ys, sw, chunk_size: int, dtype, rows=None, support=None) -> scoring.Data:
    """:func:`jaxtree.scoring.chunk` for every data set: ``(B, n_chunks, m, ...)`` (``rows``:
    chunked as that many rows); ``support``: None, or ``(basis, min_support)``: each
    member's candidate columns that ``min_support`` allows on its own rows
    (:func:`jaxtree.scoring.with_support`; ``allowed`` ``(B, p*q)``)."""
    w = np.ones(np.shape(ys)) if sw is None else sw
    if not any(isinstance(a, jax.Array) for a in (xs, ys, w)):  # on the host: nothing compiled
        data = scoring.chunk_members(xs, ys, w, chunk_size, rows=rows, dtype=dtype)
    else:
        chunk = jax.vmap(lambda x_, y_, w_: scoring.chunk(x_, y_, w_, chunk_size, rows=rows))
        data = chunk(jnp.asarray(xs, dtype), jnp.asarray(ys, dtype), jnp.asarray(w, dtype))
    if support is None or not support[1]:
        return data
    basis, min_support = support
    ws = np.broadcast_to(np.asarray(w), np.shape(ys))
    least = np.asarray([scoring.support_rows(min_support, int(np.count_nonzero(wb > 0)))
                        for wb in ws])
    if least.max() <= 1:
        return data
    counts = [scoring.cheap_support_counts(xb, wb, basis) for xb, wb in zip(xs, ws)]
    if all(c is not None for c in counts):  # on the host, as the estimators count
        return data._replace(allowed=jax.device_put(np.stack(counts) >= least[:, None]))
    mask = jax.vmap(lambda d, r: scoring.supported(d, basis, r))
    return data._replace(allowed=mask(data, jnp.asarray(least, jnp.int32)))


def _unnamed_table(names, fills) -> encoding_.EncodingSpec:
    """A member's table: the identity encoding of a numeric array (``fills``: the low ends of
    its model's ranges, ``x_min``, what a NaN takes at predict time) whose covariates carry
    ``names`` (None: ``x1..``) in formulas. The table itself had no column names, so, as for
    an estimator fitted on an array, the member has no ``feature_names_in_`` and a later
    ``predict`` on an array does not warn."""
    enc = encoding_.identity(len(fills), names, fills)
    return dataclasses.replace(enc, named=False)


def _feature_names(feature_names, p: int) -> tuple:
    """The ``p`` covariate names of a batch (default ``x1..xp``), checked."""
    if feature_names is None:
        return encoding_.default_names(p)
    names = tuple(str(s) for s in feature_names)
    if len(names) != p:
        raise ValueError(f"feature_names has {len(names)} names but X has {p} features.")
    return names


def _beam_to_sizes(programs, data, basis, cfg, sizes, scale, stop=None) -> search_.SearchResult:
    """The batched beam run on ``data`` until every data set has reached its own size
    ``sizes[b]`` (``sizes[b] + 1`` iterations), each data set's beam kept after its own
    iterations (the beam's states do not depend on how long it runs after: the estimator's
    ``beam_fit`` to ``k_``), with its history and choices cut there, or where ``stop`` (the
    estimators' ``tol``) ended it before."""
    run = search_.run(lambda prg: beam_step_batch_jit(prg, data, basis, cfg), programs,
                      int(sizes.max()) + 1, loss_scale=scale, keep_states=True, stop=stop)
    last = [min(int(s), len(run.choices[b]) - 1) for b, s in enumerate(sizes)]
    picked = _stack_members([_member(run.programs[i], b) for b, i in enumerate(last)])
    return search_.SearchResult(
        jax.tree_util.tree_map(jnp.asarray, picked),
        [np.asarray(run.history[b])[: i + 1] for b, i in enumerate(last)],
        [list(run.choices[b])[: i + 1] for b, i in enumerate(last)], run.status)


class _Members:
    """The stages' source for a batch (the protocol :func:`jaxtree._fit.stages.tree` reads:
    ``tree_config``, ``grow``, ``selection_run``, ``size_path``; with ``shapes=S`` the one
    :func:`jaxtree._fit.stages.shapes_first` reads): ``B`` data sets'
    scaled rows ``xs (B, n, p)``, targets ``ys (B, n)`` (each member's own, e.g. its shapes'
    residual) and weights, searched by one batched step per iteration. So the held-out size
    and the refit to each member's size run through the estimators' stage, each member
    stopping at its own size (the step's traced ``max_ops``).

    ``data``: the rows chunked for the search; ``spec``: the members' resolved settings
    (the estimators' :class:`jaxtree._fit.spec.FitSpec`); ``programs``: the empty trees
    (``(B, ...)``, or ``(B, width, ...)`` for the beam); ``bound``: None, or int ``(B,)``
    every member's ``k`` when the programs have a rounded-up capacity (:func:`fit_batch`'s
    buckets)."""

    def __init__(self, xs, ys, sw, data, spec: spec_.FitSpec, cfg, programs, sc, bound):
        self.xs, self.ys, self.sw, self.data, self.spec = xs, ys, sw, data, spec
        self.cfg, self.programs, self.sc = cfg, programs, sc
        self.beam, self.bound, self.stop = spec.search == "beam", bound, spec.stop
        self.fraction, self.random_state = spec.validation_fraction, spec.random_state
        self.scale = np.asarray(sc.y_scale, np.float64) ** 2

    def tree_config(self) -> search_.Config:
        return self.cfg

    def _step(self, data, bound):
        basis, cfg = self.spec.basis, self.cfg
        if self.beam:
            return lambda prg: beam_step_batch_jit(prg, data, basis, cfg)
        return lambda prg: step_batch_cached(prg, data, basis, cfg, bound)

    def grow(self, k, cfg: search_.Config, rep, chosen: bool = False) -> search_.SearchResult:
        """Every member grown to ``k`` operations on all rows, or with ``chosen`` to its own
        size ``k[b]`` (int ``(B,)``, chosen on held-out rows: one batched run to the largest,
        each member stopping at its own; the beam run until every member reached its size,
        each kept at its own, :func:`_beam_to_sizes`). The beam returns each data set's
        member of lowest training loss (the estimator's rule); trees are cut back to ``2k+1``
        slots."""
        s, data, scale = self.spec, self.data, self.scale
        if not chosen:
            res = search_.run(self._step(data, self.bound), self.programs, int(k) + 1,
                              loss_scale=scale, stop=self.stop)
        else:
            if self.beam:
                res = _beam_to_sizes(self.programs, data, s.basis, cfg, k, scale, self.stop)
            else:
                # A pair uses two operations: the refit's bound is then the chosen size, as
                # the estimator's.
                limit = np.maximum(k, 1) if cfg.pair_leaves else k
                res = search_.run(self._step(data, jnp.asarray(limit, jnp.int32)),
                                  self.programs, int(np.max(k)) + 1, loss_scale=scale,
                                  stop=self.stop)
            # A member's own refit runs k[b] + 1 iterations: the float floor at its last one
            # is no early stop (the batch ran on for longer members).
            conv = int(search_.Status.CONVERGED)
            ran_out = np.asarray([len(c) for c in res.choices]) >= np.asarray(k) + 1
            status = np.asarray(res.status, np.int64)
            res = res._replace(status=np.where(ran_out, status & ~conv, status))
        if self.beam:
            res = res._replace(program=_best_members(res.program, _members_mse(
                res.program, data, s.basis)))
        # Back to 2k+1 slots (on the host; a no-op at exact capacity): the exact-capacity
        # fit's arrays for the round, the pruning and the models.
        return res._replace(program=prog.trim(res.program, s.k))

    def selection_run(self, cfg: search_.Config, rep) -> tuple:
        """``(run, held)``: every member searched on the training rows to ``k`` with its
        held-out squared errors after each iteration (the run's ``programs``; ``rows`` its
        per-row errors ``(B, sizes, n_held)``), and the held-out rows (the same split of
        every data set). The beam is judged by the member it would return at each size."""
        s = self.spec
        train, held = select.split(self.xs.shape[1], self.fraction, self.random_state)
        # Chunked as the estimator's selection run (one compiled step with the refit).
        rows = select.selection_rows(*self.xs.shape[1:], s.basis.q)
        data, held_data = self._chunked(train, rows, support=True), self._chunked(held)
        best = self._best(data)
        step = select.with_held_out_rows(
            self._step(data, self.bound),
            lambda prg: _held_out_errors(best(prg), held_data, s.basis))
        start = (self.programs, np.zeros(held_data.y.shape, held_data.y.dtype))
        sel = search_.run(step, start, s.k + 1, keep_states=True, loss_scale=self.scale,
                          stop=self.stop)
        sel, rows = select.split_run(sel, len(held))  # rows (B, sizes, n_held)
        return dataclasses.replace(_Selection(sel), rows=rows,
                                   weights=select.held_weights(held_data, len(held)),
                                   best=best), held

    def _best(self, data):
        """A batch's trees as the model at that size: the beam's member of lowest training
        loss on ``data``, else the trees themselves."""
        if not self.beam:
            return lambda prg: prg
        return lambda prg: _best_members(prg, _members_mse(prg, data, self.spec.basis))

    # ------------------------------------------------ the shape stage's (shapes=S)
    # jaxtree._fit.stages.shapes_first on every member: the shape terms of its own target,
    # the tree on their residual, one backfitting round.

    shape_kernels = _BatchShapes
    reuses_grams = True  # fit_shapes reuses the shape search's Grams when it read all rows

    @property
    def loss_scale(self):
        return self.scale

    def _chunked(self, idx, rows=None, support: bool = False):
        """Every member's rows ``idx`` chunked (``rows``: as :func:`_chunk_batch`'s); with
        ``support`` the ``min_support`` mask (rows a tree's search scores)."""
        sw = None if self.sw is None else self.sw[:, idx]
        return _chunk_batch(self.xs[:, idx], self.ys[:, idx], sw, self.spec.chunk,
                            self.data.x.dtype, rows, self._support if support else None)

    @property
    def _support(self):
        return self.spec.basis, self.spec.min_support

    def shape_split(self, program=None):
        """``(training data, held-out data, held-out rows)``: the same split of every data
        set, at most ``shapes.SEARCH_ROWS`` training rows."""
        s = self.spec
        train, held = select.split(self.xs.shape[1], s.validation_fraction, s.random_state)
        sub = select.subsample(len(train), shapes_.SEARCH_ROWS, s.random_state)
        train = train if sub is None else train[sub]
        return self._chunked(train), self._chunked(held), held

    def shape_search_rows(self) -> tuple:
        """``(rows, all_rows)``: all rows, or the same deterministic subset of
        ``shapes.SEARCH_ROWS`` of every data set."""
        rows = select.subsample(self.xs.shape[1], shapes_.SEARCH_ROWS, self.spec.random_state)
        return (self.data, True) if rows is None else (self._chunked(rows), False)

    def fit_shapes(self, sres, found, sspec, grams, all_rows: bool):
        """The searched terms backfitted on all rows over the chosen terms only."""
        if grams is not None:
            state = _shape_finish_batch(sres.program._replace(shapes=found), self.data, grams,
                                        sspec, spec_.SHAPE_SWEEPS_ALL_ROWS)
        else:
            grams = _shape_grams_batch(self.data, sspec)
            state = _shape_refit_batch(found, self.data, grams, sspec,
                                       spec_.SHAPE_SWEEPS_SUBSET)
        return source.ShapeFit(state.shapes, state, grams)

    def given_shapes(self, fit, sspec) -> "_Members":
        """The tree's source: every member's rows with its shapes' partial residual as ``y``."""
        n = self.xs.shape[1]
        ys = self.ys - np.asarray(fit.state.fit, np.float64).reshape(len(self.ys), -1)[:, :n]
        data = _chunk_batch(self.xs, ys, self.sw, self.spec.chunk, self.data.x.dtype,
                            support=self._support)
        return _Members(self.xs, ys, self.sw, data, self.spec, self.cfg, self.programs,
                        self.sc, self.bound)

    def tree_program(self, program):
        return program

    def backfit(self, program, terms, sspec, fit) -> tuple:
        """The backfitting round of every member (:func:`_shape_tree_round`): ``(terms,
        programs, mse (B,))``."""
        s = self.spec
        steps = s.steps if s.refine == "optax" else None
        program, state, mse = _shape_tree_round(program, fit.state, self.data, fit.grams,
                                                s.basis, sspec, steps)
        return state.shapes, program, np.asarray(mse, np.float64)

    def size_path(self, sel, held, names) -> tuple:
        """``(sizes (B,), paths)``: each member's size by the paired standard-error rule on
        its per-row held-out errors (:func:`jaxtree._fit.select.choose_size`), ``paths[b]``
        the estimator's ``path_`` rows of member ``b``."""
        run, s = sel.run, self.spec
        dtype = self.data.x.dtype
        models = [model_.TreeModel.from_scaling(
            jax.tree_util.tree_map(jnp.asarray, prog.trim(sel.best(pr), s.k)), self.sc, dtype,
            s.basis, names) for pr in run.programs]
        sizes, paths = np.zeros(len(run.choices), np.int64), []
        for b in range(len(run.choices)):
            end = len(run.choices[b])  # a member whose tree filled up ended early (search.run)
            member = [_member(m, b) for m in models[:end]]
            val = run.val_history[b][:end]
            sizes[b] = prog.n_ops(member[select.choose_size(sel.rows[b][:end],
                                                              sel.weights[b])].program)
            paths.append(select.path_rows(member, run.history[b][:end], val))
        return sizes, paths


@dataclasses.dataclass(frozen=True)
class _Selection:
    """A batch's selection run (:meth:`_Members.selection_run`): the run, each member's
    per-row held-out errors and weights, and the rule that reads a model from its trees.
    ``status``: the run's, per member (the stage reads its early stop)."""

    run: object
    rows: object = None
    weights: object = None
    best: object = None

    @property
    def status(self):
        return np.asarray(self.run.status, np.int64)


def fit_batch(X, y, *, k: int = 10, basis=None, refine: Optional[str] = "optax",
              sample_weight=None, chunk_size="auto", coordinate_sweeps: int = 3,
              refine_steps="auto", precision: str = "highest",
              feature_names: Optional[Sequence[str]] = None, search: str = "greedy",
              beam_width: int = 4, validation_fraction: Optional[float] = None,
              random_state=None, shapes: int = 0, shape_knots: tuple = spec_.SHAPE_KNOTS,
              prune_tol: Optional[float] = None, y_bound: float = spec_.DEFAULT_Y_BOUND,
              tol: Optional[float] = None, min_support=0) -> BatchResult:
    """Fits ``B`` data sets of the same shape with one batched compiled step per iteration.

    Args:
      X: float ``(B, n, p)``: ``B`` data sets of ``n`` rows and ``p`` covariates.
      y: float ``(B, n)`` targets.
      k: number of operations of every tree. Small batches (``n*p*q`` below
        :data:`jaxtree.scoring.BUCKET_MIN_WORK`) search in the rounded-up capacity
        :func:`jaxtree.program.capacity_for` ``(k)``, each tree bound by ``k`` operations and
        cut back to ``2k+1`` slots, so that nearby ``k`` share one compiled step (the results
        are the exact-capacity search's). Every tree grows to ``k`` (or its held-out size)
        unless ``tol`` stops it before.
      basis: as for :class:`jaxtree.TreeRegressor` (None, a preset name, a Basis, a dict).
      refine: ``"optax"``, ``"coordinate"`` or None.
      sample_weight: optional non-negative ``(B, n)``, or ``(n,)`` shared by all.
      chunk_size: rows per sequential step of every pass, as for
        :class:`jaxtree.TreeRegressor`: ``"auto"`` (default) is the row plan
        (:func:`jaxtree.plan.row_plan` with ``batch=B``), an integer wins.
      coordinate_sweeps: passes over the leaves for ``refine="coordinate"``.
      refine_steps: L-BFGS iterations for ``refine="optax"``, as for
        :class:`jaxtree.TreeRegressor`: ``"auto"`` (default) 20, and 10 where the data sets
        have 32,768 rows or more; an integer wins.
      precision: matmul precision: ``"highest"``, ``"high"`` or ``"default"``.
      feature_names: optional ``p`` names of the covariates (default ``x1..xp``).
      search: ``"greedy"`` (default: the paper's search), ``"backfit"`` (pair lookahead and
        replacement moves, :func:`jaxtree.search.search_config`) or ``"beam"``
        (``beam_width`` greedy trees per data set, the best kept), as
        :class:`jaxtree.TreeRegressor`'s ``search``; every member grows to ``k`` operations
        unless ``validation_fraction`` is set. ``"auto"`` is not accepted: the estimator's rule picks a search
        by each fit's size and path, and a batch runs one search for all members.
      beam_width: trees per data set for ``search="beam"``.
      validation_fraction: None grows every tree to ``k``. A fraction in ``(0, 1)``: as for
        :class:`jaxtree.TreeRegressor`, each member's size is chosen on held-out rows (the
        same rows of every data set, ``random_state``'s split: the data sets have the same
        ``n``) by the paired standard-error rule, then refitted on all rows, all members in one
        batched run in which each member's tree stops at its own size (the step's traced
        ``max_ops``); each member has ``k_`` and ``path_`` and equals the estimator's fit.
        The beam is judged by the member it would return at each size and refitted by one
        beam run until every data set has reached its size, each kept at its own.
      y_bound: every data set's ``y`` is mapped into ``[-y_bound, y_bound]``, as
        :class:`jaxtree.TreeRegressor`'s ``y_bound`` (the same default, so a member is the
        estimator's fit with the same keywords; ``y_bound=1`` is the paper's scaling).
      tol: None (default: no early stop, every member grows to ``k``, and the member
        estimators say ``tol=None``) or a number: as :class:`jaxtree.TreeRegressor`'s
        ``tol`` (whose default is ``1e-6``), each member's search stops once no candidate
        lowers its training loss by this relative amount (the move undone) or at the float
        floor, in the selection run and the refit too; the member then has the estimator's
        ``k_``, ``status_`` (``Status.CONVERGED``), ``history_``, ``choices_`` and model.
        The batch's ``history`` is NaN after a member's end. Members stopped early still
        cost a step each until the last member stops (they run in one vmapped call).
      min_support: 0 (default: every candidate scored, as the paper's search, and the member
        estimators say ``min_support=0``) or :class:`jaxtree.TreeRegressor`'s
        ``min_support`` (whose default is ``0.02``), counted on each member's own rows.
      random_state: seed of the held-out split and of the shape search's row subset (None
        as 0).
      shapes: an integer ``S >= 0``: ``S`` shape terms before each member's tree, as
        :class:`jaxtree.TreeRegressor`'s ``shapes=S`` (0, the default: none). The shape
        stage runs batched (module docstring); with ``validation_fraction`` each member's
        number of shapes is chosen on the held-out rows (``shape_path_``), then its tree's
        size on its shapes' residual. Member ``b`` equals ``TreeRegressor(search=s,
        validation_fraction=f, shapes=S, ...).fit(X[b], y[b])``: the same terms, model,
        ``formula()``, ``shape_terms()`` and file. ``shapes="auto"`` is refused (its
        held-out count with a patience stop per member is not batched).
      shape_knots: ``(n1, n2)`` hats per one-covariate shape and per axis of a pair shape.
      prune_tol: None (default) keeps each searched tree. A number ``>= 0``: as
        :class:`jaxtree.TreeRegressor`'s ``prune_tol``, the deletion move after the search
        (leaves whose removal costs at most ``prune_tol`` of training ``R²`` removed one at
        a time, the weights refitted; :func:`jaxtree.simplify.prune`), with ``shapes`` on
        the shapes' residual and with ``validation_fraction`` after the refit at the chosen
        size. It runs per member after the batched search: a host loop over the members,
        each the estimator's own pruning (a few small compiled steps, shared by all
        members) on its own scaled data. Member ``b`` then has the ``pruned_``, ``k_``,
        model and ``formula()`` of ``TreeRegressor(..., prune_tol=t).fit(X[b], y[b])``;
        ``history_``/``choices_`` stay the search's, as the estimator keeps them.

    Returns:
      A :class:`BatchResult`: indexable and iterable as the list of ``B`` fitted
      :class:`jaxtree.TreeRegressor` (``result[b]``), with the batched
      :class:`jaxtree.TreeModel` in ``result.models`` (with ``shapes``: every member's
      terms under one spec, the union of the members' chosen pairs, so that
      ``jax.vmap(jaxtree.predict)`` still predicts all at once; ``history`` then has the
      ``S`` shape iterations before the tree's, NaN after a member's end).

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
    if search not in search_.SEARCHES:
        raise ValueError(f"search must be one of {search_.SEARCHES} in fit_batch; got {search!r}.")
    settings = dict(k=k, basis=basis, refine=refine, chunk_size=chunk_size,
                    coordinate_sweeps=coordinate_sweeps, refine_steps=refine_steps,
                    precision=precision, search=search, beam_width=beam_width,
                    shape_knots=shape_knots, y_bound=y_bound, min_support=min_support)
    params = spec_.check_params({**settings, "validation_fraction": validation_fraction,
                           "shapes": shapes, "prune_tol": prune_tol, "tol": tol})
    _check_batch_shapes(shapes)
    shapes = int(shapes)
    if params.basis.per_feature:  # each problem has its own ranges; one static basis cannot
        raise ValueError("fit_batch does not support basis families on the covariates' original "
                         "units (PowerLaws, e.g. the 'physics' preset): their constants depend on "
                         "each problem's ranges. Fit each problem with TreeRegressor instead.")
    xa, ya, sw = _check_batch(X, y, sample_weight)
    B, n, p = xa.shape
    names = _feature_names(feature_names, p)
    dtype = V.float_dtype_for(xa, bool(jax.config.jax_enable_x64))
    params, plan = spec_.planned(params, n, p, dtype, chunk_size, batch=B)
    raw, two = scaling_.from_rows(xa, ya, sw, round_x=scaling_.rounds(params.basis))
    sc = scaling_.bounded(raw, float(y_bound))
    xs, ys = scaling_.scale_rows(sc, xa, ya, sw)
    data = _chunk_batch(xs, ys, sw, params.chunk, dtype, support=(params.basis, min_support))
    cfg = search_.search_config(search, params.k, p * params.basis.q, refine=refine,
                                coordinate_sweeps=params.sweeps, refine_steps=params.steps,
                                precision=scoring.PRECISIONS[precision])
    # No row buckets here: under vmap, lax.switch on a batched index becomes a select that
    # runs every branch, which would cost more than scoring all rows.
    # the estimators' rules: nearby k share the compiled step (docstring); the indicator
    # columns (those 0/1 in every member) summed from two columns each
    cfg = search_.table_config(cfg, xs, params.basis, params.k)
    data = scoring.with_indicators(data, scoring.indicator_columns(xs, sw, params.basis))
    bucketed = scoring.compiling_dominates(n, p, params.basis.q)

    # The settings each member ran: a clone refits the same search.
    # tol=None (the default): every tree grows to k (no early stop), as TreeRegressor(tol=None)
    hyper = dict(settings, tol=tol, validation_fraction=validation_fraction,
                 random_state=random_state,
                 shapes=shapes, prune_tol=prune_tol)
    # cache_basis=False: the members' search chunks its own rows and evaluates the basis
    # (the regressor's "auto" would keep basis values the batch never reads)
    fit_spec = spec_.resolve(dict(hyper, cache_basis=False), params, n, p, dtype, plan,
                             in_memory=True)
    rep = progress.Reporter(0, 0, None, names)  # silent: the stages' progress
    one = prog.empty_program(cfg.max_k, dtype)
    lead = (B,) if search != "beam" else (B, int(beam_width))
    programs = prog.broadcast_on_host(one, lead)
    # In a rounded-up capacity every member is bound by k operations (the step's traced
    # max_ops: a pair move could otherwise grow a tree past k). The beam's step has no
    # bound and needs none: its k + 1 greedy insertions never pass k operations.
    k_bound = None
    if bucketed and search != "beam":
        k_bound = jax.device_put(np.full(B, params.k, np.int32))
    members = _Members(xs, ys, sw, data, fit_spec, cfg, programs, sc, k_bound)
    shape_paths = terms = spec = None
    if shapes:  # the estimators' stages: shape terms, the tree on their residual, the round
        res, (terms, spec), paths, shape_paths = stages.shapes_first(members, fit_spec, rep)
    else:  # the tree stage, the estimators' (its size on held-out rows, then the refit)
        res, paths, _ = stages.tree(members, fit_spec, rep)
    status = np.asarray(res.status, np.int64)
    histories = [res.history[b][: len(res.choices[b])] for b in range(B)]  # may end early (run)
    choices = [list(c) for c in res.choices]
    program = res.program
    failed = status & int(search_.Status.NO_CANDIDATE)  # CONVERGED (tol) is no failure
    if failed.any():
        bad = np.flatnonzero(failed).tolist()
        why = search_.message(np.bitwise_or.reduce(failed))
        warnings.warn(f"For data set(s) {bad}: {why}.", RuntimeWarning, stacklevel=2)

    estimators = [TreeRegressor(**hyper) for _ in range(B)]
    pruned = [None] * B
    if prune_tol is not None:  # the estimator's deletion move, per member (after the round)
        program, pruned = _prune_members(
            fit_spec, program, xs, ys, sw,
            None if not shapes else [_own_shapes(_member(terms, b), spec) for b in range(B)])
    models = model_.TreeModel.from_scaling(program, sc, dtype, params.basis, names)
    # as set_fitted makes each member: the formula's tolerance and predictions near the
    # targets' range, so that jax.vmap(jaxtree.predict)(models, X) is the members' predict
    models = dataclasses.replace(models, y_bound=fit_spec.y_bound, clip_y=True)
    if shapes:
        models = dataclasses.replace(models, shapes=terms, shape_spec=spec)
    host = jax.device_get(models)  # members sliced on the host: nothing compiled
    for b, est in enumerate(estimators):
        member = prog.member_on_host(host, b)
        if shapes:  # the member's own terms: its chosen pairs only (the estimator's compact)
            member = dataclasses.replace(member, **_own_shapes(member.shapes, spec))
        path = None if paths is None else paths[b]
        # feature_names name the covariates in formulas only: the members were fitted on
        # arrays, so they have no feature_names_in_ (a predict on an array must not warn)
        enc = _unnamed_table(names if feature_names is not None else None,
                             np.asarray(member.x_min, np.float64).reshape(-1, p)[0])
        set_fitted(est, pipeline.FitResult(
            model=member, history=histories[b], choices=choices[b], status=int(status[b]),
            names=None, encoding=enc, spec=fit_spec,
            path=path, shape_path=None if shape_paths is None else shape_paths[b],
            pruned=pruned[b], two_valued=scaling_.positions(two[b])), warn=False)
    boxed = [b for b, est in enumerate(estimators) if est.weights_at_bound_]
    if boxed:  # issue 28: the box never binds silently
        warnings.warn(f"For data set(s) {boxed}: " + box_message(
            max(estimators[b].weights_at_bound_ for b in boxed), float(y_bound)),
            WeightBoxWarning, stacklevel=2)
    history = res.history if not shapes else _padded_rows(histories)
    return BatchResult(estimators, models, history, status, plan)


def _prune_members(fit_spec: spec_.FitSpec, program: prog.Program, xs, ys, sw,
                   own_shapes=None):
    """``(programs, removed)``: every member's tree pruned by the estimator's own pruning
    (:meth:`jaxtree._fit.source.InMemory.prune`) on its own scaled rows, a host loop over the members (the removals are data-dependent; the compiled scoring and
    refit steps are shared, the programs keeping the batch's capacity). ``own_shapes``:
    with ``shapes=S``, each member's final terms (:func:`_own_shapes`): its tree is pruned
    against their residual, as the estimator's ``fit`` does. ``removed[b]`` is member
    ``b``'s ``pruned_``."""
    out, removed = [], []
    for b in range(xs.shape[0]):
        rows = source.InMemory(xs[b], ys[b], None if sw is None else sw[b], fit_spec, None)
        terms = None if own_shapes is None else (own_shapes[b]["shapes"],
                                                 own_shapes[b]["shape_spec"])
        found, gone = rows.prune(_member(program, b), terms)
        out.append(found)
        removed.append(gone)
    return _stack_members(out), removed


def _own_shapes(shapes: shapes_.Shapes, spec: shapes_.ShapeSpec) -> dict:
    """A member's terms as its own fit holds them: the batch's candidates (the union of the
    members' chosen pairs) cut to the member's chosen pairs (:func:`jaxtree.shapes.compact`);
    the ``shapes``/``shape_spec`` fields of its model (``compact`` returns a spec without
    pairs as it is)."""
    shapes, spec, _ = shapes_.compact(shapes, spec)
    return dict(shapes=shapes, shape_spec=spec)


def _padded_rows(rows: list) -> np.ndarray:
    """Per-member histories of possibly different lengths as one ``(B, longest)`` array,
    NaN after a member's end."""
    out = np.full((len(rows), max(len(r) for r in rows)), np.nan)
    for b, r in enumerate(rows):
        out[b, : len(r)] = r
    return out


def _check_batch_shapes(shapes) -> None:
    """The ``shapes`` fit_batch supports: an integer ``S >= 0`` (not ``"auto"``)."""
    if isinstance(shapes, str):
        raise ValueError(
            f"fit_batch takes an integer number of shape terms (shapes=S, or 0 for none); got "
            f"shapes={shapes!r}. shapes='auto' (a held-out count per member, stopped by its own "
            "patience rule) is not batched: pass shapes=S, or fit each data set with "
            "TreeRegressor(shapes='auto').")


def _classifier_step_batch(programs: prog.Program, data: scoring.Data, ys, basis,
                           config: search.Config):
    """The one-versus-rest step of :class:`jaxtree.TreeClassifier` over ``B`` data sets.

    ``programs``: ``M = B * K`` stacked trees, data set ``b``'s ``K`` trees (one for two
    classes) at ``b*K .. b*K + K - 1``; ``data``: ``(B, n_chunks, m, ...)``; ``ys``:
    ``(B, K, n_chunks, m)`` labels +-1. Each data set runs the classifier's own vmapped
    one-versus-rest step (:func:`jaxtree._fit.classify.ovr_step`, the covariates shared by its
    ``K`` trees), vmapped over the data sets; programs and records stay flat ``(M, ...)`` so
    the driver sees a plain batch.
    """
    B, K = ys.shape[:2]
    split = lambda a: a.reshape((B, K) + a.shape[1:])  # noqa: E731
    flat = lambda a: a.reshape((B * K,) + a.shape[2:])  # noqa: E731
    step = functools.partial(classify.ovr_step, one_by_one=False)  # batched, as before
    out = jax.vmap(step, in_axes=(0, 0, 0, None, None))(
        jax.tree_util.tree_map(split, programs), data, ys, basis, config)
    return jax.tree_util.tree_map(flat, out)


_classifier_step_batch_jit = jax.jit(_classifier_step_batch, static_argnames=("basis", "config"))
classifier_step_batch_cached = _executables.cached(_classifier_step_batch_jit,
                                                   static_argnums=(3, 4), light=False)
"""The classifier's batched step through jaxtree's executable cache (as
:data:`step_batch_cached`)."""


def _check_batch_labels(y, B: int, n: int):
    """``(classes, index)`` of every data set's labels ``y (B, n)``
    (:func:`jaxtree._inputs.validation.check_labels` on each); all data sets must have the same
    number of classes."""
    arr = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y)
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[..., 0]
    if arr.shape != (B, n):
        raise ValueError(f"y must hold one class label per row of every data set, shape "
                         f"({B}, {n}) for X of shape ({B}, {n}, p); got {arr.shape}.")
    out = []
    for b in range(B):
        try:
            out.append(V.check_labels(arr[b], n))
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"y[{b}] (data set {b}): {exc}") from None
    counts = [len(c) for c, _ in out]
    if len(set(counts)) > 1:
        raise ValueError(f"Every data set must have the same number of classes (the batch "
                         f"stacks one tree per class); got {counts} classes in the data sets. "
                         "Fit the data sets with a different count separately, or call "
                         "fit_batch_classifier once per class count.")
    return out


def fit_batch_classifier(X, y, *, k: int = 10, loss: str = "logistic", basis=None,
                         refine: Optional[str] = "optax", sample_weight=None,
                         chunk_size="auto", coordinate_sweeps: int = 3,
                         refine_steps="auto", precision: str = "highest",
                         feature_names: Optional[Sequence[str]] = None,
                         min_support=0) -> BatchResult:
    """Fits ``B`` classification data sets of the same shape with one batched compiled step
    per iteration: the classification counterpart of :func:`fit_batch`.

    Member ``b`` is the :class:`jaxtree.TreeClassifier` with these settings (and
    ``tol=None``: every tree grown to ``k``) fitted to ``(X[b], y[b])``: the same scaling,
    starting intercept, Newton-step scoring and refinement (:mod:`jaxtree.losses`), so the
    same choices. Each data set has its own labels and its own ``classes_``; all must have
    the same *number* of classes ``K`` (the labels themselves may differ). ``K = 2``: one
    tree per data set (``classes_[1]`` positive). ``K > 2``: one-versus-rest, the ``K``
    trees of every data set flattened into the batch axis (``B * K`` searches in one call,
    each data set's covariates shared by its trees).

    Args:
      X: float ``(B, n, p)``: ``B`` data sets of ``n`` rows and ``p`` covariates.
      y: ``(B, n)`` class labels of any sortable type, at least two classes per data set.
      k: number of operations of every tree. Small batches (``n*p*q`` below
        :data:`jaxtree.scoring.BUCKET_MIN_WORK`) search in the rounded-up capacity
        :func:`jaxtree.program.capacity_for` ``(k)``, the trees cut back to ``2k+1`` slots,
        so that nearby ``k`` share one compiled step (the results are the exact-capacity
        search's).
      loss: ``"logistic"`` or ``"margin"``, as for :class:`jaxtree.TreeClassifier`.
      basis, refine, chunk_size, coordinate_sweeps, refine_steps, precision: as for
        :class:`jaxtree.TreeClassifier` (bases on the covariates' original units are
        refused, as by :func:`fit_batch`).
      sample_weight: optional non-negative ``(B, n)``, or ``(n,)`` shared by all.
      feature_names: optional ``p`` names of the covariates (default ``x1..xp``).
      min_support: as for :func:`fit_batch` (default 0; the estimator's is ``0.02``).

    Returns:
      A :class:`BatchResult` of ``B`` fitted :class:`jaxtree.TreeClassifier`: ``models`` is
      the batched decision-function :class:`jaxtree.TreeModel` (leading axes ``(B,)``, or
      ``(B, K)`` for ``K > 2``; ``jax.vmap(jaxtree.classifier.decision_function)(models, X)``),
      ``history`` the training loss ``(B, k+1)`` (``(B, K, k+1)`` for ``K > 2``), ``status``
      ``(B,)`` (every class's flags of a data set combined).

    Raises:
      ValueError / TypeError: for bad shapes, labels (naming the data set), a differing
        number of classes, or bad hyperparameters.

    Examples:
      >>> import numpy as np, jaxtree
      >>> X = np.random.default_rng(0).uniform(size=(3, 200, 2))
      >>> res = jaxtree.fit_batch_classifier(X, X[..., 0] > X[..., 1], k=2, refine=None)
      >>> [c.classes_.tolist() for c in res], res.history.shape
      ([[False, True], [False, True], [False, True]], (3, 3))
    """
    _compilation_cache.enable()
    # The batch runs the greedy search to k without a held-out split: its members say so
    # (a clone refits the same search), not the estimator's "auto" defaults.
    settings = dict(k=k, loss=loss, basis=basis, refine=refine, chunk_size=chunk_size,
                    coordinate_sweeps=coordinate_sweeps, refine_steps=refine_steps,
                    precision=precision, search="greedy", validation_fraction=None, shapes=0,
                    min_support=min_support, tol=None)  # every tree grown to k: no stop
    # (the default's tol and, from 2,000 rows, its BIC stop, jaxtree._fit.classify.bic_gain)
    est0 = classifier_.TreeClassifier(**settings)
    params = spec_.check_classifier_params(est0.get_params())
    if params.basis.per_feature:  # each problem has its own ranges; one static basis cannot
        raise ValueError("fit_batch_classifier does not support basis families on the "
                         "covariates' original units (PowerLaws, e.g. the 'physics' preset): "
                         "their constants depend on each problem's ranges. Fit each problem "
                         "with TreeClassifier instead.")
    xa = _check_batch_x(X, "TreeClassifier")
    V.check_finite(xa, "X", axes=("data set", "row", "column"))
    B, n, p = xa.shape
    sw = _check_batch_weight(sample_weight, B, n)
    labels = _check_batch_labels(y, B, n)
    names = _feature_names(feature_names, p)
    dtype = V.float_dtype_for(xa, bool(jax.config.jax_enable_x64))
    zeros = np.zeros((B, n))
    for b in range(B):
        V.check_representable(xa[b], zeros[b], dtype, feature_names=names)
    # y_center 0, y_scale 1: the decision function is not scaled
    sc, two = scaling_.from_rows(xa, zeros, sw, round_x=scaling_.rounds(params.basis))
    xs, _ = scaling_.scale_rows(sc, xa, zeros, sw)
    w = np.ones((B, n)) if sw is None else np.asarray(sw, np.float64)
    K = len(labels[0][0])
    ypm = np.stack([classify.one_vs_rest(idx, K) for _, idx in labels])  # (B, K', n)
    Kt = ypm.shape[1]  # trees per data set: 1 for two classes, else K
    params, plan = spec_.planned(params, n, p, dtype, chunk_size, batch=B * Kt)
    data = _chunk_batch(xs, zeros, w, params.chunk, dtype, support=(params.basis, min_support))
    if scoring.compiling_dominates(n, p, params.basis.q):  # as TreeClassifier's search
        data = data._replace(phi=_designs_batch_cached(data.x, params.basis))
    data = scoring.with_indicators(data, scoring.indicator_columns(xs, sw, params.basis))
    ys = classify.chunk_labels(ypm, data.y.shape[1:], dtype)
    # The classifier's own Config, without row buckets (as fit_batch: under vmap,
    # lax.switch on a batched index becomes a select that runs every branch).
    cfg = classify.config(est0.get_params(), params, n, p, params.basis.q, K)._replace(buckets=())
    # TreeClassifier's capacity bucket (each greedy iteration inserts one operation, so
    # k + 1 iterations stop at k operations; the trees are cut back below)
    cfg = search_.table_config(cfg, xs, params.basis, params.k)

    # what the batch ran (greedy, grown to k, no held-out rows) with its row plan
    spec = classify.classifier_spec(est0.get_params(), params, n, p, dtype, plan, in_memory=True)
    a0 = classify.start_intercepts(loss, ypm.reshape(B * Kt, n), np.repeat(w, Kt, 0))
    empty = prog.empty_program(cfg.max_k, dtype)
    start = prog.broadcast_on_host(empty, (B * Kt,))
    start = start._replace(intercept=prog.as_device(a0, dtype))
    res = search.run(lambda prg: classifier_step_batch_cached(prg, data, ys, params.basis, cfg),
                     start, params.k + 1)
    res = res._replace(program=prog.trim(res.program, params.k))

    flags = np.asarray(res.status, np.int64).reshape(B, Kt)
    status = np.bitwise_or.reduce(flags, axis=1)
    if (status & search.Status.NO_CANDIDATE).any():
        bad = np.flatnonzero(status & search.Status.NO_CANDIDATE).tolist()
        why = search.message(search.Status.NO_CANDIDATE)
        warnings.warn(f"For data set(s) {bad}: {why}.", RuntimeWarning, stacklevel=2)
    history = np.asarray(res.history, np.float64).reshape((B, Kt, -1) if K > 2 else (B, -1))
    estimators, members = [], []
    trees = jax.device_get(res.program)  # members sliced on the host: nothing compiled
    for b in range(B):
        rows = slice(b * Kt, (b + 1) * Kt)
        program = prog.member_on_host(trees, rows if K > 2 else b)
        sc_b = scaling_.Scaling(*(np.asarray(a)[b] for a in sc))
        model = model_.TreeModel.from_scaling(program, sc_b, dtype, params.basis, names)
        if K > 2:
            model = classify.batched(model, K)
        choices = res.choices[rows] if K > 2 else res.choices[b]
        classes = labels[b][0]
        est = classifier_.TreeClassifier(**settings)
        # a NaN at predict time takes the low end of the range, as the estimator's
        enc = _unnamed_table(names if feature_names is not None else None,
                             np.asarray(model.x_min, np.float64).reshape(-1, p)[0])
        classifier_.set_fitted(est, pipeline.FitResult(
            model=model, history=history[b], choices=choices, status=int(status[b]),
            names=None, encoding=enc,  # names in formulas only, as fit_batch's
            spec=spec, classes=classes, two_valued=scaling_.positions(two[b])),
            warn=False)  # warned above, per data set
        estimators.append(est)
        members.append(model)
    models = prog.stack_on_host(members)
    return BatchResult(estimators, models, history, status, plan)
