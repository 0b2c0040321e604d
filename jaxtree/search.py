"""The greedy structure search as ``init``/``step`` over a fixed-capacity program.

Why one long file: the one driver (:func:`run`) and the step of every search (greedy,
backfit, beam, shape terms) live together so that the loop, its stops and its records
exist once.

Paper, Section 5 and Algorithm 1: start from the single best leaf ``w0 + w phi_i(x_j)``;
then ``k`` times score every insertion ``V -> V + w'phi`` / ``V -> V * w'phi`` at every
leaf with every ``(i, j)``, apply the best, and adjust all weights.

Decisions where the paper is ambiguous:

* Algorithm 1 loops ``iters = 1 to k-1``, but the paper's ``k`` is the number of
  operations (a tree of ``2k+1`` nodes). We perform ``k`` insertions, so ``k=10`` gives
  21 nodes and 11 leaves.
* Algorithm 1 adjusts weights inside its loop over leaves, yet compares leaves by the
  score ``r_node`` computed *before* that adjustment. We therefore score all
  candidates on the current tree, apply the best one, and adjust weights once, which
  selects the same insertion at a fraction of the cost.
* No adjustment follows the first leaf: with one weight and an intercept the
  closed-form fit is already optimal.

:func:`step` is one compiled function for every iteration (the program has static
capacity ``2*max_k+1``), so a whole fit compiles it once.

One driver (:func:`run`, in the spirit of optimistix's ``_iterate``) runs every engine and
path: in memory it runs the jitted :func:`step`; :func:`jaxtree.fit_batch` the vmapped step;
streaming (:mod:`jaxtree.stream`) a host-driven step with the same signature whose passes
read blocks from the host; sharding is the in-memory step on sharded data; the reference
engine a numpy step (:func:`jaxtree.reference.step`). The driver owns the loop, the one host
transfer per iteration, the history (in the caller's units), the choice records
(:data:`CHOICE_KEYS`, the same on every engine), the :class:`Status` flags and early stopping,
so a new move or loss is written once, in the step.
"""

from __future__ import annotations

import enum
import functools
from typing import Any, Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from jaxtree import _executables
from jaxtree import losses as losses_
from jaxtree import moves
from jaxtree import program as prog
from jaxtree import refine as refine_
from jaxtree import scoring
from jaxtree import shapes as shapes_

__all__ = [
    "MOVE_INSERT",
    "MOVE_PAIR",
    "MOVE_SHAPE",
    "Choice",
    "CHOICE_KEYS",
    "Config",
    "fit",
    "host_choice",
    "loss_pair_kept",
    "message",
    "PAIR_MAX_LEAVES",
    "PAIR_ROWS",
    "PAIR_BLOCKS",
    "PAIR_WORK",
    "pair_record",
    "pair_screen_blocks",
    "pair_screen_rows",
    "pair_taken",
    "REFINE_MODES",
    "REPLACE_MOVES",
    "replacement_kept",
    "run",
    "beam_children",
    "beam_finish",
    "beam_fit",
    "beam_step",
    "BEAM_WIDTH",
    "check_beam",
    "search_config",
    "table_config",
    "shape_step",
    "SEARCHES",
    "SearchResult",
    "Status",
    "STATUS_CONVERGED",
    "STATUS_FULL",
    "STATUS_NO_CANDIDATE",
    "STATUS_OK",
    "STATUS_STOPPED",
    "step",
    "step_jit",
    "step_function",
    "splits",
    "refine_step",
    "refines",
    "insert_step",
    "finish_step",
    "Inserted",
    "StepInfo",
    "Stop",
    "stop_rule",
    "with_validation",
    "screen_rows",
    "pair_lookahead",
    "refine_and_replace",
    "loss_finish_step",
    "loss_insert_step",
    "loss_step",
]


REFINE_MODES = ("optax", "coordinate", None)


class Status(enum.IntFlag):
    """Outcome of a search, a set of flags (like optimistix's ``RESULTS``).

    A step reports the flags of its own iteration; :func:`run` ORs them over the search.
    :func:`message` turns a status into words for warnings and the CLI.
    """

    OK = 0
    NO_CANDIDATE = 1
    FULL = 2
    STOPPED = 4
    CONVERGED = 8


_MESSAGES = {
    Status.NO_CANDIDATE: "the search found no finite candidate at some iteration and kept the tree "
                         "it had; the data may be degenerate",
    Status.FULL: "the program had no room for another operation (capacity max_k reached); the "
                 "tree was kept",
    Status.STOPPED: "the callback asked the search to stop before k operations",
    Status.CONVERGED: "the search stopped before k operations: no candidate lowered the "
                      "training loss by the relative tolerance tol, or the loss reached the "
                      "float precision's floor (the fit is exact)",
}


def message(status) -> str:
    """Words for a :class:`Status` (``"ok"`` for ``Status.OK``); flags joined by ``"; "``.

    Args:
      status: a :class:`Status` or its int value.
    """
    status = Status(int(status))
    parts = [text for flag, text in _MESSAGES.items() if flag in status]
    return "; ".join(parts) if parts else "ok"


# Module-level aliases of the flags (integers in the traced step).
STATUS_OK = int(Status.OK)
STATUS_NO_CANDIDATE = int(Status.NO_CANDIDATE)
STATUS_FULL = int(Status.FULL)
STATUS_STOPPED = int(Status.STOPPED)
STATUS_CONVERGED = int(Status.CONVERGED)


class Stop(NamedTuple):
    """The driver's stop on negligible progress (:func:`run`; the estimators' ``tol``).

    Attributes:
      rtol: an iteration after the first whose loss is not below ``(1 - rtol)`` times the
        previous loss ends the search, and its move is undone (not recorded): no candidate
        lowered the loss by that relative amount. 0: off.
      atol: once the loss is at most ``atol`` (the step's units) the search ends after that
        iteration: the fit is exact to the float precision. 0: off.
      gain: an iteration after the first whose loss is not below the previous loss minus
        ``gain`` (the step's units) ends the search as ``rtol``'s does: the least absolute
        decrease an insertion must make (the classifier's BIC stop,
        :func:`jaxtree._fit.classify.bic_gain`). 0: off.
    """

    rtol: float = 0.0
    atol: float = 0.0
    gain: float = 0.0

    def judge(self, raw, judged, last, it: int, n_iter: int):
        """The stop's decision after iteration ``it`` of ``n_iter``, one tree or a batch
        member by member (the one rule of :func:`run` and of the classifier's one-versus-rest
        loop): ``raw`` the iteration's losses (the step's units), ``judged`` where they count
        (the tree's search has not ended and its step reports ``Status.OK``), ``last`` the
        previous judged loss (NaN: none). Float64 comparisons on the host.

        Returns ``(undo, floor, last)``: ``undo`` where the loss is not below both
        ``(1 - rtol) * last`` and ``last - gain`` (the move is undone and the search ends, not
        recorded);
        ``floor`` where the kept loss is at most ``atol`` with iterations left (the move is
        kept and the search ends after it); ``last`` the losses the next iteration is judged
        against (NaN where none)."""
        raw = np.asarray(raw, np.float64)
        judged = np.asarray(judged, bool)
        undo = judged & np.isfinite(last) & ~(raw < np.minimum(last * (1.0 - self.rtol),
                                                             last - self.gain))
        kept = judged & ~undo
        floor = kept & (raw <= self.atol) & (it + 1 < n_iter)
        return undo, floor, np.where(kept, raw, np.nan)


FLOOR_EPS = 16
""":func:`stop_rule`'s floor, in units of the float precision: a loss of at most
``FLOOR_EPS * eps * y_bound**2`` is an exact fit. The target's variance is at most
``y_bound**2`` and the closed-form scores (differences of sums of squares of that size) round
at a few ``eps`` times it, so below the floor a smaller loss is rounding, not progress: the
training R² is 1 to within about 50 ``eps`` (float64: ``3.6e-15 * y_bound**2``; float32:
``1.9e-6 * y_bound**2``, an RMSE near 0.1% of the target's range, below what a formula
rounded to ``tol=1e-3`` shows)."""


def stop_rule(tol, dtype, y_bound: float = 1.0, gain: float = 0.0) -> Optional[Stop]:
    """The :class:`Stop` of an estimator's ``tol`` (None or 0: no stop, the tree grows to
    ``k``) in ``dtype``, on a target scaled into ``[-y_bound, y_bound]``: ``rtol = tol``, the
    floor ``atol = FLOOR_EPS * eps(dtype) * y_bound**2`` and ``gain`` (:attr:`Stop.gain`,
    the classifier's BIC stop; only with a ``tol``)."""
    if tol is None or not tol > 0:
        return None
    eps = float(np.finfo(np.dtype(dtype)).eps)
    return Stop(float(tol), FLOOR_EPS * eps * float(y_bound) ** 2, float(gain))


class Config(NamedTuple):
    """Static (hashable) settings of a search; changing one recompiles.

    Attributes:
      max_k: capacity in operations.
      refine: ``"optax"``, ``"coordinate"`` or ``None``.
      coordinate_sweeps: coordinate-descent passes over the leaves.
      refine_steps: L-BFGS iterations of the joint refinement.
      precision: matmul precision of the scorer.
      buckets: leaf-count buckets of the scorer (see :func:`jaxtree.scoring.score`);
        ``()`` scores on all ``2*(max_k+1)`` rows every iteration (fastest compile).
      loss: one of :data:`jaxtree.losses.LOSSES`. ``"squared"`` (regression, default);
        ``"logistic"`` or ``"margin"`` (classification, ``y = +-1``): :func:`step` scores
        the candidates by one Newton step on the working data
        (:func:`jaxtree.losses.working_data`) and refines on the true loss (the margin
        loss's surrogate); the reported loss is :func:`jaxtree.losses.reported`. Pair and
        replacement moves are scored on the working data too and kept by the true loss
        (:func:`_loss_backfit`).
      screen_rows: 0 (every candidate scored on every row), or the most rows the insertion
        step scores every candidate on before it scores the best
        :data:`jaxtree.scoring.SCREEN_CANDIDATES` of them on all rows
        (:func:`jaxtree.scoring.screened_score`; a classification loss's step scores its
        Newton working data with it). The estimators set it from the table's size
        (:func:`jaxtree.scoring.screen_for`; in memory, and a regression streamed block by
        block, whose step, :class:`jaxtree.stream._Step`, reads the sample once).
    """

    max_k: int
    refine: Optional[str] = "optax"
    coordinate_sweeps: int = 3
    refine_steps: int = 20
    precision: jax.lax.Precision = jax.lax.Precision.HIGHEST
    buckets: tuple = ()
    pair_leaves: int = 0
    pair_max_leaves: int = 0
    pair_rows: int = 0
    pair_blocks: int = 0
    replace_moves: int = 0
    loss: str = "squared"
    screen_rows: int = 0


