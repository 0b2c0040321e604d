"""``shapes="additive"``: every covariate's main shape by penalised least squares, the penalty
chosen by GCV (:mod:`jaxtree._fit.additive`), then the tree on their residual."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import shapes as S
from jaxtree._fit import additive as A
from _shared import additive_term_spreads, assert_lines_keep_largest


def _data(n=300, p=4, seed=0, noise=0.1):
    rng = np.random.default_rng(seed)
    xs = rng.uniform(size=(n, p))
    truth = np.sin(6 * xs[:, 0]) + 2 * (xs[:, 1] - 0.5) ** 2
    return xs, truth + noise * rng.normal(size=n), truth


def _model_design(fit, xs):
    """The design read off the model's own evaluation: each kept term's coefficient vectors
    set to unit vectors one at a time (not :func:`additive.design`)."""
    terms, spec = fit.terms, fit.spec
    cols = [np.ones(len(xs))]
    zero = terms._replace(main=np.zeros_like(terms.main), intercept=np.zeros((), terms.main.dtype))
    for j in np.asarray(terms.order):
        for h in range(1, spec.n1):
            main = np.zeros_like(terms.main, dtype=np.float64)
            main[j, h] = 1.0
            one = zero._replace(main=jnp.asarray(main), intercept=jnp.zeros((), jnp.float64))
            cols.append(np.asarray(S.evaluate(S.Shapes(*map(jnp.asarray, one)),
                                              jnp.asarray(xs, jnp.float64), spec)))
    return np.column_stack(cols)


@pytest.mark.parametrize("eliminate", [True, False])
def test_coefficients_and_gcv_choice_match_a_float64_reference(x64, eliminate):
    """The coefficients at the chosen penalty equal the minimiser of the stated objective,
    built from the model's own evaluation and an explicit penalty (second differences of each
    term's full hat vector with its first coefficient 0, plus ``delta`` times a ridge); the
    chosen ``(lam, delta)`` is the grid's least GCV computed from the explicit hat matrix.
    Without the elimination every covariate's term is in that system."""
    xs, y, _ = _data(n=120, p=3, seed=1)
    fit = A.fit(xs, y, None, dtype=np.float64, terms="eliminate" if eliminate else "all")
    if not eliminate:
        assert sorted(np.asarray(fit.terms.order).tolist()) == [0, 1, 2]
    X = _model_design(fit, xs)
    n1, t = fit.spec.n1, len(fit.terms.order)
    d2 = np.diff(np.eye(n1), 2, axis=0)[:, 1:]
    P = np.zeros((X.shape[1],) * 2)
    for i in range(t):
        s = slice(1 + i * (n1 - 1), 1 + (i + 1) * (n1 - 1))
        P[s, s] = d2.T @ d2
    R = np.eye(X.shape[1])
    R[0, 0] = 0
    G = X.T @ X
    scale = np.trace(G) / G.shape[0]

    def solve(lam, delta):
        M = G + scale * (lam * (P + delta * R) + A._TINY * R)
        coef = np.linalg.solve(M, X.T @ y)
        H = X @ np.linalg.solve(M, X.T)
        rss = np.sum((y - X @ coef) ** 2)
        return coef, len(y) * rss / (len(y) - A.GAMMA * np.trace(H)) ** 2

    coef, _ = solve(fit.lam, fit.delta)
    got = np.concatenate([[float(fit.terms.intercept)]]
                         + [np.asarray(fit.terms.main)[j, 1:] for j in np.asarray(fit.terms.order)])
    np.testing.assert_allclose(got, coef, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(fit.values, X @ coef, rtol=1e-8, atol=1e-8)
    scores = {(lam, d): solve(lam, d)[1] for d in A.DELTAS for lam in A.LAMBDAS}
    assert min(scores, key=scores.get) == (fit.lam, fit.delta)
    np.testing.assert_allclose(fit.gcv, scores[(fit.lam, fit.delta)], rtol=1e-8)


def test_noise_covariates_leave_and_signal_ones_stay():
    """Backward elimination on GCV drops the covariates the target does not depend on (a
    fit that kept every term, or dropped by the wrong sign, fails)."""
    xs, y, _ = _data(n=400, p=5, seed=2)
    fit = A.fit(xs, y, None)
    assert sorted(np.asarray(fit.terms.order).tolist()) == [0, 1]
    assert np.asarray(fit.terms.main_on).tolist() == [True, True, False, False, False]
    # without the elimination every term stays, the noise ones small beside the signal
    kept = A.fit(xs, y, None, terms="all")
    assert sorted(np.asarray(kept.terms.order).tolist()) == [0, 1, 2, 3, 4]
    each = additive_term_spreads(kept, xs)
    assert np.all(each[2:] < 0.2 * each[:2].min()), each  # 0.1 of the weaker here


def test_the_penalty_smooths_noise_and_follows_a_curve():
    """A smooth curve gets a small penalty and a fit close to the truth; pure noise on the
    same covariate gets a larger one and a flatter fit (a penalty that did nothing would
    fit the noise's wiggles)."""
    rng = np.random.default_rng(3)
    xs = rng.uniform(size=(300, 1))
    curve = np.sin(6 * xs[:, 0])
    smooth = A.fit(xs, curve + 0.05 * rng.normal(size=300), None)
    noise = A.fit(xs, 0.05 * rng.normal(size=300), None)
    assert smooth.lam < noise.lam
    assert np.sqrt(np.mean((smooth.values - curve) ** 2)) < 0.03
    assert np.std(noise.values) < 0.01


def test_weights_of_zero_drop_rows_and_a_common_weight_changes_nothing():
    xs, y, _ = _data(n=200, p=2, seed=4)
    base = A.fit(xs, y, None, dtype=np.float64)
    same = A.fit(xs, y, np.full(200, 3.0), dtype=np.float64)
    np.testing.assert_allclose(same.values, base.values, rtol=1e-9, atol=1e-9)
    w = np.ones(200)
    w[150:] = 0.0
    y2 = y.copy()
    y2[150:] = 1e3  # rows of weight 0: their targets must not matter
    weighted = A.fit(xs, y2, w, dtype=np.float64)
    dropped = A.fit(xs[:150], y[:150], None, dtype=np.float64)
    assert (weighted.lam, weighted.delta) == (dropped.lam, dropped.delta)
    np.testing.assert_allclose(weighted.values[:150], dropped.values, rtol=1e-9, atol=1e-9)


def test_a_category_is_one_term_of_its_levels():
    """A categorical column's levels are one group term (the shape terms' groups): its
    level effects are recovered, with no smoothness across levels."""
    rng = np.random.default_rng(5)
    n = 600
    codes = rng.integers(0, 4, n)
    effect = np.array([0.0, 1.0, -1.0, 0.5])[codes]
    xs = np.column_stack([rng.uniform(size=n)] + [(codes == c).astype(float) for c in range(4)])
    y = xs[:, 0] + effect + 0.05 * rng.normal(size=n)
    fit = A.fit(xs, y, None, groups=(("c", (1, 2, 3, 4)),), dtype=np.float64)
    assert sorted(np.asarray(fit.terms.order).tolist()) == [0, 1]
    levels = np.asarray(fit.terms.main)[1, 1:5]  # levels 1..4 on knots 1..4
    np.testing.assert_allclose(levels - levels[0], [0.0, 1.0, -1.0, 0.5], atol=0.03)


def test_max_terms_keeps_the_largest():
    rng = np.random.default_rng(6)
    xs = rng.uniform(size=(500, 4))
    y = 3 * xs[:, 0] + 2 * xs[:, 1] + 1 * xs[:, 2] + 0.5 * xs[:, 3] + 0.01 * rng.normal(size=500)
    fit = A.fit(xs, y, None, max_terms=2)
    assert sorted(np.asarray(fit.terms.order).tolist()) == [0, 1]


def test_lines_are_the_ridge_regression_of_least_gcv(x64):
    """``terms="lines"``: every numeric term is a line on its scaled range and a category keeps
    its levels; the coefficients are the weighted ridge regression on those columns with
    the penalty ``n lam sum_c var_c beta_c^2`` (each column's weighted variance: the ridge
    of standardised columns; intercept free), and ``lam`` is the grid's least GCV from the
    explicit hat matrix. Built here from the covariates and the levels' indicators (so knots
    off by one, the variances dropped, or GCV's inflation changed, each fails); the model's
    own evaluation gives the same predictions, beyond the training range too."""
    rng = np.random.default_rng(11)
    n = 80
    codes = rng.integers(0, 3, n)
    x = rng.uniform(size=(n, 3))
    x[:, 2] = 0.5 * x[:, 0] + 0.5 * x[:, 2] ** 3  # correlated, and of a smaller spread
    xs = np.column_stack([x] + [(codes == c).astype(float) for c in range(3)])
    y = 2 * x[:, 0] - x[:, 1] + 3 * x[:, 2] + np.array([0.0, 0.5, -0.3])[codes] \
        + 0.4 * rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, n)
    groups = (("c", (3, 4, 5)),)
    fit = A.fit(xs, y, w, groups=groups, dtype=np.float64, terms="lines")
    assert sorted(np.asarray(fit.terms.order).tolist()) == [0, 1, 2, 3]
    main = np.asarray(fit.terms.main)
    knots = np.arange(fit.spec.n1) / (fit.spec.n1 - 1)
    for j in range(3):  # each numeric term a line through 0 at its first knot
        np.testing.assert_allclose(main[j], main[j, -1] * knots, rtol=1e-9, atol=1e-12)

    def design(rows):  # each of the category's three levels an indicator (on its own hat)
        return np.column_stack([np.ones(len(rows)), rows[:, :3], rows[:, 3:6]])

    Z = design(xs)
    wn = w * n / w.sum()
    var = wn @ Z ** 2 / n - (wn @ Z / n) ** 2
    var[0] = 0.0
    free = np.r_[0.0, np.ones(Z.shape[1] - 1)]
    G = Z.T @ (wn[:, None] * Z)

    def solve(lam):
        M = G + n * np.diag(lam * var + A._TINY * free)
        coef = np.linalg.solve(M, Z.T @ (wn * y))
        H = Z @ np.linalg.solve(M, Z.T * wn)
        rss = np.sum(wn * (y - Z @ coef) ** 2)
        return coef, n * rss / (n - A.GAMMA * np.trace(H)) ** 2

    scores = {lam: solve(lam)[1] for lam in A.LAMBDAS}
    assert min(scores, key=scores.get) == fit.lam and fit.delta == 0.0
    assert A.LAMBDAS[0] < fit.lam < A.LAMBDAS[-1]  # an interior choice: the grid is not the limit
    np.testing.assert_allclose(fit.gcv, scores[fit.lam], rtol=1e-8)
    coef = solve(fit.lam)[0]
    np.testing.assert_allclose(fit.values, Z @ coef, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(main[:3, -1], coef[1:4], rtol=1e-7)  # the slopes
    xt = rng.uniform(-0.2, 1.2, size=(50, 3))  # beyond the range: the line is held flat
    at = np.column_stack([xt, np.eye(3)[rng.integers(0, 3, 50)]])
    np.testing.assert_allclose(A.values(fit.terms, fit.spec, at),  # the model's own evaluation
                               design(np.column_stack([np.clip(xt, 0, 1), at[:, 3:]])) @ coef,
                               rtol=1e-8, atol=1e-8)


def test_lines_keep_max_terms_of_largest_variance_refitted():
    """Of more covariates than ``max_terms``, the lines of largest variance stay, and the
    fit is the lines fit of those covariates alone (refitted, its penalty chosen again)."""
    rng = np.random.default_rng(6)
    xs = rng.uniform(size=(200, 4))
    y = 3 * xs[:, 0] + 0.3 * xs[:, 1] + 2 * xs[:, 2] + 0.5 * xs[:, 3] + 0.1 * rng.normal(size=200)
    assert_lines_keep_largest(A.fit, xs, y, [0, 2])


def test_constant_columns_are_refused():
    with pytest.raises(ValueError, match="needs a covariate that varies"):
        A.fit(np.ones((20, 2)), np.arange(20.0), None)


# ------------------------------------------------------------------------ the estimator


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(7)
    X = rng.uniform(-2, 2, size=(300, 4))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=300)
    return X, y, jaxtree.TreeRegressor(shapes="additive", k=3).fit(X, y)


