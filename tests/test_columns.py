"""Column buckets (issue 27): where compiling dominates, the in-memory tree search runs on
``scoring.columns_for(p)`` covariates, the rest NaN padding, so that tables of nearby widths
share compiled programs. The oracles: a padding column is never a candidate (every score of
it is +inf), the real candidates score as without padding (float64), a padded fit is the
unpadded fit, and a second table of another width in the same bucket compiles nothing."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import basis as basis_
from jaxtree import moves, scoring
from jaxtree import program as prog
from jaxtree.debug import count_compilations

from _shared import choice_key, score_jit

BASIS = basis_.Basis((basis_.Powers(degree=2), basis_.Sines(n=2)))
# The scorers jitted as the search runs them (called eagerly, each compiles its scans and
# ~180 small programs op by op); the same functions.
_select = jax.jit(scoring.select, static_argnums=1)
_score_pairs = jax.jit(moves.score_pairs, static_argnames=("basis", "max_rows"))
_score_replace = jax.jit(moves.score_replace, static_argnames=("basis", "max_leaves"))


def test_columns_for_rounds_up_to_the_bucket():
    got = {p: scoring.columns_for(p) for p in (1, 2, 3, 9, 10, 15, 16, 17, 21, 33, 64, 65)}
    assert got == {1: 2, 2: 2, 3: 4, 9: 10, 10: 10, 15: 16, 16: 16, 17: 20, 21: 24, 33: 40,
                   64: 64, 65: 80}
    coarse = {p: scoring.columns_for(p, coarse=True) for p in (1, 3, 9, 10, 11, 12, 13, 17, 33)}
    assert coarse == {1: 4, 3: 4, 9: 12, 10: 12, 11: 12, 12: 12, 13: 16, 17: 20, 33: 40}
    # the layout's rule: multiples of 4 from COARSE_COLUMNS_MIN_ROWS rows on
    n = scoring.COARSE_COLUMNS_MIN_ROWS
    assert scoring.layout(n - 1, 10, 40, 2048).columns == 10
    assert scoring.layout(n, 10, 40, 2048).columns == 12


def test_rows_for_rounds_the_chunks_up_to_the_bucket():
    sizes = (100, 101, 250, 301, 401, 501, 601, 701, 801, 1101)
    chunks = {n: scoring.rows_for(n, 100) // 100 for n in sizes}
    assert chunks == {100: 1, 101: 2, 250: 4, 301: 4, 401: 6, 501: 6, 601: 8, 701: 8, 801: 12,
                      1101: 12}
    assert scoring.rows_for(5, 100) == 8  # one chunk: chunk_shape's power of two


def test_chunk_pads_numpy_columns_with_nan_and_refuses_fewer():
    x = np.arange(12.0).reshape(6, 2) / 12
    d = scoring.chunk(x, np.ones(6), chunk_size=4, columns=4)
    assert d.x.shape == (2, 4, 4)
    flat = np.asarray(d.x).reshape(-1, 4)
    np.testing.assert_array_equal(flat[:6, :2], x)
    assert np.isnan(flat[:, 2:]).all()
    with pytest.raises(ValueError, match="fewer"):
        scoring.chunk(x, np.ones(6), chunk_size=4, columns=1)


def _tree(p, dtype):
    """A fixed tree ``0.4 phi_1(x_0) * (-0.3) phi_2(x_1) + 0.2 phi_0(x_2)`` (capacity 9)."""
    t = prog.empty_program(4, dtype)
    t = prog.insert(t, 0, prog.LEAF, 0, 1, 0.4)
    t = prog.insert(t, 0, prog.MUL, 1, 2, -0.3)
    t = prog.insert(t, 2, prog.ADD, p - 1, 0, 0.2)
    return t._replace(intercept=jnp.asarray(0.1, dtype))


# The empty tree (the first step) in the slow suite: the non-empty tree's case checks the
# same scorers, and the replacement scorer too.
@pytest.mark.parametrize("empty", [pytest.param(True, marks=pytest.mark.slow), False])
def test_padding_columns_score_inf_and_real_columns_score_as_unpadded(empty):
    rng = np.random.default_rng(7)
    n, p, cols, q = 300, 3, 6, BASIS.q
    x, y = rng.uniform(size=(n, p)), rng.normal(size=n)
    plain = scoring.chunk(x, y, chunk_size=128, dtype=np.float64)
    padded = scoring.chunk(x, y, chunk_size=128, dtype=np.float64, columns=cols)
    t = prog.empty_program(4, jnp.float64) if empty else _tree(p, jnp.float64)
    a = score_jit(t, plain, BASIS, max_leaves=5)
    b = score_jit(t, padded, BASIS, max_leaves=5)
    assert np.isinf(np.asarray(b.sse)[:, p * q:]).all()
    np.testing.assert_allclose(np.asarray(b.sse)[:, :p * q], np.asarray(a.sse), rtol=1e-12)
    np.testing.assert_allclose(b.rss, a.rss, rtol=1e-12)
    ca, cb = _select(a, q), _select(b, q)
    assert (int(ca.feature), int(ca.basis), int(ca.slot), int(ca.op)) == \
           (int(cb.feature), int(cb.basis), int(cb.slot), int(cb.op))

    pa = _score_pairs(t, plain, BASIS, max_rows=2)
    pb = _score_pairs(t, padded, BASIS, max_rows=2)
    np.testing.assert_allclose(np.asarray(pb.sse), np.asarray(pa.sse), rtol=1e-12)
    assert (np.asarray(pb.col_a) < p * q).all() and (np.asarray(pb.col_b) < p * q).all()
    np.testing.assert_array_equal(pb.col_a, pa.col_a)
    if not empty:
        ra = _score_replace(t, plain, BASIS, max_leaves=5)
        rb = _score_replace(t, padded, BASIS, max_leaves=5)
        assert np.isinf(np.asarray(rb.sse)[:, p * q:]).all()
        np.testing.assert_allclose(np.asarray(rb.sse)[:, :p * q], np.asarray(ra.sse),
                                   rtol=1e-12)


def _table(n, p, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 2, size=(n, p))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, p - 1] + 0.05 * rng.normal(size=n)
    return X, y


# The default search (backfit, held-out size) in the slow suite (~50 s of compiling): its
# padded pair and replacement scores are test_padding_columns_score_inf_and_real_columns_
# score_as_unpadded's oracle, the padded held-out fit the classifier's [2] case below.
# The greedy case in the slow suite too (~13 s): a padded fit = the unpadded fit runs by
# default wherever an estimator's small-table fit (its covariates padded to the column
# bucket, its chunks to the row bucket) equals fit_batch's member (chunked by its own rows
# and covariates, no bucket): test_batch_tol.py (greedy, 3 -> 4 covariates),
# test_oracles.py::test_fit_batch_optax_refines_and_equals_separate_fits (L-BFGS, 5 -> 6),
# test_batch_moves.py (backfit), test_batch_shapes.py (the shape stage).
@pytest.mark.parametrize("kw", [pytest.param(dict(search="greedy", validation_fraction=None),
                                             marks=pytest.mark.slow),
                                pytest.param(dict(), marks=pytest.mark.slow)],
                         ids=["greedy", "default"])
def test_padded_fit_is_the_unpadded_fit(monkeypatch, kw):
    """float64: the same choices and predictions (1e-10) with and without the bucket."""
    X, y = _table(1100, 5, 3)
    est = lambda: jaxtree.TreeRegressor(k=4, basis=BASIS, chunk_size=256, **kw)  # noqa: E731
    padded = est().fit(X, y)  # 5 chunks of 256 -> 8, 5 covariates -> 6
    monkeypatch.setattr(scoring, "columns_for", lambda p, coarse=False: p)
    monkeypatch.setattr(scoring, "rows_for", lambda n, c: n)
    plain = est().fit(X, y)
    assert [c["feature"] for c in padded.choices_] == [c["feature"] for c in plain.choices_]
    assert max(c["feature"] for c in padded.choices_) < 5
    # float64 rounding (another summation order over padded rows) carried through the
    # L-BFGS refinement: 1e-9 seen; a padded row or column that counted would move a
    # prediction by far more
    np.testing.assert_allclose(padded.predict(X), plain.predict(X), rtol=1e-7, atol=1e-8)


@pytest.mark.slow  # ~11 s; in the default suite a second table in the buckets compiling
# nothing is checked across processes (test_warmup_fills_the_cache_for_another_table_in_its_buckets)
# and for the shape stage (test_shape_buckets.py)
def test_a_second_table_of_another_width_and_length_in_the_bucket_compiles_nothing():
    """9 then 10 covariates (bucket 10) and 2,100 then 2,900 rows (9 and 12 chunks of 256:
    bucket 12), with a held-out size: the second fit compiles nothing."""
    kw = dict(k=3, basis=BASIS, search="greedy", validation_fraction=0.25, chunk_size=256)
    X, y = _table(2100, 9, 1)
    jaxtree.TreeRegressor(**kw).fit(X, y)
    X2, y2 = _table(2900, 10, 2)
    with count_compilations() as count:
        est = jaxtree.TreeRegressor(**kw).fit(X2, y2)
    assert count.compiles == 0, count
    assert est.n_features_in_ == 10 and est.predict(X2).shape == (2900,)


WARM_CHILD = """
    import numpy as np
    from jaxtree.debug import count_compilations
    kw = dict(k=3, search="greedy", validation_fraction=0.25,
              basis={"hats": 0, "sines": 2, "cosines": 0, "powers": 2, "truncated_cubics": 0})
    def batches():  # fit_batch and fit_batch_classifier of two 120 x 3 data sets
        rng = np.random.default_rng(2)
        Xb = rng.uniform(size=(2, 120, 3))
        yb = np.sin(3 * Xb[..., 0]) + Xb[..., 1] + 0.05 * rng.normal(size=(2, 120))
        jaxtree.fit_batch(Xb, yb, k=2, refine=None)
        jaxtree.fit_batch_classifier(Xb, (yb > np.median(yb, axis=1, keepdims=True)).astype(int),
                                     k=2, refine=None)

    if os.environ["CHILD_MODE"] == "warmup":
        jaxtree.warmup([(160, 3)], progress=False, **kw)
        jaxtree.warmup([(160, 3)], progress=False, classifier=True, **kw)
        batches()
        report(done=True)
    else:   # other tables in the same buckets: 200 rows (chunk 256), 4 covariates (4)
        rng = np.random.default_rng(1)
        X = rng.uniform(size=(200, 4))
        with count_compilations() as count:
            jaxtree.TreeRegressor(**kw).fit(X, np.cos(2 * X[:, 2]) + X[:, 0])
        # and one that takes shape terms (the backfitting round's programs)
        y = np.abs(X - 0.3) @ np.array([3.0, 1.0, 2.0, 1.0]) + 0.05 * rng.normal(size=200)
        with count_compilations() as shaped:
            est = jaxtree.TreeRegressor(**kw).fit(X, y)
        counts, took = [], []
        for t in (np.cos(2 * X[:, 2]) + X[:, 0], y):  # the classifier's two tables
            with count_compilations() as c:
                clf = jaxtree.TreeClassifier(**kw).fit(X, (t > np.median(t)).astype(int))
            counts += [c.lowerings, c.compiles]
            took.append(clf.model_.shapes is not None)
        with count_compilations() as batched:  # the same batches again: all from the cache
            batches()
        # a table of warmup's own covariate count: its first small prediction compiles
        # nothing (on the host, pipeline.HOST_PREDICT_MAX_ROWS)
        X3 = X[:, :3]
        own = jaxtree.TreeRegressor(**kw).fit(X3, np.cos(2 * X3[:, 2]) + X3[:, 0])
        with count_compilations() as predicted:
            own.predict(X3[:50])
        report(lowerings=count.lowerings, compiles=count.compiles,
               shaped=[shaped.lowerings, shaped.compiles], shapes=est.model_.shapes is not None,
               classifier=counts, classifier_shapes=took[1],
               batches=[batched.lowerings, batched.compiles],
               predicted=[predicted.lowerings, predicted.compiles])
