"""The padded tree program: evaluation, leaf multipliers, insertion, rendering."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtree import basis as B
from jaxtree import program as prog
from jaxtree import reference as R

BS = B.make_basis(hats=3, sines=2, cosines=2, powers=2, truncated_cubics=2)


def _random_tree(rng, p, k, max_k=None):
    tree = R.single_leaf(max_k or k, int(rng.integers(p)), int(rng.integers(BS.q)),
                         rng.uniform(-1, 1), rng.normal())
    for _ in range(k):
        tree = R.insert(tree, int(rng.choice(R.leaves(tree))), int(rng.choice([R.ADD, R.MUL])),
                        int(rng.integers(p)), int(rng.integers(BS.q)), rng.uniform(-1, 1))
    return tree


def _prog(tree, dtype=jnp.float64):
    return prog.from_arrays(tree.op, tree.left, tree.right, tree.feature, tree.basis, tree.weight,
                            tree.intercept, tree.n_slots, dtype=dtype)


def test_op_codes_match_reference():
    assert (prog.EMPTY, prog.LEAF, prog.ADD, prog.MUL) == (R.EMPTY, R.LEAF, R.ADD, R.MUL)


@pytest.mark.parametrize("seed", range(5))
def test_evaluate_equals_recursive_reference(seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(64, 3))
    tree = _random_tree(rng, 3, int(rng.integers(0, 6)), max_k=6)
    phi = np.asarray(BS.evaluate(jnp.asarray(x)))
    got = np.asarray(jax.jit(prog.evaluate, static_argnums=2)(_prog(tree), jnp.asarray(x), BS))
    np.testing.assert_allclose(got, R.evaluate(tree, phi), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_leaf_multipliers_equal_reverse_mode_and_algorithm_2(seed):
    rng = np.random.default_rng(10 + seed)
    x = rng.uniform(size=(32, 3))
    tree = _random_tree(rng, 3, 5)
    program = _prog(tree)
    c = prog.leaf_values(program, jnp.asarray(x), BS)
    km = prog.leaf_multipliers(program, prog.node_values(program, c))
    # reverse mode: dT/dc, per sample (each sample depends only on its own leaf values)
    grad = jax.grad(lambda cc: jnp.sum(prog.tree_value(program, prog.node_values(program, cc))))(c)
    leaves = R.leaves(tree)
    np.testing.assert_allclose(np.asarray(km)[leaves], np.asarray(grad)[leaves], rtol=1e-12, atol=1e-12)
    phi = np.asarray(BS.evaluate(jnp.asarray(x)))
    for leaf in leaves:
        _, k_ref = R.leaf_multipliers(tree, leaf, phi)
        np.testing.assert_allclose(np.asarray(km)[leaf], k_ref, rtol=1e-12, atol=1e-12)


def test_insert_matches_reference_layout_and_under_jit(rng):
    tree = _random_tree(rng, 2, 2, max_k=4)
    program = _prog(tree)
    ins = jax.jit(prog.insert)
    slot = R.leaves(tree)[1]
    got = prog.to_numpy(ins(program, slot, prog.MUL, 1, 3, 0.25))
    want = R.insert(tree, slot, R.MUL, 1, 3, 0.25)
    for name in ("op", "left", "right", "feature", "basis", "weight"):
        np.testing.assert_array_equal(got[name], getattr(want, name), err_msg=name)
    assert got["n_slots"] == want.n_slots
    empty = prog.empty_program(3, jnp.float64)
    root = prog.to_numpy(ins(empty, 0, prog.ADD, 1, 2, -0.5))
    assert root["n_slots"] == 1 and root["op"][0] == prog.LEAF and root["weight"][0] == -0.5


@pytest.mark.parametrize("seed", range(3))
def test_used_slot_loops_equal_the_full_loops_and_the_reference(seed):
    """``live=True`` (the search's passes: the slot loops run over ``[0, n_slots)`` only on a
    CPU) gives the full loops' node values and multipliers exactly, and the reference's
    predictions and Algorithm 2's multipliers, for trees of every size in one capacity (the
    empty tree, one leaf, a full program), under ``jit`` and under ``vmap`` over trees of
    different sizes. A node loop that skipped the root, or a multiplier loop that ended before
    the last used slot, fails it."""
    assert prog._used_slots_only(True) == (jax.default_backend() == "cpu")
    rng = np.random.default_rng(20 + seed)
    x = jnp.asarray(rng.uniform(size=(32, 3)))
    phi = np.asarray(BS.evaluate(x))
    trees = [R.empty_tree(6, 0.3)] + [_random_tree(rng, 3, k, max_k=6) for k in (0, 1, 3, 6)]
    programs = [_prog(t) for t in trees]

    def passes(program, live):
        v = prog.node_values(program, prog.leaf_values(program, x, BS), live=live)
        return v, prog.leaf_multipliers(program, v, live=live)

    fast = jax.jit(lambda p: passes(p, True))
    for tree, program in zip(trees, programs):
        v, km = fast(program)
        v_full, km_full = passes(program, False)
        np.testing.assert_array_equal(v, v_full)
        np.testing.assert_array_equal(km, km_full)
        want = R.evaluate(tree, phi) if int(tree.n_slots) else np.full(len(x), tree.intercept)
        np.testing.assert_allclose(program.intercept + prog.tree_value(program, v), want,
                                   rtol=1e-12, atol=1e-12)
        for leaf in (R.leaves(tree) if int(tree.n_slots) else []):
            np.testing.assert_allclose(km[leaf], R.leaf_multipliers(tree, leaf, phi)[1],
                                       rtol=1e-12, atol=1e-12)
    batched = jax.tree_util.tree_map(lambda *a: jnp.stack(a), *programs)
    v_b, km_b = jax.jit(jax.vmap(lambda p: passes(p, True)))(batched)
    for i, program in enumerate(programs):
        v_full, km_full = passes(program, False)
        np.testing.assert_array_equal(v_b[i], v_full)
        np.testing.assert_array_equal(km_b[i], km_full)


# slow: restates tests/test_batch.py::test_batched_models_pytree_and_vmap_predict (jax.vmap
# over a batch of programs through jaxtree.predict = each member's own prediction) on
# random trees compiled once more in float64
@pytest.mark.slow
def test_vmap_over_programs_equals_loop(rng):
    x = jnp.asarray(rng.uniform(size=(16, 3)))
    trees = [_prog(_random_tree(rng, 3, 3)) for _ in range(4)]
    batched = jax.tree_util.tree_map(lambda *a: jnp.stack(a), *trees)
    got = jax.vmap(prog.evaluate, in_axes=(0, None, None))(batched, x, BS)
    for i, t in enumerate(trees):
        np.testing.assert_allclose(got[i], prog.evaluate(t, x, BS), rtol=1e-12)


def test_render_uses_feature_names_and_parentheses():
    tree = R.single_leaf(3, 0, 0, 0.5, 0.1)
    tree = R.insert(tree, 0, R.MUL, 1, 1, 0.25)
    tree = R.insert(tree, 1, R.ADD, 0, 2, -0.75)  # slot 1 holds the old leaf 0
    text = prog.render(_prog(tree), BS, ["age", "dist"])
    assert "age" in text and "dist" in text
    assert "(" in text and " - 0.75·" in text
    assert text.startswith("0.1 + ")
    assert prog.render(prog.empty_program(2), BS) == "0"


@pytest.mark.parametrize("seed", range(4))
def test_leaf_values_read_from_a_cached_design_equal_evaluated_ones(seed):
    # A cached Phi (function-major, column i*p + j) gives the leaves' values by a gather; a
    # wrong column (j*q + i, or the basis and feature swapped) reads another function.
    from jaxtree import scoring
    rng = np.random.default_rng(40 + seed)
    x = jnp.asarray(rng.uniform(size=(48, 3)))
    tree = _prog(_random_tree(rng, 3, int(rng.integers(1, 6)), max_k=6))
    phi = scoring.design(x, BS)
    want = prog.leaf_basis(tree, x, BS)
    got = jax.jit(prog.leaf_basis, static_argnums=2)(tree, x, BS, phi)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12)
    ev = jax.jit(prog.evaluate, static_argnums=2)
    np.testing.assert_allclose(np.asarray(ev(tree, x, BS, phi)), np.asarray(ev(tree, x, BS)),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_leaf_slots_and_insert_equal_their_numpy_definitions(seed):
    # leaf_slots and insert are written as elementwise selects (few kernels to compile); they
    # must give exactly np.nonzero's slots and the reference's insertion.
    rng = np.random.default_rng(70 + seed)
    slots = jax.jit(prog.leaf_slots, static_argnums=1)
    for _ in range(20):
        p = prog.empty_program(int(rng.integers(1, 12)), jnp.float64)
        op = rng.integers(0, 4, p.capacity).astype(np.int32)
        p = p._replace(op=jnp.asarray(op))
        for size in (1, (p.capacity + 1) // 2, p.capacity):
            want = np.full(size, -1)
            (leaves,) = np.nonzero(op == prog.LEAF)
            want[:min(size, len(leaves))] = leaves[:size]
            np.testing.assert_array_equal(np.asarray(slots(p, size)), want)
    tree = _random_tree(rng, 3, int(rng.integers(0, 5)), max_k=6)
    leaf, o = int(rng.choice(R.leaves(tree))), int(rng.choice([R.ADD, R.MUL]))
    j, i, w = int(rng.integers(3)), int(rng.integers(BS.q)), float(rng.uniform(-1, 1))
    got = prog.to_numpy(jax.jit(prog.insert)(_prog(tree), leaf, o, j, i, w))
    want = R.insert(tree, leaf, o, j, i, w)
    for name in ("op", "left", "right", "feature", "basis", "weight"):
        np.testing.assert_array_equal(got[name], getattr(want, name), err_msg=name)
    assert int(got["n_slots"]) == want.n_slots


def test_where_tree_is_the_leafwise_select_under_jit_and_vmap(rng):
    a = _prog(_random_tree(rng, 3, 3, max_k=4))
    b = _prog(_random_tree(rng, 3, 2, max_k=4))
    leafwise = lambda c: jax.tree_util.tree_map(lambda u, v: jnp.where(c, u, v), a, b)  # noqa: E731
    for c in (True, False):
        got = jax.jit(prog.where_tree)(jnp.asarray(c), a, b)
        for g, w in zip(got, leafwise(c)):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    # A batched predicate (vmap over programs, as the one-vs-rest and beam steps run).
    pa = jax.tree_util.tree_map(lambda u, v: jnp.stack([u, v]), a, b)
    pb = jax.tree_util.tree_map(lambda u, v: jnp.stack([v, u]), a, b)
    got = jax.vmap(prog.where_tree)(jnp.asarray([True, False]), pa, pb)
    for g, u, v in zip(got, pa, pb):  # member 0 takes pa's row, member 1 pb's
        np.testing.assert_array_equal(np.asarray(g), np.stack([np.asarray(u[0]),
                                                               np.asarray(v[1])]))


@pytest.mark.parametrize("seed", range(6))
def test_n_terms_counts_the_expanded_sum_of_products(seed):
    # Oracle: sympy expands the tree with one symbol per (feature, basis) factor (so like
    # terms merge, as in the printed formula) and counts the terms. Catches '*' counted as
    # '+' (or the reverse), like terms not merged, and a miscounted root. Two covariates and
    # three basis functions, so that factors repeat.
    sympy = pytest.importorskip("sympy")
    rng = np.random.default_rng(seed)
    tree = _random_tree(rng, 2, int(rng.integers(0, 7)), max_k=8)
    tree.basis[:] = np.where(tree.basis >= 0, tree.basis % 3, tree.basis)

    def expr(s):
        if tree.op[s] == R.LEAF:
            return sympy.Symbol(f"x{tree.feature[s]}_{tree.basis[s]}")
        a, b = expr(tree.left[s]), expr(tree.right[s])
        return a + b if tree.op[s] == R.ADD else a * b

    want = len(sympy.Add.make_args(sympy.expand(expr(0))))
    assert prog.n_terms(_prog(tree)) == want
    assert prog.n_terms(prog.empty_program(4)) == 0
