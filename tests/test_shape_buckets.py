"""The shape stage in the tree's buckets (issue 27): where compiling dominates, the in-memory
shape stage (``shapes="auto"`` after the tree, ``shapes=S`` first) and the backfitting round
run on rows and columns padded to the buckets with the candidate pairs traced
(:class:`jaxtree.shapes.SlotSpec`, :attr:`jaxtree._fit.source.InMemory.shape_bucket`). The
oracles: the fit is the unbucketed fit (float64, the same choices, predictions to 1e-10), and
a second table in the same buckets compiles nothing in the shape stage and the backfit."""

import numpy as np
import pytest

import jaxtree
from jaxtree import shapes as shapes_
from jaxtree._fit import source, stages
from jaxtree.debug import count_compilations


def _table(n, p, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p))
    X[:, 0] = rng.integers(0, 5, n)  # a small-integer column
    y = (np.sin(3 * X[:, 1]) + 2 * X[:, 2] * X[:, p - 1] + 0.1 * X[:, 0]
         + 0.3 * np.cos(4 * X[:, 3]) + 0.05 * rng.normal(size=n))
    return X, y


def _unbucketed(monkeypatch):
    monkeypatch.setattr(source.InMemory, "shape_bucket", property(lambda self: None))


def _same(a, b, X):
    assert a.model_.shapes is not None  # the shape stage chose terms
    assert a.model_.shape_spec == b.model_.shape_spec
    assert a.model_.shapes.main.shape == (X.shape[1], a.model_.shape_spec.n1)
    key = lambda c: (c.get("move"), c["flat_index"], c["feature"], c.get("feature2"))  # noqa: E731
    assert [key(c) for c in a.choices_] == [key(c) for c in b.choices_]
    assert a.formula() == b.formula()
    np.testing.assert_allclose(a.history_, b.history_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-10, atol=1e-10)
    assert [r["terms"] for r in a.shape_path_] == [r["terms"] for r in b.shape_path_]
    np.testing.assert_allclose([r["val_mse"] for r in a.shape_path_],
                               [r["val_mse"] for r in b.shape_path_], rtol=1e-10)


# The estimator of the regressor's tests: the defaults but k = 4. The buckets do not depend on
# k, and the default k = 10's tree search was most of each fit's time at these rows (a second
# table's fit 14 -> 9 s); the tree's residual still leaves shape terms, pairs among them.
KW = dict(k=4)


def _counted_shape_stage(monkeypatch) -> list:
    """Counts each run of the shape stage after the tree: the list it returns gains
    ``(compilations, terms chosen)`` per call of ``stages.shapes_after``."""
    counts = []
    real = stages.shapes_after

    def counted(*args, **kw):
        with count_compilations() as count:
            out = real(*args, **kw)
        counts.append((count.compiles, out[1] is not None))
        return out

    monkeypatch.setattr(stages, "shapes_after", counted)
    return counts


@pytest.fixture(scope="module")
def first_table():
    """The estimator (KW) on 17,000 x 9 (shapes="auto" after the tree; column bucket 12,
    all rows in 12 chunks of 2,048: see the second-table test), fitted once for both tests:
    the bucketed fit of the oracle below and the first table of the compile test (whose
    programs are the ones a second table in the same buckets reuses)."""
    X, y = _table(17_000, 9, 2)
    seen, real = [], shapes_.unslot
    shapes_.unslot = lambda t, s, p, g=(): seen.append(type(s)) or real(t, s, p, g)
    try:
        est = jaxtree.TreeRegressor(**KW).fit(X, y)
    finally:
        shapes_.unslot = real
    return est, X, y, seen


def test_a_second_table_in_the_buckets_compiles_no_shape_stage(first_table, monkeypatch):
    """17,000 x 9 (the module's first table) then 22,000 x 11 (both below the buckets' work
    limit ``n*p*q < 10**7``): column bucket 12 (from 10,000 rows the buckets are multiples
    of 4: ``scoring.COARSE_COLUMNS_MIN_ROWS``; below, 9 and 11 covariates would be 10 and
    12), all rows in 12 chunks of 2,048 (9 and 11 chunks of their own); the held-out split's
    parts are chunked as that bucket's shares (10 chunks of training rows, 3 held out), not
    their own buckets (13,600 and 17,600 training rows: 7 and 9 chunks, buckets 8 and 12;
    3,400 and 4,400 held out: 2 and 3 chunks, buckets 2 and 4). The second table's whole
    fit (the tree, the shape stage's selection run, the backfitting round) compiles
    nothing. (First in the module, so that the only programs compiled before the second
    table are the first table's bucketed ones: the oracle test below adds unbucketed ones.)"""
    first = first_table[0]
    assert first.model_.shapes is not None  # the first table chose shape terms
    counts = _counted_shape_stage(monkeypatch)
    X, y = _table(22_000, 11, 3)
    with count_compilations() as whole:
        est = jaxtree.TreeRegressor(**KW).fit(X, y)
    assert counts[0][1], counts  # the second table chose shape terms too
    assert counts[0][0] == 0 and whole.compiles == 0, (counts, whole.compiles)
    assert est.n_features_in_ == 11 and est.model_.shapes.main.shape[0] == 11


