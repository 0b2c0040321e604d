"""A candidate's support (``min_support``): a basis column enters a tree only where it is
nonzero on enough training rows (:func:`jaxtree.scoring.with_support`).

Oracles: the counts against a brute-force numpy count of the basis values (weights with
zeros, padding rows, a kept basis); the masked scores against the unmasked ones (equal where
allowed, ``+inf`` elsewhere) for every scorer; a planted table whose best leaf is a hat
nonzero on one training row, kept out by the rule and by every engine and path alike.
"""

import numpy as np
import pytest

import jax
import jax.numpy as jnp

import jaxtree
from jaxtree import basis as basis_
from jaxtree import moves, scoring, stream
from jaxtree import program as prog
from jaxtree import reference
from jaxtree.batch import fit_batch
from jaxtree._fit import source

BASIS = basis_.get_basis(None)


def _brute_counts(x, w, basis):
    """``(p*q,)`` feature-major: rows of positive weight on which each column is nonzero
    (``|phi| > SUPPORT_TOL``)."""
    phi = np.asarray(basis.evaluate(jnp.asarray(x)))  # (n, p, q)
    return np.count_nonzero(np.abs(phi[np.asarray(w) > 0]) > scoring.SUPPORT_TOL,
                            axis=0).reshape(-1)


def _gap_table(seed=0, n=200):
    """``x1`` has no rows in ``(0.32, 0.68)`` but row 0 at 0.5, whose target carries a spike:
    the hats of ``x1`` centred in the gap are nonzero on row 0 alone and fit the spike."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    u = rng.uniform(size=n) * 0.64
    X[:, 0] = np.where(u < 0.32, u, u + 0.36)
    X[0, 0], X[1, 0], X[2, 0] = 0.5, 0.0, 1.0
    y = np.sin(3 * X[:, 1]) + 0.5 * X[:, 2] + 0.05 * rng.standard_normal(n)
    y[0] += 3.0
    return X, y


def _leaf_support(model, X):
    """The training rows on which each leaf's basis column of ``model`` is nonzero
    (``|phi| > SUPPORT_TOL``)."""
    xs = (np.asarray(X) - np.asarray(model.x_min)) * np.asarray(model.x_scale)
    phi = np.asarray(model.basis.evaluate(jnp.asarray(xs)))
    pr = model.program
    ns = int(pr.n_slots)
    op, f, b = (np.asarray(a)[:ns] for a in (pr.op, pr.feature, pr.basis))
    return [int(np.count_nonzero(np.abs(phi[:, f[s], b[s]]) > scoring.SUPPORT_TOL))
            for s in range(ns) if op[s] == prog.LEAF]


# ------------------------------------------------------------------------ the counts


@pytest.mark.parametrize("kept", [False, True])
def test_support_counts_match_a_brute_force_count(kept):
    rng = np.random.default_rng(11)
    n, p = 300, 4
    x = rng.uniform(size=(n, p))
    x[:40, 1] = rng.uniform(0.95, 1.0, size=40)  # a crowded edge: thin and thick columns
    x[:, 2] = np.round(x[:, 2])  # a 0/1 column
    w = rng.uniform(0.5, 2.0, size=n)
    w[rng.uniform(size=n) < 0.3] = 0.0  # rows of weight 0 do not count
    data = scoring.chunk(x.astype(np.float32), np.zeros(n, np.float32), w.astype(np.float32),
                         chunk_size=64)  # 5 chunks, the last padded
    if kept:
        data = scoring.cache_basis(data, BASIS)
    got = np.asarray(scoring.support_counts(data, BASIS))
    want = _brute_counts(x.astype(np.float32), w, BASIS)
    np.testing.assert_array_equal(got, want)
    assert got.min() < got.max()  # the table has columns of different support
    # under an outer jit too, and the mask it makes
    again = jax.jit(lambda d: scoring.support_counts(d, BASIS))(data)
    np.testing.assert_array_equal(np.asarray(again), want)
    rows = int(np.median(want))
    masked = scoring.with_support(data, BASIS, rows)
    np.testing.assert_array_equal(np.asarray(masked.allowed), want >= rows)
    assert scoring.with_support(data, BASIS, 1).allowed is None  # rows <= 1: no rule
    if kept:  # the host count from the kept values (the estimators' cache_basis)
        np.testing.assert_array_equal(scoring.kept_support_counts(data, BASIS.q), want)
    else:  # the host count from the families' numpy code (where compiling dominates)
        np.testing.assert_array_equal(
            scoring.host_support_counts(x.astype(np.float32), w, BASIS), want)
        assert scoring.host_support_counts(x, w, BASIS, max_work=10) is None  # too many


@pytest.mark.parametrize("spec", [None, {"hats": 7, "sines": 5, "cosines": 5, "powers": 3,
                                          "truncated_cubics": 4}])
def test_host_and_device_counts_agree_on_the_zeros_of_every_function(spec):
    """Values where functions are exactly 0 (a 0/1 column, the knots of the hats, the zeros of
    every frequency): the device's float32 values there are rounding (up to 3e-7), below
    SUPPORT_TOL, and the host count (float64) must agree with the device's."""
    basis = basis_.get_basis(spec)
    rng = np.random.default_rng(5)
    n = 400
    x = rng.uniform(size=(n, 5))
    x[:, 0] = rng.integers(0, 2, n)
    x[:, 1] = rng.integers(0, 10, n) / 9.0  # knots of 10 hats
    x[:, 2] = rng.integers(0, 5, n) / 4.0  # zeros of sin(4 pi x), cos(2 pi x), ...
    x[:, 3] = np.round(rng.uniform(size=n) * 36) / 36
    x = x.astype(np.float32)
    device = np.asarray(scoring.support_counts(
        scoring.chunk(x, np.zeros(n, np.float32), chunk_size=128), basis))
    np.testing.assert_array_equal(scoring.host_support_counts(x, None, basis), device)
    assert device.min() < n  # the zeros are there: some columns lose rows