def test_estimator_fits_the_additive_truth(fitted):
    """Below the tree alone on an additive truth, its terms named, the noise covariates out
    of the formula; predictions are the model's under jit."""
    X, y, est = fitted
    rng = np.random.default_rng(8)
    Xt = rng.uniform(-2, 2, size=(1000, 4))
    yt = np.sin(2 * Xt[:, 0]) + 0.5 * Xt[:, 1] ** 2
    err = np.sqrt(np.mean((est.predict(Xt) - yt) ** 2))
    tree = jaxtree.TreeRegressor(shapes=0, k=3).fit(X, y)
    assert err < 0.06 and err < np.sqrt(np.mean((tree.predict(Xt) - yt) ** 2))
    text = est.formula()
    assert "f(x1)" in text and "f(x2)" in text and "f(x3)" not in text and "f(x4)" not in text
    np.testing.assert_allclose(np.asarray(jax.jit(jaxtree.predict)(est.model_, Xt)),
                               est.predict(Xt), rtol=1e-5, atol=1e-5)


def test_estimator_round_trips_through_save(fitted, tmp_path):
    X, _, est = fitted
    est.save(tmp_path / "m.json")
    back = jaxtree.load(tmp_path / "m.json")
    np.testing.assert_array_equal(back.predict(X), est.predict(X))


