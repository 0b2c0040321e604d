"""Raw tables (issue 12, items 2 and 3): missing values and categorical covariates, encoded at
the boundary by jaxtree._inputs.encoding, through fit, predict, save/load, exports and the CLI."""

import json
import warnings

import numpy as np
import pytest

import jaxtree
from jaxtree import cli
from jaxtree import program as prog
from jaxtree._inputs import encoding as E

from _shared import GREEDY

pd = pytest.importorskip("pandas")

N = 240


def make_table(seed=0, n=N):
    """``y = 3·[c = b] + x``; ``z`` has 15% missing values (pure noise), ``c`` has a rare level
    ``r`` (2 rows: grouped into ``c=other``), ``flag`` is a bool column."""
    rng = np.random.default_rng(seed)
    c = rng.choice(["a", "b", "c"], n)
    c[:2] = "r"
    x = rng.uniform(0, 2, n)
    z = rng.uniform(-1, 1, n)
    z[rng.uniform(size=n) < 0.15] = np.nan
    flag = rng.uniform(size=n) < 0.5
    y = 3.0 * (c == "b") + x
    return pd.DataFrame({"c": c, "x": x, "z": z, "flag": flag}), y


def est(**kw):
    return jaxtree.TreeRegressor(**{"k": 2, **GREEDY, **kw})


@pytest.fixture(scope="module")
def fitted():
    df, y = make_table()
    return est().fit(df, y), df, y


def _leaf_names(e):
    a = prog.to_numpy(e.model_.program)
    leaves = (a["op"] == prog.LEAF) & (a["weight"] != 0)
    return {e.model_.feature_names[j] for j in a["feature"][leaves]}


# ------------------------------------------------------------------------ the oracle


def test_planted_level_is_recovered_with_its_sign(fitted):
    """A wrong encoding (levels shuffled, an off-by-one column, unseen levels or NaN mapped to
    a level) puts the jump of 3 on the wrong rows and fails here."""
    e, df, y = fitted
    assert e.score(df, y) > 0.999
    assert "c=b" in _leaf_names(e)
    probe = pd.DataFrame({"c": ["a", "b", "c", "r", "never seen"], "x": [1.0] * 5,
                          "z": [0.0] * 5, "flag": [False] * 5})
    p = e.predict(probe)
    np.testing.assert_allclose(p[1] - p[0], 3.0, atol=0.05)  # b is 3 above a, right sign
    np.testing.assert_allclose([p[2] - p[0], p[3] - p[0], p[4] - p[0]], 0.0, atol=0.05)
    assert list(e.encoded_feature_names_) == ["c=a", "c=b", "c=c", "c=other", "x", "z",
                                              "z missing", "flag"]
    assert list(e.feature_names_in_) == ["c", "x", "z", "flag"] and e.n_features_in_ == 4
    assert "3·[c = b]" in e.formula()  # an indicator leaf prints as [column = level]


# ------------------------------------------------------------------------ the encoder


def test_levels_are_sorted_deterministically_whatever_the_row_order():
    df, _ = make_table()
    a = E.fit(df)
    b = E.fit(df.sample(frac=1.0, random_state=3))
    assert a == b and a.columns[0].levels == ("a", "b", "c") and a.columns[0].other
    nums = pd.DataFrame({"code": pd.Categorical([100, 9, 10] * 5)})
    assert E.fit(nums).columns[0].levels == ("9", "10", "100")  # by value, not as text


def test_rare_levels_are_grouped_and_unseen_levels_go_to_other_or_zeros():
    c = np.array(["a"] * 10 + ["b"] * 8 + ["c"] * 6 + ["d"] * 3)
    df = pd.DataFrame({"c": c})
    spec = E.fit(df, min_frequency=5)
    assert spec.columns[0].levels == ("a", "b", "c") and spec.columns[0].other
    spec2 = E.fit(df, min_frequency=1, max_categories=3)  # a, b kept; c and d grouped
    assert spec2.columns[0].levels == ("a", "b") and spec2.feature_names_out == (
        "c=a", "c=b", "c=other")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unseen level joins "other" without a warning
        out = E.transform(spec2, pd.DataFrame({"c": ["c", "d", "zz", "a"]}))
    np.testing.assert_array_equal(out, [[0, 0, 1], [0, 0, 1], [0, 0, 1], [1, 0, 0]])
    spec3 = E.fit(df, min_frequency=1)  # every level kept: no other column
    assert not spec3.columns[0].other
    with pytest.warns(jaxtree.UnseenLevelWarning, match=r"1 value\(s\) in categorical "
                      r"column\(s\) \['c'\] that no training row had \(e.g. 'zz'\)"):
        out = E.transform(spec3, pd.DataFrame({"c": ["zz", "d"]}))
    np.testing.assert_array_equal(out, [[0, 0, 0, 0], [0, 0, 0, 1]])  # unseen: all zeros


