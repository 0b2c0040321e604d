"""Missing values at predict time (issue 28 item 5): one rule for ``est.predict`` and
``jaxtree.predict`` (a NaN in a column that had none in training takes the low end of its
range, the training minimum rounded down; one warning per call), and a ``missing="error"``
model refuses them on both paths, also after save and load (jaxtree._inputs.encoding,
jaxtree._inputs.validation.fill_missing, jaxtree.model)."""

import json
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import basis as B
from jaxtree._inputs import validation as V

SMALL = B.make_basis(hats=3, sines=2, cosines=2, powers=2, truncated_cubics=0)


def _fit(**kw):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 2.0, size=(64, 3))
    y = X[:, 0] ** 2 + np.sin(2 * X[:, 1]) + 0.5 * X[:, 2] + 0.05 * rng.standard_normal(64)
    est = jaxtree.TreeRegressor(k=3, basis=SMALL, search="greedy", validation_fraction=None,
                                refine="coordinate", **kw).fit(X, y)
    return est, X


@pytest.fixture(scope="module")
def fitted():
    return _fit()


def _with_nan(X):
    Xn = X[:6].copy()
    Xn[1, 1] = np.nan
    Xn[4, 1] = np.nan
    Xn[2, 2] = np.nan
    return Xn


def test_both_paths_give_nan_the_low_end_of_the_range_with_one_warning(fitted):
    # Catches: the two paths disagreeing (jaxtree.predict used to raise), a silent fill, more
    # than one warning per call, and a fill other than the low end of the model's range
    # (the training minimum rounded down, jaxtree._scaling.round_bounds).
    est, X = fitted
    Xn = _with_nan(X)
    low = np.asarray(est.model_.x_min, np.float64)
    assert (low <= X.min(0)).all() and (low < X.min(0)).any()  # rounded: the rule is seen
    want = est.predict(np.where(np.isnan(Xn), low, Xn))  # the documented value
    for predict in (est.predict, lambda A: np.asarray(jaxtree.predict(est.model_, A))):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            got = predict(Xn)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        said = [r for r in rec if issubclass(r.category, V.MissingValueWarning)]
        assert len(said) == 1, [str(r.message) for r in rec]
        msg = str(said[0].message)
        assert "3 missing value(s)" in msg and "['x2', 'x3']" in msg and "training minimum" in msg
        assert said[0].filename == __file__  # the user's line
    # Under jit the same rule runs inside the compiled function (no warning: not inspected).
    jitted = jax.jit(jaxtree.predict)(est.model_, jnp.asarray(Xn))
    np.testing.assert_allclose(np.asarray(jitted), want, rtol=1e-12)
    np.testing.assert_allclose(float(jaxtree.predict(est.model_, Xn[1])), want[1], rtol=1e-12)


def test_rows_without_nan_are_untouched_and_silent(fitted):
    est, X = fitted
    with warnings.catch_warnings():
        warnings.simplefilter("error", V.MissingValueWarning)
        a = est.predict(X[:6])
        b = np.asarray(jaxtree.predict(est.model_, X[:6]))
    np.testing.assert_allclose(a, b, rtol=1e-12)  # est.predict of 6 rows: on the host


def test_a_column_that_had_missing_values_uses_its_indicator_silently():
    # The learned rule (fill + indicator) is not the unlearned one: no warning for 'a', one
    # naming only 'b', the column without missing values in training.
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.uniform(size=64), "b": rng.uniform(size=64)})
    y = df.a.to_numpy() + df.b.to_numpy() + 0.02 * rng.standard_normal(64)
    df.loc[::7, "a"] = np.nan
    est = jaxtree.TreeRegressor(k=2, basis=SMALL, search="greedy", validation_fraction=None,
                                refine="coordinate").fit(df, y)
    new = df.iloc[:4].copy()
    new.iloc[1, 0] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error", V.MissingValueWarning)
        est.predict(new)
    new.iloc[2, 1] = np.nan
    with pytest.warns(V.MissingValueWarning, match=r"1 missing value\(s\) \(NaN\) in column\(s\) "
                                                   r"\['b'\]"):
        est.predict(new)
    # jaxtree.predict reads the encoded covariates: the table is refused, naming the way
    # (est.encode), and the encoded table predicts as est.predict does
    with pytest.raises(ValueError, match=r"X has 2 features, but jaxtree.predict is expecting 3.*est\.encode"):
        jaxtree.predict(est.model_, new)
    np.testing.assert_allclose(np.asarray(jaxtree.predict(est.model_, est.encode(new))),
                               est.predict(new), rtol=1e-6)
    cat = df.assign(c=pd.Categorical(np.where(df.b > 0.5, "u", "v")))
    est2 = jaxtree.TreeRegressor(k=2, basis=SMALL, search="greedy", validation_fraction=None,
                                 refine="coordinate").fit(cat, y)
    with pytest.raises(TypeError, match=r"column\(s\) \['c'\] of X are not numbers.*est\.encode"):
        jaxtree.predict(est2.model_, cat)
    with pytest.raises(TypeError, match=r"got TreeRegressor\. Pass est\.model_"):
        jaxtree.predict(est2, cat)


def test_a_missing_error_model_refuses_nan_on_both_paths_and_after_loading(tmp_path):
    # Catches: a missing="error" model silently filling (on either path), the rule lost on
    # save/load, and a message that does not say why or what to do.
    est, X = _fit(missing="error")
    assert est.model_.missing == "error"
    Xn = _with_nan(X)
    path = tmp_path / "m.json"
    est.save(path)
    assert json.loads(path.read_text())["missing"] == "error"
    loaded = jaxtree.load(path)
    for predict in (est.predict, lambda A: jaxtree.predict(est.model_, A), loaded.predict,
                    lambda A: jaxtree.predict(loaded.model_, A)):
        with pytest.raises(ValueError, match=r"3 NaN \(missing\) value\(s\)") as info:
            predict(Xn)
        msg = str(info.value)
        assert "row 1, column 1" in msg and "missing='error'" in msg and "missing='indicator'" in msg
    np.testing.assert_array_equal(loaded.predict(X[:6]), est.predict(X[:6]))


def test_a_default_model_file_has_no_missing_entry(fitted, tmp_path):
    # Files of the default rule stay as they were (no new key).
    est, _ = fitted
    path = tmp_path / "m.json"
    est.save(path)
    assert "missing" not in json.loads(path.read_text())
    assert jaxtree.load(path).model_.missing == "fill"