def test_estimator_refusals():
    X, y, _ = _data(n=60, p=2)
    with pytest.raises(ValueError, match="'auto', 'additive' or an integer"):
        jaxtree.TreeRegressor(shapes="additiv").fit(X, y)
    with pytest.raises(ValueError, match="shapes='additive' needs engine='jax'"):
        jaxtree.TreeRegressor(shapes="additive", engine="reference").fit(X, y)


def test_streamed_rows_are_refused(tmp_path):
    """A memmap is read in blocks: the GCV fit needs the rows in memory, and says so."""
    X, y, _ = _data(n=60, p=2)
    mm = np.lib.format.open_memmap(tmp_path / "x.npy", mode="w+", dtype=np.float64,
                                   shape=X.shape)
    mm[:] = X
    with pytest.raises(ValueError, match="fits rows held in memory"):
        jaxtree.TreeRegressor(shapes="additive").fit(mm, y)


def test_the_order_choice_can_take_the_gcv_fit(monkeypatch):
    """With :data:`jaxtree._fit.spec.ADDITIVE_ORDER` on (measured, off by default), the small
    regressions' order choice judges the GCV fit first against the tree first: an additive
    truth takes it, and the kept model is ``shapes="additive"``'s fit exactly; the paper's
    function (a tree's truth) keeps the tree first."""
    from jaxtree._fit import spec as spec_
    from jaxtree.datasets import paper_synthetic

    monkeypatch.setattr(spec_, "ADDITIVE_ORDER", True)
    rng = np.random.default_rng(9)
    X = rng.uniform(-2, 2, size=(300, 4))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=300)
    est = jaxtree.TreeRegressor(k=3).fit(X, y)
    assert est.shape_order_ == "shapes first"
    alone = jaxtree.TreeRegressor(k=3, shapes="additive").fit(X, y)
    np.testing.assert_allclose(est.predict(X), alone.predict(X), rtol=1e-6, atol=1e-6)
    Xp, yp = paper_synthetic(300, p=4, seed=1)
    assert jaxtree.TreeRegressor(k=3).fit(Xp, yp).shape_order_ == "tree first"


