"""The search strategies of jaxtree.search (search="greedy" / "backfit") through the estimator."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import basis as B
from jaxtree import program as prog
from jaxtree import scoring, search

SMALL = B.make_basis(hats=3, sines=3, cosines=3, powers=2, truncated_cubics=0)


def _interaction(n=300, seed=0):
    """A planted pure interaction sin(2 pi x1) * sin(2 pi x2) (no marginal signal) plus x3."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 4))
    y = np.sin(2 * np.pi * X[:, 0]) * np.sin(2 * np.pi * X[:, 1]) + 0.5 * X[:, 2] ** 2
    return X, y + 0.01 * rng.normal(size=n)


def test_greedy_config_is_the_paper_step():
    cfg = search.search_config("greedy", 5, refine="coordinate")
    assert cfg == search.Config(max_k=5, refine="coordinate")
    bf = search.search_config("backfit", 5)
    assert bf.pair_leaves == 1 and bf.replace_moves == search.REPLACE_MOVES


@pytest.mark.slow  # suite time (~30 s, two default fits); the default suite keeps test_auto_search.py::test_held_out_backfit_finds_the_pure_interaction_on_its_training_rows
def test_backfit_finds_a_planted_pure_interaction_that_greedy_misses():
    X, y = _interaction()
    greedy = jaxtree.TreeRegressor(k=2, basis=SMALL, search="greedy").fit(X, y)
    backfit = jaxtree.TreeRegressor(k=2, basis=SMALL, search="backfit").fit(X, y)
    assert backfit.history_[-1] < 0.1 * greedy.history_[-1]
    pairs = [c for c in backfit.choices_ if c["move"] == search.MOVE_PAIR]
    assert len(pairs) == 1 and {pairs[0]["feature"], pairs[0]["feature2"]} == {0, 1}
    assert backfit.choices_[0]["move"] == search.MOVE_INSERT  # no pair on the empty tree
    assert backfit.k_ == 2 and backfit.status_ == search.Status.OK
    # The model's loss is what the history says (in y's units).
    np.testing.assert_allclose(np.mean((backfit.predict(X) - y) ** 2), backfit.history_[-1], rtol=1e-5)


# optax: its oracle (history_[-1] is the model's MSE; the history never rises on the default
# backfit/optax fit) is test_oracles.py::test_default_estimator_refines's and
# test_estimator.py::test_recovers_the_papers_function's on the default path
# without refinement in the slow suite too (~15 s of compiling): the [coordinate] case's oracle
@pytest.mark.parametrize("refine", [pytest.param("optax", marks=pytest.mark.slow), "coordinate",
                                    pytest.param(None, marks=pytest.mark.slow)])
def test_backfit_history_never_increases_and_matches_the_model(refine):
    X, y = jaxtree.datasets.paper_synthetic(n=200, p=5, seed=2)
    est = jaxtree.TreeRegressor(k=5, basis=SMALL, search="backfit", refine=refine).fit(X, y)
    h = est.history_
    assert np.all(np.diff(h) <= 1e-9 * h[0]), h
    np.testing.assert_allclose(np.mean((est.predict(X) - y) ** 2), h[-1], rtol=1e-6)
    assert est.k_ <= 5
    a = prog.to_numpy(est.model_.program)
    assert np.all(np.abs(a["weight"]) <= 1 + 1e-12)


@pytest.mark.slow  # ~9 s; tests/test_oracles_search.py holds the replacement oracle
def test_backfit_records_its_replacements_and_its_loss_never_rises():
    # On this problem one replacement is kept (at the second insertion); every record has
    # the common keys, counts at most REPLACE_MOVES replacements, and the history (each
    # step's loss after its kept replacements) never rises. That a kept replacement lowers
    # the loss it claims is tests/test_oracles_search.py's oracle.
    X, y = jaxtree.datasets.paper_synthetic(n=200, p=5, seed=0)
    est = jaxtree.TreeRegressor(k=6, basis=SMALL, search="backfit").fit(X, y)
    replaced = [c["replaced"] for c in est.choices_]
    assert sum(replaced) >= 1 and all(0 <= r <= search.REPLACE_MOVES for r in replaced)
    assert np.all(np.diff(est.history_) <= 1e-6 * est.history_[:-1])
    for c in est.choices_:
        assert set(c) == set(search.CHOICE_KEYS)


def test_reference_engine_refuses_other_searches():
    X, y = _interaction(n=50)
    with pytest.raises(ValueError, match="search='greedy'"):
        jaxtree.TreeRegressor(k=2, engine="reference", refine=None, search="backfit").fit(X, y)
    with pytest.raises(ValueError, match="Unknown search .annealing.; valid values"):
        jaxtree.TreeRegressor(k=2, search="annealing").fit(X, y)


