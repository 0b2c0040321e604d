"""Covariate ranges cut short of far tails (jaxtree._scaling.far_tails; docs/decisions.md,
"Scaling"): the quantiles against numpy, the rule on planted and on ordinary columns, the
same cut in memory, batched and streamed, and a fit whose rows beyond the cut are clipped
as predict clips them."""

import numpy as np
import pytest

import jaxtree
from jaxtree import _scaling as scaling_
from jaxtree import stream

from _shared import GREEDY


def _cut(x, sw=None):
    """far_tails on x's own extremes (rows of positive weight) and two-valued columns."""
    lo, hi, _, _ = scaling_.extremes(x, np.zeros(x.shape[:-1]), sw)
    two = scaling_.two_valued(x, sw, lo, hi)
    return (lo, hi), scaling_.far_tails(*scaling_.tail_sample(x, sw), lo, hi, two)


def test_quantiles_are_the_lower_inverted_cdf_quantile_of_each_side():
    # Catches: an off-by-one at either end (numpy's inverted CDF at 1 - s is one row lower
    # than the mirror of the lower quantile), and weights read as counts wrongly.
    rng = np.random.default_rng(0)
    for n in (1, 2, 7, 200, 401, 1000):
        v = rng.normal(size=n)
        for share in (0.005, 0.1, 0.25):
            lo, hi = scaling_._quantiles(v, None, share)
            assert lo == np.quantile(v, share, method="inverted_cdf")
            assert hi == -np.quantile(-v, share, method="inverted_cdf")
            counts = rng.integers(1, 4, size=n)  # integer weights are repeated rows
            want = scaling_._quantiles(np.repeat(v, counts), None, share)
            assert scaling_._quantiles(v, counts.astype(float), share) == want


def test_every_column_at_once_gives_each_columns_quantiles():
    # The vectorised quantiles far_tails reads (a sort per column, weights searched) against
    # the one-column reference above, with ties and weights.
    rng = np.random.default_rng(9)
    for t in range(60):
        m, q = int(rng.integers(1, 600)), int(rng.integers(1, 5))
        x = rng.standard_t(2, size=(m, q))
        x = np.round(x) if t % 3 == 0 else x
        w = rng.uniform(0.1, 3.0, size=m) if t % 2 else None
        share = (0.005, 0.1)[t % 2]
        low, high, _ = scaling_._column_quantiles(np.ascontiguousarray(x.T), w, share)
        for j in range(q):
            assert (low[j], high[j]) == scaling_._quantiles(x[:, j], w, share)


def test_a_planted_far_tail_is_cut_on_either_side_within_the_reach():
    rng = np.random.default_rng(1)
    n = 1000
    x = rng.uniform(0.0, 1.0, size=(n, 3))
    x[:3, 0] = [40.0, 70.0, 100.0]  # 0.3% of the rows span 100 times the rest
    x[:3, 1] = [-100.0, -60.0, -30.0]
    (lo, hi), (a, b) = _cut(x)
    # the quantiles: 5 rows (0.5%) at or beyond each; the cut reaches a quarter of the
    # rest's span past them: to the uniform rows' own extremes, not to the tail's
    assert b[0] == np.sort(x[:, 0])[-4] and a[0] == lo[0]
    assert a[1] == np.sort(x[:, 1])[3] and b[1] == hi[1]
    assert (a[2], b[2]) == (lo[2], hi[2])  # no far tail: the extremes
    x[3:6, 0] = [1.2, 1.3, 2.0]  # 1.3 the upper quantile; 2.0 past its reach, 1.3 + 1.3 / 4
    (_, _), (a, b) = _cut(x)
    assert np.sort(x[:, 0])[-5] == 1.3 and b[0] == 1.3
    x[5, 0] = 1.6  # within the reach: the cut keeps it
    (_, _), (a, b) = _cut(x)
    assert b[0] == 1.6


def test_a_cut_that_would_leave_two_values_is_not_made():
    # Catches: a count column {0, 1, rare 100} cut to [0, 1]: clipped, it scales to only 0
    # and 1 (an indicator to the in-memory search, three values to a streamed pass).
    x = np.r_[np.zeros(500), np.ones(497), [100.0, 100.0, 100.0]][:, None]
    (lo, hi), (a, b) = _cut(x)
    assert (a[0], b[0]) == (0.0, 100.0)
    x[:3, 0] = 0.5  # a third value within the cut: cut
    (lo, hi), (a, b) = _cut(x)
    assert (a[0], b[0]) == (0.0, 1.0)


@pytest.mark.parametrize("draw", ["normal", "exponential", "lognormal", "rare_flag", "short"])
def test_ordinary_columns_keep_their_extremes(draw):
    # Catches: a rule that cuts every column (a fixed quantile): these tails are not far.
    rng = np.random.default_rng(2)
    n = {"short": 200, "lognormal": 1000}.get(draw, 100_000)  # a lognormal's tail is far
    # from about 10^4 rows on (its largest of 10^5 spans 5 times the other 99.5%)
    col = {"normal": lambda: rng.normal(size=n),
           "exponential": lambda: rng.exponential(size=n),
           "lognormal": lambda: rng.lognormal(0.0, 1.0, size=n),
           "rare_flag": lambda: (rng.uniform(size=n) < 0.002).astype(float),
           "short": lambda: np.r_[rng.uniform(size=n - 1), 1e6]}[draw]()  # below 1/share
    (lo, hi), (a, b) = _cut(col[:, None])
    np.testing.assert_array_equal(a, lo)
    np.testing.assert_array_equal(b, hi)


