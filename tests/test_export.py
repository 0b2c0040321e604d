"""Exports of a fitted model (jaxtree.export) and the estimator methods delegating to them."""

import contextlib

import matplotlib

matplotlib.use("Agg")

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import pytest

import jaxtree
from jaxtree import export
from jaxtree.basis import Basis, Cosines, CustomFunction, Hats, Powers, Sines, TruncatedCubics

from _shared import GREEDY

sp = pytest.importorskip("sympy")

N, P, K = 64, 3, 2


def make_data(seed=0, n=N):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 2.0, size=(n, P))
    y = 0.5 * X[:, 0] ** 2 + 0.3 * np.sin(2 * X[:, 1]) * X[:, 2] + 3.0
    return X, y


@pytest.fixture(scope="module")
def fitted():
    X, y = make_data()
    # The greedy search to exactly K operations: every export sees a tree of 2K+1 nodes (the
    # default's held-out size can keep fewer on these 64 rows).
    return jaxtree.TreeRegressor(k=K, refine=None, **GREEDY).fit(X, y), X, y


@pytest.fixture(scope="module")
def fitted_all_families():
    """Every built-in family, with the reference engine (no compilation)."""
    X, y = make_data(1)
    basis = jaxtree.make_basis(hats=3, sines=2, cosines=2, powers=3, truncated_cubics=2)
    e = jaxtree.TreeRegressor(k=6, refine=None, engine="reference", basis=basis).fit(X, y)
    return e, X, y


def random_inside(X, n=50, seed=3):
    rng = np.random.default_rng(seed)
    return rng.uniform(X.min(0), X.max(0), size=(n, X.shape[1]))


def test_sympy_equals_predict(fitted, fitted_all_families):
    for e, X, _ in (fitted, fitted_all_families):
        expr = e.to_sympy()
        symbols = [sp.Symbol(n, real=True) for n in e.model_.feature_names]
        f = sp.lambdify(symbols, expr, "numpy")
        Xr = random_inside(X)
        np.testing.assert_allclose(f(*Xr.T), e.predict(Xr), rtol=1e-5, atol=1e-8)
        # With clip=True the expression equals predict outside the training range too.
        fc = sp.lambdify(symbols, e.to_sympy(clip=True), "numpy")
        Xo = Xr * 3.0
        np.testing.assert_allclose(fc(*Xo.T), e.predict(Xo), rtol=1e-5, atol=1e-8)