def test_support_rows_reads_a_share_or_a_count():
    assert scoring.support_rows(0.02, 500) == 10
    assert scoring.support_rows(0.02, 501) == 11  # rounded up
    assert scoring.support_rows(0.02, 32) == 1
    assert scoring.support_rows(7, 500) == 7
    assert scoring.support_rows(700, 500) == 500  # at most every row
    assert scoring.support_rows(0, 500) == 0
    assert scoring.support_rows(0.0, 500) == 0


def test_reference_supported_matches_the_counts():
    rng = np.random.default_rng(12)
    x = rng.uniform(size=(150, 3)) ** 3  # crowded at 0: the top hats are thin
    w = (rng.uniform(size=150) < 0.8).astype(float)
    phi = np.asarray(BASIS.evaluate(jnp.asarray(x)), np.float64)
    want = _brute_counts(x, w, BASIS).reshape(3, -1) >= 9
    np.testing.assert_array_equal(reference.supported(phi, w, 9), want)
    assert 0 < want.sum() < want.size
    assert reference.supported(phi, w, 1) is None


# ------------------------------------------------------------------- the masked scores


def _scored_data(seed=3, n=256, p=3):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, p)).astype(np.float32)
    y = (np.sin(4 * x[:, 0]) + x[:, 1] * x[:, -1]).astype(np.float32)
    data = scoring.chunk(x, y, chunk_size=64)
    allowed = jnp.asarray(rng.uniform(size=p * BASIS.q) < 0.6)
    return data, allowed