def test_unseen_levels_warn_once_per_call_with_their_columns_and_count():
    """Levels no training row had, in columns without an "other" covariate: one warning per
    call naming every such column, the rows' count and a few levels; missing values and
    levels of training are no unseen levels, and the training table itself never warns."""
    df = pd.DataFrame({"c": list("aabbcc"), "d": list("xyxyxy"), "v": np.arange(6.0)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spec = E.fit(df, min_frequency=1)
        E.transform(spec, df)
    new = pd.DataFrame({"c": ["a", "q", "r", None], "d": ["x", "y", "z", "z"], "v": [0.0] * 4})
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = E.transform(spec, new)
    unseen = [w for w in got if issubclass(w.category, jaxtree.UnseenLevelWarning)]
    assert len(unseen) == 1, [str(w.message) for w in got]
    text = str(unseen[0].message)
    assert "4 value(s) in categorical column(s) ['c', 'd']" in text  # q, r; z twice
    assert "e.g. 'q', 'r', 'z'" in text
    names = spec.feature_names_out
    rows_c = out[:, [i for i, n in enumerate(names) if n.startswith("c=")]]
    np.testing.assert_array_equal(rows_c.sum(1), [1, 0, 0, 0])  # unseen and missing: none set


def test_missing_numeric_value_takes_the_training_minimum_and_an_indicator():
    df = pd.DataFrame({"v": [3.0, np.nan, 1.0, 2.0], "w": [1.0, 2.0, 3.0, 4.0]})
    spec = E.fit(df)
    assert spec.feature_names_out == ("v", "v missing", "w")
    out = E.transform(spec, df)
    np.testing.assert_array_equal(out, [[3, 0, 1], [1, 1, 2], [1, 0, 3], [2, 0, 4]])
    # NaN at predict time in a column without missing values in training: the same fill.
    out = E.transform(spec, pd.DataFrame({"v": [np.nan], "w": [np.nan]}))
    np.testing.assert_array_equal(out, [[1, 1, 1]])
    # A categorical column's missing values get an indicator, never a level.
    cat = pd.DataFrame({"c": ["a", None, "b", "a", "b", np.nan]})
    spec = E.fit(cat, min_frequency=1)
    assert spec.feature_names_out == ("c=a", "c=b", "c missing")
    np.testing.assert_array_equal(E.transform(spec, cat)[:, 2], [0, 1, 0, 0, 0, 1])


def test_numpy_arrays_and_every_form_of_categorical_features():
    df, y = make_table()
    want = E.fit(df)
    for cf in (["c"], [0], [True, False, False, False]):
        assert E.fit(df, categorical_features=cf) == want
    arr = df.to_numpy(dtype=object)  # numpy: names x1.., the categories by index
    spec = E.fit(arr, categorical_features=[0])
    assert spec.feature_names_out[:4] == ("x1=a", "x1=b", "x1=c", "x1=other")
    np.testing.assert_array_equal(E.transform(spec, arr), E.transform(want, df))
    zips = pd.DataFrame({"zip": [10001.0, 10002.0] * 5, "v": np.arange(10.0)})
    assert E.fit(zips, categorical_features=["zip"]).feature_names_out == (
        "zip=10001", "zip=10002", "v")
    with pytest.raises(ValueError, match="'nope'.*columns are"):
        E.fit(df, categorical_features=["nope"])
    with pytest.raises(ValueError, match="one entry per column"):
        E.fit(df, categorical_features=[True])
    with pytest.raises(TypeError, match="only column indices"):
        est(categorical_features=[0, "c"]).fit(df, y)
    with pytest.raises(ValueError, match="Unknown missing 'drop'.*'indicator', 'error'"):
        est(missing="drop").fit(df, y)


def test_numeric_tables_without_missing_values_are_not_copied_or_saved(tmp_path):
    X = np.random.default_rng(0).uniform(size=(50, 3))
    spec = E.fit(X)
    assert spec.is_identity and E.transform(spec, X) is X
    e = est().fit(X, X[:, 0])
    e.save(tmp_path / "m.json")
    d = json.loads((tmp_path / "m.json").read_text())
    assert "encoding" not in d  # the file format of numeric tables is unchanged
    # A NaN at predict time takes the low end of its column's range (the training minimum
    # rounded down, jaxtree._scaling.round_bounds): here 0.015 below a minimum of 0.0165.
    row = X[:1].copy()
    row[0, 0] = np.nan
    lo = X[:1].copy()
    lo[0, 0] = float(np.asarray(e.model_.x_min)[0])
    assert np.isclose(lo[0, 0], 0.015) and lo[0, 0] < X[:, 0].min()
    np.testing.assert_allclose(e.predict(row), e.predict(lo), rtol=1e-6)


# ------------------------------------------------------------------------ policies


def test_missing_error_refuses_missing_values_with_a_clear_message():
    df, y = make_table()
    with pytest.raises(ValueError, match=r"X contains \d+ missing value.*column 2 \('z'\).*"
                       r"missing='error'.*missing='indicator'"):
        est(missing="error").fit(df, y)
    with pytest.raises(ValueError, match="NaN or infinite"):
        est(missing="error").fit(df[["x", "z"]].to_numpy(), y)  # the usual message
    cat = df.assign(c=df["c"].where(np.arange(N) != 7, None), z=df["z"].fillna(0.0))
    with pytest.raises(ValueError, match=r"1 missing value.*column 0 \('c'\), the first at row 7"):
        est(missing="error").fit(cat, y)
    e = est(missing="error").fit(df.assign(z=df["z"].fillna(0.0)), y)
    with pytest.raises(ValueError, match=r"column 2 \('z'\).*missing='error'"):
        e.predict(df)
    assert not e.__sklearn_tags__().input_tags.allow_nan
    assert est().__sklearn_tags__().input_tags.allow_nan


def test_none_in_an_object_array_is_a_missing_value_as_nan_is():
    # Catches the refusal "X contains missing values (None/pd.NA). Impute or drop them" of an
    # object array (or a list) with None, whose DataFrame column, and jaxtree.predict, read
    # None as missing: the same fit as NaN, at fit and at predict; missing="error" refuses it.
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (60, 2))
    y = X[:, 0] + np.sin(3 * X[:, 1])
    Xn = X.copy()
    Xn[[4, 9], 0] = np.nan
    Xo = X.astype(object)
    Xo[[4, 9], 0] = None
    ref = est().fit(Xn, y)
    for table in (Xo, Xo.tolist()):
        got = est().fit(table, y)
        assert list(got.encoded_feature_names_) == list(ref.encoded_feature_names_)
        assert "x1 missing" in got.encoded_feature_names_ and got.formula() == ref.formula()
        np.testing.assert_array_equal(got.predict(table), ref.predict(Xn))
    plain = est().fit(X, y)  # None at predict in a column without missing values in training
    with pytest.warns(jaxtree.MissingValueWarning, match=r"\['x1'\]"):
        np.testing.assert_array_equal(plain.predict(Xo), plain.predict(Xn))
    with pytest.raises(ValueError, match=r"X contains missing values \(None/pd.NA\)"):
        est(missing="error").fit(Xo, y)
    assert Xo[4, 0] is None  # the user's array is untouched


def test_inf_is_not_missing(fitted):
    e, df, _ = fitted
    with pytest.raises(ValueError, match=r"X column 1 \('x'\) contains \d+ infinite"):
        e.predict(df.assign(x=np.inf))


def test_column_name_checks_still_work(fitted):
    e, df, _ = fitted
    with pytest.raises(ValueError, match="same order"):
        e.predict(df[["x", "c", "z", "flag"]])
    with pytest.warns(UserWarning, match="valid feature names"):
        e.predict(df.to_numpy(dtype=object))
    with pytest.raises(ValueError, match="X has 3 features, but predict is expecting 4"):
        with pytest.warns(UserWarning, match="valid feature names"):
            e.predict(df[["c", "x", "z"]].to_numpy(dtype=object))


# ------------------------------------------------------------------------ files, exports


def test_save_load_round_trip_restores_the_encoding(fitted, tmp_path):
    e, df, y = fitted
    path = tmp_path / "m.json"
    e.save(path)
    d = json.loads(path.read_text())
    assert d["encoding"]["columns"][0] == {"name": "c", "kind": "categorical",
                                           "levels": ["a", "b", "c"], "other": True,
                                           "indicator": False}
    back = jaxtree.load(path)
    assert back.encoding_ == e.encoding_
    assert list(back.feature_names_in_) == ["c", "x", "z", "flag"] and back.n_features_in_ == 4
    probe = df.head(20).assign(c=["zz"] + list(df["c"][1:20]))
    np.testing.assert_array_equal(back.predict(probe), e.predict(probe))
    # A corrupted entry is refused (the checksum removed, as for a hand-edited file).
    d["encoding"]["columns"][0]["levels"] = [1, 2]
    del d["checksum"]
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError, match="not a valid jaxtree model file: encoding column 0 levels"):
        jaxtree.load(path)


