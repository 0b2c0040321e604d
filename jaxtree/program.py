"""The tree as a fixed-capacity flat program.

A weighted labeled binary tree with ``k`` operations has ``2k+1`` nodes: ``k`` internal
nodes labelled ``+`` or ``*`` and ``k+1`` leaves ``w * phi_i(x_j)``. A :class:`Program`
stores it in ``S = 2*max_k + 1`` slots so that growing the tree changes array *values*,
never shapes, and one compiled function serves every iteration of a search.

Layout (shared with :mod:`jaxtree.reference`, which re-implements it in plain numpy):

* ``op[s]``: ``EMPTY`` (0, unused slot), ``LEAF`` (1), ``ADD`` (2) or ``MUL`` (3).
* ``left[s]``, ``right[s]``: child slots of an op node, ``-1`` otherwise.
* ``feature[s]``, ``basis[s]``: covariate ``j`` and basis function ``i`` of a leaf, ``-1``
  otherwise. ``weight[s]``: the leaf weight ``w`` (``0`` for other slots).
* ``intercept``: the free intercept ``w0``; ``n_slots``: number of slots in use.

The root is slot 0. Inserting ``V op w' phi_i(x_j)`` at leaf slot ``d`` when ``m`` slots
are used writes the old leaf to slot ``m``, the new leaf to ``m+1`` and turns slot ``d``
into the op node with children ``(m, m+1)``. Design decision: this is not a postfix
layout but its mirror image: a child always has a *higher* slot than its parent, so
evaluating slots from last to first is a valid bottom-up order and an insertion is
three writes, with no shifting of the program. Leaves are enumerated in ascending slot
order (their *rank*), which fixes the deterministic tie-break of the search.

Because every leaf occurs once, the tree ``T`` is affine in each leaf value
``c_d = w_d phi_d(x)``: ``T = b_d + k_d c_d``. :func:`leaf_multipliers` computes all
``k_d`` in one top-down pass (the product of the sibling subtrees' values at the ``*``
nodes on the path to the root, the paper's Algorithm 2 for all leaves at once); it
equals the reverse-mode derivative ``dT/dc_d``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "ADD",
    "capacity_for",
    "EMPTY",
    "LEAF",
    "MUL",
    "empty_program",
    "evaluate",
    "from_arrays",
    "insert",
    "leaf_basis",
    "leaf_multipliers",
    "leaf_slots",
    "leaf_values",
    "leaf_values_from_basis",
    "n_leaves",
    "n_terms",
    "node_values",
    "OP_SYMBOLS",
    "Program",
    "render",
    "to_numpy",
    "tree_value",
    "pad",
    "trim",
]


EMPTY, LEAF, ADD, MUL = 0, 1, 2, 3
OP_SYMBOLS = {ADD: "+", MUL: "*"}


class Program(NamedTuple):
    """A weighted labeled binary tree in ``S = 2*max_k + 1`` padded slots (a pytree).

    Attributes:
      op: int32 ``(S,)`` node kind: ``EMPTY``, ``LEAF``, ``ADD`` or ``MUL``.
      left: int32 ``(S,)`` left child slot of op nodes, ``-1`` elsewhere.
      right: int32 ``(S,)`` right child slot of op nodes, ``-1`` elsewhere.
      feature: int32 ``(S,)`` covariate index of leaves, ``-1`` elsewhere.
      basis: int32 ``(S,)`` basis-function index of leaves, ``-1`` elsewhere.
      weight: float ``(S,)`` leaf weights, ``|w| <= 1``; ``0`` elsewhere.
      intercept: float ``()`` the free intercept ``w0``.
      n_slots: int32 ``()`` number of slots in use (``0`` for the empty tree).
    """

    op: jax.Array
    left: jax.Array
    right: jax.Array
    feature: jax.Array
    basis: jax.Array
    weight: jax.Array
    intercept: jax.Array
    n_slots: jax.Array

    @property
    def capacity(self) -> int:
        """Number of slots ``S`` (static)."""
        return self.op.shape[-1]

    @property
    def max_k(self) -> int:
        """Largest number of operations the program can hold (static)."""
        return (self.op.shape[-1] - 1) // 2


def empty_program(max_k: int, dtype=jnp.float32) -> Program:
    """Returns the empty tree with room for ``max_k`` operations.

    Args:
      max_k: capacity in operations; the program has ``2*max_k + 1`` slots.
      dtype: float dtype of the weights and intercept.

    Returns:
      A :class:`Program` whose every slot is ``EMPTY``; it predicts its intercept, 0.
    """
    if max_k < 0:
        raise ValueError(f"max_k must be >= 0; got {max_k}.")
    s = 2 * max_k + 1
    # Built in numpy and put on the device: eager jnp.zeros/full would compile a small
    # program per capacity and dtype (time in a new process; see jaxtree._compilation_cache).
    dt = jax.dtypes.canonicalize_dtype(dtype)
    minus = np.full((s,), -1, np.int32)
    return jax.device_put(Program(
        op=np.zeros((s,), np.int32),
        left=minus,
        right=minus,
        feature=minus,
        basis=minus,
        weight=np.zeros((s,), dt),
        intercept=np.zeros((), dt),
        n_slots=np.zeros((), np.int32),
    ))


def capacity_for(k: int) -> int:
    """The capacity (in operations) that a search of ``k`` operations compiles for.

    Capacities are rounded up to ``8, 12, 16, 24, 32, 48, 64, ...`` (from 8 on, powers of two
    and three times powers of two) so that searches of nearby ``k`` (a grid search over
    ``k``, the refit at the size chosen on held-out rows) share one compiled step; the search
    still runs ``k`` operations (the step's traced ``max_ops``), and :func:`trim` cuts the
    result back to ``2k+1`` slots.

    Decision (measured, BENCHMARKS.md "First fit in a fresh process"): a larger capacity
    makes each iteration score ``2(max_k+1)`` leaf rows and refine ``max_k+1`` leaves, so a
    warm fit's time grows with the capacity (k = 10 at capacity 16: 1.45x the greedy fit's
    time, 1.7x the backfit's; at 12: 1.02-1.36x). Above 8 this ladder wastes at most 1.5x,
    where powers of two alone waste up to 2x; every ``k <= 8`` shares one program, a few
    milliseconds more per warm fit against seconds per compilation saved (fits of k = 2, 4,
    6, 8, 10 at the demo's shape: 61 s with a compilation per k, 18 s with these buckets).
    The estimator uses them where ``n*p*q`` is below :data:`jaxtree.scoring.BUCKET_MIN_WORK`
    (compilation dominates); larger fits run at exactly ``k``.

    Examples:
      >>> [capacity_for(k) for k in (0, 3, 5, 8, 9, 10, 13, 20, 40)]
      [8, 8, 8, 8, 12, 12, 16, 24, 48]
    """
    k = int(k)
    if k < 0:
        raise ValueError(f"k must be >= 0; got {k}.")
    b = 8
    while True:
        for c in (b, 3 * b // 2):
            if c >= k:
                return c
        b *= 2


def largest_k_within(capacity: int) -> int:
    """The largest ``k`` whose compiled capacity (:func:`capacity_for`) is at most
    ``capacity``, or -1 when none is (below the smallest capacity, 8).

    Examples:
      >>> [largest_k_within(c) for c in (7, 8, 11, 12, 47, 48)]
      [-1, 8, 8, 12, 32, 48]
    """
    capacity = int(capacity)
    best, b = -1, 8
    while b <= capacity:
        for c in (b, 3 * b // 2):
            if c <= capacity:
                best = c
        b *= 2
    return best


def trim(program: Program, max_k: int) -> Program:
    """The first ``2*max_k + 1`` slots of ``program`` (cut on the host), for a tree that a
    search ran in a larger capacity (:func:`capacity_for`): the same tree and predictions,
    with the shapes of a program built with capacity ``max_k``. Leading batch axes are kept.

    Raises:
      ValueError: if the tree uses more slots than ``2*max_k + 1``.
    """
    s = 2 * int(max_k) + 1
    if s >= program.capacity:
        return program
    used = int(np.max(np.asarray(program.n_slots)))
    if used > s:
        raise ValueError(f"the tree uses {used} slots; it cannot be cut to {s} "
                         f"(max_k={max_k}).")
    cut = lambda a: jax.device_put(np.asarray(a)[..., :s])  # on the host: nothing compiled
    return program._replace(op=cut(program.op), left=cut(program.left),
                            right=cut(program.right), feature=cut(program.feature),
                            basis=cut(program.basis), weight=cut(program.weight))


def pad(program: Program, max_k: int) -> Program:
    """``program`` in the capacity of ``max_k`` operations (at least its own): the same tree
    and predictions with ``EMPTY`` slots appended (on the host), the inverse of :func:`trim`,
    so that a tree cut back after a search can enter the search's compiled programs again.
    One tree (no batch axes).

    Raises:
      ValueError: if ``max_k`` is below the program's capacity.
    """
    s, c = 2 * int(max_k) + 1, program.capacity
    if s < c:
        raise ValueError(f"cannot pad a program of {c} slots to {s} (max_k={max_k}).")
    if s == c:
        return program
    fill = lambda a, v: jax.device_put(np.concatenate(  # noqa: E731
        [np.asarray(a), np.full((s - c,), v, np.asarray(a).dtype)]))
    return program._replace(op=fill(program.op, EMPTY), left=fill(program.left, -1),
                            right=fill(program.right, -1), feature=fill(program.feature, -1),
                            basis=fill(program.basis, -1), weight=fill(program.weight, 0))


def where_tree(pred, a, b):
    """``a`` where the scalar ``pred`` holds, else ``b``: two pytrees of one structure.

    A ``lax.cond`` whose branches pass their operand through, so XLA compiles no select
    kernel per leaf (the refinement's and the search step's many pytree selects were dozens
    of kernels, issue 27); under ``vmap`` with a batched ``pred`` it is the same elementwise
    select as ``jnp.where``. The same values either way.
    """
    return jax.lax.cond(pred, lambda t: t[0], lambda t: t[1], (a, b))


def n_leaves(program: Program) -> jax.Array:
    """Number of leaves in the tree (int32 scalar).

    Args:
      program: the tree.
    """
    return jnp.sum(program.op == LEAF).astype(jnp.int32)


def n_ops(program: Program) -> int:
    """The operations of a (host or device) program: ``(n_slots - 1) // 2``."""
    n = int(np.asarray(program.n_slots))
    return (n - 1) // 2 if n else 0


def n_terms(program: Program) -> int:
    """The number of terms of the tree written as a sum of products, like terms merged (host
    side): each product is the multiset of its leaves' ``(feature, basis)`` factors, ``+``
    joins its children's products, ``*`` multiplies every pair (``(a + b)·c`` is
    ``a·c + b·c``), and products of the same factors are one term (``w1·φ(x1) + w2·φ(x1)`` is
    one); the intercept is not counted. The printed formula's tree terms, unless weights
    cancel exactly or a term is below the printing tolerance.

    Args:
      program: the tree.
    """
    a = to_numpy(program)
    n = int(a["n_slots"])
    sums = [None] * n
    for s in range(n - 1, -1, -1):  # children come after their parent: bottom-up
        op = int(a["op"][s])
        if op == LEAF:
            sums[s] = {((int(a["feature"][s]), int(a["basis"][s])),)}
        elif op in (ADD, MUL):
            left, right = sums[a["left"][s]], sums[a["right"][s]]
            sums[s] = (left | right if op == ADD else
                       {tuple(sorted(u + v)) for u in left for v in right})
    return len(sums[0]) if n else 0


def leaf_slots(program: Program, size: int) -> jax.Array:
    """Slots of the leaves in ascending order, padded with ``-1`` to ``size`` entries.

    Computed as ``slots[l] = sum_s s * [s is the leaf of rank l]`` (one fused compare and
    reduction) rather than ``jnp.nonzero(..., size=)``, whose cumulative sum and scatter
    compile to several kernels at each of its many call sites (issue 27); the same integers.

    Args:
      program: the tree.
      size: number of entries (static).
    """
    is_leaf = program.op == LEAF
    rank = jnp.cumsum(is_leaf) - 1  # rank of each leaf among the leaves, in slot order
    hit = is_leaf[None, :] & (rank[None, :] == jnp.arange(size)[:, None])  # (size, S)
    at = jnp.arange(program.capacity, dtype=jnp.int32)
    return jnp.where(hit.any(axis=1), jnp.sum(jnp.where(hit, at, 0), axis=1), -1).astype(jnp.int32)


def leaf_basis(program: Program, x: jax.Array, basis, phi=None) -> jax.Array:
    """``phi_{basis_d}(x_{feature_d})`` at each leaf, in ascending slot order.

    Args:
      program: the tree.
      x: float ``(m, p)`` covariates scaled to ``[0, 1]``.
      basis: a :class:`jaxtree.basis.Basis`.
      phi: optional float ``(m, q*p)`` basis values of these rows, function-major
        (:func:`jaxtree.scoring.design`: column ``i*p + j`` is ``phi_i(x_j)``). Given, the
        leaves' values are gathered from it instead of evaluating the basis (``cache_basis``:
        no pass of the search evaluates a basis function), equal to the evaluated values to
        float rounding (the trigonometric families' two kernels differ in the last bits).

    Returns:
      float ``(L, m)`` with ``L = max_k + 1``; rows past the number of leaves are 0.
      It depends on the structure only, not on the weights, so weight refinement can
      compute it once.
    """
    slots = leaf_slots(program, (program.capacity + 1) // 2)
    ok = slots >= 0
    sl = jnp.where(ok, slots, 0)
    feat = program.feature[sl].clip(0)
    if phi is not None:
        cols = program.basis[sl].clip(0) * x.shape[1] + feat
        return jnp.where(ok[:, None], jnp.take(phi, cols, axis=1).T, 0.0).astype(x.dtype)
    xs = jnp.take(x, feat, axis=1).T  # (L, m)
    # The covariate index matters only to per-covariate families (basis.PowerLaws).
    phi = basis.evaluate_at(xs, program.basis[sl].clip(0)[:, None], feature=feat[:, None])
    return jnp.where(ok[:, None], phi, 0.0).astype(x.dtype)


def leaf_values_from_basis(program: Program, z: jax.Array) -> jax.Array:
    """Slot values ``(S, m)`` from :func:`leaf_basis` output ``z (L, m)`` and the weights.

    Args:
      program: the tree.
      z: float ``(L, m)`` of :func:`leaf_basis`.
    """
    # A gather of whole rows (each slot reads its leaf rank's row), cheaper than a
    # scatter of the leaf rows into the slots on CPU.
    is_leaf = program.op == LEAF
    rank = jnp.cumsum(is_leaf) - 1
    ok = is_leaf & (rank < z.shape[0])
    rows = z[jnp.clip(rank, 0, z.shape[0] - 1)]
    return jnp.where(ok[:, None], program.weight[:, None] * rows, 0).astype(z.dtype)


def leaf_values(program: Program, x: jax.Array, basis, phi=None) -> jax.Array:
    """Values ``c_s = w_s * phi_{basis_s}(x_{feature_s})`` of every slot.

    Only the (at most ``max_k + 1``) leaves are evaluated, not all ``2*max_k + 1`` slots.

    Args:
      program: the tree.
      x: float ``(m, p)`` covariates scaled to ``[0, 1]``.
      basis: a :class:`jaxtree.basis.Basis`.
      phi: optional cached design of ``x`` (as for :func:`leaf_basis`).

    Returns:
      float ``(S, m)``; zero for slots that are not leaves.
    """
    return leaf_values_from_basis(program, leaf_basis(program, x, basis, phi))


def _used_slots_only(live: bool) -> bool:
    """Whether :func:`node_values` and :func:`leaf_multipliers` loop over the used slots
    ``[0, n_slots)`` only: where the caller asks (``live``) and the program runs on a CPU.

    Decision (fifty-sixth session, issue 29's cost): a tree's slot loops ran over all ``S``
    slots of the program's capacity, the unused ones included, at every pass of the search
    (each step of the refinement's L-BFGS, each insertion's scoring). On a CPU a slot's
    step costs about as much in loop overhead as in row arithmetic, so a search that grows
    a tree of 1 to 11 leaves in a capacity of 25 slots paid for about twice the slots it
    used. A loop whose trip count is ``n_slots`` computes the same values (an unused slot's
    step wrote back the value it held, and no used slot reads one): warm fits 5-7% faster
    on the diamonds and weather tables, the same predictions to the bit (BENCHMARKS.md,
    "The tree's slot loops over its used slots"). Only where asked: the trip count is
    data, so the loop is not reverse differentiable (the public :func:`evaluate` keeps the
    fixed loop; the search's passes compute their own gradients); off a CPU a loop of
    unknown trip count reads its flag back to the host at every step (as
    :func:`jaxtree.scoring.scan_live` decides); and under ``vmap`` (:func:`_unless_batched`)
    the fixed loop runs."""
    return live and jax.default_backend() == "cpu"


def _unless_batched(loop):
    """``loop(program, a, used=True)``, except under ``vmap``, where the fixed loop
    ``loop(program, a, used=False)`` is batched instead (``jax.custom_batching``).

    Why: a batch's members hold trees of different sizes, and a loop of per-member trip
    counts becomes a loop to the largest under a batched predicate, with a gather and a
    scatter per slot instead of slices: :func:`jaxtree.fit_batch` ran 55-65% slower with
    it (16 data sets of 2,000 rows, ``k=8``)."""
    used = jax.custom_batching.custom_vmap(lambda program, a: loop(program, a, used=True))

    @used.def_vmap
    def _fixed(axis_size, in_batched, program, a):  # JAX calls it with some input batched
        axes = (jax.tree_util.tree_map(lambda b: 0 if b else None, in_batched[0]),
                0 if in_batched[1] else None)
        return jax.vmap(lambda p, x: loop(p, x, used=False), in_axes=axes)(program, a), True

    return used


def node_values(program: Program, c: jax.Array, live: bool = False) -> jax.Array:
    """Values of every node given the leaf values, bottom-up (last slot first).

    Args:
      program: the tree.
      c: float ``(S, m)`` leaf values from :func:`leaf_values` (zero at other slots).
      live: loop over the used slots only (:func:`_used_slots_only`; the same values, not
        reverse differentiable).

    Returns:
      float ``(S, m)``: the value of the subtree rooted at each slot (0 for empty slots).
    """
    if _used_slots_only(live):
        return _node_values_used(program, c)
    return _node_loop(program, c, used=False)


def _node_loop(program: Program, c: jax.Array, used: bool) -> jax.Array:
    """:func:`node_values`' loop: over every slot, or (``used``) slots ``n_slots - 1, ...,
    0`` only."""
    s = program.capacity

    def body(t, v):
        slot = s - 1 - t
        op = program.op[slot]
        lv = v[jnp.maximum(program.left[slot], 0)]
        rv = v[jnp.maximum(program.right[slot], 0)]
        val = jnp.where(op == ADD, lv + rv, jnp.where(op == MUL, lv * rv, v[slot]))
        return v.at[slot].set(val)

    # Leaf (and empty) slots keep their value from ``c``; op slots are overwritten
    # bottom-up, so the loop carries one (S, m) array, not two.
    start = s - jnp.clip(program.n_slots, 0, s) if used else 0
    return jax.lax.fori_loop(start, s, body, c)


_node_values_used = _unless_batched(_node_loop)


def tree_value(program: Program, v: jax.Array) -> jax.Array:
    """``T(x)`` without intercept from node values ``v`` (0 for the empty tree).

    Args:
      program: the tree.
      v: float ``(S, m)`` node values (:func:`node_values`).
    """
    return jnp.where(program.n_slots > 0, v[0], jnp.zeros_like(v[0]))


def leaf_multipliers(program: Program, v: jax.Array, live: bool = False) -> jax.Array:
    """``k_s = dT/dc_s`` for every slot, top-down (first slot first).

    At a ``+`` node both children inherit the parent's multiplier; at a ``*`` node each
    child's multiplier is the parent's times its sibling's value.

    Args:
      program: the tree.
      v: float ``(S, m)`` node values from :func:`node_values`.
      live: loop over the used slots only (:func:`_used_slots_only`; the same values, not
        reverse differentiable).

    Returns:
      float ``(S, m)``; ``T = b_s + k_s * c_s`` for every leaf ``s``.
    """
    if _used_slots_only(live):
        return _leaf_multipliers_used(program, v)
    return _multiplier_loop(program, v, used=False)


def _multiplier_loop(program: Program, v: jax.Array, used: bool) -> jax.Array:
    """:func:`leaf_multipliers`' loop: over every slot, or (``used``) slots ``1, ...,
    n_slots - 1`` only."""
    s = program.capacity
    idx = jnp.arange(s, dtype=jnp.int32)
    is_op = (program.op == ADD) | (program.op == MUL)
    # parent[c] = the op slot whose left or right child is c (-1: the root, or not a node),
    # by one fused compare and reduction over (child, slot) rather than two scatters: each
    # scatter compiles to kernels of its own at every call site (issue 27); a valid tree
    # gives every child one parent, so the integers are the same.
    hit = is_op[None, :] & ((program.left[None, :] == idx[:, None])
                            | (program.right[None, :] == idx[:, None]))
    parent = jnp.where(hit.any(axis=1), jnp.sum(jnp.where(hit, idx[None, :], 0), axis=1), -1)
    par = jnp.maximum(parent, 0)
    sibling = jnp.where(program.left[par] == idx, program.right[par], program.left[par])
    under_mul = (parent >= 0) & (program.op[par] == MUL)

    # Parents precede children, so one ascending pass reads only finished rows; each
    # step writes one row (gathering parent and sibling) rather than scattering two.
    def body(slot, kk):
        factor = jnp.where(under_mul[slot], v[jnp.maximum(sibling[slot], 0)], 1.0)
        row = jnp.where(parent[slot] >= 0, kk[par[slot]] * factor, kk[slot])
        return kk.at[slot].set(row)

    k0 = jnp.zeros_like(v).at[0].set(1.0)
    end = jnp.clip(program.n_slots, 1, s) if used else s  # an unused slot keeps its 0
    return jax.lax.fori_loop(1, end, body, k0)


_leaf_multipliers_used = _unless_batched(_multiplier_loop)


def evaluate(program: Program, x: jax.Array, basis, phi=None) -> jax.Array:
    """Predictions ``w0 + T(x)`` in the scaled space.

    Args:
      program: the tree.
      x: float ``(m, p)`` covariates scaled to ``[0, 1]``.
      basis: the :class:`jaxtree.basis.Basis` the program indexes.
      phi: optional cached basis values of ``x`` (see :func:`leaf_basis`).

    Returns:
      float ``(m,)``.
    """
    v = node_values(program, leaf_values(program, x, basis, phi))
    return program.intercept + tree_value(program, v)


def insert(program: Program, slot, op, feature, basis_index, weight) -> Program:
    """Replaces leaf ``slot`` by ``leaf op weight*phi_basis_index(x_feature)``.

    Traceable: all arguments may be traced scalars. When the program is empty the new
    leaf becomes the root (``slot`` and ``op`` are ignored). The caller guarantees room:
    ``n_slots + 2 <= capacity``.

    Args:
      program: the tree.
      slot: the leaf slot to replace.
      op: ``ADD`` or ``MUL``.
      feature: feature index ``j`` of the new leaf.
      basis_index: basis function index ``i`` of the new leaf.
      weight: the new leaf's weight.

    Returns:
      The new :class:`Program`; the intercept is unchanged.
    """
    p = program
    m = p.n_slots
    empty = m == 0
    wdt = p.weight.dtype

    # Each field is written by elementwise selects on the slot index instead of chained
    # scatters: the same values (the written slots ``m``, ``m + 1`` and ``slot < m`` are
    # distinct; an index out of range writes nothing, as a scatter drops it), and one fused
    # kernel per field instead of a few per write (issue 27: kernels are what XLA's compile
    # time is paid per).
    at = jnp.arange(p.capacity, dtype=jnp.int32)
    at_root = at == 0

    def put(arr, old, new, node, root):
        """``arr`` with slot ``m`` <- old, ``m + 1`` <- new, ``slot`` <- node (grown tree),
        or slot 0 <- root (empty tree)."""
        cast = lambda v: jnp.asarray(v, arr.dtype)  # noqa: E731
        grown = jnp.where(at == m, cast(old), jnp.where(at == m + 1, cast(new),
                                                        jnp.where(at == slot, cast(node), arr)))
        return jnp.where(empty, jnp.where(at_root, cast(root), arr), grown)

    # Non-empty: old leaf -> m, new leaf -> m+1, slot -> op(m, m+1). Empty: the new leaf
    # becomes the root (left/right unchanged).
    opa = put(p.op, LEAF, LEAF, op, LEAF)
    left = jnp.where(empty, p.left, put(p.left, -1, -1, m, 0))
    right = jnp.where(empty, p.right, put(p.right, -1, -1, m + 1, 0))
    feat = put(p.feature, p.feature[slot], feature, -1, feature)
    bas = put(p.basis, p.basis[slot], basis_index, -1, basis_index)
    w = put(p.weight, p.weight[slot], weight, 0.0, jnp.asarray(weight, wdt))
    return Program(opa, left, right, feat, bas, w, p.intercept,
                   jnp.where(empty, jnp.ones((), jnp.int32), m + 2).astype(jnp.int32))


# ----------------------------------------------------------------------------- host side


BOX_TOL = 1e-6
"""A weight with ``|w| >= 1 - BOX_TOL`` counts as on the box (the projection puts it at 1)."""


def weights_at_bound(program) -> int:
    """How many leaves of ``program`` (a :class:`Program`, host or device) the box ``|w| <= 1``
    holds back: leaves with ``|w| = 1`` whose scale no product could take over.

    A factor of a product can sit on the box without binding: in ``(w1 phi1) * T`` the
    scale moves freely between ``w1`` and ``T``, so ``w1 = 1`` binds only if ``T`` cannot
    grow (every leaf of a sum on the box, or every factor of a product). A leaf counts when
    it is on the box and no product above it has another branch with room.
    """
    op = np.asarray(program.op)
    left, right = np.asarray(program.left), np.asarray(program.right)
    on_box = np.abs(np.asarray(program.weight, np.float64)) >= 1.0 - BOX_TOL
    if op.size == 0 or op[0] == EMPTY:
        return 0
    order, stack = [], [0]  # slots reachable from the root, parents before children
    while stack:
        i = stack.pop()
        order.append(i)
        if op[i] in (ADD, MUL):
            stack += [int(left[i]), int(right[i])]
    room = {}  # can the subtree at slot i grow by a factor > 1 inside the box?
    for i in reversed(order):
        if op[i] == LEAF:
            room[i] = not on_box[i]
        elif op[i] == ADD:
            room[i] = room[left[i]] and room[right[i]]
        else:  # MUL: one factor is enough
            room[i] = room[left[i]] or room[right[i]]
    free = {0: False}  # a product above slot i has another branch with room
    count = 0
    for i in order:
        if op[i] == LEAF:
            count += int(on_box[i] and not free[i])
        elif op[i] == MUL:
            free[left[i]] = free[i] or room[right[i]]
            free[right[i]] = free[i] or room[left[i]]
        else:
            free[left[i]] = free[right[i]] = free[i]
    return count


def to_numpy(program: Program) -> dict:
    """The program's arrays as numpy (one host transfer)."""
    return {k: np.asarray(v) for k, v in program._asdict().items()}


def from_arrays(op, left, right, feature, basis, weight, intercept, n_slots, dtype=None) -> Program:
    """Builds a :class:`Program` from array-likes (e.g. a reference tree or a JSON file).

    Args:
      op: int ``(S,)`` operation of each slot (``LEAF``, ``ADD``, ``MUL``, ``EMPTY``).
      left: int ``(S,)`` left child slot of each operation.
      right: int ``(S,)`` right child slot of each operation.
      feature: int ``(S,)`` feature index of each leaf.
      basis: int ``(S,)`` basis function index of each leaf.
      weight: float ``(S,)`` weight of each leaf.
      intercept: the intercept ``w0``.
      n_slots: number of slots in use.
      dtype: float dtype of the weights (None: that of ``weight``).
    """
    w = as_device(weight, dtype) if dtype is not None else jnp.asarray(weight)
    return Program(
        op=as_device(op, jnp.int32), left=as_device(left, jnp.int32),
        right=as_device(right, jnp.int32), feature=as_device(feature, jnp.int32),
        basis=as_device(basis, jnp.int32), weight=w,
        intercept=as_device(intercept, w.dtype), n_slots=as_device(n_slots, jnp.int32),
    )


def as_device(value, dtype) -> jax.Array:
    """``jnp.asarray(value, dtype)`` without compiling: a host value (a list, a number, a
    numpy array) is cast on the host and transferred (``jax.device_put``). With jaxlib 0.10
    ``jnp.asarray`` compiles a small program per shape and dtype for a host array (a
    ``stage`` program, or a cast: a model file's load compiled about ten). A JAX array (or
    tracer) is cast by JAX."""
    if isinstance(value, jax.Array):
        return jnp.asarray(value, dtype)
    return jax.device_put(np.asarray(value, dtype))


def broadcast_on_host(tree, lead: tuple):
    """Every array of ``tree`` with the leading axes ``lead``, broadcast on the host and
    transferred (:func:`as_device`'s reason: an eager ``jnp.broadcast_to`` compiled a program
    per shape in every new process)."""
    return jax.tree_util.tree_map(lambda a: jax.device_put(np.ascontiguousarray(
        np.broadcast_to(np.asarray(a), tuple(lead) + np.shape(a)))), tree)


def member_on_host(tree, index):
    """``a[index]`` of every array of a batched ``tree`` (an int or a slice), taken on the host
    and transferred: nothing compiled (an eager slice compiled per shape, a jitted one once
    per pytree structure and process)."""
    return jax.tree_util.tree_map(lambda a: jax.device_put(np.asarray(a)[index]), tree)


def stack_on_host(trees):
    """The arrays of ``trees`` (one structure) stacked on a new leading axis on the host and
    transferred: nothing compiled (``jnp.stack`` compiled a program per leaf shape)."""
    return jax.tree_util.tree_map(
        lambda *a: jax.device_put(np.stack([np.asarray(x) for x in a])), *trees)


def _fmt(w: float, digits: int) -> str:
    return f"{w:.{digits}g}"


def render(program: Program, basis, feature_names=None, digits: int = 3) -> str:
    """A readable formula for the tree, e.g. ``0.3·sin(3πx1)·cos(2πx2) + 0.4·x3²``.

    Args:
      program: the tree (host or device arrays).
      basis: the :class:`jaxtree.basis.Basis` it indexes.
      feature_names: names of the covariates; default ``x1, x2, ...`` (1-based as in
        the paper).
      digits: significant digits of the weights.

    Returns:
      The formula of ``w0 + T(x)``, with ``x`` the covariates scaled to ``[0, 1]``.
    """
    a = to_numpy(program)
    def name(j):
        if feature_names is not None:
            return str(feature_names[j])
        return f"x{j + 1}"

    def rec(slot, parent_op):
        op = int(a["op"][slot])
        if op == LEAF:
            term = basis.render(int(a["basis"][slot]), name(int(a["feature"][slot])))
            return f"{_fmt(float(a['weight'][slot]), digits)}·{term}"
        lhs = rec(int(a["left"][slot]), op)
        rhs = rec(int(a["right"][slot]), op)
        if op == MUL:
            return f"{lhs}·{rhs}"
        text = f"{lhs} + {rhs}"
        return f"({text})" if parent_op == MUL else text

    w0 = _fmt(float(a["intercept"]), digits)
    if int(a["n_slots"]) == 0:
        return w0
    return f"{w0} + {rec(0, None)}".replace("+ -", "- ")
