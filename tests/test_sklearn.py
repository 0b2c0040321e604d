"""scikit-learn conformance of TreeRegressor (scikit-learn is imported by tests only).

The full ``parametrize_with_checks`` suite runs with ``engine="reference"`` by default: the
checks exercise the estimator wrapper (validation, scaling, weights, fitted attributes,
cloning, pickling), which both engines share, and the reference engine compiles nothing per
data shape. The same suite with the default ``engine="jax"`` is marked ``slow``: each of the
checks' ~20 distinct data shapes compiles the search step once (~8 s each on 2 CPU cores).
"""

import pickle
import re
import sys

import jax
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import jaxtree

from _shared import GREEDY

N, P, K = 64, 3, 2  # one shape for the jax-engine tests: compilations are shared

EXPECTED_FAILED_CHECKS = {}
"""No check fails with the reference engine: complex input raises a ValueError (that is also
a TypeError, see jaxtree._inputs.validation.ComplexDataError) and object arrays of numbers are
converted, as scikit-learn expects."""

FLOAT32_FAILED_CHECKS = {"check_sample_weight_equivalence_on_dense_data": (
    "with x64 disabled jaxtree computes in float32, and fitting with integer weights differs "
    "from fitting repeated rows by float32 rounding: measured 1 ulp (max relative difference "
    "1.19e-07 on 2 of 15 predictions, default TreeRegressor()), above the check's rtol=1e-07. "
    "The sums run in another order (w*x once against x repeated w times); with x64 enabled "
    "the check passes. test_integer_weights_equal_repeated_rows_in_float32 bounds the "
    "difference instead."
)}
"""Only when x64 is off (this suite enables x64 in conftest.py, so it applies to users
running ``check_estimator(TreeRegressor())`` in a default JAX process)."""


# The jax engine's default validation_fraction="auto" holds out a fifth of the rows on small
# in-memory fits of at least 20 rows, so a weighted fit and the repeated rows it stands for
# could choose different sizes. It is not listed as an expected failure: on
# check_sample_weight_equivalence_on_dense_data's data (15 rows, 9 of positive weight,
# repeated into 27) the weighted fit holds out nothing, the repeated one a fifth of its rows,
# and both keep k = 2 and the same tree (the check passes; scikit-learn 1.9.1, x64). Should a later
# scikit-learn's data split them apart, this slow test says so.


def _expected_failed(estimator):
    failed = dict(EXPECTED_FAILED_CHECKS)
    if not jax.config.jax_enable_x64:
        failed.update(FLOAT32_FAILED_CHECKS)
    return failed


def make_data(seed=0, n=N):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 2.0, size=(n, P))
    y = 0.5 * X[:, 0] ** 2 + 0.3 * np.sin(2 * X[:, 1]) * X[:, 2]
    return X, y


def est(**kw):
    kw = {"k": K, "refine": None, **kw}
    return jaxtree.TreeRegressor(**kw)


@parametrize_with_checks([est(engine="reference", chunk_size=64)],
                         expected_failed_checks=_expected_failed)
def test_sklearn_checks_reference_engine(estimator, check):
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks([est(chunk_size=64)], expected_failed_checks=_expected_failed)
def test_sklearn_checks_jax_engine(estimator, check):
    check(estimator)