def test_bucketed_shape_stage_is_the_unbucketed_one(first_table, monkeypatch, x64):
    """The estimator (KW) on 17,000 x 9 (the module's first table; shapes="auto": 9
    covariates padded to 12, the rows to their row buckets, the held-out split's parts to
    that bucket's shares): the same terms, choices and predictions as the shape stage on the
    table's own rows and columns (float64). The bucketed fit is the fixture's, so its
    programs are the compile test's."""
    bucketed, X, y, seen = first_table
    assert seen == [shapes_.SlotSpec]  # the bucketed path ran
    _unbucketed(monkeypatch)
    plain = jaxtree.TreeRegressor(**KW).fit(X, y)
    _same(bucketed, plain, X)
    assert any(len(f) == 2 for f, _ in shapes_.host_terms(bucketed.model_.shapes,
                                                            bucketed.model_.shape_spec))


# ~30 s on CI: the oracle of test_bucketed_shape_stage_is_the_unbucketed_one (the same
# bucketed shape programs) on the shapes=S order (shapes first, then the tree).
@pytest.mark.slow
def test_bucketed_shapes_first_is_the_unbucketed_one(monkeypatch, x64):
    """shapes=S (the shapes first, then the tree, then the backfitting round)."""
    X, y = _table(3_000, 5, 1)
    kw = dict(k=4, shapes=4, search="greedy")
    bucketed = jaxtree.TreeRegressor(**kw).fit(X, y)
    _unbucketed(monkeypatch)
    plain = jaxtree.TreeRegressor(**kw).fit(X, y)
    _same(bucketed, plain, X)


# ---------------------------------------------------------------------------- the classifier
# TreeClassifier's shape stage (two classes, logistic loss, from 2,000 rows) runs in the same
# buckets: its selection run on the working data of a Newton step, the tree's and the terms'
# values on the chunked rows, the Newton backfit (jaxtree._fit.classify.Labels.shape_bucket).

def _labels(n, p, seed):
    """Labels of a bump in x2 and a checkerboard in (x3, xp): k=2 leaves a residual that
    shape terms take."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p))
    X[:, 0] = rng.integers(0, 5, n)
    logit = (5 * np.exp(-((X[:, 1] - 0.5) / 0.1) ** 2) - 2
             + 3 * np.sign((X[:, 2] - 0.5) * (X[:, p - 1] - 0.5)) + 0.3 * X[:, 0])
    return X, (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int)


# The classifier's two bucket checks are in the slow suite (~40 s of compiling on CI's
# machine): the regressor's checks above keep the buckets' oracle in the default suite (the
# classifier's shape stage goes through the same bucketed split), and
# tests/test_classifier_shapes.py keeps the classifier's shape stage.
@pytest.fixture(scope="module")
def first_labels():
    """TreeClassifier(k=2) on 2,100 x 9: 9 covariates in the column bucket 10, the rows in 2
    chunks of 2,048; fitted once for both classifier tests."""
    X, y = _labels(2_100, 9, 0)
    return jaxtree.TreeClassifier(k=2).fit(X, y), X, y


@pytest.mark.slow
def test_a_second_classifier_table_in_the_buckets_compiles_nothing(first_labels, monkeypatch):
    """2,100 x 9, then 2,900 x 10 (the same column and row buckets): the second table's whole
    fit, its shape stage included (selection run, terms' losses, Newton backfit), compiles
    nothing. Before the buckets it compiled 10 programs (BENCHMARKS.md, issue 27)."""
    first = first_labels[0]
    assert first.model_.shapes is not None  # the first table chose shape terms
    counts = _counted_shape_stage(monkeypatch)
    X, y = _labels(2_900, 10, 1)
    with count_compilations() as whole:
        est = jaxtree.TreeClassifier(k=2).fit(X, y)
    assert counts == [(0, True)], counts  # the stage ran, chose terms, compiled nothing
    assert whole.compiles == 0, whole.compiles
    assert est.model_.shapes.main.shape[0] == 10 and est.n_features_in_ == 10


@pytest.mark.slow
def test_bucketed_classifier_shape_stage_is_the_unbucketed_one(first_labels, monkeypatch, x64):
    """The same fit with the shape stage on the table's own rows and columns: the same
    terms and formula, predicted probabilities and training losses to 1e-10 (float64)."""
    bucketed, X, y = first_labels
    _unbucketed(monkeypatch)
    plain = jaxtree.TreeClassifier(k=2).fit(X, y)
    assert bucketed.model_.shapes is not None
    assert bucketed.model_.shape_spec == plain.model_.shape_spec
    assert bucketed.formula() == plain.formula()
    np.testing.assert_allclose(bucketed.history_, plain.history_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(bucketed.predict_proba(X), plain.predict_proba(X), rtol=1e-10,
                               atol=1e-12)
