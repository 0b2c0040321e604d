"""The scorer's indicator columns (:func:`jaxtree.scoring.binary_moments`): the moments of
0/1 columns from two columns each equal the design's (float64), at traced positions in any
order, so that two tables with their indicators elsewhere share the compiled scorer; the
search's scores and a fit's choices and predictions do not change; the rule applies only
where it should (:func:`jaxtree.scoring.indicator_columns`, taken by every fit's spec:
:meth:`jaxtree._fit.spec.FitSpec.with_indicators`)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import basis as basis_
from jaxtree import program as prog
from jaxtree import scoring
from jaxtree._fit import spec as spec_
from jaxtree.debug import count_compilations

from _shared import choice_key


def _table(rng, m=97, p=6, binary=(1, 3, 4)):
    x = rng.uniform(size=(m, p))
    for j in binary:
        x[:, j] = rng.integers(0, 2, m)
    return x


_binary_moments = jax.jit(scoring.binary_moments, static_argnums=4)


# (4, 1, 3): positions in any order (the numeric columns and the indicators are put back in
# the table's order by one gather: a wrong gather swaps columns' moments)
@pytest.mark.parametrize("binary", [(1, 3, 4), (4, 1, 3), (0, 1, 2, 3, 4, 5)],
                         ids=["some", "unordered", "all"])
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
    got = _binary_moments(u, r, w, jnp.asarray(x), basis, jnp.asarray(binary, jnp.int32))
    for a, b, name in zip(got, want, want._fields):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-10,
                                   err_msg=name)


def test_binary_moments_under_vmap_read_each_members_positions(x64):
    # fit_batch maps the scorer over its members, each with its row of positions
    rng = np.random.default_rng(8)
    basis = basis_.default_basis()
    pos = [(0, 2), (5, 1)]
    xs = np.stack([_table(rng, m=64, binary=b) for b in pos])
    u, r = rng.normal(size=(2, 2, 6, 64))
    w = rng.uniform(0.5, 2.0, (2, 64))
    got = jax.vmap(scoring.binary_moments, in_axes=(0, 0, 0, 0, None, 0))(
        u, r, w, jnp.asarray(xs), basis, jnp.asarray(pos, jnp.int32))
    for b in range(2):
        want = scoring.row_moments(u[b], r[b], w[b], scoring.design(jnp.asarray(xs[b]), basis),
                                   basis.q)
        for a, c, name in zip(got, want, want._fields):
            np.testing.assert_allclose(np.asarray(a[b]), np.asarray(c), rtol=1e-10,
                                       atol=1e-10, err_msg=name)


def test_tables_with_indicators_elsewhere_share_the_scorer(x64):
    # the positions are data: one compiled scorer for two tables of one shape whose
    # indicators lie at other columns, and each scores as the design does
    rng = np.random.default_rng(4)
    basis = basis_.Basis((basis_.Powers(degree=2), basis_.Sines(n=2)))
    # A jit of a function of this test's own: JAX shares one cache among the jits of one
    # function with the same options (tests/_shared.py's score_jit is such a jit), so the
    # count below would include other tests' compilations in this process.
    def own(tree, data, basis, max_leaves):
        return scoring.score(tree, data, basis, max_leaves=max_leaves)

    score = jax.jit(own, static_argnames=("basis", "max_leaves"))
    tree = prog.empty_program(3, jnp.float64)
    for pos in [(0, 1), (3, 5)]:
        x = _table(rng, m=100, binary=pos)
        y = x[:, pos[0]] + np.sin(3 * x[:, 2]) + 0.05 * rng.normal(size=100)
        data = scoring.chunk(x, y, None, 64)
        want = score(tree, data, basis=basis, max_leaves=4)
        got = score(tree, scoring.with_indicators(data, pos), basis=basis, max_leaves=4)
        np.testing.assert_allclose(np.asarray(got.sse), np.asarray(want.sse), rtol=1e-9)
    assert score._cache_size() == 2  # the design's, and one with indicators for both tables


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
    score = jax.jit(scoring.score, static_argnames=("basis", "max_leaves", "buckets"))
    tree = prog.empty_program(3, jnp.float64)
    kw = dict(max_leaves=4, buckets=(1, 2))
    for _ in range(3):  # the empty tree, then trees of one and two leaves
        want = score(tree, data, basis=basis, **kw)
        got = score(tree, scoring.with_indicators(data, (1, 3, 4)), basis=basis, **kw)
        np.testing.assert_allclose(np.asarray(got.sse), np.asarray(want.sse), rtol=1e-9)
        tree = scoring.apply(tree, scoring.select(want, basis.q))


def _spy(monkeypatch):
    """The positions every fit's rule returned (:func:`jaxtree.scoring.indicator_rule`)."""
    seen = []
    real = scoring.indicator_rule

    def spy(*a, **k):
        out = real(*a, **k)
        seen.append(out)
        return out

    monkeypatch.setattr(scoring, "indicator_rule", spy)
    return seen


