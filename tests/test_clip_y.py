"""A regressor's predictions stay near its training targets' range (TreeModel.clip_y,
jaxtree.model.predict's decision): the bound, the unclipped formula beside it, the exports,
jit/grad, save/load, and the classifier's decision function left alone."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import _target, export
from jaxtree.basis import make_basis

from _shared import GREEDY

SMALL = make_basis(hats=0, sines=2, cosines=2, powers=2, truncated_cubics=0)


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(300, 3))
    y = 2.0 + X[:, 0] * X[:, 1] + 0.5 * np.sin(3 * X[:, 2]) + 0.05 * rng.normal(size=300)
    return jaxtree.TreeRegressor(k=4, basis=SMALL, refine=None, **GREEDY).fit(X, y), X, y


def _bounds(y):
    half = (y.max() - y.min()) / 2
    m = _target.Y_CLIP_MARGIN * half
    return y.min() - m, y.max() + m


def _shifted(model, by):
    """The model with ``by`` added to its tree's intercept (scaled units): every prediction
    moves by ``by * y_scale``, so large shifts leave the targets' range."""
    program = model.program._replace(intercept=model.program.intercept + by)
    return dataclasses.replace(model, program=program)


def test_a_fitted_regressor_clips_and_its_formula_does_not(fitted):
    e, X, y = fitted
    assert e.model_.clip_y and _target.Y_CLIP_MARGIN == 0.1
    lo, hi = _bounds(y)
    raw = np.asarray(jaxtree.predict(e.model_, X, clip=False), np.float64)
    np.testing.assert_allclose(e.predict(X), np.clip(raw, lo, hi), rtol=1e-6)
    for by, edge in ((10.0, hi), (-10.0, lo)):  # far outside: exactly at the bound
        m = _shifted(e.model_, by)
        got = np.asarray(jaxtree.predict(m, X), np.float64)
        np.testing.assert_allclose(got, edge, rtol=1e-5)
        unclipped = np.asarray(jaxtree.predict(m, X, clip=False), np.float64)
        np.testing.assert_allclose(unclipped, raw + by * float(m.y_scale), rtol=1e-5)
        # the exports clip as predict does, and only with clip
        for backend in ("numpy", "jax"):
            f = export.to_callable(m, backend)
            np.testing.assert_allclose(np.asarray(f(X), np.float64), got, rtol=1e-5)
            g = export.to_callable(m, backend, clip=False)
            np.testing.assert_allclose(np.asarray(g(X), np.float64), unclipped, rtol=1e-5)


def test_sympy_clips_with_clip(fitted):
    sp = pytest.importorskip("sympy")
    e, X, _ = fitted
    m = _shifted(e.model_, 10.0)
    symbols = [sp.Symbol(n, real=True) for n in m.feature_names]
    f = sp.lambdify(symbols, export.to_sympy(m, clip=True), "numpy")
    np.testing.assert_allclose(f(*X.T), np.asarray(jaxtree.predict(m, X)), rtol=1e-5)
    g = sp.lambdify(symbols, export.to_sympy(m), "numpy")  # the formula
    np.testing.assert_allclose(g(*X.T), np.asarray(jaxtree.predict(m, X, clip=False)),
                               rtol=1e-5)


def test_clip_under_jit_and_grad(fitted):
    e, X, _ = fitted
    m = _shifted(e.model_, 10.0)
    x = jnp.asarray(X[:5], m.x_min.dtype)
    np.testing.assert_allclose(jax.jit(jaxtree.predict)(m, x), jaxtree.predict(m, x),
                               rtol=1e-6)
    # clipped: the prediction no longer moves with x; unclipped it does
    g = jax.grad(lambda v: jnp.sum(jaxtree.predict(m, v)))(x)
    assert np.all(np.asarray(g) == 0)
    g0 = jax.grad(lambda v: jnp.sum(jaxtree.predict(m, v, clip=False)))(x)
    assert np.any(np.asarray(g0) != 0)


def test_save_load_keeps_the_clip_and_older_files_load_without(fitted, tmp_path):
    e, X, _ = fitted
    path = tmp_path / "m.json"
    e.save(path)
    back = jaxtree.load(path)
    assert back.model_.clip_y
    np.testing.assert_array_equal(back.predict(X), e.predict(X))
    from jaxtree import model as model_

    d = model_.to_dict(e.model_)
    assert d["clip_y"] is True
    del d["clip_y"]
    d.pop("checksum")
    assert not model_.from_dict(d).clip_y  # a file saved before: predictions as before
    with pytest.raises(ValueError, match="clip_y"):
        model_.from_dict({**d, "clip_y": "yes"})


def test_the_classifiers_decision_function_is_not_clipped():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(200, 2))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    c = jaxtree.TreeClassifier(k=3, basis=SMALL, refine=None, **GREEDY).fit(X, y)
    assert not c.model_.clip_y
    f = np.asarray(c.decision_function(X))
    assert np.abs(f).max() > 1.1  # outside [-1, 1]: the range a clip would impose
