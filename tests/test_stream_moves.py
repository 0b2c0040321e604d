"""The backfit moves and the beam on streamed data: the in-memory search's choices."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import basis as B
from jaxtree import scoring, search, simplify, stream

from conftest import paper_g

BASIS = B.make_basis(hats=4, sines=3, cosines=3, powers=2, truncated_cubics=0)
CHUNK = 64


def _scaled(n=600, seed=1):
    """Rows already in [0, 1] and a centred target (the streamed search's input)."""
    rng = np.random.default_rng(seed)
    x = rng.random((n, 4))
    y = paper_g(x) + 0.05 * rng.standard_normal(n)
    return x, (y - y.mean()) / np.abs(y - y.mean()).max()


def _keys(choices):
    return [(c["move"], c["flat_index"], c["feature"], c["basis"], c["feature2"], c["basis2"],
             c["replaced"]) for c in choices]


class _Chunks:
    """A bare re-iterable source of padded chunks (no ``n_chunks``: ``screen_rows`` counts)."""

    def __init__(self, x, y, m):
        self.x, self.y, self.m = x, y, m

    def __iter__(self):
        for s in range(0, self.x.shape[0], self.m):
            xc = np.zeros((self.m, self.x.shape[1]))
            yc, wc = np.zeros(self.m), np.zeros(self.m)
            e = min(s + self.m, self.x.shape[0])
            xc[: e - s], yc[: e - s], wc[: e - s] = self.x[s:e], self.y[s:e], 1.0
            yield xc, yc, wc


@pytest.mark.parametrize("rows", [100, 4096])
def test_screen_rows_are_the_in_memory_screen(rows):
    # The streamed screen reads exactly the rows search.screen_rows takes from the chunked
    # data (every stride-th padded row from the first; all chunks when none is skipped).
    x, y = _scaled(n=590)
    data = scoring.chunk(jnp.asarray(x), jnp.asarray(y), None, CHUNK)
    want = search.screen_rows(data, rows)
    for source in (stream.ChunkReader(x, y, None, chunk_size=CHUNK), _Chunks(x, y, CHUNK)):
        got = stream.screen_rows(source, rows, np.float64)
        for a, b in zip(got[:3], want[:3]):
            assert a.shape == b.shape
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_streamed_backfit_makes_the_in_memory_moves(refine="coordinate"):
    x, y = _scaled()
    cfg = search.search_config("backfit", 6, 4 * BASIS.q, refine=refine,
                               coordinate_sweeps=2)._replace(pair_rows=200)
    mem = search.fit(scoring.chunk(jnp.asarray(x), jnp.asarray(y), None, CHUNK), BASIS, 6, cfg)
    streamed = stream.fit(_Chunks(x, y, CHUNK), BASIS, 6, cfg, chunks_per_block=3)
    moves = [c["move"] for c in mem.choices]
    # The run exercises both moves, so the equality below is not the greedy path's.
    assert search.MOVE_PAIR in moves
    assert sum(c["replaced"] for c in mem.choices) > 0
    assert _keys(streamed.choices) == _keys(mem.choices)
    np.testing.assert_allclose(streamed.history, mem.history, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(streamed.program.weight),
                               np.asarray(mem.program.weight), rtol=1e-7, atol=1e-10)


@pytest.mark.slow  # ~20 s: the streamed = in memory oracle of the backfit test above on the
# beam (the same block passes; a beam of width 1 is the greedy search: test_beam.py)
def test_streamed_beam_is_the_in_memory_beam(refine="coordinate"):
    x, y = _scaled(seed=3)
    cfg = search.search_config("beam", 4, 4 * BASIS.q, refine=refine, coordinate_sweeps=2)
    mem = search.beam_fit(scoring.chunk(jnp.asarray(x), jnp.asarray(y), None, CHUNK),
                          BASIS, 4, cfg, width=3)
    streamed = stream.fit(stream.ChunkReader(x, y, None, chunk_size=CHUNK), BASIS, 4, cfg,
                          chunks_per_block=2, beam_width=3)
    assert [c["flat_index"] for c in streamed.choices] == [c["flat_index"] for c in mem.choices]
    np.testing.assert_allclose(streamed.history, mem.history, rtol=1e-9, atol=1e-12)
    for a, b in zip(jax.tree_util.tree_leaves(streamed.program),
                    jax.tree_util.tree_leaves(mem.program)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-7, atol=1e-10)
    with pytest.raises(ValueError, match="greedy Config"):
        stream.fit(stream.ChunkReader(x, y, None, chunk_size=CHUNK), BASIS, 2,
                   search.search_config("backfit", 2, 4 * BASIS.q), beam_width=2)


@pytest.mark.parametrize("how", ["greedy", pytest.param("backfit", marks=pytest.mark.slow),
                                 pytest.param("beam", marks=pytest.mark.slow)])
def test_memmap_fit_with_moves_and_held_out_size_equals_in_memory(tmp_path, how):
    # The whole estimator streamed: the held-out split read by index, the size path, the
    # chosen size and the refit on all rows, with each search's moves (the backfit moves
    # through a memmap fit also run in tests/test_sharding.py, on 4 devices).
    rng = np.random.default_rng(0)
    X = rng.random((500, 3))
    y = paper_g(np.c_[X, rng.random(500)]) + 0.05 * rng.standard_normal(500)
    path = tmp_path / "X.npy"
    np.save(path, X)
    kw = dict(k=4, basis=BASIS, refine="coordinate", chunk_size=100, search=how,
              beam_width=2, validation_fraction=0.25, shapes=0)
    mem = jaxtree.TreeRegressor(**kw).fit(X, y)
    mm = jaxtree.TreeRegressor(**kw).fit(np.load(path, mmap_mode="r"), y)
    assert mm.search_ == mem.search_ == how and mm.validation_fraction_ == 0.25
    assert mm.k_ == mem.k_ < 4  # a size was chosen, below the bound
    for a, b in zip(mm.path_, mem.path_):
        assert a["n_ops"] == b["n_ops"] and a["formula"] == b["formula"]
        np.testing.assert_allclose([a["train_mse"], a["val_mse"]], [b["train_mse"], b["val_mse"]],
                                   rtol=1e-9)
    assert len(mm.path_) == len(mem.path_) >= 4  # k + 1 iterations, or fewer after a pair
    assert _keys(mm.choices_) == _keys(mem.choices_)
    np.testing.assert_allclose(mm.predict(X), mem.predict(X), rtol=1e-9, atol=1e-9)


def test_subset_reader_reads_the_rows_chunked_as_in_memory():
    x, y = _scaled(n=300)
    w = np.random.default_rng(2).random(300)
    rows = np.sort(np.random.default_rng(3).choice(300, 130, replace=False))
    sub = stream.ChunkReader(x, y, w, chunk_size=CHUNK).subset(rows)
    want = scoring.chunk(jnp.asarray(x[rows]), jnp.asarray(y[rows]), jnp.asarray(w[rows]), CHUNK)
    got = [np.stack(a) for a in zip(*sub)]
    for a, b in zip(got, want[:3]):
        np.testing.assert_array_equal(a, np.asarray(b))
    assert sub.n == 130 and sub.n_chunks == 3


def test_streamed_backfit_refuses_too_many_columns(tmp_path):
    # Checked before any pass: p*q basis columns above the pair screen's bound.
    path = tmp_path / "wide.npy"
    np.save(path, np.zeros((4, 300)))
    with pytest.raises(ValueError, match="p\\*q"):
        jaxtree.TreeRegressor(search="backfit", validation_fraction=None).fit(
            np.load(path, mmap_mode="r"), np.zeros(4))


# coordinate: test_memmap_fit_with_pruning_equals_in_memory prunes with it through the estimator
@pytest.mark.parametrize("refine", [pytest.param("coordinate", marks=pytest.mark.slow), None])
def test_streamed_pruning_removes_the_in_memory_leaves(refine):
    # The deletion move streamed: same removals (leaf, cost) and the same re-fitted weights.
    rng = np.random.default_rng(0)
    x = rng.random((500, 3))
    y = 0.5 * x[:, 0] + 0.3 * np.sin(3 * x[:, 1]) + 0.01 * rng.standard_normal(500)
    y = (y - y.mean()) / np.abs(y - y.mean()).max()
    cfg = search.Config(max_k=6, refine=refine, coordinate_sweeps=2)
    data = scoring.chunk(jnp.asarray(x), jnp.asarray(y), None, CHUNK)
    tree = search.fit(data, BASIS, 6, cfg).program
    mem = simplify.prune(tree, data, BASIS, 1e-3, refine=refine, coordinate_sweeps=2)
    streamed = stream.prune(_Chunks(x, y, CHUNK), tree, BASIS, 1e-3, cfg, chunks_per_block=3)
    assert len(mem.removed) >= 1  # the tolerance removes something: not a vacuous equality
    assert [r[:2] for r in streamed.removed] == [r[:2] for r in mem.removed]
    np.testing.assert_allclose([r[2] for r in streamed.removed], [r[2] for r in mem.removed],
                               rtol=1e-9)
    np.testing.assert_allclose(np.asarray(streamed.program.weight), np.asarray(mem.program.weight),
                               rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="tol must be"):
        stream.prune(_Chunks(x, y, CHUNK), tree, BASIS, -1.0, cfg)


@pytest.mark.slow  # ~20 s: test_streamed_pruning_removes_the_in_memory_leaves's oracle
# through the estimator (whose memmap fit test_memmap_fit_with_moves_and_held_out_size_* runs)
def test_memmap_fit_with_pruning_equals_in_memory(tmp_path):
    rng = np.random.default_rng(4)
    X = rng.random((400, 3))
    y = 0.5 * X[:, 0] + 0.3 * np.sin(3 * X[:, 1]) + 0.01 * rng.standard_normal(400)
    path = tmp_path / "X.npy"
    np.save(path, X)
    kw = dict(k=4, basis=BASIS, refine="coordinate", chunk_size=100, prune_tol=1e-3,
              search="greedy", validation_fraction=None, shapes=0)
    mem = jaxtree.TreeRegressor(**kw).fit(X, y)
    mm = jaxtree.TreeRegressor(**kw).fit(np.load(path, mmap_mode="r"), y)
    assert mem.pruned_ and [r[:2] for r in mm.pruned_] == [r[:2] for r in mem.pruned_]
    np.testing.assert_allclose(mm.predict(X), mem.predict(X), rtol=1e-9, atol=1e-9)
