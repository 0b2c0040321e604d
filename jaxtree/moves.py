"""More search moves as batched, jittable kernels: replace, delete, pair insertion.

The paper's search only inserts ``V -> V + w'phi`` or ``V -> V * w'phi`` at a leaf ``V``
(:mod:`jaxtree.scoring`). This module adds three moves in the same style: each has a
scorer that scores *every* candidate of the move at once from chunked sufficient
statistics (pure, static shapes, ``lax.scan`` over chunks, centred per chunk and merged
with :func:`jaxtree.scoring.merge`), a selector returning a choice record, and an
``apply`` that returns the new :class:`jaxtree.program.Program`. Scores follow
:class:`jaxtree.scoring.Scores`: arrays of SSEs (weighted, intercept re-fitted), ``+inf``
where a row is not a candidate, the re-fitted intercept in absolute terms, and the
current ``rss`` for the tie rule (lowest index within ``tie_rtol(dtype) * rss``).

With ``T = b_d + k_d c_d`` for leaf ``d`` (``c_d = w_d phi_d(x)``, ``k_d`` its
multiplier) and ``e = y - w0 - T``:

==========================  =======================  ===============================
move at leaf d              target ``r``             regressor
==========================  =======================  ===============================
replace ``V`` by ``w'phi``  ``e + k_d c_d``          ``k_d * phi_ij``
delete ``V``                --                       residual ``e + k_d c_d - [*] k_d``
pair ``V + w'phi_a phi_b``  ``e``                    ``k_d * phi_a * phi_b``
pair ``V * w'phi_a phi_b``  ``e + k_d c_d``          ``k_d c_d * phi_a * phi_b``
==========================  =======================  ===============================

**Replace** (backfitting) re-chooses leaf ``d``'s ``(i, j)`` and weight with the rest of
the tree fixed: ``L`` rows of the same three matrix products as the insertions
(:func:`jaxtree.scoring.row_moments`), ``6 L n p q`` flops.

**Delete** removes leaf ``d`` and lets its sibling subtree take the parent's place.
Derivation: ``T`` is affine in the parent's value, ``T = b_P + k_P v_P``, and the reduced
tree is ``T' = T + k_P (v_S - v_P)`` with ``S`` the sibling. Under ``+``,
``v_P = v_S + c_d`` and ``k_d = k_P``, so ``T' = T - k_d c_d``; under ``*``,
``v_P = v_S c_d`` and ``k_d = k_P v_S``, so ``T' = T + k_d (1 - c_d)``. In words:
deleting a leaf sets its value to the identity of its parent's operation (0 or 1),
``T' = b_d + k_d * [parent is *]``; the root-only tree becomes the empty tree (``T' = 0``,
the same formula with ``+``). The score is the weighted centred sum of squares of
``y - w0 - T'`` (the intercept re-fitted): ``O(L n)`` work, no basis evaluation.

**Pair insertion** (lookahead) scores ``V op w' phi_a phi_b`` for every pair of design
columns ``a <= b`` (column ``j*q + i`` is ``phi_i(x_j)``, ``a == b`` gives a square). The
statistics of a row are Gram matrices of the chunk's design,
``S1 = Phi^T diag(w u) Phi``, ``S2 = (Phi^2)^T diag(w u^2) Phi^2``,
``Srs = Phi^T diag(w u rc) Phi``, each ``(pq, pq)``: ``6 n (pq)^2`` flops per row (two per
multiply-add, three products), ``O((pq)^2)`` memory per row. Cost examples: at
``n = 250, p = 100, q = 40`` (the paper's grid) ``6 * 250 * 4000^2 = 2.4e10`` flops per
row; at ``n = 7e5, p = 8, q = 40`` (airline size) ``6 * 7e5 * 320^2 = 4.3e11`` flops per
row. Measured (float32, the default basis, a one-leaf program so 2 rows, 2048-row chunks,
``jax.jit(score_pairs).lower(...).compile()`` then the median of 2-3 calls) on the 2-core development CPU
while it ran other jobs (load average 10-16): 4.2 s at ``n = 250, p = 100, q = 40``
(11 GFLOP/s; a bare Gram matmul of the chunk's shape reached 14 GFLOP/s in the same run)
and 49 s at ``n = 7e5, p = 8, q = 40`` (18 GFLOP/s against 65). Those absolute times are
inflated several-fold by the load; the ratio to the same-run matmul rate is the number to
keep. Design decisions:

* Rows are scored one after another (``lax.map`` over rows, ``lax.scan`` over chunks
  inside), so memory holds one row's few ``(pq, pq)`` accumulators (64 MB each in float32
  at ``pq = 4000``), not all rows'. The caller limits the rows with the static
  ``max_rows`` (the first leaves by rank) or passes the leaf slots to score.
* Each row reduces its ``(pq, pq)`` scores to the best pair on the device (lowest flat
  index ``a*pq + b`` within ``tie_rtol * rss``); the full array is never returned.
* The Grams are computed in full although they are symmetric (XLA has no symmetric
  rank-k product); computing only upper-triangle blocks could save up to half of the
  work and is not done.
* **A covariate pre-screen on wide tables** (``blocks``, set by
  :func:`jaxtree.search.pair_screen_blocks` where ``p*q > 2048``): the exhaustive Grams grow
  as ``(pq)^2`` (49 GFLOP a pair iteration at ``p = 100`` on the screen's floor of 256 rows,
  0.47 s of the step on the 2-core CPU). Each row first scores the products of six coarse
  functions ``cos(k pi x)`` per covariate, centred on the rows, ``(6p)^2`` columns, keeps
  the 128 covariate pairs whose best coarse product gains most
  (:func:`pair_blocks_screen`), and scores every column pair of those blocks exactly
  (:func:`block_moments`): 47 ms at ``p = 100``. Decision (sixty-eighth session): the coarse
  functions are the screen's own, not the basis's, so that any basis is screened alike;
  centred, so that a covariate's main effect (which a single leaf fits) does not fill the
  blocks; the blocks' choice is then the exhaustive scorer's among their pairs. On wide
  synthetic tables the default fits chose the same trees as the exhaustive screen
  (BENCHMARKS.md, "Wide tables of a few thousand rows").
* :func:`apply_pair` makes two insertions, ``V op w' phi_a`` and then ``* 1.0 phi_b`` at
  the new leaf: the result is in the paper's tree class with ``|w| <= 1`` and needs two
  operations of capacity (the search checks the room before it scores pairs).
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp

from jaxtree import program as prog
from jaxtree import scoring

__all__ = [
    "apply_delete",
    "apply_pair",
    "apply_replace",
    "block_moments",
    "coarse_design",
    "delete",
    "delete_chunk_moments",
    "delete_rows",
    "DeleteChoice",
    "DeleteScores",
    "finish_delete",
    "finish_replace",
    "gram_moments",
    "merge_delete",
    "merge_replace",
    "pair_blocks",
    "pair_blocks_screen",
    "PAIR_SCREEN_WIDTH",
    "PairChoice",
    "PairScores",
    "parents",
    "replace_chunk_moments",
    "ReplaceChoice",
    "ReplaceScores",
    "score_delete",
    "score_pairs",
    "score_replace",
    "select_delete",
    "select_pair",
    "select_replace",
    "zero_delete_moments",
    "zero_replace_moments",
]


_HIGHEST = jax.lax.Precision.HIGHEST


# ------------------------------------------------------------------------ shared helpers


def scalar_moments(wb, e) -> scoring.Moments:
    """Centred moments of residual rows ``e (..., m)`` (no regressor) on one chunk."""
    return scoring.pair_moments(wb, e, jnp.zeros_like(e))


def _zero_scalar_moments(shape, dtype) -> scoring.Moments:
    z = jnp.zeros(shape, dtype)
    return scoring.Moments(jnp.zeros((), dtype), z, z, z, z, z)


def _rss(program: prog.Program, mo_e: scoring.Moments):
    """Current residual sum of squares with the tie-rule convention of ``scoring``.

    ``sum w e^2`` for a tree; the centred total sum of squares for the empty tree (whose
    intercept is free), as :func:`jaxtree.scoring.finish` and the reference do.
    """
    return jnp.where(program.n_slots == 0, mo_e.mrr, mo_e.mrr + mo_e.n * mo_e.rbar ** 2)


def parents(program: prog.Program) -> jax.Array:
    """Parent slot of every slot, int32 ``(S,)``; ``-1`` for the root and unused slots.

    Args:
      program: the tree.
    """
    s = program.capacity
    idx = jnp.arange(s, dtype=jnp.int32)
    is_op = (program.op == prog.ADD) | (program.op == prog.MUL)
    drop = jnp.int32(s)  # scatter past the end: ignored
    par = jnp.full((s,), -1, jnp.int32)
    par = par.at[jnp.where(is_op, program.left, drop)].set(idx, mode="drop")
    return par.at[jnp.where(is_op, program.right, drop)].set(idx, mode="drop")


def _check_rows(name: str, value, low: int = 1,
                hint: str = "Use the program's max_k + 1 to score every leaf.") -> None:
    """Static counts (rows, blocks) are Python ints >= ``low`` (checked before tracing)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be a Python int (static); got {type(value).__name__}.")
    if value < low:
        raise ValueError(f"{name} must be >= {low}; got {value}. {hint}")


