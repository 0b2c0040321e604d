"""Host threads for large passes over rows (jaxtree._threads): the same values as serial."""

import threading

import numpy as np
import pytest

import jaxtree
from jaxtree import _scaling, _threads, scoring
from jaxtree.datasets import paper_synthetic


@pytest.fixture
def threaded(monkeypatch):
    """Every pass on 3 blocks of rows, whatever its size and the machine's cores."""
    monkeypatch.setattr(_threads, "MIN_VALUES", 0)
    monkeypatch.setattr(_threads, "workers", lambda: 3)


def test_row_parts_cover_the_rows_once(monkeypatch):
    monkeypatch.setattr(_threads, "workers", lambda: 3)
    assert _threads.row_parts(10, _threads.MIN_VALUES - 1) == [slice(0, 10)]
    parts = _threads.row_parts(10, _threads.MIN_VALUES)
    assert len(parts) == 3
    assert np.array_equal(np.concatenate([np.arange(10)[s] for s in parts]), np.arange(10))
    out = []  # on one of jaxtree's own threads a pass stays there (no nested pools)
    t = threading.Thread(target=lambda: out.append(_threads.row_parts(10, 1 << 30)),
                         name="jaxtree-read_0")
    t.start()
    t.join()
    assert out == [[slice(0, 10)]]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_column_extremes_on_threads_equal_serial(threaded, dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1_003, 5)).astype(dtype)
    a[500, 2] = np.nan  # a NaN in one block gives NaN for its column, as np.min
    lo, hi = _threads.column_extremes(a)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(lo, a.min(0))
        np.testing.assert_array_equal(hi, a.max(0))
    assert lo.dtype == dtype and np.isnan(lo[2]) and np.isnan(hi[2])
    strided = a[::2]  # not contiguous
    np.testing.assert_array_equal(_threads.column_extremes(strided)[1], strided.max(0))


def test_scaling_and_chunks_on_threads_equal_serial(threaded, monkeypatch):
    rng = np.random.default_rng(1)
    x = rng.uniform(-3, 5, (2_001, 4)).astype(np.float32)
    y = rng.standard_normal(2_001)
    sw = rng.random(2_001)
    sw[::7] = 0.0
    x[::7] += 10.0  # zero-weight rows outside the range are clipped
    sc, _ = _scaling.from_rows(x, y, sw)
    got = _scaling.scale_rows(sc, x, y, sw)
    chunks = scoring._host_chunks(got[0], got[1], sw, 512, None, np.float32)
    monkeypatch.setattr(_threads, "MIN_VALUES", 1 << 62)  # serial
    want = _scaling.scale_rows(sc, x, y, sw)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    for g, w in zip(chunks, scoring._host_chunks(want[0], want[1], sw, 512, None, np.float32)):
        np.testing.assert_array_equal(g, w)


def test_a_fit_on_threads_equals_the_serial_fit(monkeypatch):
    """The estimator's host passes (validation, encoding, scaling, chunks) on threads give
    the serial fit bit for bit."""
    X, y = paper_synthetic(400, p=4, seed=3)

    def fit():  # no refinement: the host passes are the subject (L-BFGS compiled ~3 s more)
        return jaxtree.TreeRegressor.paper(k=3, refine=None).fit(X, y).predict(X)

    serial = fit()
    monkeypatch.setattr(_threads, "MIN_VALUES", 0)
    monkeypatch.setattr(_threads, "workers", lambda: 3)
    np.testing.assert_array_equal(fit(), serial)
