"""A two-valued covariate (a 0/1 indicator) never gets a curve (issue 28 item 6).

Its rows reach only the end knots of a shape, so the ridge used to pin every inner knot at 0:
``f(color=G)`` printed and plotted as a 24-knot curve dipping to 0 between its two values.
Now a main shape on such a covariate is linear (two free values) and a pair with it is
linear along it, with the training predictions unchanged.
"""

import dataclasses
import re

import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import shapes as shapes_

N1, N2 = 12, 6


def _truth(X):
    b, x, v = X[:, 0], X[:, 1], X[:, 2]
    return 1.5 * b + np.sin(3 * x) + 0.8 * (v == 4.0) + b * x ** 2


@pytest.fixture(scope="module")
def fit():
    rng = np.random.default_rng(0)
    n = 600
    X = np.column_stack([rng.integers(0, 2, n).astype(float),   # a 0/1 indicator
                         rng.uniform(0, 2, n),                    # a smooth numeric effect
                         rng.choice([2.5, 4.0], n)])              # two values, not 0/1
    y = _truth(X) + 0.05 * rng.standard_normal(n)
    # the greedy search for the one-operation tree after the shapes, unrefined: the shapes
    # are what is checked, and its step compiles in half the time of the backfit step (and
    # without L-BFGS)
    est = jaxtree.TreeRegressor(k=1, shapes=4, shape_knots=(N1, N2), validation_fraction=None,
                                search="greedy", refine=None, random_state=0).fit(X, y)
    return est, X


def _linear(values, axis=0):
    """Second differences along ``axis`` vanish (relative to the values' size)."""
    d2 = np.diff(values, 2, axis=axis)
    return np.max(np.abs(d2)) <= 1e-5 * max(1.0, np.max(np.abs(values)))


def test_two_valued_covariates_get_lines_not_curves(fit):
    est, _ = fit
    terms = est.shape_terms()
    names = [t["features"] for t in terms]
    assert ("x1",) in names and ("x3",) in names, names  # both two-valued columns have a term
    assert any(len(f) == 2 and "x1" in f for f in names), names  # and a pair with the 0/1 one
    for t in terms:
        f, v = t["features"], t["values"]
        if len(f) == 1 and f[0] in ("x1", "x3"):
            assert _linear(v), (f, v)  # before: 0 at every inner knot, a dip between the ends
            assert abs(v[-1] - v[0]) > 0.3  # and the effect is there
        elif len(f) == 1:
            assert not _linear(v), (f, v)  # a numeric covariate keeps its curve
        else:
            for axis, name in enumerate(f):
                if name in ("x1", "x3"):
                    assert _linear(v, axis), (f, v)  # linear along the two-valued covariate


def test_training_predictions_are_those_of_the_end_knots(fit):
    est, X = fit
    model = est.model_
    spec, sh = model.shape_spec, model.shapes
    # The old representation: inner knots of the two-valued covariates' mains at 0.
    main = np.asarray(sh.main).copy()
    main[[0, 2], 1:-1] = 0.0
    old = dataclasses.replace(model, shapes=sh._replace(main=jnp.asarray(main, sh.main.dtype)))
    pred = est.predict(X)
    np.testing.assert_allclose(np.asarray(jaxtree.predict(old, X)), pred, atol=1e-4)
    truth = _truth(X)
    assert 1 - np.mean((pred - truth) ** 2) / np.var(truth) > 0.99
    assert spec.n1 == N1


def test_two_valued_linear_on_block_sums():
    spec = shapes_.ShapeSpec(n1=5, n2=3, max_terms=2, pairs=((0, 1),))
    mm = 9
    coef = jnp.asarray([0.5, 0.0, 0.0, 0.0, -0.3, 0, 0, 0, 0], jnp.float32)
    two = jnp.asarray([40.0, 0, 0, 0, 60.0, 0, 0, 0, 0], jnp.float32)
    got = np.asarray(shapes_.two_valued_linear(coef, two, 100.0, True, spec))
    np.testing.assert_allclose(got[:5], np.linspace(0.5, -0.3, 5), atol=1e-7)
    assert (got[5:] == 0).all()
    # A knot reached by a row: a curve, left alone.
    many = two.at[2].set(1.0)
    np.testing.assert_array_equal(shapes_.two_valued_linear(coef, many, 101.0, True, spec), coef)
    # A pair block (3 x 3, row-major): the first covariate two-valued (middle row empty).
    c2 = jnp.asarray([1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 5.0, 4.0, 1.0], jnp.float32)
    s2 = jnp.asarray([10.0, 10, 10, 0, 0, 0, 10, 10, 10], jnp.float32)
    got = np.asarray(shapes_.two_valued_linear(c2, s2, 60.0, False, spec)).reshape(3, 3)
    np.testing.assert_allclose(got[1], [3.0, 3.0, 2.0])
    np.testing.assert_allclose(got[[0, 2]], np.asarray(c2).reshape(3, 3)[[0, 2]])
    assert got.shape[0] * got.shape[1] == mm


