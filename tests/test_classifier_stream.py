"""TreeClassifier on streamed data (a memmap or a ChunkReader): the same search as in memory
(:func:`jaxtree.stream.loss_step`), read ``chunk_size`` rows at a time."""

import numpy as np
import pytest

import jaxtree
from jaxtree import stream

BASIS = jaxtree.basis.make_basis(hats=3, sines=3, cosines=3, powers=2, truncated_cubics=0)
N, P, K = 100, 3, 3
# 100 rows: 4 chunks, the last padded; in memory "auto" would be backfit with a held-out size;
# the trees alone (the shape terms' equality: test_streamed_shape_terms_equal_the_in_memory_ones)
KW = dict(k=K, basis=BASIS, chunk_size=32, search="greedy", validation_fraction=None, shapes=0)


def make_data(seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(N, P))
    if classes == 2:
        logit = 3 * np.sin(3 * X[:, 0]) - 2 * X[:, 1]
        y = np.where(rng.uniform(size=N) < 1 / (1 + np.exp(-logit)), "late", "on time")
    else:
        y = np.digitize(X[:, 0] + 0.5 * X[:, 1] + 0.2 * rng.normal(size=N), [0.5, 1.0])
    return X, y


def memmap(tmp_path, X):
    mm = np.memmap(tmp_path / "x.dat", dtype=X.dtype, mode="w+", shape=X.shape)
    mm[:] = X
    mm.flush()
    return np.memmap(tmp_path / "x.dat", dtype=X.dtype, mode="r", shape=X.shape)


def flat(choices):
    rows = choices if choices and isinstance(choices[0], list) else [choices]
    return [[(c["flat_index"], c["op"], c["slot"], c["feature"], c["basis"]) for c in m]
            for m in rows]


def assert_same_fit(a, b, X):
    assert flat(a.choices_) == flat(b.choices_)
    # Sums in another order: L-BFGS may stop ~1e-9 apart (the ramp loss is not smooth).
    np.testing.assert_allclose(a.history_, b.history_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-6)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.classes_, b.classes_)
    assert a.status_ == b.status_ and a.k_ == b.k_


@pytest.mark.parametrize("loss,refine", [
    ("logistic", "coordinate"),
    pytest.param("margin", "optax", marks=pytest.mark.slow),  # ~25 s: compiles both L-BFGS
])
def test_memmap_fit_equals_in_memory_fit_binary(tmp_path, loss, refine):
    X, y = make_data(seed=1)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=N)
    kw = dict(KW, loss=loss, refine=refine)
    a = jaxtree.TreeClassifier(**kw).fit(X, y, sample_weight=w)
    b = jaxtree.TreeClassifier(**kw).fit(memmap(tmp_path, X), y, sample_weight=w)
    assert_same_fit(a, b, X)
    assert b.history_[-1] < b.history_[0]


@pytest.mark.slow  # ~13 s: compiles the vmapped in-memory step
def test_memmap_fit_equals_in_memory_fit_three_classes(tmp_path):
    X, y = make_data(seed=2, classes=3)
    kw = dict(KW, refine="coordinate")
    a = jaxtree.TreeClassifier(**kw).fit(X, y)
    b = jaxtree.TreeClassifier(**kw).fit(memmap(tmp_path, X), y)
    assert b.history_.shape == (3, K + 1)
    assert_same_fit(a, b, X)


@pytest.mark.parametrize("classes", [2, pytest.param(3, marks=pytest.mark.slow)])
def test_streamed_shape_terms_equal_the_in_memory_ones(tmp_path, classes):
    """shapes="auto" on streamed rows (jaxtree._fit.classify.Labels._sub): the count
    searched on the rows read into memory (all of them below SEARCH_ROWS, as in memory), the
    Newton backfit block by block (jaxtree.stream.refit_shapes); for three classes each
    one-versus-rest tree's. The in-memory fit's terms and losses to float64 rounding: a
    block's values out of the rows' order, a working response of another class, or the
    streamed sweep on the rows' own weights instead of the Newton weights fail it."""
    rng = np.random.default_rng(4)
    X = rng.uniform(size=(300, P))
    logit = 5 * np.exp(-((X[:, 0] - 0.5) / 0.1) ** 2) - 2 + 3 * np.sign(
        (X[:, 1] - 0.5) * (X[:, 2] - 0.5))
    y = (rng.uniform(size=300) < 1 / (1 + np.exp(-logit)) if classes == 2
         else np.digitize(logit + rng.normal(size=300), [-1.5, 1.5]))
    # chunks of 16 rows: 19 chunks, two blocks of the streamed passes (16 chunks a block)
    kw = dict(KW, k=1, refine=None, shapes="auto", chunk_size=16)
    a = jaxtree.TreeClassifier(**kw).fit(X, y)
    b = jaxtree.TreeClassifier(**kw).fit(memmap(tmp_path, X), y)
    assert int(np.sum(a.model_.shapes.n_terms)) >= classes - 1
    assert b.model_.shape_spec == a.model_.shape_spec
    np.testing.assert_allclose(b.decision_function(X), a.decision_function(X), rtol=1e-9,
                               atol=1e-9)
    np.testing.assert_allclose(b.history_, a.history_, rtol=1e-9)


def test_chunk_reader_holds_the_labels(tmp_path):
    """A :class:`jaxtree.stream.ChunkReader`'s ``y`` holds numeric class labels; the fit
    equals the in-memory one (its chunk size is the reader's)."""
    X, y = make_data(seed=3, classes=3)
    reader = stream.ChunkReader(memmap(tmp_path, X), (y == 2).astype(np.float64), chunk_size=32)
    kw = dict(KW, refine="coordinate", chunk_size=2048)  # the reader's chunk size is used
    a = jaxtree.TreeClassifier(**dict(kw, chunk_size=32)).fit(X, y == 2)
    b = jaxtree.TreeClassifier(**kw).fit(reader, None)
    np.testing.assert_array_equal(b.classes_, [0.0, 1.0])
    assert flat(a.choices_) == flat(b.choices_)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-6)


def test_streamed_fit_errors(tmp_path):
    X, y = make_data(seed=1)
    mm = memmap(tmp_path, X)
    with pytest.raises(ValueError, match="validation_fraction is not supported for streamed"):
        jaxtree.TreeClassifier(**dict(KW, validation_fraction=0.3)).fit(mm, y)
    reader = stream.ChunkReader(mm, (y == "late").astype(float), chunk_size=25)
    with pytest.raises(ValueError, match="pass y=None and sample_weight=None"):
        jaxtree.TreeClassifier(**KW).fit(reader, y)
    with pytest.raises(ValueError, match="needs engine='jax'"):
        jaxtree.TreeClassifier(**KW, engine="reference", refine="coordinate").fit(reader, None)
    with pytest.raises(ValueError, match="at least 2 classes"):
        jaxtree.TreeClassifier(**KW).fit(mm, np.full(N, "late"))
    with pytest.raises(ValueError, match="loss_step needs a classification loss"):
        stream.loss_step(reader, BASIS, jaxtree.search.Config(max_k=1))


def test_reference_engine_reads_a_memmap_in_memory(tmp_path):
    X, y = make_data(seed=1)
    kw = dict(KW, engine="reference", refine="coordinate", k=2)
    a = jaxtree.TreeClassifier(**kw).fit(X, y)
    b = jaxtree.TreeClassifier(**kw).fit(memmap(tmp_path, X), y)
    assert flat(a.choices_) == flat(b.choices_)
    np.testing.assert_allclose(a.history_, b.history_, rtol=1e-12)
