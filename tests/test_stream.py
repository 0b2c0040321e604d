"""Streaming fits (jaxtree.stream): same result as the in-memory search, validation."""

import os

import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import _scaling
from jaxtree import basis as B
from jaxtree import scoring, search, stream

from _shared import GREEDY
from conftest import paper_g


def _data(n=1500, p=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((n, p))
    y = paper_g(np.c_[x, rng.random((n, 4 - p))] if p < 4 else x) + 0.05 * rng.standard_normal(n)
    return x, y


BASIS = B.make_basis(hats=4, sines=3, cosines=3, powers=2, truncated_cubics=0)


def _both(x, y, dtype, refine, k=2, chunk=200, block=3, w=None, buckets=()):
    basis = BASIS or B.get_basis(None)
    cfg = search.Config(max_k=k, refine=refine, coordinate_sweeps=2, refine_steps=5, buckets=buckets)
    identity = _scaling.Scaling(np.zeros(x.shape[1]), np.ones(x.shape[1]), np.asarray(0.0),
                                np.asarray(1.0))
    reader = stream.ChunkReader(x, y, w, chunk_size=chunk).scaled(identity, dtype)
    rs = stream.fit(reader, basis, k, cfg, chunks_per_block=block)
    data = scoring.chunk(jnp.asarray(x, dtype), jnp.asarray(y, dtype),
                         None if w is None else jnp.asarray(w, dtype), chunk)
    rm = search.fit(data, basis, k, cfg)
    return rs, rm


# slow: [coordinate] restates the [None] case (streamed = in-memory search, weighted, float64)
# and test_stream_moves.py::test_streamed_backfit_makes_the_in_memory_moves (the streamed
# coordinate refinement = in memory, float64, padded chunks) on a coordinate step of its own
@pytest.mark.parametrize("refine", [None, pytest.param("coordinate", marks=pytest.mark.slow)])
def test_stream_equals_in_memory_float64(refine):
    x, y = _data()
    w = np.random.default_rng(1).random(x.shape[0])
    rs, rm = _both(x, y, np.float64, refine, w=w)
    assert [c["flat_index"] for c in rs.choices] == [c["flat_index"] for c in rm.choices]
    np.testing.assert_allclose(rs.history, rm.history, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(rs.program.weight), np.asarray(rm.program.weight),
                               rtol=1e-6, atol=1e-9)


@pytest.mark.slow  # ~15 s: the streamed = in memory oracle (test_stream_equals_in_memory_*)
# with row buckets, whose in-memory case test_search.py's test_row_buckets_* checks
def test_stream_row_buckets_equal_in_memory_and_plain():
    # The streamed scorer runs on the smallest bucket of rows that holds the leaves, with
    # the in-memory merges row by row: same choices, same history as both other fits.
    x, y = _data(seed=2)
    stream.score_block.clear_cache()
    rs, rm = _both(x, y, np.float64, None, k=5, buckets=scoring.default_buckets(6))
    assert stream.score_block._cache_size() == 1  # one compilation for every bucket
    plain, _ = _both(x, y, np.float64, None, k=5)
    for other in (rm, plain):
        assert [c["flat_index"] for c in rs.choices] == [c["flat_index"] for c in other.choices]
        np.testing.assert_allclose(rs.history, other.history, rtol=1e-12)


@pytest.mark.slow
def test_stream_equals_in_memory_optax_float64():
    x, y = _data()
    rs, rm = _both(x, y, np.float64, "optax")
    assert [c["flat_index"] for c in rs.choices] == [c["flat_index"] for c in rm.choices]
    np.testing.assert_allclose(rs.history, rm.history, rtol=1e-6)


# Slow (~5 s): test_estimator_memmap_equals_in_memory keeps the float32 streamed = in memory
# oracle (coordinate refinement), test_stream_equals_in_memory_float64 the kernels'.
@pytest.mark.slow
def test_stream_float32_same_choices():
    x, y = _data(seed=3)
    rs, rm = _both(x, y, np.float32, "coordinate")
    assert [c["flat_index"] for c in rs.choices] == [c["flat_index"] for c in rm.choices]
    np.testing.assert_allclose(rs.history, rm.history, rtol=1e-4)


def test_kernels_compile_once():
    x, y = _data(n=900)
    before = stream.score_block._cache_size()
    _both(x, y, np.float64, "coordinate", k=3, chunk=128, block=2)
    # one new entry per (dtype, shape) at most, never one per iteration
    assert stream.score_block._cache_size() - before <= 1
    assert stream.coordinate_block._cache_size() <= 4


def _memmap(tmp_path, a, dtype=np.float32, name="x"):
    m = np.memmap(os.path.join(tmp_path, name), dtype=dtype, mode="w+", shape=a.shape)
    m[:] = a
    m.flush()
    return m


def test_estimator_memmap_equals_in_memory(tmp_path):
    x, y = _data(n=1200, p=4)
    mx = _memmap(tmp_path, x)
    my = _memmap(tmp_path, y, name="y")
    kw = dict(k=2, refine="coordinate", chunk_size=256, basis=BASIS, **GREEDY)
    a = jaxtree.TreeRegressor(**kw).fit(np.asarray(mx), np.asarray(my))
    b = jaxtree.TreeRegressor(**kw).fit(mx, my)
    assert [c["flat_index"] for c in a.choices_] == [c["flat_index"] for c in b.choices_]
    np.testing.assert_allclose(b.predict(x), a.predict(x), rtol=1e-5, atol=1e-6)
    c = jaxtree.TreeRegressor(**kw).fit(stream.ChunkReader(mx, my, chunk_size=256), None)
    np.testing.assert_allclose(c.predict(x), b.predict(x), rtol=0, atol=0)


@pytest.mark.parametrize("make, match", [
    (lambda t, x, y: (_memmap(t, x.astype(np.int32), np.int32), y, 256), "floating dtype"),
    (lambda t, x, y: (_memmap(t, x[:, 0]), y, 256), "2-D"),
    (lambda t, x, y: (_memmap(t, x), y[:-1], 256), "y must have shape"),
    (lambda t, x, y: (_memmap(t, x), y, 0), "chunk_size"),
])
def test_stream_validation(tmp_path, make, match):
    x, y = _data(n=300)
    X, Y, chunk = make(tmp_path, x, y)
    with pytest.raises(ValueError, match=match):
        jaxtree.TreeRegressor(k=1, chunk_size=chunk).fit(X, Y)


def test_small_memmap_fits_with_a_chunk_larger_than_n(tmp_path):
    # scikit-learn's read-only memmap check fits 21 rows: a chunk_size above n means one
    # chunk of all rows, as in memory (the ChunkReader itself still refuses chunk_size > n).
    x, y = _data(n=300)
    mx = _memmap(tmp_path, x)
    a = jaxtree.TreeRegressor(k=1, chunk_size=10_000, refine=None, **GREEDY).fit(mx, y)
    b = jaxtree.TreeRegressor(k=1, chunk_size=10_000, refine=None, **GREEDY).fit(np.asarray(x), y)
    np.testing.assert_allclose(a.predict(x), b.predict(x), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="chunk_size"):
        stream.ChunkReader(mx, y, chunk_size=10_000)


def test_stream_nan_names_row(tmp_path):
    x, y = _data(n=300)
    x[123, 1] = np.nan
    with pytest.raises(ValueError, match="row 123"):
        jaxtree.TreeRegressor(k=1, chunk_size=100, missing="error").fit(_memmap(tmp_path, x), y)


def test_interrupted_stream_leaves_unfitted(tmp_path):
    x, y = _data(n=300)

    def cb(it, loss, info):
        if it == 1:
            raise KeyboardInterrupt

    est = jaxtree.TreeRegressor(k=2, refine=None, chunk_size=100, callback=cb, basis=BASIS)
    with pytest.raises(KeyboardInterrupt):
        est.fit(_memmap(tmp_path, x), y)
    assert not hasattr(est, "model_")


def _host_blocks(reader, cpb):
    return [tuple(np.asarray(a) for a in b) for b in stream._blocks(reader, cpb, lambda a: a)]


def test_read_ahead_gives_the_blocks_in_order(monkeypatch):
    """_blocks reads a ChunkReader's blocks ahead on threads: the same blocks, in the same
    order, as reading them one at a time (READ_AHEAD = 1), for any read-ahead depth, the
    last block padded; a subset reader (the held-out split) alike."""
    x, y = _data(n=2_350, p=3)
    w = np.random.default_rng(1).random(2_350)
    reader = stream.ChunkReader(x, y, w, chunk_size=100).scaled(stream.scaling(
        stream.ChunkReader(x, y, w, chunk_size=100)), np.float32)
    subset = reader.subset(np.arange(3, 2_350, 3))
    for r in (reader, subset):
        monkeypatch.setattr(stream, "READ_AHEAD", 1)
        one = _host_blocks(r, 3)
        assert [b[0].shape for b in one] == [(3, 100, 3)] * len(one)
        assert len(one) == -(-r.n // 300)
        assert np.array_equal(np.concatenate([b[1].ravel() for b in one])[: r.n],
                              np.concatenate([c[1] for c in r])[: r.n])
        for depth in (2, 4, 7):
            monkeypatch.setattr(stream, "READ_AHEAD", depth)
            again = _host_blocks(r, 3)
            assert len(again) == len(one)
            for a, b in zip(again, one):
                for u, v in zip(a, b):
                    np.testing.assert_array_equal(u, v)


class _Failing(np.ndarray):
    """A float array whose read of rows at or beyond ``fail_at`` raises (a broken disk)."""

    fail_at = 10**9

    def __getitem__(self, key):
        if isinstance(key, slice) and (key.stop or 0) > self.fail_at:
            raise OSError("read failed")
        return super().__getitem__(key)


def test_read_ahead_raises_a_failed_read_and_stops_early():
    """A block whose read fails raises from the pass (not lost on a thread); a pass left
    early drops the reads it started, and the next pass reads from the start again."""
    x, y = _data(n=1_000, p=3)
    bad = x.view(_Failing)
    bad.fail_at = 700
    reader = stream.ChunkReader(bad, y, chunk_size=100)
    with pytest.raises(OSError, match="read failed"):
        _host_blocks(reader, 2)
    good = stream.ChunkReader(x, y, chunk_size=100)
    gen = stream._blocks(good, 2, lambda a: a)
    first = next(gen)
    gen.close()  # leaves the pass with reads in flight
    again = next(stream._blocks(good, 2, lambda a: a))
    np.testing.assert_array_equal(first[0], again[0])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_read_ahead_in_a_forked_child():
    """A child forked after a streamed pass (multiprocessing's fork start, joblib) reads its
    own blocks: the parent's reading threads do not exist there, so the child makes its own
    pool (a stale pool would wait for threads that never run)."""
    import multiprocessing

    x, y = _data(n=900, p=3)
    reader = stream.ChunkReader(x, y, chunk_size=100)
    want = _host_blocks(reader, 2)  # the parent's pool is up
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        got = pool.apply_async(_child_blocks, (x, y)).get(timeout=60)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a[0], b[0])


def _child_blocks(x, y):
    return _host_blocks(stream.ChunkReader(x, y, chunk_size=100), 2)


def test_with_chunk_reads_the_same_rows_in_other_chunks():
    """ChunkReader.with_chunk (the fit reads a memmap with its row plan's chunk): the same
    rows, weights and targets in chunks of the new size; itself for its own size; a size
    outside 1..n refused as the constructor refuses it."""
    rng = np.random.default_rng(0)
    x, y, w = rng.normal(size=(25, 3)), rng.normal(size=25), rng.uniform(size=25)
    r = stream.ChunkReader(x, y, w, chunk_size=10)
    assert r.with_chunk(10) is r
    r7 = r.with_chunk(7)
    assert (r7.chunk_size, r7.n_chunks, r.chunk_size) == (7, 4, 10)
    chunks = list(r7.raw_chunks())
    assert [c[0].shape[0] for c in chunks] == [7, 7, 7, 4]
    for i, want in enumerate((x, y, w)):
        np.testing.assert_array_equal(np.concatenate([c[i] for c in chunks]), want)
    for bad, fix in ((0, "at least one row"), (26, "smaller chunk_size")):
        with pytest.raises(ValueError, match=f"chunk_size must be between 1.*{fix}"):
            r.with_chunk(bad)