def _printed_formula_values(est, X, tol):
    """The printed formula at ``X`` (in the model's columns, inside the training box):
    ``to_sympy(tol=...)``, which holds every coefficient term rounded and the shapes printed
    by name (``f(x2)``) exactly."""
    sp = pytest.importorskip("sympy")
    syms = [sp.Symbol(n, real=True) for n in est.model_.feature_names]
    values = sp.lambdify(syms, est.to_sympy(tol=tol), "numpy")(*X.T)
    return np.broadcast_to(np.asarray(values, np.float64), (len(X),))


def test_formula_prints_two_valued_mains_as_coefficients_and_holds_to_tol(fit):
    """A main shape on a two-valued covariate prints as ``c·x1`` (a 0/1 column) and ``c·x3``
    (values 2.5 and 4: its shift folded into the constant), not ``f(x1)``; the curve ``f(x2)``
    and the pair ``f(x1, x2)`` stay shapes; and the printed formula (those shapes read from
    their tables) is ``predict`` within tol of the half-range. Dropping the fold of the
    shapes' value at the lower level into the constant, or the shift of ``x3``, fails."""
    est, X = fit
    text = est.formula()
    assert re.search(r" [+-] [\d.]+·x1( |$)", text) and re.search(r" [+-] [\d.]+·x3( |$)",
                                                                     text), text
    assert "f(x1)" not in text and "f(x3)" not in text, text
    assert "f(x2)" in text and "f(x1, x2)" in text, text
    tol = 1e-3
    half = float(est.model_.y_scale) * est.model_.y_bound
    err = np.max(np.abs(_printed_formula_values(est, X, tol) - est.predict(X)))
    assert err <= tol * half, (err / half, text)


# ------------------------------------------------ tree leaves on a two-valued column


@pytest.fixture(scope="module")
def tree_fit():
    """A tree alone (no shapes) whose leaves fall on a 0/1 column and on a column of the two
    values 2.5 and 4 (the numpy reference engine: nothing compiled)."""
    rng = np.random.default_rng(1)
    n = 300
    X = np.column_stack([rng.integers(0, 2, n).astype(float), rng.uniform(0, 2, n),
                         rng.choice([2.5, 4.0], n)])
    y = 1.5 * X[:, 0] + 0.8 * (X[:, 2] == 4.0) + np.sin(3 * X[:, 1]) \
        + 0.05 * rng.standard_normal(n)
    est = jaxtree.TreeRegressor(k=4, shapes=0, engine="reference", refine=None, search="greedy",
                                validation_fraction=None).fit(X, y)
    return est, X


def test_leaves_on_two_valued_columns_print_as_lines_and_hold_to_tol(tree_fit):
    """A leaf on a column of two values is, on the rows, the line between the two values of
    its function: it prints as a coefficient on the column (``1.455·x1``, ``0.52·x3``, the
    shift of ``x3`` in the constant), not as the hat the search chose, and the printed
    formula is ``predict`` within tol of the half-range. A slope without the column's scale,
    a dropped shift, or the two ends swapped fail here; so does a formula that still prints
    the hats (the terms)."""
    est, X = tree_fit
    text = est.formula()
    leaves = {int(f) for f, w in zip(np.asarray(est.model_.program.feature),
                                     np.asarray(est.model_.program.weight)) if w != 0}
    assert {0, 2} <= leaves, text  # the search put leaves on both columns
    assert re.search(r" [+-] [\d.]+·x1( |$)", text) and re.search(r" [+-] [\d.]+·x3( |$)",
                                                                     text), text
    assert "(x1" not in text and "(x3" not in text and "x1;" not in text, text
    assert [c.two_valued for c in est.encoding_.columns] == [True, False, True]
    sp = pytest.importorskip("sympy")
    tol = 1e-3
    half = float(est.model_.y_scale) * est.model_.y_bound
    f = sp.lambdify([sp.Symbol(n, real=True) for n in est.model_.feature_names],
                    est.to_sympy(tol=tol), "numpy")
    err = np.max(np.abs(f(*X.T) - est.predict(X)))
    assert err <= tol * half, (err / half, text)
    # the model alone (no table encoding) prints the leaves' own functions
    assert "hat(x1" in est.model_.formula(), est.model_.formula()