def _select_flat(sse, rss):
    """Lowest flat index of ``sse`` within ``tie_rtol * rss`` of its minimum."""
    flat = sse.reshape(-1)
    thr = jnp.min(flat) + scoring.tie_rtol(flat.dtype) * rss
    return jnp.argmax(flat <= thr).astype(jnp.int32)


# --------------------------------------------------------------------------- 1. replace


class ReplaceScores(NamedTuple):
    """Every replacement of every leaf.

    Attributes:
      sse: float ``(L, p*q)``: SSE after replacing leaf rank ``l`` by
        ``w' phi_i(x_j)`` (column ``j*q + i``); ``+inf`` for padding ranks and for the
        empty tree.
      weight: float ``(L, p*q)`` the new leaf weight ``w'`` (``|w'| <= 1``).
      intercept: float ``(L, p*q)`` the re-fitted intercept ``w0``.
      leaf_slots: int32 ``(L,)`` slot of each leaf rank (``-1`` padding).
      rss: float ``()`` residual sum of squares of the current tree.
    """

    sse: jax.Array
    weight: jax.Array
    intercept: jax.Array
    leaf_slots: jax.Array
    rss: jax.Array


class ReplaceChoice(NamedTuple):
    """The chosen replacement (traced scalars); ``flat_index = rank*p*q + j*q + i``."""

    flat_index: jax.Array
    slot: jax.Array
    feature: jax.Array
    basis: jax.Array
    weight: jax.Array
    intercept: jax.Array
    sse: jax.Array


