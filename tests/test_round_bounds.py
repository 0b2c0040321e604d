"""Covariate ranges on round bounds (jaxtree._scaling.round_bounds; docs/decisions.md,
"Scaling"): the rule against a scalar reference on fresh random ranges, its exceptions, and
the fit paths that must agree on it (in memory, streamed, the estimators' model)."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import jaxtree
from jaxtree import _scaling as scaling_
from jaxtree import basis as B
from jaxtree import stream

from _shared import GREEDY


def _reference(lo: float, hi: float, slack: float = scaling_.ROUND_SLACK):
    """The rule one range at a time, as docs/decisions.md states it: the first step
    ``m * 10**e`` (e from one above the span's decade down to two below it; m = 5, 2, 1)
    whose multiples around the range widen it by at most ``slack`` of its span."""
    span = hi - lo
    if not (math.isfinite(span) and span > 0):
        return lo, hi
    e0 = math.floor(math.log10(span))
    for e in (e0 + 1, e0, e0 - 1, e0 - 2):
        for m in (5.0, 2.0, 1.0):
            step = m * 10.0 ** e
            ql, qh = lo / step, hi / step
            ql = round(ql) if abs(ql - round(ql)) < 1e-9 else ql
            qh = round(qh) if abs(qh - round(qh)) < 1e-9 else qh
            # the bounds as decimals: the float nearest floor(ql)·m·10^e
            a = min(float(Fraction(math.floor(ql) * int(m)) * Fraction(10) ** e), lo)
            b = max(float(Fraction(math.ceil(qh) * int(m)) * Fraction(10) ** e), hi)
            if (b - a) - span <= slack * span:
                return a, b
    return lo, hi


def test_round_bounds_match_the_scalar_rule_on_random_ranges():
    # Catches: a vectorised slip (a step kept for a column already done, a where flipped),
    # widening inward, widening past the slack, or a finer step chosen over a coarser one.
    rng = np.random.default_rng(7)
    decade = 10.0 ** rng.integers(-6, 7, size=(4, 50))
    lo = rng.uniform(-1, 1, size=(4, 50)) * decade
    hi = lo + rng.uniform(1e-3, 3, size=(4, 50)) * decade
    got_lo, got_hi = scaling_.round_bounds(lo, hi)
    want = np.array([[_reference(a, b) for a, b in zip(ra, rb)] for ra, rb in zip(lo, hi)])
    np.testing.assert_array_equal(got_lo, want[..., 0])
    np.testing.assert_array_equal(got_hi, want[..., 1])
    span = hi - lo
    assert (got_lo <= lo).all() and (got_hi >= hi).all()
    assert ((got_hi - got_lo) - span <= scaling_.ROUND_SLACK * span * (1 + 1e-12)).all()
    assert ((got_lo != lo) | (got_hi != hi)).mean() > 0.5  # the rule does round most ranges


@pytest.mark.parametrize("lo, want", [
    ((0.0038, 0.9998), (0.0, 1.0)),  # the paper's uniform draws: the unit interval
    ((-0.996, -0.0021), (-1.0, 0.0)),
    ((0.3, 0.7), (0.3, 0.7)),  # already round: unchanged (0.3 / 0.1 is 3)
    ((1903.2, 2011.9), (1903.0, 2012.0)),  # years: whole numbers, no wider
    ((0.0010003, 0.0029998), (0.001, 0.003)),  # the nearest floats to the decimals
    ((0.0, 0.0), (0.0, 0.0)),  # a constant column
    ((1.0, 1.0 + 1e-9), (1.0, 1.0 + 1e-9)),  # no step of the list fits: kept
])
def test_round_bounds_examples(lo, want):
    got = scaling_.round_bounds(*lo)
    assert tuple(map(float, got)) == want


def test_extreme_ranges_stay_as_they_are_without_warnings():
    lo = np.array([1e-320, -1e308, 1e300, -5e-310, 1e15])
    hi = np.array([2e-320, 1e308, 1.5e300, 5e-310, 1e15 + 3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow or underflow warning reaches a user
        got_lo, got_hi = scaling_.round_bounds(lo, hi)
    np.testing.assert_array_equal(got_lo, lo)
    np.testing.assert_array_equal(got_hi, hi)


def test_kept_columns_and_non_finite_ranges_stay_as_they_are():
    lo, hi = np.array([0.0038, 0.0038, -np.inf]), np.array([0.9998, 0.9998, 1.0])
    got_lo, got_hi = scaling_.round_bounds(lo, hi, keep=np.array([True, False, False]))
    np.testing.assert_array_equal(got_lo, [0.0038, 0.0, -np.inf])
    np.testing.assert_array_equal(got_hi, [0.9998, 1.0, 1.0])


def test_from_rows_keeps_two_valued_columns_exactly_at_zero_and_one():
    # A 0/1 column scales to itself anyway; a column of two other values (3.02 and 6.98)
    # must too: the search's indicator rule needs exactly 0 and 1 (jaxtree.scoring).
    rng = np.random.default_rng(1)
    x = np.column_stack([rng.uniform(0.0038, 0.9998, 40), rng.choice([3.01, 6.99], 40),
                         rng.uniform(3.01, 6.99, 40)])
    x[:2, [0, 2]] = [[0.0038, 3.01], [0.9998, 6.99]]  # the extremes of columns 0 and 2
    sc, _ = scaling_.from_rows(x, rng.normal(size=40), round_x=True)
    xs, _ = scaling_.scale_rows(sc, x, np.zeros(40))
    assert set(np.unique(xs[:, 1])) == {0.0, 1.0}
    np.testing.assert_allclose(sc.x_min, [0.0, 3.01, 3.0], atol=1e-15)
    np.testing.assert_allclose(1 / sc.x_scale, [1.0, 3.98, 4.0], rtol=1e-12)
    plain, _ = scaling_.from_rows(x, rng.normal(size=40))  # round_x=False: the observed range
    np.testing.assert_array_equal(plain.x_min, x.min(0))


@pytest.mark.parametrize("block", [8, scaling_.TWO_VALUED_BLOCK])
def test_two_valued_columns_are_read_to_the_last_row(monkeypatch, block):
    # Catches: a read that stops after the first block, and one that counts a third value
    # on a row of zero weight. Batched (2, n, 3), as fit_batch reads it.
    monkeypatch.setattr(scaling_, "TWO_VALUED_BLOCK", block)
    rng = np.random.default_rng(5)
    x = rng.choice([3.01, 6.99], size=(2, 50, 3))
    x[0, 49, 0] = 5.0  # a third value in the last row of data set 0, column 0
    x[1, 49, 1] = 5.0  # ... of data set 1, column 1, on a row of zero weight
    x[:, :, 2] = rng.uniform(3.01, 6.99, size=(2, 50))
    x[:, :2, 2] = [3.01, 6.99]
    w = np.ones((2, 50))
    w[1, 49] = 0.0
    sc, two = scaling_.from_rows(x, np.zeros((2, 50)), w, round_x=True)
    np.testing.assert_allclose(sc.x_min, [[3.0, 3.01, 3.0], [3.01, 3.01, 3.0]], atol=1e-15)
    np.testing.assert_array_equal(two, [[False, True, False], [True, True, False]])


def test_streamed_scaling_rounds_as_the_in_memory_one_with_weights():
    # Catches: the streamed pass ignoring round_x, or reading two-valued columns on all rows
    # (a zero-weight row's third value must not make column 1 three-valued).
    rng = np.random.default_rng(2)
    n = 300
    x = np.column_stack([rng.uniform(0.0038, 0.9998, n), rng.choice([3.01, 6.99], n),
                         rng.uniform(-7.93, 12.4, n)])
    x[:2, 0] = [0.0038, 0.9998]
    x[5, 1] = 5.0
    w = rng.uniform(0.5, 2.0, n)
    w[5] = 0.0
    y = rng.normal(size=n)
    want, _ = scaling_.from_rows(x, y, w, round_x=True)
    got = stream.scaling(stream.ChunkReader(x, y, w, chunk_size=64), round_x=True)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert want.x_min[1] == 3.01 and want.x_min[0] == 0.0


def test_the_estimators_model_uses_round_bounds_except_for_laws():
    rng = np.random.default_rng(3)
    X = rng.uniform([0.004, 10.2], [0.996, 59.9], size=(200, 2))
    X[:2] = [[0.004, 10.2], [0.996, 59.9]]  # the ranges [0, 1] and [10, 60], rounded out
    y = np.sin(3 * np.pi * X[:, 0]) + 0.02 * X[:, 1]
    est = jaxtree.TreeRegressor(k=2, basis=B.make_basis(hats=0, sines=3, cosines=0, powers=1,
                                                        truncated_cubics=0),
                                **GREEDY).fit(X, y)
    np.testing.assert_allclose(np.asarray(est.model_.x_min, np.float64), [0.0, 10.0], atol=1e-6)
    np.testing.assert_allclose(1 / np.asarray(est.model_.x_scale, np.float64), [1.0, 50.0],
                               rtol=1e-6)
    assert "sin(3πx1)" in est.formula(), est.formula()
    laws = jaxtree.TreeRegressor(k=1, basis="physics", **GREEDY).fit(X + 1.0, y)
    np.testing.assert_allclose(np.asarray(laws.model_.x_min, np.float64), X.min(0) + 1.0,
                               rtol=1e-6)


def test_a_filled_column_rounds_out_and_its_filled_rows_move_to_the_low_end():
    # Catches: filled rows left at the training minimum (they would no longer scale to 0
    # beside their indicator), a fill at predict time other than where training put them,
    # and the predict-time fill of a column without missing values left at the training
    # minimum while jaxtree.predict uses the model's x_min.
    rng = np.random.default_rng(4)
    X = rng.uniform(0.0038, 0.9998, size=(120, 2))
    X[:2] = [[0.0038, 0.0038], [0.9998, 0.9998]]
    y = X[:, 0] ** 2 + X[:, 1] + 0.01 * rng.normal(size=120)
    X[5::9, 0] = np.nan
    est = jaxtree.TreeRegressor(k=2, **GREEDY).fit(X, y)
    assert list(est.encoded_feature_names_) == ["x1", "x1 missing", "x2"]
    x_min = np.asarray(est.model_.x_min, np.float64)
    np.testing.assert_array_equal(x_min, [0.0, 0.0, 0.0])  # x1 rounded out like x2
    assert [c.fill for c in est.encoding_.columns] == [0.0, 0.0]
    # a missing x1 predicts as x1 = 0 with the indicator set: the training rows' encoding
    row = np.array([[np.nan, 0.5]])
    want = np.asarray(jaxtree.predict(est.model_, np.array([[0.0, 1.0, 0.5]])))
    np.testing.assert_allclose(est.predict(row), want, rtol=1e-12)


@pytest.mark.parametrize("streamed", [False, True])
def test_refill_moves_the_filled_rows_in_memory_and_when_read(streamed):
    from jaxtree._inputs import encoding as E
    x = np.array([[0.5, 0.0, 1.0], [np.nan, 0.0, 2.0], [0.9, 0.0, 3.0], [np.nan, 0.0, 4.0]])
    spec = E.fit(x)
    enc = E.transform(spec, x)  # x1 filled with 0.5, its indicator after it
    np.testing.assert_array_equal(enc[:, 0], [0.5, 0.5, 0.9, 0.5])
    assert spec.filled_covariates() == (0,)
    x_min = np.array([0.4, 0.0, 1.0, 0.0])
    if streamed:
        got = E.refill(E.EncodedRows(x, spec), (0,), x_min)
        got = got[0:4]
    else:
        got = E.refill(enc, (0,), x_min)
        assert got is enc  # in place
    np.testing.assert_array_equal(got[:, 0], [0.5, 0.4, 0.9, 0.4])
    np.testing.assert_array_equal(got[:, 1], [0.0, 1.0, 0.0, 1.0])
