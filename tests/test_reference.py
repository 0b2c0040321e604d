"""Tests of the numpy reference (the paper's Algorithms 1 and 2)."""

import numpy as np
import pytest

from jaxtree import reference as R

# ----------------------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------------------


def random_phi(rng, n=60, p=3, q=4):
    return rng.uniform(-1.0, 1.0, size=(n, p, q))


def random_tree(rng, n_ops, p, q, max_k=None):
    """A tree grown by ``n_ops`` random insertions with random weights in [-1, 1]."""
    max_k = n_ops if max_k is None else max_k
    tree = R.single_leaf(max_k, rng.integers(p), rng.integers(q), rng.uniform(-1, 1), 0.3)
    for _ in range(n_ops):
        slot = int(rng.choice(R.leaves(tree)))
        op = int(rng.choice([R.ADD, R.MUL]))
        tree = R.insert(tree, slot, op, int(rng.integers(p)), int(rng.integers(q)),
                        rng.uniform(-1, 1))
    return tree


def leaf_value(tree, slot, phi):
    return tree.weight[slot] * phi[:, tree.feature[slot], tree.basis[slot]]


def weighted_sse(tree, phi, y, sw):
    resid = y - R.evaluate(tree, phi)
    return float(np.sum(sw * resid * resid))


# ----------------------------------------------------------------------------------------
# Layout, evaluation and Algorithm 2
# ----------------------------------------------------------------------------------------

# The paper's Appendix C example: A = '*'(B, C), B = '+'(D, E), C = '+'(F, G) with
# D = .1 x2^2, E = -.05 x1, F = .3 sin(pi x2), G = .02 x3. Basis 0: x, 1: x^2, 2: sin(pi x).
X1, X2, X3 = 0, 1, 2
LIN, SQ, SIN = 0, 1, 2


def paper_phi(x):
    x = np.asarray(x, dtype=np.float64)
    return np.stack([x, x**2, np.sin(np.pi * x)], axis=-1)[None]  # (1, p=3, q=3)


def paper_tree():
    tree = R.single_leaf(3, X2, SQ, 0.1)                      # D
    tree = R.insert(tree, 0, R.MUL, X2, SIN, 0.3)             # A = D * F
    tree = R.insert(tree, 1, R.ADD, X1, LIN, -0.05)           # B = D + E
    tree = R.insert(tree, 2, R.ADD, X3, LIN, 0.02)            # C = F + G
    return tree


def test_insert_layout_matches_slot_convention():
    tree = paper_tree()
    np.testing.assert_array_equal(tree.op, [R.MUL, R.ADD, R.ADD, R.LEAF, R.LEAF, R.LEAF, R.LEAF])
    np.testing.assert_array_equal(tree.left, [1, 3, 5, -1, -1, -1, -1])
    np.testing.assert_array_equal(tree.right, [2, 4, 6, -1, -1, -1, -1])
    np.testing.assert_array_equal(tree.feature, [-1, -1, -1, X2, X1, X2, X3])
    np.testing.assert_array_equal(tree.basis, [-1, -1, -1, SQ, LIN, SIN, LIN])
    np.testing.assert_allclose(tree.weight, [0, 0, 0, 0.1, -0.05, 0.3, 0.02])
    assert tree.n_slots == 7 and tree.max_k == 3
    assert R.leaves(tree) == [3, 4, 5, 6]


def test_algorithm2_paper_example():
    tree = paper_tree()
    phi = paper_phi([1.0, 1.0, 1.0])
    node_e = 4
    assert R.path_to(tree, node_e) == [(0, "left"), (1, "right")]
    b, k = R.leaf_multipliers(tree, node_e, phi)
    np.testing.assert_allclose(b, [0.002], atol=1e-12)
    np.testing.assert_allclose(k, [0.02], atol=1e-12)


