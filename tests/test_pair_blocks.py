"""The pair screen's covariate pre-screen (``moves.score_pairs(blocks=K)``) against float64
oracles: the exhaustive scores where the blocks hold every pair, a numpy screen and brute
force restricted to its pairs, a planted interaction among many noise covariates, the rule
that turns it on, and the streamed search and ``fit_batch`` making the in-memory fits' moves."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtree import basis as B
from jaxtree import moves
from jaxtree import program as prog
from jaxtree import scoring, search, stream

SMALL = B.make_basis(hats=3, sines=2, cosines=2, powers=2, truncated_cubics=2)
SIN2 = SMALL.names.index("sin(2πx)")
# One data shape per kernel (N rows of P covariates in chunks of CHUNK), so each compiles once.
N, P, CHUNK, MAX_K = 160, 9, 64, 4

pairs_jit = jax.jit(moves.score_pairs, static_argnames=("basis", "max_rows", "blocks"))

pytestmark = pytest.mark.usefixtures("x64")  # conftest's: float64 oracles throughout


def _problem(seed):
    """Uniform covariates (the last one NaN, as a padding column is), a planted product of
    covariates 1 and 4 over a main effect, sample weights, a one-leaf program, and an
    ``allowed`` mask that drops a few columns, the planted pair's second factor among them
    (the best pair then has to be another)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(N, P))
    x[:, -1] = np.nan
    y = (np.sin(2 * np.pi * x[:, 1]) * np.cos(np.pi * x[:, 4]) + 0.6 * x[:, 2]
         + 0.3 * rng.standard_normal(N))
    sw = rng.uniform(0.5, 2.0, size=N)
    data = scoring.chunk(jnp.asarray(x), jnp.asarray(y), jnp.asarray(sw), chunk_size=CHUNK)
    allowed = np.ones(P * SMALL.q, bool)
    allowed[rng.choice((P - 1) * SMALL.q, 6, replace=False)] = False
    allowed[4 * SMALL.q + SMALL.names.index("cos(πx)")] = False  # the planted pair's factor
    data = data._replace(allowed=jnp.asarray(allowed))
    program = prog.insert(prog.empty_program(MAX_K, jnp.float64), 0, prog.ADD, 2,
                          SMALL.names.index("x"), 0.5)
    return x, y, sw, data, program._replace(intercept=jnp.asarray(0.1))


