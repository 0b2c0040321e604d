"""The numpy reference engine for classification (issue 13): ``TreeClassifier(engine="reference")``.

Two oracles:

* the reference's Newton-step score of every candidate against a brute-force refit of that
  candidate, written here from the math: the candidate tree is built by an actual insertion
  (so the ``+``/``*`` targets are not taken from the library), the per-row second-order
  model of the loss is minimised over the intercept and ``|w'| <= 1`` (2x2 normal equations,
  then the box, checked against a grid), with the loss's derivatives written out here and
  checked against finite differences of the loss;
* the JAX engine: on small float64 problems both engines make the same choices, histories
  and decision functions (binary and a 3-class one-versus-rest, both losses).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import losses
from jaxtree import reference as R
from _shared import GREEDY

BASIS = jaxtree.basis.make_basis(hats=3, sines=3, cosines=3, powers=2, truncated_cubics=0)
N, P, K = 80, 3, 3


def make_data(seed=0, n=N, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, P))
    if classes == 2:
        logit = 3 * np.sin(3 * X[:, 0]) - 2.5 * X[:, 1] ** 2 - 0.8
        y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int)
    else:
        y = np.digitize(X[:, 0] + 0.5 * X[:, 1] + 0.2 * rng.normal(size=n), [0.55, 1.0])
    return X, y


def test_x64_is_on():
    """The agreement tests below are float64 (tests/conftest.py enables x64)."""
    assert jax.config.jax_enable_x64


# --------------------------------------------------------- Newton score vs brute force


def _derivatives(loss, y, f):
    """The loss's ``(g, h)`` per row, written from the math (logistic ``log(1 + e^{-yf})``
    with the curvature floor; the squared hinge ``max(0, 1 - yf)^2 / 2``)."""
    if loss == "logistic":
        p = 1 / (1 + np.exp(-f))
        return -y / (1 + np.exp(y * f)), np.maximum(p * (1 - p), losses.H_MIN)
    m = 1 - y * f
    return -y * np.maximum(m, 0), (m > 0).astype(float)


def _tree_with_add_and_mul(intercept=-0.3):
    """A tree with a ``*`` and a ``+`` (three leaves), a non-zero intercept, room for one
    more insertion."""
    t = R.single_leaf(3, 0, 4, 0.7)
    t = R.insert(t, 0, R.MUL, 1, 2, -0.6)
    t = R.insert(t, 1, R.ADD, 2, 7, 0.9)
    t.intercept = intercept
    return t


@pytest.mark.parametrize("loss", ["logistic", "margin"])
def test_newton_score_equals_bruteforce_refit(loss):
    """Every candidate's Newton-step SSE, weight and intercept from
    :func:`jaxtree.reference.score_newton` equal a brute-force one-Newton-step refit of that
    candidate. Catches a wrong working response (sign, no intercept in ``f``), the weight
    ``h`` left out or squared, a wrong ``*`` target, an unfloored curvature."""
    rng = np.random.default_rng(7)
    n = 30
    X = rng.uniform(size=(n, P))
    y = np.where(rng.uniform(size=n) < 0.45, 1.0, -1.0)
    sw = rng.uniform(0.5, 2.0, size=n)
    phi = np.asarray(BASIS.evaluate(jnp.asarray(X)), np.float64)
    tree = _tree_with_add_and_mul(-0.3 if loss == "logistic" else 0.8)
    f = R.evaluate(tree, phi)
    g, h = _derivatives(loss, y, f)
    # The written-out derivatives are those of the loss (central differences).
    eps = 1e-5
    fd_g = (R.search_loss(loss, y, f + eps) - R.search_loss(loss, y, f - eps)) / (2 * eps)
    np.testing.assert_allclose(g, fd_g, atol=1e-8)
    if loss == "margin":
        assert 0 < h.sum() < n  # rows on both sides of the margin
    const = np.sum(sw * np.divide(g * g, h, out=np.zeros(n), where=h > 0))

    sse, wts, icpt, rss = R.score_newton(tree, phi, y, sw, loss)
    _, p, q = phi.shape
    grid = np.linspace(-1, 1, 401)
    for rank, slot in enumerate(R.leaves(tree)):
        for op_idx, op in enumerate((R.ADD, R.MUL)):
            for j in range(p):
                for i in range(q):
                    # D(da, w') = f_candidate - f: affine in (da, w'), read off the tree.
                    d0 = R.evaluate(R.insert(tree, slot, op, j, i, 0.0), phi) - f
                    d1 = R.evaluate(R.insert(tree, slot, op, j, i, 1.0), phi) - f - d0

                    def model(da, wp):  # the Newton model's change of the loss
                        D = da + wp * d1 + d0
                        return np.sum(sw * (g * D + 0.5 * h * D * D))

                    A = np.array([[np.sum(sw * h), np.sum(sw * h * d1)],
                                  [np.sum(sw * h * d1), np.sum(sw * h * d1 * d1)]])
                    rhs = -np.array([np.sum(sw * (g + h * d0)), np.sum(sw * (g + h * d0) * d1)])
                    if np.linalg.cond(A) > 1e10:  # a constant regressor: w' = 0
                        da, wp = rhs[0] / A[0, 0], 0.0
                    else:
                        da, wp = np.linalg.solve(A, rhs)
                        if abs(wp) > 1:
                            wp = float(np.clip(wp, -1, 1))
                            da = (rhs[0] - wp * A[0, 1]) / A[0, 0]
                    Q = model(da, wp)
                    best_on_grid = min(model((rhs[0] - v * A[0, 1]) / A[0, 0], v) for v in grid)
                    assert Q <= best_on_grid + 1e-12 * abs(best_on_grid)
                    got = (sse[rank, op_idx, j, i], wts[rank, op_idx, j, i],
                           icpt[rank, op_idx, j, i])
                    np.testing.assert_allclose(got[0], 2 * Q + const, rtol=1e-10, atol=1e-10)
                    np.testing.assert_allclose(got[1], wp, atol=1e-9)
                    np.testing.assert_allclose(got[2], tree.intercept + da, atol=1e-9)
    # The tie rule's scale is the working data's current residual sum of squares.
    np.testing.assert_allclose(rss, const, rtol=1e-12)


def test_first_leaf_newton_score_from_the_empty_tree():
    """From the empty tree with the prior intercept, the first-leaf candidates are the
    one-Newton-step refit of ``w0 + w phi_ij`` (brute force as above)."""
    X, y01 = make_data(seed=3, n=40)
    y = np.where(y01 == 1, 1.0, -1.0)
    sw = np.ones(len(y))
    phi = np.asarray(BASIS.evaluate(jnp.asarray(X)), np.float64)
    a0 = R.start_intercept("logistic", y)
    np.testing.assert_allclose(1 / (1 + np.exp(-a0)), np.mean(y > 0))
    sse, wts, icpt, _ = R.score_newton(R.empty_tree(K, a0), phi, y, sw, "logistic")
    g, h = _derivatives("logistic", y, np.full(len(y), a0))
    for j in range(P):
        for i in range(BASIS.q):
            s = phi[:, j, i]
            A = np.array([[h.sum(), (h * s).sum()], [(h * s).sum(), (h * s * s).sum()]])
            da, wp = np.linalg.solve(A, -np.array([g.sum(), (g * s).sum()]))
            if abs(wp) > 1:
                wp = float(np.clip(wp, -1, 1))
                da = (-g.sum() - wp * A[0, 1]) / A[0, 0]
            D = da + wp * s
            np.testing.assert_allclose(sse[j, i], 2 * np.sum(g * D + 0.5 * h * D * D)
                                       + np.sum(g * g / h), rtol=1e-10)
            np.testing.assert_allclose((wts[j, i], icpt[j, i]), (wp, a0 + da), atol=1e-9)


def test_numpy_and_jax_working_rows_agree():
    """:func:`jaxtree.reference.newton_rows` and :func:`jaxtree.losses.newton_rows` (the
    JAX engine's) give the same working data, the floor included; the floors are equal."""
    assert R.H_MIN == losses.H_MIN
    rng = np.random.default_rng(0)
    y = np.where(rng.uniform(size=200) < 0.5, 1.0, -1.0)
    f = rng.normal(scale=8, size=200)  # some rows past the logistic floor (|f| > 9)
    for loss in ("logistic", "margin"):
        z, h = R.newton_rows(loss, y, f)
        zj, hj = losses.newton_rows(loss, jnp.asarray(y), jnp.asarray(f))
        if loss == "logistic":
            hj = jnp.maximum(hj, losses.H_MIN)
        np.testing.assert_allclose(z, np.asarray(zj), rtol=1e-12)
        np.testing.assert_allclose(h, np.asarray(hj), rtol=1e-12)
        np.testing.assert_allclose(R.reported_loss(loss, y, f),
                                   np.asarray(losses.reported(loss, jnp.asarray(y), jnp.asarray(f))),
                                   rtol=1e-12)


# ----------------------------------------------------------------------- refinement


@pytest.mark.parametrize("loss", ["logistic", "margin"])
def test_coordinate_newton_refinement_reaches_a_stationary_point(loss):
    """:func:`jaxtree.reference.refine_coordinate_newton` lowers the search's loss and, run
    to convergence, stops where every free weight's and the intercept's derivative of the
    true loss vanishes (a weight on the box has its gradient pointing outward). A no-op or
    squared-loss refinement fails."""
    X, y01 = make_data(seed=5)
    y = np.where(y01 == 1, 1.0, -1.0)
    sw = np.ones(len(y))
    phi = np.asarray(BASIS.evaluate(jnp.asarray(X)), np.float64)
    tree = _tree_with_add_and_mul()
    before = R.mean_loss(loss, tree, phi, y, sw)
    out = R.refine_coordinate_newton(tree, phi, y, sw, loss, sweeps=200)
    after = R.mean_loss(loss, out, phi, y, sw)
    assert after < before - 1e-3

    def at(weights, a):
        t = out.copy()
        t.weight, t.intercept = weights, a
        return R.mean_loss(loss, t, phi, y, sw)

    eps = 1e-6
    for s in R.leaves(out):
        e = np.zeros_like(out.weight)
        e[s] = eps
        gs = (at(out.weight + e, out.intercept) - at(out.weight - e, out.intercept)) / (2 * eps)
        if abs(out.weight[s]) < 1 - 1e-9:
            assert abs(gs) < 1e-6, (s, out.weight[s], gs)
        else:
            assert np.sign(out.weight[s]) * gs <= 1e-6
    ga = (at(out.weight, out.intercept + eps) - at(out.weight, out.intercept - eps)) / (2 * eps)
    assert abs(ga) < 1e-6


# ------------------------------------------------------------- JAX engine vs reference


def _fit_both(X, y, **kw):
    # GREEDY: the reference engine is greedy only; the JAX engine's "auto" is backfit here
    kw = {"k": K, "basis": BASIS, "refine": "coordinate", **GREEDY, **kw}
    return (jaxtree.TreeClassifier(engine="jax", **kw).fit(X, y),
            jaxtree.TreeClassifier(engine="reference", **kw).fit(X, y))


DISCRETE = ("flat_index", "slot", "op", "feature", "basis", "move")


def _assert_same(a, b):
    """Same insertions (discrete fields exactly, numbers to float64 rounding of the
    refinement's stopping test), same history, decision function and status."""
    ca = a.choices_ if a.history_.ndim == 2 else [a.choices_]
    cb = b.choices_ if b.history_.ndim == 2 else [b.choices_]
    assert len(ca) == len(cb)
    for ma, mb in zip(ca, cb):
        assert [tuple(c[f] for f in DISCRETE) for c in ma] == \
               [tuple(c[f] for f in DISCRETE) for c in mb]
        for f in ("weight", "intercept", "sse"):
            np.testing.assert_allclose([c[f] for c in ma], [c[f] for c in mb],
                                       rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(a.history_, b.history_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a.decision_function(a._X), b.decision_function(a._X), atol=1e-8)
    assert a.status_ == b.status_
    assert a.k_ == b.k_


# slow: [logistic-coordinate] restates test_engines_choose_the_same_three_class_one_versus_rest
# [logistic] (JAX = reference engine with refine="coordinate" on the logistic loss: the same
# binary coordinate-Newton refinement per one-versus-rest member), with
# test_reference_engine_reports_through_the_driver (this fit's binary shapes and settings:
# per-iteration losses at 1e-10 and choices) and [logistic-None] (the binary search itself),
# on one more JAX-and-reference fit pair of its own
@pytest.mark.parametrize("loss,refine", [
    pytest.param("logistic", "coordinate", marks=pytest.mark.slow), ("logistic", None),
    ("margin", "coordinate")])
def test_engines_choose_the_same_binary(loss, refine):
    X, y = make_data(seed=1)
    a, b = _fit_both(X, y, loss=loss, refine=refine)
    a._X = X
    _assert_same(a, b)
    assert len(a.choices_) == K + 1
    assert a.history_[-1] < a.history_[0]  # the search is not a no-op


# The margin loss on three classes in the slow suite: the binary margin case above and the
# logistic three-class case hold its two halves.
@pytest.mark.parametrize("loss", ["logistic", pytest.param("margin", marks=pytest.mark.slow)])
def test_engines_choose_the_same_three_class_one_versus_rest(loss):
    X, y = make_data(seed=2, classes=3)
    assert len(np.unique(y)) == 3
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))
    kw = {"k": K, "basis": BASIS, "refine": "coordinate", "loss": loss, **GREEDY}
    a = jaxtree.TreeClassifier(engine="jax", **kw).fit(X, y, sample_weight=w)
    b = jaxtree.TreeClassifier(engine="reference", **kw).fit(X, y, sample_weight=w)
    a._X = X
    assert a.history_.shape == b.history_.shape == (3, K + 1)
    _assert_same(a, b)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_reference_engine_reports_through_the_driver():
    """The callback sees the same iterations, losses and choices on both engines (one
    driver), and can stop the reference search (status STOPPED)."""
    X, y = make_data(seed=1)
    seen = {"jax": [], "reference": []}
    for engine in seen:
        def cb(it, loss, info, engine=engine):
            seen[engine].append((it, loss, info["feature"], info["basis"]))
            return it == 1
        est = jaxtree.TreeClassifier(k=K, basis=BASIS, refine="coordinate", engine=engine,
                                     callback=cb, **GREEDY).fit(X, y)
        assert est.status_ == jaxtree.search.Status.STOPPED and est.k_ == 1
    assert [s[::2] for s in seen["jax"]] == [s[::2] for s in seen["reference"]]
    np.testing.assert_allclose([s[1] for s in seen["jax"]], [s[1] for s in seen["reference"]],
                               rtol=1e-10)


