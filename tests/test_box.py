"""The weight box never binds silently (issue 28, item 1).

The default ``y_bound=0.25`` maps ``y`` into ``[-0.25, 0.25]``: a linear effect needs the
weight ``2 * y_bound = 0.5``, inside the box ``|w| <= 1``, so linear laws print as
themselves (one leaf per effect). ``TreeRegressor.paper()`` keeps the paper's ``[-1, 1]``;
a weight that ends on the box is counted (``weights_at_bound_``) and warned about.

Planted bugs these catch: the default left at 1 (the linear laws print as cosine series,
``k_`` > 0), ``paper()`` moved off the paper's scaling (its ``y_scale`` is not the half
range), the count or the warning missing or always on, ``fit_batch``'s default apart from
the estimator's (a member is no longer the separate fit).
"""

import warnings

import numpy as np
import pytest

import jaxtree

ROWS = 300
LINEAR = jaxtree.make_basis(hats=0, sines=0, cosines=0, powers=1, truncated_cubics=0)


def _fit(X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error", jaxtree.WeightBoxWarning)  # the default must not bind
        return jaxtree.TreeRegressor(**kw).fit(X, y)


@pytest.mark.parametrize("a, printed", [(0.01, "0.01·x1"), (1.0, "x1"), (2.0, "2·x1"),
                                        (50.0, "50·x1")])
def test_a_linear_effect_prints_as_itself(a, printed):
    x = np.random.default_rng(0).uniform(-5, 5, (ROWS, 1))
    est = _fit(x, a * x[:, 0] + 3)
    assert est.formula() == f"y = 3 + {printed}"
    assert est.k_ == 0 and est.weights_at_bound_ == 0  # one leaf, inside the box
    assert est.get_params()["y_bound"] == 0.25
    np.testing.assert_allclose(est.predict(x), a * x[:, 0] + 3, atol=1e-6 * max(a, 1) * 5)


def test_two_linear_effects_print_as_themselves():
    X = np.random.default_rng(1).uniform(0, 1, (ROWS, 2))
    est = _fit(X, 2 * X[:, 0] - 3 * X[:, 1])
    assert est.k_ == 1 and est.weights_at_bound_ == 0  # one sum of two leaves
    terms = set(est.formula().removeprefix("y = ").replace(" - ", " + -").split(" + "))
    assert terms == {"2·x1", "-3·x2"}


@pytest.mark.slow  # ~20 s (a table's fit of its own): test_notation.py's indicator test
# (``3·[c = red]`` from a table, at the default y_bound) keeps the oracle
def test_an_indicator_effect_prints_as_a_coefficient():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"c": rng.choice(["red", "blue", "green"], ROWS),
                       "x": rng.uniform(0, 1, ROWS)})
    est = _fit(df, 3.0 * (df.c == "red").to_numpy())  # unnamed: the target is "y"
    assert est.formula() == "y = 3·[c = red]"


def test_paper_keeps_the_papers_scaling_and_reports_the_box():
    X = np.random.default_rng(3).uniform(0, 1, (ROWS, 2))
    y = 10.0 * X[:, 0] + 1.0  # needs w = 2 on the paper's scaling
    assert jaxtree.TreeRegressor.paper().y_bound == 1.0
    with pytest.warns(jaxtree.WeightBoxWarning, match=r"\[-1, 1\]"):
        paper = jaxtree.TreeRegressor.paper(k=0, basis=LINEAR).fit(X, y)
    span = y.max() - y.min()
    np.testing.assert_allclose(float(paper.model_.y_scale), span / 2, rtol=1e-12)
    assert paper.weights_at_bound_ == 1
    assert paper.score(X, y) < 0.999  # the box held the slope back
    default = _fit(X, y, k=0, basis=LINEAR, search="greedy", validation_fraction=None,
                   shapes=0)
    np.testing.assert_allclose(float(default.model_.y_scale), span / 2 / 0.25, rtol=1e-12)
    assert default.weights_at_bound_ == 0 and default.score(X, y) > 1 - 1e-9


def test_a_loaded_model_keeps_the_count_without_warning_again(tmp_path):
    X = np.random.default_rng(4).uniform(0, 1, (ROWS, 2))
    with pytest.warns(jaxtree.WeightBoxWarning):
        est = jaxtree.TreeRegressor.paper(k=0, basis=LINEAR).fit(X, 10.0 * X[:, 0])
    est.save(tmp_path / "m.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error", jaxtree.WeightBoxWarning)
        loaded = jaxtree.load(tmp_path / "m.json")
    assert loaded.weights_at_bound_ == est.weights_at_bound_ == 1
    assert loaded.y_bound == 1.0


def test_fit_batch_has_the_estimators_default_and_warns_per_data_set():
    rng = np.random.default_rng(5)
    X = rng.uniform(0, 1, (2, ROWS, 2))
    y = np.stack([10.0 * X[0, :, 0], (X[1, :, 1] - 0.5) ** 2])  # 1: no slope to hold
    kw = dict(k=0, refine="optax", search="greedy", basis=LINEAR)
    res = jaxtree.fit_batch(X, y, **kw)
    for b in range(2):
        est = _fit(X[b], y[b], validation_fraction=None, shapes=0, **kw)
        np.testing.assert_allclose(res[b].predict(X[b]), est.predict(X[b]), rtol=1e-9,
                                   atol=1e-9)
    with pytest.warns(jaxtree.WeightBoxWarning, match=r"data set\(s\) \[0\]"):
        paper = jaxtree.fit_batch(X, y, y_bound=1.0, **kw)
    assert paper[0].weights_at_bound_ == 1 and paper[0].y_bound == 1.0


