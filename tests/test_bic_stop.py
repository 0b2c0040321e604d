"""The classifier's BIC stop (:func:`jaxtree._fit.classify.bic_gain`,
:attr:`jaxtree.search.Stop.gain`): from :data:`~jaxtree._fit.classify.BIC_STOP_MIN_ROWS`
training rows a tree's search ends at the first insertion whose deviance drop ``2 n Δ`` is
below ``log n`` (that move undone), and below them only ``tol``'s relative rule stops it."""

import numpy as np
import pytest

import jaxtree
from jaxtree import basis as B
from jaxtree import search
from jaxtree._fit import classify
from jaxtree._fit import spec as spec_

BASIS = B.make_basis(hats=3, sines=2, cosines=2, powers=2, truncated_cubics=2)
KW = dict(k=6, basis=BASIS, search="greedy", shapes=0)


def test_the_stop_judges_the_absolute_decrease_beside_the_relative_one():
    # Catches: the gain ignored, compared with the wrong sign, or replacing rtol's rule.
    stop = search.Stop(rtol=0.0, atol=0.0, gain=0.1)
    undo, floor, last = stop.judge(np.array([0.95, 0.85, 0.95]), np.array([True, True, False]),
                                   np.ones(3), 1, 5)
    assert undo.tolist() == [True, False, False] and not floor.any()
    assert np.isnan(last[0]) and last[1] == 0.85 and np.isnan(last[2])
    # both rules: a move is kept only below both (the stricter decides)
    both = search.Stop(rtol=0.2, gain=0.1).judge(np.array([0.85, 0.75]), True, np.ones(2), 1, 5)
    assert both[0].tolist() == [True, False]
    # no gain: the relative rule alone
    assert not search.Stop(rtol=1e-6).judge(0.95, True, 1.0, 1, 5)[0]
    assert search.Stop(rtol=1e-6, gain=0.06).judge(0.95, True, 1.0, 1, 5)[0]
    # the first iteration is never judged (no previous loss)
    assert not stop.judge(5.0, True, np.nan, 0, 5)[0]


def test_bic_gain_starts_at_its_row_floor():
    n = classify.BIC_STOP_MIN_ROWS
    assert classify.bic_gain(n - 1) == 0.0
    assert classify.bic_gain(n) == pytest.approx(np.log(n) / (2 * n), rel=1e-14)
    assert classify.bic_gain(10 ** 6) < classify.bic_gain(10 ** 4)


def _weak(n, seed=0):
    """One covariate of a weak logistic effect and two of noise: a grown tree's later
    insertions gain little."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    p = 1 / (1 + np.exp(-(1.5 * X[:, 0] - 0.75)))
    return X, (rng.uniform(size=n) < p).astype(int)


def _first_undone(h, gain):
    """The operations a search keeps when its loss path is ``h`` (the grown tree's history):
    the first iteration ``i >= 1`` whose loss is not below both ``(1 - tol) h[i-1]`` and
    ``h[i-1] - gain`` is undone, leaving ``i - 1`` operations (``len(h) - 1`` if none)."""
    tol = spec_.DEFAULT_TOL
    for i in range(1, len(h)):
        if not h[i] < min(h[i - 1] * (1 - tol), h[i - 1] - gain):
            return i - 1
    return len(h) - 1


@pytest.mark.parametrize("n", [classify.BIC_STOP_MIN_ROWS, classify.BIC_STOP_MIN_ROWS - 1])
def test_the_classifier_stops_where_an_insertion_no_longer_lowers_the_bic(x64, n):
    # The oracle: the tree grown to k (tol=None) gives the loss path; the default's search is
    # its first k_ + 1 iterations, k_ set by the rule computed here from log(n) / (2n) (0
    # below the floor). Catches a stop that ignores the gain, the wrong scale (a sum in place
    # of the mean, log n without the 2n), the gain below the floor, and a stopped tree that
    # keeps its undone move.
    X, y = _weak(classify.BIC_STOP_MIN_ROWS)
    X, y = X[:n], y[:n]
    grown = jaxtree.TreeClassifier(tol=None, **KW).fit(X, y)
    h = np.asarray(grown.history_, np.float64)
    assert grown.k_ == KW["k"] and len(h) == KW["k"] + 1
    gain = np.log(n) / (2 * n) if n >= classify.BIC_STOP_MIN_ROWS else 0.0
    want = _first_undone(h, gain)
    fit = jaxtree.TreeClassifier(**KW).fit(X, y)
    assert fit.k_ == want
    if n >= classify.BIC_STOP_MIN_ROWS:
        assert want < KW["k"]  # the data make the stop bite
        assert fit.status_ & search.Status.CONVERGED
        assert _first_undone(h, 0.0) > want  # and tol's relative rule alone would go on
    else:
        assert _first_undone(h, np.log(n) / (2 * n)) < want  # the gain would stop it here
    np.testing.assert_allclose(fit.history_, h[:want + 1], rtol=1e-10)
    assert [c["flat_index"] for c in fit.choices_] == [c["flat_index"]
                                                       for c in grown.choices_[:want + 1]]


def test_one_versus_rest_trees_stop_each_on_their_own(x64):
    # three classes from the weak effect's logit: each tree's k is its own rule's
    n = classify.BIC_STOP_MIN_ROWS
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(n, 3))
    y3 = np.digitize(X[:, 0] + 0.6 * rng.normal(size=n), [0.3, 0.7])
    grown = jaxtree.TreeClassifier(tol=None, **KW).fit(X, y3)
    gain = np.log(n) / (2 * n)
    want = [_first_undone(np.asarray(h, np.float64), gain) for h in grown.history_]
    assert min(want) < KW["k"]
    fit = jaxtree.TreeClassifier(**KW).fit(X, y3)
    assert fit.k_per_class_.tolist() == want
    for c in range(3):
        np.testing.assert_allclose(fit.history_[c, :want[c] + 1],
                                   grown.history_[c, :want[c] + 1], rtol=1e-10)
