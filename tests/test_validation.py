"""Input validation at every public boundary (jaxtree._inputs.validation)."""

import copy
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import search
from jaxtree._inputs import validation as V

from _shared import GREEDY

N, P, K = 64, 3, 2  # one shape for the whole file: compilations are shared


def make_data(seed=0, n=N):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 2.0, size=(n, P))
    y = 0.5 * X[:, 0] ** 2 + 0.3 * np.sin(X[:, 1]) * X[:, 2]
    return X, y


def est(**kw):
    return jaxtree.TreeRegressor(k=K, refine=None, **{**GREEDY, **kw})


@pytest.fixture(scope="module")
def fitted():
    X, y = make_data()
    return est().fit(X, y), X, y


# ------------------------------------------------------------------- bad inputs to fit

BAD_FIT = [
    (lambda X, y: (X[:, 0], y), ValueError, r"2-D.*reshape\(-1, 1\)"),
    (lambda X, y: (X[None], y), ValueError, r"2-D"),
    (lambda X, y: (X, y[:-1]), ValueError, r"64 rows but y has 63"),
    (lambda X, y: (X, np.c_[y, y]), ValueError, r"y must be 1-D"),
    (lambda X, y: (X[:0], y[:0]), ValueError, r"empty"),
    (lambda X, y: (X[:, :0], y), ValueError, r"empty"),
    (lambda X, y: (X[:1], y[:1]), ValueError, r"at least 2 samples; got 1.*more data"),
    (lambda X, y: (X + 1j, y), V.ComplexDataError,
     r"real.*complex.*Complex data not supported"),
    (lambda X, y: (X, y + 0j), V.ComplexDataError, r"y must be real"),
    (lambda X, y: (X.astype(object) + 1j, y), V.ComplexDataError,
     r"complex value.*index \(0, 0\).*Complex data not supported"),
    (lambda X, y: (X.astype(str), y), TypeError, r"must hold numbers"),
    (lambda X, y: (np.array([["a", 1.0, 2.0]] * N, dtype=object), y), TypeError,
     r"non-numeric value 'a'.*could not convert string"),
    (lambda X, y: (np.array([[1.0, {"foo": "bar"}, 2.0]] * N, dtype=object), y), TypeError,
     r"index \(0, 1\).*float\(\) argument must be a string or a real number, not 'dict'"),
    (lambda X, y: ([[1.0, 2.0, 3.0], [1.0, 2.0]], y[:2]), ValueError, r"rectangular.*same length"),
    (lambda X, y: (np.array([[None, 1.0, 2.0]] * N, dtype=object), y), ValueError, r"missing values"),
    (lambda X, y: (np.where(np.arange(N)[:, None] == 5, np.nan, X), y), ValueError,
     r"X contains 3 NaN or infinite value\(s\), the first at row 5, column 0"),
    (lambda X, y: (X, np.where(np.arange(N) == 7, np.inf, y)), ValueError,
     r"y contains 1 infinite value\(s\), the first at row 7\. inf is not a missing value:"),
    (lambda X, y: (np.c_[np.where(np.arange(N) % 2, 1.5e308, -1.5e308), X[:, 1:]], y), ValueError,
     r"X column 0 holds values too large.*Rescale"),
]


@pytest.mark.parametrize("make, exc, match", BAD_FIT)
def test_bad_fit_inputs_raise_clear_errors(make, exc, match):
    X, y = make_data()
    Xb, yb = make(X, y)
    e = est(missing="error")  # NaN refused as before issue 12 (the default learns from it)
    with pytest.raises(exc, match=match):
        e.fit(Xb, yb)
    assert not hasattr(e, "model_")


def test_complex_input_is_both_a_type_and_a_value_error(fitted):
    """jaxtree's rule (TypeError for a bad dtype) and scikit-learn's (ValueError)."""
    e, X, _ = fitted
    for exc in (TypeError, ValueError):
        with pytest.raises(exc, match="Complex data not supported"):
            e.predict(X + 1j)


