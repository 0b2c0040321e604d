"""``fit_batch(search="backfit" | "beam")``: every member makes the separate fit's moves."""

import jax
import numpy as np
import pytest

import jaxtree
from jaxtree import basis as B
from jaxtree import batch, search

BASIS = B.make_basis(hats=4, sines=3, cosines=3, powers=2, truncated_cubics=0)


def _stack(n_sets=3, n=300):
    # A product without marginal signal (the pair lookahead's case) plus a linear term.
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(n_sets, n, 3))
    y = (np.sin(3 * np.pi * X[..., 0]) * np.cos(2 * np.pi * X[..., 1]) + 0.3 * X[..., 2]
         + 0.05 * rng.normal(size=(n_sets, n)))
    return X, y


# the beam in the slow suite (~15 s of compiling): the [backfit] case's oracle; the batched
# beam's members equal the estimator's in the held-out and pruning tests below
@pytest.mark.parametrize("how", ["backfit", pytest.param("beam", marks=pytest.mark.slow)])
def test_members_make_the_separate_fits_moves(how):
    X, y = _stack()
    kw = dict(k=4, basis=BASIS, refine="coordinate", coordinate_sweeps=2, chunk_size=64,
              beam_width=3)
    res = batch.fit_batch(X, y, search=how, **kw)
    moves = []
    for b, member in enumerate(res):
        est = jaxtree.TreeRegressor(search=how, validation_fraction=None, shapes=0, **kw)
        est.fit(X[b], y[b])
        key = lambda e: [(c["move"], c["flat_index"], c["feature2"], c["basis2"], c["replaced"])
                         for c in e.choices_]
        assert key(member) == key(est)
        np.testing.assert_allclose(member.predict(X[b]), est.predict(X[b]), rtol=1e-8, atol=1e-9)
        np.testing.assert_allclose(member.history_, est.history_, rtol=1e-8)
        assert member.status_ == est.status_ == 0
        assert member.search_ == est.search_ == how
        assert member.get_params()["search"] == how
        moves += [c["move"] for c in member.choices_]
    if how == "backfit":
        # The pair's two operations fill k=4 after four iterations: the member's search ends
        # there as the separate fit's does (status OK, no fifth record), while the batch ran
        # five iterations for all.
        assert search.MOVE_PAIR in moves
        assert res.history.shape == (3, 5)
        assert min(len(m.choices_) for m in res) == 4


def test_search_must_be_named():
    X, y = _stack(n_sets=2, n=20)
    with pytest.raises(ValueError, match="search must be one of"):
        batch.fit_batch(X, y, k=2, search="auto")


# backfit and beam in the slow suite (~11-20 s each): the greedy case's oracle (each member's
# held-out size is the estimator's) on the batched step of another search.
@pytest.mark.parametrize("how", ["greedy", pytest.param("backfit", marks=pytest.mark.slow),
                                 pytest.param("beam", marks=pytest.mark.slow)])
def test_held_out_size_per_member_equals_the_estimators(how):
    # Each member chooses its own size on the same held-out rows; the refit runs all members
    # at once, each stopped (the beam: kept) at its size: the estimator's path, size and model
    # per member.
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(3, 300, 3))
    strength = np.array([1.0, 0.2, 0.05])[:, None]  # different structure, different sizes
    y = (strength * np.sin(3 * np.pi * X[..., 0]) * np.cos(2 * np.pi * X[..., 1])
         + 0.3 * X[..., 2] + 0.05 * rng.normal(size=(3, 300)))
    kw = dict(k=6, basis=BASIS, search=how, refine="coordinate", coordinate_sweeps=2,
              chunk_size=64, validation_fraction=0.25, random_state=1, beam_width=3)
    res = batch.fit_batch(X, y, **kw)
    sizes = []
    for b, member in enumerate(res):
        est = jaxtree.TreeRegressor(shapes=0, **kw).fit(X[b], y[b])
        assert member.k_ == est.k_ <= 6
        assert [(r["n_ops"], r["formula"]) for r in member.path_] == [
            (r["n_ops"], r["formula"]) for r in est.path_]
        np.testing.assert_allclose([r["val_mse"] for r in member.path_],
                                   [r["val_mse"] for r in est.path_], rtol=1e-9)
        assert [c["flat_index"] for c in member.choices_] == [c["flat_index"] for c in est.choices_]
        np.testing.assert_allclose(member.predict(X[b]), est.predict(X[b]), rtol=1e-9, atol=1e-12)
        assert member.status_ == 0 and member.validation_fraction_ == 0.25
        sizes.append(member.k_)
    assert min(sizes) < 6  # a size was chosen, below the bound (member 0's held-out MSE
    # falls at every size to k = 6: the paired rule keeps it, issue 29)
    if how != "backfit":
        assert len(set(sizes)) > 1  # the members stopped at different sizes in one run


