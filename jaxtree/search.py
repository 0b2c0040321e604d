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
capacity ``2*max_k+1``), so a whole fit compiles it once; the Python loop in
:func:`fit` transfers one scalar per iteration, for progress.
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from jaxtree import program as prog
from jaxtree import refine as refine_
from jaxtree import scoring

REFINE_MODES = ("optax", "coordinate", None)

STATUS_OK = 0
STATUS_NO_CANDIDATE = 1  # every candidate score was non-finite: the tree was kept
STATUS_FULL = 2  # the program had no room for another operation: the tree was kept


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
    """What one step did (traced; transferred once per iteration)."""

    loss: jax.Array
    choice: scoring.Choice
    status: jax.Array


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
    return new, StepInfo(loss, choice, status)


step_jit = jax.jit(step, static_argnames=("basis", "config"))


def host_choice(choice: scoring.Choice) -> dict:
    """A chosen insertion as a dict of Python scalars (transferred from the device)."""
    return {name: (v.item() if hasattr(v, "item") else v)
            for name, v in jax.device_get(choice)._asdict().items()}


class SearchResult(NamedTuple):
    """Outcome of :func:`fit` (host values)."""

    program: prog.Program
    history: np.ndarray
    choices: list
    status: int


def fit(data: scoring.Data, basis, k: int, config: Config,
        callback: Optional[Callable[[int, float, dict], bool]] = None) -> SearchResult:
    """Runs the first leaf and ``k`` insertions.

    Args:
      data: chunked, scaled data; basis: the basis; k: number of operations
        (``<= config.max_k``).
      config: static settings.
      callback: called as ``callback(iteration, loss, info)`` after each iteration
        (``iteration`` 0 is the first leaf); returning ``True`` stops the search.

    Returns:
      :class:`SearchResult` with the history of the training loss (weighted MSE in
      scaled units) after the first leaf and after each insertion.
    """
    program = prog.empty_program(config.max_k, data.x.dtype)
    history, choices, status = [], [], STATUS_OK
    for it in range(k + 1):
        program, info = step_jit(program, data, basis, config)
        host = jax.device_get(info)  # the one transfer per iteration
        status |= int(host.status)
        history.append(float(host.loss))
        ch = host_choice(host.choice)
        choices.append(ch)
        if callback is not None and callback(it, float(host.loss), ch):
            break
    return SearchResult(program, np.asarray(history), choices, status)
