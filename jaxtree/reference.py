"""Plain numpy reference of the paper's greedy search (the correctness oracle).

Why one long file: it is the paper's Algorithms 1 and 2 written out loop by loop on
purpose, so that it reads against the paper and shares no code with the engine it checks.

This module follows Section 5 and Appendix C of Xu, Honorio and Wang, "On the
Statistical Efficiency of Compositional Nonparametric Prediction"
(``paper/compositional-nonparametric-prediction.tex``) step by step. It is loop based
(over leaves, operations, covariates and basis functions), float64 throughout, and
vectorised over samples only. It is the oracle the JAX engine is compared against and
its speed baseline: never optimise it.

The model
---------
A weighted labeled binary tree ``T`` with ``k`` operation nodes (``+`` or ``*``) and
``k + 1`` leaves; a leaf is ``w * phi_i(x_j)`` with ``|w| <= 1``. The prediction is
``yhat = w0 + T(x)`` with a free intercept ``w0``. All functions take the basis values
``phi`` of shape ``(n, p, q)``, ``phi[s, j, i] = phi_i(x_sj)``, already evaluated.

Tree layout ("slot arrays", shared with the JAX engine)
--------------------------------------------------------
Capacity ``S = 2 * max_k + 1`` slots. ``op[s]`` is ``EMPTY`` (0), ``LEAF`` (1), ``ADD`` (2)
or ``MUL`` (3); ``left``/``right`` are child slots (-1 if none); ``feature``/``basis`` are
0-based (-1 for non-leaves); ``weight`` is 0 for non-leaves. The root is slot 0. Inserting
op ``o`` with new leaf ``(j, i, w')`` at leaf slot ``d`` when ``n_slots == m`` copies the
old leaf to slot ``m``, puts the new leaf in slot ``m + 1`` and turns slot ``d`` into
``o`` with ``left = m``, ``right = m + 1``. Children therefore always have higher slots
than their parent.

Map to the paper
----------------
- :func:`evaluate`, :func:`evaluate_subtree`: ``evaluate`` in Algorithm 2 (recursive
  evaluation of a weighted labeled tree); :func:`evaluate` adds the intercept ``w0``.
- :func:`path_to`: ``path(f_w.root, node)`` in Algorithm 1.
- :func:`leaf_multipliers`: Algorithm 2, literally: walk the path from the root; at each
  op node evaluate the subtree *not* on the path (``val``); ``+``: ``b += val * k``;
  ``*``: ``k *= val``. Then ``T = b + k * c`` with ``c`` the leaf's value.
- :func:`fit_candidate`: the one-dimensional problem inside the two ``argmin`` lines of
  Algorithm 1, ``min_{w0', |w'| <= 1} sum_m sw_m (r_m - w0' - w' s_m)^2``, in closed form
  (centred sums computed directly on the centred vectors; the profile loss in ``w'`` is a
  convex parabola, so clipping the unconstrained solution to ``[-1, 1]`` is exact).
- :func:`score_candidates`: the ``argmin`` lines of Algorithm 1 for every leaf, both
  operations and every ``(i', j')``; with the tree given as ``None`` it is the
  initialisation line ``f_w = w0 + w1 phi_{i1}(x_{j1})``. Regressors per candidate at leaf
  ``d`` with value ``c_d`` (Algorithm 1 expands ``y - w0' - b - k(c + w' phi)`` and
  ``y - w0' - b - k(c w' phi)``):

  ===============  =====================  ==========================
  candidate        target ``r``           regressor ``s``
  ===============  =====================  ==========================
  first leaf       ``y``                  ``phi_ij(x)``
  ``V + w'phi``    ``y - T``              ``k_d * phi_ij(x)``
  ``V * w'phi``    ``y - b_d``            ``k_d * c_d * phi_ij(x)``
  ===============  =====================  ==========================

- :func:`insert`: "Insert the new leaf ... at node with '+' / '*'" in Algorithm 1.
- :func:`refine_coordinate`: "Adjust all weights" (coordinate descent, Section 5).
- :func:`fit`: Algorithm 1 as a whole.

Decisions (shared with the JAX engine, which must make exactly the same choices)
--------------------------------------------------------------------------------
1. ``k`` counts insertions: the fitted tree has ``2k + 1`` nodes and ``k + 1`` leaves, the
   paper's meaning of ``k`` ("k=10" is 21 nodes). Algorithm 1 as printed loops
   ``iters = 1 to k - 1``; we run ``k`` iterations.
2. In each iteration all candidates are scored on the current tree, the best one over all
   leaves is inserted, and THEN all weights are adjusted once. Algorithm 1 as printed
   adjusts the weights inside the per-leaf loop, but the score ``r_node`` it compares is
   computed before that adjustment, so it selects the same insertion; we adjust only the
   chosen tree. No adjustment follows the initial leaf (it is already optimal).
3. Candidate order (flat index): ``((leaf_rank * 2 + op_idx) * p + j) * q + i`` with leaves
   ranked in ascending slot order and ``op_idx`` 0 for ``+``, 1 for ``*``; for the first
   leaf ``j * q + i``. This is the C-order ravel of the ``(D, 2, p, q)`` score array.
4. Ties are real (under a chain of ``+`` nodes every ``+`` insertion is the same
   function). With ``m`` the minimum SSE and ``rss = sum sw (y - yhat)^2`` of the current
   tree (``tss = sum sw (y - ybar_w)^2`` for the empty tree), the chosen
   candidate is the LOWEST flat index with ``SSE <= m + 1e-9 * rss``.
5. A candidate is degenerate when ``Css <= 1e-10 * sum sw s^2`` (this includes
   ``s == 0``): then ``w' = 0``, ``SSE = Crr``, ``a = rbar``.
6. After an insertion the new leaf gets the candidate's ``w'`` and the intercept the
   candidate's ``a``. With ``refine="coordinate"``, ``sweeps`` passes over the leaves in
   ascending slot order follow: each leaf's weight is the clipped 1-D fit of
   ``r = y - b_d`` on ``s = k_d * phi_d(x)`` (``b_d, k_d`` from Algorithm 2 with the
   current weights), and the intercept is that fit's ``a``; if the fit is degenerate the
   weight is kept and the intercept becomes ``mean_w(y - T)``.
7. The paper's loss is ``sum (y - yhat)^2 / 2``; the comparisons use the (weighted) sum of
   squares, which orders candidates identically. ``history`` reports the weighted MSE
   ``sum sw (y - yhat)^2 / sum sw``.

Classification (``loss="logistic"`` or ``"margin"``; labels ``y = +-1``)
------------------------------------------------------------------------
The same search on the logit ``f = w0 + T(x)`` (the paper's second problem, Section 3),
written from the math of DESIGN.md section 9, as the oracle of the JAX engine's
:mod:`jaxtree.losses`:

- :func:`newton_rows`: per row the loss's gradient ``g`` and curvature ``h`` at the current
  ``f``; the working response ``z = f - g / h`` and the Newton weight ``h``. Logistic loss
  ``log(1 + exp(-y f))``: ``h`` floored at :data:`H_MIN`. Margin loss: the search minimises
  the squared hinge ``max(0, 1 - y f)^2 / 2`` (the paper's ramp ``min(1, max(0, 1 - y f))``
  is flat and non-convex: no Newton step exists), whose Newton step is exact: ``h = 1`` and
  ``z = y`` inside the margin (``y f < 1``), ``h = 0`` outside. The ramp is reported.
- Scoring (:func:`score_newton`): one Newton step per candidate is the minimum over the
  intercept and ``|w'| <= 1`` of ``sum sw (g D + h D^2 / 2)`` with ``D`` the candidate's change
  of ``f``, i.e. :func:`score_candidates` on the working data ``(z, sw * h)`` (its SSE is
  ``2 Q + sum sw g^2 / h``, so the candidates are ranked by the Newton model ``Q``).
- Refinement (:func:`refine_coordinate_newton`, ``refine="coordinate"``): iteratively
  reweighted coordinate descent. Each sweep takes the working data at the sweep's start,
  makes one :func:`refine_coordinate` pass on it, and keeps the result only if the search's
  loss fell. It also follows the first leaf (one Newton step does not minimise the loss).
- The search starts from the empty tree (:func:`empty_tree`) with intercept
  ``log(p / (1 - p))``, ``p`` the weighted share of ``y = +1`` (logistic), or 0 (margin).
- ``history`` is the weighted mean reported loss (log-loss, or the ramp).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "EMPTY",
    "LEAF",
    "ADD",
    "MUL",
    "TIE_RTOL",
    "DEGENERATE_RTOL",
    "ReferenceTree",
    "FitResult",
    "single_leaf",
    "evaluate",
    "evaluate_subtree",
    "path_to",
    "leaf_multipliers",
    "leaves",
    "fit_candidate",
    "score_candidates",
    "select_candidate",
    "weighted_tss",
    "insert",
    "refine_coordinate",
    "weighted_mse",
    "fit",
    "CLASSIFICATION_LOSSES",
    "H_MIN",
    "StepRecord",
    "empty_tree",
    "logit",
    "search_loss",
    "reported_loss",
    "mean_loss",
    "newton_rows",
    "score_newton",
    "refine_coordinate_newton",
    "start_intercept",
    "step",
]

EMPTY, LEAF, ADD, MUL = 0, 1, 2, 3
"""Op codes of a slot: empty padding, leaf ``w * phi_i(x_j)``, ``+`` node, ``*`` node."""

TIE_RTOL = 1e-9
"""Candidates within ``TIE_RTOL * rss`` of the best SSE are ties (lowest flat index wins)."""

DEGENERATE_RTOL = 1e-10
"""A regressor with ``Css <= DEGENERATE_RTOL * sum sw s^2`` is degenerate (constant)."""

CLASSIFICATION_LOSSES = ("logistic", "margin")
"""The classification losses (labels ``y = +-1``); ``"squared"`` is regression."""

H_MIN = 1e-4
"""Floor of the logistic curvature ``h`` in the Newton step (the value of
:data:`jaxtree.losses.H_MIN`, repeated here so that this module needs numpy only)."""

_OPS = (ADD, MUL)  # op_idx 0 -> '+', 1 -> '*'
_VALID_REFINE = ("coordinate", None)
_VALID_LOSSES = ("squared",) + CLASSIFICATION_LOSSES


@dataclasses.dataclass
class ReferenceTree:
    """A weighted labeled binary tree in slot-array layout.

    Attributes:
        op: int array (S,): ``EMPTY``, ``LEAF``, ``ADD`` or ``MUL`` per slot.
        left: int array (S,): left child slot, -1 if none.
        right: int array (S,): right child slot, -1 if none.
        feature: int array (S,): covariate ``j`` (0-based) of a leaf, -1 otherwise.
        basis: int array (S,): basis function ``i`` (0-based) of a leaf, -1 otherwise.
        weight: float64 array (S,): leaf weight, 0 otherwise.
        intercept: the free intercept ``w0``.
        n_slots: number of slots in use (slots ``0 .. n_slots - 1``).

    ``S = 2 * max_k + 1``; the root is slot 0.
    """

    op: np.ndarray
    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    basis: np.ndarray
    weight: np.ndarray
    intercept: float
    n_slots: int

    @property
    def max_k(self) -> int:
        """The number of operations the capacity allows, ``(S - 1) // 2``."""
        return (len(self.op) - 1) // 2

    @property
    def n_ops(self) -> int:
        """The number of operation nodes in use, ``(n_slots - 1) // 2``."""
        return (self.n_slots - 1) // 2

    def copy(self) -> ReferenceTree:
        """Returns a deep copy (arrays copied)."""
        return ReferenceTree(
            op=self.op.copy(),
            left=self.left.copy(),
            right=self.right.copy(),
            feature=self.feature.copy(),
            basis=self.basis.copy(),
            weight=self.weight.copy(),
            intercept=float(self.intercept),
            n_slots=int(self.n_slots),
        )


