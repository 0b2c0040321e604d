"""Shape terms on data read block by block (issue 11: every move streamed too):
``shapes="auto"`` (the tree, then shapes) and ``shapes=S`` (shapes, then the tree).

A large in-memory matrix (``_fit_in_chunks``) and a memmap (``_fit_stream``) get the shape
terms an in-memory fit gets: the terms are chosen in memory on a bounded subset of rows
with the streamed tree's residual, then backfitted on all rows and the tree's weights refined
given them, pass by pass (``jaxtree.stream.refit_shapes``, ``refine_given_shapes``). The
thresholds are lowered so that small data takes those paths.

What is exact: the rows of the selection run (the in-memory split while its held-out part
has at most ``SEARCH_ROWS`` rows) and so the terms chosen; and with no term accepted the model
is the streamed tree's, bit for bit. What is close: the tree (float sums in another order,
tests/test_memory.py), hence the residual, the backfitted coefficients and predictions.

``shapes=S`` streamed: the terms searched in memory on the in-memory fit's rows (all rows up
to ``SEARCH_ROWS``, else its subset), backfitted on all rows pass by pass, the tree searched
on their partial residual (recomputed in every pass), then the backfitting round: the
in-memory fit's choices, and in float64 its model to rounding.
"""

import os
import tempfile

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import basis as B
from jaxtree import _scaling
from jaxtree._fit import select, source
from jaxtree._fit import spec as E
from jaxtree import program as prog
from jaxtree import scoring, search, stream
from jaxtree import shapes as S

from _shared import fitted_values as _fitted

BASIS = B.make_basis(hats=4, sines=3, cosines=3, powers=2, truncated_cubics=0)
KW = dict(k=2, basis=BASIS, chunk_size=256, shape_knots=(6, 4), search="greedy",
          validation_fraction=None)