def test_rows_of_zero_weight_do_not_count():
    rng = np.random.default_rng(3)
    x = rng.uniform(size=(1000, 1))
    x[:3, 0] = [40.0, 70.0, 100.0]
    w = np.ones(1000)
    w[:3] = 0.0  # the tail's rows removed: the extremes are the uniform's, nothing to cut
    (lo, hi), (a, b) = _cut(x, w)
    assert hi[0] < 1.0 and (a[0], b[0]) == (lo[0], hi[0])
    w[:3] = 1.0
    w[3:] = 0.0  # only the tail's three rows count: no cut of three values
    (lo, hi), (a, b) = _cut(x, w)
    assert (a[0], b[0]) == (lo[0], hi[0]) == (40.0, 100.0)


def test_batched_scaling_cuts_each_data_set_as_alone():
    # fit_batch's scaling (leading axis): each member's cut as its own table's.
    rng = np.random.default_rng(4)
    x = rng.uniform(size=(2, 1000, 2))
    x[0, :3, 0] = [40.0, 70.0, 100.0]
    x[1, :3, 1] = [-100.0, -60.0, -30.0]
    y = rng.normal(size=(2, 1000))
    both, _ = scaling_.from_rows(x, y, round_x=True)
    for i in range(2):
        alone, _ = scaling_.from_rows(x[i], y[i], round_x=True)
        for a, b in zip(both, alone):
            np.testing.assert_array_equal(np.asarray(a)[i], np.asarray(b))
    assert 1.0 / both.x_scale[0, 0] < 2.0 and both.x_min[1, 1] > -1.0


@pytest.mark.parametrize("chunk", [64, 300, 1000])
def test_streamed_scaling_cuts_as_the_in_memory_one(monkeypatch, chunk):
    # Catches: a streamed pass that reads other rows than the in-memory fit's strided
    # sample (a stride restarted at each block), or that ignores the weights.
    monkeypatch.setattr(scaling_, "TAIL_SAMPLE", 400)  # a stride of 3 at 1,000 rows
    rng = np.random.default_rng(5)
    n = 1000
    x = rng.uniform(size=(n, 2))
    x[1:6, 0] = [50.0, 60.0, 70.0, 80.0, 90.0]  # the sample reads row 3 (70) of them
    w = rng.uniform(0.5, 2.0, n)
    w[::7] = 0.0
    y = rng.normal(size=n)
    for round_x in (False, True):  # unrounded: the cut's exact value, the sample's row
        want, _ = scaling_.from_rows(x, y, w, round_x=round_x)
        got = stream.scaling(stream.ChunkReader(x, y, w, chunk_size=chunk), round_x=round_x)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        assert 1.0 / want.x_scale[0] < 50.0  # the sample's tail was cut


def test_scale_rows_clips_every_row_into_the_range():
    s = scaling_.Scaling(np.array([0.0]), np.array([1.0]), np.array(0.0), np.array(1.0))
    xs, _ = scaling_.scale_rows(s, np.array([[-3.0], [0.5], [7.0]]), np.zeros(3))
    np.testing.assert_array_equal(xs[:, 0], [0.0, 0.5, 1.0])


def _tailed(seed, n=400):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(n, 2))
    X[:2] = [[0.0, 0.0], [1.0, 1.0]]
    X[7, 0] = 60.0  # one row far out: the range of x1 stays [0, 1]
    return X, rng


def test_a_regressor_fits_the_rows_beyond_the_cut_as_it_predicts_them():
    # Catches: training rows beyond the cut left unclipped (the fit's basis then reads
    # x1 = 60 on that row while predict reads 1, and the history's training MSE is not
    # predict's), and a model range that ignores the cut.
    X, rng = _tailed(6)
    y = 2.0 * np.minimum(X[:, 0], 1.0) ** 2 + X[:, 1] + 0.05 * rng.normal(size=len(X))
    est = jaxtree.TreeRegressor(k=2, **GREEDY).fit(X, y)
    np.testing.assert_allclose(np.asarray(est.model_.x_min, np.float64), [0.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(1.0 / np.asarray(est.model_.x_scale, np.float64), [1.0, 1.0],
                               rtol=1e-6)
    pred = np.asarray(jaxtree.predict(est.model_, X), np.float64)
    np.testing.assert_allclose(np.mean((pred - y) ** 2), est.history_[-1], rtol=1e-4)
    row = X[7:8].copy()
    row[0, 0] = 1.0
    np.testing.assert_allclose(est.predict(X[7:8]), est.predict(row), rtol=1e-6)
    assert est.far_tails_ == {"x1": (0.0, 60.0)}
    # streamed, the same sample of rows read block by block: the same ranges and model
    streamed = jaxtree.TreeRegressor(k=2, chunk_size=128, **GREEDY).fit(
        stream.ChunkReader(X, y, chunk_size=128), None)
    assert streamed.far_tails_ == est.far_tails_
    np.testing.assert_array_equal(np.asarray(streamed.model_.x_scale),
                                  np.asarray(est.model_.x_scale))
    np.testing.assert_allclose(streamed.predict(X), est.predict(X), rtol=1e-5, atol=1e-6)


def test_a_classifier_cuts_its_ranges_too(capfd):
    X, rng = _tailed(7)
    y = (X[:, 1] + 0.2 * rng.normal(size=len(X)) > 0.5).astype(int)
    clf = jaxtree.TreeClassifier(k=2, verbose=1, **GREEDY).fit(X, y)
    assert "x1 on [0, 1] (observed [0, 60])" in capfd.readouterr().err
    np.testing.assert_allclose(1.0 / np.asarray(clf.model_.x_scale, np.float64), [1.0, 1.0],
                               rtol=1e-6)
    assert clf.far_tails_ == {"x1": (0.0, 60.0)}
    X[7, 0] = 0.5  # no far row: no range cut
    assert jaxtree.TreeClassifier(k=2, **GREEDY).fit(X, y).far_tails_ == {}