def _prune_stack(n=300):
    # Planted so that pruning differs between the members: member 0 the pair plus a line,
    # member 1 a smooth curve of x1 (k operations overfit it: cheap leaves), member 2 a mix.
    # The shapes (3, 300, 3) and settings are the tests' above, so their compiled steps
    # (batched and the estimator's) are reused: only the pruning's steps are new. The tests
    # run it on the paper's scaling (y_bound=1), where the planted counts were measured.
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(3, n, 3))
    rich = np.sin(3 * np.pi * X[..., 0]) * np.cos(2 * np.pi * X[..., 1]) + 0.3 * X[..., 2]
    mix = np.array([1.0, 0.0, 0.5])[:, None]
    y = mix * rich + (1 - mix) * X[..., 0] ** 2 + 0.05 * rng.normal(size=(3, n))
    return X, y


def _assert_pruned_like(res, X, y, **kw):
    """Every member of ``res`` equals the estimator's fit with pruning; returns the number
    of leaves each member removed."""
    removed = []
    batched = np.asarray(jax.vmap(jaxtree.predict)(res.models, X))
    for b, member in enumerate(res):
        est = jaxtree.TreeRegressor(**kw).fit(X[b], y[b])
        assert member.pruned_ is not None and est.pruned_ is not None
        assert [r[:2] for r in member.pruned_] == [r[:2] for r in est.pruned_]
        np.testing.assert_allclose([r[2] for r in member.pruned_],
                                   [r[2] for r in est.pruned_], rtol=1e-8, atol=1e-12)
        assert member.k_ == est.k_
        assert member.formula() == est.formula()
        np.testing.assert_allclose(member.predict(X[b]), est.predict(X[b]), rtol=1e-9,
                                   atol=1e-9)
        np.testing.assert_allclose(batched[b], est.predict(X[b]), rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(member.history_, est.history_, rtol=1e-9)
        assert ([c["flat_index"] for c in member.choices_]
                == [c["flat_index"] for c in est.choices_])
        assert member.get_params()["prune_tol"] == est.prune_tol
        removed.append(len(member.pruned_))
    assert min(removed) == 0 < max(removed)  # planted: the members prune differently
    return removed


# beam and greedy in the slow suite (~15 s each): the backfit case's oracle on other steps
# slow: [backfit] restates test_prune_tol_after_the_held_out_refit_equals_the_estimators
# (each member's removals, costs, k_, model = the estimator's, through the same
# _prune_members) and test_members_make_the_separate_fits_moves[backfit] (the batched
# backfit's pair and replacement moves = the estimator's, on the same member-0 table) on
# pruning steps of its own k=4 capacity (~10 s of compiling)
@pytest.mark.parametrize("how, tol", [pytest.param("backfit", 1e-3, marks=pytest.mark.slow),
                                      pytest.param("beam", 1e-3, marks=pytest.mark.slow),
                                      pytest.param("greedy", 5e-4, marks=pytest.mark.slow)])
def test_prune_tol_per_member_equals_the_estimators(how, tol):
    # Each member removes its own leaves (some none, some one or more): a prune skipped, or
    # one member's removals applied to all, fails here. Settings as the first test's.
    X, y = _prune_stack()
    kw = dict(k=4, basis=BASIS, search=how, refine="coordinate", coordinate_sweeps=2,
              chunk_size=64, beam_width=3, prune_tol=tol, y_bound=1.0)
    res = batch.fit_batch(X, y, **kw)
    _assert_pruned_like(res, X, y, validation_fraction=None, shapes=0, **kw)


def test_prune_tol_after_the_held_out_refit_equals_the_estimators():
    # Pruned after the refit at each member's chosen size, as fit does (settings as the
    # held-out test's: its compiled steps are reused).
    X, y = _prune_stack()
    kw = dict(k=6, basis=BASIS, search="greedy", refine="coordinate", coordinate_sweeps=2,
              chunk_size=64, validation_fraction=0.25, random_state=1, prune_tol=1e-3,
              y_bound=1.0)
    res = batch.fit_batch(X, y, **kw)
    assert _assert_pruned_like(res, X, y, shapes=0, **kw) == [2, 0, 0]
    assert [m.k_ for m in res] == [3, 2, 3]  # the chosen sizes 5, 2, 3, less the removals


@pytest.mark.slow
def test_prune_tol_with_shapes_equals_the_estimators():
    # With shape terms the tree is pruned against the shapes' residual, as fit does (with
    # validation_fraction=0.25 these shapes leave no tree: nothing to prune).
    X, y = _prune_stack()
    kw = dict(k=4, basis=BASIS, search="greedy", refine="coordinate", coordinate_sweeps=2,
              chunk_size=64, shapes=2, validation_fraction=None, prune_tol=1.4e-2, y_bound=1.0)
    res = batch.fit_batch(X, y, **kw)
    # Member 1 drops two leaves (R² costs 0.0103 and 0.0119), member 2 none (its cheapest
    # 0.0154). Re-planted for the pairs' ridge (PAIR_RIDGE), whose shapes left member 1's
    # leaves just above the former tol 1e-2 ([0, 0, 1] then; [0, 1, 0] before round bounds).
    assert _assert_pruned_like(res, X, y, **kw) == [0, 2, 0]
    assert all(len(m.shape_terms()) == 2 for m in res)


def test_prune_tol_must_be_non_negative():
    X, y = _stack(n_sets=2, n=20)
    with pytest.raises(ValueError, match="prune_tol must be None or a number >= 0"):
        batch.fit_batch(X, y, k=2, prune_tol=-0.1)