def test_evaluate_paper_example_formula():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, size=(20, 3))
    phi = np.concatenate([paper_phi(row) for row in x])
    tree = paper_tree()
    tree.intercept = 0.7
    expected = 0.7 + (0.1 * x[:, 1] ** 2 - 0.05 * x[:, 0]) * (
        0.3 * np.sin(np.pi * x[:, 1]) + 0.02 * x[:, 2]
    )
    np.testing.assert_allclose(R.evaluate(tree, phi), expected, rtol=1e-13)


@pytest.mark.parametrize("seed", range(8))
def test_leaf_multipliers_affine_and_derivative(seed):
    rng = np.random.default_rng(seed)
    phi = random_phi(rng)
    tree = random_tree(rng, n_ops=int(rng.integers(1, 6)), p=3, q=4)
    t_value = R.evaluate_subtree(tree, 0, phi)
    h = 1e-6
    for slot in R.leaves(tree):
        b, k = R.leaf_multipliers(tree, slot, phi)
        c = leaf_value(tree, slot, phi)
        np.testing.assert_allclose(t_value, b + k * c, rtol=1e-12, atol=1e-14)
        # k = dT/dc: T is affine in c = w * phi_d, so dT/dw = k * phi_d.
        up, down = tree.copy(), tree.copy()
        up.weight[slot] += h
        down.weight[slot] -= h
        d_dw = (R.evaluate_subtree(up, 0, phi) - R.evaluate_subtree(down, 0, phi)) / (2 * h)
        phi_d = phi[:, tree.feature[slot], tree.basis[slot]]
        np.testing.assert_allclose(d_dw, k * phi_d, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(d_dw / phi_d, k, rtol=1e-5, atol=1e-8)


def test_path_to_root_and_errors():
    tree = paper_tree()
    assert R.path_to(tree, 0) == []
    with pytest.raises(ValueError):
        R.path_to(tree, 100)
    with pytest.raises(ValueError, match="not a leaf"):
        R.insert(tree, 0, R.ADD, 0, 0, 0.5)
    with pytest.raises(ValueError, match="full"):
        R.insert(tree, 3, R.ADD, 0, 0, 0.5)
    with pytest.raises(ValueError, match="op"):
        R.insert(R.single_leaf(2, 0, 0, 0.5), 0, R.LEAF, 0, 0, 0.5)


# ----------------------------------------------------------------------------------------
# The clipped one-dimensional least squares
# ----------------------------------------------------------------------------------------


def grid_search(r, s, sw, n_grid=40001):
    """Best (w, sse) over a grid of w in [-1, 1], with the optimal intercept for each w."""
    best = (None, np.inf)
    for w in np.linspace(-1.0, 1.0, n_grid):
        e = r - w * s
        e = e - np.sum(sw * e) / np.sum(sw)
        sse = np.sum(sw * e * e)
        if sse < best[1]:
            best = (w, sse)
    return best


@pytest.mark.parametrize("seed", range(5))
def test_fit_candidate_equals_lstsq_inside_box(seed):
    rng = np.random.default_rng(seed)
    n = 50
    s = rng.uniform(-1, 1, n)
    r = 1.5 + rng.uniform(-0.8, 0.8) * s + 0.1 * rng.normal(size=n)
    sw = rng.uniform(0.1, 2.0, n)
    w, a, sse = R.fit_candidate(r, s, sw)
    root = np.sqrt(sw)
    design = np.stack([np.ones(n), s], axis=1) * root[:, None]
    coef, *_ = np.linalg.lstsq(design, r * root, rcond=None)
    assert abs(coef[1]) < 1.0
    np.testing.assert_allclose([a, w], coef, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sse, np.sum(sw * (r - coef[0] - coef[1] * s) ** 2), rtol=1e-10)


@pytest.mark.parametrize("slope", [3.0, -2.5])
def test_fit_candidate_equals_grid_search_when_clipped(slope):
    rng = np.random.default_rng(1)
    n = 40
    s = rng.uniform(-1, 1, n)
    r = -0.4 + slope * s + 0.2 * rng.normal(size=n)
    sw = rng.uniform(0.1, 2.0, n)
    w, a, sse = R.fit_candidate(r, s, sw)
    assert w == np.sign(slope)
    w_grid, sse_grid = grid_search(r, s, sw)
    assert abs(w - w_grid) <= 1e-4
    np.testing.assert_allclose(sse, sse_grid, rtol=1e-9)
    np.testing.assert_allclose(sse, np.sum(sw * (r - a - w * s) ** 2), rtol=1e-10)


def test_fit_candidate_degenerate():
    rng = np.random.default_rng(2)
    r = rng.normal(size=30)
    sw = rng.uniform(0.5, 1.5, 30)
    r_mean = np.sum(sw * r) / np.sum(sw)
    crr = np.sum(sw * (r - r_mean) ** 2)
    for s in (np.zeros(30), np.full(30, 0.7)):
        w, a, sse = R.fit_candidate(r, s, sw)
        assert w == 0.0
        np.testing.assert_allclose([a, sse], [r_mean, crr], rtol=1e-12)
    w, a, sse = R.fit_candidate(r, np.zeros(30))  # sw=None means ones
    np.testing.assert_allclose([w, a], [0.0, r.mean()], rtol=1e-12)


# ----------------------------------------------------------------------------------------
# Candidate scoring and the tie rule
# ----------------------------------------------------------------------------------------


def test_score_candidates_shapes_and_consistency():
    rng = np.random.default_rng(3)
    p, q = 3, 4
    phi = random_phi(rng, n=50, p=p, q=q)
    y = rng.normal(size=50)
    sw = rng.uniform(0.2, 1.0, 50)
    sse0, w0, a0 = R.score_candidates(None, phi, y, sw)
    assert sse0.shape == w0.shape == a0.shape == (p, q)
    tree = random_tree(rng, n_ops=3, p=p, q=q, max_k=4)
    sse, w, a = R.score_candidates(tree, phi, y, sw)
    leaf_slots = R.leaves(tree)
    assert sse.shape == (len(leaf_slots), 2, p, q)
    assert np.all(np.abs(w) <= 1.0)
    # Applying a candidate (weight w, intercept a) reproduces its score.
    for rank, op_idx, j, i in [(0, 0, 0, 0), (1, 1, 2, 3), (2, 0, 1, 2), (3, 1, 0, 1)]:
        op = (R.ADD, R.MUL)[op_idx]
        new = R.insert(tree, leaf_slots[rank], op, j, i, w[rank, op_idx, j, i])
        new.intercept = a[rank, op_idx, j, i]
        np.testing.assert_allclose(weighted_sse(new, phi, y, sw), sse[rank, op_idx, j, i],
                                   rtol=1e-10)
        # flat index convention
        flat = ((rank * 2 + op_idx) * p + j) * q + i
        assert np.ravel(sse)[flat] == sse[rank, op_idx, j, i]


def test_select_candidate_tie_rule():
    assert R.select_candidate(np.array([3.0, 1.0 + 1e-12, 1.0, 2.0]), rss=1.0) == 1
    assert R.select_candidate(np.array([3.0, 1.0 + 1e-6, 1.0, 2.0]), rss=1.0) == 2
    assert R.select_candidate(np.array([[2.0, 0.5], [0.5, 0.7]]), rss=1.0) == 1


def test_plus_chain_ties_pick_lowest_leaf():
    # Under a '+' root, inserting '+ w phi' at either leaf is the same function.
    rng = np.random.default_rng(4)
    phi = random_phi(rng, n=40, p=2, q=3)
    y = 0.5 * phi[:, 0, 0] + 0.4 * phi[:, 1, 2] + 0.3 * phi[:, 1, 1]
    tree = R.insert(R.single_leaf(2, 0, 0, 0.5), 0, R.ADD, 1, 2, 0.4)
    sse, _, _ = R.score_candidates(tree, phi, y)
    np.testing.assert_allclose(sse[0, 0], sse[1, 0], rtol=1e-12, atol=1e-14)
    flat = R.select_candidate(sse, R.weighted_tss(y))
    assert flat == (0 * 2 + 0) * 2 * 3 + 1 * 3 + 1  # leaf rank 0, '+', j=1, i=1


# ----------------------------------------------------------------------------------------
# The greedy search
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("refine", ["coordinate", None])
@pytest.mark.parametrize("seed", range(3))
def test_history_non_increasing(refine, seed):
    rng = np.random.default_rng(seed)
    phi = random_phi(rng, n=60, p=3, q=3)
    y = np.sin(3 * phi[:, 0, 0]) * phi[:, 1, 2] + 0.1 * rng.normal(size=60)
    res = R.fit(phi, y, 4, refine=refine)
    assert len(res.history) == 5 and len(res.choices) == 5
    assert res.tree.n_slots == 9 and len(res.tree.op) == 9
    hist = np.array(res.history)
    assert np.all(np.diff(hist) <= 1e-12 * hist[0])
    np.testing.assert_allclose(hist[-1], R.weighted_mse(res.tree, phi, y), rtol=1e-12)
    assert np.all(np.abs(res.tree.weight) <= 1.0)


def test_history_equals_best_score_without_refinement():
    rng = np.random.default_rng(5)
    phi = random_phi(rng, n=50, p=3, q=3)
    y = rng.normal(size=50)
    seen = []
    res = R.fit(phi, y, 3, refine=None, callback=lambda step, tree, loss: seen.append(
        (step, tree, loss)))
    assert [s for s, _, _ in seen] == [0, 1, 2, 3]
    for step, tree, loss in seen[1:]:
        prev = seen[step - 1][1]
        sse, _, _ = R.score_candidates(prev, phi, y)
        flat = res.choices[step][0]
        np.testing.assert_allclose(loss * 50, np.ravel(sse)[flat], rtol=1e-10)
        assert np.ravel(sse)[flat] <= np.min(sse) + 1e-9 * R.weighted_tss(y)


def test_planted_tree_recovered():
    # y = 0.8 phi_a(x_0) * 0.5 phi_b(x_1) + 0.3 phi_c(x_2), noise free. phi_b takes values
    # in {0, 1} (an indicator-like basis function): the '*' step scores with the existing
    # leaf weight fixed and |w'| <= 1, and that weight (the marginal fit of 0.4 phi_a phi_b)
    # is at most 0.4, so the ideal w' >= 1 is clipped; with a mean-zero continuous phi_b the
    # clipped product then scores no better than '+' noise and greedy misses it.
    rng = np.random.default_rng(0)
    n, p, q = 200, 4, 3
    phi = rng.uniform(-1, 1, size=(n, p, q))
    phi[:, 1, 2] = (rng.random(n) < 0.5).astype(np.float64)
    y = 0.8 * phi[:, 0, 1] * 0.5 * phi[:, 1, 2] + 0.3 * phi[:, 2, 0]
    res = R.fit(phi, y, 2)
    tree = res.tree
    assert res.history[-1] < 1e-10 * np.var(y)
    got = sorted((int(tree.feature[s]), int(tree.basis[s])) for s in R.leaves(tree))
    assert got == [(0, 1), (1, 2), (2, 0)]
    assert [c[1] for c in res.choices] == [R.LEAF, R.ADD, R.MUL]
    np.testing.assert_allclose(R.evaluate(tree, phi), y, atol=1e-5)


def test_sample_weight_two_equals_duplicated_rows():
    rng = np.random.default_rng(6)
    n = 40
    phi = random_phi(rng, n=n, p=3, q=3)
    y = phi[:, 0, 1] * phi[:, 2, 2] + 0.2 * rng.normal(size=n)
    sw = rng.integers(1, 3, size=n).astype(np.float64)
    rows = np.repeat(np.arange(n), sw.astype(int))
    res_w = R.fit(phi, y, 3, sample_weight=sw)
    res_d = R.fit(phi[rows], y[rows], 3)
    assert res_w.choices == res_d.choices
    np.testing.assert_allclose(res_w.history, res_d.history, rtol=1e-9)
    np.testing.assert_allclose(res_w.tree.weight, res_d.tree.weight, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res_w.tree.intercept, res_d.tree.intercept, rtol=1e-9)


@pytest.mark.parametrize("refine", ["coordinate", None])
def test_zero_weight_rows_change_nothing(refine):
    rng = np.random.default_rng(7)
    n, extra = 40, 15
    phi = random_phi(rng, n=n + extra, p=3, q=3)
    y = phi[:, 1, 0] + 0.5 * phi[:, 0, 2] * phi[:, 2, 1] + 0.1 * rng.normal(size=n + extra)
    y[n:] = 50.0 * rng.normal(size=extra)  # wild values that must be ignored
    sw = np.r_[np.ones(n), np.zeros(extra)]
    res_pad = R.fit(phi, y, 3, sample_weight=sw, refine=refine)
    res = R.fit(phi[:n], y[:n], 3, refine=refine)
    assert res_pad.choices == res.choices
    np.testing.assert_allclose(res_pad.history, res.history, rtol=1e-10)
    np.testing.assert_allclose(res_pad.tree.weight, res.tree.weight, rtol=1e-10, atol=1e-13)
    # Unit weights equal no weights.
    res_ones = R.fit(phi[:n], y[:n], 3, sample_weight=np.ones(n), refine=refine)
    assert res_ones.choices == res.choices


def test_k_zero_is_best_single_leaf():
    rng = np.random.default_rng(8)
    phi = random_phi(rng, n=30, p=2, q=3)
    y = 0.6 * phi[:, 1, 2] + 0.2
    res = R.fit(phi, y, 0)
    assert len(res.tree.op) == 1 and res.tree.n_slots == 1
    assert res.choices == [(1 * 3 + 2, R.LEAF, 0, 1, 2)]
    np.testing.assert_allclose(res.tree.weight[0], 0.6)
    np.testing.assert_allclose(res.tree.intercept, 0.2)
    assert res.history[0] < 1e-25


def test_refine_coordinate_does_not_increase_loss():
    rng = np.random.default_rng(9)
    phi = random_phi(rng, n=60, p=3, q=3)
    y = rng.normal(size=60)
    tree = random_tree(rng, n_ops=4, p=3, q=3)
    before = R.weighted_mse(tree, phi, y)
    refined = R.refine_coordinate(tree, phi, y, sweeps=5)
    after = R.weighted_mse(refined, phi, y)
    assert after <= before
    assert np.all(np.abs(refined.weight) <= 1.0)
    np.testing.assert_array_equal(refined.op, tree.op)  # structure unchanged, input untouched
    assert R.refine_coordinate(tree, phi, y, sweeps=0).weight.tolist() == tree.weight.tolist()


# ----------------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------------


def test_validation_errors():
    rng = np.random.default_rng(10)
    phi = random_phi(rng, n=10, p=2, q=2)
    y = rng.normal(size=10)
    with pytest.raises(ValueError, match="3-D"):
        R.fit(phi[:, :, 0], y, 1)
    with pytest.raises(ValueError, match="1-D"):
        R.fit(phi, y[:, None], 1)
    with pytest.raises(ValueError, match="samples"):
        R.fit(phi, y[:9], 1)
    with pytest.raises(ValueError, match="'coordinate'"):
        R.fit(phi, y, 1, refine="lbfgs")
    with pytest.raises(ValueError, match=">= 0"):
        R.fit(phi, y, -1)
    with pytest.raises(TypeError, match="int"):
        R.fit(phi, y, 1.5)
    with pytest.raises(TypeError, match="int"):
        R.fit(phi, y, True)
    with pytest.raises(ValueError, match="shape"):
        R.fit(phi, y, 1, sample_weight=np.ones(9))
    with pytest.raises(ValueError, match="non-negative"):
        R.fit(phi, y, 1, sample_weight=-np.ones(10))
    with pytest.raises(ValueError, match="positive sum"):
        R.fit(phi, y, 1, sample_weight=np.zeros(10))
    bad = phi.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        R.fit(bad, y, 1)
    with pytest.raises(ValueError, match="sweeps"):
        R.fit(phi, y, 1, sweeps=-1)