def test_sympy_custom_functions():
    X, y = make_data()
    basis = jaxtree.make_basis(hats=0, sines=0, cosines=0, powers=1, truncated_cubics=0,
                               functions=[("tanh", jnp.tanh)])
    e = jaxtree.TreeRegressor(k=2, refine=None, engine="reference", basis=basis).fit(X, X[:, 1] ** 0 * np.tanh(X[:, 0]))
    expr = e.to_sympy()
    assert any(isinstance(f, sp.core.function.AppliedUndef) for f in expr.atoms(sp.Function))
    symbols = [sp.Symbol(n, real=True) for n in e.model_.feature_names]
    mapped = e.to_sympy(custom_functions={"tanh": sp.tanh})  # the formula: predict unclipped
    f = sp.lambdify(symbols, mapped, "numpy")
    np.testing.assert_allclose(f(*X.T), jaxtree.predict(e.model_, X, clip=False), rtol=1e-5,
                               atol=1e-8)
    clipped = e.to_sympy(custom_functions={"tanh": sp.tanh}, clip=True)  # predict's clips
    f = sp.lambdify(symbols, clipped, "numpy")
    np.testing.assert_allclose(f(*X.T), e.predict(X), rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_callables_equal_predict(fitted, fitted_all_families, backend):
    for e, X, _ in (fitted, fitted_all_families):
        f = export.to_callable(e.model_, backend)
        Xr = np.r_[random_inside(X), X * 2]  # outside the range too: both clip
        np.testing.assert_allclose(np.asarray(f(Xr)), np.asarray(jaxtree.predict(e.model_, Xr)),
                                   rtol=1e-5, atol=1e-8)
        np.testing.assert_allclose(np.asarray(f(Xr[0])), e.predict(Xr[:1])[0], rtol=1e-5)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_callables_apply_predicts_missing_value_rule(fitted, backend):
    # A NaN takes its covariate's training minimum, as in jaxtree.predict; a model fitted
    # with missing="error" refuses it on host arrays (numpy) or gives NaN under jit (jax).
    e, X, _ = fitted
    Xn = np.array(X[:6], np.float64)
    Xn[1, 0] = Xn[3, P - 1] = Xn[4, 1] = np.nan
    with pytest.warns(jaxtree.MissingValueWarning) if backend == "numpy" else \
            contextlib.nullcontext():
        got = np.asarray(export.to_callable(e.model_, backend)(Xn))
    with pytest.warns(jaxtree.MissingValueWarning):
        want = np.asarray(jaxtree.predict(e.model_, Xn))
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-8)
    strict = jaxtree.model.with_missing_rule(e.model_, "error")
    f = export.to_callable(strict, backend)
    if backend == "numpy":
        with pytest.raises(ValueError, match="missing='error'"):
            f(Xn)
    else:
        out = np.asarray(f(Xn))  # NaN where a NaN covariate enters the model, as under jit
        jitted = np.asarray(jax.jit(jaxtree.predict)(strict, jnp.asarray(Xn, jnp.float32)))
        assert np.isnan(out).any() and np.isfinite(out[[0, 2, 5]]).all()
        np.testing.assert_array_equal(np.isnan(out), np.isnan(jitted))
    np.testing.assert_allclose(np.asarray(f(X[:6])), np.asarray(jaxtree.predict(e.model_, X[:6])),
                               rtol=1e-5, atol=1e-8)  # rows without NaN as before


def test_numpy_callable_returns_numpy(fitted):
    e, X, _ = fitted
    out = export.to_callable(e.model_)(X)
    assert type(out) is np.ndarray and out.dtype == np.float64
    with pytest.raises(ValueError, match="backend"):
        export.to_callable(e.model_, "torch")


def test_jax_callable_is_differentiable(fitted):
    e, X, _ = fitted
    f = export.to_callable(e.model_, "jax", clip=False)
    g = jax.grad(lambda x: f(x))(jnp.asarray(X[0]))
    assert g.shape == (P,) and np.isfinite(np.asarray(g)).all()


def test_dot_has_2k_plus_1_nodes(fitted, fitted_all_families):
    for e, _, _ in (fitted, fitted_all_families):
        dot = e.to_dot()
        k = int(e.model_.program.n_slots) // 2
        nodes = [l for l in dot.splitlines() if "[label=" in l]
        edges = [l for l in dot.splitlines() if "->" in l]
        assert len(nodes) == 2 * k + 1 and len(edges) == 2 * k
        assert dot.startswith("digraph") and dot.rstrip().endswith("}")
        ops = [l for l in nodes if "shape=circle" in l]
        assert len(ops) == k and all('"+"' in l or '"*"' in l for l in ops)
        assert all("·" in l for l in nodes if "shape=box" in l)


def test_latex(fitted, fitted_all_families):
    e, _, _ = fitted
    tex = e.to_latex(scaled=True)  # the raw tree on the scaled covariates
    assert tex.startswith("y = ") and "\\left[" in tex and "x_{1}" in tex
    tex_all = fitted_all_families[0].to_latex(scaled=True)
    assert "\\," in tex_all and tex_all.count("\\,") >= 7
    assert export.to_latex(e.model_, digits=6, scaled=True) != tex
    # The default is the printed formula: original units, no scaled bracket.
    readable = e.to_latex()
    assert readable.startswith("y = ") and "\\left[" not in readable and "x_{1}" in readable
    assert export.to_latex(e.model_, digits=8) != readable