def score_replace(program: prog.Program, data: scoring.Data, basis, *, max_leaves: int,
                  precision=_HIGHEST) -> ReplaceScores:
    """Scores re-choosing every leaf's ``(i, j)`` and weight, the rest of the tree fixed.

    Row ``l`` fits ``e + k_d c_d ~ a + w' k_d phi_ij`` (the ``*`` insertion's target with
    the ``+`` insertion's regressor): ``L`` rows of :func:`jaxtree.scoring.row_moments`.
    The leaf's current ``(i, j)`` is among the candidates (its score is the exact
    coordinate-descent update of its weight).

    Args:
      program: the current tree (the empty tree has no candidates: all ``+inf``).
      data: chunked training data (:func:`jaxtree.scoring.chunk`; a cached basis is used;
        its ``allowed`` columns only, where it has them).
      basis: the :class:`jaxtree.basis.Basis` the program indexes.
      max_leaves: static number of leaf rows ``L`` (>= number of leaves).
      precision: matmul precision.

    Returns:
      :class:`ReplaceScores`; memory ``O(m p q + L p q)``.

    Raises:
      ValueError, TypeError: if ``max_leaves`` is not a Python int >= 1.
    """
    _check_rows("max_leaves", max_leaves)
    slots = prog.leaf_slots(program, max_leaves)
    cols = data.x.shape[-1] * basis.q

    def body(acc, ch):
        return merge_replace(acc, replace_chunk_moments(program, slots, *ch, basis, precision)), None

    init = zero_replace_moments(max_leaves, cols, data.x.dtype)
    mo, _ = scoring.scan_live(body, init, (data.x, data.y, data.w, data.phi), data.w)
    out = finish_replace(program, slots, mo)
    return out._replace(sse=scoring.masked(out.sse, data.allowed))


def replace_chunk_moments(program: prog.Program, slots, xb, yb, wb, phb, basis,
                          precision=_HIGHEST):
    """One chunk's statistics of :func:`score_replace`: ``(row moments, residual moments)``
    (``phb`` the chunk's cached design or None). Merge with :func:`merge_replace`, finish
    with :func:`finish_replace`; the streamed search accumulates them block by block.

    Args:
      program: the current tree.
      slots: int32 ``(L,)`` leaf slots (``-1`` padding).
      xb: float ``(m, p)`` the chunk's features.
      yb: float ``(m,)`` the chunk's targets.
      wb: float ``(m,)`` the chunk's sample weights (0 on padding rows).
      phb: float ``(m, q*p)`` the chunk's cached design (:func:`jaxtree.scoring.design`), or
        None to evaluate it.
      basis: the :class:`jaxtree.basis.Basis` the program indexes.
      precision: matmul precision.
    """
    kl, cl, e = scoring.leaf_terms(program, slots, xb, yb, basis, phb)
    phi = scoring.design(xb, basis) if phb is None else phb
    mo = scoring.row_moments(kl, e[None, :] + kl * cl, wb, phi, basis.q, precision)
    return mo, scalar_moments(wb, e)


def zero_replace_moments(max_leaves: int, cols: int, dtype):
    """The empty statistics of :func:`score_replace` (``max_leaves`` rows, ``cols = p*q``).

    Args:
      max_leaves: static number of leaf rows.
      cols: number of candidate columns ``p*q``.
      dtype: float dtype of the statistics.
    """
    return scoring.zero_moments(max_leaves, cols, dtype), _zero_scalar_moments((), dtype)


def merge_replace(a, b):
    """Merges two :func:`replace_chunk_moments` results (Chan's update).

    Args:
      a: one chunk's (or several merged chunks') statistics.
      b: the statistics to merge into ``a``.
    """
    return scoring.merge(a[0], b[0]), scoring.merge(a[1], b[1])


def finish_replace(program: prog.Program, slots, mo) -> ReplaceScores:
    """:class:`ReplaceScores` from the merged statistics of all chunks.

    Args:
      program: the current tree.
      slots: int32 ``(L,)`` the leaf slots the statistics were taken for.
      mo: the merged ``(row moments, residual moments)`` of :func:`replace_chunk_moments`.
    """
    mo, mo_e = mo
    fit = scoring.closed_form(mo)
    ok = (slots >= 0)[:, None] & (program.n_slots > 0) & jnp.isfinite(fit.sse)
    return ReplaceScores(jnp.where(ok, fit.sse, jnp.inf), fit.weight,
                         fit.intercept + program.intercept, slots, _rss(program, mo_e))


def select_replace(scores: ReplaceScores, q: int) -> ReplaceChoice:
    """Lowest flat index ``rank*p*q + j*q + i`` within ``tie_rtol * rss`` of the best.

    Args:
      scores: the :class:`ReplaceScores` of :func:`score_replace`.
      q: number of basis functions per feature.
    """
    idx = _select_flat(scores.sse, scores.rss)
    pq = scores.sse.shape[1]
    row, col = idx // pq, idx % pq
    return ReplaceChoice(idx, scores.leaf_slots[row], col // q, col % q,
                         scores.weight[row, col], scores.intercept[row, col],
                         scores.sse.reshape(-1)[idx])


def apply_replace(program: prog.Program, choice: ReplaceChoice) -> prog.Program:
    """Sets the chosen leaf's feature, basis and weight and the re-fitted intercept.

    Args:
      program: the current tree.
      choice: the :class:`ReplaceChoice` of :func:`select_replace`.
    """
    s = choice.slot
    return program._replace(
        feature=program.feature.at[s].set(jnp.asarray(choice.feature, jnp.int32)),
        basis=program.basis.at[s].set(jnp.asarray(choice.basis, jnp.int32)),
        weight=program.weight.at[s].set(choice.weight.astype(program.weight.dtype)),
        intercept=choice.intercept.astype(program.intercept.dtype),
    )


