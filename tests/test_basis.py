"""Tests for jaxtree.basis: formulas, bounds, evaluate_at, transformations, config, errors."""

import json
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtree.basis import (
    PRESETS,
    Basis,
    Cosines,
    CustomFunction,
    Hats,
    Powers,
    Sines,
    TruncatedCubics,
    default_basis,
    get_basis,
    make_basis,
)

# Float64 numpy references, one per family: (family, list of functions of x).
_PI = np.pi


def _reference_columns(family):
    if isinstance(family, Hats):
        h = 1.0 / (family.n - 1)
        return [lambda x, t=m * h: np.maximum(0.0, 1.0 - np.abs(x - t) / h) for m in range(family.n)]
    if isinstance(family, Sines):
        return [lambda x, i=i: np.sin(i * _PI * x) for i in range(1, family.n + 1)]
    if isinstance(family, Cosines):
        return [lambda x, i=i: np.cos(i * _PI * x) for i in range(1, family.n + 1)]
    if isinstance(family, Powers):
        return [lambda x, d=d: x**d for d in range(1, family.degree + 1)]
    if isinstance(family, TruncatedCubics):
        return [
            lambda x, t=m / (family.n + 1): np.maximum(x - t, 0.0) ** 3
            for m in range(1, family.n + 1)
        ]
    raise AssertionError(family)


def _reference(basis, x):
    x = np.asarray(x, np.float64)
    cols = [c(x) for fam in basis.families for c in _reference_columns(fam)]
    return np.stack(cols, axis=-1)


FAMILIES = [Hats(2), Hats(10), Hats(21), Sines(20), Cosines(20), Powers(5), TruncatedCubics(9)]


def _inputs(seed, n=20_000):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.uniform(0.0, 1.0, n), np.linspace(0.0, 1.0, 2001)])


@pytest.mark.parametrize("family", FAMILIES, ids=repr)
def test_family_matches_numpy_float32(family):
    basis = Basis((family,))
    x = _inputs(1).astype(np.float32)
    got = np.asarray(jax.jit(basis.evaluate)(x), np.float64)
    want = _reference(basis, x.astype(np.float64))
    assert got.shape == (x.size, family.size)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-6)


@pytest.mark.parametrize("family", FAMILIES, ids=repr)
def test_family_matches_numpy_float64(family):
    basis = Basis((family,))
    x = _inputs(2)
    with jax.enable_x64(True):
        got = jax.jit(basis.evaluate)(jnp.asarray(x, jnp.float64))
        assert got.dtype == jnp.float64
        got = np.asarray(got)
    np.testing.assert_allclose(got, _reference(basis, x), rtol=0, atol=1e-12)


def test_trig_outside_unit_interval():
    # The argument reduction is valid on the whole line, not only on [0, 1].
    basis = Basis((Sines(7), Cosines(7)))
    x = np.linspace(-3.0, 3.0, 5001)
    with jax.enable_x64(True):
        got = np.asarray(basis.evaluate(jnp.asarray(x)))
    np.testing.assert_allclose(got, _reference(basis, x), rtol=0, atol=1e-12)


def test_default_functions_bounded():
    x = jnp.linspace(0.0, 1.0, 20_001)
    values = default_basis().evaluate(x)
    assert bool(jnp.all(jnp.abs(values) <= 1.0))
    for name in ["fourier"]:
        assert bool(jnp.all(jnp.abs(get_basis(name).evaluate(x)) <= 1.0))


def test_default_basis_contents():
    basis = default_basis()
    assert basis.q == 40
    assert len(basis.names) == 40
    for name in ["sin(3πx)", "cos(2πx)", "x²", "x", "x³", "sin(πx)", "hat(x; 0)"]:
        assert name in basis.names
    assert basis.names[:2] == ("hat(x; 0)", "hat(x; 0.1111)")
    assert "(x-0.1)₊³" in basis.names and "(x-0.9)₊³" in basis.names
    assert basis == make_basis()
    assert make_basis(hats=5).names[:5] == (
        "hat(x; 0)",
        "hat(x; 0.25)",
        "hat(x; 0.5)",
        "hat(x; 0.75)",
        "hat(x; 1)",
    )