def test_object_arrays_of_numbers_are_converted_like_float64(fitted):
    e, X, y = fitted
    Xo = X.astype(object)
    Xo[0, 0] = int(round(X[0, 0]))  # Python ints, numpy floats and bools mix in one array
    Xo[1, 1] = True
    Xf = np.array(Xo.tolist(), dtype=np.float64)
    ref = est().fit(Xf, y)
    got = est().fit(Xo, y.astype(object))
    np.testing.assert_array_equal(got.predict(Xo), ref.predict(Xf))
    assert got.formula() == ref.formula()
    assert Xo.dtype == object and Xo[1, 1] is True  # the user's array is untouched


def test_object_columns_of_numbers_are_numeric_columns():
    """A pandas column of numbers stored as objects (e.g. after ``pd.concat`` with ``None``)
    is read as the float column it holds, with or without missing values: it once fitted only
    where a missing value sent the table through the encoding (an object column without one
    was refused as "not numeric" by the plain table's check)."""
    pd = pytest.importorskip("pandas")
    X, y = make_data()
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    obj = df.astype({"b": object})
    obj.iloc[0, 1] = True  # a bool is a 0/1 number, as in a float column
    flt = df.assign(b=df["b"].where(np.arange(N) != 0, 1.0))
    ref = est().fit(flt, y)
    got = est().fit(obj, pd.Series(y).astype(object))
    assert got.formula() == ref.formula() and obj["b"].dtype == object
    np.testing.assert_array_equal(got.predict(obj), ref.predict(flt))
    holes = obj.assign(b=obj["b"].where(np.arange(N) != 5, None))
    assert "b missing" in est().fit(holes, y).encoded_feature_names_
    with pytest.raises(TypeError, match=r"column\(s\) \['b'\] are not numeric"):
        est(categorical_features=None).fit(obj.assign(b=obj["b"].where(np.arange(N) != 5, "x")), y)


def test_inf_in_X_says_infinite_where_nan_is_a_missing_value():
    # Catches the contradiction of the default missing="indicator": NaN in X is learned from,
    # yet an inf read "X contains 1 NaN or infinite value(s) ... Remove or impute them"; and,
    # with a NaN in an earlier column, an inf named by its encoded column ("column 2 ('x2')",
    # the indicator of column 0 before it) instead of the table's.
    pd = pytest.importorskip("pandas")
    X, y = make_data()
    X[3, 1] = np.inf
    said = r"X contains 1 infinite value\(s\), the first at row 3, column 1\. inf is not a " \
           r"missing value \(NaN is\): drop those rows or replace the values first\.$"
    with pytest.raises(ValueError, match=said):
        est().fit(X, y)
    X[5, 0] = np.nan
    with pytest.raises(ValueError, match=said):
        est().fit(X, y)
    with pytest.raises(ValueError, match=r"X column 1 \('b'\) contains 1 infinite value\(s\), "
                       r"the first at row 3\. inf is not a missing value \(NaN is\)"):
        est().fit(pd.DataFrame(X, columns=["a", "b", "c"]), y)
    with pytest.raises(ValueError, match=r"X contains 1 infinite value\(s\), the first at row "
                       r"3, column 1\. inf is not a missing value: drop"):  # NaN is refused too
        est(missing="error").fit(np.where(np.isnan(X), 0.0, X), y)
    with pytest.raises(ValueError, match=r"X contains 2 NaN or infinite value\(s\).*Remove or "
                       "impute"):
        est(missing="error").fit(X, y)
    # predict names the table's own column too: the fitted encoding puts column 0's
    # indicator before column 2, which the encoded matrix's checks called "column 3"
    X[3, 1] = 0.5
    Z = X.copy()
    Z[7, 2] = np.inf
    with pytest.raises(ValueError, match=r"X column 2 contains 1 infinite value\(s\), the first "
                       r"at row 7\. inf is not a missing value \(NaN is\)"):
        est().fit(X, y).predict(Z)
    frame = est().fit(pd.DataFrame(X, columns=["a", "b", "c"]), y)
    with pytest.raises(ValueError, match=r"X column 2 \('c'\) contains 1 infinite value"):
        frame.predict(pd.DataFrame(Z, columns=["a", "b", "c"]))