def test_latex_pieces_for_a_known_tree():
    X = np.random.default_rng(0).uniform(size=(80, 2))
    y = np.sin(3 * np.pi * X[:, 0]) + X[:, 1] ** 2
    basis = jaxtree.make_basis(hats=0, sines=3, cosines=0, powers=2, truncated_cubics=0)
    e = jaxtree.TreeRegressor(k=1, refine="coordinate", engine="reference", basis=basis).fit(X, y)
    tex = e.to_latex(scaled=True)
    assert "\\sin(3\\pi x_{1})" in tex and "x_{2}^{2}" in tex
    tex = e.to_latex()  # original units: the shift and range of each covariate written out
    assert "\\sin\\left(3\\pi \\frac{x_{1}" in tex and "^{2}" in tex


def test_plots_return_figures(fitted):
    e, _, _ = fitted
    fig = e.plot_tree()
    assert isinstance(fig, matplotlib.figure.Figure)
    assert len(fig.axes[0].texts) == 2 * K + 1
    fig2 = e.plot_history()
    assert isinstance(fig2, matplotlib.figure.Figure)
    assert len(fig2.axes[0].lines[0].get_xdata()) == K + 1
    fig3, ax = plt.subplots()
    assert export.plot_history(e, ax=ax) is fig3
    plt.close("all")


def test_unfitted_exports_raise():
    for e in (jaxtree.TreeRegressor(), jaxtree.TreeClassifier()):
        for method in ("to_sympy", "to_latex", "to_dot", "plot_tree", "plot_history",
                       "shape_terms", "plot_shapes", "formula"):
            with pytest.raises(jaxtree.NotFittedError, match="not fitted"):
                getattr(e, method)()
        scores = (("decision_function", "predict_proba")
                  if isinstance(e, jaxtree.TreeClassifier) else ())
        for method in ("explain", "plot_terms", "predict") + scores:
            with pytest.raises(jaxtree.NotFittedError, match="not fitted"):
                getattr(e, method)(np.zeros((2, 2)))
    e = jaxtree.TreeRegressor()
    with pytest.raises(TypeError, match="TreeModel"):
        export.to_dot(e)


def test_missing_sympy_gives_install_hint(fitted, monkeypatch):
    import builtins

    real = builtins.__import__

    def fake(name, *a, **kw):
        if name == "sympy":
            raise ImportError("no sympy")
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(ImportError, match=r"pip install jaxtree\[export\]"):
        fitted[0].to_sympy()
    assert fitted[0].to_latex().startswith("y = ")  # LaTeX does not need sympy


# ------------------------------------------------- every family alone: exports equal predict


def _tanh2(x):
    return jnp.tanh(2 * x)


ONE_FAMILY = {
    "hats": lambda: Hats(5),
    "sines": lambda: Sines(4),
    "cosines": lambda: Cosines(4),
    "powers": lambda: Powers(3),
    "truncated_cubics": lambda: TruncatedCubics(4),
    "custom": lambda: CustomFunction("tanh(2{x})", _tanh2),
}
SYMPY_COUNTERPARTS = {"tanh(2{x})": lambda u: sp.tanh(2 * u)}