def test_render():
    basis = default_basis()
    i_sin3 = basis.names.index("sin(3πx)")
    i_x2 = basis.names.index("x²")
    i_tc = basis.names.index("(x-0.3)₊³")
    assert basis.render(i_sin3, "x1") == "sin(3πx1)"
    assert basis.render(i_sin3, "age") == "sin(3π·age)"
    assert basis.render(i_x2, "age") == "age²"
    assert basis.render(i_x2, "a + b") == "(a + b)²"
    assert basis.render(i_tc, "x_2") == "(x_2-0.3)₊³"
    assert basis.render(0, "a + b") == "hat(a + b; 0)"
    assert [basis.render(i) for i in range(basis.q)] == list(basis.names)
    with pytest.raises(ValueError, match=r"\[0, 40\)"):
        basis.render(40, "x")
    with pytest.raises(TypeError, match="var must be a str"):
        basis.render(0, 3)


def _custom_basis():
    return make_basis(
        hats=4,
        sines=3,
        cosines=2,
        powers=3,
        truncated_cubics=2,
        functions=[("tanh", jnp.tanh), ("{x}⁴", lambda x: x**4), ("exp(-{x})", lambda x: jnp.exp(-x))],
    )


@pytest.mark.parametrize("make", [default_basis, _custom_basis, lambda: get_basis("fourier")])
def test_evaluate_at_matches_evaluate(make):
    basis = make()
    rng = np.random.default_rng(3)
    x = rng.uniform(0.0, 1.0, (257, 6)).astype(np.float32)
    index = rng.integers(0, basis.q, (257, 6)).astype(np.int32)
    full = np.asarray(basis.evaluate(x))
    want = np.take_along_axis(full, index[..., None], axis=-1)[..., 0]
    got = jax.jit(basis.evaluate_at)(x, index)
    assert got.shape == x.shape and got.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=0, atol=2e-6)
    # Broadcasting a single index over all x, for every index.
    every = basis.evaluate_at(x[None, :, 0], jnp.arange(basis.q, dtype=jnp.int32)[:, None])
    assert every.shape == (basis.q, 257)
    np.testing.assert_allclose(np.asarray(every), full[:, 0, :].T, rtol=0, atol=2e-6)
    if basis.q == 40:  # float64 once, on the basis with custom functions only (speed)
        return
    with jax.enable_x64(True):
        x64 = jnp.asarray(x, jnp.float64)
        full64 = np.asarray(basis.evaluate(x64))
        got64 = basis.evaluate_at(x64, index)
        assert got64.dtype == jnp.float64
        want64 = np.take_along_axis(full64, index[..., None], axis=-1)[..., 0]
        np.testing.assert_allclose(np.asarray(got64), want64, rtol=0, atol=1e-12)


def test_evaluate_at_out_of_range_and_dtype():
    basis = default_basis()
    x = jnp.full((3,), 0.5)
    got = basis.evaluate_at(x, jnp.array([-1, 0, 40]))
    assert bool(jnp.isnan(got[0])) and bool(jnp.isnan(got[2])) and not bool(jnp.isnan(got[1]))
    with pytest.raises(TypeError, match="index must be an integer array"):
        basis.evaluate_at(x, jnp.array([0.0, 1.0, 2.0]))


@pytest.mark.parametrize("shape", [(), (7,), (2, 3, 4)])
def test_shapes_and_dtypes(shape):
    basis = _custom_basis()
    x = jnp.full(shape, 0.3, jnp.float32)
    out = basis.evaluate(x)
    assert out.shape == shape + (basis.q,) and out.dtype == jnp.float32
    assert basis.evaluate(jnp.full(shape, 0.3, jnp.bfloat16)).dtype == jnp.bfloat16
    with jax.enable_x64(True):
        out64 = basis.evaluate(jnp.full(shape, 0.3, jnp.float64))
        assert out64.dtype == jnp.float64 and out64.shape == shape + (basis.q,)
        assert basis.evaluate(jnp.full(shape, 0.3, jnp.float32)).dtype == jnp.float32