@pytest.mark.parametrize("sw, match", [
    (np.ones(N - 1), r"shape \(64,\)"),
    (-np.ones(N), r"non-negative"),
    (np.zeros(N), r"positive sum"),
    (np.full(N, np.nan), r"sample_weight contains 64 NaN"),
    (np.eye(N)[3], r"at least 2 samples with positive sample_weight; got 1 \(of 64 rows\)"),
])
def test_bad_sample_weight(sw, match):
    X, y = make_data()
    with pytest.raises(ValueError, match=match):
        est().fit(X, y, sample_weight=sw)


@pytest.mark.parametrize("params, exc, match", [
    (dict(clip="yes"), TypeError, r"clip must be True or False"),
    (dict(chunk_size=0), ValueError, r"chunk_size"),
    (dict(engine="numpy"), ValueError, r"valid values are \['jax', 'reference'\]"),
])
def test_bad_params(params, exc, match):
    X, y = make_data()
    with pytest.raises(exc, match=match):
        jaxtree.TreeRegressor(k=K, refine=None).set_params(**params).fit(X, y)


# ---------------------------------------------------------------- bad inputs to predict


def test_predict_checks(fitted):
    e, X, y = fitted
    with pytest.raises(jaxtree.NotFittedError, match="not fitted yet.*Call fit"):
        est().predict(X)
    with pytest.raises(ValueError, match="X has 2 features, but predict is expecting 3 features "
                       "as input") as info:
        e.predict(X[:, :2])
    assert str(info.value).count("2 features") == 1  # one sentence, not the same one twice
    with pytest.raises(ValueError, match=r"X contains 1 infinite value\(s\).*row 1, column 1\. "
                       "inf is not a missing value"):
        e.predict(np.array([[0.0, 0.0, 0.0], [0.0, np.inf, 0.0]]))  # inf is never "missing"
    with pytest.raises(TypeError, match="complex"):
        e.predict(X + 1j)
    with pytest.raises(ValueError, match="64 rows but y has 2"):
        e.score(X, y[:2])


def test_functional_predict_validates_host_inputs_only(fitted):
    e, X, _ = fitted
    m = e.model_
    with pytest.raises(ValueError, match=r"1 infinite value\(s\), the first at row 0, column 1.*"
                       r"inf is not a missing value \(NaN is\)"):  # NaN is learned from
        jaxtree.predict(m, np.array([[0.0, np.inf, 0.0]]))
    with pytest.raises(ValueError, match="expecting 3 features as input"):
        jaxtree.predict(m, X[:, :2])
    with pytest.raises(ValueError, match="one row of 2 features"):
        jaxtree.predict(m, [0.1, 0.2])
    with pytest.raises(TypeError, match="must hold numbers"):
        jaxtree.predict(m, X.astype(str))
    # Lists and single rows are accepted.
    ref = np.asarray(jaxtree.predict(m, X[:2]))
    np.testing.assert_allclose(np.asarray(jaxtree.predict(m, X[:2].tolist())), ref)
    np.testing.assert_allclose(float(jaxtree.predict(m, X[0])), ref[0])
    # Transformations still work: tracers are never inspected.
    np.testing.assert_allclose(np.asarray(jax.jit(jaxtree.predict)(m, X[:2])), ref, rtol=1e-12)
    vm = jax.vmap(jaxtree.predict, in_axes=(None, 0))(m, X[:2])
    np.testing.assert_allclose(np.asarray(vm), ref, rtol=1e-12)
    # A concrete JAX array with a NaN is not inspected (no host transfer, no warning); the
    # missing-value rule runs inside the compiled function: each NaN takes the training
    # minimum, as a host array's does (issue 28; tests/test_predict_missing.py).
    filled = np.asarray(jaxtree.predict(m, jnp.full((1, P), jnp.nan)))
    np.testing.assert_allclose(filled, np.asarray(jaxtree.predict(m, m.x_min[None, :])),
                               rtol=1e-12)


# ------------------------------------------------------------------- accepted inputs