def test_exports_name_the_encoded_covariates(fitted):
    sympy = pytest.importorskip("sympy")
    e, df, _ = fitted
    expr = e.to_sympy()
    assert {str(s) for s in expr.free_symbols} <= set(e.encoded_feature_names_)
    assert "c=b" in {str(s) for s in expr.free_symbols}
    # Exports take the encoded covariates (the model's feature_names): encode the table first.
    Xe = E.transform(e.encoding_, df.head(10))
    f = jaxtree.export.to_callable(e.model_)
    np.testing.assert_allclose(np.asarray(f(Xe)), e.predict(df.head(10)), rtol=1e-5, atol=1e-5)
    syms = [sympy.Symbol(n, real=True) for n in e.encoded_feature_names_]
    g = sympy.lambdify(syms, e.to_sympy(clip=True), "numpy")
    np.testing.assert_allclose(g(*Xe.T.astype(np.float64)), e.predict(df.head(10)), rtol=1e-4,
                               atol=1e-4)


@pytest.mark.slow  # ~14 s; the planted encoding oracle stays in the default suite
def test_auto_target_transform_and_shapes_accept_raw_tables():
    df, y = make_table()
    e = est(target_transform="auto", categorical_features=["c"]).fit(df, y + 1.0)
    assert e.target_transform_ in ("identity", "log", "square") and e.score(df, y + 1.0) > 0.99
    assert list(e.encoded_feature_names_) == list(est().fit(df, y).encoded_feature_names_)
    s = est(k=1, shapes=2).fit(df, y)  # shape terms see the encoded covariates too
    assert s.score(df, y) > 0.99 and s.n_features_in_ == 4


