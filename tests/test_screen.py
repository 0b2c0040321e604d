"""Screened insertions (:func:`jaxtree.scoring.screened_score`): every candidate scored on a
sample of the rows, the best few exactly on all rows. With every candidate kept the scores
are the full scorer's (float64); with the default few the choice on a clear signal is the
full scorer's and its weight, intercept and RSS are the exact all-row fit, not the
sample's; the ``+`` insertions of one sum are scored once (the first leaf's, as
:func:`jaxtree.scoring.select` takes it); the estimators screen where ``screen_rows`` says
and ``paper()`` never does."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import basis as basis_
from jaxtree import program as prog
from jaxtree import scoring

from _shared import choice_key

P = 5  # covariates of the test tables


def _data(rng, n=3000, chunk=256, dtype=np.float64, noise=0.3):
    x = rng.uniform(size=(n, P)).astype(dtype)
    y = (np.sin(3 * np.pi * x[:, 0]) + x[:, 1] * np.cos(2 * np.pi * x[:, 2])
         + noise * rng.standard_normal(n)).astype(dtype)
    w = rng.uniform(0.5, 2.0, n).astype(dtype)
    return x, y, w, scoring.chunk(x, y, w, chunk_size=chunk)


def _tree(shape, dtype=np.float64, max_k=6):
    """A tree from ``shape``: a list of (op, leaf rank to insert at, feature, basis, weight)."""
    pr = prog.empty_program(max_k, dtype)
    for op, rank, j, i, w in shape:
        leaves = np.flatnonzero(np.asarray(pr.op) == prog.LEAF)
        slot = int(leaves[rank]) if len(leaves) else 0
        pr = prog.insert(pr, slot, op, j, i, w)
    return pr


A, M = prog.ADD, prog.MUL
TREES = {
    "empty": [],
    "one leaf": [(A, 0, 0, 1, 0.5)],
    "a sum": [(A, 0, 0, 1, 0.5), (A, 0, 1, 3, 0.3), (A, 1, 2, 7, -0.2), (A, 0, 3, 2, 0.4)],
    "sum under a product": [(A, 0, 0, 1, 0.5), (M, 0, 1, 3, 0.3), (A, 1, 2, 7, -0.2),
                            (A, 1, 4, 9, 0.6), (A, 0, 3, 2, 0.4)],
}

_score = jax.jit(scoring.score, static_argnames=("basis", "max_leaves", "precision", "buckets"))
_screened = jax.jit(scoring.screened_score,
                    static_argnames=("basis", "max_leaves", "screen_rows", "candidates",
                                     "precision", "buckets"))


def test_screen_chunks_take_every_strideth_row():
    rng = np.random.default_rng(0)
    x, y, w, data = _data(rng, n=3000, chunk=256)
    sub = scoring.screen_chunks(data, 700)  # 12 chunks of 256 = 3,072 padded rows: stride 5
    assert sub.x.shape == (3, 256, P)
    stride = scoring.screen_stride(3072, 700)
    assert stride == 5
    flat = np.asarray(sub.x).reshape(-1, P)
    want = np.asarray(data.x).reshape(-1, P)[::stride]
    np.testing.assert_array_equal(flat[: len(want)], want)
    sw = np.asarray(sub.w).reshape(-1)
    np.testing.assert_array_equal(sw[: len(want)], np.asarray(data.w).reshape(-1)[::stride])
    assert not sw[len(want):].any()  # the padding adds nothing
    assert scoring.screen_chunks(data, 10**6) is data
    assert scoring.screen_chunks(data, 3072) is data


@pytest.mark.parametrize("name", list(TREES))
def test_every_candidate_kept_is_the_full_scorer(x64, name):
    rng = np.random.default_rng(1)
    _, _, _, data = _data(rng)
    basis = basis_.default_basis()
    pr = _tree(TREES[name])
    L = 7
    full = _score(pr, data, basis=basis, max_leaves=L)
    got = _screened(pr, data, basis=basis, max_leaves=L, screen_rows=500,
                    candidates=2 * L * P * basis.q)
    fs, gs = np.asarray(full.sse), np.asarray(got.sse)
    kept = np.isfinite(gs)
    assert kept.any()
    np.testing.assert_allclose(gs[kept], fs[kept], rtol=1e-10)
    np.testing.assert_allclose(np.asarray(got.weight)[kept], np.asarray(full.weight)[kept],
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(got.intercept)[kept],
                               np.asarray(full.intercept)[kept], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(float(got.rss), float(full.rss), rtol=1e-12)
    # What the screen leaves out of the full scorer's candidates: a + row that is an earlier
    # row's function (the same scores to rounding), never a * row or a distinct + row.
    dropped = np.flatnonzero((~kept & np.isfinite(fs)).any(axis=1))
    for r in dropped:
        assert r % 2 == 0, "a * insertion was dropped"
        assert any(np.allclose(fs[r], fs[e], rtol=1e-12) for e in range(0, r, 2)), r
    for r in range(0, fs.shape[0], 2):  # a kept + row differs from every earlier + row
        if kept[r].any():
            assert not any(np.allclose(fs[r], fs[e], rtol=1e-9) for e in range(0, r, 2)
                           if kept[e].any()), r
    a, b = scoring.select(full, basis.q), scoring.select(got, basis.q)
    assert int(a.flat_index) == int(b.flat_index)


def test_a_sum_is_scored_once():
    # every + insertion of a sum of four leaves is one function: the first leaf's is kept
    # (the three padding ranks are not leaves: their rows score +inf anyway)
    pr = _tree(TREES["a sum"])
    first = np.asarray(scoring._first_rows(pr, prog.leaf_slots(pr, 7)))
    assert first.tolist() == [True, True] + [False, True] * 3 + [True, True] * 3
    # (l0 * (l1 + l2 + l3)) + l4: the sum under the product is its own; l4 joins l0's sum
    pr = _tree(TREES["sum under a product"])
    slots = np.asarray(prog.leaf_slots(pr, 7))
    first = np.asarray(scoring._first_rows(pr, prog.leaf_slots(pr, 7)))
    assert first[1::2].all()  # every * insertion
    # leaves in slot order; recompute the expected groups from the multipliers themselves
    x = jnp.asarray(np.random.default_rng(2).uniform(size=(64, P)))
    k, _, _ = scoring.leaf_terms(pr, prog.leaf_slots(pr, 7), x, jnp.zeros(64),
                                 basis_.default_basis())
    k = np.asarray(k)
    for rank in range(int((slots >= 0).sum())):
        same_as_earlier = any(np.array_equal(k[rank], k[e]) for e in range(rank))
        assert first[2 * rank] == (not same_as_earlier), rank


def test_the_default_screen_chooses_the_full_fit(x64):
    rng = np.random.default_rng(3)
    _, _, _, data = _data(rng, n=4000, noise=0.1)
    basis = basis_.default_basis()
    L = 7
    for name in ("empty", "one leaf", "a sum"):
        pr = _tree(TREES[name])
        full = scoring.select(_score(pr, data, basis=basis, max_leaves=L), basis.q)
        got = scoring.select(_screened(pr, data, basis=basis, max_leaves=L, screen_rows=400),
                             basis.q)
        sample = scoring.select(_score(pr, scoring.screen_chunks(data, 400), basis=basis,
                                       max_leaves=L), basis.q)
        assert int(got.flat_index) == int(full.flat_index), name
        for field in ("weight", "intercept", "sse"):
            np.testing.assert_allclose(float(getattr(got, field)), float(getattr(full, field)),
                                       rtol=1e-9, err_msg=f"{name}: {field}")
        # the sample's own fit is another (so the checks above would see an SSE, intercept
        # or unclipped weight taken from the screen instead of the exact pass)
        assert not np.isclose(float(sample.sse), float(full.sse), rtol=1e-6), name
        assert not np.isclose(float(sample.intercept), float(full.intercept), rtol=1e-6), name
        if abs(float(full.weight)) < 1:
            assert not np.isclose(float(sample.weight), float(full.weight), rtol=1e-6), name


def test_screened_score_under_vmap_is_each_members(x64):
    rng = np.random.default_rng(4)
    basis = basis_.default_basis()
    members = [_data(rng, n=2048, chunk=256)[3] for _ in range(2)]
    stacked = jax.tree_util.tree_map(lambda *a: jnp.stack(a), *members)
    pr = _tree(TREES["sum under a product"])
    fn = functools.partial(scoring.screened_score, basis=basis, max_leaves=7, screen_rows=300)
    both = jax.jit(jax.vmap(fn, in_axes=(None, 0)))(pr, stacked)
    for i, d in enumerate(members):
        one = _screened(pr, d, basis=basis, max_leaves=7, screen_rows=300)
        np.testing.assert_allclose(np.asarray(both.sse[i]), np.asarray(one.sse), rtol=1e-10)
        np.testing.assert_allclose(np.asarray(both.weight[i]), np.asarray(one.weight),
                                   rtol=1e-9, atol=1e-12)


def test_screen_for_and_the_estimators_setting(monkeypatch):
    from jaxtree._fit import spec as spec_

    assert scoring.screen_for(scoring.SCREEN_MIN_ROWS - 1) == 0
    assert scoring.screen_for(scoring.SCREEN_MIN_ROWS) == scoring.SCREEN_MIN_ROWS // 4
    assert scoring.screen_for(4 * scoring.SCREEN_ROWS - 1) == scoring.SCREEN_MIN_ROWS // 4
    assert scoring.screen_for(4 * scoring.SCREEN_ROWS) == scoring.SCREEN_ROWS
    big = 4 * scoring.SCREEN_ROWS
    assert spec_.screen_rows({}, big, True, "jax", None) == scoring.SCREEN_ROWS
    assert spec_.screen_rows({"screen_rows": 0}, big, True, "jax", None) == 0
    assert spec_.screen_rows({"screen_rows": 500}, 1000, True, "jax", None) == 500
    assert spec_.screen_rows({}, big, False, "jax", None) == scoring.SCREEN_ROWS  # streamed
    assert spec_.screen_rows({"loss": "logistic"}, big, False, "jax", None) == 0
    assert spec_.screen_rows({}, big, True, "reference", None) == 0
    # a classifier's insertions: the same scorer on its Newton working data
    assert spec_.screen_rows({"loss": "logistic"}, big, True, "jax", None) == scoring.SCREEN_ROWS
    assert spec_.screen_rows({}, big, True, "jax", [jax.devices()[0]]) == 0  # sharded
    assert jaxtree.TreeRegressor.paper().get_params()["screen_rows"] == 0
    assert jaxtree.TreeClassifier().get_params()["screen_rows"] == "auto"
    for bad, err in (("x", TypeError), (-1, ValueError), (True, TypeError), (1.5, TypeError)):
        with pytest.raises(err, match="screen_rows must be 'auto' or an integer"):
            jaxtree.TreeRegressor(screen_rows=bad).fit(np.zeros((30, 2)), np.arange(30.0))
        with pytest.raises(err, match="screen_rows must be 'auto' or an integer"):
            jaxtree.TreeClassifier(screen_rows=bad).fit(np.zeros((30, 2)), np.arange(30) % 2)


def test_a_screened_fit_finds_the_full_fits_tree():
    # A clear signal on 6,000 rows, screened on 1,000 (the estimator's path: the search's
    # config, its insertion step, the refit): the same first insertions as scoring every
    # candidate; the last, among near ties (the best two 0.04% apart), may differ, within
    # a hair of the full scorer's loss (measured in BENCHMARKS.md, "Screened insertions").
    rng = np.random.default_rng(5)
    x = rng.uniform(size=(6000, 4))
    y = np.sin(3 * np.pi * x[:, 0]) + 2 * x[:, 1] * np.cos(2 * np.pi * x[:, 2]) \
        + 0.05 * rng.standard_normal(6000)
    kw = dict(k=3, search="greedy", shapes=0, validation_fraction=None)
    full = jaxtree.TreeRegressor(screen_rows=0, **kw).fit(x, y)
    got = jaxtree.TreeRegressor(screen_rows=1000, **kw).fit(x, y)
    assert choice_key(got.choices_)[:3] == choice_key(full.choices_)[:3]
    for a, b in zip(got.choices_, full.choices_):
        assert a["sse"] == pytest.approx(b["sse"], rel=1e-3)
    assert np.mean((got.predict(x) - y) ** 2) == pytest.approx(np.mean((full.predict(x) - y) ** 2),
                                                              rel=1e-2)


def test_a_screened_classifier_finds_the_full_fits_tree():
    # The classifier scores its insertions on the Newton working data with the same scorer:
    # screened on 1,000 of 6,000 rows, the same first insertions as scoring every candidate;
    # the last, among near ties (0.02% apart in the working units), within a hair of its loss.
    rng = np.random.default_rng(6)
    x = rng.uniform(size=(6000, 4))
    f = 3 * np.sin(3 * np.pi * x[:, 0]) + 4 * (x[:, 1] - 0.5) * np.cos(2 * np.pi * x[:, 2])
    y = (rng.uniform(size=6000) < 1 / (1 + np.exp(-f))).astype(int)
    kw = dict(k=3, search="greedy", shapes=0)
    full = jaxtree.TreeClassifier(screen_rows=0, **kw).fit(x, y)
    got = jaxtree.TreeClassifier(screen_rows=1000, **kw).fit(x, y)
    assert choice_key(got.choices_)[:3] == choice_key(full.choices_)[:3]
    for a, b in zip(got.choices_, full.choices_):
        assert a["sse"] == pytest.approx(b["sse"], rel=1e-3)

    def log_loss(est):
        p = est.predict_proba(x)[:, 1]
        return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))

    assert log_loss(got) == pytest.approx(log_loss(full), rel=1e-3)


def test_a_streamed_screened_fit_is_the_in_memory_one(tmp_path, monkeypatch):
    # The streamed step reads the in-memory screen's rows once and scores the picked
    # candidates exactly pass by pass: the same tree as the in-memory screened fit, on a
    # memmap and on a ChunkReader.
    from jaxtree import stream

    rng = np.random.default_rng(7)
    x = rng.uniform(size=(6000, 4)).astype(np.float32)
    y = (np.sin(3 * np.pi * x[:, 0]) + 2 * x[:, 1] * np.cos(2 * np.pi * x[:, 2])
         + 0.05 * rng.standard_normal(6000)).astype(np.float32)
    mx = np.memmap(tmp_path / "x.dat", dtype=np.float32, mode="w+", shape=x.shape)
    mx[:] = x
    mx.flush()
    calls = []
    block = stream.candidate_block
    monkeypatch.setattr(stream, "candidate_block", lambda *a, **k: calls.append(1) or block(*a, **k))
    kw = dict(k=4, search="greedy", shapes=0, validation_fraction=None, chunk_size=512,
              screen_rows=1000)
    a = jaxtree.TreeRegressor(**kw).fit(x, y)
    assert not calls
    b = jaxtree.TreeRegressor(**kw).fit(mx, y)
    assert calls  # the streamed step screened (its exact pass ran)
    c = jaxtree.TreeRegressor(**kw).fit(stream.ChunkReader(mx, y, chunk_size=512), None)
    assert choice_key(b.choices_) == choice_key(a.choices_)
    assert choice_key(c.choices_) == choice_key(a.choices_)
    np.testing.assert_allclose(b.predict(x), a.predict(x), rtol=1e-4, atol=1e-4)
    calls.clear()
    jaxtree.TreeRegressor(**dict(kw, screen_rows=0)).fit(mx, y)
    assert not calls