@pytest.mark.parametrize("which", ["insert", "replace"])
def test_every_scorer_masks_exactly_the_columns_not_allowed(which):
    data, allowed = _scored_data()
    if which == "insert":
        program = prog.empty_program(4, jnp.float32)
        score = jax.jit(lambda d: scoring.score(program, d, BASIS, max_leaves=5).sse)
    else:
        program = _first_leaf(data)
        score = jax.jit(lambda d: moves.score_replace(program, d, BASIS, max_leaves=5).sse)
    free = np.asarray(score(data))  # (rows, p*q)
    masked = np.asarray(score(data._replace(allowed=allowed)))
    ok = np.asarray(allowed)
    rows = np.isfinite(free).any(1)
    assert rows.any()
    # The allowed columns' scores are the free ones to float32 rounding: the two calls are
    # two compiled programs, and XLA may lay out the scorer's stacked product
    # (scoring._design_sums) differently in each (1 element of 76 moved by 1 ulp).
    np.testing.assert_allclose(masked[rows][:, ok], free[rows][:, ok], rtol=1e-6)
    assert np.all(np.isinf(masked[:, ~ok]))
    assert np.isfinite(free[rows][:, ~ok]).any()  # the columns masked were finite before


def test_the_pair_lookahead_takes_the_best_pair_of_allowed_columns():
    data, allowed = _scored_data(n=128, p=2)
    program = prog.empty_program(4, jnp.float32)  # row 0: y ~ a + w' phi_a phi_b
    free = moves.score_pairs(program, data, BASIS, max_rows=1)
    ok = np.asarray(allowed).copy()
    ok[int(free.col_a[0])] = False  # the unmasked best pair is not allowed: the mask binds
    got = moves.score_pairs(program, data._replace(allowed=jnp.asarray(ok)), BASIS, max_rows=1)
    # brute force in float64 over the allowed pairs a <= b: the clipped 1-D least squares
    x = np.asarray(data.x, np.float64).reshape(-1, 2)
    y = np.asarray(data.y, np.float64).reshape(-1)
    w = np.asarray(data.w, np.float64).reshape(-1)
    x, y = x[w > 0], y[w > 0]
    phi = np.asarray(BASIS.evaluate(jnp.asarray(x)), np.float64).reshape(len(x), -1)
    cols = np.flatnonzero(ok)
    s = phi[:, cols, None] * phi[:, None, cols]  # (n, c, c)
    sc = s - s.mean(0)
    rc = y - y.mean()
    css, crs = (sc * sc).sum(0), np.einsum("n,nab->ab", rc, sc)
    wt = np.clip(np.where(css > 0, crs / np.where(css > 0, css, 1), 0), -1, 1)
    sse = (rc @ rc) - 2 * wt * crs + wt * wt * css
    sse = np.where(np.triu(np.ones_like(sse, bool)), sse, np.inf)
    best = np.unravel_index(np.argmin(sse), sse.shape)
    np.testing.assert_allclose(float(got.sse[0]), sse[best], rtol=2e-3)
    assert ok[int(got.col_a[0])] and ok[int(got.col_b[0])]
    assert float(got.sse[0]) > float(free.sse[0])


def _first_leaf(data):
    """A one-leaf tree: the best first insertion of ``data``."""
    program = prog.empty_program(4, jnp.float32)
    scores = scoring.score(program, data, BASIS, max_leaves=5)
    return scoring.apply(program, scoring.select(scores, BASIS.q))


# ------------------------------------------------------------------- the estimators


def test_the_rule_keeps_a_one_row_hat_out_of_the_tree():
    X, y = _gap_table()
    free = jaxtree.TreeRegressor.paper(3, min_support=0, y_bound=0.25).fit(X, y)
    assert min(_leaf_support(free.model_, X)) == 1  # the planted hat: row 0 alone
    est = jaxtree.TreeRegressor.paper(3, min_support=0.02, y_bound=0.25).fit(X, y)
    assert min(_leaf_support(est.model_, X)) >= 4  # ceil(0.02 * 200)
    by_count = jaxtree.TreeRegressor.paper(3, min_support=4, y_bound=0.25).fit(X, y)
    assert by_count.formula() == est.formula()
    one = jaxtree.TreeRegressor.paper(3, min_support=1, y_bound=0.25).fit(X, y)  # 1 row: no rule
    assert one.formula() == free.formula()