def test_core_does_not_import_sklearn():
    import subprocess

    code = ("import sys, jaxtree, jaxtree.export; "
            "assert not any(m == 'sklearn' or m.startswith('sklearn.') for m in sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_not_fitted_error_is_both_classes():
    from sklearn.exceptions import NotFittedError

    X, _ = make_data()
    for method in ("predict", "formula", "to_sympy", "to_latex", "to_dot"):
        with pytest.raises(NotFittedError) as info:
            getattr(est(), method)(X) if method == "predict" else getattr(est(), method)()
        assert isinstance(info.value, jaxtree.NotFittedError)


def test_pipeline_and_grid_search():
    X, y = make_data()
    pipe = make_pipeline(StandardScaler(), est(engine="reference")).fit(X, y)
    assert pipe.predict(X).shape == (N,)
    assert pipe.score(X, y) > 0.5
    grid = GridSearchCV(est(engine="reference"), {"k": [1, 3]}, cv=2).fit(X, y)
    assert grid.best_params_["k"] in (1, 3)
    assert grid.best_estimator_.model_.program.max_k == grid.best_params_["k"]


def test_clone_and_pickle_round_trip():
    X, y = make_data()
    e = est().fit(X, y)
    c = clone(e)
    assert c.get_params() == e.get_params() and not hasattr(c, "model_")
    e2 = pickle.loads(pickle.dumps(e))
    np.testing.assert_array_equal(e2.predict(X), e.predict(X))
    assert e2.formula() == e.formula()


def test_pandas_feature_names():
    X, y = make_data()
    df = pd.DataFrame(X, columns=["age", "dose", "weight"])
    e = est().fit(df, y)
    np.testing.assert_array_equal(e.feature_names_in_, ["age", "dose", "weight"])
    assert "age" in e.formula()
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        np.testing.assert_array_equal(e.predict(df), e.predict(X))
    e.fit(X, y)  # refitting on a plain array forgets the names
    assert not hasattr(e, "feature_names_in_")


def test_sample_weight_changes_the_fit_and_zero_weight_removes_rows():
    X, y = make_data()
    base = est().fit(X, y)
    w = np.where(X[:, 0] > 0.5, 10.0, 0.1)
    weighted = est().fit(X, y, sample_weight=w)
    assert not np.allclose(weighted.predict(X), base.predict(X))
    # Integer weights equal repeated rows, zero weights equal removed rows.
    w_int = np.random.default_rng(1).integers(0, 3, N)
    rep = est(engine="reference").fit(np.repeat(X, w_int, 0), np.repeat(y, w_int))
    wtd = est(engine="reference").fit(X, y, sample_weight=w_int)
    np.testing.assert_allclose(wtd.predict(X), rep.predict(X), rtol=1e-7, atol=1e-9)


def test_column_vector_y_warns_and_matches():
    from sklearn.exceptions import DataConversionWarning

    X, y = make_data()
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        e = est().fit(X, y[:, None])
    np.testing.assert_array_equal(e.predict(X), est().fit(X, y).predict(X))


# ------------------------------------------------------------------- progress and control


def test_verbose_writes_a_progress_bar_to_stderr(capfd):
    X, y = make_data()
    est(**GREEDY, verbose=1).fit(X, y)  # the paper's search: one bar over the k+1 iterations
    err = capfd.readouterr().err
    assert "jaxtree" in err and f"{K + 1}/{K + 1}" in err and "mse=" in err
    assert re.search(r"mse=\S+ \| [-+*] \S+ at slot \d", err)  # the last insertion: op, leaf, slot
    assert "refit" not in err
    # The default (below 10,000 rows): the held-out run to k, then a "refit" bar, then
    # (from 100 rows) the shape stage's phases, and below 2,000 rows the other order's
    # (these data keep the shapes first); each phase is drawn full before the next one
    # starts (the refit is faster than tqdm's redraw interval). Then the cross-validated
    # choice of shapes="additive" says what it does and what it found (its fits are
    # quiet), and the kept additive fit draws its tree's bar.
    X, y = make_data(n=120)
    e = est(verbose=1).fit(X, y)
    err = capfd.readouterr().err
    assert e.validation_fraction_ is not None and "mse=" in err
    assert re.search(r"mse=\S+ \| [-+*] \S+ at slot \d", err)  # the held-out run's last insertion
    assert e.shape_order_ == "additive"
    assert "weighing additive, additive k=0, additive k=0 all terms, additive k=0 lines against " \
           "the default by 5-fold cross-validation (25 fits)" in err
    assert re.search(r"5-fold MSE default \S+, additive \S+, additive k=0 \S+, additive k=0 "
                     r"all terms \S+, additive k=0 lines \S+: kept additive", err)
    parts = re.split(r"jaxtree ([a-z ]+):", err)[1:]
    last = {}  # each phase's last drawing (tqdm redraws a line several times)
    names = []
    for what, text in zip(parts[::2], parts[1::2]):
        if not names or names[-1] != what:
            names.append(what)
        last[len(names)] = (what, text)
    # (the kept order's refit and the additive fit's are one "refit" phase here: the
    # cross-validation's two lines fall between their bars)
    assert names == ["refit", "choosing shapes", "shapes", "choosing shapes",
                     "choosing the order", "shapes first", "refit"], names
    assert err.index("cross-validation") > err.index("jaxtree shapes first:")
    for what, text in last.values():
        done, total = re.findall(r"(\d+)/(\d+)", text)[-1]
        assert done == total, (what, text)
    est(verbose=0).fit(X, y)
    assert capfd.readouterr().err == ""


def test_callback_stops_early():
    X, y = make_data()
    seen = []

    def stop(it, loss, info):
        seen.append((it, loss))
        return it == 1

    e = est(**GREEDY, k=K, callback=stop).fit(X, y)  # grown to exactly k unless stopped
    full = est(**GREEDY, k=K).fit(X, y)
    assert [it for it, _ in seen] == [0, 1]
    assert len(e.history_) == 2 < len(full.history_)
    assert int(e.model_.program.n_slots) == 3 < int(full.model_.program.n_slots)
    assert e.formula().count("·") < full.formula().count("·")


def test_integer_weights_equal_repeated_rows_in_float32():
    """scikit-learn's sample-weight equivalence, in float32: equal up to float32 rounding.

    The same data as ``check_sample_weight_equivalence_on_dense_data`` (15 rows, 30
    features, integer weights 0..4 against repeated rows), passed as float32 so jaxtree
    computes in float32 although x64 is on. The fits may differ by float32 rounding only.
    """
    from sklearn.utils import shuffle

    rng = np.random.RandomState(42)
    X = rng.rand(15, 30).astype(np.float32)
    y = rng.randint(0, 3, size=15).astype(np.float32)
    sw = rng.randint(0, 5, size=15)
    Xw, yw, sww = shuffle(X, y, sw, random_state=0)
    # The greedy search to k: the default's held-out split is over rows, so on these 15
    # weighted rows (too few to hold any out) against ~30 repeated ones it would differ.
    rep = est(**GREEDY, chunk_size=64).fit(X.repeat(sw, axis=0), y.repeat(sw))
    wtd = est(**GREEDY, chunk_size=64).fit(Xw, yw, sample_weight=sww)
    assert rep.model_.x_min.dtype == np.float32
    assert [c["feature"] for c in rep.choices_] == [c["feature"] for c in wtd.choices_]
    np.testing.assert_allclose(wtd.predict(X), rep.predict(X), rtol=4e-7, atol=1e-6)
    # Zero weights remove rows: weight-0 rows may take any value.
    X2 = Xw.copy()
    X2[sww == 0] = 1e3
    zeroed = est(**GREEDY, chunk_size=64).fit(X2, yw, sample_weight=sww)
    np.testing.assert_allclose(zeroed.predict(X), wtd.predict(X), rtol=4e-7, atol=1e-6)


def test_scikit_learn_column_name_consistency_check():
    """scikit-learn's own check of feature_names_in_ and predict/score's column checks (not
    part of ``check_estimator``'s list, so run here directly)."""
    from sklearn.utils.estimator_checks import check_dataframe_column_names_consistency

    check_dataframe_column_names_consistency("TreeRegressor", est(engine="reference"))
