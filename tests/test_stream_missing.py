"""Missing values in a streamed X (issue 12): a memmap with NaN fits as the same array in memory.

With ``missing="indicator"`` one streamed pass (``_encoding.fit_streamed``) builds the spec
``_encoding.fit`` builds in memory, and the search reads the memmap through
``_encoding.EncodedRows`` (fills and indicators made block by block, never for all rows).
"""

import os

import numpy as np
import pytest

import jaxtree
from jaxtree import basis as B
from jaxtree import stream
from jaxtree._inputs import encoding as _encoding

from _shared import GREEDY

BASIS = B.make_basis(hats=4, sines=3, cosines=3, powers=2, truncated_cubics=0)
CHUNK = 32  # blocks of 16 * 32 = 512 rows: n = 1200 is read in 3 blocks
KW = dict(k=2, basis=BASIS, chunk_size=CHUNK, refine=None, **GREEDY)


def _memmap(tmp_path, a, name="x"):
    m = np.memmap(os.path.join(tmp_path, name), dtype=a.dtype, mode="w+", shape=a.shape)
    m[:] = a
    m.flush()
    return m


def _table(n=1200, seed=0):
    """x2 is missing in a fifth of the rows and y jumps by 0.8 there (a planted effect); x3 is
    missing in a tenth (no effect); x1 has none."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 2.0, (n, 3))
    miss = rng.random(n) < 0.2
    y = np.sin(2 * x[:, 0]) + 0.8 * miss + 0.05 * rng.standard_normal(n)
    x[miss, 1] = np.nan
    x[rng.random(n) < 0.1, 2] = np.nan
    return x, y


def test_memmap_with_nan_equals_the_in_memory_fit(tmp_path):
    x, y = _table()
    a = jaxtree.TreeRegressor(**KW).fit(x, y)
    b = jaxtree.TreeRegressor(**KW).fit(_memmap(tmp_path, x), y)
    assert b.encoding_ == a.encoding_ and not a.encoding_.is_identity
    assert list(b.encoded_feature_names_) == ["x1", "x2", "x2 missing", "x3", "x3 missing"]
    assert list(b.encoded_feature_names_) == list(a.encoded_feature_names_)
    assert b.n_features_in_ == 3
    assert [c["flat_index"] for c in b.choices_] == [c["flat_index"] for c in a.choices_]
    assert any(c["feature"] == 2 for c in b.choices_)  # the planted x2-missing effect
    np.testing.assert_allclose(b.history_, a.history_, rtol=1e-9)
    assert b.formula() == a.formula() and "[x2 missing]" in b.formula()
    np.testing.assert_allclose(b.predict(x), a.predict(x), rtol=1e-9, atol=1e-9)
    # predict reads a memmap with NaN too; save/load keeps the encoding
    np.testing.assert_allclose(b.predict(_memmap(tmp_path, x, "x2")), a.predict(x), atol=1e-9)
    b.save(tmp_path / "m.json")
    c = jaxtree.load(tmp_path / "m.json")
    assert c.encoding_ == b.encoding_
    np.testing.assert_allclose(c.predict(x), b.predict(x), rtol=0, atol=1e-12)
    # A user's ChunkReader over the memmap: read the same way (its x wrapped), same model.
    r = stream.ChunkReader(_memmap(tmp_path, x, "x3"), y, chunk_size=CHUNK)
    d = jaxtree.TreeRegressor(**KW).fit(r, None)
    assert d.encoding_ == a.encoding_ and d.formula() == b.formula()
    np.testing.assert_allclose(d.predict(x), b.predict(x), rtol=0, atol=0)


def test_classifier_memmap_with_nan_equals_the_in_memory_fit(tmp_path):
    # The classifier's streamed fit reads the rows encoded the same way (one shared helper).
    x, y = _table(n=600)
    labels = (y > np.median(y)).astype(int)
    # The streamed classifier runs the greedy search grown to k: compare it with that search
    # in memory (the in-memory default on 600 rows is the backfit search with a held-out size).
    kw = dict(k=2, basis=BASIS, chunk_size=CHUNK, refine=None, **GREEDY)
    a = jaxtree.TreeClassifier(**kw).fit(x, labels)
    b = jaxtree.TreeClassifier(**kw).fit(_memmap(tmp_path, x), labels)
    assert b.encoding_ == a.encoding_ and not a.encoding_.is_identity
    assert [c["flat_index"] for c in b.choices_] == [c["flat_index"] for c in a.choices_]
    assert b.formula() == a.formula()
    np.testing.assert_allclose(b.predict_proba(x), a.predict_proba(x), rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="row"):
        jaxtree.TreeClassifier(missing="error", **kw).fit(_memmap(tmp_path, x, "x2"), labels)


def test_encoded_rows_are_made_block_by_block(tmp_path, monkeypatch):
    # A fit that encoded the whole memmap at once (or a chunk of more rows than a block)
    # would hold an n-row encoded copy: the spy sees every transform's row count.
    x, y = _table()
    seen = []
    orig = _encoding.transform
    monkeypatch.setattr(_encoding, "transform",
                        lambda spec, X, **kw: seen.append(len(X)) or orig(spec, X, **kw))
    est = jaxtree.TreeRegressor(**KW).fit(_memmap(tmp_path, x), y)
    assert est.encoding_.feature_names_out[2] == "x2 missing"
    assert seen and max(seen) <= 16 * CHUNK < x.shape[0]


@pytest.mark.parametrize("chunk", [1, 7, 64, 500])
def test_streamed_spec_is_the_in_memory_spec(chunk):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(500, 6)).astype(np.float32)
    x[rng.random(500) < 0.3, 0] = np.nan
    x[:, 1] = np.nan  # all NaN: fill 0, an indicator
    x[499, 2] = np.nan  # NaN in the last row only
    x[[3, 250], 3] = x[:, 3].min() - 1.0  # the minimum, twice
    x[0, 3] = np.nan
    x[:, 4] = -0.0  # a constant column, no NaN
    spec = _encoding.fit_streamed(x, chunk)
    assert spec == _encoding.fit(x)
    assert [c.indicator for c in spec.columns] == [True, True, True, True, False, False]
    assert spec.columns[1].fill == 0.0
    assert spec.columns[3].fill == float(np.nanmin(x[:, 3]))
    enc = _encoding.EncodedRows(x, spec)
    assert enc.shape == (500, 10) and enc.dtype == np.float32 and enc.ndim == 2
    whole = _encoding.transform(spec, x)
    np.testing.assert_array_equal(enc[3:40], whole[3:40])
    np.testing.assert_array_equal(enc[np.array([0, 7, 499])], whole[[0, 7, 499]])
    clean = np.abs(rng.normal(size=(50, 2)))
    assert _encoding.fit_streamed(clean, chunk if chunk <= 50 else 50) == _encoding.fit(clean)


def test_missing_error_and_inf_are_refused(tmp_path):
    x, y = _table(n=300)
    x[:, 1] = np.nan_to_num(x[:, 1])
    x[:123, 2] = np.nan_to_num(x[:123, 2])
    x[123, 2] = np.nan
    with pytest.raises(ValueError, match=r"NaN \(a missing value\) at row 123, column 2.*"
                                         r"missing='indicator'"):
        jaxtree.TreeRegressor(missing="error", **KW).fit(_memmap(tmp_path, x), y)
    x[45, 0] = -np.inf
    for missing in ("indicator", "error"):
        with pytest.raises(ValueError, match=r"infinite value at row 45, column 0.*inf is not "
                                             "a missing value"):
            jaxtree.TreeRegressor(missing=missing, **KW).fit(_memmap(tmp_path, x, missing), y)


def test_memmap_without_nan_is_read_as_before(tmp_path, monkeypatch):
    x, y = _table(n=1200)
    x = _encoding.transform(_encoding.fit(x), x)  # 5 columns without NaN: the kernels above
    monkeypatch.setattr(_encoding, "EncodedRows", lambda *a: pytest.fail("an encoded copy"))
    a = jaxtree.TreeRegressor(**KW).fit(x, y)
    b = jaxtree.TreeRegressor(**KW).fit(_memmap(tmp_path, x), y)
    assert b.encoding_.is_identity and b.encoding_ == a.encoding_
    assert list(b.encoded_feature_names_) == ["x1", "x2", "x3", "x4", "x5"]
    assert [c["flat_index"] for c in b.choices_] == [c["flat_index"] for c in a.choices_]
    np.testing.assert_allclose(b.predict(x), a.predict(x), rtol=1e-9, atol=1e-9)
    assert b.formula() == a.formula()


def test_predict_encodes_a_memmap_block_by_block(tmp_path, monkeypatch):
    # predict on a memmap with NaN reads it encoded a block of PREDICT_CHUNK_ROWS at a time
    # (an encoder of all rows at once would hold an n-row copy), with the in-memory values.
    from jaxtree._fit import pipeline as E

    x, y = _table(n=600)
    est = jaxtree.TreeRegressor(**KW).fit(x, y)
    want = est.predict(x)
    monkeypatch.setattr(E, "PREDICT_CHUNK_ROWS", 256)
    seen = []
    orig = _encoding.transform
    monkeypatch.setattr(_encoding, "transform",
                        lambda spec, X, **kw: seen.append(len(X)) or orig(spec, X, **kw))
    got = est.predict(_memmap(tmp_path, x))
    assert seen and max(seen) <= 256
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    bad = x.copy()
    bad[300, 0] = np.inf
    with pytest.raises(ValueError, match="infinite value at row 300"):
        est.predict(_memmap(tmp_path, bad, "bad"))