def test_every_engine_and_path_applies_the_rule(monkeypatch):
    X, y = _gap_table()
    kw = dict(search="greedy", validation_fraction=None, shapes=0, tol=None,
              refine="coordinate", min_support=0.02)
    base = jaxtree.TreeRegressor(3, **kw).fit(X, y)
    keys = [(c["feature"], c["basis"]) for c in base.choices_]
    ref = jaxtree.TreeRegressor(3, engine="reference", **kw).fit(X, y)
    streamed = jaxtree.TreeRegressor(3, chunk_size=64, **kw).fit(
        stream.ChunkReader(X, y, chunk_size=64), None)
    batch = fit_batch(np.stack([X, X]), np.stack([y, y]), k=3, refine="coordinate",
                      min_support=0.02)
    monkeypatch.setattr(scoring, "HOST_SUPPORT_MAX_WORK", 0)  # not from distinct values:
    kept = jaxtree.TreeRegressor(3, **kw).fit(X, y)  # from the kept basis values
    jitted = jaxtree.TreeRegressor(3, cache_basis=False, **kw).fit(X, y)  # by the jitted pass
    for other in (ref, streamed, batch[0], batch[1], kept, jitted):
        assert [(c["feature"], c["basis"]) for c in other.choices_] == keys
    assert batch[0].get_params()["min_support"] == 0.02
    assert min(_leaf_support(base.model_, X)) >= 4
    free = fit_batch(X[None], y[None], k=3, refine="coordinate")  # the batch's default: 0
    assert min(_leaf_support(free[0].model_, X)) == 1


def _no_program(*args, **kw):
    raise AssertionError("the jitted support count ran where the kept basis values count")


def test_the_classifier_applies_the_rule_in_memory_streamed_and_in_numpy(monkeypatch):
    X, _ = _gap_table()
    labels = (np.random.default_rng(1).uniform(size=len(X)) < 0.3).astype(int)
    kw = dict(search="greedy", validation_fraction=None, shapes=0, tol=None,
              refine="coordinate")
    free = jaxtree.TreeClassifier(3, min_support=0, **kw).fit(X, labels)
    assert min(_leaf_support(free.model_, X)) < 150  # a hat of x1 (71 rows)
    est = jaxtree.TreeClassifier(3, min_support=150, **kw).fit(X, labels)
    assert min(_leaf_support(est.model_, X)) >= 150
    ref = jaxtree.TreeClassifier(3, min_support=150, engine="reference", **kw).fit(X, labels)
    streamed = jaxtree.TreeClassifier(3, min_support=150, chunk_size=64, **kw).fit(
        stream.ChunkReader(X, labels.astype(float), chunk_size=64), None)
    # not from distinct values: from the kept basis values, as the regressor counts, and no
    # counting program (the classifier counted before keeping them until the forty-fifth
    # session, and compiled the jitted pass: 0.3 s of a first fit)
    monkeypatch.setattr(scoring, "HOST_SUPPORT_MAX_WORK", 0)
    monkeypatch.setattr(source, "supported_cached", _no_program)
    kept = jaxtree.TreeClassifier(3, min_support=150, **kw).fit(X, labels)
    keys = [(c["feature"], c["basis"]) for c in est.choices_]
    for other in (ref, streamed, kept):
        assert [(c["feature"], c["basis"]) for c in other.choices_] == keys


def test_the_default_and_the_papers_setting():
    assert jaxtree.TreeRegressor().min_support == 0.02
    assert jaxtree.TreeClassifier().min_support == 0.02
    assert jaxtree.TreeRegressor.paper().min_support == 0
    assert jaxtree.TreeRegressor.paper(min_support=0.05).min_support == 0.05


@pytest.mark.parametrize("bad, error", [(-1, ValueError), (1.0, ValueError), (1.5, ValueError),
                                        (float("nan"), ValueError), ("2%", TypeError),
                                        (True, TypeError), (None, TypeError)])
def test_a_bad_min_support_is_refused_with_the_fix(bad, error):
    X, y = _gap_table()
    with pytest.raises(error, match="min_support must be a float share"):
        jaxtree.TreeRegressor(min_support=bad).fit(X, y)
    with pytest.raises(error, match="min_support must be a float share"):
        jaxtree.TreeClassifier(min_support=bad).fit(X, y > 0)
