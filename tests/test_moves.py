"""The replace, delete and pair-insertion moves against brute-force float64 refits.

Brute force here never uses the leaf multipliers: a candidate tree is built explicitly
as a nested tuple, evaluated recursively, and since it is affine in the one free weight
``w`` the refit is a numpy ``lstsq`` of ``y - T(0) ~ a + w (T(1) - T(0))`` with the box
``|w| <= 1`` (clipped to the active bound when the free optimum leaves it).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtree import basis as B
from jaxtree import moves
from jaxtree import program as prog
from jaxtree import scoring

from _shared import evaluate_jit

SMALL = B.make_basis(hats=3, sines=2, cosines=2, powers=2, truncated_cubics=2)
SIN2 = SMALL.names.index("sin(2πx)")
# Every test uses one data shape (N rows, P covariates, chunks of CHUNK) and one capacity
# MAX_K, so each jitted kernel compiles once per dtype (a compilation takes ~8 s here).
N, P, CHUNK, MAX_K = 120, 3, 32, 4


@pytest.fixture(autouse=True)
def _x64():
    # The suite enables x64 in conftest; make it explicit here and restore afterwards.
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", old)


# Module-level jitted kernels: each compiles once per dtype.
replace_jit = jax.jit(moves.score_replace, static_argnames=("basis", "max_leaves"))
delete_jit = jax.jit(moves.score_delete, static_argnames=("basis", "max_leaves"))
pairs_jit = jax.jit(moves.score_pairs, static_argnames=("basis", "max_rows"))
apply_delete_jit = jax.jit(moves.apply_delete)
delete_slot_jit = jax.jit(moves.delete)
# evaluate_jit (tests/_shared.py): eager program.evaluate would retrace its loop every call.


@jax.jit
def _choose_and_apply_pair(program, scores):
    ch = moves.select_pair(scores, SMALL.q)
    return moves.apply_pair(program, ch), ch


def _data(x, y, sw=None, dtype=jnp.float64):
    assert x.shape == (N, P)
    sw = None if sw is None else jnp.asarray(sw, dtype)
    return scoring.chunk(jnp.asarray(x, dtype), jnp.asarray(y, dtype), sw, chunk_size=CHUNK)


# ------------------------------------------------------------------------ brute force


def _random_program(rng, p, q, k, max_k, dtype=jnp.float64):
    """A random tree of ``k`` operations built with program.insert (as the search does)."""
    pr = prog.empty_program(max_k, dtype)
    pr = prog.insert(pr, 0, prog.ADD, int(rng.integers(p)), int(rng.integers(q)),
                     rng.uniform(-1, 1))
    for _ in range(k):
        leaves = np.flatnonzero(np.asarray(pr.op) == prog.LEAF)
        pr = prog.insert(pr, int(rng.choice(leaves)), int(rng.choice([prog.ADD, prog.MUL])),
                         int(rng.integers(p)), int(rng.integers(q)), rng.uniform(-1, 1))
    return pr._replace(intercept=jnp.asarray(rng.normal(), dtype))


def _nested(program, slot=0):
    """The tree below ``slot`` as nested tuples: ("leaf", j, i, w) or (op, left, right)."""
    a = prog.to_numpy(program)
    if int(a["n_slots"]) == 0:
        return None

    def rec(s):
        if a["op"][s] == prog.LEAF:
            return ("leaf", int(a["feature"][s]), int(a["basis"][s]), float(a["weight"][s]), s)
        return (int(a["op"][s]), rec(int(a["left"][s])), rec(int(a["right"][s])))

    return rec(slot)


def _strip(t):
    """Drops the slot tags of leaves (layouts differ, trees compare by content)."""
    if t is None:
        return None
    if t[0] == "leaf":
        return t[:4]
    return (t[0], _strip(t[1]), _strip(t[2]))


def _eval(t, phi):
    """Recursive value of a nested tree on ``phi (n, p, q)``; None is the empty tree."""
    if t is None:
        return np.zeros(phi.shape[0])
    if t[0] == "leaf":
        return t[3] * phi[:, t[1], t[2]]
    if t[0] == "pair":  # ("pair", ja, ia, jb, ib, w): w * phi_a * phi_b
        return t[5] * phi[:, t[1], t[2]] * phi[:, t[3], t[4]]
    lv, rv = _eval(t[1], phi), _eval(t[2], phi)
    return lv + rv if t[0] == prog.ADD else lv * rv


def _substitute(t, slot, new):
    """Replaces the leaf tagged ``slot`` by the subtree ``new`` (None deletes it)."""
    if t[0] == "leaf":
        return new if t[4] == slot else t
    left, right = _substitute(t[1], slot, new), _substitute(t[2], slot, new)
    if left is None:  # the leaf was deleted: the sibling takes the parent's place
        return right
    if right is None:
        return left
    return (t[0], left, right)


def _box_lstsq(r, s, sw):
    """min over a, |w| <= 1 of sum sw (r - a - w s)^2 by lstsq; returns the SSE."""
    sq = np.sqrt(sw)
    a_mat = np.stack([np.ones_like(s), s], 1) * sq[:, None]
    coef = np.linalg.lstsq(a_mat, r * sq, rcond=None)[0]
    if abs(coef[1]) > 1:  # the profile loss is a convex parabola: the bound is active
        w = np.sign(coef[1])
        coef = np.array([np.average(r - w * s, weights=sw), w])
    return float(np.sum(sw * (r - coef[0] - coef[1] * s) ** 2))


def _affine_refit(tree_of_w, y, sw, phi):
    """SSE of the best ``w0`` and ``|w| <= 1`` for a tree affine in ``w``."""
    t0, t1 = _eval(tree_of_w(0.0), phi), _eval(tree_of_w(1.0), phi)
    return _box_lstsq(y - t0, t1 - t0, sw)


def _sse(program, x, y, sw, basis):
    pred = np.asarray(evaluate_jit(program, jnp.asarray(x), basis))
    return float(np.sum(sw * (y - pred) ** 2))


def _tss(y, sw):
    return float(np.sum(sw * (y - np.average(y, weights=sw)) ** 2))


def _problem(seed, n=120, p=3):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, p))
    y = rng.normal(size=n) + 1.5
    sw = rng.uniform(0.2, 2.0, size=n)
    data = scoring.chunk(jnp.asarray(x), jnp.asarray(y), jnp.asarray(sw), chunk_size=32)
    phi = np.asarray(SMALL.evaluate(jnp.asarray(x)))  # (n, p, q)
    return rng, x, y, sw, data, phi


def _check_layout(program):
    """The layout invariant of jaxtree.program: contiguous used slots, child > parent."""
    a = prog.to_numpy(program)
    m, cap = int(a["n_slots"]), len(a["op"])
    assert np.all(a["op"][:m] != prog.EMPTY) and np.all(a["op"][m:] == prog.EMPTY)
    n_leaf = int(np.sum(a["op"] == prog.LEAF))
    assert m == 0 or m == 2 * n_leaf - 1
    seen = np.zeros(cap, int)
    for s in range(cap):
        if a["op"][s] in (prog.ADD, prog.MUL):
            for c in (a["left"][s], a["right"][s]):
                assert s < c < m, (s, c, m)
                seen[c] += 1
        else:
            assert a["left"][s] == -1 and a["right"][s] == -1
        if a["op"][s] != prog.LEAF:
            assert a["feature"][s] == -1 and a["basis"][s] == -1 and a["weight"][s] == 0
    assert np.all(seen[1:m] == 1) and seen[0] == 0 and np.all(seen[m:] == 0)


# ---------------------------------------------------------------------------- replace


@pytest.mark.parametrize("seed", range(3))
def test_replace_scores_equal_brute_force_refits(seed):
    rng, x, y, sw, data, phi = _problem(seed)
    q = SMALL.q
    program = _random_program(rng, P, q, k=seed + 1, max_k=MAX_K)
    sc = replace_jit(program, data, SMALL, max_leaves=MAX_K + 1)
    tree = _nested(program)
    leaves = np.flatnonzero(np.asarray(program.op) == prog.LEAF)
    d = len(leaves)
    sse = np.asarray(sc.sse)
    assert np.all(np.isinf(sse[d:])) and np.all(np.isfinite(sse[:d]))
    np.testing.assert_array_equal(np.asarray(sc.leaf_slots)[:d], leaves)
    w0 = float(program.intercept)
    np.testing.assert_allclose(float(sc.rss), np.sum(sw * (y - w0 - _eval(tree, phi)) ** 2),
                               rtol=1e-12)
    for rank, slot in enumerate(leaves):
        for j in range(P):
            for i in range(q):
                col = j * q + i
                want = _affine_refit(lambda w: _substitute(tree, slot, ("leaf", j, i, w, slot)),
                                     y, sw, phi)
                np.testing.assert_allclose(sse[rank, col], want, rtol=1e-9, atol=1e-9)
                # The returned weight and intercept realise that SSE.
                w, a = float(sc.weight[rank, col]), float(sc.intercept[rank, col])
                assert abs(w) <= 1
                t = _eval(_substitute(tree, slot, ("leaf", j, i, w, slot)), phi)
                np.testing.assert_allclose(np.sum(sw * (y - a - t) ** 2), want, rtol=1e-9,
                                           atol=1e-9)
    ch = moves.select_replace(sc, q)
    assert int(ch.flat_index) == int(np.argmin(sse.reshape(-1)))
    new = moves.apply_replace(program, ch)
    np.testing.assert_allclose(_sse(new, x, y, sw, SMALL), float(ch.sse), rtol=1e-10)
    # Only the chosen slot's leaf fields and the intercept change.
    for f in ("op", "left", "right"):
        np.testing.assert_array_equal(np.asarray(getattr(new, f)), np.asarray(getattr(program, f)))
    for f in ("feature", "basis", "weight"):
        changed = np.flatnonzero(np.asarray(getattr(new, f)) != np.asarray(getattr(program, f)))
        assert set(changed) <= {int(ch.slot)}, f


def test_replace_of_the_empty_tree_has_no_candidates():
    _, x, y, sw, data, _ = _problem(0)
    sc = replace_jit(prog.empty_program(MAX_K, jnp.float64), data, SMALL, max_leaves=MAX_K + 1)
    assert np.all(np.isinf(np.asarray(sc.sse)))
    np.testing.assert_allclose(float(sc.rss), _tss(y, sw), rtol=1e-12)


# ----------------------------------------------------------------------------- delete


@pytest.mark.parametrize("seed", range(6))
def test_delete_scores_equal_explicit_reduced_trees(seed):
    rng, x, y, sw, data, phi = _problem(10 + seed)
    program = _random_program(rng, P, SMALL.q, k=[0, 1, 2, 3, 4, 4][seed], max_k=MAX_K)
    sc = delete_jit(program, data, SMALL, max_leaves=MAX_K + 1)
    tree = _nested(program)
    leaves = np.flatnonzero(np.asarray(program.op) == prog.LEAF)
    d = len(leaves)
    sse = np.asarray(sc.sse)
    assert np.all(np.isinf(sse[d:])) and np.all(np.isfinite(sse[:d]))
    e = y - float(program.intercept) - _eval(tree, phi)
    np.testing.assert_allclose(float(sc.rss), np.sum(sw * e * e), rtol=1e-12)
    for rank, slot in enumerate(leaves):
        reduced = _substitute(tree, slot, None)  # None when the root-only tree is emptied
        resid = y - _eval(reduced, phi)
        np.testing.assert_allclose(sse[rank], _tss(resid, sw), rtol=1e-10)
        np.testing.assert_allclose(float(sc.intercept[rank]), np.average(resid, weights=sw),
                                   rtol=1e-10, atol=1e-12)
        # apply: the layout invariant, the expected tree, the claimed SSE.
        choice = moves.DeleteChoice(jnp.int32(rank), sc.leaf_slots[rank], sc.intercept[rank],
                                    sc.sse[rank])
        new = apply_delete_jit(program, choice)
        _check_layout(new)
        assert int(new.n_slots) == max(int(program.n_slots) - 2, 0)
        assert _strip(_nested(new)) == _strip(reduced)
        np.testing.assert_allclose(np.asarray(evaluate_jit(new, jnp.asarray(x), SMALL)),
                                   float(sc.intercept[rank]) + _eval(reduced, phi), rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_allclose(_sse(new, x, y, sw, SMALL), sse[rank], rtol=1e-10)
    ch = moves.select_delete(sc)
    assert int(ch.flat_index) == int(np.argmin(sse))


def test_delete_the_only_leaf_gives_the_empty_tree():
    _, x, y, sw, data, _ = _problem(3)
    program = prog.insert(prog.empty_program(MAX_K, jnp.float64), 0, prog.ADD, 1, 4, 0.6)
    sc = delete_jit(program, data, SMALL, max_leaves=MAX_K + 1)
    np.testing.assert_allclose(float(sc.sse[0]), _tss(y, sw), rtol=1e-12)
    assert np.all(np.isinf(np.asarray(sc.sse)[1:]))
    new = apply_delete_jit(program, moves.select_delete(sc))
    assert int(new.n_slots) == 0 and np.all(np.asarray(new.op) == prog.EMPTY)
    np.testing.assert_allclose(float(new.intercept), np.average(y, weights=sw), rtol=1e-12)
    empty = delete_jit(prog.empty_program(MAX_K, jnp.float64), data, SMALL, max_leaves=MAX_K + 1)
    assert np.all(np.isinf(np.asarray(empty.sse)))


def test_delete_by_hand_keeps_the_layout():
    # slots 0 = +(1, 2), 1 = *(3, 4), 4 = +(5, 6); leaves 2 (0.5), 3 (0.1), 5 (-0.7),
    # 6 (0.9). Deleting leaf 3 (under '*') moves the op node 4 into slot 1 and
    # renumbers 5, 6 -> 3, 4.
    pr = prog.insert(prog.empty_program(MAX_K, jnp.float64), 0, prog.ADD, 0, 0, 0.1)
    pr = prog.insert(pr, 0, prog.ADD, 0, 1, 0.5)
    pr = prog.insert(pr, 1, prog.MUL, 1, 2, -0.7)
    pr = prog.insert(pr, 4, prog.ADD, 2, 3, 0.9)
    _check_layout(pr)
    tree = _nested(pr)
    for slot in (2, 3, 5, 6):
        new = delete_slot_jit(pr, slot)
        _check_layout(new)
        assert _strip(_nested(new)) == _strip(_substitute(tree, slot, None))
    new = prog.to_numpy(delete_slot_jit(pr, 3))
    np.testing.assert_array_equal(new["op"][:5], [prog.ADD, prog.ADD, prog.LEAF, prog.LEAF,
                                                  prog.LEAF])
    np.testing.assert_array_equal(new["left"][:5], [1, 3, -1, -1, -1])
    np.testing.assert_array_equal(new["right"][:5], [2, 4, -1, -1, -1])
    np.testing.assert_allclose(new["weight"][:5], [0, 0, 0.5, -0.7, 0.9])


# ----------------------------------------------------------------------------- pairs


def _find_leaf(t, slot):
    if t[0] == "leaf":
        return t if t[4] == slot else None
    return _find_leaf(t[1], slot) or _find_leaf(t[2], slot)


@pytest.mark.parametrize("seed", range(2))
def test_pair_scores_equal_brute_force_refits(seed):
    rng, x, y, sw, data, phi = _problem(20 + seed)
    q = SMALL.q
    pq = P * q
    program = _random_program(rng, P, q, k=1 + seed, max_k=MAX_K)
    sc = pairs_jit(program, data, SMALL, max_rows=MAX_K + 1)
    tree = _nested(program)
    leaves = np.flatnonzero(np.asarray(program.op) == prog.LEAF)
    rss = float(sc.rss)
    e = y - float(program.intercept) - _eval(tree, phi)
    np.testing.assert_allclose(rss, np.sum(sw * e * e), rtol=1e-12)
    assert np.all(np.isinf(np.asarray(sc.sse)[2 * len(leaves):]))
    upper = np.triu_indices(pq)
    for rank, slot in enumerate(leaves):
        leaf = _find_leaf(tree, slot)
        for op_idx, op in enumerate((prog.ADD, prog.MUL)):
            brute = np.full((pq, pq), np.inf)
            for a, b in zip(*upper):
                ja, ia, jb, ib = a // q, a % q, b // q, b % q
                brute[a, b] = _affine_refit(
                    lambda w: _substitute(tree, slot, (op, leaf, ("pair", ja, ia, jb, ib, w))),
                    y, sw, phi)
            row = 2 * rank + op_idx
            np.testing.assert_allclose(float(sc.sse[row]), brute.min(), rtol=1e-9)
            a, b = int(sc.col_a[row]), int(sc.col_b[row])
            flat = brute.reshape(-1)
            want = int(np.flatnonzero(flat <= flat.min() + scoring.tie_rtol(np.float64) * rss)[0])
            assert a <= b and a * pq + b == want
            # The returned weight and intercept realise the SSE.
            w, w0 = float(sc.weight[row]), float(sc.intercept[row])
            assert abs(w) <= 1
            t = _eval(_substitute(tree, slot, (op, leaf, ("pair", a // q, a % q, b // q, b % q,
                                                           w))), phi)
            np.testing.assert_allclose(np.sum(sw * (y - w0 - t) ** 2), brute.min(), rtol=1e-9)
    new, ch = _choose_and_apply_pair(program, sc)
    assert int(ch.row) == int(np.argmin(np.asarray(sc.sse)))
    _check_layout(new)
    assert int(new.n_slots) == int(program.n_slots) + 4
    np.testing.assert_allclose(_sse(new, x, y, sw, SMALL), float(ch.sse), rtol=1e-10)


def test_pair_rows_for_given_slots_and_shape_check():
    rng, x, y, sw, data, _ = _problem(30)
    program = _random_program(rng, P, SMALL.q, k=2, max_k=MAX_K)
    full = pairs_jit(program, data, SMALL, max_rows=MAX_K + 1)
    leaves = np.flatnonzero(np.asarray(program.op) == prog.LEAF)
    op_slot = int(np.flatnonzero(np.asarray(program.op) >= prog.ADD)[0])
    slots = jnp.asarray([leaves[2], -1, op_slot, leaves[0], -1], jnp.int32)
    part = pairs_jit(program, data, SMALL, max_rows=MAX_K + 1, slots=slots)
    for f in ("sse", "weight", "intercept", "col_a", "col_b"):
        got, want = np.asarray(getattr(part, f)), np.asarray(getattr(full, f))
        np.testing.assert_array_equal(got[:2], want[4:6], err_msg=f)
        np.testing.assert_array_equal(got[6:8], want[0:2], err_msg=f)
    assert np.all(np.isinf(np.asarray(part.sse)[[2, 3, 4, 5, 8, 9]]))
    with pytest.raises(ValueError, match=r"slots must have shape \(max_rows,\)"):
        moves.score_pairs(program, data, SMALL, max_rows=2, slots=slots)


def _planted(dtype, seed=0, mult=False):
    """y = sin(2 pi x1) sin(2 pi x2) (+ 0.5 x3, or times 0.8 cos(pi x3)) + tiny noise."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(N, P))
    inter = np.sin(2 * np.pi * x[:, 0]) * np.sin(2 * np.pi * x[:, 1])
    y = 0.8 * np.cos(np.pi * x[:, 2]) * inter if mult else inter + 0.5 * x[:, 2]
    y = y + 1e-3 * rng.standard_normal(N)
    return x, y


