"""Exports of a fitted model (jaxtree.export) and the estimator methods delegating to them."""

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
    return jaxtree.TreeRegressor(k=K, refine=None).fit(X, y), X, y


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
    mapped = e.to_sympy(custom_functions={"tanh": sp.tanh})
    f = sp.lambdify([sp.Symbol(n, real=True) for n in e.model_.feature_names], mapped, "numpy")
    np.testing.assert_allclose(f(*X.T), e.predict(X), rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_callables_equal_predict(fitted, fitted_all_families, backend):
    for e, X, _ in (fitted, fitted_all_families):
        f = export.to_callable(e.model_, backend)
        Xr = np.r_[random_inside(X), X * 2]  # outside the range too: both clip
        np.testing.assert_allclose(np.asarray(f(Xr)), np.asarray(jaxtree.predict(e.model_, Xr)),
                                   rtol=1e-5, atol=1e-8)
        np.testing.assert_allclose(np.asarray(f(Xr[0])), e.predict(Xr[:1])[0], rtol=1e-5)


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
    tex = e.to_latex()
    assert tex.startswith("y = ") and "\\left[" in tex and "x_{1}" in tex
    tex_all = fitted_all_families[0].to_latex()
    assert "\\," in tex_all and tex_all.count("\\,") >= 7
    assert export.to_latex(e.model_, digits=6) != tex


def test_latex_pieces_for_a_known_tree():
    X = np.random.default_rng(0).uniform(size=(80, 2))
    y = np.sin(3 * np.pi * X[:, 0]) + X[:, 1] ** 2
    basis = jaxtree.make_basis(hats=0, sines=3, cosines=0, powers=2, truncated_cubics=0)
    e = jaxtree.TreeRegressor(k=1, refine="coordinate", engine="reference", basis=basis).fit(X, y)
    tex = e.to_latex()
    assert "\\sin(3\\pi x_{1})" in tex and "x_{2}^{2}" in tex


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
    e = jaxtree.TreeRegressor()
    for method in ("to_sympy", "to_latex", "to_dot", "plot_tree", "plot_history"):
        with pytest.raises(jaxtree.NotFittedError, match="not fitted"):
            getattr(e, method)()
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
    if clip:
        np.testing.assert_array_equal(want, e.predict(Xt))  # the estimator clips by default
    assert np.std(want) > 1e-2  # the formula is not a constant
    tol = dict(rtol=1e-5, atol=1e-5 * np.abs(want).max())
    symbols = [sp.Symbol(n, real=True) for n in e.model_.feature_names]
    expr = e.to_sympy(clip=clip, custom_functions=SYMPY_COUNTERPARTS)
    f_sympy = sp.lambdify(symbols, expr, "numpy")
    np.testing.assert_allclose(f_sympy(*Xt.astype(np.float64).T), want, **tol)
    for backend in ("numpy", "jax"):
        f = export.to_callable(e.model_, backend, clip=clip)
        np.testing.assert_allclose(np.asarray(f(Xt), np.float64), want, **tol)