@pytest.fixture(scope="module", params=sorted(ONE_FAMILY))
def fitted_one_family(request):
    """A float32 model whose basis is one family; target built from that family's later
    functions so the tree uses more than the first one. The reference engine fits without
    compiling (the jax engine compiles once per basis: ~15 s each on 2 loaded cores)."""
    basis = Basis((ONE_FAMILY[request.param](),))
    rng = np.random.default_rng(7)
    X = rng.uniform(-1.0, 2.0, size=(200, 3)).astype(np.float32)
    u = (X - X.min(0)) / (X.max(0) - X.min(0))
    phi = np.asarray(basis.evaluate(jnp.asarray(u, jnp.float64)))  # (n, 3, q)
    q = basis.q
    y = (phi[:, 0, q - 1] * phi[:, 1, q // 2] + 0.5 * phi[:, 2, min(1, q - 1)]).astype(np.float32)
    e = jaxtree.TreeRegressor(k=3, refine=None, engine="reference", basis=basis).fit(X, y)
    assert e.model_.x_min.dtype == np.float32
    # Test points inside the training range [-1, 2] and far outside it.
    Xt = np.r_[rng.uniform(-1.0, 2.0, (100, 3)), rng.uniform(-4.0, 5.0, (100, 3))]
    return e, Xt.astype(np.float32)


@pytest.mark.parametrize("clip", [True, False])
def test_each_family_exports_equal_predict(fitted_one_family, clip):
    # sympy (lambdified, float64), to_callable numpy (float64) and jax (float32) against the
    # float32 predictions: rtol 1e-5, and an absolute floor of 1e-5 of the largest prediction
    # for values near zero (measured worst absolute error 1.5e-6; a wrong knot, center or
    # frequency errs by 1e-2 or more).
    e, Xt = fitted_one_family
    want = np.asarray(jaxtree.predict(e.model_, Xt, clip=clip), np.float64)
    assert np.std(want) > 1e-2  # the formula is not a constant
    tol = dict(rtol=1e-5, atol=1e-5 * np.abs(want).max())
    if clip:  # the estimator clips by default (200 rows: computed on the host, float64)
        np.testing.assert_allclose(e.predict(Xt), want, **tol)
    symbols = [sp.Symbol(n, real=True) for n in e.model_.feature_names]
    expr = e.to_sympy(clip=clip, custom_functions=SYMPY_COUNTERPARTS)
    f_sympy = sp.lambdify(symbols, expr, "numpy")
    np.testing.assert_allclose(f_sympy(*Xt.astype(np.float64).T), want, **tol)
    for backend in ("numpy", "jax"):
        f = export.to_callable(e.model_, backend, clip=clip)
        np.testing.assert_allclose(np.asarray(f(Xt), np.float64), want, **tol)


# ------------------------------------------------------------ the printed formula (issue 12, 4)

import re

import pandas as pd

from jaxtree import program as prog_
from jaxtree.model import TreeModel


def _printed_to_python(text, indicator_columns=None):
    """The printed formula as a python expression (a small translator for its notations):
    tests the text itself, not another rendering of the same structure."""
    s = text.split(" = ", 1)[1]
    for label, col in (indicator_columns or {}).items():
        s = s.replace(f"[{label}]", f"V[{col!r}]")
    s = re.sub(r"hat\(([^;()]+); ([^ ]+) ± ([^)]+)\)", r"hat(\1, \2, \3)", s)
    s = re.sub(r"\(([^()]*)\)₊³", r"pos(\1)**3", s)
    s = s.replace("²", "**2").replace("³", "**3")
    s = re.sub(r"(\d)π", r"\1*π", s).replace("π·", "pi*").replace("π", "pi*")
    return s.replace("·", "*")


def _eval_printed(text, names, X, indicator_columns=None):
    env = dict(sin=np.sin, cos=np.cos, pi=np.pi, pos=lambda v: np.maximum(v, 0.0),
               hat=lambda x, c, h: np.maximum(1.0 - np.abs(x - c) / h, 0.0),
               V={n: X[:, j] for j, n in enumerate(names)})
    env.update({n: X[:, j] for j, n in enumerate(names) if n.isidentifier()})
    return eval(_printed_to_python(text, indicator_columns), env)  # noqa: S307 - test input


@pytest.mark.parametrize("tol", [1e-3, 1e-5])
def test_printed_formula_matches_predict_within_its_tolerance(fitted, fitted_all_families, tol):
    """Every family, covariates on [-1, 2] (so the shifts and ranges are real): the printed
    text, evaluated on fresh rows of the training box, is within tol * y_scale of the fitted
    function (predict with clip=False: a regressor's predict also clips the prediction to the
    training targets' range, which a row of the box may leave), and so is to_sympy(tol=...)
    (the same numbers); fewer digits for a looser tolerance."""
    for e, X, _ in (fitted, fitted_all_families):
        text = e.formula(tol=tol)
        assert text.startswith("y = ") and "[" not in text  # no scaled bracket
        Xr = random_inside(X, n=400, seed=11)
        want = np.asarray(jaxtree.predict(e.model_, Xr, clip=False), np.float64)
        bound = tol * float(e.model_.y_scale)
        got = _eval_printed(text, list(e.model_.feature_names), Xr)
        assert np.max(np.abs(got - want)) <= bound, (text, np.max(np.abs(got - want)), bound)
        symbols = [sp.Symbol(n, real=True) for n in e.model_.feature_names]
        f = sp.lambdify(symbols, e.to_sympy(tol=tol), "numpy")
        assert np.max(np.abs(f(*Xr.T) - want)) <= bound
        assert len(e.formula(tol=0.3)) <= len(text) <= len(e.formula(tol=1e-9))


def _model(op, left, right, feature, basis_index, weight, basis, x_min, x_scale, names,
           intercept=0.0, y_center=0.0, y_scale=1.0):
    cap = len(op)
    program = prog_.from_arrays(op, left, right, feature, basis_index, weight, intercept,
                                int(np.sum(np.asarray(op) != prog_.EMPTY)), np.float64)
    assert program.capacity == cap
    return TreeModel(program, jnp.asarray(x_min, jnp.float64), jnp.asarray(x_scale, jnp.float64),
                     jnp.asarray(y_center, jnp.float64), jnp.asarray(y_scale, jnp.float64),
                     basis, tuple(names))


def test_equal_terms_merge_and_product_weights_fold():
    L, A, M = prog_.LEAF, prog_.ADD, prog_.MUL
    basis = Basis((Sines(1), Powers(1)))  # 0: sin(πx), 1: x
    # 0.3·sin(πx1) + 0.2·sin(πx1) is one term.
    m = _model([A, L, L], [1, -1, -1], [2, -1, -1], [-1, 0, 0], [-1, 0, 0], [0, 0.3, 0.2],
               basis, [0, 0], [1, 1], ["x1", "x2"])
    assert m.formula() == "y = 0.5·sin(πx1)"
    # (0.5·u1)·(0.4·x2), u1 = (x1 - 10)/10: one coefficient, x1 in its own units; y's scale
    # and centre fold in too.
    m = _model([M, L, L], [1, -1, -1], [2, -1, -1], [-1, 0, 1], [-1, 1, 1], [0, 0.5, 0.4],
               basis, [10, 0], [0.1, 1], ["x1", "x2"], y_center=1.0, y_scale=2.0)
    assert m.formula() == "y = 1 + 0.04·x2·(x1 - 10)"
    assert m.formula(scaled=True) == "y = 1 + 2·[0 + 0.5·x1·0.4·x2]"


def test_printed_formula_is_in_original_units_and_scaled_form_stays_available():
    """Covariates on [10, 20] and [-4, 0]: a truncated cubic's knot and a power's shift are
    written in x's units, the scale folded into the coefficient (0.8·0.1³, 0.5·0.25²);
    formula(scaled=True) and to_latex(scaled=True) are the raw scaled tree."""
    L, A = prog_.LEAF, prog_.ADD
    basis = Basis((TruncatedCubics(1), Powers(2)))  # 0: (u - 0.5)₊³, 1: u, 2: u²
    m = _model([A, L, L], [1, -1, -1], [2, -1, -1], [-1, 0, 1], [-1, 0, 2], [0, 0.8, 0.5],
               basis, [10, -4], [0.1, 0.25], ["x1", "dep time"])
    # terms largest first: 0.03125·4² = 0.5 over the box, 0.0008·5³ = 0.1
    assert m.formula() == "y = 0.03125·(`dep time` + 4)² + 0.0008·(x1 - 15)₊³"
    assert m.formula(scaled=True) == "y = 0 + 0.8·(x1-0.5)₊³ + 0.5·(dep time)²"
    assert export.to_latex(m) == ("y = 0.03125\\, (\\mathrm{dep time} + 4)^{2} + 0.0008\\, "
                                  "(x_{1} - 15)_+^{3}")
    assert "\\left[" not in export.to_latex(m) and export.to_latex(m, scaled=True).startswith("y = 0")


def test_planted_indicator_prints_as_column_equals_level():
    """y = 3·[c = b] + x: the indicator leaf prints with its level and coefficient 3; the
    printed formula evaluates to predict within its tolerance (and so does to_sympy)."""
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"c": rng.choice(["a", "b", "c"], 200), "x": rng.uniform(10, 20, 200)})
    y = 3.0 * (df.c == "b") + df.x  # y_bound: weights up to 4 (the box |w| <= 1 would clip)
    basis = jaxtree.make_basis(hats=0, sines=2, cosines=0, powers=2, truncated_cubics=0)
    e = jaxtree.TreeRegressor(k=1, refine="coordinate", engine="reference", basis=basis,
                              coordinate_sweeps=10, y_bound=0.25).fit(df, y)
    text = e.formula()
    coef = re.search(r"([\d.]+)·\[c = b\]", text)
    assert coef and abs(float(coef.group(1)) - 3.0) < 0.01, text  # "y = x + 3·[c = b]"
    assert "c=b" not in text and "hat(" not in text
    assert "[\\text{c = b}]" in e.to_latex()
    fresh = pd.DataFrame({"c": rng.choice(["a", "b", "c"], 300),  # inside the training range
                          "x": rng.uniform(df.x.min(), df.x.max(), 300)})
    Xe = e._rows(fresh)
    names = list(e.encoded_feature_names_)
    labels = {"c = a": "c=a", "c = b": "c=b", "c = c": "c=c"}
    bound = 1e-3 * float(e.model_.y_scale)
    got = _eval_printed(text, names, Xe, labels)
    assert np.max(np.abs(got - e.predict(fresh))) <= bound
    f = sp.lambdify([sp.Symbol(n, real=True) for n in names], e.to_sympy(tol=1e-3), "numpy")
    assert np.max(np.abs(f(*Xe.T) - e.predict(fresh))) <= bound


