"""``TreeClassifier(shapes="additive")``: every covariate's main shape by a penalised logistic
fit (:func:`jaxtree._fit.additive.fit_logistic`), then the tree searched with their logit as a
per-row offset (:attr:`jaxtree.scoring.Data.offset`).

The oracles are float64 numpy written from the math: the losses, the Newton working data and
every candidate's Newton score at ``offset + f``; the refinement's gradient against autodiff of
the loss written out; a constant offset moves only the intercept; the logistic fit's
coefficients make the penalised objective's gradient vanish and its penalty is the grid's
least UBRE."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import losses, program as prog, reference, refine, scoring, search
from jaxtree._fit import additive as A
from _shared import additive_term_spreads, assert_lines_keep_largest
from test_classifier import BASIS, _newton_oracle, _ref_tree, _sigmoid, three_leaf_tree


def _rows(seed=0, n=50, p=2, chunk_size=16):
    """Random covariates, labels +-1, weights and a per-row offset, chunked with padding
    (``n`` not a multiple of the chunk)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p))
    y = np.where(rng.uniform(size=n) < 0.4, 1.0, -1.0)
    w = rng.uniform(0.5, 2.0, size=n)
    o = rng.normal(scale=1.5, size=n)
    data = scoring.chunk(jnp.asarray(X), jnp.asarray(y), jnp.asarray(w), chunk_size=chunk_size)
    pad = data.y.size - n
    off = jnp.asarray(np.pad(o, (0, pad)).reshape(data.y.shape))
    return X, y, w, o, data, data._replace(offset=off)


def _f(t, X):
    phi = np.asarray(BASIS.evaluate(jnp.asarray(X)), np.float64)
    return reference.evaluate(_ref_tree(t), phi), phi


# ------------------------------------------------------------------ the kernels


@pytest.mark.parametrize("loss", ["logistic", "margin"])
def test_mean_loss_reads_the_offset(x64, loss):
    """The mean loss (and the reported one) of a classification loss is taken at
    ``offset + f``, under jit too; the squared loss ignores the offset."""
    X, y, w, o, plain, data = _rows(1)
    t = three_leaf_tree()
    f, _ = _f(t, X)
    v = f + o
    want = (np.logaddexp(0, -y * v) if loss == "logistic"
            else 0.5 * np.maximum(0, 1 - y * v) ** 2)
    np.testing.assert_allclose(losses.mean_loss(t, data, BASIS, loss),
                               np.average(want, weights=w), rtol=1e-12)
    jitted = jax.jit(losses.mean_loss, static_argnums=(2, 3))
    np.testing.assert_allclose(jitted(t, data, BASIS, loss), np.average(want, weights=w),
                               rtol=1e-12)
    if loss == "margin":
        np.testing.assert_allclose(losses.mean_loss(t, data, BASIS, loss, report=True),
                                   np.average(np.clip(1 - y * v, 0, 1), weights=w), rtol=1e-12)
    np.testing.assert_allclose(losses.mean_loss(t, data, BASIS, "squared"),
                               losses.mean_loss(t, plain, BASIS, "squared"), rtol=1e-14)


def test_working_data_is_the_newton_step_of_the_whole_logit(x64):
    """``z = f - g/h`` and weights ``w h`` with ``g, h`` at ``offset + f``, in the tree's
    units (no offset left on the working data)."""
    X, y, w, o, _, data = _rows(2)
    t = three_leaf_tree()
    f, _ = _f(t, X)
    g = -y * _sigmoid(-y * (f + o))
    h = np.maximum(_sigmoid(f + o) * _sigmoid(-(f + o)), losses.H_MIN)
    work = losses.working_data(t, data, BASIS, "logistic")
    assert work.offset is None
    n = len(y)
    np.testing.assert_allclose(np.asarray(work.y).reshape(-1)[:n], f - g / h, rtol=1e-10,
                               atol=1e-10)
    np.testing.assert_allclose(np.asarray(work.w).reshape(-1)[:n], w * h, rtol=1e-12)


