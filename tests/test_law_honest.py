"""``law()`` returns a law only when there is one (issue 28 item 3).

Planted laws come back exactly, their tiny constants cleaned as ``formula()`` cleans them
(``x1*x2``, ``sqrt(x1**2 + x2**2)``); fits of non-laws (``x1/(x2 + x3)``,
``exp(-x1)*sin(x2)``: long expansions with R² 0.9999) give None and a ``NoLawWarning`` that
says why. The four fits share one module fixture (one compilation for all).
"""

import dataclasses
import warnings

import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import shapes as shapes_
from jaxtree import simplify

sp = pytest.importorskip("sympy")

PLANTED = {  # name: (y(X), target_transform of the laws preset: fixed, one search each)
    "product": (lambda X: X[:, 0] * X[:, 1], None),
    "norm": (lambda X: np.sqrt(X[:, 0] ** 2 + X[:, 1] ** 2), "square"),
    "ratio": (lambda X: X[:, 0] / (X[:, 1] + X[:, 2]), "log"),
    "exp_sin": (lambda X: np.exp(-X[:, 0]) * np.sin(X[:, 1]), None),
}


@pytest.fixture(scope="module")
def fits():
    """The laws preset with ``k=10`` instead of its default bound of 20: the planted laws
    take 3 and 1 operations either way, and at 10 the non-laws' expansions already hold 55
    and 69 terms at R² > 0.999 (142 and 290 at 20), so every check below reads the same;
    the fits take half the time (the non-laws are grown to the bound)."""
    X = np.random.default_rng(0).uniform(1, 3, (400, 3))
    out = {}
    for name, (f, transform) in PLANTED.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[name] = jaxtree.TreeRegressor.for_laws(k=10, target_transform=transform).fit(
                X, f(X))
    return out, X


def test_planted_product_is_returned_exactly(fits):
    est = fits[0]["product"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", simplify.NoLawWarning)  # a law comes back without one
        law = est.law()
    # Before: 1.0*x1*x2 + 6.289e-8*x1 + 1.561e-7*x2 - 2.703e-7
    assert str(law) == "x1*x2", law
    found = simplify.find_law(est.model_)
    assert found.found and found.n_terms == 1 and found.reason == ""
    assert found.error <= simplify.LAW_TOL / 2


def test_planted_norm_agrees_with_formula(fits):
    est = fits[0]["norm"]
    assert est.target_transform_ == "square"
    with warnings.catch_warnings():
        warnings.simplefilter("error", simplify.NoLawWarning)  # a law comes back without one
        law = est.law()
    # Before: sqrt(1.0*x1**2 + 1.0*x2**2 - 2.708e-7), where formula() printed √(x1² + x2²)
    assert str(law) == "sqrt(x1**2 + x2**2)", law
    rhs = est.formula().split(" = ", 1)[1]
    assert rhs in ("√(x1² + x2²)", "√(x2² + x1²)"), est.formula()


@pytest.mark.parametrize("name", ["ratio", "exp_sin"])
def test_non_laws_say_that_no_compact_law_was_found(fits, name):
    est, X = fits[0][name], fits[1]
    assert est.score(X, PLANTED[name][0](X)) > 0.999  # a good fit, but no law
    with pytest.warns(simplify.NoLawWarning,
                      match=r"no compact law found: the simplified expression has \d+ terms "
                            r"\(a law has at most 6") as caught:
        assert est.law() is None
    assert "held-out MSE" in str(caught[0].message)  # the estimator quotes its held-out error
    found = simplify.find_law(est.model_)
    assert not found.found and found.n_terms > simplify.MAX_LAW_TERMS
    assert found.expr is not None and simplify.count_terms(found.expr) == found.n_terms
    assert f"has {found.n_terms} terms" in found.reason
    # The expansion is still there for whoever asks for it, and it is the model.
    f = sp.lambdify(sorted(found.expr.free_symbols, key=lambda s: s.name), found.expr, "numpy")
    used = sorted(int(s.name[1:]) - 1 for s in found.expr.free_symbols)
    pred = est.predict(X)
    assert np.max(np.abs(f(*X[:, used].T) - pred)) <= 1e-3 * np.ptp(pred)


def test_law_must_hold_to_the_tolerance(fits):
    # Scale the product model's target by 1.2345: its law is then 1.2345*x1*x2 (plus constants
    # that cancel), which one digit cannot hold.
    est = fits[0]["product"]
    model = dataclasses.replace(est.model_, y_scale=est.model_.y_scale * 1.2345,
                                y_center=est.model_.y_center * 1.2345)
    by_tol = simplify.find_law(model)
    assert by_tol.found, by_tol.reason
    ratio = sp.simplify(by_tol.expr / sp.Symbol("x1", real=True) / sp.Symbol("x2", real=True))
    assert ratio.is_number and abs(float(ratio) - 1.2345) < 1.2345 * 1e-3, by_tol.expr
    one_digit = simplify.find_law(model, digits=1)
    assert str(one_digit.expr) == "x1*x2" and not one_digit.found
    assert "differs from the fitted model" in one_digit.reason
    with pytest.warns(simplify.NoLawWarning, match="differs from the fitted model"):
        assert simplify.law(model, digits=1) is None
    # max_terms is the limit on the count: 1 term passes max_terms=1
    assert simplify.find_law(model, max_terms=1).found


def test_max_terms_none_returns_the_expansion(fits):
    est = fits[0]["exp_sin"]
    found = simplify.find_law(est.model_, max_terms=None)
    assert found.found and found.n_terms > simplify.MAX_LAW_TERMS
    assert found.error <= simplify.LAW_TOL / 2


def test_a_model_with_shape_terms_has_no_law(fits):
    est = fits[0]["product"]
    p = est.model_.x_min.shape[-1]
    spec = shapes_.ShapeSpec(n1=4, n2=3, max_terms=1, pairs=())
    sh = shapes_.init(p, spec, est.model_.x_min.dtype)
    sh = sh._replace(main_on=sh.main_on.at[0].set(True), order=sh.order.at[0].set(0),
                     n_terms=jnp.asarray(1, jnp.int32),
                     main=sh.main.at[0].set(jnp.asarray([0.0, 0.1, -0.1, 0.2], sh.main.dtype)))
    model = dataclasses.replace(est.model_, shapes=sh, shape_spec=spec)
    found = simplify.find_law(model)
    assert not found.found and found.expr is None and "1 shape term(s)" in found.reason


def test_count_terms():
    x1, x2, x3 = sp.symbols("x1 x2 x3")
    assert simplify.count_terms(sp.Float(8.99) * x1 * x2 / x3 ** 2) == 1
    assert simplify.count_terms(sp.sqrt(x1 ** 2 + x2 ** 2)) == 2
    assert simplify.count_terms(1 / x1 + sp.log(x2)) == 2
    assert simplify.count_terms((x1 + x2) * (x3 + 1)) == 4
    assert simplify.count_terms(sp.sin(2 * x1 - 1) * x2) == 2
    assert simplify.count_terms(sp.Integer(3)) == 1


@pytest.mark.parametrize("kwargs, match", [
    (dict(tol=0.0), "tol must be a positive number"),
    (dict(tol=float("nan")), "tol must be a positive number"),
    (dict(max_terms=0), "max_terms must be an int >= 1 or None"),
    (dict(digits=0), "digits must be an int >= 1"),
])
def test_bad_arguments(fits, kwargs, match):
    with pytest.raises(ValueError, match=match):
        simplify.find_law(fits[0]["product"].model_, **kwargs)