def _pair_of(ch):
    return {(int(ch.feature_a), int(ch.basis_a)), (int(ch.feature_b), int(ch.basis_b))}


def test_pair_finds_a_planted_interaction_that_single_leaves_miss():
    x, y = _planted(jnp.float64)
    pure = y - 0.5 * x[:, 2]
    # No single leaf explains the pure interaction (R^2 under 10% for every phi_i(x_j)).
    phi = np.asarray(SMALL.evaluate(jnp.asarray(x))).reshape(N, -1)
    r2 = np.array([np.corrcoef(pure, c)[0, 1] ** 2 for c in phi.T if np.std(c) > 0])
    assert r2.max() < 0.1, r2.max()
    # ... but the pair move from the empty program finds it.
    empty = prog.empty_program(MAX_K, jnp.float64)
    sc = pairs_jit(empty, _data(x, pure), SMALL, max_rows=MAX_K + 1)
    assert np.all(np.isinf(np.asarray(sc.sse)[1:]))  # only row 0 is a candidate
    new, ch = _choose_and_apply_pair(empty, sc)
    assert int(ch.row) == 0 and _pair_of(ch) == {(0, SIN2), (1, SIN2)}
    assert float(ch.sse) < 1e-3 * _tss(pure, np.ones(N))
    _check_layout(new)
    np.testing.assert_allclose(_sse(new, x, pure, np.ones(N), SMALL), float(ch.sse), rtol=1e-9)
    # From the one-leaf program 0.5 x3, the '+' row at its leaf finds it.
    leaf = prog.insert(empty, 0, prog.ADD, 2, SMALL.names.index("x"), 0.5)
    sc = pairs_jit(leaf, _data(x, y), SMALL, max_rows=MAX_K + 1)
    new, ch = _choose_and_apply_pair(leaf, sc)
    assert int(ch.op) == prog.ADD and int(ch.slot) == 0
    assert _pair_of(ch) == {(0, SIN2), (1, SIN2)}
    assert float(ch.sse) < 1e-5 * N
    np.testing.assert_allclose(_sse(new, x, y, np.ones(N), SMALL), float(ch.sse), rtol=1e-9)