# ---------------------------------------------------------------------------- 2. delete


class DeleteScores(NamedTuple):
    """Deleting every leaf.

    Attributes:
      sse: float ``(L,)`` SSE of the reduced tree with the intercept re-fitted (other
        weights fixed); ``+inf`` for padding ranks and the empty tree. Deleting the only
        leaf gives the empty tree, scored by the weighted centred total sum of squares.
      intercept: float ``(L,)`` the re-fitted intercept.
      leaf_slots: int32 ``(L,)`` slot of each leaf rank (``-1`` padding).
      rss: float ``()`` residual sum of squares of the current tree.
    """

    sse: jax.Array
    intercept: jax.Array
    leaf_slots: jax.Array
    rss: jax.Array


class DeleteChoice(NamedTuple):
    """The chosen deletion (traced scalars); ``flat_index`` is the leaf rank."""

    flat_index: jax.Array
    slot: jax.Array
    intercept: jax.Array
    sse: jax.Array


def score_delete(program: prog.Program, data: scoring.Data, basis, *,
                 max_leaves: int) -> DeleteScores:
    """Scores deleting each leaf (its sibling takes the parent's place), all at once.

    The reduced tree is ``T' = T - k_d c_d + [parent is *] k_d`` (derivation in the
    module docstring), so each row is a residual ``y - w0 - T'`` whose centred weighted
    sum of squares is the score; chunks are merged with Chan's update.

    Args:
      program: the current tree.
      data: chunked training data (the cached basis is not needed).
      basis: the :class:`jaxtree.basis.Basis` the program indexes.
      max_leaves: static number of leaf rows ``L``.

    Returns:
      :class:`DeleteScores`; work ``O(L n)`` plus one tree evaluation per chunk.

    Raises:
      ValueError, TypeError: if ``max_leaves`` is not a Python int >= 1.
    """
    _check_rows("max_leaves", max_leaves)
    slots, under_mul = delete_rows(program, max_leaves)

    def body(acc, ch):
        return merge_delete(acc, delete_chunk_moments(program, slots, under_mul, *ch, basis)), None

    init = zero_delete_moments(max_leaves, data.x.dtype)
    mo, _ = scoring.scan_live(body, init, (data.x, data.y, data.w), data.w)
    return finish_delete(program, slots, mo)


def delete_rows(program: prog.Program, max_leaves: int):
    """``(slots, under_mul)`` of :func:`score_delete`: the leaf slots (``-1`` padding) and
    whether each leaf's parent is a ``*`` (a ``(L, 1)`` mask).

    Args:
      program: the current tree.
      max_leaves: static number of leaf rows ``L``.
    """
    slots = prog.leaf_slots(program, max_leaves)
    par = parents(program)[jnp.maximum(slots, 0)]
    return slots, ((par >= 0) & (program.op[jnp.maximum(par, 0)] == prog.MUL))[:, None]


def delete_chunk_moments(program: prog.Program, slots, under_mul, xb, yb, wb, basis):
    """One chunk's statistics of :func:`score_delete` (merge with :func:`merge_delete`, finish
    with :func:`finish_delete`; the streamed pruning accumulates them block by block).

    Args:
      program: the current tree.
      slots: int32 ``(L,)`` leaf slots of :func:`delete_rows` (``-1`` padding).
      under_mul: bool ``(L, 1)``: the leaf's parent is a ``*`` (:func:`delete_rows`).
      xb: float ``(m, p)`` the chunk's features.
      yb: float ``(m,)`` the chunk's targets.
      wb: float ``(m,)`` the chunk's sample weights (0 on padding rows).
      basis: the :class:`jaxtree.basis.Basis` the program indexes.
    """
    kl, cl, e = scoring.leaf_terms(program, slots, xb, yb, basis)
    reduced = e[None, :] + kl * cl - jnp.where(under_mul, kl, 0)
    return scalar_moments(wb, reduced), scalar_moments(wb, e)


def zero_delete_moments(max_leaves: int, dtype):
    """The empty statistics of :func:`score_delete`.

    Args:
      max_leaves: static number of leaf rows ``L``.
      dtype: float dtype of the statistics.
    """
    return _zero_scalar_moments((max_leaves,), dtype), _zero_scalar_moments((), dtype)


merge_delete = merge_replace
"""Merges two :func:`delete_chunk_moments` results (Chan's update)."""


def finish_delete(program: prog.Program, slots, mo) -> DeleteScores:
    """:class:`DeleteScores` from the merged statistics of all chunks.

    Args:
      program: the current tree.
      slots: int32 ``(L,)`` the leaf slots the statistics were taken for.
      mo: the merged ``(row moments, residual moments)`` of :func:`delete_chunk_moments`.
    """
    mo, mo_e = mo
    ok = (slots >= 0) & (program.n_slots > 0) & jnp.isfinite(mo.mrr)
    return DeleteScores(jnp.where(ok, mo.mrr, jnp.inf), mo.rbar + program.intercept, slots,
                        _rss(program, mo_e))