def test_elimination_equals_direct_solves():
    """The elimination's downdated inverses give the choices of solving every candidate
    system afresh (the full system's penalty scale, float64), on a table with noise
    covariates of several kinds."""
    rng = np.random.default_rng(10)
    n, p, n1 = 250, 6, 16
    xs = rng.uniform(size=(n, p))
    xs[:, 5] = (xs[:, 5] > 0.5).astype(float)
    y = np.sin(5 * xs[:, 0]) + xs[:, 1] + 0.3 * xs[:, 5] + 0.2 * rng.normal(size=n)
    spec = S.ShapeSpec(n1=n1, n2=2, max_terms=1, pairs=())
    cand = A._candidates(xs, spec)
    G, b, yy = A._gram(xs, y, np.ones(n), spec, cand)
    P, ridge = A._penalties(cand, n1)
    coef, lam, delta, edf, score = A._solve(G, b, yy, n, P, ridge)
    scale = np.trace(G) / G.shape[0]

    def direct(terms):
        c = A._columns(terms, n1)
        M = (G + scale * (lam * (P + delta * ridge) + A._TINY * ridge))[np.ix_(c, c)]
        sol = np.linalg.solve(M, np.column_stack([b[c], G[np.ix_(c, c)]]))
        rss = yy - 2 * sol[:, 0] @ b[c] + sol[:, 0] @ G[np.ix_(c, c)] @ sol[:, 0]
        return n * rss / (n - A.GAMMA * np.trace(sol[:, 1:])) ** 2

    kept, cur = list(range(len(cand))), direct(list(range(len(cand))))
    while len(kept) > 1:
        t, v = min(((t, direct([u for u in kept if u != t])) for t in kept), key=lambda e: e[1])
        if v >= cur:
            break
        kept.remove(t)
        cur = v
    assert A._eliminate(G, b, yy, n, P, ridge, len(cand), n1, lam, delta, score) == kept
    assert 0 in kept and 1 in kept and len(kept) < len(cand)
