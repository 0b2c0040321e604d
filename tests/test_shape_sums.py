"""The shape stage's sums over rows, built from parts (seventy-fifth session, issue 29's
cost): the pairs' cross products read only the blocks the static pairs need
(:func:`jaxtree.shapes._cross_plan`), and the backfitting round's Grams of all rows are the
selection run's training part's plus the held-out rows' (:meth:`InMemory.split_grams`).
The oracles: the whole cross product's blocks, and one pass over all rows (float64)."""

import types

import jax
import numpy as np
import pytest

import jaxtree
from jaxtree import scoring
from jaxtree import shapes as shapes_
from jaxtree._fit import host_shapes, source
from jaxtree._fit import spec as spec_

PAIR_SETS = [
    None,  # every pair of the covariates
    ((0, 2), (4, 1), (3, 5), (2, 4)),  # a sparse set, one pair given larger index first
    ((5, 0),),
]


def _whole_cross(monkeypatch):
    monkeypatch.setattr(shapes_, "_cross_plan", lambda first, second: None)


@pytest.mark.parametrize("pairs", PAIR_SETS)
def test_cross_plan_reads_the_whole_cross_products_blocks(pairs, monkeypatch, x64):
    """:func:`jaxtree.shapes._rhs` and :func:`jaxtree.shapes.grams` with the plan's
    products equal the whole cross product's blocks (float64, fresh random rows and
    weights, under jit), for every pair set, a pair of reversed order among them (its block
    read transposed)."""
    rng = np.random.default_rng(len(pairs or ()))
    n, p = 3_000, 6
    x, y, w = rng.uniform(size=(n, p)), rng.normal(size=n), rng.uniform(size=n)
    data = scoring.chunk(x, y, w, chunk_size=1024)
    spec = shapes_.ShapeSpec(n1=8, n2=5, max_terms=5,
                             pairs=shapes_.pair_list(p) if pairs is None else pairs)
    assert shapes_._pair_axes(spec, p)[3]  # the pairs read a cross product
    fit = data.y * 0.3 + 0.1
    rhs = jax.jit(lambda d, f: shapes_._rhs(d, f, spec))
    grams = jax.jit(lambda d: shapes_.grams(d, spec))
    planned = rhs(data, fit), grams(data)
    _whole_cross(monkeypatch)
    whole = (jax.jit(lambda d, f: shapes_._rhs(d, f, spec))(data, fit),
             jax.jit(lambda d: shapes_.grams(d, spec))(data))
    for a, b in zip(jax.tree_util.tree_leaves(planned), jax.tree_util.tree_leaves(whole)):
        assert a.shape == b.shape
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)
    assert float(np.abs(np.asarray(planned[0][1])).max()) > 0  # the pairs' sums are read


def test_cross_plan_groups_the_upper_triangle():
    """The plan of every pair of 4 covariates reads 6 blocks in 3 products (not 16), and a
    pair given larger position first is read transposed."""
    first, second = np.array([0, 0, 0, 1, 1, 3]), np.array([1, 2, 3, 2, 3, 2])
    plan = shapes_._cross_plan(first, second)
    assert plan.groups == ((0, 1, 3), (1, 2, 3), (2, 3, 3))
    assert [r[2] for r in plan.reads] == [False] * 5 + [True]
    assert plan.reads[5] == (2, 0, True)  # (3, 2): the block (2, 3), transposed
    assert shapes_._cross_plan(None, None) is None


def _table(n, p, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p))
    y = (np.sin(3 * X[:, 1]) + 2 * X[:, 2] * X[:, p - 1] + 0.3 * np.cos(4 * X[:, 3])
         + 0.05 * rng.normal(size=n))
    return X, y, rng.uniform(0.5, 2.0, n)