def select_delete(scores: DeleteScores) -> DeleteChoice:
    """Lowest leaf rank within ``tie_rtol * rss`` of the best SSE.

    Args:
      scores: the :class:`DeleteScores` of :func:`score_delete`.
    """
    idx = _select_flat(scores.sse, scores.rss)
    return DeleteChoice(idx, scores.leaf_slots[idx], scores.intercept[idx], scores.sse[idx])


def delete(program: prog.Program, slot) -> prog.Program:
    """Removes leaf ``slot`` and collapses its parent; traceable (``slot`` may be traced).

    The sibling node's row moves into the parent's slot (its children keep their slots,
    which are larger, so a child's slot stays above its parent's), the leaf's and the
    sibling's old slots become ``EMPTY``, and the used slots are renumbered in order
    (``new = cumsum(used) - 1``) with ``left``/``right`` remapped, so slots
    ``[0, n_slots)`` are used again and ``n_slots`` drops by two. Deleting the root of a
    one-leaf tree gives the empty tree. Leaf ranks (ascending slot) may change order.
    The intercept is unchanged; the caller guarantees ``slot`` is a leaf.

    Returns:
      The reduced :class:`jaxtree.program.Program`.
    """
    p = program
    cap = p.capacity
    slot = jnp.asarray(slot, jnp.int32)
    par = parents(p)[slot]
    pa = jnp.maximum(par, 0)
    sib = jnp.where(p.left[pa] == slot, p.right[pa], p.left[pa])
    sib = jnp.maximum(sib, 0)
    empty_vals = (prog.EMPTY, -1, -1, -1, -1, 0)
    fields = ("op", "left", "right", "feature", "basis", "weight")

    def collapse(arr, blank):
        arr = arr.at[pa].set(arr[sib])
        return arr.at[sib].set(jnp.asarray(blank, arr.dtype)).at[slot].set(
            jnp.asarray(blank, arr.dtype))

    moved = {f: collapse(getattr(p, f), b) for f, b in zip(fields, empty_vals)}
    used = moved["op"] != prog.EMPTY
    new_index = (jnp.cumsum(used) - 1).astype(jnp.int32)
    is_op = (moved["op"] == prog.ADD) | (moved["op"] == prog.MUL)
    for f in ("left", "right"):
        moved[f] = jnp.where(is_op, new_index[jnp.maximum(moved[f], 0)], -1)
    dest = jnp.where(used, new_index, cap)  # unused rows are dropped
    out = {f: jnp.full((cap,), b, getattr(p, f).dtype).at[dest].set(moved[f], mode="drop")
           for f, b in zip(fields, empty_vals)}
    reduced = prog.Program(**out, intercept=p.intercept, n_slots=p.n_slots - 2)
    emptied = prog.empty_program(p.max_k, p.weight.dtype)._replace(intercept=p.intercept)
    return prog.where_tree(par < 0, emptied, reduced)


def apply_delete(program: prog.Program, choice: DeleteChoice) -> prog.Program:
    """Deletes the chosen leaf (:func:`delete`) and sets the re-fitted intercept.

    Args:
      program: the current tree.
      choice: the :class:`DeleteChoice` of :func:`select_delete`.
    """
    new = delete(program, choice.slot)
    return new._replace(intercept=choice.intercept.astype(new.intercept.dtype))


# -------------------------------------------------------------------- 3. pair insertion


class PairScores(NamedTuple):
    """The best pair insertion of each scored row.

    Row ``2*l + op`` is leaf ``slots[l]`` with op ``+`` (0) or ``*`` (1).

    Attributes:
      sse: float ``(2R,)`` SSE of the row's best pair; ``+inf`` where the row is not a
        candidate (padding, a slot that is not a leaf, the ``*`` row of the empty tree).
      weight: float ``(2R,)`` its ``w'``; intercept: float ``(2R,)`` the re-fitted ``w0``.
      col_a, col_b: int32 ``(2R,)`` its design columns ``a <= b`` (``j*q + i``).
      leaf_slots: int32 ``(R,)`` the scored leaf slots (``-1`` padding).
      rss: float ``()`` residual sum of squares of the current tree.
    """

    sse: jax.Array
    weight: jax.Array
    intercept: jax.Array
    col_a: jax.Array
    col_b: jax.Array
    leaf_slots: jax.Array
    rss: jax.Array


class PairChoice(NamedTuple):
    """The chosen pair insertion ``V op w' phi_ia(x_ja) phi_ib(x_jb)`` (traced scalars).

    ``row`` indexes :class:`PairScores` rows; ``op`` is ``ADD`` or ``MUL``.
    """

    row: jax.Array
    slot: jax.Array
    op: jax.Array
    feature_a: jax.Array
    basis_a: jax.Array
    feature_b: jax.Array
    basis_b: jax.Array
    weight: jax.Array
    intercept: jax.Array
    sse: jax.Array


def gram_moments(u, r, wb, phi, precision=_HIGHEST) -> scoring.Moments:
    """Centred moments of ``r ~ a + w' u phi_a phi_b`` for every column pair, one chunk.

    Args:
      u, r: float ``(m,)`` the row's regressor multiplier and target.
      wb: float ``(m,)`` sample weights.
      phi: float ``(m, C)`` design columns (any order; the result follows it).
      precision: matmul precision.

    Returns:
      :class:`jaxtree.scoring.Moments` with ``n, rbar, mrr`` scalars and
      ``sbar, mss, mrs`` ``(C, C)``. As in :func:`jaxtree.scoring.row_moments` the
      target is centred on the chunk before the product, so the co-moment needs no
      subtraction, and chunks merge with Chan's update.
    """
    phi2 = phi * phi

    def gram(v, square):
        a = phi2 if square else phi
        return jnp.matmul((a * v[:, None]).T, a, precision=precision)

    return _product_moments(u, r, wb, gram)


