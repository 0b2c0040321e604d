"""The default search (``search="auto"``, ``validation_fraction="auto"``) and ``paper()``."""

import numpy as np
import pytest

import jaxtree
from jaxtree import basis as B
from jaxtree._fit import spec as E
from jaxtree import scoring, search
from _shared import choice_key

SMALL = B.make_basis(hats=3, sines=3, cosines=3, powers=2, truncated_cubics=0)


def _data(n=120, p=5, seed=0):
    return jaxtree.datasets.paper_synthetic(n, p=p, seed=seed)


@pytest.mark.slow  # the resolution: test_pipeline.py::test_spec_is_resolved_once_and_frozen and
# test_held_out_backfit_finds_the_pure_interaction_on_its_training_rows; the answers: test_golden[default_small]
def test_auto_is_backfit_with_a_held_out_size_on_small_data():
    X, y = _data()
    est = jaxtree.TreeRegressor(k=4, basis=SMALL).fit(X, y)
    assert (est.search_, est.validation_fraction_) == ("backfit", E.AUTO_VALIDATION)
    assert est.path_ is not None and est.k_ <= 4
    explicit = jaxtree.TreeRegressor(k=4, basis=SMALL, search="backfit",
                                     validation_fraction=E.AUTO_VALIDATION).fit(X, y)
    assert choice_key(est.choices_) == choice_key(explicit.choices_)
    np.testing.assert_array_equal(est.predict(X), explicit.predict(X))
    # The parameters stay "auto" (clone and get_params see what the user passed).
    assert est.get_params()["search"] == "auto" and est.get_params()["validation_fraction"] == "auto"


# slow: restates tests/test_pipeline.py::test_spec_is_resolved_once_and_frozen and
# tests/test_classifier_backfit.py::test_defaults_resolve_like_the_regressor (large in-memory
# fits resolve to ("greedy", None), no fit needed) and the fits below that run their resolved
# search (test_auto_keeps_the_greedy_search_where_pairs_would_cost_too_much,
# test_streamed_data_gets_the_greedy_search_to_k) on two more greedy fits (k=3, the default
# refinement) of a configuration no other default test compiles
@pytest.mark.slow
def test_auto_is_the_paper_search_grown_to_k_on_large_data(monkeypatch):
    monkeypatch.setattr(E, "AUTO_SMALL_MAX_ROWS", 100)  # 120 rows count as large
    X, y = _data()
    est = jaxtree.TreeRegressor(k=3, basis=SMALL, shapes=0).fit(X, y)
    assert (est.search_, est.validation_fraction_) == ("greedy", None)
    assert est.path_ is None and est.k_ == 3
    # the paper's search on the default's scaling and stop (paper() has y_bound=1, tol=None)
    paper = jaxtree.TreeRegressor.paper(k=3, basis=SMALL, y_bound=est.y_bound,
                                        tol=est.tol).fit(X, y)
    assert choice_key(est.choices_) == choice_key(paper.choices_)
    np.testing.assert_array_equal(est.predict(X), paper.predict(X))


def test_auto_resolves_to_what_each_path_supports(tmp_path):
    X, y = _data(n=60)
    ref = jaxtree.TreeRegressor(k=2, engine="reference", refine=None).fit(X, y)
    assert (ref.search_, ref.validation_fraction_) == ("greedy", None) and ref.k_ == 2
    mm = np.lib.format.open_memmap(tmp_path / "x.npy", mode="w+", dtype=np.float32, shape=X.shape)
    mm[:] = X
    streamed = jaxtree.TreeRegressor(k=2, basis=SMALL, refine=None).fit(mm, y.astype(np.float32))
    assert (streamed.search_, streamed.validation_fraction_) == ("greedy", None)
    # Fewer rows than a held-out size choice can use: the backfit search grown to k.
    tiny = jaxtree.TreeRegressor(k=2, basis=SMALL, refine=None).fit(X[:E.AUTO_VALIDATION_MIN_ROWS - 1],
                                                                    y[:E.AUTO_VALIDATION_MIN_ROWS - 1])
    assert (tiny.search_, tiny.validation_fraction_) == ("backfit", None)


def test_auto_keeps_the_greedy_search_where_pairs_would_cost_too_much(monkeypatch):
    # More basis columns than AUTO_PAIR_MAX_CANDIDATES: greedy, still with a held-out size.
    monkeypatch.setattr(E, "AUTO_PAIR_MAX_CANDIDATES", 5 * SMALL.q - 1)
    X, y = _data(n=60)
    est = jaxtree.TreeRegressor(k=2, basis=SMALL, refine=None, shapes=0).fit(X, y)
    assert (est.search_, est.validation_fraction_) == ("greedy", E.AUTO_VALIDATION)


def test_explicit_backfit_refuses_more_columns_than_its_gram_matrices_allow(monkeypatch):
    monkeypatch.setattr(E, "BACKFIT_MAX_CANDIDATES", 5 * SMALL.q - 1)
    X, y = _data(n=60)
    with pytest.raises(ValueError, match=r"search='backfit' scores pairs of basis columns: p\*q = 5\*11"):
        jaxtree.TreeRegressor(k=2, basis=SMALL, search="backfit").fit(X, y)