SEARCHES = ("greedy", "backfit", "beam")
"""Search strategies (the estimator's ``search=``): ``"greedy"`` is the paper's algorithm
exactly; ``"backfit"`` adds pair lookahead and replacement moves (:func:`search_config`);
``"beam"`` advances several greedy trees together (:func:`beam_fit`)."""


def table_config(config: Config, x, basis, k: int) -> Config:
    """``config`` for a search of at most ``k`` operations on the host rows ``x (n, p)`` (a
    batch's ``(B, n, p)``), the one rule of every in-memory path (the estimators and the
    batch functions): where compiling costs more than searching
    (:func:`jaxtree.scoring.compiling_dominates`) a rounded-up capacity,
    :func:`jaxtree.program.capacity_for` ``(k)``, so that nearby ``k`` (and the refit after
    a held-out size) share the compiled step; the step's ``max_ops`` still stops every tree
    at ``k`` operations (a pair move inserts two) and the trees are cut back to ``2k+1``
    slots. Elsewhere ``config`` unchanged. (The indicator columns are the data's:
    :func:`jaxtree.scoring.indicator_columns`.)

    Args:
      config: the search's :class:`Config`.
      x: the scaled covariates on the host, ``(n, p)`` or ``(B, n, p)``.
      basis: the :class:`jaxtree.basis.Basis`.
      k: the most operations a tree may take.
    """
    n, p = x.shape[-2:]
    if scoring.compiling_dominates(n, p, basis.q):
        return config._replace(max_k=prog.capacity_for(k))
    return config


def search_config(search: str, max_k: int, n_candidates: int = 0, **kw) -> Config:
    """The :class:`Config` of a named search strategy.

    ``"backfit"`` (measured in BENCHMARKS.md):

    * **pair lookahead** while the tree has 1 to ``PAIR_MAX_LEAVES`` leaves: the best
      product ``w' phi_a(x_i) phi_b(x_l)`` inserted under ``+`` or ``*`` at the first leaf
      rank (:func:`jaxtree.moves.score_pairs`) competes with the best single insertion. Pairs
      are screened on at most ``pair_rows`` evenly spaced rows (:func:`screen_rows`):
      ``PAIR_ROWS``, fewer where ``n_candidates = p*q`` is large, so that the screen's
      ``rows * (p*q)^2`` stays within ``PAIR_WORK`` (:func:`pair_screen_rows`); the winner's
      weight is then fitted exactly on all rows, and the pair is taken when its gain per operation
      beats the single insertion's (it uses two operations). Above ``p*q = 2048`` the screen
      scores exactly only the ``PAIR_BLOCKS`` covariate pairs that a coarse pre-screen ranks
      first (:func:`pair_screen_blocks`). This finds products such as
      ``sin(3 pi x1) cos(2 pi x2)`` whose factors carry no marginal signal, which a
      one-leaf-at-a-time search only stumbles upon through noise.
    * **replacement** (backfitting) after every insertion: up to ``REPLACE_MOVES`` times,
      re-choose the leaf ``(i, j)`` whose replacement lowers the loss most given the rest of
      the tree (:func:`jaxtree.moves.score_replace`), refine, and keep it only if the loss
      fell. Early choices made on little evidence get revised.

    Args:
      search: ``"greedy"``, ``"beam"`` or ``"backfit"``.
      max_k: capacity in operations.
      n_candidates: number of candidates ``p*q`` (sets ``pair_rows``).
      kw: further :class:`Config` fields.
    """
    if search in ("greedy", "beam"):  # the beam advances greedy steps (beam_fit)
        return Config(max_k=max_k, **kw)
    return Config(max_k=max_k, pair_leaves=1, pair_max_leaves=PAIR_MAX_LEAVES,
                  pair_rows=pair_screen_rows(n_candidates),
                  pair_blocks=pair_screen_blocks(n_candidates), replace_moves=REPLACE_MOVES, **kw)


PAIR_MAX_LEAVES = 4
PAIR_ROWS = 4096
PAIR_WORK = 1 << 30
PAIR_MIN_ROWS = 256
REPLACE_MOVES = 2