# ------------------------------------------------------------------------ the CLI


@pytest.mark.slow  # ~20 s (a fit of its own): the CLI's raw-CSV encoding keeps its oracle
# in test_classifier.py::test_cli_classify_raw_csv_with_missing_cells_text_and_missing_labels
def test_cli_fits_and_predicts_a_raw_csv(tmp_path, capsys):
    df, y = make_table()
    raw = df.assign(y=y)
    raw.loc[5, "y"] = np.nan  # a missing target: the row is dropped
    path = tmp_path / "raw.csv"
    raw.to_csv(path, index=False)  # empty cells for NaN, text for c, True/False for flag
    model = tmp_path / "m.json"
    rc = cli.main(["fit", str(path), "--target", "y", "--k", "2", "--out", str(model)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "dropped 1 row(s) whose target 'y' is missing" in err
    assert "[c = b]" in out and "covariates after encoding" in out
    rc = cli.main(["predict", str(model), str(path), "--out", str(tmp_path / "p.csv")])
    assert rc == 0
    pred = np.loadtxt(tmp_path / "p.csv", skiprows=1)
    keep = np.arange(N) != 5
    api = est().fit(pd.read_csv(path).drop(columns="y")[keep].reset_index(drop=True), y[keep])
    np.testing.assert_allclose(pred, api.predict(pd.read_csv(path).drop(columns="y")), rtol=1e-5)
    back = jaxtree.load(model)
    assert list(back.feature_names_in_) == ["c", "x", "z", "flag"]
    assert cli.main(["show", str(model)]) == 0
    out = capsys.readouterr().out
    assert "c=b" in out and "raw columns: c (categorical: 3 levels + other)" in out
    # predict needs only the columns the formula uses.
    used = {back.feature_names_in_[j] for j in cli._used_columns(back)}
    assert {"c", "x"} <= used
    unused = [w for w in ["z", "flag"] if w not in used]
    pd.read_csv(path).drop(columns=unused).to_csv(tmp_path / "lean.csv", index=False)
    assert cli.main(["predict", str(model), str(tmp_path / "lean.csv"), "--out",
                     str(tmp_path / "p2.csv")]) == 0
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "p2.csv", skiprows=1), pred)
    pd.read_csv(path).drop(columns=["c"]).to_csv(tmp_path / "no_c.csv", index=False)
    capsys.readouterr()
    assert cli.main(["predict", str(model), str(tmp_path / "no_c.csv")]) == 2
    assert "'c' not found (the formula uses them)" in capsys.readouterr().err