"""


def test_warmup_fills_the_cache_for_another_table_in_its_buckets(tmp_path):
    """After ``warmup`` of one size, a new process fits two other tables of its buckets
    without compiling, one of them with shape terms (the backfitting round's programs are in
    the cache: warmup fits, per size, a table that takes shape terms; in this small basis
    its first table takes one too); the same for the binary classifier after
    ``warmup(classifier=True)`` (the labels: each table's target above its median; the
    second table takes shape terms after the tree; the held-out size's evaluation runs in
    the tables' buckets, not at their own widths); and fit_batch / fit_batch_classifier of
    the shapes the first process fitted compile nothing (their steps are stored, their
    chunks, starts and members made on the host); a table of warmup's own covariate count
    predicts 50 rows without compiling (on the host)."""
    from test_compilation_cache import run_child

    assert run_child(WARM_CHILD, tmp_path, CHILD_MODE="warmup")[0]["done"] is True
    res = run_child(WARM_CHILD, tmp_path, CHILD_MODE="fit")[0]
    assert (res["lowerings"], res["compiles"]) == (0, 0), res
    assert res["shapes"] and res["shaped"] == [0, 0], res
    assert res["classifier"] == [0, 0, 0, 0] and res["classifier_shapes"], res
    assert res["batches"] == [0, 0], res
    assert res["predicted"] == [0, 0], res


def test_warmup_checks_its_arguments():
    with pytest.raises(ValueError, match="rows, covariates"):
        jaxtree.warmup([(10,)])
    with pytest.raises(ValueError, match="at least 2 rows"):
        jaxtree.warmup([(1, 3)])
    with pytest.raises(ValueError, match="k must be"):
        jaxtree.warmup([(10, 2)], k=0)
    with pytest.raises(TypeError, match=r"unknown parameter\(s\) \['n', 'p'\]: table sizes go "
                       r"in sizes=\[\(rows, covariates\)"):
        jaxtree.warmup(n=500, p=3)
    # the classifier's own parameters (no y_bound; a loss)
    with pytest.raises(TypeError, match=r"\['y_bound'\].*TreeClassifier's parameters"):
        jaxtree.warmup(classifier=True, y_bound=2.0)
    with pytest.raises(TypeError, match=r"\['loss'\].*TreeRegressor's parameters"):
        jaxtree.warmup(loss="logistic")
    with pytest.raises(TypeError, match="classifier must be True or False"):
        jaxtree.warmup(classifier="yes")
    with pytest.raises(ValueError, match="classes must be an integer >= 2"):
        jaxtree.warmup(classifier=True, classes=1)
    with pytest.raises(ValueError, match="add classifier=True"):
        jaxtree.warmup(classes=3)


def test_warmup_fits_the_classifier_on_its_number_of_classes(monkeypatch):
    """warmup(classifier=True, classes=K) fits TreeClassifier on K labels of about equal
    counts (its one-versus-rest step is compiled per number of trees); two by default. No
    prediction follows (one of up to 1,024 rows computes on the host: nothing to cache)."""
    seen, predicted = [], []
    monkeypatch.setattr(jaxtree.TreeClassifier, "fit",
                        lambda self, X, y: seen.append((self.k, np.bincount(y))) or self)
    monkeypatch.setattr(jaxtree.TreeClassifier, "predict_proba",
                        lambda self, X: predicted.append(len(X)))
    monkeypatch.setattr(jaxtree.TreeRegressor, "fit", lambda self, X, y: 1 / 0)
    with pytest.warns(UserWarning, match="compilation cache is off"):  # the suite's setting
        jaxtree.warmup([(300, 3)], k=4, progress=False, classifier=True, classes=3)
        jaxtree.warmup([(300, 3)], k=4, progress=False, classifier=True)
    assert [k for k, _ in seen] == [4] * 4
    assert [len(c) for _, c in seen] == [3, 3, 2, 2]
    assert all(c.min() >= 99 for _, c in seen[:2]) and all(c.min() >= 149 for _, c in seen[2:])
    assert predicted == []


# In the slow suite (two classes ~13 s, three ~100 s; since the eighteenth session, when the
# default's shape stage on small tables added about 40 s to the default suite): the padded
# search's equality to the unpadded one stays in the default suite for the regressor (its
# fits = fit_batch's unpadded members, see test_padded_fit_is_the_unpadded_fit) and the
# classifier's shape stage (test_shape_buckets.py); three one-versus-rest trees' equality to
# binary fits is test_classifier.py's.
@pytest.mark.parametrize("classes", [pytest.param(2, marks=pytest.mark.slow),
                                     pytest.param(3, marks=pytest.mark.slow)])
def test_classifier_padded_fit_is_the_unpadded_fit(monkeypatch, classes):
    """The classifier's in-memory search takes the same buckets (float64, held-out size): the
    same moves, and losses and probabilities to 1e-8."""
    X, y = _table(1100, 5, 4)
    labels = np.digitize(y, np.quantile(y, np.linspace(0, 1, classes + 1)[1:-1]))
    est = lambda: jaxtree.TreeClassifier(k=3, basis=BASIS, chunk_size=256,  # noqa: E731
                                         validation_fraction=0.25)
    padded = est().fit(X, labels)
    monkeypatch.setattr(scoring, "columns_for", lambda p, coarse=False: p)
    monkeypatch.setattr(scoring, "rows_for", lambda n, c: n)
    plain = est().fit(X, labels)
    flat = lambda cs: [c for m in cs for c in (m if isinstance(m, list) else [m])]  # noqa: E731
    a, b = flat(padded.choices_), flat(plain.choices_)
    assert [choice_key([c]) for c in a] == [choice_key([c]) for c in b]
    assert [c["flat_index"] for c in a] == [c["flat_index"] for c in b]
    # float64 rounding of other chunk sums, carried through the logistic L-BFGS: 4e-10 seen
    # once, 1.5e-8 on one of three classes' eleven losses at de05fe4 (the forty-third
    # session's end); a padding row that counted would move them by far more
    np.testing.assert_allclose([c["sse"] for c in a], [c["sse"] for c in b], rtol=1e-7)
    # the probabilities: the L-BFGS stops at its tolerance, so rounding moves its end point;
    # 3e-9 on three classes on the observed ranges, 2e-6 on round bounds (fifty-fourth
    # session, under the suite's XLA flags; 1e-14 with two classes both times)
    np.testing.assert_allclose(padded.predict_proba(X), plain.predict_proba(X), rtol=1e-5,
                               atol=1e-10)


@pytest.mark.slow  # the regressor's oracle above on the classifier's step (whose buckets
# test_classifier_padded_fit_is_the_unpadded_fit[2] checks); a second classifier fit
# compiling nothing: test_classifier_backfit.py, test_first_fit.py; its shape stage (on by
# default from 2,000 rows) in the buckets too: tests/test_shape_buckets.py.
def test_classifier_second_table_in_the_bucket_compiles_nothing():
    kw = dict(k=3, basis=BASIS, chunk_size=256, validation_fraction=None)
    X, y = _table(2100, 9, 5)
    jaxtree.TreeClassifier(**kw).fit(X, y > np.median(y))
    X2, y2 = _table(2900, 10, 6)
    with count_compilations() as count:
        est = jaxtree.TreeClassifier(**kw).fit(X2, y2 > np.median(y2))
    assert count.compiles == 0, count
    assert est.n_features_in_ == 10 and max(c["feature"] for c in est.choices_) < 10