@pytest.mark.parametrize("ops, left, right, w, want", [
    ([1], [-1], [-1], [1.0], 1),                                      # one leaf on the box
    ([1], [-1], [-1], [0.5], 0),
    ([3, 1, 1], [1, -1, -1], [2, -1, -1], [0, 1.0, 0.3], 0),          # w1*w2: scale moves to w2
    ([3, 1, 1], [1, -1, -1], [2, -1, -1], [0, 1.0, -1.0], 2),         # both factors on the box
    ([2, 1, 1], [1, -1, -1], [2, -1, -1], [0, -1.0, 0.3], 1),         # a sum cannot move scale
    ([3, 1, 2, 1, 1], [1, -1, 3, -1, -1], [2, -1, 4, -1, -1],         # w1 * (w3 + w4): the sum
     [0, 1.0, 0, 1.0, 0.2], 2),                                       # has no room (w3 = 1)
    ([3, 1, 2, 1, 1], [1, -1, 3, -1, -1], [2, -1, 4, -1, -1],
     [0, 1.0, 0, 0.4, 0.2], 0),
])
def test_weights_at_bound_counts_only_leaves_the_box_holds_back(ops, left, right, w, want):
    from jaxtree import program as prog
    from jaxtree.program import weights_at_bound

    leaf = [0 if o == prog.LEAF else -1 for o in ops]
    program = prog.from_arrays(ops, left, right, leaf, leaf, w, 0.0, len(ops))
    assert weights_at_bound(program) == want


def test_size_choice_does_not_follow_rounding_noise():
    from jaxtree._fit import select

    # noise-free data: every size's held-out loss is rounding (the path of y = 50 x1 + 3)
    noise = np.random.default_rng(0).exponential(size=60)  # per-row, common to every size
    mse = lambda *v: np.outer(v, noise)  # noqa: E731 - per-row losses of sizes with these MSEs
    jitter = np.random.default_rng(1).uniform(0.5, 1.5, size=(5, 60))
    assert select.choose_size(mse(1.4e-26, 9.2e-28, 9.2e-28, 6.5e-28, 8.8e-28) * jitter) == 0
    # real errors keep the paired rule: measured on the same rows, 0.0095 is resolved from the
    # best 0.0083 (the old unpaired 0.0083 * (1 + sqrt(2/60)) = 0.0098 took it)
    assert select.choose_size(mse(0.05, 0.010, 0.0083, 0.0084)) == 2
    assert select.choose_size(mse(0.05, 0.0095, 0.0083, 0.0084)) == 2


def test_the_formulas_tolerance_is_a_share_of_the_half_range_at_every_y_bound(tmp_path):
    # tol bounds the change of a prediction by the rounding, as a fraction of the target's
    # half-range; y_scale is that over y_bound, so a tolerance on y_scale would round 4x
    # more coarsely at the default y_bound=0.25 than the paper's 1.
    rng = np.random.default_rng(6)
    X = rng.uniform(0, 1, (ROWS, 2))
    y = np.sin(3 * X[:, 0]) + 0.3 * X[:, 1] ** 2
    tol = 1e-3
    for y_bound in (1.0, 0.25):
        est = jaxtree.TreeRegressor(k=3, search="greedy", validation_fraction=None, shapes=0,
                                    y_bound=y_bound, tol=None).fit(X, y)
        assert est.model_.y_bound == y_bound
        sp = pytest.importorskip("sympy")
        expr = est.to_sympy(tol=tol)
        f = sp.lambdify(sp.symbols("x1 x2"), expr, "numpy")
        err = np.max(np.abs(f(X[:, 0], X[:, 1]) - est.predict(X)))
        half = 0.5 * (y.max() - y.min())
        assert err <= tol * half, (y_bound, err / half)
    est.save(tmp_path / "m.json")
    assert jaxtree.load(tmp_path / "m.json").model_.y_bound == 0.25


def test_targets_far_from_zero_warn_that_float32_rounds_them():
    """A float32 model (float32 covariates) predicts ``y_center + y_scale * f`` in float32:
    targets ``1e6 + 3a + b`` come back rounded to steps of 0.0625, and the fit says so,
    naming a shift of y; targets near 0 and a float64 model do not warn (catches the warning
    always on, never on, or read from the float64 scaling instead of the model's)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(200, 2))
    y = 3 * X[:, 0] + X[:, 1]
    kw = dict(k=1, search="greedy", validation_fraction=None, shapes=0, refine=None)
    with pytest.warns(jaxtree.TargetPrecisionWarning, match=r"steps of 0\.062.*y - 1e\+06"):
        est = jaxtree.TreeRegressor(**kw).fit(X.astype(np.float32), 1e6 + y)
    assert est.model_.y_center.dtype == np.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error", jaxtree.TargetPrecisionWarning)
        jaxtree.TreeRegressor(**kw).fit(X.astype(np.float32), 1e3 + y)
        est = jaxtree.TreeRegressor(**kw).fit(X, 1e6 + y)  # float64 under the suite's x64
    assert est.model_.y_center.dtype == np.float64
