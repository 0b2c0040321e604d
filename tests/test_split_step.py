"""The greedy step as two programs (insertion, then refinement) and the backfitting round
through the search's refinement (issue 27): the same arithmetic as one program."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import basis as B
from jaxtree import program as prog
from jaxtree import refine, scoring, search
from jaxtree._fit import select

SMALL = B.make_basis(hats=3, sines=2, cosines=2, powers=2)
CFG = search.Config(max_k=5, refine="optax", refine_steps=15)


def _data(seed, n=200, p=3):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, p))
    y = np.sin(3 * x[:, 0]) * x[:, 1] + 0.5 * x[:, 2] ** 2 + 0.05 * rng.standard_normal(n)
    w = rng.uniform(0.5, 2.0, size=n)
    return scoring.chunk(jnp.asarray(x), jnp.asarray(y - y.mean()), jnp.asarray(w),
                         chunk_size=64)


def test_which_steps_run_as_two_programs():
    backfit = CFG._replace(replace_moves=2, pair_leaves=2)
    assert search.splits(CFG)
    assert not search.splits(backfit)  # split by step_function itself, always
    assert not search.splits(CFG._replace(refine="coordinate"))
    assert not search.splits(CFG._replace(refine=None))
    assert not search.splits(CFG._replace(loss="logistic"))
    # refine_step refines through the greedy and the backfit step's second part
    assert search.refines(CFG) and search.refines(backfit)
    assert not search.refines(backfit._replace(refine="coordinate"))
    assert not search.refines(CFG._replace(refine=None))
    assert not search.refines(backfit._replace(loss="logistic"))


# backfit in the slow suite (~12 s of compiling the L-BFGS backfit step twice): its two
# programs = one program oracle runs by default in
# test_batch_moves.py::test_members_make_the_separate_fits_moves[backfit] (fit_batch's members
# take the one-program step under vmap, the estimator's fits its two programs: the same
# insert_step/finish_step boundary, with the coordinate refinement)
@pytest.mark.parametrize("search_", ["greedy", pytest.param("backfit", marks=pytest.mark.slow)])
def test_two_programs_make_the_one_program_steps(monkeypatch, search_):
    # backfit: pair lookahead and replacement moves in the second part (the squared-loss
    # backfit step always runs as two programs: a second process loads them side by side)
    config = CFG if search_ == "greedy" else CFG._replace(replace_moves=2, pair_leaves=2)
    data = _data(0)
    one = lambda p: search.step_jit(p, data, SMALL, config, np.int32(4))  # noqa: E731
    monkeypatch.setattr(search.step_cached, "fn", None)  # calling the one program fails
    two = search.step_function(data, SMALL, config, np.int32(4), split=search_ == "greedy")
    p1 = p2 = prog.empty_program(config.max_k, data.x.dtype)
    for _ in range(5):  # the first leaf (no refinement) and four refined insertions
        p1, i1 = one(p1)
        p2, i2 = two(p2)
        for a, b in zip(jax.tree_util.tree_leaves((p1, i1)), jax.tree_util.tree_leaves((p2, i2))):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-7)
    assert int(p2.n_slots) == 9  # four operations: the steps inserted
    assert float(i2.loss) < 0.5 * float(jnp.average(data.y ** 2, weights=data.w))


# slow: [greedy] restates [backfit] (refine_step = the joint refinement of the trimmed tree,
# through finish_cached, structure kept) and test_two_programs_make_the_one_program_steps[greedy]
# (the greedy config's finish program refines as the one-program step) on one more compiled
# finish program
@pytest.mark.parametrize("search_", [pytest.param("greedy", marks=pytest.mark.slow), "backfit"])
def test_refine_step_is_the_joint_refinement_of_a_trimmed_tree(search_):
    """Through the greedy step's second part, and the backfit step's with its replacement
    moves off (the backfitting round after a backfit search's shape terms, issue 27)."""
    config = CFG if search_ == "greedy" else CFG._replace(replace_moves=2, pair_leaves=2)
    data = _data(1)
    res = search.fit(data, SMALL, 3, CFG)
    tree = prog.trim(res.program, 3)
    # move the weights off their optimum, so that a refinement that does nothing fails
    tree = tree._replace(weight=tree.weight * 0.5, intercept=tree.intercept + 0.1)
    if search_ == "backfit":
        # a leaf on the wrong covariate, which a replacement move would change: the
        # refinement alone must keep the structure
        leaf = int(np.flatnonzero(np.asarray(tree.op) == prog.LEAF)[0])
        tree = tree._replace(feature=tree.feature.at[leaf].set((tree.feature[leaf] + 1) % 3))
        moved, _, kept = search.finish_jit(prog.pad(tree, CFG.max_k), prog.pad(tree, CFG.max_k),
                                           np.float64(0), np.float64(0), np.asarray(False),
                                           np.asarray(True), data, SMALL, config,
                                           np.asarray(True))
        assert int(kept) > 0  # with the moves on, a replacement is taken
    start = float(refine.mse(tree, data, SMALL))
    want, want_loss = jax.jit(refine.joint, static_argnames=("basis", "steps"))(
        tree, data, SMALL, steps=CFG.refine_steps)
    got, got_loss = search.refine_step(prog.pad(tree, CFG.max_k), data, SMALL, config)
    got = prog.trim(got, 3)
    for field in ("op", "left", "right", "feature", "basis"):
        np.testing.assert_array_equal(np.asarray(getattr(got, field)),
                                      np.asarray(getattr(tree, field)))
    # (the misplaced leaf keeps the backfit case's refined loss higher)
    assert float(got_loss) < (0.5 if search_ == "greedy" else 0.8) * start
    np.testing.assert_allclose(float(got_loss), float(want_loss), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(got.weight), np.asarray(want.weight), atol=1e-5)
    np.testing.assert_allclose(float(got.intercept), float(want.intercept), atol=1e-5)
    np.testing.assert_allclose(float(refine.mse(got, data, SMALL)), float(got_loss), rtol=1e-5)


def test_pad_is_the_inverse_of_trim():
    data = _data(2)
    tree = prog.trim(search.fit(data, SMALL, 2, CFG).program, 2)
    padded = prog.pad(tree, 7)
    assert padded.capacity == 15 and int(padded.n_slots) == int(tree.n_slots)
    x = data.x.reshape(-1, data.x.shape[-1])
    np.testing.assert_array_equal(np.asarray(prog.evaluate(padded, x, SMALL)),
                                  np.asarray(prog.evaluate(tree, x, SMALL)))
    back = prog.trim(padded, 2)
    for a, b in zip(jax.tree_util.tree_leaves(back), jax.tree_util.tree_leaves(tree)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    empty = prog.empty_program(7, jnp.float32)
    for a, b in zip(jax.tree_util.tree_leaves(prog.pad(prog.empty_program(2), 7)),
                    jax.tree_util.tree_leaves(empty)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert prog.pad(tree, 2) is tree
    with pytest.raises(ValueError, match="cannot pad"):
        prog.pad(padded, 3)


@pytest.mark.slow  # ~17 s a case; test_refine_step_is_the_joint_refinement_of_a_trimmed_tree
# keeps the refinement through the search's program in the default suite
@pytest.mark.parametrize("k", [3, 8])  # 8: the tree fills its capacity bucket (no padding)
def test_backfitting_round_refines_through_the_search_and_gives_the_joint_result(monkeypatch, k):
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(300, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.05 * rng.standard_normal(300)
    kw = dict(k=k, search="greedy", shapes=2, validation_fraction=None, shape_knots=(6, 3))
    calls = []
    joint = select.joint_cached
    monkeypatch.setattr(select, "joint_cached", lambda *a: calls.append(1) or joint(*a))
    split = jaxtree.TreeRegressor(**kw).fit(X, y)
    assert calls == []  # the round used the search's compiled refinement
    monkeypatch.setattr(search, "splits", lambda config: False)
    whole = jaxtree.TreeRegressor(**kw).fit(X, y)  # one-program steps, joint alone
    assert calls == [1]
    assert split.formula() == whole.formula()
    np.testing.assert_allclose(split.predict(X), whole.predict(X), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(split.history_, whole.history_, rtol=1e-5)
