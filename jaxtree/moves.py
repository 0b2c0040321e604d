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


def _check_rows(name: str, value) -> None:
    """Static row counts are Python ints >= 1 (checked before tracing)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be a Python int (static); got {type(value).__name__}.")
    if value < 1:
        raise ValueError(f"{name} must be >= 1; got {value}. Use the program's max_k + 1 to "
                         "score every leaf.")


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
    n = jnp.sum(wb)
    rbar = scoring.safe_div(jnp.sum(wb * r), n)
    rc = r - rbar
    wu = wb * u
    gram = lambda a, b: jnp.matmul(a.T, b, precision=precision)
    phi2 = phi * phi
    s1 = gram(phi * wu[:, None], phi)
    s2 = gram(phi2 * (wu * u)[:, None], phi2)
    mrs = gram(phi * (wu * rc)[:, None], phi)
    sbar = scoring.safe_div(s1, n)
    return scoring.Moments(n, rbar, sbar, jnp.sum(wb * rc * rc),
                           jnp.maximum(s2 - s1 * sbar, 0), mrs)


def score_pairs(program: prog.Program, data: scoring.Data, basis, *, max_rows: int,
                slots: Optional[jax.Array] = None, precision=_HIGHEST) -> PairScores:
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

    Returns:
      :class:`PairScores`: per row the best pair (lowest flat index ``a*pq + b`` among
      ``a <= b`` within ``tie_rtol * rss`` of the row's best).

    Raises:
      ValueError: if ``slots`` does not have shape ``(max_rows,)`` or ``max_rows < 1``.
      TypeError: if ``max_rows`` is not a Python int.
    """
    _check_rows("max_rows", max_rows)
    if slots is None:
        slots = prog.leaf_slots(program, max_rows)
    slots = jnp.asarray(slots, jnp.int32)
    if tuple(slots.shape) != (max_rows,):
        raise ValueError(f"slots must have shape (max_rows,) = ({max_rows},); got "
                         f"{tuple(slots.shape)}. Pad with -1 or change max_rows.")
    p, q = data.x.shape[-1], basis.q
    pq = p * q
    dt = data.x.dtype
    empty = program.n_slots == 0
    is_leaf = (slots >= 0) & (program.op[jnp.maximum(slots, 0)] == prog.LEAF)
    row_ok = jnp.where(empty, jnp.arange(2 * max_rows) == 0, jnp.repeat(is_leaf, 2))
    upper = jnp.arange(pq)[:, None] <= jnp.arange(pq)[None, :]
    if data.allowed is not None:  # both factors of a pair nonzero on enough rows
        upper = upper & data.allowed[:, None] & data.allowed[None, :]

    def one_row(row):
        rank, mul = row // 2, row % 2 == 1
        sl = slots[rank][None]

        def body(acc, ch):
            xb, yb, wb, phb = ch
            kl, cl, e = scoring.leaf_terms(program, sl, xb, yb, basis, phb)
            kc = kl[0] * cl[0]
            u = jnp.where(mul, kc, kl[0])
            r = jnp.where(mul, e + kc, e)
            phi = scoring.design(xb, basis) if phb is None else phb
            phi = scoring.to_feature_major(phi, q, p)
            return (scoring.merge(acc[0], gram_moments(u, r, wb, phi, precision)),
                    scoring.merge(acc[1], scalar_moments(wb, e))), None

        z = jnp.zeros((pq, pq), dt)
        z0 = jnp.zeros((), dt)
        init = (scoring.Moments(z0, z0, z, z0, z, z), _zero_scalar_moments((), dt))
        (mo, mo_e), _ = scoring.scan_live(body, init, (data.x, data.y, data.w, data.phi),
                                          data.w)
        rss = _rss(program, mo_e)
        fit = scoring.closed_form(mo)
        sse = jnp.where(upper & row_ok[row] & jnp.isfinite(fit.sse), fit.sse, jnp.inf)
        idx = _select_flat(sse, rss)
        a, b = idx // pq, idx % pq
        return (sse[a, b], fit.weight[a, b], fit.intercept[a, b] + program.intercept,
                a, b, rss)

    sse, w, a0, ca, cb, rss = jax.lax.map(one_row, jnp.arange(2 * max_rows))
    return PairScores(sse, w, a0, ca, cb, slots, rss[0])


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