@pytest.mark.parametrize("bucketed", [False, True])
def test_backfit_grams_from_the_split_are_all_rows_grams(bucketed, monkeypatch, x64):
    """The default estimator (k = 4, sample weights) with its backfitting round on the
    device (``HOST_BACKFIT`` off, as on tables where compiling does not dominate): the Grams
    the round receives from the split's parts equal one pass over all rows (float64, the
    chosen terms' spec), on the table's own columns (a static spec) and in the buckets (a
    :class:`jaxtree.shapes.SlotSpec`); the shape stage compiled too (the host stage's design
    is not the Grams the round takes)."""
    monkeypatch.setattr(spec_, "HOST_BACKFIT", False)
    monkeypatch.setattr(host_shapes, "MAX_BLOCK", 0)
    if not bucketed:
        monkeypatch.setattr(source.InMemory, "shape_bucket", property(lambda self: None))
    seen, real = [], source.InMemory.backfit

    def spy(self, program, terms, sspec, fit=None, grams=None):
        seen.append((grams, shapes_.grams_jit(self.data(shard=False), sspec), sspec))
        return real(self, program, terms, sspec, fit, grams)

    monkeypatch.setattr(source.InMemory, "backfit", spy)
    X, y, sw = _table(2_500, 5, 5)
    est = jaxtree.TreeRegressor(k=2).fit(X, y, sample_weight=sw)
    assert est.model_.shapes is not None and len(seen) == 1  # the round ran once
    got, ref, sspec = seen[0]
    assert isinstance(sspec, shapes_.SlotSpec) == bucketed
    assert got is not None  # the split's parts were summed
    live = shapes_.pair_index(sspec)[2]
    live = slice(None) if live is None else np.asarray(live)
    assert np.asarray(got[2]).shape[0] > 0 and np.any(live)  # pairs among the terms
    for i, (a, b) in enumerate(zip(got, ref)):
        a, b = np.asarray(a), np.asarray(b)
        if i in (2, 3):  # a bucketed spec's padding pair slots (no term) hold zeros
            np.testing.assert_array_equal(np.delete(a, np.arange(len(a))[live], 0), 0)
            a, b = a[live], b[live]
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-9)
    assert float(np.asarray(got[4])) == pytest.approx(float(sw.sum()), rel=1e-12)


def test_split_grams_declines_a_subsampled_training_part(monkeypatch):
    """Where the selection run trained on a subset of its rows (more than
    ``shapes.SEARCH_ROWS``), the split's parts are not all rows: no Grams from them."""
    X, y, _ = _table(300, 4, 1)
    src = source.InMemory.__new__(source.InMemory)
    src.xs, src.spec = X, types.SimpleNamespace(host_backfit=False)
    monkeypatch.setattr(shapes_, "SEARCH_ROWS", 100)
    assert src.split_grams(None, None, np.arange(60), None) is None  # 240 training rows


def test_right_hand_sides_skip_a_groups_other_members(monkeypatch, x64):
    """:func:`jaxtree.shapes._rhs` and :func:`jaxtree.shapes.grams` form main hats only of the
    covariates that can have a main shape (:func:`jaxtree.shapes._main_columns`: a group's
    other members are NaN in the view); their sums equal those over every column (float64,
    under jit): the same numbers on the others, NaN on the members where the count over
    every column put it, so no member's main shape is ever a candidate."""
    rng = np.random.default_rng(11)
    n, p = 3_000, 8
    x = rng.uniform(size=(n, p))
    level = rng.integers(0, 4, n)  # a categorical of three levels (0: none) in columns 2-4
    x[:, 2:5] = level[:, None] == np.arange(1, 4)[None, :]
    y, w = rng.normal(size=n), rng.uniform(size=n)
    data = scoring.chunk(x, y, w, chunk_size=1024)
    spec = shapes_.ShapeSpec(n1=8, n2=5, max_terms=5, groups=(("g", (2, 3, 4)),),
                             pairs=((0, 2), (1, 5), (6, 7)))
    assert shapes_._main_columns(spec, p).tolist() == [0, 1, 2, 5, 6, 7]
    fit = data.y * 0.3 + 0.1
    some = jax.jit(lambda d, f: shapes_._rhs(d, f, spec))(data, fit)
    some_grams = jax.jit(lambda d: shapes_.grams(d, spec))(data)
    monkeypatch.setattr(shapes_, "_main_columns", lambda spec, p: None)
    every = jax.jit(lambda d, f: shapes_._rhs(d, f, spec))(data, fit)
    every_grams = jax.jit(lambda d: shapes_.grams(d, spec))(data)
    for a, b in zip(some + some_grams, every + every_grams):  # NaN where the other has NaN
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)
    b1 = np.asarray(some[0])
    assert np.isnan(b1[[3, 4]]).all() and np.isfinite(np.delete(b1, [3, 4], 0)).all()
    assert np.abs(b1[2]).max() > 0  # the group's own term: its levels' codes