def test_reference_engine_selects_the_same_size():
    """``validation_fraction`` runs on the reference engine too (the same driver states):
    the same held-out path and chosen size as the JAX engine."""
    X, y = make_data(seed=4, n=90)
    a, b = _fit_both(X, y, validation_fraction=0.3)
    assert a.k_ == b.k_
    np.testing.assert_allclose([r["val_loss"] for r in a.path_], [r["val_loss"] for r in b.path_],
                               rtol=1e-7)


def test_reference_fit_function_matches_the_estimator():
    """:func:`jaxtree.reference.fit` with a classification loss is the estimator's
    reference search (same choices) on the scaled covariates."""
    X, y01 = make_data(seed=1)
    est = jaxtree.TreeClassifier(k=2, basis=BASIS, refine="coordinate",
                                 engine="reference").fit(X, y01)
    # the estimator's covariate range (round bounds around the training extremes)
    xs = (X - np.asarray(est.model_.x_min)) * np.asarray(est.model_.x_scale)
    phi = np.asarray(BASIS.evaluate(jnp.asarray(xs)), np.float64)
    res = R.fit(phi, np.where(y01 == 1, 1.0, -1.0), 2, loss="logistic")
    assert res.choices == [(c["flat_index"], c["op"], c["slot"], c["feature"], c["basis"])
                           for c in est.choices_]
    np.testing.assert_allclose(res.history, est.history_, rtol=1e-10)


def test_reference_engine_input_errors():
    X, y = make_data(seed=1, n=20)
    with pytest.raises(ValueError, match="refine='coordinate' or refine=None"):
        jaxtree.TreeClassifier(k=1, engine="reference").fit(X, y)  # default refine='optax'
    with pytest.raises(ValueError, match="Unknown engine .numpy."):
        jaxtree.TreeClassifier(k=1, engine="numpy").fit(X, y)
    phi = np.zeros((4, 1, 2))
    with pytest.raises(ValueError, match=r"labels y in \{-1, \+1\}"):
        R.fit(phi, np.array([0.0, 1.0, 1.0, 0.0]), 1, loss="logistic")
    with pytest.raises(ValueError, match="loss must be one of"):
        R.fit(phi, np.ones(4), 1, loss="hinge")
