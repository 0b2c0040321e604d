"""The scorer's indicator columns (:func:`jaxtree.scoring.binary_moments`): the moments of
0/1 columns from two columns each equal the design's (float64), the search's scores and a
fit's choices and predictions do not change, and the rule applies only where it should
(:func:`jaxtree.search.with_binary`)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import basis as basis_
from jaxtree import program as prog
from jaxtree import scoring, search

from _shared import choice_key


def _table(rng, m=97, p=6, binary=(1, 3, 4)):
    x = rng.uniform(size=(m, p))
    for j in binary:
        x[:, j] = rng.integers(0, 2, m)
    return x


@pytest.mark.parametrize("binary", [(1, 3, 4), (0, 1, 2, 3, 4, 5)], ids=["some", "all"])
def test_binary_moments_equal_the_designs(x64, binary):
    rng = np.random.default_rng(7)
    basis = basis_.default_basis()
    x = _table(rng, binary=binary)
    w = rng.uniform(0.5, 2.0, x.shape[0])
    w[:5] = 0.0
    x[:5, binary[0]] = 0.37  # a row of zero weight may hold anything: it adds nothing
    u = rng.normal(size=(8, x.shape[0]))
    r = rng.normal(size=(8, x.shape[0]))
    want = scoring.row_moments(u, r, w, scoring.design(jnp.asarray(x), basis), basis.q)
    got = jax.jit(scoring.binary_moments, static_argnums=(4, 5))(u, r, w, jnp.asarray(x), basis,
                                                                  binary)
    for a, b, name in zip(got, want, want._fields):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-10,
                                   err_msg=name)


def test_binary_columns_read_the_weighted_rows():
    x = np.array([[0, 1, 0.5, np.nan], [1, 0, 1, 0], [1, 1, 0, 1.0]])
    assert scoring.binary_columns(x) == (0, 1)
    assert scoring.binary_columns(x, w=np.array([0, 1, 1])) == (0, 1, 2, 3)
    assert scoring.binary_columns(x[:0]) == ()


@pytest.mark.slow  # ~11 s of compiling two scorers; the fit check below runs the scorer with
# and without the rule through the search in the default suite
def test_search_scores_are_unchanged(x64):
    rng = np.random.default_rng(3)
    basis = basis_.default_basis()
    x = _table(rng, m=300)
    y = 0.5 * x[:, 1] * np.sin(3 * x[:, 0]) + 0.2 * x[:, 3] + 0.05 * rng.normal(size=300)
    data = scoring.chunk(x, y, None, 64)
    score = jax.jit(scoring.score, static_argnames=("basis", "max_leaves", "buckets", "binary"))
    tree = prog.empty_program(3, jnp.float64)
    kw = dict(max_leaves=4, buckets=(1, 2))
    for _ in range(3):  # the empty tree, then trees of one and two leaves
        want = score(tree, data, basis=basis, **kw)
        got = score(tree, data, basis=basis, binary=(1, 3, 4), **kw)
        np.testing.assert_allclose(np.asarray(got.sse), np.asarray(want.sse), rtol=1e-9)
        tree = scoring.apply(tree, scoring.select(want, basis.q))


# the classifier in the slow suite (~15 s of compiling): the regressor's case checks the
# same scorer through the same search step
@pytest.mark.parametrize("estimator", ["regressor", pytest.param("classifier", marks=pytest.mark.slow)])
def test_a_fit_with_indicators_makes_the_same_choices(x64, monkeypatch, estimator):
    """The greedy search on a table of two categorical columns and a number, with the
    rule's threshold lowered so that the table takes it (the real threshold needs
    n*p*q >= 10**7): the same choices and predictions as with the rule off."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    n = 400
    X = pd.DataFrame({"a": rng.choice(["u", "v", "w"], n), "b": rng.choice(["s", "t"], n),
                      "x": rng.uniform(0, 4, n)})
    y = (X.a == "v") * 1.5 + np.sin(X.x) * (X.b == "t") + 0.1 * rng.normal(size=n)
    monkeypatch.setattr(scoring, "BUCKET_MIN_WORK", 1)
    seen = []
    real = search.with_binary

    def spy(config, *a, **k):
        out = real(config, *a, **k)
        seen.append(out.binary)
        return out

    def fit():
        # no refinement: the inserted leaves' weights are the scorer's own (from the moments),
        # and the step compiles without L-BFGS (~5 s less)
        kw = dict(k=3, search="greedy", validation_fraction=None, shapes=0, refine=None)
        if estimator == "regressor":
            est = jaxtree.TreeRegressor(**kw).fit(X, y)
            return est, est.predict(X)
        est = jaxtree.TreeClassifier(**kw).fit(X, y > np.median(y))
        return est, est.predict_proba(X)

    monkeypatch.setattr(search, "with_binary", spy)
    e1, p1 = fit()
    assert seen and all(b == (0, 1, 2, 3, 4) for b in seen), seen  # the 3 + 2 levels
    monkeypatch.setattr(search, "with_binary", lambda config, *a, **k: config)
    e0, p0 = fit()
    assert choice_key(e1.choices_) == choice_key(e0.choices_)
    # the inserted leaves' weights come from the moments (equal to rounding; with L-BFGS
    # after them its stopping carried that rounding to ~5e-9)
    np.testing.assert_allclose(p1, p0, rtol=1e-6, atol=1e-7)