def test_two_valued_marks_are_saved_and_loaded(tree_fit, tmp_path):
    """The marks travel in the model file (the encoding's numeric columns, ``two_valued``
    where set), so a loaded model prints the same formula; a file with a false mark is
    refused."""
    import json

    est, X = tree_fit
    path = tmp_path / "m.json"
    est.save(path)
    d = json.loads(path.read_text())
    assert [c.get("two_valued", False) for c in d["encoding"]["columns"]] == [True, False, True]
    back = jaxtree.load(path)
    assert back.formula() == est.formula()
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    assert not hasattr(back, "feature_names_in_")  # an array's fit, as before
    d["encoding"]["columns"][0]["two_valued"] = False
    del d["checksum"]  # a deliberately edited file
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError, match="two_valued must be true"):
        jaxtree.load(path)


def test_two_valued_columns_rule(monkeypatch):
    """The scaling's rule (:func:`jaxtree._scaling.two_valued`): exactly two values on the
    rows of positive weight. Catches a read that stops after the first block (a third value
    in the last row), one that counts rows of zero weight, and one that takes a constant
    column."""
    from jaxtree import _scaling as scaling_

    def rule(x, w):
        lo, hi, _, _ = scaling_.extremes(x, np.zeros(x.shape[0]), w)
        return tuple(int(j) for j in np.flatnonzero(scaling_.two_valued(x, w, lo, hi)))

    monkeypatch.setattr(scaling_, "TWO_VALUED_BLOCK", 8)
    rng = np.random.default_rng(3)
    n = 50
    x = np.column_stack([rng.integers(0, 2, n), rng.choice([2.5, 4.0], n), np.full(n, 7.0),
                         rng.integers(0, 2, n), rng.integers(0, 2, n),
                         rng.uniform(size=n)]).astype(np.float32)
    x[[0, 1], 0] = [0, 1]
    x[n - 1, 3] = 0.5  # a third value in the last row (beyond the first block)
    x[n - 2, 4] = 0.5  # ... on a row of zero weight
    w = np.ones(n)
    w[n - 2] = 0.0
    assert rule(x, None) == (0, 1)
    assert rule(x, w) == (0, 1, 4)
    assert rule(x[:, :1].astype(bool), None) == (0,)
    assert rule(x[:, :1].astype(np.int64), None) == (0,)
    assert rule(x[:, :1].astype(np.int64), w) == (0,)  # the weighted path's float64 extremes


def test_the_classifier_marks_its_columns_of_two_values():
    """The classifier's in-memory fit takes its marks from its own scaling, as the
    regressor's does: its encoding marks the 0/1 and the {2.5, 4} columns (not the
    continuous one, nor a category's level indicators), and its decision function's formula
    prints no basis function on them. Catches a classifier that drops the marks or marks an
    indicator."""
    import pandas as pd

    rng = np.random.default_rng(2)
    n = 400
    X = pd.DataFrame({"b": rng.integers(0, 2, n).astype(float), "x": rng.uniform(0, 2, n),
                      "v": rng.choice([2.5, 4.0], n),
                      "c": pd.Categorical(rng.choice(list("pq"), n))})
    logit = 2.0 * X["b"] - 1.5 * (X["v"] == 4.0) + np.sin(3 * X["x"]) - 0.5
    y = rng.uniform(size=n) < 1 / (1 + np.exp(-logit))
    est = jaxtree.TreeClassifier(k=4, search="greedy", random_state=0).fit(X, y)
    marks = {c.name: c.two_valued for c in est.encoding_.columns}
    assert marks == {"b": True, "x": False, "v": True, "c": False}, marks
    text = est.formula()
    assert "(b" not in text and "(v" not in text and "b;" not in text, text