def test_integer_and_low_precision_floats_are_computed_in_float32():
    import ml_dtypes

    X, y = make_data()
    Xi = np.round(X * 10).astype(np.int64)
    for Xa in (Xi, Xi.astype(np.float16), Xi.astype(ml_dtypes.bfloat16), Xi.astype(np.int8)):
        e = est().fit(Xa, y)
        assert e.model_.x_min.dtype == jnp.float32
        pred = e.predict(Xa)
        assert pred.dtype == np.float64 and np.isfinite(pred).all()
    np.testing.assert_allclose(est().fit(Xi.astype(np.float16), y).predict(Xi), pred, rtol=1e-6)


def test_read_only_and_non_contiguous_inputs_are_accepted_and_never_modified():
    X, y = make_data()
    Xbig = np.asfortranarray(np.c_[X, X])[:, ::2]  # non-contiguous view
    assert not Xbig.flags.c_contiguous and not Xbig.flags.f_contiguous
    Xro, yro = X.copy(), y.copy()
    Xro.flags.writeable = False
    yro.flags.writeable = False
    sw = np.ones(N)
    sw.flags.writeable = False
    before = [a.copy() for a in (Xbig, Xro, yro, sw)]
    e = est().fit(Xro, yro, sample_weight=sw)
    e2 = est().fit(Xbig, y)
    e.predict(Xro), e.score(Xro, yro), e2.predict(Xbig), jaxtree.predict(e.model_, Xro)
    for a, b in zip((Xbig, Xro, yro, sw), before):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(e.predict(Xro), est().fit(X, y).predict(X))


def test_pandas_inputs():
    pd = pytest.importorskip("pandas")
    X, y = make_data()
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    e = est().fit(df, pd.Series(y))
    assert list(e.feature_names_in_) == ["a", "b", "c"]
    np.testing.assert_array_equal(e.predict(df), est().fit(X, y).predict(X))
    bad = df.copy()
    bad.iloc[4, 2] = np.nan
    with pytest.raises(ValueError, match=r"1 missing value.*row 4, column 2.*fillna"):
        est(missing="error").fit(bad, y)
    bad = df.copy()
    bad["c"] = pd.array([1] * (N - 1) + [None], dtype="Int64")
    with pytest.raises(ValueError, match=r"missing value.*row 63, column 2"):
        est(missing="error").fit(bad, y)
    with pytest.raises(ValueError, match=r"y contains 1 missing"):
        est().fit(df, pd.Series(np.where(np.arange(N) == 3, np.nan, y)))
    bad = df.copy()
    bad["c"] = "text"
    with pytest.raises(TypeError, match=r"column\(s\) \['c'\] are not numeric"):
        est(categorical_features=None).fit(bad, y)  # by default: a categorical column


# ---------------------------------------------------------------- degenerate data


def test_constant_column_never_wins():
    X, y = make_data()
    X = X.copy()
    X[:, 0] = 3.0  # lowest index: it would win every tie
    y = 0.5 * X[:, 1] ** 2 + 0.3 * X[:, 2]
    e = est().fit(X, y)
    assert all(c["feature"] != 0 for c in e.choices_)
    assert np.isfinite(e.predict(X)).all()
    assert e.status_ == search.STATUS_OK


def test_constant_y_gives_the_constant_model():
    X, _ = make_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e = est().fit(X, np.full(N, 2.5))
    np.testing.assert_array_equal(e.predict(X), 2.5)
    np.testing.assert_array_equal(e.predict(X * 100), 2.5)
    assert e.formula() == "y = 2.5"
    assert np.isfinite(e.history_).all() and e.history_[-1] == 0
    assert e.score(X, np.full(N, 2.5)) == 1.0


@pytest.mark.parametrize("scale", [1e30, 1e-30])
def test_extreme_y_scales_are_safe(scale):
    X, y = make_data()
    base = est().fit(X, y)
    e = est().fit(X, y * scale)
    arrays = jax.tree_util.tree_leaves(e.model_.program)
    assert all(np.isfinite(np.asarray(a)).all() for a in arrays)
    assert np.isfinite(e.history_).all()
    assert e.status_ == search.STATUS_OK
    np.testing.assert_allclose(e.predict(X) / scale, base.predict(X), rtol=1e-9, atol=1e-12)


