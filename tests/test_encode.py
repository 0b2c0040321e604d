"""``est.encode(X)``: a table model used from JAX without private names (issue 28, item 6).

Planted bugs these catch: ``encode`` returning the raw table or another column order (the
pure prediction no longer equals ``est.predict``), a missing indicator column, encode
skipping the fitted check, the encoded matrix not differentiable through
:func:`jaxtree.predict`.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def table_fit():
    rng = np.random.default_rng(0)
    n = 200
    c = rng.choice(["red", "blue"], n)
    x = rng.uniform(0, 10, n)
    x[::17] = np.nan
    df = pd.DataFrame({"c": pd.Categorical(c), "x": x})
    y = 2.0 * (c == "red") + 0.3 * np.nan_to_num(x, nan=5.0) + 1.0 * np.isnan(x)
    est = jaxtree.TreeRegressor(k=2, search="greedy", validation_fraction=None, shapes=0)
    return est.fit(df, y), df


def test_encode_is_the_matrix_the_model_reads(table_fit):
    est, df = table_fit
    xe = est.encode(df)
    names = list(est.model_.feature_names)
    assert xe.shape == (len(df), len(names)) and xe.dtype.kind == "f"
    assert names == ["c=blue", "c=red", "x", "x missing"]
    np.testing.assert_array_equal(xe[:, 1], (df.c == "red").to_numpy(float))
    np.testing.assert_array_equal(xe[:, 3], df.x.isna().to_numpy(float))
    assert not np.isnan(xe).any()
    np.testing.assert_allclose(np.asarray(jaxtree.predict(est.model_, xe)), est.predict(df),
                               rtol=1e-12, atol=1e-12)


# slow: restates test_estimator.py::test_grad_matches_float64_finite_differences (jax.grad of
# jaxtree.predict in x = central differences) and
# test_estimator.py::test_functional_predict_under_jit_vmap_grad (jit and vmap of
# jaxtree.predict), with test_encode_is_the_matrix_the_model_reads (encode is a float matrix
# that jaxtree.predict reads as est.predict) on compilations of its own (vmap of grad of jit)
@pytest.mark.slow
def test_encoded_rows_go_through_jit_grad_and_vmap(table_fit):
    est, df = table_fit
    xe = jnp.asarray(est.encode(df.iloc[:8]))
    f = jax.jit(lambda r: jaxtree.predict(est.model_, r[None], clip=False)[0])
    grads = jax.vmap(jax.grad(f))(xe)
    assert grads.shape == xe.shape and bool(jnp.all(jnp.isfinite(grads)))
    # the derivative in x, by central differences of the same pure function
    h = 1e-4
    row = xe[0]
    fd = (f(row.at[2].add(h)) - f(row.at[2].add(-h))) / (2 * h)
    np.testing.assert_allclose(float(grads[0, 2]), float(fd), rtol=1e-5, atol=1e-7)


def test_encode_needs_a_fitted_estimator():
    with pytest.raises(jaxtree.NotFittedError, match="not fitted"):
        jaxtree.TreeRegressor().encode(np.zeros((2, 2)))