def test_validation_fraction_recovers_the_size_of_a_planted_noisy_tree():
    # y = 0.6 x1^2 + 0.4 sin(pi x2) (two leaves: one operation) plus noise: the held-out
    # error stops falling after one operation.
    rng = np.random.default_rng(7)
    X = rng.uniform(size=(600, 3))
    y = 0.6 * X[:, 0] ** 2 + 0.4 * np.sin(np.pi * X[:, 1]) + 0.05 * rng.normal(size=600)
    basis = B.make_basis(hats=0, sines=2, cosines=0, powers=2, truncated_cubics=0)
    est = jaxtree.TreeRegressor(k=6, basis=basis, validation_fraction=0.3, random_state=0,
                                search="greedy", shapes=0).fit(X, y)
    assert est.k_ == 1, [(r["n_ops"], r["val_mse"]) for r in est.path_]
    assert len(est.path_) == 7 and [r["n_ops"] for r in est.path_] == list(range(7))
    # Each row of the path is the selection run's model at that size: its errors on the
    # training and held-out rows are the recorded ones.
    from jaxtree._fit.select import split as _split
    train, held = _split(600, 0.3, 0)
    for row in est.path_:
        pred = np.asarray(jaxtree.predict(row["model"], X))
        np.testing.assert_allclose(np.mean((pred[train] - y[train]) ** 2), row["train_mse"], rtol=1e-6)
        np.testing.assert_allclose(np.mean((pred[held] - y[held]) ** 2), row["val_mse"], rtol=1e-6)
    fig = jaxtree.export.plot_path(est)
    assert fig.axes[0].get_xlabel() == "operations"
    np.testing.assert_allclose(fig.axes[0].lines[1].get_ydata(), [r["val_mse"] for r in est.path_])
    # Deterministic for a given random_state (the same settings: nothing compiled again).
    again = jaxtree.TreeRegressor(k=6, basis=basis, validation_fraction=0.3, random_state=0,
                                  search="greedy", shapes=0).fit(X, y)
    assert again.k_ == est.k_ and again.formula() == est.formula()


# slow: [False] restates [True] (pair_lookahead's pair scoring and apply, the SSE reported =
# the returned tree's on every row) and tests/test_moves.py::
# test_pair_scores_equal_brute_force_refits (score_pairs' SSE, weight and intercept = the
# brute-force refit on all rows: the fit the unscreened branch takes as is) on one more
# compiled configuration of the lookahead
@pytest.mark.parametrize("screened", [pytest.param(False, marks=pytest.mark.slow), True])
def test_pair_lookahead_fits_the_pair_on_every_row(x64, screened):
    """Float64 oracle of :func:`jaxtree.search.pair_lookahead` on a one-leaf tree and a
    planted pure interaction: the pair it returns has the weighted SSE it reports, computed
    here from the tree's own predictions on every row, and the clipped least-squares fit of
    its last factor's weight and the intercept (the exact fit: no other weight of that factor
    lowers the SSE). Without a screen (every row scores the pairs) the step takes the pair
    scores' own fit; with one (every 4th row) it refits the pair on all rows. Catches a
    reported SSE of the screened rows or per row (an MSE), or a pair's weight or intercept
    that is not its fit on all rows."""
    X, y = _interaction(n=200, seed=3)
    w = np.random.default_rng(4).uniform(0.5, 2.0, size=200)
    data = scoring.chunk(X, y, w, chunk_size=64, dtype=np.float64)
    rows = data.x.shape[0] * data.x.shape[1]
    config = search.search_config("backfit", max_k=4)._replace(
        pair_rows=rows // 4 if screened else rows)
    assert (search.screen_rows(data, config.pair_rows) is data) == (not screened)
    empty = prog.empty_program(4, jnp.float64)
    first = jax.jit(lambda d: scoring.apply(empty, scoring.select(  # the first leaf
        scoring.score(empty, d, SMALL, max_leaves=5), SMALL.q)))(data)
    xs, ys, ws = data.x.reshape(-1, data.x.shape[-1]), data.y.reshape(-1), data.w.reshape(-1)
    sse_jit = jax.jit(lambda p: jnp.sum(ws * (ys - prog.evaluate(p, xs, SMALL)) ** 2))
    rss = sse_jit(first)
    cand, sse, pc, take = jax.jit(search.pair_lookahead, static_argnums=(2, 3))(
        first, data, SMALL, config, rss, rss, jnp.sum(ws), jnp.asarray(9))
    assert bool(take) and int(cand.n_slots) == int(first.n_slots) + 4

    def sse_of(p):
        return float(sse_jit(p))

    assert float(sse) == pytest.approx(sse_of(cand), rel=1e-9)
    assert float(sse) < 0.5 * float(rss)  # the planted interaction, found
    slot = int(first.n_slots) + 2  # the pair's last factor: its weight and the intercept
    for dw, da in [(1e-3, 0), (-1e-3, 0), (0, 1e-3), (0, -1e-3)]:
        moved = cand._replace(weight=cand.weight.at[slot].add(dw),
                              intercept=cand.intercept + da)
        if abs(float(moved.weight[slot])) <= 1:  # the box the fit is clipped to
            assert sse_of(moved) > float(sse)