@pytest.mark.parametrize("dtype", [jnp.float64, jnp.float32])
def test_pair_under_mul_in_float64_and_float32(dtype):
    # y = 0.8 cos(pi x3) * sin(2 pi x1) sin(2 pi x2): the '*' row at the leaf 0.8 cos(pi x3).
    x, y = _planted(dtype, seed=1, mult=True)
    leaf = prog.insert(prog.empty_program(MAX_K, dtype), 0, prog.ADD, 2,
                       SMALL.names.index("cos(πx)"), 0.8)
    sc = pairs_jit(leaf, _data(x, y, dtype=dtype), SMALL, max_rows=MAX_K + 1)
    new, ch = _choose_and_apply_pair(leaf, sc)
    assert int(ch.op) == prog.MUL and int(ch.slot) == 0
    assert _pair_of(ch) == {(0, SIN2), (1, SIN2)}
    np.testing.assert_allclose(abs(float(ch.weight)), 1.0, atol=1e-2)
    assert float(ch.sse) < 1e-5 * N
    assert new.weight.dtype == dtype and ch.sse.dtype == dtype
    _check_layout(new)
    tol = dict(rtol=1e-2, atol=1e-5) if dtype == jnp.float32 else dict(rtol=1e-9)
    np.testing.assert_allclose(_sse(new, x.astype(dtype), y, np.ones(N), SMALL), float(ch.sse),
                               **tol)