def test_jit_vmap_and_grad():
    basis = _custom_basis()
    x = jnp.asarray(np.random.default_rng(4).uniform(size=(6, 5)), jnp.float32)
    eager = basis.evaluate(x)
    np.testing.assert_allclose(jax.jit(basis.evaluate)(x), eager, atol=1e-6)
    np.testing.assert_allclose(jax.vmap(basis.evaluate)(x), eager, atol=1e-6)
    index = jnp.arange(30, dtype=jnp.int32).reshape(6, 5) % basis.q
    np.testing.assert_allclose(
        jax.vmap(basis.evaluate_at)(x, index), basis.evaluate_at(x, index), atol=1e-6
    )
    # d/dx sin(2 pi x) = 2 pi cos(2 pi x)
    i_sin2 = basis.names.index("sin(2πx)")
    g = jax.grad(lambda t: basis.evaluate(t)[i_sin2])(jnp.float32(0.1))
    np.testing.assert_allclose(g, 2 * np.pi * np.cos(0.2 * np.pi), rtol=1e-5)


def test_hashable_static_argument():
    a, b = make_basis(sines=4), make_basis(sines=4)
    assert a == b and hash(a) == hash(b) and a is not b
    assert a != make_basis(sines=5)
    n_traces = 0

    def f(basis, x):
        nonlocal n_traces
        n_traces += 1
        return basis.evaluate(x).sum()

    jf = jax.jit(f, static_argnums=0)
    x = jnp.linspace(0.0, 1.0, 11)
    jf(a, x)
    jf(b, x)  # equal basis: cached, no retrace
    assert n_traces == 1
    jf(make_basis(sines=5), x)
    assert n_traces == 2
    # Custom functions compare by identity.
    fn = lambda x: 0.5 * x  # noqa: E731
    c1 = make_basis(functions=[("half", fn)])
    c2 = make_basis(functions=[("half", fn)])
    c3 = make_basis(functions=[("half", lambda x: 0.5 * x)])
    assert c1 == c2 and hash(c1) == hash(c2) and c1 != c3
    jf(c1, x)
    assert n_traces == 3


def test_add_concatenates():
    a, b = Basis((Sines(2),)), Basis((Powers(2),))
    ab = a + b
    assert ab.q == 4 and ab.names == a.names + b.names
    x = jnp.linspace(0.0, 1.0, 5)
    np.testing.assert_array_equal(ab.evaluate(x), jnp.concatenate([a.evaluate(x), b.evaluate(x)], -1))


def test_config_round_trip():
    basis = default_basis()
    cfg = basis.to_config()
    assert json.loads(json.dumps(cfg)) == cfg
    assert cfg["families"][0] == {"kind": "hats", "n": 10}
    assert Basis.from_config(cfg) == basis
    assert get_basis(cfg) == basis

    custom = _custom_basis()
    cfg = json.loads(json.dumps(custom.to_config()))
    assert {"kind": "function", "name": "tanh"} in cfg["families"]
    fns = {f.name: f.fn for f in custom.families if isinstance(f, CustomFunction)}
    rebuilt = Basis.from_config(cfg, custom_functions=fns)
    assert rebuilt == custom and rebuilt.names == custom.names
    with pytest.raises(ValueError, match="needs the custom basis function 'tanh'"):
        Basis.from_config(cfg)


@pytest.mark.parametrize(
    "cfg, match",
    [
        ({"families": [{"kind": "wavelets", "n": 3}]}, "unknown kind 'wavelets'"),
        ({"families": [{"kind": "hats", "m": 3}]}, "exactly the keys"),
        ({"families": [{"kind": "hats", "n": 1}]}, r"Hats.n must be an int >= 2"),
        ({"families": [{"kind": "sines", "n": "3"}]}, "must be an int"),
        ({"families": [3]}, "must be a dict with a 'kind' key"),
        ({"fams": []}, "exactly one key 'families'"),
        ({"families": []}, "at least one function"),
    ],
)
def test_from_config_errors(cfg, match):
    with pytest.raises(ValueError, match=match):
        Basis.from_config(cfg)


