"""Memory of in-memory fits (issue 12 item 7): a large array is fitted chunk by chunk.

The 10^7-row measurement lives in ``benchmarks/bench_memory.py``; here the thresholds are
lowered so small arrays take the chunked paths, which must give the in-memory results.
"""

import numpy as np
import pytest

import jaxtree
from jaxtree import basis as B
from jaxtree._fit import pipeline, source
from jaxtree._fit import spec as E
from jaxtree._inputs import validation as V

from _shared import GREEDY
from conftest import paper_g

BASIS = B.make_basis(hats=4, sines=3, cosines=3, powers=2, truncated_cubics=0)


def _data(n=1200, p=3, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    x = rng.random((n, p))
    y = paper_g(np.c_[x, rng.random((n, 4 - p))]) + 0.05 * rng.standard_normal(n)
    return x.astype(dtype), y.astype(dtype)


def _fit_both(monkeypatch, X, y, sample_weight=None, **kw):
    """``(in-memory fit, chunked fit)`` of the same data and options: the greedy tree grown
    to ``k`` on both paths (the in-memory default below 10,000 rows is ``"backfit"`` with a
    held-out size, which the chunked path does not run) and no shape terms (the chunked
    path's ``shapes="auto"`` is tests/test_stream_shapes.py's)."""
    kw = dict(k=2, basis=BASIS, chunk_size=256, **GREEDY, **kw)
    a = jaxtree.TreeRegressor(**kw).fit(X, y, sample_weight)
    calls = []
    monkeypatch.setattr(E, "CHUNKED_FIT_MIN_VALUES", 1)
    orig = source.Streamed.__init__  # the rows read chunk by chunk ...
    monkeypatch.setattr(source.Streamed, "__init__",
                        lambda self, *args, **kw: calls.append(1) or orig(self, *args, **kw))
    monkeypatch.setattr(source.InMemory, "__init__",  # ... and never held whole
                        lambda *a, **k: pytest.fail("whole-array copy"))
    b = jaxtree.TreeRegressor(**kw).fit(X, y, sample_weight)
    assert calls == [1]
    return a, b


def _assert_same_model(a, b, X, atol, same_formula=True):
    assert [c["flat_index"] for c in a.choices_] == [c["flat_index"] for c in b.choices_]
    np.testing.assert_allclose(b.history_, a.history_, rtol=1e-4)
    np.testing.assert_allclose(b.predict(X), a.predict(X), rtol=1e-5, atol=atol)
    assert b.formula() == a.formula() or not same_formula
    assert list(b.encoded_feature_names_) == list(a.encoded_feature_names_)


# Both fits below share their compiled programs (n = 1200, 4 covariates, k = 2, the same
# basis, chunk and refinement), so only the first pays for compilation.
def test_chunked_fit_equals_in_memory(monkeypatch):
    X, y = _data(p=4)
    w = np.random.default_rng(1).random(X.shape[0])
    w[:50] = 0.0  # zero-weight rows are clipped into range on both paths
    a, b = _fit_both(monkeypatch, X, y, w, refine="coordinate")
    _assert_same_model(a, b, X, atol=1e-6)  # as a memmap's fit (tests/test_stream.py)
    assert b.pruned_ is None and b.n_features_in_ == 4


def test_chunked_fit_after_encoding_missing_values(monkeypatch):
    # The table is encoded first (fill value + "x2 missing" indicator: 4 covariates); the
    # encoded matrix is what is read chunk by chunk, and the encoding is kept for predict.
    X, y = _data(p=3, seed=3)
    X[::7, 1] = np.nan
    a, b = _fit_both(monkeypatch, X, y, refine="coordinate")
    assert list(b.encoded_feature_names_) == ["x1", "x2", "x2 missing", "x3"]
    _assert_same_model(a, b, X, atol=1e-6)


@pytest.mark.slow
def test_chunked_fit_default_refine_equals_in_memory(monkeypatch):
    # Default refinement (L-BFGS): its float32 loss sums run in another order when streamed
    # and it stops at a relative decrease of 1e-7, so the weights agree to about that
    # precision (here predictions within 1.7e-4 of y's range; a memmap's fit does the same).
    # At n = 10^7 the two paths gave the same model to the last digit (BENCHMARKS.md).
    X, y = _data(p=4, seed=2)
    a, b = _fit_both(monkeypatch, X, y)
    _assert_same_model(a, b, X, atol=1e-3 * np.ptp(y), same_formula=False)  # 4th digit


@pytest.mark.parametrize("kw", [dict(cache_basis=True), dict(engine="reference"),
                                dict(target_transform="log")])
def test_other_options_keep_the_in_memory_path(monkeypatch, kw):
    from jaxtree import plan as plan_

    def chunked(est, X, transform):  # the CPU row plan decides what "large" is
        rp = plan_.row_plan(X.shape[0], X.shape[1], 40, X.dtype, platform="cpu",
                            cpu_chunked_values=E.CHUNKED_FIT_MIN_VALUES)
        return E.fits_in_chunks(est.get_params(), X, transform, rp)

    monkeypatch.setattr(E, "CHUNKED_FIT_MIN_VALUES", 1)
    est = jaxtree.TreeRegressor(**kw)
    X = np.zeros((10, 2), np.float32)
    assert not chunked(est, X, kw.get("target_transform") or "identity")
    assert chunked(jaxtree.TreeRegressor(), X, "identity")
    for streamed in (dict(search="beam"), dict(search="backfit"), dict(prune_tol=0.1),
                     dict(validation_fraction=0.2), dict(shapes=1)):
        assert chunked(jaxtree.TreeRegressor(**streamed), X, "identity")
    assert not chunked(jaxtree.TreeRegressor(), X.astype(np.int64), "identity")
    monkeypatch.setattr(E, "CHUNKED_FIT_MIN_VALUES", 21)
    assert not chunked(jaxtree.TreeRegressor(), X, "identity")
    # on an accelerator the device copy decides: 10 x 2 floats stay in device memory
    gpu = plan_.row_plan(10, 2, 40, np.float32, platform="gpu")
    assert not E.fits_in_chunks(jaxtree.TreeRegressor().get_params(), X, "identity", gpu)


def test_predict_in_chunks_equals_one_call(monkeypatch):
    X, y = _data(p=4)  # the fits' compiled programs above
    est = jaxtree.TreeRegressor(k=2, basis=BASIS, chunk_size=256, refine="coordinate",
                                **GREEDY).fit(X, y)
    whole = est.predict(X)
    monkeypatch.setattr(pipeline, "PREDICT_CHUNK_ROWS", 256)  # 4 full blocks and a padded one
    chunked = est.predict(X)
    assert chunked.dtype == np.float64 and chunked.shape == (1200,)
    np.testing.assert_allclose(chunked, whole, rtol=1e-6, atol=1e-6)


def test_blockwise_checks_name_the_first_bad_value(monkeypatch):
    monkeypatch.setattr(V, "_FINITE_BLOCK_ROWS", 4)
    X = np.ones((30, 3), np.float32)
    X[13, 2] = np.inf
    X[21, 0] = np.nan
    with pytest.raises(ValueError, match=r"2 NaN or infinite value\(s\), the first at row 13, "
                                         r"column 2"):
        V.check_X(X)
    V.check_X(np.ones((30, 3), np.float32))  # finite: passes block by block
    big = np.ones((5, 2), np.float32)
    big[3, 1] = 3e38
    big[0, 1] = -3e38  # finite values whose range overflows float32
    with pytest.raises(ValueError, match=r"X column 1 holds values too large"):
        V.check_representable(big, np.ones(5), np.float32)