# ------------------------------------------------------------------ float32 vs float64


@pytest.mark.slow  # two more float32 compilations (~15 s); the pair kernel's float32 path
# is in the default suite (test_pair_under_mul_in_float64_and_float32)
def test_float32_makes_the_float64_choices():
    rng = np.random.default_rng(5)
    x = rng.uniform(size=(N, P))
    # Well separated, around the tree 0.5 x1^2 + 0.7 x2 with intercept 3 (an offset
    # that makes raw float32 moments cancel).
    y = (3.0 + 0.9 * np.cos(np.pi * x[:, 0]) + 0.7 * x[:, 1] ** 2
         + 0.6 * np.sin(2 * np.pi * x[:, 1]) * np.sin(2 * np.pi * x[:, 2])
         + 0.01 * rng.standard_normal(N))
    sw = rng.uniform(0.5, 1.5, size=N)
    out = {}
    for dt in (jnp.float64, jnp.float32):
        data = _data(x, y, sw, dtype=dt)
        pr = prog.insert(prog.empty_program(MAX_K, dt), 0, prog.ADD, 0, SMALL.names.index("x²"),
                         0.5)
        pr = prog.insert(pr, 0, prog.ADD, 1, SMALL.names.index("x"), 0.7)
        pr = pr._replace(intercept=jnp.asarray(3.0, dt))
        rc = moves.select_replace(replace_jit(pr, data, SMALL, max_leaves=MAX_K + 1), SMALL.q)
        dc = moves.select_delete(delete_jit(pr, data, SMALL, max_leaves=MAX_K + 1))
        pc = moves.select_pair(pairs_jit(pr, data, SMALL, max_rows=MAX_K + 1), SMALL.q)
        out[dt] = ((int(rc.flat_index), int(dc.flat_index), int(pc.row), tuple(sorted(_pair_of(pc)))),
                   np.array([float(rc.sse), float(dc.sse), float(pc.sse)]))
    choice64, sse64 = out[jnp.float64]
    # The replace turns the wrong leaf x1^2 (rank 0) into cos(pi x1).
    assert choice64[0] == 0 * P * SMALL.q + 0 * SMALL.q + SMALL.names.index("cos(πx)")
    assert out[jnp.float32][0] == choice64
    np.testing.assert_allclose(out[jnp.float32][1], sse64, rtol=1e-3)


def test_row_counts_are_checked_before_tracing():
    _, _, _, _, data, _ = _problem(0)
    pr = prog.empty_program(MAX_K, jnp.float64)
    with pytest.raises(ValueError, match="max_leaves must be >= 1"):
        moves.score_replace(pr, data, SMALL, max_leaves=0)
    with pytest.raises(TypeError, match="max_leaves must be a Python int"):
        moves.score_delete(pr, data, SMALL, max_leaves=2.0)
    with pytest.raises(ValueError, match="max_rows must be >= 1"):
        moves.score_pairs(pr, data, SMALL, max_rows=0)