def test_custom_function_names_and_checks():
    basis = make_basis(
        hats=0, sines=0, cosines=0, powers=0, truncated_cubics=0,
        functions={"tanh": jnp.tanh, "{x}⁴": lambda x: x**4},
    )
    assert basis.names == ("tanh(x)", "x⁴")
    assert basis.render(0, "a + b") == "tanh(a + b)"
    assert basis.render(1, "a + b") == "(a + b)⁴"
    with pytest.warns(UserWarning, match=r"assumes \|phi\| <= 1"):
        make_basis(functions=[("big", lambda x: 3 * x)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_basis(functions=[("ok", lambda x: 2 * x - 1)])
    with pytest.raises(ValueError, match="must be elementwise"):
        make_basis(functions=[("sum", lambda x: jnp.sum(x))])
    with pytest.raises(ValueError, match="non-finite"):
        make_basis(functions=[("log", jnp.log)])
    with pytest.raises(TypeError, match="must be callable"):
        make_basis(functions=[("three", 3)])
    with pytest.raises(ValueError, match="non-empty"):
        make_basis(functions=[("", jnp.tanh)])
    with pytest.raises(TypeError, match="must be a str"):
        make_basis(functions=[(jnp.tanh, "tanh")])
    with pytest.raises(ValueError, match="not a valid template"):
        make_basis(functions=[("f({y})", jnp.tanh)])
    with pytest.raises(ValueError, match="must be unique"):
        make_basis(functions=[("t", jnp.tanh), ("t", jnp.sin)])
    with pytest.raises(TypeError, match=r"\(name, fn\) pair"):
        make_basis(functions=[jnp.tanh])


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"sines": -1}, ValueError, "sines must be an int >= 0; got -1"),
        ({"hats": 1}, ValueError, "hats must be 0"),
        ({"powers": 2.0}, TypeError, "powers must be an int"),
        ({"cosines": True}, TypeError, "cosines must be an int"),
        (
            {"hats": 0, "sines": 0, "cosines": 0, "powers": 0, "truncated_cubics": 0},
            ValueError,
            r"q == 0",
        ),
        ({"functions": "tanh"}, TypeError, "sequence of \\(name, fn\\) pairs"),
    ],
)
def test_make_basis_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        make_basis(**kwargs)


def test_get_basis():
    assert get_basis(None) == default_basis() == get_basis("default") == get_basis(" Default ")
    basis = make_basis(sines=2)
    assert get_basis(basis) is basis
    assert get_basis({"sines": 2}) == basis
    fourier = get_basis("fourier")
    assert fourier.q == 40 and "sin(20πx)" in fourier.names and "cos(20πx)" in fourier.names
    assert get_basis("splines").q == 40
    assert get_basis("polynomial").q == 23
    assert set(PRESETS) == {"default", "fourier", "splines", "polynomial", "physics"}
    assert get_basis("physics").q == 21 and get_basis("default+physics").q == 61
    with pytest.raises(ValueError, match=r"unknown basis 'wavelet'.*'fourier'"):
        get_basis("wavelet")
    with pytest.raises(ValueError, match=r"unknown basis option\(s\) \['sine'\]"):
        get_basis({"sine": 3})
    with pytest.raises(TypeError, match="basis must be None, a preset name"):
        get_basis(40)
    with pytest.raises(TypeError, match="tuple of families"):
        Basis(3)
    with pytest.raises(TypeError, match="must be one of"):
        Basis((Sines(2), "cosines"))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
def test_evaluate_axis_places_the_function_index(axis):
    # The function index may go anywhere (as in jnp.stack); the values are exactly the
    # default layout's, moved. The basis holds every family and a custom function.
    basis = make_basis(hats=3, sines=2, cosines=2, powers=2, truncated_cubics=2,
                       functions={"tanh": jnp.tanh})
    x = jnp.asarray(np.random.default_rng(0).uniform(size=(5, 3)))
    want = np.moveaxis(np.asarray(basis.evaluate(x)), -1, axis)
    got = basis.evaluate(x, axis=axis)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)
    jitted = jax.jit(lambda t: basis.evaluate(t, axis=axis))
    np.testing.assert_array_equal(np.asarray(jitted(x)), want)