def pair_screen_rows(n_candidates: int) -> int:
    """The most rows the pair screen uses with ``n_candidates = p*q`` basis columns.

    The screen costs ``6 rows (pq)^2`` flops per scored leaf and operation
    (:func:`jaxtree.moves.score_pairs`): ``PAIR_ROWS`` rows where that stays within
    ``PAIR_WORK`` (``p*q <= 512``, e.g. ``p <= 12`` with the default basis), fewer for more
    candidates (1,677 rows at ``p = 20``, ``q = 40``; about 13 GFLOP per pair iteration, its
    two operations), never fewer than ``PAIR_MIN_ROWS`` = 256 (from ``p*q = 2048``: 49 GFLOP
    at ``p = 100``). 0 or unknown ``n_candidates``: ``PAIR_ROWS``.

    Decision (sixty-seventh session): ``PAIR_WORK`` is ``2^30``, a quarter of the ``2^32``
    it was. At ``2^32`` a table of 26 to 100 covariates spent about 51 GFLOP per pair
    iteration, 0.3-0.5 s on a 2-core CPU, most of a small wide table's warm fit. At ``2^30``
    ISLR Wage (22 columns encoded, 3,000 rows: a bound of 1,386 screened rows, not 4,096) has the
    same five fold scores to the last digit and a warm fit of 1.25 s instead of 2.19 s; 18
    synthetic tables of 16-32 covariates with a product that has no marginal signal (the
    paper's function among them) the same test RMSE, 15-40% shorter warm fits (BENCHMARKS.md,
    "The pair screen on fewer rows").
    """
    if n_candidates <= 0:
        return PAIR_ROWS
    return int(min(PAIR_ROWS, max(PAIR_MIN_ROWS, PAIR_WORK // (n_candidates * n_candidates))))


PAIR_BLOCKS = 128
"""The covariate pairs a pre-screened pair screen scores exactly (:func:`pair_screen_blocks`):
about a tenth of the 1,378 pairs ``j <= l`` at ``p = 52``, where the rule starts, 2.5% at
``p = 100``.
The default fit chose the same tree with them as with every pair on 27 wide synthetic
tables (BENCHMARKS.md, "Wide tables of a few thousand rows")."""


def pair_screen_blocks(n_candidates: int) -> int:
    """The covariate pairs the pair screen scores exactly with ``n_candidates = p*q`` basis
    columns (:func:`jaxtree.moves.score_pairs`' ``blocks``): 0 (every column pair) where
    the exhaustive screen keeps its work within ``PAIR_WORK`` on at least
    ``PAIR_MIN_ROWS`` rows (``p*q <= 2048``, ``p <= 51`` with the default basis);
    ``PAIR_BLOCKS`` pre-screened covariate pairs above."""
    if n_candidates <= 0 or PAIR_MIN_ROWS * n_candidates * n_candidates <= PAIR_WORK:
        return 0
    return PAIR_BLOCKS


def screen_rows(data, max_rows: int):
    """At most ``max_rows`` evenly spaced rows of ``data`` (every ``stride``-th of its padded
    rows, from the first) as one chunk; ``data`` itself when it has no more rows (or
    ``max_rows <= 0``). The stride comes from the data's static shape, so it is right for
    whatever rows the step is given (e.g. a held-out split's training part)."""
    stride = scoring.screen_stride(data.x.shape[0] * data.x.shape[1], max_rows)
    if stride <= 1:
        return data

    def take(a):
        flat = a.reshape((-1,) + a.shape[2:])[::stride]
        return flat[None]

    return scoring.map_rows(take, data)


MOVE_INSERT, MOVE_PAIR, MOVE_SHAPE = 0, 1, 2


class Choice(NamedTuple):
    """The record of one iteration's move (the same fields on every engine and path).

    The fields of :class:`jaxtree.scoring.Choice`, plus ``move`` (``MOVE_INSERT``,
    ``MOVE_PAIR`` or ``MOVE_SHAPE``), the pair's second factor ``feature2``/``basis2``
    (``-1`` otherwise; a two-covariate shape's second covariate is ``feature2``) and
    ``replaced``, the number of replacement moves kept after the insertion.
    """

    flat_index: Any
    slot: Any
    op: Any
    feature: Any
    basis: Any
    weight: Any
    intercept: Any
    sse: Any
    move: Any = MOVE_INSERT
    feature2: Any = -1
    basis2: Any = -1
    replaced: Any = 0


class StepInfo(NamedTuple):
    """What one step did (traced; transferred once per iteration).

    ``val_loss``: the loss on held-out data after the step, when the caller monitors one
    (see :func:`with_validation`); None otherwise.
    """

    loss: jax.Array
    choice: scoring.Choice
    status: jax.Array
    val_loss: Any = None


def _adjust(data, basis, config: Config):
    """The configured weight refinement, ``p -> (p, loss)`` (None: no refinement)."""
    if config.loss != "squared" and config.refine == "coordinate":
        return lambda p: refine_.coordinate_newton(p, data, basis, sweeps=config.coordinate_sweeps,
                                                   max_leaves=config.max_k + 1, loss=config.loss)
    if config.loss != "squared" and config.refine == "optax":
        return lambda p: refine_.joint(p, data, basis, steps=config.refine_steps, loss=config.loss)
    if config.refine == "coordinate":
        return lambda p: refine_.coordinate(p, data, basis, sweeps=config.coordinate_sweeps,
                                            max_leaves=config.max_k + 1)
    if config.refine == "optax":
        return lambda p: refine_.joint(p, data, basis, steps=config.refine_steps)
    return None


def _exact_leaf_fit(program, slot, data, basis):
    """Refits leaf ``slot``'s weight and the intercept exactly on all rows: ``(p, mse)``."""
    coarse = refine_.coarse(data)

    def body(acc, ch):
        xb, yb, wb, phb = ch
        zb = None if phb is None else prog.leaf_basis(program, xb, basis, phb)
        return scoring.merge(acc, refine_.coordinate_moments(program, slot, xb, yb, wb, basis,
                                                             zb)), None

    z = jnp.zeros((), data.x.dtype)
    mo, _ = scoring.scan_live(body, scoring.Moments(z, z, z, z, z, z),
                              (coarse.x, coarse.y, coarse.w, coarse.phi), coarse.w)
    return refine_.coordinate_update(program, slot, mo)


def pair_lookahead(program, data, basis, config: Config, single_sse, rss, n, max_slots):
    """The best pair insertion if it beats the single insertion per operation.

    Args:
      program: the current (padded) tree.
      data: the chunked rows (:class:`jaxtree.scoring.Data`); the pairs are screened on
        :func:`screen_rows` of them, the winner's last factor's weight and the intercept
        then fitted on all of them. Where the screen reads every row (at most
        ``config.pair_rows``, e.g. every small table) the screen's own fit is that fit (the
        same clipped least squares on the same rows) and is taken as it is: one pass over
        the rows and about 0.2 s of the step's compilation fewer (issue 27; the demo's
        predictions unchanged, float32 bit for bit).
      basis: the basis the leaves use.
      config: the search's :class:`Config` (``pair_rows``, ``pair_leaves``,
        ``pair_max_leaves``, ``precision``).
      single_sse: the SSE of the best single insertion (the pair must gain more per
        operation, :func:`pair_taken`).
      rss: the current tree's SSE.
      n: the rows' total weight (the pair's SSE is its MSE times ``n``).
      max_slots: the most slots a tree may use (a pair needs four more).

    Returns ``(program, sse, pair_choice, take)``; ``take`` is False where no pair fits. The
    pair scoring (the costly Gram matrices) runs only while pairs are allowed (``lax.cond``).
    """
    # Not on the empty tree: a product at the root would leave no '+' above it, and the
    # moves insert only at leaves, so no additive term could join it later.
    early = (program.n_slots > 0) & (prog.n_leaves(program) <= config.pair_max_leaves)
    room = program.n_slots + 4 <= max_slots

    def pair(_):
        head = screen_rows(data, config.pair_rows)
        ps = moves.score_pairs(program, head, basis, max_rows=config.pair_leaves,
                               precision=config.precision, blocks=config.pair_blocks)
        pc = moves.select_pair(ps, basis.q)
        cand = moves.apply_pair(program, pc)
        if head is data:  # screened on every row: the pair's fit is already the exact one
            sse = pc.sse.astype(rss.dtype)
        else:
            cand, mse = _exact_leaf_fit(cand, program.n_slots + 2, data, basis)
            sse = (mse * n).astype(rss.dtype)
        ok = jnp.isfinite(ps.sse).any() & jnp.isfinite(sse)
        return cand, jnp.where(ok, sse, jnp.inf).astype(rss.dtype), pc

    def none(_):
        # The zeros of pair's choice, typed as score_pairs types them (written out, not
        # jax.eval_shape(pair): that traced the whole pair scoring a second time, 0.085 s
        # of every trace of the step; lax.cond refuses a mismatch at trace time).
        i32, dt = jnp.zeros((), jnp.int32), jnp.zeros((), data.x.dtype)
        w0 = jnp.zeros((), jnp.result_type(data.x.dtype, program.intercept.dtype))
        pc = moves.PairChoice(i32, i32, i32, i32, i32, i32, i32, dt, w0, dt)
        return program, jnp.full((), jnp.inf, rss.dtype), pc

    cand, sse, pc = jax.lax.cond(early & room, pair, none, None)
    take = early & room & pair_taken(rss, single_sse, sse)
    return cand, sse, pc, take


def pair_taken(rss, single_sse, pair_sse):
    """Whether a pair insertion (two operations, SSE ``pair_sse``) is taken over the single
    insertion (``single_sse``) from a tree of SSE ``rss``: its gain per operation is larger.
    The rule of :func:`step` and of the streamed step."""
    return jnp.isfinite(pair_sse) & ((rss - pair_sse) > 2 * (rss - single_sse))


def _with_pair_record(take, pc: moves.PairChoice, pair, program, sse, record: Choice) -> Choice:
    """``record`` replaced, where ``take``, by the :func:`pair_record` of the pair insertion
    ``pc`` into ``program`` that gave the tree ``pair`` (its weight at the second-to-last
    inserted slot, its intercept) with SSE ``sse``: the rule of :func:`step` and of the
    classifier's :func:`_loss_backfit`."""
    rec = pair_record(pc, pair.weight[program.n_slots + 2], pair.intercept, sse)
    return jax.tree_util.tree_map(
        lambda a, b: jnp.where(take, a, b).astype(jnp.asarray(b).dtype), rec, record)


def pair_record(pc: moves.PairChoice, weight, intercept, sse) -> Choice:
    """The :class:`Choice` record of a pair insertion ``pc`` whose second-to-last inserted
    leaf got ``weight`` (fitted on all rows), with the intercept and SSE after that fit.

    Args:
      pc: the :class:`jaxtree.moves.PairChoice` applied.
      weight: the refitted weight of the pair's first leaf.
      intercept: the intercept after that fit.
      sse: the weighted SSE after that fit.
    """
    i32 = lambda v: jnp.asarray(v, jnp.int32)  # noqa: E731
    return Choice(i32(-1), i32(pc.slot), i32(pc.op), i32(pc.feature_a), i32(pc.basis_a), weight,
                  intercept, sse, i32(MOVE_PAIR), i32(pc.feature_b), i32(pc.basis_b), i32(0))


def replacement_kept(cand_loss, loss, dtype):
    """Whether a replacement move whose refined loss is ``cand_loss`` is kept over ``loss``:
    it must fall by a relative ``10 * lbfgs_rtol`` (``1e-7`` float32, ``1e-12`` float64), so
    that rounding noise is never taken for progress.

    Args:
      cand_loss: the refined loss with the replacement.
      loss: the loss before it.
      dtype: float dtype of the losses (sets the tolerance).
    """
    rtol = refine_.lbfgs_rtol(dtype) * 10
    return jnp.isfinite(cand_loss) & (cand_loss < loss * (1 - rtol))


def refine_and_replace(new, sse_loss, was_empty, data, basis, config: Config, adjust,
                       replacing=True):
    """Refines the inserted tree ``new``, then makes up to ``config.replace_moves`` best
    replacements, each refined and kept only if the loss fell (:func:`replacement_kept`:
    relative ``1e-7`` float32 / ``1e-12`` float64); the moves stop at the first one not kept.
    Returns ``(p, loss, kept)``.

    One loop, so that the refinement (with L-BFGS, more than half of the step) is traced,
    compiled and loaded once: iteration 0 takes ``new`` refined (unrefined, at ``sse_loss``,
    on the empty tree's first leaf), iterations ``1..replace_moves`` score, apply and refine
    the best replacement. Replacements start only on a tree with more than one slot; once
    one is not kept, the remaining iterations do no work (``lax.cond`` on ``go``).

    Args:
      new: the tree after the insertion; ``sse_loss`` its loss (MSE) before refinement.
      was_empty: whether the insertion started from the empty tree (its first leaf is not
        refined: the module docstring).
      data: the chunked rows (:class:`jaxtree.scoring.Data`).
      basis: the basis the leaves use.
      config: the search's :class:`Config` (``replace_moves``, ``max_k``, ``precision``).
      adjust: the refinement, ``tree -> (refined tree, its MSE)``, or None (no refinement:
        a candidate keeps its scored loss).
      replacing: a (traced) bool: False makes no replacement, only the refinement of
        ``new`` (:func:`refine_step` through the compiled step).
    """
    n = jnp.sum(data.w)
    dt = sse_loss.dtype

    def replace(q):
        rs = moves.score_replace(q, data, basis, max_leaves=config.max_k + 1,
                                 precision=config.precision)
        rc = moves.select_replace(rs, basis.q)
        return moves.apply_replace(q, rc), (rc.sse / n).astype(dt)

    def move(i, carry):
        p, cur, kept, go = carry
        first = i == 0
        cand, cand_loss = jax.lax.cond(first, lambda q: (q, sse_loss), replace, p)
        if adjust is not None:  # the first leaf is not refined (see the module docstring)
            cand, cand_loss = jax.lax.cond(first & was_empty, lambda q: (q, cand_loss), adjust,
                                           cand)
        better = go & replacement_kept(cand_loss, cur, p.weight.dtype)
        take = first | better
        p = prog.where_tree(take, cand, p)
        cur = jnp.where(take, cand_loss, cur)
        go = jnp.where(first, (p.n_slots > 1) & replacing, better)
        return p, cur, kept + (better & ~first).astype(jnp.int32), go

    def body(i, carry):
        return jax.lax.cond(carry[-1], functools.partial(move, i), lambda c: c, carry)

    init = (new, sse_loss, jnp.zeros((), jnp.int32), jnp.asarray(True))
    p, loss, kept, _ = jax.lax.fori_loop(0, config.replace_moves + 1, body, init)
    return p, loss, kept


def step(program: prog.Program, data: scoring.Data, basis, config: Config, max_ops=None):
    """One search iteration: score all candidates, apply the best move, refine.

    With the default :class:`Config` this is the paper's greedy iteration (insert the best
    ``V op w'phi``, then adjust the weights). Pair lookahead and replacement moves are on
    when ``config`` says so (:func:`search_config`). On the empty program this picks the
    first leaf (or pair). Pure and traceable.

    ``max_ops``: the most operations the tree may hold, a traced integer (so every value up
    to ``config.max_k`` shares one compiled step: the estimator rounds the capacity up,
    :func:`jaxtree.program.capacity_for`); None: the program's capacity. It matters only
    where a pair move (two operations) could fill the tree before ``k + 1`` iterations.

    Args:
      program: the current tree.
      data: chunked training data (:func:`jaxtree.scoring.chunk`).
      basis: the :class:`jaxtree.basis.Basis` the program indexes.
      config: the search's :class:`Config`.

    Returns:
      ``(program, StepInfo)``.
    """
    if config.loss != "squared":  # classification: the same step on Newton working data
        return loss_step(program, data, basis, config, max_ops)
    return _insert_then_finish(insert_step, finish_step, program, data, basis, config, max_ops)


def _insert_then_finish(insert, finish, program, data, basis, config: Config, max_ops):
    """:func:`step`'s squared-loss iteration from its two parts: ``insert`` and ``finish``
    are :func:`insert_step` and :func:`finish_step` (traced) or their compiled forms
    (:func:`step_function`), so both paths assemble the same :class:`StepInfo`."""
    new, ins = insert(program, data, basis, config, max_ops)
    new, loss, kept = finish(new, program, ins.sse_loss, ins.before_loss, ins.was_empty,
                             ins.ok, data, basis, config, np.asarray(True))
    return new, StepInfo(loss, ins.record._replace(replaced=kept), ins.status)


def insert_step(program: prog.Program, data: scoring.Data, basis, config: Config,
                max_ops=None):
    """The first part of :func:`step` (squared loss): the candidates scored and the best
    insertion (or pair, ``config.pair_leaves``) applied, unrefined; :func:`finish_step`
    does the rest.

    Args:
      program: the current tree.
      data: chunked training data (:func:`jaxtree.scoring.chunk`).
      basis: the :class:`jaxtree.basis.Basis` the program indexes.
      config: the search's :class:`Config` (squared loss).
      max_ops: as for :func:`step`.

    Returns:
      ``(program, Inserted)``: the tree with the move applied and what the rest needs.
    """
    max_leaves = config.max_k + 1
    dt = data.x.dtype
    if config.screen_rows:
        scores = scoring.screened_score(program, data, basis, max_leaves=max_leaves,
                                        screen_rows=config.screen_rows,
                                        precision=config.precision, buckets=config.buckets)
    else:
        scores = scoring.score(program, data, basis, max_leaves=max_leaves,
                               precision=config.precision, buckets=config.buckets)
    choice = scoring.select(scores, basis.q)
    was_empty = program.n_slots == 0
    max_slots = program.capacity if max_ops is None else 2 * max_ops + 1
    room = was_empty | (program.n_slots + 2 <= max_slots)
    ok = jnp.isfinite(choice.sse) & room
    new = scoring.apply(program, choice)
    n = jnp.sum(data.w)
    sse = choice.sse
    i32 = jnp.int32
    record = Choice(*choice, i32(MOVE_INSERT), i32(-1), i32(-1), i32(0))
    if config.pair_leaves:
        pair_new, pair_sse, pc, take = pair_lookahead(program, data, basis, config,
                                                       choice.sse, scores.rss, n, max_slots)
        new = prog.where_tree(take, pair_new, new)
        sse = jnp.where(take, pair_sse, sse)
        ok = ok | take
        record = _with_pair_record(take, pc, new, program, pair_sse, record)
    # Every branch reports the training loss it already knows, so no extra pass over the
    # data: the chosen candidate's SSE, the last coordinate update's moments, or the
    # best L-BFGS value.
    sse_loss = (sse / n).astype(dt)
    # The loss of the tree the iteration keeps where it inserts nothing: the scorer's RSS
    # of the current tree (the same weighted sum as refine.mse, from the moments; the empty
    # tree's is centred for the gains, so its own loss is summed here), not a pass that
    # evaluates the tree (one more copy of the leaves' basis in every step, issue 27).
    kept_loss = jnp.where(was_empty, jnp.sum(data.w * (data.y - program.intercept) ** 2),
                          scores.rss)
    before_loss = (kept_loss / n).astype(dt)
    status = jnp.where(ok, STATUS_OK, jnp.where(room, STATUS_NO_CANDIDATE, STATUS_FULL))
    # The first leaf is reported as LEAF (not as an insertion under '+'), as by the reference.
    record = record._replace(op=jnp.where(was_empty, prog.LEAF, record.op).astype(jnp.int32),
                             slot=jnp.where(was_empty, 0, record.slot).astype(jnp.int32))
    return new, Inserted(sse_loss, before_loss, was_empty, ok, record,
                         status.astype(jnp.int32))


class Inserted(NamedTuple):
    """What :func:`insert_step` hands on besides the inserted tree: the chosen candidate's
    training loss, the loss of the tree before the iteration, whether the tree was empty,
    whether the iteration inserts, its record and status."""

    sse_loss: jax.Array
    before_loss: jax.Array
    was_empty: jax.Array
    ok: jax.Array
    record: Choice
    status: jax.Array


def finish_step(new: prog.Program, before: prog.Program, sse_loss, before_loss, was_empty,
                ok, data: scoring.Data, basis, config: Config, replacing):
    """The rest of :func:`step` after :func:`insert_step`: the configured refinement of the
    inserted tree ``new`` (none on the first leaf, ``was_empty``) and the replacement moves
    (``config.replace_moves``, :func:`refine_and_replace`), or the tree ``before`` the
    iteration kept when nothing was inserted (not ``ok``). Returns ``(program, loss,
    replacements kept)``.

    Apart from :func:`insert_step` it is a program of its own: a greedy fit with shape terms
    runs the two as two compiled programs (:func:`fit` with ``split``, :func:`step_function`,
    no transfer between them), and the backfitting round refines a tree through this one
    (:func:`refine_step`), so a first fit compiles the refinement once instead of once
    inside the step and once alone (issue 27).

    Args:
      new: the tree :func:`insert_step` returned.
      before: the tree before the iteration.
      sse_loss, before_loss, was_empty, ok: the fields of :class:`Inserted` of that
        iteration (``before_loss``: the loss of ``before``, returned where not ``ok``).
      data: chunked training data, as for :func:`insert_step`.
      basis: the :class:`jaxtree.basis.Basis` the program indexes.
      config: the search's :class:`Config`, as for :func:`insert_step`.
      replacing: a bool array: False makes no replacement move (the refinement alone, for
        :func:`refine_step`); the search passes True.
    """
    adjust = _adjust(data, basis, config)
    if config.replace_moves:
        new, loss, kept = refine_and_replace(new, sse_loss, was_empty, data, basis, config,
                                              adjust, replacing)
    else:
        refine_new = adjust if adjust is not None else (lambda p: (p, sse_loss))
        new, loss = jax.lax.cond(was_empty, lambda p: (p, sse_loss), refine_new, new)
        kept = jnp.zeros((), jnp.int32)
    new = prog.where_tree(ok, new, before)
    loss = jnp.where(ok, loss, before_loss)  # a failed iteration keeps the tree
    return new, loss.astype(data.x.dtype), kept


def loss_step(program: prog.Program, data: scoring.Data, basis, config: Config, max_ops=None):
    """:func:`step` for a classification loss (``config.loss``; ``data.y = +-1``).

    The candidates are scored by the squared-loss step's own scorer on the Newton working
    data of the current tree (:func:`jaxtree.losses.working_data`: one Newton step per
    candidate); the insertion, the refinement (on the true loss, also after the first leaf:
    one Newton step does not minimise it) and the reported loss
    (:func:`jaxtree.losses.reported`) use the labels. The record's ``sse``/``intercept`` are
    the Newton model's (working units). ``max_ops``: as for :func:`step` (it bounds the
    pair move's two operations).

    With pair lookahead or replacement moves (``search="backfit"``,
    :func:`search_config`) the moves are :func:`_loss_backfit`'s.

    Args:
      program: the current (padded) tree.
      data: the chunked rows with labels ``y = +-1``.
      basis: the basis the leaves use.
      config: the search's :class:`Config` (its ``loss`` names the classification loss).
      max_ops: as for :func:`step`.
    """
    new, info, pair = loss_insert_step(program, data, basis, config, max_ops)
    return loss_finish_step(program, new, info, pair, data, basis, config, max_ops)


def loss_insert_step(program: prog.Program, data: scoring.Data, basis, config: Config,
                     max_ops=None):
    """The first part of :func:`loss_step`: the Newton working data of ``program``, the
    greedy insertion scored on them (the squared step, no moves) and, with pair lookahead,
    the best pair on the same working data (:func:`_loss_pair`). Returns ``(new, info,
    pair)``, ``pair`` None without pair lookahead; :func:`loss_finish_step` takes them.
    The two parts run as two compiled programs for a small binary classifier
    (:data:`jaxtree._fit.classify.binary_insert_cached`). Pure and traceable.

    Args:
      program, data, basis, config, max_ops: as for :func:`loss_step`.
    """
    work = losses_.working_data(program, data, basis, config.loss)
    greedy = config._replace(loss="squared", refine=None, pair_leaves=0, replace_moves=0)
    new, info = step(program, work, basis, greedy, max_ops)
    pair = (_loss_pair(program, info, work, data, basis, config, max_ops)
            if config.pair_leaves else None)
    return new, info, pair


def loss_finish_step(program: prog.Program, new: prog.Program, info, pair, data: scoring.Data,
                     basis, config: Config, max_ops=None):
    """The rest of :func:`loss_step` after :func:`loss_insert_step` (its ``new``, ``info``
    and ``pair``): the refinement on the true loss, the backfit moves where ``config`` asks
    for them (:func:`_loss_backfit`) and the reported loss. Returns ``(program,
    StepInfo)``. Pure and traceable.

    Args:
      program: the tree before the step.
      new: the inserted tree :func:`loss_insert_step` returned.
      info: its :class:`StepInfo`.
      pair: its pair lookahead (None without it).
      data: the chunked rows with labels ``y = +-1``, as for :func:`loss_insert_step`.
      basis: the basis the leaves use.
      config: the search's :class:`Config`.
      max_ops: as for :func:`step`.
    """
    adjust = _adjust(data, basis, config)
    if config.pair_leaves or config.replace_moves:
        return _loss_backfit(program, new, info, pair, data, basis, config, adjust, max_ops)
    ok = info.status == STATUS_OK
    if adjust is not None:
        refined, _ = adjust(new)
        new = prog.where_tree(ok, refined, new)
    loss = losses_.mean_loss(new, data, basis, config.loss, report=True)
    return new, info._replace(loss=loss.astype(data.x.dtype))


def _loss_pair(program, info, work, data, basis, config: Config, max_ops):
    """The pair lookahead of :func:`_loss_backfit` (``config.pair_leaves``): ``(pair,
    pair_sse, pc, has_pair, before)``, the best pair on the Newton working data ``work``
    of ``program`` (a candidate where its Newton SSE is below the tree's; single_sse = rss:
    :func:`loss_pair_kept` decides on the true losses), whether there is one (and the
    greedy insertion was made), and the true loss of ``program`` where there is (else
    inf)."""
    dt = data.x.dtype
    n_work = jnp.sum(work.w)
    rss = (refine_.mse(program, work, basis) * n_work).astype(dt)
    max_slots = program.capacity if max_ops is None else 2 * max_ops + 1
    pair, pair_sse, pc, has_pair = pair_lookahead(program, work, basis, config, rss, rss,
                                                   n_work, max_slots)
    has_pair = has_pair & (info.status == STATUS_OK)
    before = jax.lax.cond(
        has_pair, lambda: losses_.mean_loss(program, data, basis, config.loss).astype(dt),
        lambda: jnp.asarray(jnp.inf, dt))
    return pair, pair_sse, pc, has_pair, before


def loss_pair_kept(before, insert_loss, pair_loss):
    """Whether a pair insertion is kept under a classification loss (:func:`_loss_backfit`):
    on the *true* (refined) losses, its gain per operation beats the single insertion's
    (:func:`pair_taken` with the tree's loss ``before`` the step, the refined insertion's
    ``insert_loss`` and the refined pair's ``pair_loss``) *and* it is no worse than the
    insertion (``pair_loss <= insert_loss``), so that a pair never raises the loss above
    the greedy step's."""
    return pair_taken(before, insert_loss, pair_loss) & (pair_loss <= insert_loss)


def _loss_backfit(program, inserted, info, pair_found, data, basis, config: Config, adjust,
                  max_ops):
    """The backfit moves (pair lookahead, replacements) of :func:`loss_step`.

    Candidates are scored on Newton working data (one Newton step each, the squared-loss
    scorers unchanged); every decision is taken on the *true* loss after refinement
    (:func:`jaxtree.losses.mean_loss`, the margin loss's squared hinge; the refined value
    :func:`jaxtree.refine.joint` / :func:`jaxtree.refine.coordinate_newton` returns):

    1. the greedy insertion ``inserted`` (the squared step on the working data of
       ``program``, :func:`step` with no moves) is refined: loss ``L_ins``, the greedy step's;
    2. pair lookahead (``config.pair_leaves``, while the tree has 1 to
       ``config.pair_max_leaves`` leaves and room for two operations): the best pair on the
       same working data (:func:`pair_lookahead`, a candidate where its Newton SSE is below
       the tree's) is refined and kept by :func:`loss_pair_kept` (its gain per operation
       beats the insertion's and ``L_pair <= L_ins``);
    3. up to ``config.replace_moves`` replacements: the best replacement scored on the
       working data of the current tree (:func:`jaxtree.moves.score_replace`), refined,
       kept only if the true loss fell by :func:`replacement_kept`'s relative amount; the
       first one not kept ends the moves.

    **The rule**: the tree returned has a true loss not above ``L_ins``, the loss the greedy
    step would reach from the same tree (a pair is kept only at or below it, a replacement
    only below the current loss); the reported loss is :func:`jaxtree.losses.mean_loss`
    (``report=True``) of the returned tree. One loop over the moves, so that the refinement
    is traced and compiled once (as :func:`refine_and_replace`). ``pair_found``: the pair
    lookahead's :func:`_loss_pair` (found by :func:`loss_insert_step`), None without it.
    Returns ``(program, StepInfo)``.
    """
    dt = data.x.dtype
    inf = jnp.asarray(jnp.inf, dt)
    true_loss = lambda p: losses_.mean_loss(p, data, basis, config.loss).astype(dt)  # noqa: E731
    refine = adjust if adjust is not None else (lambda p: (p, true_loss(p)))
    ok = info.status == STATUS_OK
    record = Choice(*info.choice)
    pairs = bool(config.pair_leaves)
    if pairs:  # found on the working data by loss_insert_step (_loss_pair)
        pair, pair_sse, pc, has_pair, before = pair_found
    else:
        pair, has_pair, before = inserted, jnp.asarray(False), inf
    first_replace = 2 if pairs else 1

    def replace(q):
        w = losses_.working_data(q, data, basis, config.loss)
        rs = moves.score_replace(q, w, basis, max_leaves=config.max_k + 1,
                                 precision=config.precision)
        return moves.apply_replace(q, moves.select_replace(rs, basis.q))

    def candidate(i, q):
        if pairs:
            return jax.lax.switch(jnp.minimum(i, 2), [lambda _: inserted, lambda _: pair, replace],
                                  q)
        return jax.lax.cond(i == 0, lambda _: inserted, replace, q)

    def move(i, carry):
        p, cur, ins_loss, kept, go, took_pair = carry
        cand, cand_loss = refine(candidate(i, p))
        cand_loss = cand_loss.astype(dt)
        first = i == 0
        is_pair = (i == 1) if pairs else jnp.asarray(False)
        is_replace = i >= first_replace
        take = (first | (is_pair & loss_pair_kept(before, ins_loss, cand_loss))
                | (is_replace & replacement_kept(cand_loss, cur, dt)))
        p = prog.where_tree(take, cand, p)
        return (p, jnp.where(take, cand_loss, cur), jnp.where(first, cand_loss, ins_loss),
                kept + (is_replace & take).astype(jnp.int32),
                jnp.where(is_replace, take, go), took_pair | (is_pair & take))

    def body(i, carry):
        active = jnp.where(i == 1, has_pair, carry[4]) if pairs else carry[4]
        return jax.lax.cond(active, functools.partial(move, i), lambda c: c, carry)

    init = (inserted, inf, inf, jnp.zeros((), jnp.int32), ok, jnp.asarray(False))
    n_moves = 1 + int(pairs) + config.replace_moves
    new, _, _, kept, _, took_pair = jax.lax.fori_loop(0, n_moves, body, init)
    if pairs:
        record = _with_pair_record(took_pair, pc, pair, program, pair_sse, record)
    record = record._replace(replaced=kept)
    loss = losses_.mean_loss(new, data, basis, config.loss, report=True)
    return new, info._replace(loss=loss.astype(dt), choice=record)


step_jit = jax.jit(step, static_argnames=("basis", "config"))
# light=False: the one-program step (the paper's greedy search on a small table, and the
# classifier's) ran about 10% slower without XLA's fusion emitters (thirty-fourth session:
# 60 calls at 1,000 rows, min 1.87 / 2.27 against 1.65 / 2.04 ms), and its warm speed is
# what the paper setting races (issue 27: within 5%); the backfit step's two programs ran
# as fast, so they compile light where compiling dominates (_executables.light).
step_cached = _executables.cached(step_jit, static_argnums=(2, 3), light=False)
"""``step_jit`` through the on-disk executable cache when jaxtree's compilation cache is on
(:mod:`jaxtree._executables`: a new process neither traces nor compiles it), else ``step_jit``.
Positional arguments only."""

insert_jit = jax.jit(insert_step, static_argnames=("basis", "config"))
# a small table's insertion compiles without the fusion emitters and at LLVM level 1 (it ran
# as fast; _executables.LIGHT_LLVM1), its refinement (finish_cached) without the emitters only
insert_cached = _executables.cached(insert_jit, static_argnums=(2, 3),
                                    light=_executables.LIGHT_LLVM1)
finish_jit = jax.jit(finish_step, static_argnames=("basis", "config"))
finish_cached = _executables.cached(finish_jit, static_argnums=(7, 8))
finish_backfit_cached = _executables.cached(finish_jit, static_argnums=(7, 8),
                                            light=_executables.LIGHT_LLVM1,
                                            name="jaxtree.search.finish_step backfit")
"""The backfit search's :func:`finish_step` (replacement moves: :func:`finishes`), compiled
light at LLVM level 1 (:data:`jaxtree._executables.LIGHT_LLVM1`) where compiling dominates.

Decision (sixty-fifth session, issue 27): on the demo (the default's backfit search, 1,000
x 10) the finish's compilation ends the first fit's critical path (1.06 s at ``LIGHT``,
0.88-0.91 s at level 1, compiled beside the insertion's); its L-BFGS loop runs slower at
level 1 (1.9-2.0 -> 2.7-3.6 ms a call). Fresh processes, 5 rounds against the commit
before: the demo's first fit 2.08 -> 1.94 s (cache off 2.04 -> 1.92 s), the predictions
bitwise the same; warm fits level (5,000 x 10: 0.522 -> 0.515 s; a prototype with every
finish at level 1: 1,000 x 10 0.253 -> 0.268 s). The greedy search's finish (the default
from 10,000 rows, with shape terms) keeps :data:`finish_cached`: with that prototype the
20,000 x 10 table's first fit was level (the shape stage's compilations end that path) and
its warm fit 0.643 -> 0.690 s (BENCHMARKS.md, "The backfit search's refinement at LLVM
level 1")."""


def finishes(config: Config):
    """The cached :func:`finish_step` of ``config``'s search: :data:`finish_backfit_cached`
    for the backfit search (replacement moves), else :data:`finish_cached`."""
    return finish_backfit_cached if config.replace_moves else finish_cached


def splits(config: Config) -> bool:
    """Whether :func:`step_function` runs ``config``'s step as two programs
    (:func:`insert_step`, :func:`finish_step`) where its ``split`` asks for it: a
    squared-loss step refined by L-BFGS without replacement moves (the greedy search). A
    classification step stays one program. The backfit search's step always runs in two
    parts (:func:`step_function`: a second process loads them side by side); compiling its
    two parts side by side in two threads was measured no faster on two cores
    (BENCHMARKS.md, issue 27)."""
    return config.loss == "squared" and config.refine == "optax" and not config.replace_moves


def refines(config: Config) -> bool:
    """Whether :func:`refine_step` can refine a tree through the compiled second part of a
    search of ``config`` (:func:`finish_step`, with its replacement moves off): the split
    greedy step (:func:`splits`) and the squared-loss backfit step refined by L-BFGS.

    Decision (fortieth session, issue 27): the backfitting round after the backfit search's
    shape terms refined the tree with a program of its own (``jaxtree._fit.select.joint_cached``,
    0.6-0.9 s of a small table's first fit); the backfit step's second part refines the
    same way (:func:`refine_and_replace`'s first move, the same :func:`_adjust`) and, with
    ``replacing`` False, makes no move, so a first fit compiles one L-BFGS program fewer."""
    return splits(config) or (config.loss == "squared" and config.refine == "optax"
                              and bool(config.replace_moves))


def step_function(data: scoring.Data, basis, config: Config, max_ops=None,
                  split: bool = True) -> Callable:
    """``program -> (program, StepInfo)``: one iteration of :func:`step` on ``data``, through
    the executable cache; where :func:`splits` holds, and always for the squared-loss
    backfit step (replacement moves), as :func:`insert_step` then :func:`finish_step` (two
    compiled programs, dispatched one after the other with no transfer; the same
    arithmetic up to XLA's rounding across the boundary).

    Why the backfit step always: a second process loads its stored programs (the
    executable cache), and the load time follows a program's size. The one-program backfit
    step was 1.05 s of the demo's 1.5 s second-process fit, loaded on the main thread while
    the other programs loaded on the read-ahead thread in 0.35 s; in two parts the read-ahead
    loads one while the main thread loads the other, about 0.5 s each (twenty-ninth session,
    the cache's loads timed in a second process). Measured on the demo, fresh cache per
    round, old and new alternating, 5 rounds: second-process fit median 0.80 -> 0.60 s;
    first fit in a fresh cache 9.36 / 8.84 -> 10.06 / 9.65 s (two rounds: the parts compile
    in 6.3 s against the one program's 5.3 s); warm fits within noise (BENCHMARKS.md, "The
    backfit step in two programs"). The selection run and the refit use the same two
    programs.

    Args:
      data: chunked training data (:func:`jaxtree.scoring.chunk`).
      basis: the :class:`jaxtree.basis.Basis`.
      config: the search's :class:`Config`.
      max_ops: as for :func:`step` (None, or a numpy integer: traced).
      split: False runs the one-program step even where :func:`splits` holds (not the
        backfit step's: always two programs, so that every path of a fit shares them).
    """
    backfit = config.loss == "squared" and bool(config.replace_moves)
    two = (split and splits(config)) or backfit
    if not two:
        return lambda p: step_cached(p, data, basis, config, max_ops)

    started = []

    def two_programs(p):
        if not started:  # the first iteration: both programs compile side by side
            started.append(True)
            compile_ahead(p, data, basis, config, max_ops)
        return _insert_then_finish(insert_cached, finishes(config), p, data, basis, config,
                                   max_ops)

    return two_programs


def compile_ahead(program: prog.Program, data: scoring.Data, basis, config: Config,
                  max_ops=None) -> None:
    """Starts compiling the two programs of :func:`step_function`'s squared-loss step
    (:func:`insert_step`, then :func:`finish_step` on its outputs' shapes) on background
    threads, where they are neither in memory nor on disk
    (:meth:`jaxtree._executables.cached.ahead`); the step's calls then take them. Nothing
    changes in what runs: the same programs, compiled once each, with the same options.

    Why (forty-sixth session, issue 27): compiled one after the other at their first calls,
    the demo's two programs took 3.1 s (trace, lower, compile); with the refinement's
    program traced and lowered while the insertion's compiles, and the two compilations
    sharing the two cores, 2.5-2.7 s (BENCHMARKS.md, "Compiling a fit's next programs
    ahead")."""
    out = insert_cached.ahead(program, data, basis, config, max_ops)
    if out is None:
        return
    new, ins = out
    finishes(config).ahead(new, program, ins.sse_loss, ins.before_loss, ins.was_empty, ins.ok,
                           data, basis, config, np.asarray(True))


def refine_step(program: prog.Program, data: scoring.Data, basis, config: Config) -> tuple:
    """``(program, loss)``: ``config``'s refinement of ``program``'s weights on ``data``
    through the compiled :func:`finish_step` of a fit with the same shapes (``program`` in
    ``config.max_k``'s capacity), so no refinement program is compiled for it. Only where
    :func:`refines` holds (replacement moves off: the refinement alone).

    Args:
      program: the tree, in ``config.max_k``'s capacity (:func:`jaxtree.program.pad`).
      data: chunked data, shaped as the search's.
      basis: the :class:`jaxtree.basis.Basis` the program indexes.
      config: the search's :class:`Config`.
    """
    dt = program.weight.dtype
    zero = np.zeros((), dt)
    program, loss, _ = finishes(config)(program, program, zero, zero, np.asarray(False),
                                        np.asarray(True), data, basis, config,
                                        np.asarray(False))
    return program, loss


def shape_step(state: shapes_.State, data: scoring.Data, grams, spec: shapes_.ShapeSpec,
               sweeps: int = 1):
    """One shape-function insertion (:func:`jaxtree.shapes.fit_step`) as a driver step.

    The record has ``move=MOVE_SHAPE``, ``op=ADD``, ``feature`` (and ``feature2`` for a
    two-covariate shape, else -1), ``flat_index`` the term id, ``sse`` the weighted SSE
    after the backfit, and ``basis``/``weight``/``slot`` -1/0/-1 (a shape has many
    coefficients; see the model's shapes). Pure and traceable.

    Args:
      state: the current :class:`jaxtree.shapes.State`.
      data: chunked training data (:func:`jaxtree.scoring.chunk`).
      grams: the Gram statistics of :func:`jaxtree.shapes.grams`, or with their systems'
        factors (:func:`jaxtree.shapes.with_factors`) and padded blocks
        (:func:`jaxtree.shapes.with_table`), as a search's steps take them.
      spec: the :class:`jaxtree.shapes.ShapeSpec`.
      sweeps: backfitting sweeps after the insertion.
    """
    new, (loss, tid, _, ok) = shapes_.fit_step(state, data, grams, spec, sweeps)
    p = data.x.shape[-1]
    first, second, _ = shapes_.pair_index(spec)
    if not len(spec.pairs):
        first = second = np.zeros((1,), np.int32)
    first, second = jnp.asarray(first, jnp.int32), jnp.asarray(second, jnp.int32)
    c = jnp.clip(tid - p, 0, max(len(spec.pairs) - 1, 0))
    main = tid < p
    i32 = lambda v: jnp.asarray(v, jnp.int32)
    choice = Choice(tid, i32(-1), i32(prog.ADD), jnp.where(main, tid, first[c]).astype(jnp.int32),
                    i32(-1), jnp.zeros((), loss.dtype), new.shapes.intercept,
                    loss * jnp.sum(data.w), i32(MOVE_SHAPE),
                    jnp.where(main, -1, second[c]).astype(jnp.int32), i32(-1), i32(0))
    # Full: the most terms, or every candidate taken (one covariate has a single term).
    live = (spec.live if isinstance(spec, shapes_.SlotSpec)
            else shapes_.n_mains(spec, p) + len(spec.pairs))
    full = (state.shapes.n_terms >= spec.max_terms) | (state.shapes.n_terms >= live)
    status = jnp.where(ok, STATUS_OK, jnp.where(full, STATUS_FULL, STATUS_NO_CANDIDATE))
    new = prog.where_tree(ok, new, state)
    loss = jnp.where(ok, loss, shapes_.mse(data, state.fit))
    return new, StepInfo(loss, choice, status.astype(jnp.int32))


shape_step_jit = shapes_.spec_jit(shape_step, ("sweeps",), anywhere=True)


BEAM_WIDTH = 4
"""Default width of :func:`beam_fit` (the estimator's ``search="beam"``)."""


def beam_step(programs: prog.Program, data: scoring.Data, basis, config: Config):
    """One beam-search iteration over ``B`` trees (a batch of programs, leading axis ``B``).

    Every member's candidates are scored in one vmapped batch. Each member proposes its
    greedy choice (:func:`jaxtree.scoring.select`, the greedy search's tie rule) and its next
    ``B - 1`` best candidates; the ``B`` proposals with the lowest candidate SSE whose SSEs
    are distinct (relative ``tie_rtol`` of the residual sum of squares: the same tree reached
    twice is kept once) become the new members, each refined as the greedy search refines.
    On the empty trees only member 0 proposes (all members are the same empty tree). With
    ``B = 1`` this is the greedy search exactly.

    Args:
      programs: the ``B`` members (leading axis ``B``).
      data: chunked training data (:func:`jaxtree.scoring.chunk`).
      basis: the :class:`jaxtree.basis.Basis` the programs index.
      config: the search's :class:`Config`.

    Returns:
      ``(programs, StepInfo)``: the info of the member with the lowest refined loss (its
      choice record; ``loss`` is that member's), status OK when any proposal was finite.
    """
    max_leaves = config.max_k + 1
    scores = jax.vmap(lambda p: scoring.score(p, data, basis, max_leaves=max_leaves,
                                              precision=config.precision, buckets=()))(programs)
    choices, parents, new, was_empty = beam_children(programs, scores, basis.q)
    n = jnp.sum(data.w)
    adjust = _adjust(data, basis, config)
    loss = (choices.sse / n).astype(data.x.dtype)
    if adjust is not None:
        refined, refined_loss = jax.vmap(adjust)(new)
        new = jax.tree_util.tree_map(lambda a, b: jnp.where(was_empty, b, a), refined, new)
        loss = jnp.where(was_empty, loss, refined_loss)
    return beam_finish(programs, choices, parents, new, loss, was_empty)


def beam_children(programs: prog.Program, scores: scoring.Scores, q: int):
    """The proposals of :func:`beam_step` from every member's scores (pure; shared by the
    in-memory and the streamed beam): ``(choices, parents, children, was_empty)``, the
    children being the parents with the chosen insertions applied, not yet refined.

    Args:
      programs: the ``B`` members (leading axis ``B``).
      scores: each member's :class:`jaxtree.scoring.Scores` (leading axis ``B``).
      q: number of basis functions per feature.
    """
    width = programs.op.shape[0]
    dt = scores.sse.dtype
    flat = scores.sse.reshape(width, -1)
    first = jax.vmap(lambda s: scoring.select(s, q))(scores)  # the greedy choice of each member
    rest = flat.at[jnp.arange(width), first.flat_index].set(jnp.inf)
    _, others = jax.lax.top_k(-rest, max(width - 1, 1))
    idx = jnp.concatenate([first.flat_index[:, None], others[:, : width - 1]], 1)  # (B, B)
    sse = jnp.take_along_axis(flat, idx, 1)
    was_empty = programs.n_slots[0] == 0
    sse = jnp.where(was_empty & (jnp.arange(width) > 0)[:, None], jnp.inf, sse)
    sse = sse.reshape(-1)
    order = jnp.argsort(sse, stable=True)
    ranked = sse[order]
    tol = scoring.tie_rtol(dt) * jnp.max(scores.rss)
    dup = jnp.concatenate([jnp.zeros((1,), bool), jnp.abs(jnp.diff(ranked)) <= tol])
    keep = order[jnp.argsort(dup, stable=True)[:width]]  # distinct first, then duplicates
    parent, which = keep // width, keep % width

    def child(par, w):
        sc = _member(scores, par)
        return scoring.choice_at(sc, idx[par, w], q), _member(programs, par)

    choices, parents = jax.vmap(child)(parent, which)
    return choices, parents, jax.vmap(scoring.apply)(parents, choices), was_empty


def _member(tree, i):
    return jax.tree_util.tree_map(lambda a: a[i], tree)


def beam_finish(programs, choices, parents, new, loss, was_empty):
    """The end of :func:`beam_step` (pure; shared with the streamed beam): members whose
    proposal is not finite (or with no room) keep their parent with loss ``inf``; the
    reported record, loss and status are the best member's. ``(programs, StepInfo)``.

    Args:
      programs: the ``B`` members before the step.
      choices: the chosen :class:`jaxtree.scoring.Choice` of each new member.
      parents: the member each proposal came from.
      new: the children (refined where the step refines).
      loss: float ``(B,)`` each child's loss.
      was_empty: bool: the members were the empty tree.
    """
    room = was_empty | (programs.n_slots[0] + 2 <= programs.capacity)
    ok = jnp.isfinite(choices.sse) & room
    new = jax.tree_util.tree_map(
        lambda a, b: jnp.where(ok.reshape((-1,) + (1,) * (a.ndim - 1)), a, b), new, parents)
    loss = jnp.where(ok, loss, jnp.inf)
    best = jnp.argmin(loss)
    rec = Choice(*_member(choices, best))
    rec = rec._replace(op=jnp.where(was_empty, prog.LEAF, rec.op).astype(jnp.int32),
                       slot=jnp.where(was_empty, 0, rec.slot).astype(jnp.int32))
    status = jnp.where(ok[best], STATUS_OK, jnp.where(room, STATUS_NO_CANDIDATE, STATUS_FULL))
    # A member whose proposal was not finite keeps its parent; its loss is then unknown
    # (inf) and it is never the reported best while a finite member exists.
    return new, StepInfo(loss[best].astype(loss.dtype), rec, status.astype(jnp.int32))


beam_step_jit = jax.jit(beam_step, static_argnames=("basis", "config"))


@functools.partial(jax.jit, static_argnames=("basis",))
def _member_mse(programs, data, basis):
    return jax.vmap(lambda p: refine_.mse(p, data, basis))(programs)


def check_beam(width: int, config: Config) -> None:
    """The beam's arguments (:func:`beam_fit` and the streamed beam): a width >= 1 and the
    greedy :class:`Config` (the beam advances greedy insertions).

    Args:
      width: number of trees in the beam.
      config: the search's :class:`Config`.
    """
    if width < 1:
        raise ValueError(f"width must be >= 1; got {width}.")
    if config.pair_leaves or config.replace_moves:
        raise ValueError("the beam search advances greedy insertions only: use it with the "
                         "greedy Config (no pair or replacement moves).")


def beam_fit(data: scoring.Data, basis, k: int, config: Config, width: int = BEAM_WIDTH,
             callback: Optional[Callable[[int, float, dict], bool]] = None, *,
             loss_scale: float = 1.0, stop: Optional[Stop] = None) -> SearchResult:
    """Beam search of ``width`` trees (:func:`beam_step`) for the first leaf and ``k``
    insertions, run by the one driver; returns the best member. ``width=1`` is
    :func:`fit` exactly. The history is the best member's loss after each iteration (the
    best member may change from one iteration to the next, so it can differ from the
    final tree's own path). ``stop``: as for :func:`run` (on the best member's loss).

    Args:
      data: chunked training data (:func:`jaxtree.scoring.chunk`).
      basis: the :class:`jaxtree.basis.Basis` the programs index.
      k: number of insertions after the first leaf.
      config: the search's :class:`Config`.
      width: number of trees in the beam (``BEAM_WIDTH``).
      callback: as for :func:`run`.
      loss_scale: as for :func:`run`.
    """
    check_beam(width, config)
    empty = prog.empty_program(config.max_k, data.x.dtype)
    programs = jax.tree_util.tree_map(lambda a: jnp.broadcast_to(a, (width,) + a.shape), empty)
    res = run(lambda ps: beam_step_jit(ps, data, basis, config), programs, k + 1, callback,
              loss_scale=loss_scale, stop=stop)
    final = jax.device_get(res.program)
    loss = np.asarray(jax.device_get(_member_mse(res.program, data, basis)))
    best = int(np.argmin(np.where(np.isfinite(loss), loss, np.inf)))
    return res._replace(program=jax.tree_util.tree_map(lambda a: jnp.asarray(a[best]), final))


CHOICE_KEYS = Choice._fields
"""Keys of every record in ``choices`` (the same on every engine and path):
``flat_index`` (the candidate's index in the iteration's score array), ``slot`` (the leaf
replaced), ``op`` (``program.LEAF`` for the first leaf, then ``ADD``/``MUL``), ``feature``,
``basis``, ``weight``, ``intercept`` (re-fitted, scaled units), ``sse`` (the
candidate's weighted residual sum of squares, scaled units, before refinement), ``move``
(``MOVE_INSERT`` or ``MOVE_PAIR``; a pair's ``flat_index`` is -1), ``feature2``/``basis2``
(a pair's second factor, else -1)
and ``replaced`` (replacement moves kept after the insertion)."""


def host_choice(choice) -> dict:
    """A chosen insertion as a dict of Python scalars with the keys :data:`CHOICE_KEYS`.

    Args:
      choice: a :class:`Choice` (device arrays).
    """
    d = jax.device_get(choice)._asdict()
    return {name: (d[name].item() if hasattr(d[name], "item") else d[name]) for name in CHOICE_KEYS}


class SearchResult(NamedTuple):
    """Outcome of :func:`run` (host values).

    Attributes:
      program: the final state (a :class:`jaxtree.program.Program`, or a batch of them, or
        an engine's own tree).
      history: float64 ``(n,)`` (or ``(B, n)`` for a batch) training loss after each
        iteration, multiplied by ``loss_scale`` (the user's units for the estimator).
      choices: per iteration a dict with :data:`CHOICE_KEYS` (for a batch: per member a list).
      status: the :class:`Status` flags of all iterations (``(B,)`` array for a batch).
        A tree that fills its capacity before ``n_iter`` iterations (a pair move uses two
        operations) ends its search there: that is not a failure, and the iteration that
        found no room is not recorded. In a batch the other members go on; such a member's
        ``choices`` end there and its ``history`` repeats its last loss (NaN after its end
        when the run has a ``stop``, which ends members on their own).
      val_history: loss on held-out data after each iteration (times ``loss_scale``) when the
        step reports one (:func:`with_validation`), else None.
      programs: the state after each iteration (host copies) when ``keep_states=True``.
    """

    program: Any
    history: np.ndarray
    choices: list
    status: Any
    val_history: Optional[np.ndarray] = None
    programs: Optional[list] = None


def run(step: Callable, state, n_iter: int,
        callback: Optional[Callable[[int, float, dict], bool]] = None, *,
        loss_scale=1.0, keep_states: bool = False,
        patience: Optional[int] = None, stop: Optional[Stop] = None) -> SearchResult:
    """The one search driver: every engine and path runs its iterations through it.

    ``step(state) -> (state, info)`` is one iteration of an engine (the jitted step in memory,
    the vmapped step for a batch, a host-driven step for streamed data, the numpy reference);
    ``info`` has ``loss`` (scaled units), ``choice`` (fields :data:`CHOICE_KEYS`) and
    ``status`` (:class:`Status` flags), scalars or ``(B,)`` arrays for a batch. The driver
    owns the loop, the single host transfer per iteration, the history, the choices, the
    status and early stopping.

    Args:
      step: the engine's step. state: its initial state (e.g. the empty program).
      n_iter: number of iterations (the first leaf plus ``k`` insertions: ``k + 1``).
      callback: ``callback(iteration, loss, choice) -> bool`` after each iteration, with the
        loss in the units of ``loss_scale`` (iteration 0 is the first leaf); returning True
        stops the search and sets :attr:`Status.STOPPED` if iterations were left. Not
        supported for a batch.
      loss_scale: factor applied to every reported loss (e.g. ``y_scale**2`` to report in
        the target's units); a ``(B,)`` array for a batch.
      keep_states: also return the state after every iteration (for a size-versus-error path).
      patience: with a step that reports ``val_loss`` (:func:`with_validation`), stop once
        the held-out loss has not fallen below its best for this many iterations (status
        :attr:`Status.STOPPED`); None runs all ``n_iter``.
      stop: a :class:`Stop` (the estimators' ``tol``, :func:`stop_rule`): end the search
        once an iteration lowers the loss by less than ``stop.rtol`` relative (that
        iteration's move is undone and not recorded) or once the loss is at most
        ``stop.atol``; either sets :attr:`Status.CONVERGED` when iterations were left. Only
        iterations whose step reports ``Status.OK`` are judged. None (default): no such
        stop. A batch applies it to each member on its own (:func:`_member_stops`): a
        member that stops keeps its tree (its later steps are discarded, its move undone
        as above), its ``choices`` end there, its ``history`` is NaN after its end, and
        the run ends once every member has ended.

    Returns:
      :class:`SearchResult`.
    """
    history, choices, status, val, states = [], [], None, [], []
    ends = None  # a batch: per member the first iteration that found its tree full (-1: none)
    last = np.nan  # the previous judged loss in the step's units (the stop's reference; NaN:
    # none; a batch: per member)
    for it in range(n_iter):
        before = state
        state, info = step(state)
        host = jax.device_get((info, state) if keep_states else info)  # one transfer
        if keep_states:
            host, kept = host
        raw = np.asarray(host.loss, np.float64)
        loss = raw * loss_scale
        flags = np.asarray(host.status, np.int64)
        judged = stop is not None and not raw.ndim and int(flags) == STATUS_OK
        if judged:
            undo, floor, judged_loss = stop.judge(raw, True, last, it, n_iter)
        if judged and undo:
            # No candidate lowered the loss by rtol: undo this move and end the search.
            state = before
            status = (STATUS_OK if status is None else status) | STATUS_CONVERGED
            break
        if loss.ndim:  # a batch: a member whose tree is full is done, as one tree is below
            full = (flags & STATUS_FULL) != 0
            ends = np.where(full, it, -1) if ends is None else np.where(full & (ends < 0), it, ends)
            flags = np.where(full, flags & ~STATUS_FULL, flags)
            if stop is not None:
                last = np.broadcast_to(last, raw.shape)
                state, loss, flags, ends, last = _member_stops(stop, it, n_iter, raw, loss,
                                                               flags, ends, last, before, state)
        elif flags & STATUS_FULL:
            # The tree holds its capacity (a pair move filled it before k + 1 iterations):
            # the search is done, and this iteration, which kept the tree, is not recorded.
            status = STATUS_OK if status is None else status
            break
        status = flags if status is None else status | flags
        history.append(loss)
        if keep_states:
            states.append(kept)
        if host.val_loss is not None:
            val.append(np.asarray(host.val_loss, np.float64) * loss_scale)
        if loss.ndim:  # a batch: one record per member
            fields = {name: np.asarray(getattr(host.choice, name)) for name in CHOICE_KEYS}
            choices.append([{name: v[b].item() for name, v in fields.items()}
                            for b in range(loss.shape[0])])
            if stop is not None and (ends >= 0).all():
                break  # every member has stopped or is full
            continue
        ch = host_choice(host.choice)
        choices.append(ch)
        stop_now = callback is not None and callback(it, float(loss), ch)
        if patience is not None and len(val) > patience:
            stop_now = stop_now or min(val[-patience:]) >= min(val[:-patience])
        if stop_now:
            if it + 1 < n_iter:
                status = status | STATUS_STOPPED
            break
        last = float(judged_loss) if judged else np.nan
        if judged and floor:
            status = status | STATUS_CONVERGED  # exact to the float precision: nothing to gain
            break
    history = np.asarray(history, np.float64)
    val = np.asarray(val, np.float64) if val else None
    kept = states if keep_states else None
    if history.ndim == 2:  # (iterations, B) -> (B, iterations); choices per member
        history = history.T.copy()
        val = None if val is None else val.T.copy()
        choices = [list(c) if e < 0 else list(c)[:e]
                   for c, e in zip(zip(*choices), ends)] if choices else []
        return SearchResult(state, history, choices, status, val, kept)
    return SearchResult(state, history, choices, Status(int(status or 0)), val, kept)


def _member_stops(stop: Stop, it: int, n_iter: int, raw, loss, flags, ends, last, before,
                  state) -> tuple:
    """:func:`run`'s stop for a batch, member by member, as it is for one tree: ``raw`` ``(B,)``
    the iteration's losses (step units), ``loss`` the same times ``loss_scale``, ``flags``
    (``FULL`` already cleared), ``ends`` (each member's first unrecorded iteration, -1:
    none yet), ``last`` the previous judged loss (NaN: none), ``before``/``state`` the batch
    before and after the step. A member that has ended keeps ``before`` (its step is
    discarded, its flags cleared, its loss NaN); an OK step whose loss is not below
    ``(1 - rtol)`` times ``last`` is undone and ends the member (``CONVERGED``, the
    iteration not recorded); an OK step at or below ``atol`` with iterations left is kept
    and ends the member after it (``CONVERGED``). The decisions are the single tree's
    float64 comparisons on the host; reverting the members is one device select.
    Returns ``(state, loss, flags, ends, last)``."""
    ended = (ends >= 0) & (ends <= it)  # before this iteration, or found full in it
    flags = np.where(ended & (ends < it), 0, flags)
    undo, floor, last = stop.judge(raw, ~ended & (flags == STATUS_OK), last, it, n_iter)
    ends = np.where(undo, it, np.where(floor, it + 1, ends))
    flags = np.where(undo | floor, flags | STATUS_CONVERGED, flags)
    keep = ended | undo
    if keep.any():
        state = _keep_members(jnp.asarray(keep), before, state)
    loss = np.where(keep, np.nan, loss)
    return state, loss, flags, ends, last


@jax.jit
def _keep_members(keep, before, after):
    """``before``'s members where ``keep`` (bool ``(B,)``), else ``after``'s (any pytree whose
    leaves have the leading batch axis)."""
    return jax.tree_util.tree_map(
        lambda a, b: jnp.where(keep.reshape(keep.shape + (1,) * (a.ndim - 1)), a, b),
        before, after)


def with_validation(step: Callable, loss: Callable) -> Callable:
    """A step that also reports ``loss(state)`` on held-out data as ``info.val_loss``.

    ``loss`` runs on the device like the step (e.g. :func:`jaxtree.refine.mse` on the held-out
    chunks, jitted), so the driver's one transfer per iteration brings both losses.
    """

    def monitored(state):
        state, info = step(state)
        return state, info._replace(val_loss=loss(state))

    return monitored


def fit(data: scoring.Data, basis, k: int, config: Config,
        callback: Optional[Callable[[int, float, dict], bool]] = None, *,
        loss_scale: float = 1.0, max_ops: Optional[int] = None,
        stop: Optional[Stop] = None, split: bool = False) -> SearchResult:
    """Runs the first leaf and ``k`` insertions in memory (:func:`run` over :func:`step`).

    Args:
      data: chunked, scaled data (possibly sharded, see :mod:`jaxtree.sharding`);
        basis: the basis; k: number of operations (``<= config.max_k``).
      config: static settings.
      callback: as for :func:`run`.
      loss_scale: as for :func:`run` (1: the history is the weighted MSE in scaled units).
      max_ops: the most operations the tree may hold (``<= config.max_k``; traced, see
        :func:`step`); None: ``config.max_k``.
      stop: as for :func:`run` (None: grow to ``k``).
      split: run the step as its two programs where :func:`splits` holds
        (:func:`step_function`), so that :func:`refine_step` can refine a tree after the
        search with the compiled second one (a fit with shape terms); else one program.

    Returns:
      :class:`SearchResult` with the history of the training loss after the first leaf and
      after each insertion (the program has ``config.max_k``'s capacity).
    """
    program = prog.empty_program(config.max_k, data.x.dtype)
    limit = None if max_ops is None else np.int32(max_ops)  # traced: no retrace per value
    return run(step_function(data, basis, config, limit, split), program, k + 1, callback,
               loss_scale=loss_scale, stop=stop)
