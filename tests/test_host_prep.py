"""The host-side preparation of a fit (issue 25: on a GPU it was a third of a warm fit at
airline scale): column extremes in one contiguous pass, the encoding of a float matrix from
them, scaling in place, and chunks cast while they are padded. Each must give exactly the
values of the plain numpy expression it replaces."""

import numpy as np
import pytest

from jaxtree import _scaling as scaling_
from jaxtree import _threads
from jaxtree import scoring
from jaxtree._inputs import encoding as encoding_


@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (4097, 8), (1000, 1), (333, 5000)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_column_extremes_equal_min_and_max(rng, shape, dtype):
    a = rng.normal(size=shape).astype(dtype)
    if a.size > 4:
        a[rng.integers(0, shape[0], 2), rng.integers(0, shape[1], 2)] = np.nan
        a[0, -1] = np.inf
    for view in (a, np.asfortranarray(a), a[::2], a[:, ::2]):
        lo, hi = _threads.column_extremes(view)
        assert lo.dtype == view.dtype
        np.testing.assert_array_equal(lo, view.min(0))  # NaN where a column holds one
        np.testing.assert_array_equal(hi, view.max(0))


@pytest.mark.parametrize("missing", ["indicator", "error"])
def test_float_matrix_encoding_equals_the_column_loop(rng, missing):
    """The fast spec of a float matrix is the column-by-column loop's (an explicit empty
    ``categorical_features`` takes the loop): fills, indicators, names."""
    X = rng.normal(size=(500, 6))
    X[rng.integers(0, 500, 5), 1] = np.nan
    X[:, 4] = np.nan  # a column of NaN only: fill 0
    X[3, 5] = np.nan
    fast = encoding_.fit(X, missing=missing)
    loop = encoding_.fit(X, categorical_features=[], missing=missing)
    assert fast == loop
    assert [c.indicator for c in fast.columns] == [False, True, False, False, True, True] or (
        missing == "error")
    assert encoding_.fit(X[:, [0, 2, 3]]).is_identity


def test_scaling_in_place_and_extremes_match_the_float64_expressions(rng):
    X = rng.normal(size=(3001, 4)).astype(np.float32) * 100
    y = rng.normal(size=3001)
    sc, _ = scaling_.from_rows(X, y)
    x64 = X.astype(np.float64)
    np.testing.assert_array_equal(sc.x_min, x64.min(0))
    np.testing.assert_array_equal(sc.x_scale, 1.0 / (x64.max(0) - x64.min(0)))
    xs, ys = scaling_.scale_rows(sc, X, y)
    np.testing.assert_array_equal(xs, (x64 - sc.x_min) * sc.x_scale)
    np.testing.assert_array_equal(ys, (y - sc.y_center) / sc.y_scale)
    w = rng.uniform(size=3001)
    w[:10] = 0  # zero-weight rows do not count: the weighted path
    sw, _ = scaling_.from_rows(X, y, w)
    np.testing.assert_array_equal(sw.x_min, x64[10:].min(0))


@pytest.mark.parametrize("n, chunk, rows", [(5, 2048, None), (700, 256, None), (5000, 2048, 6500)])
def test_host_chunks_equal_cast_then_pad(rng, n, chunk, rows):
    x, y, w = rng.normal(size=(n, 3)), rng.normal(size=n), rng.uniform(size=n)
    for sw in (None, w):
        fused = scoring.chunk(x, y, sw, chunk, rows=rows, dtype=np.float32)
        plain = scoring._pad_chunks(np, x.astype(np.float32), y, sw, chunk, rows)
        for a, b in zip(fused[:3], plain):
            assert a.dtype == np.float32 and a.shape == b.shape
            np.testing.assert_array_equal(np.asarray(a), b)


@pytest.mark.parametrize("dtype, rows", [(np.float32, None), (np.float64, 900)])
def test_chunk_members_equals_vmapped_chunk_and_compiles_nothing(rng, dtype, rows):
    """scoring.chunk_members (fit_batch's chunks, made on the host) gives jax.vmap(chunk)'s
    arrays over the members cast to ``dtype``, bit for bit, weights shared or per member or
    none, and compiles nothing (the vmapped chunk compiled a cast, pads and reshapes)."""
    import jax
    import jax.numpy as jnp

    from jaxtree.debug import count_compilations

    B, n = 3, 700
    x, y = rng.normal(size=(B, n, 4)), rng.normal(size=(B, n))
    for w in (None, rng.uniform(size=n), rng.uniform(size=(B, n))):
        with count_compilations() as count:
            got = scoring.chunk_members(x, y, w, 256, rows=rows, dtype=dtype)
        assert count.compiles == 0
        wb = np.broadcast_to(np.ones(n) if w is None else w, (B, n))
        want = jax.vmap(lambda a, b, c: scoring.chunk(a, b, c, 256, rows=rows))(
            jnp.asarray(x, dtype), jnp.asarray(y, dtype), jnp.asarray(wb, dtype))
        for a, b in zip(got[:3], want[:3]):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