@pytest.mark.parametrize("axis", [3, -4, 1.0, True, None])
def test_evaluate_axis_errors(axis):
    with pytest.raises(ValueError, match="axis must be an integer"):
        default_basis().evaluate(jnp.zeros((4, 2)), axis=axis)


# ------------------------------------------ each family's forms agree with its evaluation


def _tanh2(x):
    return jnp.tanh(2 * x)


ALL_FORMS = [
    Hats(2), Hats(7), Sines(9), Cosines(9), Powers(4), TruncatedCubics(5),
    CustomFunction("tanh(2{x})", _tanh2),
]


def _family_id(family):
    return f"{type(family).__name__}{family.size}"


def _points():
    # [0, 1] and beyond it (predict with clip=False evaluates there).
    rng = np.random.default_rng(11)
    return np.r_[np.linspace(-0.5, 1.5, 801), rng.uniform(0.0, 1.0, 500)]


@pytest.mark.parametrize("family", ALL_FORMS, ids=_family_id)
def test_parametric_form_matches_evaluate_float64(family):
    # Each function's parametric traced form (evaluate_params with its own params row) equals
    # its column of the array evaluation; eagerly, non-trigonometric families bit for bit.
    exact = not isinstance(family, (Sines, Cosines))
    with jax.enable_x64(True):
        x = jnp.asarray(_points(), jnp.float64)
        full = np.asarray(family.evaluate(x, {}))
        assert full.shape == (x.size, family.size) and full.dtype == np.float64
        params = family.params()
        assert len(params) == family.size
        for m, (a, b) in enumerate(params):
            got = family.evaluate_params(x, jnp.full(x.shape, a), jnp.full(x.shape, b), {})
            assert got.dtype == jnp.float64
            if exact:
                np.testing.assert_array_equal(np.asarray(got), full[:, m])
            else:
                np.testing.assert_allclose(np.asarray(got), full[:, m], rtol=0, atol=1e-12)
        # The same through Basis.evaluate_at (jitted; every function at every point).
        basis = Basis((family,))
        every = basis.evaluate_at(x[None, :], jnp.arange(basis.q, dtype=jnp.int32)[:, None])
        # (to an ulp: inside one jitted program XLA may fuse x * a - b differently)
        np.testing.assert_allclose(np.asarray(every).T, full, rtol=0,
                                   atol=1e-14 if exact else 1e-12)


@pytest.mark.parametrize("family", ALL_FORMS, ids=_family_id)
def test_family_renderings_match_evaluate(family):
    # For every function m: the sympy form (lambdified), the numpy and jax.numpy forms used by
    # to_callable, and the text name agree with the family's own evaluation and names.
    sp = pytest.importorskip("sympy")
    x = _points()
    with jax.enable_x64(True):
        full = np.asarray(family.evaluate(jnp.asarray(x, jnp.float64), {}))
        u = sp.Symbol("u", real=True)
        for m in range(family.size):
            expr = family.to_sympy(m, u, {"tanh(2{x})": lambda v: sp.tanh(2 * v)})
            np.testing.assert_allclose(sp.lambdify([u], expr, "numpy")(x) + 0 * x, full[:, m],
                                       rtol=0, atol=1e-12)
            np.testing.assert_allclose(family.to_numeric(np, m, x), full[:, m], rtol=0, atol=1e-12)
            got = family.to_numeric(jnp, m, jnp.asarray(x))
            np.testing.assert_allclose(np.asarray(got), full[:, m], rtol=0, atol=1e-12)
            assert family.render(m, "x") == Basis((family,)).names[m]