def test_newton_scores_with_an_offset_equal_bruteforce(x64):
    """Every candidate's Newton score, weight and intercept equal the brute-force
    one-Newton-step refit at ``offset + f`` (test_classifier's oracle with the offset)."""
    X, y, w, o, _, data = _rows(3, n=40)
    t = three_leaf_tree()
    _, phi = _f(t, X)
    scores = scoring.score(t, losses.working_data(t, data, BASIS, "logistic"), BASIS,
                           max_leaves=4)
    oracle, const = _newton_oracle(_ref_tree(t), phi, y, w, offset=o)
    sse = np.asarray(scores.sse)
    for (rank, op_idx, j, i), (Q, wp, a) in oracle.items():
        row, col = 2 * rank + op_idx, j * BASIS.q + i
        np.testing.assert_allclose(sse[row, col], 2 * Q + const, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(scores.weight[row, col], wp, atol=1e-9)
        np.testing.assert_allclose(scores.intercept[row, col], a, atol=1e-9)


def test_refinement_loss_and_gradient_read_the_offset(x64):
    """The refinement's chunked loss and its hand-written gradient equal autodiff of the
    loss written out at ``offset + f`` (float64, under jit)."""
    X, y, w, o, _, data = _rows(4)
    t = three_leaf_tree()
    fn = refine._chunked_loss(BASIS, "logistic")
    params = (t.weight + 0.05, t.intercept + 0.1)

    def direct(params):
        p = t._replace(weight=params[0], intercept=params[1])
        v = prog.evaluate(p, jnp.asarray(X), BASIS) + o
        return jnp.sum(w * jax.nn.softplus(-y * v)) / jnp.sum(w)

    val, grad = jax.jit(jax.value_and_grad(lambda q: fn(q, t, data, None)))(params)
    want_val, want_grad = jax.value_and_grad(direct)(params)
    np.testing.assert_allclose(val, want_val, rtol=1e-12)
    live = np.asarray(t.op) == prog.LEAF
    np.testing.assert_allclose(np.asarray(grad[0])[live], np.asarray(want_grad[0])[live],
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(grad[1], want_grad[1], rtol=1e-10)


@pytest.mark.parametrize("refine_mode", [None, "optax"])
def test_a_constant_offset_moves_only_the_intercept(x64, refine_mode):
    """Three steps with the offset ``c`` on every row from intercept ``a - c`` make the
    choices, weights and losses of three steps without it from ``a``: only the intercept
    differs, by ``c`` (an offset the working data kept, or the losses ignored, fails)."""
    X, y, w, o, plain, data = _rows(5)
    c = 0.8
    shifted = data._replace(offset=jnp.where(data.w > 0, c, 0.0))
    cfg = search.Config(max_k=3, refine=refine_mode, loss="logistic")
    a0 = float(np.log(np.average(y > 0, weights=w) / np.average(y < 0, weights=w)))
    p0 = prog.empty_program(3, jnp.float64)
    p, q = p0._replace(intercept=jnp.asarray(a0)), p0._replace(intercept=jnp.asarray(a0 - c))
    for _ in range(3):
        p, ip = search.step_jit(p, plain, BASIS, cfg)
        q, iq = search.step_jit(q, shifted, BASIS, cfg)
        np.testing.assert_allclose(iq.loss, ip.loss, rtol=1e-9)
        for f in ("feature", "basis", "op", "slot"):
            assert int(getattr(iq.choice, f)) == int(getattr(ip.choice, f))
    np.testing.assert_allclose(q.weight, p.weight, atol=1e-7)
    np.testing.assert_allclose(q.intercept, p.intercept - c, atol=1e-7)


# ------------------------------------------------------------------ the logistic fit


def _logistic_truth(n=1500, p=4, seed=0, bump=False):
    """Labels of an additive logit in the first two of ``p`` covariates: a sine and a line,
    or (``bump``) a bump and a kink, which the tree's basis does not hold."""
    rng = np.random.default_rng(seed)
    xs = rng.uniform(size=(n, p))
    eta = _bump(xs) if bump else 2 * np.sin(3 * xs[:, 0]) + 3 * (xs[:, 1] - 0.5) - 0.5
    y = (rng.uniform(size=n) < _sigmoid(eta)).astype(float)
    return xs, y, eta


def _bump(xs):
    return 3 * np.exp(-((xs[:, 0] - 0.3) / 0.15) ** 2) + 3 * np.abs(xs[:, 1] - 0.6) - 1.5


@pytest.mark.parametrize("eliminate", [True, False])
def test_logistic_fit_is_the_penalised_minimiser_of_least_ubre(x64, eliminate):
    """At the chosen penalty the coefficients make the gradient of ``sum w loss + b' Q b / 2``
    vanish (``Q`` built here from the design, the penalty matrices and the fixed scale), and
    the pair is the grid's least UBRE of the converged fit's working model (its hat matrix
    written out). Without the elimination every covariate's term is in that objective."""
    xs, y, _ = _logistic_truth(n=300, p=2, seed=1)
    w = np.random.default_rng(2).uniform(0.5, 1.5, size=len(y))
    fit = A.fit_logistic(xs, y, w, dtype=np.float64, terms="eliminate" if eliminate else "all")
    order = [int(j) for j in np.asarray(fit.terms.order)]
    if not eliminate:
        assert sorted(order) == [0, 1]
    cand = [(j, True) for j in order]
    X = A.design(xs, fit.spec, cand)
    coef = np.concatenate([[float(fit.terms.intercept)]]
                          + [np.asarray(fit.terms.main)[j, 1:] for j in order])
    wn = w * len(y) / w.sum()
    d2 = np.diff(np.eye(fit.spec.n1), 2, axis=0)[:, 1:]
    m = X.shape[1]
    Pm = np.zeros((m, m))
    for t in range(len(order)):
        s = slice(1 + t * (fit.spec.n1 - 1), 1 + (t + 1) * (fit.spec.n1 - 1))
        Pm[s, s] = d2.T @ d2
    R = np.eye(m)
    R[0, 0] = 0
    if len(order) < 2:  # the scale is the full candidate set's: rebuild it from both terms
        Xall = A.design(xs, fit.spec, [(0, True), (1, True)])
    else:
        Xall = X
    scale = 0.25 * np.trace(Xall.T @ (Xall * wn[:, None])) / Xall.shape[1]

    def Q(lam, delta):
        return scale * (lam * (Pm + delta * R) + A._TINY * R)

    mu = _sigmoid(X @ coef)
    grad = X.T @ (wn * (mu - y)) + Q(fit.lam, fit.delta) @ coef
    assert np.max(np.abs(grad)) < 1e-6 * len(y)
    np.testing.assert_allclose(fit.values, X @ coef, rtol=1e-10, atol=1e-10)
    # the grid's least UBRE on the working model at the fit
    h = np.maximum(mu * (1 - mu), 1e-6)
    z = X @ coef + (y - mu) / h
    Wh = wn * h

    def ubre(lam, delta):
        M = X.T @ (X * Wh[:, None]) + Q(lam, delta)
        b = np.linalg.solve(M, X.T @ (Wh * z))
        H = np.linalg.solve(M, X.T @ (X * Wh[:, None]))
        rss = np.sum(Wh * (z - X @ b) ** 2)
        return rss / len(y) - 1 + 2 * A.GAMMA * np.trace(H) / len(y)

    scores = {(lam, d): ubre(lam, d) for d in A.DELTAS for lam in A.LAMBDAS}
    assert min(scores, key=scores.get) == (fit.lam, fit.delta)


def test_logistic_lines_are_the_ridge_logistic_regression_of_least_ubre(x64):
    """``terms="lines"``: every numeric term is a line on its scaled range and a category
    keeps its levels; the coefficients minimise ``sum w log(1 + exp(-y' eta)) + (n / 4) lam
    sum_c var_c beta_c^2 / 2`` (each column's weighted variance, intercept free: the ridge
    of standardised columns), and ``lam`` is the grid's least UBRE of the converged fit's
    working model. Built here from the covariates and the levels' indicators (knots off by
    one, the variances dropped, the gradient's sign flipped or the UBRE's inflation changed
    each fails); the model's own evaluation gives the fit's logits."""
    rng = np.random.default_rng(5)
    n = 400
    codes = rng.integers(0, 3, n)
    x = rng.uniform(size=(n, 3))
    x[:, 2] = 0.5 * x[:, 0] + 0.5 * x[:, 2] ** 3  # correlated, and of a smaller spread
    eta = -0.5 + 2 * x[:, 0] - 1.5 * x[:, 1] + 2 * x[:, 2] + np.array([0.0, 0.6, -0.4])[codes]
    y = (rng.uniform(size=n) < _sigmoid(eta)).astype(float)
    w = rng.uniform(0.5, 2.0, n)
    xs = np.column_stack([x] + [(codes == c).astype(float) for c in range(3)])
    fit = A.fit_logistic(xs, y, w, groups=(("c", (3, 4, 5)),), dtype=np.float64,
                         terms="lines")
    assert sorted(np.asarray(fit.terms.order).tolist()) == [0, 1, 2, 3]
    main = np.asarray(fit.terms.main)
    knots = np.arange(fit.spec.n1) / (fit.spec.n1 - 1)
    for j in range(3):  # each numeric term a line through 0 at its first knot
        np.testing.assert_allclose(main[j], main[j, -1] * knots, rtol=1e-9, atol=1e-12)
    Z = np.column_stack([np.ones(n), xs])  # the slopes, then the levels' indicators
    wn = w * n / w.sum()
    var = wn @ Z ** 2 / n - (wn @ Z / n) ** 2
    var[0] = 0.0
    free = np.r_[0.0, np.ones(Z.shape[1] - 1)]

    def Q(lam):
        return 0.25 * n * np.diag(lam * var + A._TINY * free)

    # the fit's coefficients in these columns: the intercept, the slopes, the levels'
    coef = np.concatenate([[float(fit.terms.intercept)], main[:3, -1], main[3, 1:4]])
    np.testing.assert_allclose(fit.values, Z @ coef, rtol=1e-9, atol=1e-9)
    mu = _sigmoid(Z @ coef)
    grad = Z.T @ (wn * (mu - y)) + Q(fit.lam) @ coef
    assert np.max(np.abs(grad)) < 1e-7 * n
    h = np.maximum(mu * (1 - mu), 1e-6)
    z = Z @ coef + (y - mu) / h
    Wh = wn * h

    def ubre(lam):
        M = Z.T @ (Z * Wh[:, None]) + Q(lam)
        b = np.linalg.solve(M, Z.T @ (Wh * z))
        H = np.linalg.solve(M, Z.T @ (Z * Wh[:, None]))
        return np.sum(Wh * (z - Z @ b) ** 2) / n - 1 + 2 * A.GAMMA * np.trace(H) / n

    scores = {lam: ubre(lam) for lam in A.LAMBDAS}
    assert min(scores, key=scores.get) == fit.lam and fit.delta == 0.0
    assert A.LAMBDAS[0] < fit.lam < A.LAMBDAS[-1]  # an interior choice: the grid is not the limit
    np.testing.assert_allclose(fit.gcv, scores[fit.lam], rtol=1e-6)


def test_logistic_lines_keep_max_terms_of_largest_variance_refitted():
    """Of more covariates than ``max_terms``, the lines of largest variance stay, and the
    fit is the lines fit of those covariates alone (refitted, its penalty chosen again)."""
    rng = np.random.default_rng(6)
    xs = rng.uniform(size=(400, 4))
    eta = 4 * xs[:, 0] + 0.3 * xs[:, 1] - 3 * xs[:, 2] + 0.5 * xs[:, 3] - 0.5
    y = (rng.uniform(size=400) < _sigmoid(eta)).astype(float)
    assert_lines_keep_largest(A.fit_logistic, xs, y, [0, 2])


def test_an_unknown_terms_mode_is_refused():
    with pytest.raises(ValueError, match="terms must be one of"):
        A.fit_logistic(np.random.default_rng(0).uniform(size=(30, 2)), np.arange(30) % 2,
                       None, terms="line")
    with pytest.raises(ValueError, match="terms must be one of"):
        A.fit(np.random.default_rng(0).uniform(size=(30, 2)), np.arange(30.0), None,
              terms="none")


def test_logistic_fit_keeps_the_signal_and_drops_noise():
    """The logit's two signal covariates stay, the noise ones leave; the fitted logit
    follows the truth. (A statistical rule: at 1,500 rows, 3 of 8 seeds kept one or two
    of the three noise covariates, each of about 2.9 degrees of freedom; seed 0 keeps none.
    A flipped elimination keeps them all.)"""
    xs, y, eta = _logistic_truth(p=5, seed=0)
    fit = A.fit_logistic(xs, y, None)
    assert sorted(np.asarray(fit.terms.order).tolist()) == [0, 1]
    assert np.corrcoef(fit.values, eta)[0, 1] > 0.97
    # without the elimination every term stays, the noise ones small beside the signal
    kept = A.fit_logistic(xs, y, None, terms="all")
    assert sorted(np.asarray(kept.terms.order).tolist()) == [0, 1, 2, 3, 4]
    each = additive_term_spreads(kept, xs)
    assert np.all(each[2:] < 0.2 * each[:2].min()), each


def test_the_remembered_full_fit_is_the_fresh_one():
    """fit_logistic remembers its fit of every candidate for the next call on the same rows
    (the classifier's choice fits its two k=0 settings one after the other): each result
    equals the one computed with nothing remembered, to the bit, whatever came before it
    (the same rows, other weights, other covariates)."""
    xs, y, _ = _logistic_truth(p=4, seed=0)
    w = np.random.default_rng(3).uniform(0.5, 1.5, size=len(y))
    calls = [(xs, None, False), (xs, None, True), (xs, w, False), (xs[:, :3], None, False),
             (xs, None, True), (xs, w, True)]

    def run(x, wt, elim):
        return A.fit_logistic(x, y, wt, terms="eliminate" if elim else "all", dtype=np.float64)

    remembered = [run(*c) for c in calls]
    for c, got in zip(calls, remembered):
        A._LAST_FULL[:] = [None, None]
        fresh = run(*c)
        np.testing.assert_array_equal(got.values, fresh.values)
        np.testing.assert_array_equal(np.asarray(got.terms.main), np.asarray(fresh.terms.main))
        assert (got.lam, got.delta, got.gcv) == (fresh.lam, fresh.delta, fresh.gcv)
    assert not np.array_equal(remembered[0].values, remembered[2].values)  # the weights count


@pytest.mark.parametrize("halvings", [A.HALVINGS, 1])
def test_logistic_fit_stays_finite_on_rare_nearly_separable_labels(monkeypatch, halvings):
    """3% positives that one covariate nearly separates (ISLR Default's case): the halved
    Newton steps keep the logits bounded and the log-loss below the intercept's; full steps
    (one halving allowed) overshoot to logits of thousands."""
    rng = np.random.default_rng(6)
    xs = rng.uniform(size=(3000, 3))
    xs[:, 2] = (xs[:, 2] < 0.3).astype(float)
    eta = -9 + 10 * xs[:, 0] ** 2 + 0.5 * xs[:, 2]
    y = (rng.uniform(size=3000) < _sigmoid(eta)).astype(float)
    monkeypatch.setattr(A, "HALVINGS", halvings)
    fit = A.fit_logistic(xs, y, None)
    prior = y.mean()
    base = -np.mean(y * np.log(prior) + (1 - y) * np.log(1 - prior))
    loss = np.mean(np.logaddexp(0, np.where(y > 0, -fit.values, fit.values)))
    ok = np.max(np.abs(fit.values)) < 30 and loss < base
    assert ok == (halvings > 1)


# ------------------------------------------------------------------ the estimator


@pytest.fixture(scope="module")
def fitted():
    xs, y, eta = _logistic_truth(n=1200, p=4, seed=4, bump=True)
    X = 4 * xs - 2
    return X, y, jaxtree.TreeClassifier(shapes="additive", k=3, random_state=0).fit(X, y)


def test_estimator_fits_the_additive_logit(fitted):
    """On an additive logit of a bump and a kink the fit's decision function follows the
    truth better than the tree alone (0.938 against 0.895 correlation), its training log-loss is its history's last (the search's offset and the
    model's terms agree), the noise covariates stay out of the terms, and the model's
    decision values are the same under jit."""
    X, y, est = fitted
    assert est.validation_fraction_ == 0.2  # "auto": the regressor's rule, not grown to k
    rng = np.random.default_rng(5)
    xt = rng.uniform(size=(3000, 4))
    eta = _bump(xt)
    Xt = 4 * xt - 2
    tree = jaxtree.TreeClassifier(shapes=0, k=3, random_state=0).fit(X, y)
    got = np.corrcoef(est.decision_function(Xt), eta)[0, 1]
    assert got > 0.92 and got > np.corrcoef(tree.decision_function(Xt), eta)[0, 1] + 0.02
    pr = est.predict_proba(X)[:, 1]
    loss = -np.mean(y * np.log(pr) + (1 - y) * np.log(1 - pr))
    np.testing.assert_allclose(loss, est.history_[-1], rtol=1e-4)
    assert np.asarray(est.model_.shapes.main_on).tolist() == [True, True, False, False]
    from jaxtree._fit import classify
    np.testing.assert_allclose(
        np.asarray(jax.jit(lambda m, x: classify.decision_values(m, x, True))(est.model_, Xt)),
        est.decision_function(Xt), rtol=1e-5, atol=1e-5)


def test_estimator_round_trips_through_save(fitted, tmp_path):
    X, _, est = fitted
    est.save(tmp_path / "m.json")
    back = jaxtree.load(tmp_path / "m.json")
    np.testing.assert_array_equal(back.predict_proba(X), est.predict_proba(X))


def test_estimator_refusals(tmp_path):
    """Three classes, the margin loss, the reference engine and streamed rows are refused
    with what to use instead."""
    xs, y, _ = _logistic_truth(n=90, p=2)
    with pytest.raises(ValueError, match="fits a binary classifier; y has 3 classes"):
        jaxtree.TreeClassifier(shapes="additive").fit(xs, np.arange(90) % 3)
    with pytest.raises(ValueError, match="loss='squared' or 'logistic'"):
        jaxtree.TreeClassifier(shapes="additive", loss="margin").fit(xs, y)
    with pytest.raises(ValueError, match="needs engine='jax'"):
        jaxtree.TreeClassifier(shapes="additive", engine="reference",
                               refine="coordinate").fit(xs, y)
    mm = np.lib.format.open_memmap(tmp_path / "x.npy", mode="w+", dtype=np.float64,
                                   shape=xs.shape)
    mm[:] = xs
    with pytest.raises(ValueError, match="fits rows held in memory"):
        jaxtree.TreeClassifier(shapes="additive").fit(mm, y)