def test_predict_clips_to_the_covariates_range(fitted):
    # the model's range: the training range, rounded out (jaxtree._scaling.round_bounds)
    e, X, _ = fitted
    lo = np.asarray(e.model_.x_min, np.float64)
    hi = lo + 1.0 / np.asarray(e.model_.x_scale, np.float64)
    assert (lo <= X.min(0)).all() and (hi >= X.max(0)).all()
    assert ((X.min(0) - lo) + (hi - X.max(0)) <= 0.0101 * (X.max(0) - X.min(0))).all()
    far = np.array([[1e6, -1e6, 50.0], [-1e3, 1e3, -50.0]])
    clipped = np.clip(far, lo, hi)
    np.testing.assert_allclose(e.predict(far), e.predict(clipped), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jaxtree.predict(e.model_, far)), e.predict(clipped), rtol=1e-12)
    raw = np.asarray(jaxtree.predict(e.model_, far, clip=False))
    assert not np.allclose(raw, e.predict(clipped))
    np.testing.assert_allclose(e.set_params(clip=False).predict(far), raw, rtol=1e-12)
    e.set_params(clip=True)


def test_warns_when_the_search_status_is_not_ok(monkeypatch):
    X, y = make_data()
    real = search.fit

    def bad_fit(*args, **kwargs):
        return real(*args, **kwargs)._replace(status=search.STATUS_NO_CANDIDATE)

    monkeypatch.setattr(search, "fit", bad_fit)
    with pytest.warns(RuntimeWarning, match="no finite candidate"):
        e = est().fit(X, y)
    assert e.status_ == search.STATUS_NO_CANDIDATE


def test_interrupt_leaves_the_estimator_unchanged():
    X, y = make_data()

    def stop(it, loss, info):
        if it == 1:
            raise KeyboardInterrupt

    fresh = est(callback=stop)
    with pytest.raises(KeyboardInterrupt):
        fresh.fit(X, y)
    assert not hasattr(fresh, "model_") and not hasattr(fresh, "history_")

    e = est().fit(X, y)
    old_model, old_dict = e.model_, jaxtree.model.to_dict(e.model_)
    old_history = e.history_.copy()
    e.set_params(callback=stop)
    with pytest.raises(KeyboardInterrupt):
        e.fit(X[::-1] * 2, y[::-1])
    assert e.model_ is old_model
    assert jaxtree.model.to_dict(e.model_) == old_dict
    np.testing.assert_array_equal(e.history_, old_history)


# ------------------------------------------------------------------- column names


NAMES = ["month", "day", "hour"]


@pytest.fixture(scope="module")
def fitted_frame():
    pd = pytest.importorskip("pandas")
    X, y = make_data()
    df = pd.DataFrame(X, columns=NAMES)
    return est().fit(df, y), df, y


def test_a_row_as_a_series_is_refused_with_the_one_row_frame_fix(fitted_frame):
    """``df.iloc[i]`` is a Series (of objects where the table mixes types): refused for its
    shape with the pandas fix, not for its dtype as a non-numeric 'column'."""
    e, df, y = fitted_frame
    mixed = df.assign(day=df["day"].astype(object).where(np.arange(len(df)) != 0, "x"))
    for X in (df.iloc[0], mixed.iloc[0], df["day"]):
        with pytest.raises(ValueError, match=r"must be 2-D.*pandas Series of \d+ values.*"
                           r"df\.iloc\[\[i\]\].*to_frame"):
            e.predict(X)
    with pytest.raises(ValueError, match=r"pandas Series of 64 values"):
        est().fit(df["day"], y)
    assert e.predict(df.iloc[[0]]).shape == (1,)


def test_reordered_columns_raise_instead_of_predicting_wrong(fitted_frame):
    e, df, y = fitted_frame
    swapped = df[["day", "month", "hour"]]
    # Without the check these predictions would silently come from swapped columns.
    assert not np.allclose(jaxtree.predict(e.model_, swapped.to_numpy()),
                           jaxtree.predict(e.model_, df.to_numpy()))
    for call in (e.predict, lambda X: e.score(X, y)):
        with pytest.raises(ValueError) as info:
            call(swapped)
        msg = str(info.value)
        assert msg.startswith("The feature names should match those that were passed during fit.\n"
                              "Feature names must be in the same order as they were in fit.\n")
        assert "Reordered columns: ['day', 'month']" in msg
        assert "X[['month', 'day', 'hour']]" in msg  # the fix