def test_the_rule_applies_only_where_searching_outweighs_compiling():
    basis = basis_.default_basis()
    cfg = search.search_config("greedy", 10)
    x = np.c_[np.zeros(100), np.ones(100), np.linspace(0, 1, 100)]
    assert search.with_binary(cfg, x, None, basis) is cfg  # 100 x 3 x 40: compiling dominates
    big = np.tile(x, (scoring.BUCKET_MIN_WORK // (100 * 3 * 40) + 1, 1))  # n*p*q above it
    assert search.with_binary(cfg, big, None, basis).binary == (0, 1)
    assert search.with_binary(cfg, big, None, basis, cache_basis=True) is cfg
    bound = basis_.get_basis("physics").bind(big.min(0), big.max(0) + 1)
    assert bound.per_feature and search.with_binary(cfg, big, None, bound) is cfg


def test_tables_share_programs_below_the_threshold_and_the_scorer_buckets_leaves_above_it():
    # Issue 27's two tables with a five-level category (14 and 15 encoded columns, 20,000 and
    # 22,000 rows: their chunked rows) are in the buckets, so the second compiles nothing; the
    # scorer's leaf buckets (half the scoring work, four copies of the scoring pass to
    # compile) start at the same threshold (they started at 10^7 before the forty-fifth
    # session: the first table compiled them).
    q, k = 40, 10
    assert scoring.compiling_dominates(20_480, 14, q) and scoring.compiling_dominates(22_528, 15, q)
    assert scoring.buckets_for(20_480, 14, q, k) == scoring.buckets_for(22_528, 15, q, k) == ()
    below = scoring.BUCKET_MIN_WORK // (14 * q) - 1
    assert scoring.compiling_dominates(below, 14, q) and scoring.buckets_for(below, 14, q, k) == ()
    above = scoring.BUCKET_MIN_WORK // (14 * q) + 1
    assert not scoring.compiling_dominates(above, 14, q)
    assert scoring.buckets_for(above, 14, q, k) == scoring.default_buckets(k + 1)


@pytest.mark.slow  # ~15 s of compiling the batch's step; the estimators' case above is the
# scorer's oracle in the default suite
def test_a_batch_member_scores_its_indicators_as_its_separate_fit(x64, monkeypatch):
    """fit_batch takes the rule too (the columns 0/1 in every member): a member equals the
    separate fit of its data set, both with the rule on."""
    rng = np.random.default_rng(1)
    n = 300
    x = _table(rng, m=n, p=4, binary=(0, 2))
    ys = np.stack([x[:, 0] * np.sin(3 * x[:, 1]) + 0.1 * rng.normal(size=n),
                   0.5 * x[:, 2] + x[:, 3] ** 2 + 0.1 * rng.normal(size=n)])
    monkeypatch.setattr(scoring, "BUCKET_MIN_WORK", 1)
    seen = []
    real = search.with_binary

    def spy(*a, **k):
        out = real(*a, **k)
        seen.append(out.binary)
        return out

    monkeypatch.setattr(search, "with_binary", spy)
    kw = dict(k=3, search="greedy")
    batch = jaxtree.fit_batch(np.stack([x, x]), ys, **kw)
    assert seen == [(0, 2)], seen
    for b in range(2):
        one = jaxtree.TreeRegressor(**kw, validation_fraction=None, shapes=0).fit(x, ys[b])
        assert seen[-1] == (0, 2)
        member = batch.estimators[b]
        assert choice_key(member.choices_) == choice_key(one.choices_)
        np.testing.assert_allclose(member.predict(x), one.predict(x), rtol=1e-9, atol=1e-9)