@dataclasses.dataclass
class FitResult:
    """The output of :func:`fit`.

    Attributes:
        tree: the fitted :class:`ReferenceTree`, capacity ``2k + 1``.
        history: ``k + 1`` floats, the weighted training MSE after the initial leaf and
            after each iteration (after its refinement).
        choices: ``k + 1`` tuples ``(flat_index, op, leaf_slot, feature, basis)``: the
            chosen candidate per step. For the initial leaf ``op`` is ``LEAF`` and
            ``leaf_slot`` is 0.
    """

    tree: ReferenceTree
    history: list[float]
    choices: list[tuple[int, int, int, int, int]]


def single_leaf(
    max_k: int, feature: int, basis: int, weight: float, intercept: float = 0.0
) -> ReferenceTree:
    """Builds the initial tree: one leaf ``weight * phi_basis(x_feature)`` at slot 0.

    Args:
        max_k: capacity in operations; the tree gets ``2 * max_k + 1`` slots.
        feature: covariate index ``j`` (0-based).
        basis: basis function index ``i`` (0-based).
        weight: the leaf weight.
        intercept: the intercept ``w0``.

    Returns:
        A :class:`ReferenceTree` with ``n_slots == 1``.
    """
    n_total = 2 * int(max_k) + 1
    tree = ReferenceTree(
        op=np.full(n_total, EMPTY, dtype=np.int64),
        left=np.full(n_total, -1, dtype=np.int64),
        right=np.full(n_total, -1, dtype=np.int64),
        feature=np.full(n_total, -1, dtype=np.int64),
        basis=np.full(n_total, -1, dtype=np.int64),
        weight=np.zeros(n_total, dtype=np.float64),
        intercept=float(intercept),
        n_slots=1,
    )
    tree.op[0] = LEAF
    tree.feature[0] = feature
    tree.basis[0] = basis
    tree.weight[0] = weight
    return tree