def test_unexpected_and_missing_columns_are_named(fitted_frame):
    e, df, _ = fitted_frame
    with pytest.raises(ValueError, match=r"unseen at fit time:\n- minute\n"
                       r"Feature names seen at fit time, yet now missing:\n- hour\n"):
        e.predict(df.rename(columns={"hour": "minute"}))
    with pytest.raises(ValueError, match=r"yet now missing:\n- hour\n"):
        e.predict(df[["month", "day"]])  # names first, as scikit-learn does
    with pytest.raises(ValueError, match=r"unseen at fit time:\n- extra\n"):
        e.predict(df.assign(extra=1.0))
    with pytest.raises(ValueError, match=r"same order.*\nSome columns are repeated"):
        e.predict(df[["month", "day", "hour", "hour"]])


def test_matching_columns_predict_silently(fitted_frame):
    e, df, y = fitted_frame
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pred = e.predict(df)
        e.score(df, y)
    np.testing.assert_array_equal(pred, est().fit(df.to_numpy(), y).predict(df.to_numpy()))


def test_names_on_one_side_only_warn_in_scikit_learns_words(fitted_frame, fitted):
    e, df, _ = fitted_frame
    with pytest.warns(UserWarning, match="^X does not have valid feature names, but TreeRegressor "
                      "was fitted with feature names$") as rec:
        e.predict(df.to_numpy())
    assert len(rec) == 1 and rec[0].filename == __file__  # points at the caller's line
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        e.predict(df.set_axis([0, 1, 2], axis=1))  # non-string column names are no names
    e_arr = fitted[0]
    with pytest.warns(UserWarning, match="^X has feature names, but TreeRegressor was fitted "
                      "without feature names$"):
        pred = e_arr.predict(df)
    np.testing.assert_array_equal(pred, e_arr.predict(df.to_numpy()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e_arr.predict(df.to_numpy())  # no names on either side: nothing to say


def test_check_feature_names_lists_at_most_five_names():
    pd = pytest.importorskip("pandas")
    fitted = [f"a{i}" for i in range(8)]
    X = pd.DataFrame(np.zeros((1, 8)), columns=[f"b{i}" for i in range(8)])
    with pytest.raises(ValueError) as info:
        V.check_feature_names(X, np.asarray(fitted, dtype=object))
    assert "- b4\n- ...\nFeature names seen" in str(info.value)


# ------------------------------------------------------- messages name the column


def test_messages_name_the_column_when_names_are_known(fitted_frame):
    pd = pytest.importorskip("pandas")
    e, df, y = fitted_frame
    e = copy.copy(e)
    e.missing = "error"  # NaN refused as before issue 12 (the default learns from it)
    bad = df.copy()
    bad.iloc[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"row 3, column 1 \('day'\)"):
        e.predict(bad)  # a DataFrame: pandas' missing-value check
    with pytest.raises(ValueError, match=r"X contains 1 NaN.*row 3, column 1 \('day'\)"):
        with pytest.warns(UserWarning, match="valid feature names"):
            e.predict(bad.to_numpy())  # an array: the names seen in fit
    with pytest.raises(ValueError, match=r"row 3, column 1 \('day'\)"):
        est(missing="error").fit(bad, y)
    with pytest.raises(ValueError, match=r"X contains 1 NaN.*row 3, column 1\.") as info:
        est(missing="error").fit(bad.to_numpy(), y)  # no names known: the index only
    assert "'day'" not in str(info.value)
    with pytest.raises(ValueError, match=r"X column 2 \('hour'\) holds values too large"):
        big = np.c_[df.to_numpy()[:, :2], np.where(np.arange(N) % 2, 1.5e308, -1.5e308)]
        V.check_representable(big, y, np.float64, feature_names=NAMES)
