"""The held-out size rule (issue 29): the paired standard-error rule of
:func:`jaxtree._fit.select.choose_size_rows` on per-row held-out losses, and the per-row losses
the regressor's selection runs give it."""

import warnings

import numpy as np
import pytest

import jaxtree
from jaxtree._fit import select

BASE = np.array([0.0, 4.0, 8.0, 12.0])  # the best size's per-row losses: a large common spread


def test_paired_rule_against_hand_computed_standard_errors():
    # Size 0 is worse by 1 on every row: paired SE 0, never within it (an unpaired rule, the
    # best size's own SE sqrt(var(BASE) / 4) = 2.24, or the old MSE*sqrt(2/4) = 4.2, takes
    # it; so does a flipped comparison mean(d) >= SE).
    # Size 1: d = [0, 0.2, 0, 0.2]: mean 0.1 > SE sqrt(0.01 / 4) = 0.05: not within.
    L = np.stack([BASE + 1.0, BASE + [0, 0.2, 0, 0.2], BASE])
    index, val, se = select.choose_size_rows(L)
    assert index == 2
    np.testing.assert_allclose(val, [7.0, 6.1, 6.0])
    np.testing.assert_allclose(se, [0.0, 0.05, 0.0], atol=1e-15)
    # Size 1: d = [0, 0.8, 0, -0.4]: mean 0.1 <= SE / 2 = sqrt(0.19 / 4) / 2 = 0.109: within.
    L[1] = BASE + [0, 0.8, 0, -0.4]
    index, val, se = select.choose_size_rows(L)
    assert index == 1
    np.testing.assert_allclose(se[1], np.sqrt(0.19 / 4))
    assert select.choose_size(L) == 1


def test_the_tolerance_is_half_a_standard_error_by_default():
    # d = [0, 0.1, 0, -0.02]: mean 0.02, SE sqrt(0.0022 / 4) = 0.0235: within one SE, not
    # within half of one (select.SE_FACTOR; BENCHMARKS.md, "The held-out size rule")
    L = np.stack([BASE + 1.0, BASE + [0, 0.1, 0, -0.02], BASE])
    assert select.SE_FACTOR == 0.5
    assert select.choose_size_rows(L)[0] == select.choose_size(L) == 2
    assert select.choose_size_rows(L, n_se=1.0)[0] == 1
    assert select.choose_size_rows(L, n_se=0.0)[0] == 2  # the argmin


def test_the_best_is_the_lowest_mean_even_when_it_is_not_last():
    L = np.stack([BASE + 2.0, BASE, BASE + [0.5, 0.5, 0.5, 0.3]])
    assert select.choose_size_rows(L)[0] == 1  # size 2 is larger: never chosen over a better one
    L[0] = BASE + [0.6, -0.4, 0.6, -0.4]  # d mean 0.1, SE sqrt(0.25 / 4) = 0.25: within
    assert select.choose_size_rows(L)[0] == 0


def test_weights_enter_the_mean_and_the_effective_count():
    # d = [0.5, -0.3]. Unweighted: mean 0.1, SE sqrt(0.16 / 2) = 0.283: within half of it.
    # With weights [3, 1]: mean 0.3, var 0.12, n_eff = 16 / 10, SE sqrt(0.12 * 10) / 4 =
    # 0.274: not within half of it.
    L = np.array([[1.5, 0.7], [1.0, 1.0]])
    assert select.choose_size_rows(L)[0] == 0
    index, val, se = select.choose_size_rows(L, [3.0, 1.0])
    assert index == 1
    np.testing.assert_allclose(val, [1.3, 1.0])
    np.testing.assert_allclose(se[0], np.sqrt(1.2) / 4)
    # scaling every weight changes nothing; a zero weight drops its row, even a NaN one
    assert select.choose_size_rows(L, [30.0, 10.0])[0] == 1
    L3 = np.c_[L, [np.nan, 5.0]]
    assert select.choose_size_rows(L3, [3.0, 1.0, 0.0])[0] == 1
    np.testing.assert_allclose(select.choose_size_rows(L3, [3.0, 1.0, 0.0])[2], se)


def test_floor_ties_sizes_whose_losses_are_rounding():
    # noise-free data (an exact law): every size's held-out loss is rounding; without the
    # floor the rule would follow the rounding noise to a larger size
    rng = np.random.default_rng(0)
    L = np.abs(rng.normal(size=(5, 40))) * np.array([[1e-26], [1e-28], [1e-28], [5e-29], [1e-28]])
    assert select.choose_size_rows(L, floor=0.0)[0] > 0
    assert select.choose_size_rows(L)[0] == 0
    # real errors are not floored: 0.01 more on every row is a real difference
    L = np.stack([BASE / 100 + 0.01, BASE / 100])
    assert select.choose_size_rows(L)[0] == 1


def test_non_finite_sizes_are_never_chosen_and_bad_shapes_are_refused():
    L = np.stack([BASE + np.nan, BASE, BASE])
    assert select.choose_size_rows(L)[0] == 1
    with pytest.raises(ValueError, match="2-D"):
        select.choose_size_rows(BASE)
    with pytest.raises(ValueError, match="one weight per row"):
        select.choose_size_rows(L, [1.0, 2.0])
    with pytest.raises(ValueError, match="positive weight"):
        select.choose_size_rows(L, np.zeros(4))


def _recording(monkeypatch):
    """Records every call of the rule: ``(row_losses, w, chosen index)``."""
    calls, base = [], select.choose_size_rows

    def rule(L, w=None, floor=select.MSE_FLOOR, n_se=select.SE_FACTOR):
        out = base(L, w, floor, n_se)
        calls.append((np.array(L), None if w is None else np.array(w), out[0]))
        return out

    monkeypatch.setattr(select, "choose_size_rows", rule)
    return calls


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    return X, y, rng.uniform(0.5, 2.0, size=n)