# ----------------------------------------------------------------------------------------
# Evaluation and Algorithm 2
# ----------------------------------------------------------------------------------------


def evaluate_subtree(tree: ReferenceTree, slot: int, phi: np.ndarray) -> np.ndarray:
    """Value of the subtree rooted at ``slot`` (no intercept), by recursion.

    This is ``evaluate(subtree, x_m)`` of Algorithm 2, for all samples at once.

    Args:
        tree: the tree.
        slot: root slot of the subtree.
        phi: float64 array (n, p, q), ``phi[s, j, i] = phi_i(x_sj)``.

    Returns:
        float64 array (n,).
    """
    op = tree.op[slot]
    if op == LEAF:
        return tree.weight[slot] * phi[:, tree.feature[slot], tree.basis[slot]]
    if op == ADD:
        return evaluate_subtree(tree, tree.left[slot], phi) + evaluate_subtree(
            tree, tree.right[slot], phi
        )
    if op == MUL:
        return evaluate_subtree(tree, tree.left[slot], phi) * evaluate_subtree(
            tree, tree.right[slot], phi
        )
    raise ValueError(f"slot {slot} is EMPTY; it is not part of the tree")


def evaluate(tree: ReferenceTree, phi: np.ndarray) -> np.ndarray:
    """Prediction ``w0 + T(x)``.

    Args:
        tree: the tree.
        phi: float64 array (n, p, q) of basis values.

    Returns:
        float64 array (n,).
    """
    phi = np.asarray(phi, dtype=np.float64)
    return tree.intercept + evaluate_subtree(tree, 0, phi)


def leaves(tree: ReferenceTree) -> list[int]:
    """The leaf slots in ascending slot order (a leaf's position here is its rank).

    Args:
        tree: the tree.
    """
    return [s for s in range(tree.n_slots) if tree.op[s] == LEAF]


def path_to(tree: ReferenceTree, slot: int) -> list[tuple[int, str]]:
    """``path(root, node)`` of Algorithm 1: the op nodes from the root to ``slot``.

    Args:
        tree: the tree.
        slot: the target slot (usually a leaf).

    Returns:
        A list of ``(node_slot, direction)`` with ``direction`` ``"left"`` or ``"right"``:
        the child of ``node_slot`` to follow. Empty when ``slot`` is the root.

    Raises:
        ValueError: if ``slot`` is not reachable from the root.
    """

    def walk(node: int) -> list[tuple[int, str]] | None:
        if node == slot:
            return []
        if tree.op[node] in (ADD, MUL):
            for direction, child in (("left", tree.left[node]), ("right", tree.right[node])):
                rest = walk(int(child))
                if rest is not None:
                    return [(node, direction)] + rest
        return None

    path = walk(0)
    if path is None:
        raise ValueError(f"slot {slot} is not in the tree (n_slots={tree.n_slots})")
    return path


