"""The greedy structure search as ``init``/``step`` over a fixed-capacity program.

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
from typing import Any, Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from jaxtree import program as prog
from jaxtree import refine as refine_
from jaxtree import scoring

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


_MESSAGES = {
    Status.NO_CANDIDATE: "the search found no finite candidate at some iteration and kept the tree "
                         "it had; the data may be degenerate",
    Status.FULL: "the program had no room for another operation (capacity max_k reached); the "
                 "tree was kept",
    Status.STOPPED: "the callback asked the search to stop before k operations",
}


def message(status) -> str:
    """Words for a :class:`Status` (``"ok"`` for ``Status.OK``); flags joined by ``"; "``."""
    status = Status(int(status))
    parts = [text for flag, text in _MESSAGES.items() if flag in status]
    return "; ".join(parts) if parts else "ok"


# Module-level aliases of the flags (integers in the traced step).
STATUS_OK = int(Status.OK)
STATUS_NO_CANDIDATE = int(Status.NO_CANDIDATE)
STATUS_FULL = int(Status.FULL)
STATUS_STOPPED = int(Status.STOPPED)


class Config(NamedTuple):
    """Static (hashable) settings of a search; changing one recompiles.

    Attributes:
      max_k: capacity in operations.
      refine: ``"optax"``, ``"coordinate"`` or ``None``.
      sweeps: coordinate-descent passes over the leaves.
      steps: L-BFGS iterations of the joint refinement.
      precision: matmul precision of the scorer.
      buckets: leaf-count buckets of the scorer (see :func:`jaxtree.scoring.score`);
        ``()`` scores on all ``2*(max_k+1)`` rows every iteration (fastest compile).
    """

    max_k: int
    refine: Optional[str] = "optax"
    sweeps: int = 3
    steps: int = 20
    precision: jax.lax.Precision = jax.lax.Precision.HIGHEST
    buckets: tuple = ()


class StepInfo(NamedTuple):
    """What one step did (traced; transferred once per iteration).

    ``val_loss``: the loss on held-out data after the step, when the caller monitors one
    (see :func:`with_validation`); None otherwise.
    """

    loss: jax.Array
    choice: scoring.Choice
    status: jax.Array
    val_loss: Any = None


def step(program: prog.Program, data: scoring.Data, basis, config: Config):
    """One greedy iteration: score all candidates, insert the best, refine.

    On the empty program this picks the first leaf. Pure and traceable.

    Returns:
      ``(program, StepInfo)``.
    """
    max_leaves = config.max_k + 1
    scores = scoring.score(program, data, basis, max_leaves=max_leaves,
                           precision=config.precision, buckets=config.buckets)
    choice = scoring.select(scores, basis.q)
    was_empty = program.n_slots == 0
    room = was_empty | (program.n_slots + 2 <= program.capacity)
    ok = jnp.isfinite(choice.sse) & room
    new = scoring.apply(program, choice)
    # Every branch reports the training loss it already knows, so no extra pass over the
    # data: the chosen candidate's SSE, the last coordinate update's moments, or the
    # best L-BFGS value.
    sse_loss = (choice.sse / jnp.sum(data.w)).astype(data.x.dtype)
    if config.refine == "coordinate":
        adjust = lambda p: refine_.coordinate(p, data, basis, sweeps=config.sweeps,
                                              max_leaves=max_leaves)
    elif config.refine == "optax":
        adjust = lambda p: refine_.joint(p, data, basis, steps=config.steps)
    else:
        adjust = lambda p: (p, sse_loss)
    new, loss = jax.lax.cond(was_empty, lambda p: (p, sse_loss), adjust, new)
    new = jax.tree_util.tree_map(lambda a, b: jnp.where(ok, a, b), new, program)
    # A failed iteration keeps the tree: only then is its loss computed afresh.
    loss = jax.lax.cond(ok, lambda: loss, lambda: refine_.mse(program, data, basis))
    status = jnp.where(ok, STATUS_OK, jnp.where(room, STATUS_NO_CANDIDATE, STATUS_FULL))
    status = status.astype(jnp.int32)
    # The first leaf is reported as LEAF (not as an insertion under '+'), as by the reference.
    choice = choice._replace(op=jnp.where(was_empty, prog.LEAF, choice.op).astype(jnp.int32),
                             slot=jnp.where(was_empty, 0, choice.slot).astype(jnp.int32))
    return new, StepInfo(loss, choice, status)


step_jit = jax.jit(step, static_argnames=("basis", "config"))


CHOICE_KEYS = scoring.Choice._fields
"""Keys of every record in ``choices`` (the same on every engine and path):
``flat_index`` (the candidate's index in the iteration's score array), ``slot`` (the leaf
replaced), ``op`` (``program.LEAF`` for the first leaf, then ``ADD``/``MUL``), ``feature``,
``basis``, ``weight``, ``intercept`` (re-fitted, scaled units) and ``sse`` (the
candidate's weighted residual sum of squares, scaled units, before refinement)."""


def host_choice(choice) -> dict:
    """A chosen insertion as a dict of Python scalars with the keys :data:`CHOICE_KEYS`."""
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
        loss_scale=1.0, keep_states: bool = False) -> SearchResult:
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

    Returns:
      :class:`SearchResult`.
    """
    history, choices, status, val, states = [], [], None, [], []
    for it in range(n_iter):
        state, info = step(state)
        host = jax.device_get((info, state) if keep_states else info)  # one transfer
        if keep_states:
            host, kept = host
            states.append(kept)
        loss = np.asarray(host.loss, np.float64) * loss_scale
        flags = np.asarray(host.status, np.int64)
        status = flags if status is None else status | flags
        history.append(loss)
        if host.val_loss is not None:
            val.append(np.asarray(host.val_loss, np.float64) * loss_scale)
        if loss.ndim:  # a batch: one record per member
            fields = {name: np.asarray(getattr(host.choice, name)) for name in CHOICE_KEYS}
            choices.append([{name: v[b].item() for name, v in fields.items()}
                            for b in range(loss.shape[0])])
            continue
        ch = host_choice(host.choice)
        choices.append(ch)
        if callback is not None and callback(it, float(loss), ch):
            if it + 1 < n_iter:
                status = status | STATUS_STOPPED
            break
    history = np.asarray(history, np.float64)
    val = np.asarray(val, np.float64) if val else None
    kept = states if keep_states else None
    if history.ndim == 2:  # (iterations, B) -> (B, iterations); choices per member
        history = history.T.copy()
        val = None if val is None else val.T.copy()
        choices = [list(c) for c in zip(*choices)] if choices else []
        return SearchResult(state, history, choices, status, val, kept)
    return SearchResult(state, history, choices, Status(int(status or 0)), val, kept)


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
        loss_scale: float = 1.0) -> SearchResult:
    """Runs the first leaf and ``k`` insertions in memory (:func:`run` over :func:`step`).

    Args:
      data: chunked, scaled data (possibly sharded, see :mod:`jaxtree.sharding`);
        basis: the basis; k: number of operations (``<= config.max_k``).
      config: static settings.
      callback: as for :func:`run`.
      loss_scale: as for :func:`run` (1: the history is the weighted MSE in scaled units).

    Returns:
      :class:`SearchResult` with the history of the training loss after the first leaf and
      after each insertion.
    """
    program = prog.empty_program(config.max_k, data.x.dtype)
    return run(lambda p: step_jit(p, data, basis, config), program, k + 1, callback,
               loss_scale=loss_scale)