@pytest.mark.parametrize("kept", [False, True])
def test_blocks_holding_every_pair_are_the_exhaustive_scores(kept):
    # K >= p*p keeps every covariate pair: the blocked scorer must return the exhaustive
    # scorer's choice, SSE, weight and intercept for each row (the '+' and '*' rows of the
    # leaf), the NaN column and the disallowed columns never chosen. Catches a swapped
    # block (j, l), a block's columns read from the wrong covariate, or a mask of the
    # disallowed columns on one factor only (the data hold no exact ties, so the tie rule
    # itself is not exercised here).
    # ``kept``: the basis values kept with the data (small tables' fits), read in the
    # function-major order the design has (compared with the scores from ``x``).
    _, _, _, data, program = _problem(0)
    full = pairs_jit(program, data, SMALL, max_rows=2)
    if kept:
        data = scoring.cache_basis(data, SMALL)
    blocked = pairs_jit(program, data, SMALL, max_rows=2, blocks=P * P)
    assert np.isfinite(np.asarray(full.sse)[:2]).all()
    for f in ("col_a", "col_b", "leaf_slots"):
        np.testing.assert_array_equal(np.asarray(getattr(blocked, f)),
                                      np.asarray(getattr(full, f)), err_msg=f)
    for f in ("sse", "weight", "intercept", "rss"):
        np.testing.assert_allclose(np.asarray(getattr(blocked, f)),
                                   np.asarray(getattr(full, f)), rtol=1e-10, err_msg=f)
    q = SMALL.q
    assert (np.asarray(full.col_b)[:2] // q < P - 1).all()


def _brute(x, y, sw, program, op):
    """Every column pair's clipped least-squares fit on the row ``op`` of the program's
    only leaf, in float64 numpy: ``(sse (pq, pq), u, r, e)``."""
    phi = np.asarray(SMALL.evaluate(jnp.asarray(x)))  # (n, p, q)
    n, p, q = phi.shape
    phi = phi.reshape(n, p * q)
    c = float(program.weight[0]) * phi[:, 2 * q + SMALL.names.index("x")]
    e = y - float(program.intercept) - c
    u, r = (np.ones(n), e) if op == 0 else (c, e + c)  # k = 1 at the root leaf
    rc = r - np.sum(sw * r) / np.sum(sw)
    s = u[:, None, None] * phi[:, :, None] * phi[:, None, :]
    sc = s - np.einsum("n,nab->ab", sw, s) / np.sum(sw)
    mss = np.einsum("n,nab->ab", sw, sc * sc)
    mrs = np.einsum("n,n,nab->ab", sw, rc, sc)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.clip(mrs / mss, -1, 1)
    sse = np.sum(sw * rc * rc) - 2 * w * mrs + w * w * mss
    return sse, u, r, e


def _numpy_screen(x, sw, u, r, allowed, blocks):
    """The covariate pairs the pre-screen keeps, in numpy: each pair's largest unclipped
    gain ``mrs^2 / mss`` over the products of its centred coarse functions."""
    width = moves.PAIR_SCREEN_WIDTH
    ok_x = ~np.isnan(x).any(axis=0)
    z = np.cos(np.pi * np.nan_to_num(x)[:, :, None] * np.arange(1, width + 1))  # (n, p, w)
    z = z - np.einsum("n,npw->pw", sw, z) / np.sum(sw)
    rc = r - np.sum(sw * r) / np.sum(sw)
    p = x.shape[1]
    gains = np.full((p, p), -1.0)
    for j in range(p):
        for l in range(j, p):
            s = u[:, None, None] * z[:, j, :, None] * z[:, l, None, :]
            sc = s - np.einsum("n,nab->ab", sw, s) / np.sum(sw)
            g = np.einsum("n,n,nab->ab", sw, rc, sc) ** 2 / np.einsum("n,nab->ab", sw, sc * sc)
            if ok_x[j] and ok_x[l] and allowed[j].any() and allowed[l].any():
                gains[j, l] = g.max()
    order = np.argsort(-gains.reshape(-1), kind="stable")[:blocks]
    return {(int(i // p), int(i % p)) for i in order if gains.reshape(-1)[i] >= 0}


def test_the_kept_pairs_are_a_numpy_screens():
    # Each row keeps the K covariate pairs whose best product of centred cos(k pi x)
    # (k = 1..6) gains most, with the sample weights and the row's own regressor multiplier
    # (the leaf's value on the '*' row). Catches an uncentred screen (the strong main effect
    # of covariate 2 then fills the blocks), the gains reduced along the wrong axes, the
    # weights or the multiplier left out, and a screen that keeps the first K pairs.
    x, y, sw, data, program = _problem(1)
    blocks = 5
    j, l, ok = jax.jit(moves.pair_blocks, static_argnames=("basis", "max_rows", "blocks"))(
        program, data, SMALL, max_rows=2, blocks=blocks)
    allowed = np.asarray(data.allowed).reshape(P, SMALL.q)
    for op in (0, 1):
        _, u, r, _ = _brute(x, y, sw, program, op)
        want = _numpy_screen(x, sw, u, r, allowed, blocks)
        assert np.asarray(ok)[op].all()
        assert set(zip(np.asarray(j)[op].tolist(), np.asarray(l)[op].tolist())) == want
        assert (1, 4) in want  # the planted pair survives the screen
    assert set(zip(np.asarray(j)[0].tolist(), np.asarray(l)[0].tolist())) != \
        set(zip(np.asarray(j)[1].tolist(), np.asarray(l)[1].tolist()))


@pytest.mark.parametrize("op", [0, 1])
def test_blocks_are_brute_force_over_the_pairs_a_numpy_screen_keeps(op):
    # With K = 4 of the 36 valid covariate pairs kept, the row's answer must be the best
    # column pair among the pairs that the numpy screen keeps, its SSE the brute-force
    # refit's, the disallowed columns never chosen.
    x, y, sw, data, program = _problem(2)
    blocks = 4
    got = pairs_jit(program, data, SMALL, max_rows=2, blocks=blocks)
    sse, u, r, e = _brute(x, y, sw, program, op)
    q = SMALL.q
    kept = _numpy_screen(x, sw, u, r, np.asarray(data.allowed).reshape(P, q), blocks)
    assert len(kept) == blocks
    a_ok = np.asarray(data.allowed)
    mask = np.zeros_like(sse, bool)
    for j, l in kept:
        block = np.zeros((P, q, P, q), bool)
        block[j, :, l, :] = True
        mask |= block.reshape(P * q, P * q)
    mask &= np.triu(np.ones_like(mask)) & a_ok[:, None] & a_ok[None, :] & np.isfinite(sse)
    want = np.where(mask, sse, np.inf)
    a, b = np.unravel_index(np.argmin(want), want.shape)
    assert (int(got.col_a[op]), int(got.col_b[op])) == (a, b)
    np.testing.assert_allclose(float(got.sse[op]), want[a, b], rtol=1e-9)


def test_blocks_find_a_planted_interaction_among_many_noise_covariates():
    # 40 covariates (820 pairs), 8 blocks: the pure product sin(2 pi x7) sin(2 pi x29),
    # no single leaf's signal, is found from the empty tree as the exhaustive screen finds it.
    rng = np.random.default_rng(3)
    n, p = 400, 40
    x = rng.uniform(size=(n, p))
    y = np.sin(2 * np.pi * x[:, 7]) * np.sin(2 * np.pi * x[:, 29]) + 0.05 * rng.standard_normal(n)
    data = scoring.chunk(jnp.asarray(x), jnp.asarray(y), None, chunk_size=128)
    empty = prog.empty_program(MAX_K, jnp.float64)
    got = jax.jit(moves.score_pairs, static_argnames=("basis", "max_rows", "blocks"))(
        empty, data, SMALL, max_rows=1, blocks=8)
    q = SMALL.q
    pair = {(int(got.col_a[0]) // q, int(got.col_a[0]) % q),
            (int(got.col_b[0]) // q, int(got.col_b[0]) % q)}
    assert pair == {(7, SIN2), (29, SIN2)}
    assert float(got.sse[0]) < 0.01 * float(got.rss)


def test_the_rule_turns_the_pre_screen_on_above_the_exhaustive_floor():
    # Exhaustive while PAIR_MIN_ROWS rows keep the screen within PAIR_WORK (p*q <= 2048),
    # PAIR_BLOCKS covariate pairs above; never for the greedy search.
    assert search.pair_screen_blocks(0) == 0
    assert search.pair_screen_blocks(8 * 40) == 0
    assert search.pair_screen_blocks(51 * 40) == 0  # 2040 columns: at the floor's edge
    assert search.pair_screen_blocks(52 * 40) == search.PAIR_BLOCKS == 128
    assert search.PAIR_MIN_ROWS * 2048 ** 2 == search.PAIR_WORK  # the edge is p*q = 2048
    assert search.search_config("backfit", 5, 100 * 40).pair_blocks == 128
    assert search.search_config("backfit", 5, 20 * 40).pair_blocks == 0
    assert search.search_config("greedy", 5, 100 * 40).pair_blocks == 0
    data = _problem(0)[3]
    with pytest.raises(ValueError, match="blocks must be >= 0"):
        moves.score_pairs(prog.empty_program(2, jnp.float64), data, SMALL, max_rows=1,
                          blocks=-1)
    with pytest.raises(ValueError, match="blocks must be >= 1"):
        moves.pair_blocks(prog.empty_program(2, jnp.float64), data, SMALL, max_rows=1,
                          blocks=0)
    with pytest.raises(TypeError, match="blocks must be a Python int"):
        moves.score_pairs(prog.empty_program(2, jnp.float64), data, SMALL, max_rows=1,
                          blocks=2.0)


@pytest.mark.slow  # ~12 s; the default suite holds the blocks to the oracles above and the
# streamed backfit search to the in-memory one's moves without blocks (test_stream_moves.py)
def test_streamed_backfit_with_blocks_makes_the_in_memory_moves():
    # The streamed search scores its screen with the same blocks: the same moves. One block:
    # the coarse screen ranks cos(pi x5) cos(pi x6) (a product of its own functions) above
    # the stronger sin(2 pi x3) sin(2 pi x8) (a product it resolves at about half its
    # variance), which the exhaustive screen takes first.
    rng = np.random.default_rng(5)
    n, p = 500, 12
    x = rng.uniform(size=(n, p))
    y = (np.sin(2 * np.pi * x[:, 3]) * np.sin(2 * np.pi * x[:, 8])
         + 0.8 * np.cos(np.pi * x[:, 5]) * np.cos(np.pi * x[:, 6]) + 0.5 * x[:, 0]
         + 0.05 * rng.standard_normal(n))
    y = (y - y.mean()) / np.abs(y - y.mean()).max()
    cfg = search.search_config("backfit", 4, p * SMALL.q, refine="coordinate",
                               coordinate_sweeps=2)._replace(pair_rows=250, pair_blocks=1)
    mem = search.fit(scoring.chunk(jnp.asarray(x), jnp.asarray(y), None, 100), SMALL, 4, cfg)
    streamed = stream.fit(stream.ChunkReader(x, y, None, chunk_size=100), SMALL, 4, cfg,
                          chunks_per_block=2)
    keys = lambda cs: [(c["move"], c["flat_index"], c["feature"], c["basis"], c["feature2"],
                        c["basis2"]) for c in cs]
    assert keys(streamed.choices) == keys(mem.choices)
    # ... and the blocks decide here: the exhaustive screen's moves differ.
    every = search.fit(scoring.chunk(jnp.asarray(x), jnp.asarray(y), None, 100), SMALL, 4,
                       cfg._replace(pair_blocks=0))
    assert keys(every.choices) != keys(mem.choices)
    np.testing.assert_allclose(streamed.history, mem.history, rtol=1e-9, atol=1e-12)


def _two_products(n_sets=2, n=500, p=12):
    """The streamed test's truth (two products: the exhaustive screen and one block take
    different pairs first) on ``n_sets`` data sets."""
    rng = np.random.default_rng(5)
    x = rng.uniform(size=(n_sets, n, p))
    y = (np.sin(2 * np.pi * x[..., 3]) * np.sin(2 * np.pi * x[..., 8])
         + 0.8 * np.cos(np.pi * x[..., 5]) * np.cos(np.pi * x[..., 6]) + 0.5 * x[..., 0]
         + 0.05 * rng.standard_normal((n_sets, n)))
    return x, y


@pytest.mark.slow  # ~19 s; the default suite holds the blocks to the oracles above and
# fit_batch's members to their separate fits' moves without blocks (test_batch_moves.py)
def test_fit_batch_members_with_blocks_make_the_separate_fits_moves(monkeypatch):
    # The blocked screen under vmap (batched gathers of each member's own blocks): every
    # member makes its separate fit's moves, and the blocks decide (the exhaustive screen's
    # batch moves differ).
    from jaxtree import batch
    import jaxtree

    X, y = _two_products()
    kw = dict(k=4, basis=SMALL, refine="coordinate", coordinate_sweeps=2, chunk_size=100)
    keys = lambda e: [(c["move"], c["flat_index"], c["feature2"], c["basis2"], c["replaced"])
                      for c in e.choices_]
    every = [keys(m) for m in batch.fit_batch(X, y, search="backfit", **kw)]
    monkeypatch.setattr(search, "pair_screen_blocks", lambda n_candidates: 1)
    res = batch.fit_batch(X, y, search="backfit", **kw)
    for b, member in enumerate(res):
        est = jaxtree.TreeRegressor(search="backfit", validation_fraction=None, shapes=0, **kw)
        est.fit(X[b], y[b])
        assert keys(member) == keys(est)
        assert search.MOVE_PAIR in [c["move"] for c in member.choices_]
        np.testing.assert_allclose(member.predict(X[b]), est.predict(X[b]), rtol=1e-8,
                                   atol=1e-9)
    assert [keys(m) for m in res] != every