def leaf_multipliers(
    tree: ReferenceTree, slot: int, phi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 2: ``b(x)`` and ``k(x)`` with ``T(x) = b(x) + k(x) * c(x)`` for a leaf.

    ``c`` is the leaf's value ``w * phi_i(x_j)``. Walks the path from the root; at each
    op node evaluates the subtree off the path (``val``); at ``+``: ``b = b + val * k``;
    at ``*``: ``k = val * k``.

    Args:
        tree: the tree.
        slot: the leaf slot.
        phi: float64 array (n, p, q) of basis values.

    Returns:
        ``(b, k)``, two float64 arrays (n,).
    """
    phi = np.asarray(phi, dtype=np.float64)
    n = phi.shape[0]
    b = np.zeros(n, dtype=np.float64)
    k = np.ones(n, dtype=np.float64)
    for node, direction in path_to(tree, slot):
        other = tree.right[node] if direction == "left" else tree.left[node]
        val = evaluate_subtree(tree, int(other), phi)
        if tree.op[node] == ADD:
            b = b + val * k
        elif tree.op[node] == MUL:
            k = val * k
    return b, k


# ----------------------------------------------------------------------------------------
# One candidate: the clipped one-dimensional least squares
# ----------------------------------------------------------------------------------------


def _solve(
    r: np.ndarray, s: np.ndarray, sw: np.ndarray
) -> tuple[float, float, float, bool]:
    """``min_{a, |w| <= 1} sum sw (r - a - w s)^2``; returns ``(w, a, sse, degenerate)``."""
    n_w = np.sum(sw)
    r_mean = np.sum(sw * r) / n_w
    s_mean = np.sum(sw * s) / n_w
    rc = r - r_mean
    sc = s - s_mean
    css = np.sum(sw * sc * sc)
    crs = np.sum(sw * rc * sc)
    crr = np.sum(sw * rc * rc)
    if css <= DEGENERATE_RTOL * np.sum(sw * s * s):
        return 0.0, float(r_mean), float(crr), True
    w = float(np.clip(crs / css, -1.0, 1.0))
    sse = crr - 2.0 * w * crs + w * w * css
    a = r_mean - w * s_mean
    return w, float(a), float(sse), False


def fit_candidate(
    r: np.ndarray, s: np.ndarray, sw: np.ndarray | None = None
) -> tuple[float, float, float]:
    """Best intercept and clipped weight of ``r ~ a + w * s``, in closed form.

    Solves ``min_{a, |w| <= 1} sum sw (r - a - w s)^2``. With ``N = sum sw`` and weighted
    means ``rbar, sbar``: ``Css = sum sw (s - sbar)^2``, ``Crs = sum sw (r - rbar)(s - sbar)``,
    ``Crr = sum sw (r - rbar)^2``. If ``Css <= 1e-10 * sum sw s^2`` (degenerate, includes
    ``s == 0``): ``w = 0``, ``sse = Crr``, ``a = rbar``. Otherwise
    ``w = clip(Crs / Css, -1, 1)``, ``sse = Crr - 2 w Crs + w^2 Css``, ``a = rbar - w sbar``.

    Args:
        r: float64 array (n,), the target.
        s: float64 array (n,), the regressor.
        sw: float64 array (n,) of non-negative sample weights with a positive sum, or
            ``None`` for ones.

    Returns:
        ``(w, a, sse)`` as floats.
    """
    r = np.asarray(r, dtype=np.float64)
    s = np.asarray(s, dtype=np.float64)
    sw = np.ones_like(r) if sw is None else np.asarray(sw, dtype=np.float64)
    w, a, sse, _ = _solve(r, s, sw)
    return w, a, sse


# ----------------------------------------------------------------------------------------
# All candidates of one iteration
# ----------------------------------------------------------------------------------------


def score_candidates(
    tree: ReferenceTree | None,
    phi: np.ndarray,
    y: np.ndarray,
    sw: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scores every candidate insertion (the ``argmin`` lines of Algorithm 1).

    One :func:`fit_candidate` call per candidate.

    Args:
        tree: the current tree, or ``None`` for the empty tree (the initial leaf).
        phi: float64 array (n, p, q) of basis values.
        y: float64 array (n,) of targets.
        sw: float64 array (n,) of sample weights, or ``None`` for ones.

    Returns:
        ``(sse, w, a)``: float64 arrays of shape ``(D, 2, p, q)`` indexed by
        ``[leaf_rank, op_idx, j, i]`` (``op_idx`` 0 for ``+``, 1 for ``*``), or ``(p, q)``
        when ``tree`` is ``None``. ``sse`` is the weighted SSE, ``w`` the new leaf's
        weight, ``a`` the intercept.
    """
    phi = np.asarray(phi, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    sw = np.ones_like(y) if sw is None else np.asarray(sw, dtype=np.float64)
    _, p, q = phi.shape

    if tree is None:  # Initialisation line of Algorithm 1: r = y, s = phi_ij(x).
        sse = np.empty((p, q), dtype=np.float64)
        w = np.empty((p, q), dtype=np.float64)
        a = np.empty((p, q), dtype=np.float64)
        for j in range(p):
            for i in range(q):
                w[j, i], a[j, i], sse[j, i] = fit_candidate(y, phi[:, j, i], sw)
        return sse, w, a

    leaf_slots = leaves(tree)
    n_leaves = len(leaf_slots)
    sse = np.empty((n_leaves, 2, p, q), dtype=np.float64)
    w = np.empty((n_leaves, 2, p, q), dtype=np.float64)
    a = np.empty((n_leaves, 2, p, q), dtype=np.float64)
    t_value = evaluate_subtree(tree, 0, phi)
    for rank, slot in enumerate(leaf_slots):
        b_d, k_d = leaf_multipliers(tree, slot, phi)
        c_d = tree.weight[slot] * phi[:, tree.feature[slot], tree.basis[slot]]
        for op_idx, op in enumerate(_OPS):
            if op == ADD:  # y - w0 - b - k (c + w' phi)
                r = y - t_value
                u = k_d
            else:  # y - w0 - b - k (c w' phi)
                r = y - b_d
                u = k_d * c_d
            for j in range(p):
                for i in range(q):
                    s = u * phi[:, j, i]
                    w[rank, op_idx, j, i], a[rank, op_idx, j, i], sse[rank, op_idx, j, i] = (
                        fit_candidate(r, s, sw)
                    )
    return sse, w, a


def weighted_tss(y: np.ndarray, sw: np.ndarray | None = None) -> float:
    """Weighted, centred total sum of squares ``sum sw (y - ybar_w)^2``."""
    y = np.asarray(y, dtype=np.float64)
    sw = np.ones_like(y) if sw is None else np.asarray(sw, dtype=np.float64)
    y_mean = np.sum(sw * y) / np.sum(sw)
    yc = y - y_mean
    return float(np.sum(sw * yc * yc))


def select_candidate(sse: np.ndarray, rss: float) -> int:
    """The tie rule: the lowest flat index with ``sse <= min(sse) + 1e-9 * rss``.

    Args:
        sse: array of candidate SSEs, any shape (raveled in C order).
        rss: the weighted residual sum of squares of the current tree
            (:func:`weighted_tss` of ``y`` for the empty tree).

    Returns:
        The chosen flat index.
    """
    flat = np.ravel(sse)
    best = np.min(flat)
    return int(np.flatnonzero(flat <= best + TIE_RTOL * rss)[0])


# ----------------------------------------------------------------------------------------
# Insertion and weight refinement
# ----------------------------------------------------------------------------------------


def insert(
    tree: ReferenceTree, slot: int, op: int, feature: int, basis: int, weight: float
) -> ReferenceTree:
    """Replaces leaf ``slot`` by ``leaf op weight * phi_basis(x_feature)``; returns a copy.

    With ``m = n_slots``: slot ``m`` receives the old leaf, slot ``m + 1`` the new leaf,
    and slot ``slot`` becomes the op node with ``left = m``, ``right = m + 1``.

    Args:
        tree: the tree (not modified).
        slot: a leaf slot.
        op: ``ADD`` or ``MUL``.
        feature: the new leaf's covariate ``j``.
        basis: the new leaf's basis function ``i``.
        weight: the new leaf's weight.

    Returns:
        The new tree, with ``n_slots`` increased by 2.

    Raises:
        ValueError: for a non-leaf slot, an unknown op or a full tree.
    """
    if op not in _OPS:
        raise ValueError(f"op must be ADD ({ADD}) or MUL ({MUL}); got {op!r}")
    if not (0 <= slot < tree.n_slots) or tree.op[slot] != LEAF:
        raise ValueError(f"slot {slot} is not a leaf of the tree")
    m = tree.n_slots
    if m + 2 > len(tree.op):
        raise ValueError(
            f"the tree is full ({len(tree.op)} slots, max_k={tree.max_k}); "
            "create it with a larger max_k"
        )
    new = tree.copy()
    new.op[m] = LEAF
    new.feature[m] = tree.feature[slot]
    new.basis[m] = tree.basis[slot]
    new.weight[m] = tree.weight[slot]
    new.op[m + 1] = LEAF
    new.feature[m + 1] = feature
    new.basis[m + 1] = basis
    new.weight[m + 1] = weight
    new.op[slot] = op
    new.left[slot] = m
    new.right[slot] = m + 1
    new.feature[slot] = -1
    new.basis[slot] = -1
    new.weight[slot] = 0.0
    new.n_slots = m + 2
    return new


def refine_coordinate(
    tree: ReferenceTree,
    phi: np.ndarray,
    y: np.ndarray,
    sw: np.ndarray | None = None,
    sweeps: int = 3,
) -> ReferenceTree:
    """"Adjust all weights" by coordinate descent (Algorithm 1, Section 5).

    ``sweeps`` passes; in each, for every leaf in ascending slot order: ``b_d, k_d`` from
    Algorithm 2 with the current weights, then the clipped 1-D fit of ``r = y - b_d`` on
    ``s = k_d * phi_d(x)``. If it is not degenerate the leaf weight becomes ``w`` and the
    intercept ``a``; if it is, the weight is kept and the intercept becomes
    ``mean_w(y - T)``.

    Args:
        tree: the tree (not modified).
        phi: float64 array (n, p, q) of basis values.
        y: float64 array (n,) of targets.
        sw: float64 array (n,) of sample weights, or ``None`` for ones.
        sweeps: number of passes over the leaves.

    Returns:
        The refined tree (a copy).
    """
    phi = np.asarray(phi, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    sw = np.ones_like(y) if sw is None else np.asarray(sw, dtype=np.float64)
    new = tree.copy()
    for _ in range(sweeps):
        for slot in leaves(new):
            b_d, k_d = leaf_multipliers(new, slot, phi)
            phi_d = phi[:, new.feature[slot], new.basis[slot]]
            w, a, _, degenerate = _solve(y - b_d, k_d * phi_d, sw)
            if not degenerate:
                new.weight[slot] = w
                new.intercept = a
            else:
                t_value = evaluate_subtree(new, 0, phi)
                new.intercept = float(np.sum(sw * (y - t_value)) / np.sum(sw))
    return new


def weighted_mse(
    tree: ReferenceTree, phi: np.ndarray, y: np.ndarray, sw: np.ndarray | None = None
) -> float:
    """Weighted training MSE ``sum sw (y - yhat)^2 / sum sw``.

    Args:
        tree: the tree.
        phi: float64 array (n, p, q) of basis values.
        y: float64 array (n,) of targets (labels ``+-1`` for a classification loss).
        sw: float64 array (n,) of sample weights, or None for ones.
    """
    y = np.asarray(y, dtype=np.float64)
    sw = np.ones_like(y) if sw is None else np.asarray(sw, dtype=np.float64)
    resid = y - evaluate(tree, phi)
    return float(np.sum(sw * resid * resid) / np.sum(sw))


# ----------------------------------------------------------------------------------------
# Classification: the Newton-step search on the logit
# ----------------------------------------------------------------------------------------


def empty_tree(max_k: int, intercept: float = 0.0) -> ReferenceTree:
    """The tree with no leaf (``n_slots == 0``): it predicts its intercept.

    The classification search starts here (:func:`start_intercept`); the regression search
    starts from ``None``.

    Args:
        max_k: capacity in operations; the tree gets ``2 * max_k + 1`` slots.
        intercept: the intercept ``w0``.
    """
    tree = single_leaf(max_k, -1, -1, 0.0, intercept)
    tree.op[0] = EMPTY
    tree.n_slots = 0
    return tree


def logit(tree: ReferenceTree | None, phi: np.ndarray) -> np.ndarray:
    """``f = w0 + T(x)`` of a tree that may be empty (``None`` or ``n_slots == 0``: ``w0``).

    Args:
        tree: the tree, or None (the empty tree with intercept 0).
        phi: float64 array (n, p, q) of basis values.
    """
    n = np.asarray(phi).shape[0]
    if tree is None:
        return np.zeros(n, dtype=np.float64)
    if tree.n_slots == 0:
        return np.full(n, float(tree.intercept), dtype=np.float64)
    return evaluate(tree, phi)


def _sigmoid(t: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * t))  # 1 / (1 + e^-t), without overflow


def search_loss(loss: str, y: np.ndarray, f: np.ndarray) -> np.ndarray:
    """The loss the search minimises, per row: ``log(1 + e^{-y f})`` (logistic) or the
    squared hinge ``max(0, 1 - y f)^2 / 2`` (margin)."""
    if loss == "logistic":
        return np.logaddexp(0.0, -y * f)
    return 0.5 * np.maximum(0.0, 1.0 - y * f) ** 2


def reported_loss(loss: str, y: np.ndarray, f: np.ndarray) -> np.ndarray:
    """The loss reported in ``history``, per row: the log-loss, or the paper's ramp
    ``min(1, max(0, 1 - y f))`` for ``"margin"``."""
    if loss == "margin":
        return np.clip(1.0 - y * f, 0.0, 1.0)
    return search_loss(loss, y, f)


def mean_loss(loss: str, tree: ReferenceTree | None, phi: np.ndarray, y: np.ndarray,
              sw: np.ndarray, report: bool = False) -> float:
    """Weighted mean of :func:`search_loss` (or of :func:`reported_loss` if ``report``).

    Args:
        loss: ``"squared"``, ``"logistic"`` or ``"margin"``.
        tree: the tree, or None (the empty tree with intercept 0).
        phi: float64 array (n, p, q) of basis values.
        y: float64 array (n,) of targets (labels ``+-1`` for a classification loss).
        sw: float64 array (n,) of sample weights.
        report: average :func:`reported_loss` instead.
    """
    fn = reported_loss if report else search_loss
    return float(np.sum(sw * fn(loss, y, logit(tree, phi))) / np.sum(sw))


def newton_rows(loss: str, y: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(z, h)``: working response and Newton weight per row at the logit ``f``.

    Logistic: ``g = -y sigmoid(-y f)``, ``h = max(sigmoid(f) sigmoid(-f), H_MIN)``.
    Margin (squared hinge): ``g = -y max(0, 1 - y f)``, ``h = 1`` where ``y f < 1`` else 0.
    ``z = f - g / h`` (``z = f`` where ``h = 0``).

    Args:
        loss: ``"logistic"`` or ``"margin"``.
        y: float64 array (n,) of labels ``+-1``.
        f: float64 array (n,) of logits.
    """
    y = np.asarray(y, dtype=np.float64)
    f = np.asarray(f, dtype=np.float64)
    if loss == "logistic":
        g = -y * _sigmoid(-y * f)
        h = np.maximum(_sigmoid(f) * _sigmoid(-f), H_MIN)
    else:
        g = -y * np.maximum(0.0, 1.0 - y * f)
        h = (y * f < 1.0).astype(np.float64)
    z = f - np.divide(g, h, out=np.zeros_like(g), where=h > 0)
    return z, h


def score_newton(
    tree: ReferenceTree | None, phi: np.ndarray, y: np.ndarray, sw: np.ndarray, loss: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """One Newton step of every candidate: :func:`score_candidates` on the working data.

    Args:
        tree: the current tree (``None`` or empty: the first-leaf candidates).
        phi: float64 array (n, p, q) of basis values; y: labels +-1 (n,); sw: weights (n,).
        loss: ``"logistic"`` or ``"margin"``.

    Returns:
        ``(sse, w, a, rss)``: as :func:`score_candidates` on ``(z, sw * h)`` (``sse`` is the
        Newton model's ``2 Q + sum sw g^2 / h``, ``a`` the new intercept), and the
        working data's current residual sum of squares (the tie rule's scale).
    """
    f = logit(tree, phi)
    z, h = newton_rows(loss, y, f)
    wh = sw * h
    empty = tree is None or tree.n_slots == 0
    sse, w, a = score_candidates(None if empty else tree, phi, z, wh)
    rss = weighted_tss(z, wh) if empty else float(np.sum(wh * (z - f) ** 2))
    return sse, w, a, rss


def refine_coordinate_newton(
    tree: ReferenceTree, phi: np.ndarray, y: np.ndarray, sw: np.ndarray, loss: str,
    sweeps: int = 3,
) -> ReferenceTree:
    """"Adjust all weights" on a classification loss: iteratively reweighted coordinate
    descent (each sweep one :func:`refine_coordinate` pass on the working data at the
    sweep's start, kept only if :func:`mean_loss` fell). Returns a copy.

    Args:
        tree: the tree.
        phi: float64 array (n, p, q) of basis values.
        y: float64 array (n,) of labels ``+-1``.
        sw: float64 array (n,) of sample weights.
        loss: ``"logistic"`` or ``"margin"``.
        sweeps: number of Newton sweeps.
    """
    cur = mean_loss(loss, tree, phi, y, sw)
    for _ in range(sweeps):
        z, h = newton_rows(loss, y, logit(tree, phi))
        if not np.sum(sw * h) > 0:  # no row inside the margin: the loss is 0 already
            break
        cand = refine_coordinate(tree, phi, z, sw * h, sweeps=1)
        cand_val = mean_loss(loss, cand, phi, y, sw)
        if cand_val < cur:
            tree, cur = cand, cand_val
    return tree.copy()


def start_intercept(loss: str, y: np.ndarray, sw: np.ndarray | None = None) -> float:
    """The intercept the classification search starts from: ``log(p / (1 - p))`` with ``p``
    the weighted share of ``y = +1`` (clipped to ``[1e-6, 1 - 1e-6]``), or 0 for ``"margin"``.

    Args:
        loss: ``"logistic"`` (else the intercept is 0).
        y: float64 array (n,) of labels ``+-1``.
        sw: float64 array (n,) of sample weights, or None for ones.
    """
    if loss != "logistic":
        return 0.0
    y = np.asarray(y, dtype=np.float64)
    sw = np.ones_like(y) if sw is None else np.asarray(sw, dtype=np.float64)
    prior = float(np.clip(np.sum(sw * (y > 0)) / np.sum(sw), 1e-6, 1 - 1e-6))
    return float(np.log(prior / (1 - prior)))


def supported(phi: np.ndarray, sw: np.ndarray | None, rows: int) -> np.ndarray | None:
    """bool ``(p, q)``: the basis columns ``phi[:, j, i]`` (``phi (n, p, q)``) nonzero
    (``|phi| > jaxtree.scoring.SUPPORT_TOL``) on at least ``rows`` rows of positive weight
    ``sw`` (None: all rows; :func:`jaxtree.scoring.with_support`'s rule, the estimators'
    ``min_support``), or None for ``rows <= 1`` (no rule)."""
    if rows <= 1:
        return None
    from jaxtree.scoring import SUPPORT_TOL  # noqa: PLC0415 (numpy module: no jax at import)

    keep = slice(None) if sw is None else np.asarray(sw) > 0
    return np.count_nonzero(np.abs(np.asarray(phi)[keep]) > SUPPORT_TOL, axis=0) >= rows


def _allowed_only(sse: np.ndarray, allowed: np.ndarray | None) -> np.ndarray:
    """Candidate scores ``(..., p, q)`` with the columns not ``allowed`` at ``+inf``."""
    return sse if allowed is None else np.where(allowed, sse, np.inf)


def _newton_step(tree, phi, y, sw, *, max_k, loss, refine, sweeps, allowed=None):
    """:func:`step` for a classification loss (see the module docstring)."""
    _, p, q = phi.shape
    if tree is None:
        tree = empty_tree(max_k)
    sse, w, a, rss = score_newton(tree, phi, y, sw, loss)
    sse = _allowed_only(sse, allowed)
    if not np.sum(sw * newton_rows(loss, y, logit(tree, phi))[1]) > 0 or not np.isfinite(sse).any():
        # No row carries a Newton weight (every row outside the margin): keep the tree.
        record = (-1, 0, LEAF, -1, -1, 0.0, float(tree.intercept), float("nan"))
        return tree, StepRecord(*record, loss=mean_loss(loss, tree, phi, y, sw, report=True),
                                status=1)
    flat = select_candidate(sse, rss)
    if tree.n_slots == 0:
        j, i = (int(v) for v in np.unravel_index(flat, (p, q)))
        new = single_leaf(max_k, j, i, w[j, i], a[j, i])
        record = (flat, 0, LEAF, j, i, float(w[j, i]), float(a[j, i]), float(sse[j, i]))
    else:
        rank, op_idx, j, i = (int(v) for v in np.unravel_index(flat, sse.shape))
        slot, op = leaves(tree)[rank], _OPS[op_idx]
        weight, intercept = float(w[rank, op_idx, j, i]), float(a[rank, op_idx, j, i])
        new = insert(tree, slot, op, j, i, weight)
        new.intercept = intercept
        record = (flat, slot, op, j, i, weight, intercept, float(sse[rank, op_idx, j, i]))
    if refine == "coordinate":
        new = refine_coordinate_newton(new, phi, y, sw, loss, sweeps=sweeps)
    return new, StepRecord(*record, loss=mean_loss(loss, new, phi, y, sw, report=True))


# ----------------------------------------------------------------------------------------
# Algorithm 1
# ----------------------------------------------------------------------------------------


def _validate(
    phi: Any, y: Any, k: Any, sample_weight: Any, refine: Any, sweeps: Any,
    loss: Any = "squared",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Checks the inputs of :func:`fit`; returns float64 ``phi, y, sw``."""
    if loss not in _VALID_LOSSES:
        raise ValueError(f"loss must be one of {list(_VALID_LOSSES)}; got {loss!r}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an int (number of operations); got {type(k).__name__}")
    if k < 0:
        raise ValueError(f"k must be >= 0 (number of operations); got {k}")
    if refine not in _VALID_REFINE:
        raise ValueError(f"refine must be one of {list(_VALID_REFINE)}; got {refine!r}")
    if isinstance(sweeps, bool) or not isinstance(sweeps, (int, np.integer)):
        raise TypeError(f"sweeps must be an int; got {type(sweeps).__name__}")
    if sweeps < 0:
        raise ValueError(f"sweeps must be >= 0; got {sweeps}")
    phi = np.asarray(phi, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if phi.ndim != 3:
        raise ValueError(
            "phi must be 3-D (n_samples, n_features, n_basis) with phi[s, j, i] = "
            f"phi_i(x_sj); got shape {phi.shape}"
        )
    n, p, q = phi.shape
    if n < 1 or p < 1 or q < 1:
        raise ValueError(f"phi must have at least one sample, feature and basis; got {phi.shape}")
    if y.ndim != 1:
        raise ValueError(
            f"y must be 1-D (n_samples,); got shape {y.shape}. Use y.reshape(-1) for a column"
        )
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} samples but phi has {n}; they must match")
    if not np.all(np.isfinite(phi)):
        raise ValueError("phi contains NaN or infinite values")
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinite values")
    if loss != "squared" and not np.all(np.abs(y) == 1):
        raise ValueError(f"loss={loss!r} needs labels y in {{-1, +1}}; got values "
                         f"{np.unique(y)[:5].tolist()}. Map the two classes to -1 and +1.")
    if sample_weight is None:
        sw = np.ones(n, dtype=np.float64)
    else:
        sw = np.asarray(sample_weight, dtype=np.float64)
        if sw.shape != (n,):
            raise ValueError(f"sample_weight must have shape ({n},); got {sw.shape}")
        if not np.all(np.isfinite(sw)) or np.any(sw < 0):
            raise ValueError("sample_weight must be finite and non-negative")
        if not np.sum(sw) > 0:
            raise ValueError("sample_weight must have a positive sum")
    return phi, y, sw


@dataclasses.dataclass(frozen=True)
class StepRecord:
    """What one iteration of :func:`step` chose (the fields of the JAX engine's choice).

    Attributes:
        flat_index: the chosen candidate's index in the iteration's score array.
        slot: the leaf replaced (0 for the initial leaf).
        op: ``LEAF`` for the initial leaf, else ``ADD`` or ``MUL``.
        feature: the new leaf's covariate ``j``.
        basis: the new leaf's basis function ``i``.
        weight: the new leaf's weight (before refinement).
        intercept: the re-fitted intercept (before refinement).
        sse: the chosen candidate's weighted SSE (before refinement; for a classification
            loss the Newton model's, in working units).
        loss: the weighted training MSE after the iteration (after refinement); for a
            classification loss the weighted mean reported loss.
        status: 0, or 1 (``jaxtree.search.Status.NO_CANDIDATE``) when the iteration found
            no candidate and kept the tree (a classification loss with no row inside the
            margin).
    """

    flat_index: int
    slot: int
    op: int
    feature: int
    basis: int
    weight: float
    intercept: float
    sse: float
    loss: float
    status: int = 0


def step(
    tree: ReferenceTree | None,
    phi: np.ndarray,
    y: np.ndarray,
    sw: np.ndarray | None,
    *,
    max_k: int,
    refine: str | None = "coordinate",
    sweeps: int = 3,
    loss: str = "squared",
    allowed: np.ndarray | None = None,
) -> tuple[ReferenceTree, StepRecord]:
    """One iteration of Algorithm 1 on validated float64 inputs.

    With ``tree=None`` it picks the initial leaf (the best ``w0 + w phi_i(x_j)``); otherwise it
    scores all ``2 D p q`` insertions (:func:`score_candidates`), picks one by the tie rule
    (:func:`select_candidate`), inserts it with its weight and intercept, then refines
    (:func:`refine_coordinate` if ``refine == "coordinate"``).

    With a classification ``loss`` (``y = +-1``; see the module docstring) the candidates are
    scored by one Newton step (:func:`score_newton`), the tree may be empty with an intercept
    (:func:`empty_tree`; ``None`` means intercept 0), and the refinement is
    :func:`refine_coordinate_newton`, after the first leaf too.

    Args:
        tree: the current tree, or None before the first leaf.
        phi: float64 array (n, p, q) of basis values.
        y: float64 array (n,) of targets (labels ``+-1`` for a classification loss).
        sw: float64 array (n,) of sample weights, or None for ones.
        max_k: capacity in operations.
        refine: ``"coordinate"`` or None.
        sweeps: coordinate-descent sweeps of the refinement.
        loss: ``"squared"``, ``"logistic"`` or ``"margin"``.
        allowed: optional bool ``(p, q)``: the only basis columns a candidate may use
            (:func:`supported`; the others score ``+inf``); None allows all.

    Returns:
        ``(tree, record)``: the new tree (capacity ``2 max_k + 1``) and a :class:`StepRecord`.
    """
    sw = np.ones_like(y) if sw is None else sw
    if loss != "squared":
        return _newton_step(tree, phi, y, sw, max_k=max_k, loss=loss, refine=refine,
                            sweeps=sweeps, allowed=allowed)
    _, p, q = phi.shape
    sse, w, a = score_candidates(tree, phi, y, sw)
    sse = _allowed_only(sse, allowed)
    if tree is None:
        flat = select_candidate(sse, weighted_tss(y, sw))
        j, i = (int(v) for v in np.unravel_index(flat, (p, q)))
        tree = single_leaf(max_k, j, i, w[j, i], a[j, i])
        record = (flat, 0, LEAF, j, i, float(w[j, i]), float(a[j, i]), float(sse[j, i]))
    else:
        flat = select_candidate(sse, weighted_mse(tree, phi, y, sw) * np.sum(sw))
        rank, op_idx, j, i = (int(v) for v in np.unravel_index(flat, sse.shape))
        slot, op = leaves(tree)[rank], _OPS[op_idx]
        weight, intercept = float(w[rank, op_idx, j, i]), float(a[rank, op_idx, j, i])
        tree = insert(tree, slot, op, j, i, weight)
        tree.intercept = intercept
        if refine == "coordinate":
            tree = refine_coordinate(tree, phi, y, sw, sweeps=sweeps)
        record = (flat, slot, op, j, i, weight, intercept, float(sse[rank, op_idx, j, i]))
    return tree, StepRecord(*record, loss=weighted_mse(tree, phi, y, sw))


def fit(
    phi: np.ndarray,
    y: np.ndarray,
    k: int,
    *,
    sample_weight: np.ndarray | None = None,
    refine: str | None = "coordinate",
    sweeps: int = 3,
    callback: Callable[[int, ReferenceTree, float], Any] | None = None,
    loss: str = "squared",
) -> FitResult:
    """Algorithm 1: greedy search for a tree with ``k`` operations.

    Initial leaf: the best ``w0 + w phi_i(x_j)`` over all ``(i, j)``. Then ``k`` times:
    score all ``2 D p q`` insertions on the current tree (:func:`score_candidates`), pick
    one by the tie rule (:func:`select_candidate`), insert it with its weight and
    intercept, then refine (:func:`refine_coordinate` if ``refine == "coordinate"``).

    Args:
        phi: float64 array (n, p, q) of basis values, ``phi[s, j, i] = phi_i(x_sj)``.
        y: float64 array (n,) of targets.
        k: number of operations (insertions); the tree gets ``2k + 1`` nodes.
        sample_weight: float64 array (n,) of non-negative weights, or ``None`` for ones.
        refine: ``"coordinate"`` (the paper's adjustment) or ``None`` (no adjustment).
        sweeps: passes of coordinate descent per iteration.
        callback: called as ``callback(step, tree, loss)`` after the initial leaf
            (``step == 0``) and after each iteration ``step = 1..k``.
        loss: ``"squared"`` (regression, the paper's Algorithm 1), or ``"logistic"`` /
            ``"margin"`` for classification with labels ``y = +-1`` (the Newton-step search
            of the module docstring, from :func:`start_intercept`; ``history`` is then the
            mean log-loss or ramp loss).

    Returns:
        A :class:`FitResult`.

    Raises:
        TypeError: if ``k`` or ``sweeps`` is not an int.
        ValueError: for bad shapes, non-finite data, bad weights, ``k < 0``, an unknown
            ``refine`` or ``loss``, or classification labels other than +-1.

    Examples:
        >>> import numpy as np
        >>> from jaxtree import reference
        >>> rng = np.random.default_rng(0)
        >>> phi = rng.uniform(-1, 1, size=(100, 3, 2))
        >>> y = 0.5 * phi[:, 0, 1] + 0.3 * phi[:, 2, 0]
        >>> result = reference.fit(phi, y, k=1)
        >>> result.choices  # (flat_index, op, leaf_slot, feature, basis)
        [(1, 1, 0, 0, 1), (4, 2, 0, 2, 0)]
        >>> bool(result.history[-1] < 1e-10)
        True
    """
    phi, y, sw = _validate(phi, y, k, sample_weight, refine, sweeps, loss)
    tree, history, choices = None, [], []
    if loss != "squared":
        tree = empty_tree(int(k), start_intercept(loss, y, sw))
    for it in range(int(k) + 1):
        tree, record = step(tree, phi, y, sw, max_k=int(k), refine=refine, sweeps=sweeps,
                            loss=loss)
        choices.append((record.flat_index, record.op, record.slot, record.feature, record.basis))
        history.append(record.loss)
        if callback is not None:
            callback(it, tree, history[-1])

    return FitResult(tree=tree, history=history, choices=choices)