def block_moments(u, r, wb, left, right, precision=_HIGHEST) -> scoring.Moments:
    """:func:`gram_moments` of chosen blocks only: the moments of ``r ~ a + w' u f g`` for
    ``f`` a column of ``left[:, k]`` and ``g`` one of ``right[:, k]``, one chunk.

    Args:
      u, r, wb: as for :func:`gram_moments`.
      left, right: float ``(m, K, q)``: block ``k``'s two sets of columns.
      precision: matmul precision.

    Returns:
      :class:`jaxtree.scoring.Moments` with ``sbar, mss, mrs`` ``(K, q, q)``.
    """
    def gram(v, square):
        a, b = (left * left, right * right) if square else (left, right)
        return jnp.einsum("mkq,mkr->kqr", a * v[:, None, None], b, precision=precision)

    return _product_moments(u, r, wb, gram)


def _product_moments(u, r, wb, gram) -> scoring.Moments:
    """Centred moments of ``r ~ a + w' u s`` for the products ``s`` that ``gram(v, square)``
    sums against the row weights ``v (m,)`` (``square``: the products' squares)."""
    n = jnp.sum(wb)
    rbar = scoring.safe_div(jnp.sum(wb * r), n)
    rc = r - rbar
    wu = wb * u
    s1 = gram(wu, False)
    s2 = gram(wu * u, True)
    mrs = gram(wu * rc, False)
    sbar = scoring.safe_div(s1, n)
    return scoring.Moments(n, rbar, sbar, jnp.sum(wb * rc * rc),
                           jnp.maximum(s2 - s1 * sbar, 0), mrs)


def coarse_design(x, width: int) -> jax.Array:
    """The pair pre-screen's coarse functions ``cos(k pi x)``, ``k = 1..width``, of every
    covariate: float ``(..., p, width)`` for ``x (..., p)`` scaled to ``[0, 1]``."""
    k = jnp.arange(1, width + 1, dtype=x.dtype)
    return jnp.cos(jnp.pi * x[..., None] * k)