def _table(seed=0, n=1500):
    """A tree-friendly part plus a planted 2-D bump in ``(x2, x3)`` the tree cannot build."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 4))
    bump = np.exp(-((X[:, 1] - 0.4) ** 2 + (X[:, 2] - 0.6) ** 2) / 0.05)
    y = 3 * np.sin(3 * X[:, 0]) + 2 * bump + np.abs(X[:, 3] - 0.3) + 0.05 * rng.standard_normal(n)
    return X.astype(np.float32), y.astype(np.float32)


@pytest.fixture
def chunked(monkeypatch):
    """``fit(X, y, **kw) -> estimator`` through ``_fit_in_chunks`` (checked), with no
    whole-array copy (``_data`` fails)."""

    def fit(X, y, **kw):
        calls = []
        with monkeypatch.context() as m:
            m.setattr(E, "CHUNKED_FIT_MIN_VALUES", 1)
            orig = source.Streamed.__init__  # the rows read chunk by chunk ...
            m.setattr(source.Streamed, "__init__",
                      lambda self, *a, **k: calls.append(1) or orig(self, *a, **k))
            m.setattr(source.InMemory, "__init__",  # ... and never held whole
                      lambda *a, **k: pytest.fail("whole-array copy"))
            est = jaxtree.TreeRegressor(**{**KW, **kw}).fit(X, y)
        assert calls == [1]
        return est

    return fit


def _terms(est):
    return [r["terms"] for r in est.shape_path_]


def test_chunked_fit_adds_shapes_only_where_held_out_rows_support_them(chunked, monkeypatch):
    # SEARCH_ROWS below the held-out share (300 of 1,500 rows): the selection run reads
    # SEARCH_ROWS training and SEARCH_ROWS held-out rows, never all rows.
    monkeypatch.setattr(S, "SEARCH_ROWS", 250)
    taken = []
    orig = stream.ChunkReader.take
    monkeypatch.setattr(stream.ChunkReader, "take",
                        lambda self, rows: taken.append(len(rows)) or orig(self, rows))
    X, y = _table()
    Xt, yt = _table(1, 1000)
    auto = chunked(X, y, refine="coordinate")
    assert taken == [250, 250]
    tree = chunked(X, y, refine="coordinate", shapes=0)
    n_shapes = int(auto.model_.shapes.n_terms)
    assert n_shapes >= 2 and "f(x2, x3)" in auto.formula()
    assert auto.choices_[:3] == tree.choices_  # the tree is searched as without shapes
    assert [c["move"] for c in auto.choices_[3:]] == [search.MOVE_SHAPE] * n_shapes
    assert not auto.status_  # running out of candidates (p = 4) is not the model's status
    # the final history entry is the model's training MSE on all rows
    np.testing.assert_allclose(auto.history_[-1], np.mean((_fitted(auto, X) - y) ** 2), rtol=1e-3)
    err = lambda m: np.sqrt(np.mean((m.predict(Xt) - yt) ** 2))  # noqa: E731
    assert err(auto) < 0.5 * err(tree)

    # a truth of the tree's form: no shape accepted, the model is the tree's, bit for bit
    rng = np.random.default_rng(3)
    X = rng.random((1500, 4)).astype(np.float32)
    y = (0.5 * np.sin(np.pi * X[:, 0]) - 0.5 * np.cos(np.pi * X[:, 2])
         + 0.01 * rng.standard_normal(1500)).astype(np.float32)
    auto = chunked(X, y, refine="coordinate")
    tree = chunked(X, y, refine="coordinate", shapes=0)
    assert auto.model_.shapes is None and auto.shape_path_ is not None
    assert tree.shape_path_ is None
    np.testing.assert_array_equal(auto.predict(X), tree.predict(X))
    np.testing.assert_array_equal(auto.history_, tree.history_)
    assert auto.choices_ == tree.choices_ and auto.formula() == tree.formula()


def test_shape_rows_are_the_in_memory_split_while_it_is_bounded(monkeypatch):
    monkeypatch.setattr(S, "SEARCH_ROWS", 1000)  # held-out share 300 <= 1000: the same rows
    train, held = select.shape_rows(1500, 0.2, 7)
    split = select.split(1500, 0.2, 7)
    np.testing.assert_array_equal(held, split[1])
    np.testing.assert_array_equal(train, split[0][select.subsample(1200, 1000, 7)])
    monkeypatch.setattr(S, "SEARCH_ROWS", 200)  # beyond: SEARCH_ROWS of each, drawn directly
    train, held = select.shape_rows(1500, 0.2, None)
    assert len(train) == len(held) == 200 and not np.intersect1d(train, held).size
    assert np.all(np.diff(train) > 0) and np.all(np.diff(held) > 0)
    assert 0 <= min(train[0], held[0]) and max(train[-1], held[-1]) < 1500
    again = select.shape_rows(1500, 0.2, None)
    np.testing.assert_array_equal(again[0], train)
    np.testing.assert_array_equal(again[1], held)
    train, held = select.shape_rows(10**9, 0.2, 0)  # O(SEARCH_ROWS) memory at any n
    assert len(train) == len(held) == 200 and train[-1] < 10**9


@pytest.mark.slow
def test_chunked_fit_gets_the_in_memory_shape_terms(chunked):
    # Exact: the selection run's rows (the in-memory split) and so the path of terms, the
    # count and the choices. Close: the tree (float sums in another order), the backfitting
    # passes, the predictions.
    X, y = _table()
    mem = jaxtree.TreeRegressor(**KW, refine="coordinate").fit(X, y)
    auto = chunked(X, y, refine="coordinate")
    n_shapes = int(auto.model_.shapes.n_terms)
    assert n_shapes >= 2
    assert _terms(auto) == _terms(mem) and int(mem.model_.shapes.n_terms) == n_shapes
    assert [(c["move"], c["feature"], c["feature2"]) for c in auto.choices_] == \
        [(c["move"], c["feature"], c["feature2"]) for c in mem.choices_]
    np.testing.assert_allclose(auto.history_, mem.history_, rtol=1e-4)
    np.testing.assert_allclose([r["val_mse"] for r in auto.shape_path_],
                               [r["val_mse"] for r in mem.shape_path_], rtol=1e-4)
    np.testing.assert_allclose(auto.predict(X), mem.predict(X), atol=1e-4 * np.ptp(y))


@pytest.mark.slow
def test_streamed_shapes_refine_the_tree_and_memmap_equals_chunked(chunked):
    # The default refinement: the tree's weights refined given the shapes (L-BFGS with the
    # shapes' values a per-row offset of every streamed pass). A memmap takes _fit_stream,
    # the same reader path, so it gives the chunked fit's model exactly.
    X, y = _table(2)
    auto = chunked(X, y)
    assert int(auto.model_.shapes.n_terms) >= 2
    mem = jaxtree.TreeRegressor(**KW).fit(X, y)
    assert _terms(auto) == _terms(mem)
    np.testing.assert_allclose(auto.predict(X), mem.predict(X), atol=2e-3 * np.ptp(y))
    np.testing.assert_allclose(auto.history_[-1], np.mean((_fitted(auto, X) - y) ** 2), rtol=1e-3)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "x.f32")
        mx = np.memmap(path, np.float32, "w+", shape=X.shape)
        mx[:] = X
        mx.flush()
        est = jaxtree.TreeRegressor(**KW).fit(np.memmap(path, np.float32, "r", shape=X.shape), y)
        np.testing.assert_array_equal(est.predict(X), auto.predict(X))
        assert est.formula() == auto.formula()
        del mx


def test_refit_shapes_streamed_equals_in_memory_sweep():
    X, y = _table(n=700)
    sc, _ = _scaling.from_rows(X, y)
    xs, ys = _scaling.scale_rows(sc, X, y)
    data = scoring.chunk(jnp.asarray(xs, jnp.float32), jnp.asarray(ys, jnp.float32),
                         chunk_size=64)
    # three chosen terms, f(x1), f(x2, x3), f(x4), as a search on a subset leaves them
    spec = S.ShapeSpec(n1=6, n2=4, max_terms=4, pairs=((1, 2),))
    rng = np.random.default_rng(0)
    found = S.init(4, spec)._replace(
        main=jnp.asarray(rng.normal(0, .1, (4, 6)), jnp.float32),
        main_on=jnp.asarray([True, False, False, True]),
        pair=jnp.asarray(rng.normal(0, .1, (1, 16)), jnp.float32), pair_on=jnp.asarray([True]),
        order=jnp.asarray([0, 4, 3, -1], jnp.int32), n_terms=jnp.asarray(3, jnp.int32))
    reader = stream.ChunkReader(X, y, chunk_size=64).scaled(sc, np.float32)
    program = prog.from_arrays(  # 0.5 phi_5(x1) + 0.3 phi_1(x3) - 0.1
        [prog.ADD, prog.LEAF, prog.LEAF], [1, -1, -1], [2, -1, -1], [-1, 0, 2], [-1, 5, 1],
        [0.0, 0.5, 0.3], -0.1, 3, dtype=jnp.float32)
    t_fit = select.tree_values(program, data.x, BASIS)
    want = S.refit(found, data._replace(y=data.y - t_fit), spec, 2)
    got, gr = stream.refit_shapes(reader, program, BASIS, found, spec, sweeps=2,
                                  chunks_per_block=3)
    np.testing.assert_allclose(np.asarray(gr[0]), np.asarray(S.grams_jit(data, spec)[0]),
                               rtol=1e-5, atol=1e-3)
    # the fitted values (a main shape and the intercept trade a constant: compare values)
    fit = jax.vmap(lambda xb: S.evaluate(got, xb, spec))(data.x)
    np.testing.assert_allclose(np.asarray(fit), np.asarray(want.fit), atol=1e-5)
    assert np.asarray(got.order).tolist() == [0, 4, 3, -1] and int(got.n_terms) == 3
    # the loss given these shapes, streamed, equals the in-memory MSE
    _, mse = stream.refine_given_shapes(reader, program, BASIS, got, spec, steps=0)
    np.testing.assert_allclose(float(mse), float(select.held_out_mse(
        program, data._replace(y=data.y - fit), BASIS)), rtol=1e-5)


def _float64_memmap(tmp_path, X):
    mm = np.memmap(tmp_path / "x.f64", np.float64, "w+", shape=X.shape)
    mm[:] = X
    mm.flush()
    return np.memmap(tmp_path / "x.f64", np.float64, "r", shape=X.shape)


def _moves(est):
    return [(c["move"], c["feature"], c["feature2"], c["basis"]) for c in est.choices_]


@pytest.mark.slow  # ~18 s; test_chunked_fit_adds_shapes_only_where_held_out_rows_support_them
# keeps the streamed shape stage against the in-memory one in the default suite
def test_memmap_fit_with_fixed_shapes_equals_the_in_memory_fit(tmp_path, x64):
    # shapes=S streamed: the terms searched on all rows (n <= SEARCH_ROWS, as in memory),
    # backfitted on all rows by passes, the tree searched on their partial residual, then
    # the backfitting round. In float64 the in-memory model to rounding: the same terms,
    # tree and choices, shape values and predictions to 1e-8.
    X, y = (a.astype(np.float64) for a in _table(n=1000))
    kw = dict(KW, shapes=2, refine="coordinate")
    mem = jaxtree.TreeRegressor(**kw).fit(X, y)
    est = jaxtree.TreeRegressor(**kw).fit(_float64_memmap(tmp_path, X), y)
    assert est.model_.x_min.dtype == np.float64 and int(est.model_.shapes.n_terms) == 2
    assert _moves(est) == _moves(mem)
    assert est.formula() == mem.formula()
    got, want = est.shape_terms(), mem.shape_terms()
    assert [t["features"] for t in got] == [t["features"] for t in want]
    for a, b in zip(got, want):
        np.testing.assert_allclose(a["values"], b["values"], rtol=0, atol=1e-8)
    np.testing.assert_allclose(est.predict(X), mem.predict(X), rtol=0, atol=1e-8)
    np.testing.assert_allclose(est.history_, mem.history_, rtol=1e-8)
    # the history is the fitted function's loss: predict without its clip to the targets' range
    f = np.asarray(jaxtree.predict(est.model_, X, clip=False), np.float64)
    np.testing.assert_allclose(est.history_[-1], np.mean((f - y) ** 2), rtol=1e-8)


@pytest.mark.slow  # ~15 s: shapes=S streamed keeps the oracle of
# test_memmap_fit_with_fixed_shapes_equals_the_in_memory_fit, the subset of rows read that of
# test_chunked_fit_adds_shapes_only_where_held_out_rows_support_them
def test_streamed_fixed_shapes_take_the_count_given(chunked, monkeypatch, x64):
    # A large in-memory matrix read in blocks (no whole-array copy: the fixture). Exactly S
    # shape terms, then the tree of k operations; with SEARCH_ROWS below n the terms are
    # searched on the in-memory fit's subset of rows, the only rows read into memory.
    monkeypatch.setattr(S, "SEARCH_ROWS", 700)
    taken = []
    orig = stream.ChunkReader.take
    monkeypatch.setattr(stream.ChunkReader, "take",
                        lambda self, rows: taken.append(np.asarray(rows)) or orig(self, rows))
    X, y = (a.astype(np.float64) for a in _table(n=1000))
    one = chunked(X, y, shapes=1, refine="coordinate")
    two = chunked(X, y, shapes=2, refine="coordinate")
    assert len(taken) == 2
    for rows in taken:
        np.testing.assert_array_equal(rows, select.subsample(1000, 700, None))
    assert [int(m.model_.shapes.n_terms) for m in (one, two)] == [1, 2]
    for est, n_shapes in ((one, 1), (two, 2)):
        assert [c["move"] for c in est.choices_] == \
            [search.MOVE_SHAPE] * n_shapes + [search.MOVE_INSERT] * 3  # a leaf, k = 2 ops
        assert len(est.shape_terms()) == n_shapes and est.shape_path_ is None
    assert _moves(one)[0] == _moves(two)[0]  # greedy: the first term is the same
    # the second term lowers the training loss, and so does the final model's
    assert two.history_[1] < two.history_[0] and two.history_[-1] < one.history_[-1]