def test_family_latex_and_locate():
    assert Hats(5).to_latex(2, "x") == "\\operatorname{hat}(x; 0.5)"
    assert Sines(3).to_latex(2, "x_{1}") == "\\sin(3\\pi x_{1})"
    assert Cosines(3).to_latex(0, "x") == "\\cos(\\pi x)"
    assert Powers(3).to_latex(0, "x") == "x" and Powers(3).to_latex(2, "x") == "x^{3}"
    assert TruncatedCubics(9).to_latex(0, "x") == "(x - 0.1)_+^{3}"
    assert CustomFunction("tanh", jnp.tanh).to_latex(0, "x") == "\\operatorname{tanh}(x)"
    assert CustomFunction("{x}⁴", lambda v: v**4).to_latex(0, "y") == "y⁴"
    basis = _custom_basis()
    flat = [(fam, m) for fam in basis.families for m in range(fam.size)]
    assert [basis.locate(i) for i in range(basis.q)] == flat
    assert basis.locate(np.int64(4)) == (Sines(3), 0)
    with pytest.raises(ValueError, match=r"\[0, 17\)"):
        basis.locate(basis.q)
    with pytest.raises(TypeError, match="i must be an int"):
        basis.locate(1.0)


def test_evaluate_at_gradient_ignores_other_families():
    # evaluate_at runs every family's parametric form on every element and selects; the
    # discarded values (other families' parameters, x outside [0, 1]) must not leak into the
    # gradient: it equals the gradient of the selected column of evaluate.
    basis = _custom_basis()
    rng = np.random.default_rng(5)
    with jax.enable_x64(True):
        x = jnp.asarray(rng.uniform(-2.0, 3.0, 400), jnp.float64)
        index = jnp.asarray(rng.integers(0, basis.q, 400), jnp.int32)
        g_at = jax.jit(jax.grad(lambda v: basis.evaluate_at(v, index).sum()))(x)
        g_full = jax.jit(jax.grad(
            lambda v: jnp.take_along_axis(basis.evaluate(v), index[:, None], axis=1).sum()))(x)
        assert bool(jnp.all(jnp.isfinite(g_at)))
        np.testing.assert_allclose(np.asarray(g_at), np.asarray(g_full), rtol=1e-9, atol=1e-9)


# ------------------------------------------ the numpy form (Basis.host_evaluate)


@pytest.mark.parametrize("family", FAMILIES, ids=repr)
def test_host_evaluate_matches_numpy_float32_and_the_device(family):
    # the same operations in numpy on the host: within float32 rounding of the float64 truth
    # (as the device's), and of the device's values to that rounding (XLA may fuse a
    # multiply-add: a hat's x*(n-1) - m then rounds once, about (n-1)*eps/2 apart); a wrong
    # frequency, knot or sign is off by O(1)
    basis = Basis((family,))
    x = np.r_[_inputs(3), -0.25, 1.25].astype(np.float32)
    got = basis.host_evaluate(x)
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    assert got.shape == (x.size, family.size)
    np.testing.assert_allclose(got.astype(np.float64), _reference(basis, x.astype(np.float64)),
                               rtol=0, atol=2e-6)
    device = np.asarray(jax.jit(basis.evaluate)(x))
    np.testing.assert_allclose(got, device, rtol=0, atol=family.size * np.finfo(np.float32).eps)


@pytest.mark.parametrize("family", FAMILIES, ids=repr)
def test_host_evaluate_matches_numpy_float64(family):
    basis = Basis((family,))
    x = np.r_[_inputs(4), np.linspace(-3.0, 3.0, 501)]
    got = basis.host_evaluate(x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, _reference(basis, x), rtol=0, atol=1e-12)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_host_evaluate_places_the_function_index_as_evaluate(axis):
    # the default basis's layout (functions in the families' order) at every axis, the
    # scorer's (chunks, rows, p) with axis 2 among them
    basis = default_basis()
    x = np.random.default_rng(5).uniform(size=(3, 8, 4)).astype(np.float32)
    want = np.asarray(basis.evaluate(jnp.asarray(x), axis=axis))
    got = basis.host_evaluate(x, axis=axis)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=4 * np.finfo(np.float32).eps)


def test_host_evaluate_refuses_what_it_cannot_evaluate():
    custom = make_basis(hats=3, functions={"tanh": jnp.tanh})
    assert default_basis().on_host and not custom.on_host
    with pytest.raises(ValueError, match="CustomFunction.*Use evaluate"):
        custom.host_evaluate(np.zeros(3))
    with pytest.raises(ValueError, match="float array; got dtype int64"):
        default_basis().host_evaluate(np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="axis must be an integer"):
        default_basis().host_evaluate(np.zeros((4, 2)), axis=3)