def pair_blocks_screen(mo: scoring.Moments, feature_ok, blocks: int):
    """The ``blocks`` covariate pairs ``j <= l`` whose best coarse product gains most.

    Args:
      mo: the merged moments of ``r ~ a + w' u z_a z_b`` over the coarse columns
        (:func:`coarse_design`, centred), ``(p*width, p*width)``, covariate-major.
      feature_ok: bool ``(p,)``: covariates with a column the pairs may use.
      blocks: how many pairs to keep (at most ``p*p``; static).

    Returns:
      ``(j, l, ok)``: int32 ``(blocks,)`` the pairs' covariates and bool ``(blocks,)``,
      False where fewer pairs are valid. Each pair's gain is its best product's
      unclipped ``mrs^2 / mss`` (a regressor of no spread gains 0); ties go to the lower
      flat index ``j*p + l`` (:func:`jax.lax.top_k`).
    """
    p = feature_ok.shape[0]
    s2 = mo.mss + mo.n * mo.sbar * mo.sbar
    flat = mo.mss <= scoring.css_rtol(mo.mss.dtype) * s2
    gain = jnp.where(flat, 0, mo.mrs * mo.mrs / jnp.where(flat, 1, mo.mss))
    gain = gain.reshape(p, -1, p, gain.shape[-1] // p).max(axis=(1, 3))
    valid = (jnp.arange(p)[:, None] <= jnp.arange(p)[None, :]) & feature_ok[:, None] \
        & feature_ok[None, :]
    gain = jnp.where(valid & jnp.isfinite(gain), gain, -1).reshape(-1)
    top, idx = jax.lax.top_k(gain, blocks)
    return (idx // p).astype(jnp.int32), (idx % p).astype(jnp.int32), top >= 0


def score_pairs(program: prog.Program, data: scoring.Data, basis, *, max_rows: int,
                slots: Optional[jax.Array] = None, precision=_HIGHEST,
                blocks: int = 0) -> PairScores:
    """Best pair insertion ``V op w' phi_a phi_b`` per (leaf, op) row.

    Args:
      program: the current tree (empty: row 0 holds ``y ~ a + w' phi_a phi_b``).
      data: chunked training data (a cached basis is used; pairs of its ``allowed``
        columns only, where it has them).
      basis: the :class:`jaxtree.basis.Basis`.
      max_rows: static number of leaves ``R`` to score: the first ``R`` leaf ranks, or
        the length of ``slots``. Work is ``6 n (pq)^2`` flops per row (``2R`` rows).
      slots: optional int32 ``(R,)`` leaf slots to score instead (``-1`` padding; a slot
        that is not a leaf gives ``+inf``); its length must equal ``max_rows``.
      precision: matmul precision.
      blocks: 0 scores every column pair. ``K > 0`` (static) pre-screens the covariate
        pairs: each row scores the products of ``PAIR_SCREEN_WIDTH`` coarse functions
        ``cos(k pi x)`` of every covariate (centred on the rows), keeps the ``K``
        covariate pairs ``j <= l`` whose best coarse product gains most
        (:func:`pair_blocks_screen`), and scores every column pair of those blocks
        exactly: ``6 n ((p w)^2 + K q^2)`` flops per row instead of ``6 n (pq)^2``. Where
        the ``K`` blocks hold every covariate pair the scores are the exhaustive ones.

    Returns:
      :class:`PairScores`: per row the best pair (lowest flat index ``a*pq + b`` among
      ``a <= b`` within ``tie_rtol * rss`` of the row's best; with ``blocks``, among the
      kept blocks' pairs).

    Raises:
      ValueError: if ``slots`` does not have shape ``(max_rows,)``, ``max_rows < 1`` or
        ``blocks < 0``.
      TypeError: if ``max_rows`` or ``blocks`` is not a Python int.
    """
    _check_blocks(blocks, zero=True)
    rows = _PairRows(program, data, basis, max_rows, slots)
    p, q = rows.p, rows.q
    pq = p * q
    allowed = rows.allowed

    if not blocks:
        upper = (jnp.arange(pq)[:, None] <= jnp.arange(pq)[None, :]) & allowed[:, None] \
            & allowed[None, :]

        def one_row(row):
            def body(acc, ch):
                u, r, e = rows.terms(row, ch)
                return (scoring.merge(acc[0], gram_moments(u, r, ch[2], rows.design(ch),
                                                           precision)),
                        scoring.merge(acc[1], scalar_moments(ch[2], e))), None

            mo, mo_e = rows.accumulate(body, (pq, pq))
            fit = scoring.closed_form(mo)
            sse = jnp.where(upper & rows.row_ok[row] & jnp.isfinite(fit.sse), fit.sse, jnp.inf)
            rss = _rss(program, mo_e)
            idx = _select_flat(sse, rss)
            a, b = idx // pq, idx % pq
            return (sse[a, b], fit.weight[a, b], fit.intercept[a, b] + program.intercept,
                    a, b, rss)
    else:
        screen = rows.screen(blocks, precision)

        def one_row(row):
            j, l, ok, mo_e = screen(row)

            def exact(acc, ch):
                u, r, _ = rows.terms(row, ch)
                phi = rows.design(ch).reshape(-1, p, q)
                return (scoring.merge(acc[0], block_moments(u, r, ch[2], phi[:, j], phi[:, l],
                                                            precision)), acc[1]), None

            mo, _ = rows.accumulate(exact, (j.shape[0], q, q))
            fit = scoring.closed_form(mo)
            i = jnp.arange(q, dtype=jnp.int32)
            a = j[:, None, None] * q + i[None, :, None]
            b = l[:, None, None] * q + i[None, None, :]
            ok = ok[:, None, None] & (a <= b) & allowed[a] & allowed[b] & rows.row_ok[row]
            sse = jnp.where(ok & jnp.isfinite(fit.sse), fit.sse, jnp.inf).reshape(-1)
            a = jnp.broadcast_to(a, fit.sse.shape).reshape(-1)
            b = jnp.broadcast_to(b, fit.sse.shape).reshape(-1)
            # the exhaustive rule (_select_flat) on the kept pairs: the lowest a*pq + b within
            # the tie rule, as the lowest a, then the lowest b (a*pq + b may pass int32)
            rss = _rss(program, mo_e)
            near = sse <= jnp.min(sse) + scoring.tie_rtol(sse.dtype) * rss
            top = jnp.iinfo(jnp.int32).max
            pick = jnp.argmin(jnp.where(near & (a == jnp.min(jnp.where(near, a, top))), b, top))
            return (sse[pick], fit.weight.reshape(-1)[pick],
                    fit.intercept.reshape(-1)[pick] + program.intercept, a[pick], b[pick], rss)

    sse, w, a0, ca, cb, rss = jax.lax.map(one_row, jnp.arange(2 * max_rows))
    return PairScores(sse, w, a0, ca, cb, rows.slots, rss[0])


def pair_blocks(program: prog.Program, data: scoring.Data, basis, *, max_rows: int,
                blocks: int, slots: Optional[jax.Array] = None, precision=_HIGHEST):
    """The covariate pairs the pre-screen of :func:`score_pairs` (``blocks``) keeps per row.

    Args:
      program, data, basis, max_rows, slots, precision: as for :func:`score_pairs`.
      blocks: how many covariate pairs each row keeps (static, ``>= 1``).

    Returns:
      ``(j, l, ok)``, each ``(2R, min(blocks, p*p))``: row ``2*r + op``'s kept pairs
      ``j <= l`` (:func:`pair_blocks_screen`), ``ok`` False on padding picks (fewer valid
      pairs than ``blocks``).
    """
    _check_blocks(blocks, zero=False)
    rows = _PairRows(program, data, basis, max_rows, slots)
    screen = rows.screen(blocks, precision)
    return jax.lax.map(lambda row: screen(row)[:3], jnp.arange(2 * max_rows))


def _check_blocks(blocks, zero: bool) -> None:
    """The pre-screen's block count: ``>= 1``, or 0 where ``zero`` (every pair scored)."""
    _check_rows("blocks", blocks, 0 if zero else 1,
                "It is the number of covariate pairs the pre-screen keeps"
                + (" (0: score every pair)." if zero else "."))


class _PairRows:
    """What every row of the pair scorers reads: the scored slots and which rows are
    candidates, the allowed columns, each row's regressor and target per chunk, the design,
    the scan over chunks, and the covariate pre-screen."""

    def __init__(self, program, data, basis, max_rows, slots):
        _check_rows("max_rows", max_rows)
        if slots is None:
            slots = prog.leaf_slots(program, max_rows)
        slots = jnp.asarray(slots, jnp.int32)
        if tuple(slots.shape) != (max_rows,):
            raise ValueError(f"slots must have shape (max_rows,) = ({max_rows},); got "
                             f"{tuple(slots.shape)}. Pad with -1 or change max_rows.")
        self.program, self.data, self.basis, self.slots = program, data, basis, slots
        self.p, self.q, self.dt = data.x.shape[-1], basis.q, data.x.dtype
        empty = program.n_slots == 0
        is_leaf = (slots >= 0) & (program.op[jnp.maximum(slots, 0)] == prog.LEAF)
        self.row_ok = jnp.where(empty, jnp.arange(2 * max_rows) == 0, jnp.repeat(is_leaf, 2))
        self.allowed = (jnp.ones((self.p * self.q,), bool) if data.allowed is None
                        else data.allowed)

    def terms(self, row, ch):
        """Row ``row``'s regressor multiplier ``u``, target ``r`` and residual ``e`` on
        the chunk ``ch = (x, y, w, phi)``."""
        xb, yb, _, phb = ch
        kl, cl, e = scoring.leaf_terms(self.program, self.slots[row // 2][None], xb, yb,
                                       self.basis, phb)
        kc = kl[0] * cl[0]
        mul = row % 2 == 1
        return jnp.where(mul, kc, kl[0]), jnp.where(mul, e + kc, e), e

    def design(self, ch):
        """The chunk's design, feature-major ``(m, p*q)`` (the kept values where there are)."""
        xb, _, _, phb = ch
        return scoring.to_feature_major(scoring.design(xb, self.basis) if phb is None else phb,
                                        self.q, self.p)

    def accumulate(self, body, shape):
        """``(moments, residual moments)`` of ``body`` scanned over the live chunks, the
        products' moments of ``shape`` starting at zero."""
        d, z0, z = self.data, jnp.zeros((), self.dt), jnp.zeros(shape, self.dt)
        init = (scoring.Moments(z0, z0, z, z0, z, z), _zero_scalar_moments((), self.dt))
        return scoring.scan_live(body, init, (d.x, d.y, d.w, d.phi), d.w)[0]

    def screen(self, blocks, precision):
        """``row -> (j, l, ok, residual moments)``: the row's ``blocks`` kept covariate
        pairs (:func:`pair_blocks_screen` of its centred coarse products)."""
        p, width, d = self.p, PAIR_SCREEN_WIDTH, self.data
        z0 = jnp.zeros((), self.dt)
        kept = min(blocks, p * p)
        feature_ok = self.allowed.reshape(p, self.q).any(axis=1)
        # The coarse columns' weighted means on the rows: centred products carry no main
        # effect of either covariate, so strong main effects do not fill the blocks.
        sums = jax.lax.scan(
            lambda acc, ch: ((acc[0] + jnp.einsum("m,mpk->pk", ch[1],
                                                  coarse_design(ch[0], width)),
                              acc[1] + jnp.sum(ch[1])), None),
            (jnp.zeros((p, width), self.dt), z0), (d.x, d.w))[0]
        zbar = scoring.safe_div(sums[0], sums[1])

        def one_row(row):
            def coarse(acc, ch):
                u, r, e = self.terms(row, ch)
                z = (coarse_design(ch[0], width) - zbar).reshape(-1, p * width)
                return (scoring.merge(acc[0], gram_moments(u, r, ch[2], z, precision)),
                        scoring.merge(acc[1], scalar_moments(ch[2], e))), None

            mo, mo_e = self.accumulate(coarse, (p * width, p * width))
            return (*pair_blocks_screen(mo, feature_ok, kept), mo_e)

        return one_row


PAIR_SCREEN_WIDTH = 6
"""Coarse functions per covariate in the pair pre-screen (:func:`score_pairs`' ``blocks``):
``cos(k pi x)``, ``k = 1..6``, whose products resolve an interaction of up to three periods
along each covariate whatever the basis."""


def select_pair(scores: PairScores, q: int) -> PairChoice:
    """The best row (lowest row index within ``tie_rtol * rss``) and its pair.

    Args:
      scores: the :class:`PairScores` of :func:`score_pairs`.
      q: number of basis functions per feature.
    """
    row = _select_flat(scores.sse, scores.rss)
    slot = scores.leaf_slots[row // 2]
    op = jnp.where(row % 2 == 0, prog.ADD, prog.MUL).astype(jnp.int32)
    ca, cb = scores.col_a[row], scores.col_b[row]
    return PairChoice(row, slot, op, ca // q, ca % q, cb // q, cb % q, scores.weight[row],
                      scores.intercept[row], scores.sse[row])


def apply_pair(program: prog.Program, choice: PairChoice) -> prog.Program:
    """Inserts ``V op w' phi_a`` and then ``* 1.0 phi_b`` at the new leaf; sets ``w0``.

    Both steps are :func:`jaxtree.program.insert`; the caller guarantees room
    (two more operations; one leaf from empty). On the empty program the pair becomes the whole tree.

    Args:
      program: the current tree, with room for two more operations.
      choice: the :class:`PairChoice` of :func:`select_pair`.
    """
    one = prog.insert(program, choice.slot, choice.op, choice.feature_a, choice.basis_a,
                      choice.weight)
    new_leaf = jnp.where(program.n_slots == 0, 0, program.n_slots + 1)
    two = prog.insert(one, new_leaf, prog.MUL, choice.feature_b, choice.basis_b, 1.0)
    return two._replace(intercept=choice.intercept.astype(two.intercept.dtype))