def test_streamed_data_gets_the_greedy_search_to_k(tmp_path):
    # "auto" on a memmap is the greedy tree grown to k (the other searches and a held-out
    # size run streamed when asked for: tests/test_stream_moves.py).
    X, y = _data(n=60)
    mm = np.lib.format.open_memmap(tmp_path / "x.npy", mode="w+", dtype=np.float32, shape=X.shape)
    mm[:] = X
    est = jaxtree.TreeRegressor(k=2, basis=SMALL, refine=None).fit(mm, y)
    assert (est.search_, est.validation_fraction_, est.k_) == ("greedy", None, 2)


def test_paper_preset_is_the_greedy_search_to_k_without_shapes():
    est = jaxtree.TreeRegressor.paper()
    params = est.get_params()
    assert (params["k"], params["search"], params["validation_fraction"], params["shapes"]) == (
        10, "greedy", None, 0)
    other = jaxtree.TreeRegressor.paper(k=3, refine="coordinate", shapes=2)
    assert other.get_params()["refine"] == "coordinate" and other.get_params()["shapes"] == 2
    from sklearn.base import clone
    assert clone(other).get_params() == other.get_params()


def test_parameter_errors_name_auto():
    X, y = _data(n=30)
    with pytest.raises(ValueError, match="must be 'auto', None or a number strictly between"):
        jaxtree.TreeRegressor(validation_fraction=1.5).fit(X, y)
    with pytest.raises(ValueError, match="must be 'auto', None or a number strictly between"):
        jaxtree.TreeClassifier(validation_fraction=1.5).fit(X, y > np.median(y))  # issue 29
    with pytest.raises(ValueError, match="Unknown search"):
        jaxtree.TreeRegressor(search="Auto").fit(X, y)


def test_pair_screen_rows_bound_the_screen_work():
    assert search.pair_screen_rows(0) == search.PAIR_ROWS
    assert search.pair_screen_rows(8 * 40) == search.PAIR_ROWS  # airline-like p*q
    assert search.pair_screen_rows(12 * 40) == search.PAIR_ROWS  # p*q <= 512
    assert search.pair_screen_rows(20 * 40) == search.PAIR_WORK // 800 ** 2 == 1677
    for pq in (13 * 40, 20 * 40, 30 * 40, 51 * 40):  # the screen's work within PAIR_WORK
        assert search.pair_screen_rows(pq) * pq ** 2 <= search.PAIR_WORK == 1 << 30
    assert search.pair_screen_rows(100 * 40) == search.PAIR_MIN_ROWS == 256  # at the floor
    assert search.pair_screen_rows(10 ** 5) == search.PAIR_MIN_ROWS
    assert search.search_config("backfit", 5, 20 * 40).pair_rows == 1677
    assert search.search_config("greedy", 5, 100 * 40).pair_rows == 0  # no pair moves


def test_screened_rows_are_evenly_spaced_rows_of_the_data_given():
    rng = np.random.default_rng(3)
    n, p = 300, 3
    X, y, w = rng.uniform(size=(n, p)), rng.normal(size=n), rng.uniform(0.5, 2, size=n)
    data = scoring.chunk(X, y, w, chunk_size=64)  # 5 chunks of 64: 320 padded rows
    screened = search.screen_rows(data, 46)  # stride ceil(320 / 46) = 7
    rows = np.arange(0, 320, 7)
    assert screened.x.shape == (1, len(rows), p)
    live = rows[rows < n]  # the padding rows taken have zero weight
    np.testing.assert_array_equal(np.asarray(screened.x)[0, :len(live)], X[live])
    np.testing.assert_array_equal(np.asarray(screened.w)[0, :len(live)], w[live])
    assert np.all(np.asarray(screened.w)[0, len(live):] == 0)
    # No more rows than the bound: the data itself. The stride follows the data's own shape
    # (a held-out split's training part has a smaller chunk than the fit's chunk_size).
    assert search.screen_rows(data, 320) is data
    small = scoring.chunk(X[:80], y[:80], w[:80], chunk_size=2048)  # one chunk of 128
    assert search.screen_rows(small, 268) is small


def test_held_out_backfit_finds_the_pure_interaction_on_its_training_rows(monkeypatch):
    # Regression: the pair screen's stride was once computed from chunk_size (2048) instead
    # of the data it screens, so with a screen of PAIR_MIN_ROWS rows (many candidates; forced
    # here) the held-out run of an 80-row training part screened 10 rows and missed
    # sin(2 pi x1) sin(2 pi x2).
    monkeypatch.setattr(search, "PAIR_WORK", 1)
    assert search.pair_screen_rows(4 * SMALL.q) == search.PAIR_MIN_ROWS
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(100, 4))
    y = np.sin(2 * np.pi * X[:, 0]) * np.sin(2 * np.pi * X[:, 1]) + 0.5 * X[:, 2] ** 2
    y = y + 0.01 * rng.normal(size=100)
    est = jaxtree.TreeRegressor(k=3, basis=SMALL, shapes=0).fit(X, y)
    assert est.search_ == "backfit" and est.validation_fraction_ == E.AUTO_VALIDATION
    pairs = [c for c in est.choices_ if c["move"] == search.MOVE_PAIR]
    assert len(pairs) == 1 and {pairs[0]["feature"], pairs[0]["feature2"]} == {0, 1}
    assert est.score(X, y) > 0.99