def _rule_off(monkeypatch):
    monkeypatch.setattr(scoring, "indicator_rule", lambda *a, **k: ())


def _small_tables_too(monkeypatch):
    """The rule on the tests' small tables (its least n*p*q lowered)."""
    monkeypatch.setattr(scoring, "INDICATOR_MIN_WORK", 0)


# the classifier in the slow suite (~15 s of compiling): the regressor's case checks the
# same scorer through the same search step
@pytest.mark.parametrize("estimator", ["regressor", pytest.param("classifier", marks=pytest.mark.slow)])
def test_a_fit_with_indicators_makes_the_same_choices(x64, monkeypatch, estimator):
    """The greedy search on a table of two categorical columns and a number (5 of 6
    encoded covariates indicators, so the rule takes 4 where compiling dominates), its basis
    values kept (which give the leaves' values; the scorer evaluates the numeric columns'):
    the same choices and predictions as with the rule off."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    n = 400
    X = pd.DataFrame({"a": rng.choice(["u", "v", "w"], n), "b": rng.choice(["s", "t"], n),
                      "x": rng.uniform(0, 4, n)})
    y = (X.a == "v") * 1.5 + np.sin(X.x) * (X.b == "t") + 0.1 * rng.normal(size=n)
    _small_tables_too(monkeypatch)
    seen = _spy(monkeypatch)

    def fit():
        # no refinement: the inserted leaves' weights are the scorer's own (from the moments),
        # and the step compiles without L-BFGS (~5 s less)
        kw = dict(k=3, search="greedy", validation_fraction=None, shapes=0, refine=None)
        if estimator == "regressor":
            est = jaxtree.TreeRegressor(**kw).fit(X, y)
            return est, est.predict(X)
        est = jaxtree.TreeClassifier(**kw).fit(X, y > np.median(y))
        return est, est.predict_proba(X)

    e1, p1 = fit()
    assert seen == [(0, 1, 2, 3)], seen  # the 3 + 2 levels' first 4 (the bucket's step 2)
    _rule_off(monkeypatch)
    e0, p0 = fit()
    assert choice_key(e1.choices_) == choice_key(e0.choices_)
    # the inserted leaves' weights come from the moments (equal to rounding; with L-BFGS
    # after them its stopping carried that rounding to ~5e-9)
    np.testing.assert_allclose(p1, p0, rtol=1e-6, atol=1e-7)


def test_the_rule():
    basis = basis_.default_basis()
    q = basis.q
    # 20,000 x 7 with 5 indicators (n*p*q 5.6e6): compiling dominates, so as many as the
    # column bucket's step (4: coarse from 10,000 rows) allows; fewer than half: none
    n = 20_000
    x = np.c_[np.zeros((n, 3)), np.ones((n, 2)), np.linspace(0, 1, n), np.full(n, .5)]
    assert scoring.compiling_dominates(n, 7, q) and n * 7 * q >= scoring.INDICATOR_MIN_WORK
    assert scoring.indicator_columns(x, None, basis) == (0, 1, 2, 3)
    assert scoring.indicator_columns(x[:, 1:], None, basis) == (0, 1, 2, 3)  # 4 of 6
    assert scoring.indicator_columns(x[:, 2:], None, basis) == ()  # 3 of 5: 0 by the step
    half = np.c_[x[:, :4], x[:, 5:], x[:, 5:]]  # 4 of 8: half
    assert scoring.indicator_columns(half, None, basis) == (0, 1, 2, 3)
    assert scoring.indicator_columns(np.c_[x[:, :3], x[:, 5:], x[:, 5:]], None, basis) == ()
    # a row of zero weight may hold anything
    z = x[:, :4].copy()
    z[0, 0] = 0.37
    w = np.ones(n)
    w[0] = 0
    assert scoring.indicator_columns(np.c_[z, x[:, 5:]], w, basis) == (0, 1, 2, 3)
    assert scoring.indicator_columns(np.c_[z, x[:, 5:]], None, basis) == ()  # 3 of 6
    # below INDICATOR_MIN_WORK values none
    small = x[: scoring.INDICATOR_MIN_WORK // (7 * q) - 1]
    assert scoring.indicator_columns(small, None, basis) == ()
    # where searching outweighs compiling: every indicator
    big = np.tile(x, (scoring.BUCKET_MIN_WORK // (n * 7 * q) + 1, 1))
    assert not scoring.compiling_dominates(big.shape[0], 7, q)
    assert scoring.indicator_columns(big, None, basis) == (0, 1, 2, 3, 4)
    few = big.copy()
    few[:, :4] = 0.5
    assert scoring.indicator_columns(few, None, basis) == (4,)  # 1 of 7
    bound = basis_.get_basis("physics").bind(big.min(0), big.max(0) + 1)
    assert bound.per_feature and scoring.indicator_columns(big, None, bound) == ()
    # a batch: the columns 0/1 in every member
    two = np.stack([big, big])
    two[1, :, 0] = 0.5
    assert scoring.indicator_columns(two, None, basis) == (1, 2, 3, 4)


def _spec(x, in_memory=True, **hyper):
    n, p = x.shape
    dtype = np.dtype(np.float32)
    params, plan = spec_.planned(spec_.check_params(hyper), n, p, dtype)
    spec = spec_.resolve(hyper, params, n, p, dtype, plan, in_memory=in_memory)
    return spec.with_indicators(n, p, lambda: scoring.binary_columns(x))


def test_every_jax_spec_takes_the_rule(monkeypatch):
    _small_tables_too(monkeypatch)
    mostly = np.c_[np.zeros((300, 3)), np.ones((300, 1)), np.linspace(0, 1, 300)]
    auto = _spec(mostly)
    assert auto.indicators == (0, 1, 2, 3) and auto.cache_basis  # beside the kept basis
    assert _spec(mostly[:, 3:]).indicators == ()  # 1 of 2 taken, 0 by the step
    assert _spec(mostly, cache_basis=False).indicators == (0, 1, 2, 3)
    assert _spec(mostly, in_memory=False).indicators == (0, 1, 2, 3)  # streamed
    ref = _spec(mostly, engine="reference", search="greedy", refine="coordinate")
    assert ref.indicators == ()


def test_tables_share_programs_below_the_threshold_and_the_scorer_buckets_leaves_above_it():
    # Issue 27's two tables with a five-level category (14 and 15 encoded columns, 20,000 and
    # 22,000 rows: their chunked rows) are in the buckets, so the second compiles nothing; the
    # scorer's leaf buckets (half the scoring work, four copies of the scoring pass to
    # compile) start at the same threshold (they started at 10^7 before the forty-fifth
    # session: the first table compiled them). Their 5 indicators of 14 are below the
    # indicator rule's share: both keep their basis values, as before.
    q, k = 40, 10
    assert scoring.compiling_dominates(20_480, 14, q) and scoring.compiling_dominates(22_528, 15, q)
    assert scoring.buckets_for(20_480, 14, q, k) == scoring.buckets_for(22_528, 15, q, k) == ()
    assert 5 < scoring.INDICATOR_MIN_SHARE * 14
    below = scoring.BUCKET_MIN_WORK // (14 * q) - 1
    assert scoring.compiling_dominates(below, 14, q) and scoring.buckets_for(below, 14, q, k) == ()
    above = scoring.BUCKET_MIN_WORK // (14 * q) + 1
    assert not scoring.compiling_dominates(above, 14, q)
    assert scoring.buckets_for(above, 14, q, k) == scoring.default_buckets(k + 1)


@pytest.mark.slow  # ~20 s: two first fits' programs; the scorer's sharing is checked in the
# default suite (test_tables_with_indicators_elsewhere_share_the_scorer)
def test_a_second_table_with_its_indicators_elsewhere_compiles_nothing(monkeypatch):
    _small_tables_too(monkeypatch)
    rng = np.random.default_rng(5)
    basis = {"hats": 0, "sines": 2, "cosines": 0, "powers": 2, "truncated_cubics": 0}
    kw = dict(k=3, search="greedy", validation_fraction=None, shapes=0, basis=basis)
    for i, pos in enumerate([(0, 1, 2, 3), (2, 3, 4, 5)]):
        x = _table(rng, m=300, binary=pos)
        y = x[:, pos[0]] * np.sin(3 * x[:, 4 - 4 * i]) + x[:, pos[1]] + 0.05 * rng.normal(size=300)
        with count_compilations() as count:
            est = jaxtree.TreeRegressor(**kw).fit(x, y)
        assert est.score(x, y) > 0.5
    assert count.compiles == 0, count


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
    _small_tables_too(monkeypatch)
    seen = _spy(monkeypatch)
    kw = dict(k=3, search="greedy")
    batch = jaxtree.fit_batch(np.stack([x, x]), ys, **kw)
    assert seen == [(0, 2)], seen
    for b in range(2):
        one = jaxtree.TreeRegressor(**kw, validation_fraction=None, shapes=0).fit(x, ys[b])
        assert seen[-1] == (0, 2)
        member = batch.estimators[b]
        assert choice_key(member.choices_) == choice_key(one.choices_)
        # the refinement's L-BFGS end point moves with rounding: member 0 differed by 1.4e-10
        # on the observed ranges, 2.7e-9 on round bounds (fifty-fourth session)
        np.testing.assert_allclose(member.predict(x), one.predict(x), rtol=1e-7, atol=1e-8)


def test_the_streamed_scaling_pass_finds_what_the_scaled_rows_hold():
    # the 0/1 columns of the scaled rows (jaxtree.scoring.binary_columns, the in-memory
    # rule's input), found while scaling a ChunkReader chunk by chunk: 0/1; two other
    # values (scaled to 0 and 1); a constant; 0/1 but 0.5 on a row of zero weight only;
    # 0 in the first chunks, 1 and then 0.5 in the last (three values across chunks);
    # a number
    from jaxtree import _scaling, stream

    rng = np.random.default_rng(6)
    n = 1000
    half = np.where(np.arange(n) < 900, (np.arange(n) >= 500).astype(float), 0.5)
    x = np.c_[rng.integers(0, 2, n), 3.0 + 2.0 * rng.integers(0, 2, n), np.full(n, 7.0),
              rng.integers(0, 2, n), half, rng.uniform(size=n)].astype(np.float32)
    w = rng.uniform(0.5, 2.0, n)
    w[17] = 0.0
    x[17, 3] = 0.5
    y = rng.normal(size=n)
    for weights in (w, None):
        reader = stream.ChunkReader(x, y, weights, chunk_size=128)
        sc, found, two_valued, _ = stream.scaling_and_indicators(reader)
        want, mask = _scaling.from_rows(x, y, weights)
        np.testing.assert_array_equal(sc.x_min, want.x_min)
        np.testing.assert_array_equal(sc.x_scale, want.x_scale)
        xs, _ = _scaling.scale_rows(want, x, y, weights)
        assert found == scoring.binary_columns(xs, weights)
        assert found == ((0, 1, 2, 3) if weights is not None else (0, 1, 2))
        # the columns of two values (not the constant): the in-memory scaling's rule, on the
        # same rows of positive weight
        assert two_valued == tuple(int(j) for j in np.flatnonzero(mask))
        assert two_valued == ((0, 1, 3) if weights is not None else (0, 1))


def test_a_streamed_fit_sums_its_indicators_as_the_in_memory_fit(tmp_path, monkeypatch):
    """A memmap's fit (read chunk by chunk, its 0/1 columns found in the scaling pass) takes
    the indicators the in-memory fit takes and makes its choices; and its choices with the
    rule off."""
    _small_tables_too(monkeypatch)
    rng = np.random.default_rng(9)
    n = 1200
    x = _table(rng, m=n, p=6, binary=(0, 2, 3, 5)).astype(np.float32)
    y = x[:, 0] * np.sin(3 * x[:, 1]) + 0.5 * x[:, 3] + 0.05 * rng.normal(size=n)
    mx = np.memmap(tmp_path / "x", dtype=np.float32, mode="w+", shape=x.shape)
    mx[:] = x
    mx.flush()
    seen = _spy(monkeypatch)
    basis = {"hats": 4, "sines": 3, "cosines": 3, "powers": 2, "truncated_cubics": 0}
    # no refinement: the leaves' weights are the scorer's (float32 L-BFGS runs streamed and
    # in memory stop 1e-4 apart)
    kw = dict(k=3, chunk_size=256, basis=basis, search="greedy", validation_fraction=None,
              shapes=0, refine=None)
    from jaxtree import stream

    passed = []  # what each streamed scoring pass was given
    real_block = stream.score_block
    monkeypatch.setattr(stream, "score_block", lambda *a, **k: passed.append(a[6]) or
                        real_block(*a, **k))
    memory = jaxtree.TreeRegressor(**kw).fit(x, y)
    streamed = jaxtree.TreeRegressor(**kw).fit(mx, y)
    assert seen == [(0, 2, 3, 5)] * 2, seen
    assert passed and all(np.asarray(b).tolist() == [0, 2, 3, 5] for b in passed)
    assert choice_key(streamed.choices_) == choice_key(memory.choices_)
    np.testing.assert_allclose(streamed.predict(x), memory.predict(x), rtol=1e-5, atol=1e-5)
    # the two-valued columns the scaling pass found are the table's: the same formula
    assert [c.two_valued for c in streamed.encoding_.columns] == [
        c.two_valued for c in memory.encoding_.columns] == [j in (0, 2, 3, 5) for j in range(6)]
    assert streamed.formula() == memory.formula()
    _rule_off(monkeypatch)
    plain = jaxtree.TreeRegressor(**kw).fit(mx, y)
    assert choice_key(plain.choices_) == choice_key(streamed.choices_)
    np.testing.assert_allclose(plain.predict(x), streamed.predict(x), rtol=1e-5, atol=1e-5)