def test_formula_options_are_checked(fitted):
    e = fitted[0]
    for bad in (0, -1e-3, float("nan"), "0.1", True):
        with pytest.raises(ValueError, match="tol must be a positive number"):
            e.formula(tol=bad)
    with pytest.raises(ValueError, match="digits must be an int >= 1"):
        e.formula(digits=0)
    assert e.formula(digits=2) != e.formula(digits=6)


def test_the_printed_formulas_sympy_holds_its_shape_terms():
    """``to_sympy(tol=...)`` is the printed formula, shape terms printed by name included
    (exactly, as their hats): within tol of the half-range of ``predict(clip=False)`` on a
    model with curved shapes. They were left out, 0.9 of the half-range off."""
    sp = pytest.importorskip("sympy")
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(300, 3))
    y = np.sin(6 * X[:, 0]) + np.abs(X[:, 1] - 0.5) * 3 + X[:, 2]
    est = jaxtree.TreeRegressor(k=2, shapes=2, shape_knots=(6, 4), search="greedy",
                                validation_fraction=None, random_state=0).fit(X, y)
    assert "f(x1)" in est.formula() and "f(x2)" in est.formula(), est.formula()
    tol = 1e-3
    f = sp.lambdify([sp.Symbol(n, real=True) for n in est.model_.feature_names],
                    est.to_sympy(tol=tol), "numpy")
    pred = np.asarray(jaxtree.predict(est.model_, X, clip=False))
    half = 0.5 * float(y.max() - y.min())
    assert np.max(np.abs(f(*X.T) - pred)) <= tol * half