# backfit in the slow suite (~10 s of compiling its step): the [greedy] case's oracle; both
# searches' per-row held-out losses come from the one selection run
# (jaxtree._fit.source.InMemory.selection_run: the same held-out errors, only the step differs)
@pytest.mark.parametrize("search", ["greedy", pytest.param("backfit", marks=pytest.mark.slow)])
def test_regressor_row_losses_average_to_the_held_out_mse(x64, monkeypatch, search):
    X, y, w = _data()
    calls = _recording(monkeypatch)
    est = jaxtree.TreeRegressor(k=4, search=search, validation_fraction=0.3, shapes=0,
                                refine="coordinate").fit(X, y, sample_weight=w)
    (L, wh, index), = calls
    _, held = select.split(len(y), 0.3, None)
    np.testing.assert_array_equal(wh, w[held])
    scale = float(est.model_.y_scale) ** 2
    # the rows' weighted means are the recorded held-out MSEs (float64: to rounding)
    np.testing.assert_allclose(L @ wh / wh.sum() * scale, [r["val_mse"] for r in est.path_],
                               rtol=1e-12)
    # each row is that size's squared error on its held-out row (the path's models)
    for r, losses in zip(est.path_, L):
        pred = np.asarray(jaxtree.predict(r["model"], X[held]), np.float64)
        np.testing.assert_allclose(losses * scale, (pred - y[held]) ** 2, rtol=1e-9, atol=1e-20)
    assert est.k_ == est.path_[index]["n_ops"] == est.path_[select.choose_size(L, wh)]["n_ops"]


@pytest.mark.slow  # ~6 s; its streamed = in-memory held-out oracle runs by default in
# test_stream_moves.py::test_memmap_fit_with_moves_and_held_out_size_equals_in_memory[greedy]
# (every size's held-out MSE, the mean of these rows, to 1e-9, and the chosen size)
def test_streamed_row_losses_equal_the_in_memory_ones(x64, monkeypatch, tmp_path):
    X, y, _ = _data(400, 1)
    path = tmp_path / "X.npy"
    np.save(path, X)
    calls = _recording(monkeypatch)
    kw = dict(k=3, search="greedy", validation_fraction=0.25, shapes=0, refine="coordinate",
              chunk_size=64)
    mem = jaxtree.TreeRegressor(**kw).fit(X, y)
    mm = jaxtree.TreeRegressor(**kw).fit(np.load(path, mmap_mode="r"), y)
    (Lm, wm, im), (Ls, ws, i_s) = calls
    np.testing.assert_allclose(Ls, Lm, rtol=1e-9, atol=1e-18)
    np.testing.assert_array_equal(ws, wm)
    assert im == i_s and mm.k_ == mem.k_


def test_a_rows_held_out_mean_has_the_same_bits_alone_and_in_a_stack():
    # The order choice compares an order's score computed alone (held_mean of its rows) and
    # among the orders (choose_size_rows' val of the stacked rows): with a BLAS product for
    # the stack they differed in the last bit (a fit's score then depended on its company).
    rng = np.random.default_rng(7)
    for m in (5, 37, 400, 1001):
        L = rng.gamma(0.3, 1e-4, size=(4, m))
        w = np.where(rng.uniform(size=m) < 0.1, 0.0, rng.uniform(0.5, 2.0, m))
        stacked = select.choose_size_rows(L, w)[1]
        for i in range(4):
            assert select.held_mean(L[i], w) == stacked[i]
            np.testing.assert_allclose(stacked[i], np.sum(w * L[i]) / np.sum(w), rtol=1e-14)


def test_the_held_out_split_draws_among_rows_of_positive_weight():
    """The held-out rows are drawn among the rows of positive weight (a row of weight 0 is
    none of the fit): all weights positive give the unweighted split; with zeros, the held
    rows are the weighted rows' own split, so a table with 3 weighted rows of 400 chooses
    its size instead of failing on held-out rows of weight 0 (it did: "no held-out row has
    a positive weight"); fewer than 3 weighted rows are refused by name."""
    n = 400
    w = np.ones(n)
    for got, want in zip(select.split(n, 0.2, 3, w), select.split(n, 0.2, 3)):
        np.testing.assert_array_equal(got, want)
    w = np.zeros(n)
    pos = np.sort(np.random.default_rng(1).choice(n, 12, replace=False))
    w[pos] = np.random.default_rng(2).uniform(0.5, 2.0, 12)
    train, held = select.split(n, 0.2, 3, w)
    np.testing.assert_array_equal(held, pos[select.split(12, 0.2, 3)[1]])
    np.testing.assert_array_equal(np.sort(np.concatenate([train, held])), np.arange(n))
    with pytest.raises(ValueError, match="at least 3 rows of positive sample_weight"):
        select.split(n, 0.2, 3, np.where(np.arange(n) < 2, 1.0, 0.0))
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(n, 2))
    y = np.sin(3 * X[:, 0]) + X[:, 1]
    w3 = np.zeros(n)
    w3[pos[:3]] = 1.0  # 3 weighted rows: an unweighted split held out none in 2 of 4 seeds
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the few-rows warnings
        for seed in range(4):
            est = jaxtree.TreeRegressor(k=2, random_state=seed, shapes=0).fit(
                X, y, sample_weight=w3)
            assert est.validation_fraction_ is not None and np.isfinite(est.predict(X)).all()
