"""``jaxtree.fit_batch_classifier``: B classification searches in one compiled call equal B
separate ``TreeClassifier`` fits.

The fast tests share one shape family (B=3, n=200, p=3, k=3, chunk 64, float32) so that
they share the compiled steps.
"""

import jax
import numpy as np
import pytest

import jaxtree
from jaxtree import basis as B
from jaxtree import batch, classifier
from _shared import GREEDY

SMALL = B.make_basis(hats=3, sines=2, cosines=2, powers=2, truncated_cubics=0)
KW = dict(k=3, basis=SMALL, chunk_size=64, refine="coordinate")


def _data(n_sets=3, n=200):
    """Float32 covariates and a different rule per data set (so a mix-up of data sets,
    labels or weights shows): two classes as strings, three classes as ints."""
    X = np.random.default_rng(0).uniform(size=(n_sets, n, 3)).astype(np.float32)
    s = np.arange(n_sets)[:, None]
    two = np.where(X[..., 0] + np.sin((2 + s) * X[..., 1]) > 1 - 0.1 * s, "yes", "no")
    three = np.digitize(X[..., 0] + (0.3 + 0.2 * s) * X[..., 2], [0.5, 1.0])
    return X, two, three


def _flat(choices):
    return ([c["flat_index"] for c in choices] if isinstance(choices[0], dict)
            else [[c["flat_index"] for c in cc] for cc in choices])


def _check_equal(res, X, y, sample_weight=None, **kw):
    settings = {**KW, "min_support": 0, **kw}  # the batch's default: every candidate scored
    for b, got in enumerate(res):
        sw = None if sample_weight is None else sample_weight[b]
        # fit_batch_classifier runs the greedy search grown to k (no stop: tol=None), no shape
        # terms (it has no search, validation_fraction, shapes or tol): its member is that
        # fit and says so
        want = jaxtree.TreeClassifier(**settings, **GREEDY, tol=None).fit(
            X[b], y[b], sample_weight=sw)
        assert isinstance(got, jaxtree.TreeClassifier)
        assert got.get_params() == want.get_params()
        assert (got.search_, got.validation_fraction_) == ("greedy", None)
        assert _flat(got.choices_) == _flat(want.choices_), b
        assert got.classes_.tolist() == want.classes_.tolist()
        # float32: refine="coordinate" leaves the intercept a few Newton updates short of
        # converged, so summation order can move probabilities by ~5e-5 (see
        # tests/test_classifier_sharding.py); here the batch agrees to the last bit.
        np.testing.assert_allclose(got.predict_proba(X[b]), want.predict_proba(X[b]),
                                   rtol=0, atol=1e-4)
        assert (got.predict(X[b]) == want.predict(X[b])).all()
        np.testing.assert_allclose(got.history_, want.history_, rtol=1e-5, atol=1e-7)
        assert got.status_ == want.status_ == 0
        assert (got.k_, str(got.k_per_class_)) == (want.k_, str(want.k_per_class_))
        assert got.encoding_ == want.encoding_ and got.n_features_in_ == 3
        assert got.formula() == want.formula()
        assert got.model_.x_min.dtype == X.dtype
        assert got.score(X[b], y[b], sw) > 0.75  # the rules are learnable (shared-code bugs)


def test_binary_equals_separate_fits_and_compiles_once():
    X, two, _ = _data()
    batch._classifier_step_batch_jit.clear_cache()
    res = jaxtree.fit_batch_classifier(X, two, **KW)
    assert batch._classifier_step_batch_jit._cache_size() == 1  # one compile for k+1 steps
    assert len(res) == 3 and res.history.shape == (3, 4) and res.status.tolist() == [0, 0, 0]
    assert res.models.program.weight.shape == (3, 7)
    _check_equal(res, X, two)


@pytest.mark.slow  # ~15 s; the binary case above keeps the batch's oracle, and
# tests/test_classifier.py's one-vs-rest members-equal-binary-fits check keeps three classes
def test_three_classes_one_vs_rest_flattened_into_the_batch():
    X, _, three = _data()
    three = three + 10 * np.arange(3)[:, None]  # each data set its own class labels
    res = jaxtree.fit_batch_classifier(X, three, **KW)
    assert res.history.shape == (3, 3, 4) and res.models.program.weight.shape == (3, 3, 7)
    assert [r.classes_.tolist() for r in res] == [[0, 1, 2], [10, 11, 12], [20, 21, 22]]
    _check_equal(res, X, three)


@pytest.mark.slow  # test_binary_equals_separate_fits_and_compiles_once's oracle with the
# margin loss and no refinement (~15 s of compiling); the margin loss keeps its float64
# reference oracle in test_classifier_reference.py
def test_margin_loss_and_refine_none():
    X, two, _ = _data()
    res = jaxtree.fit_batch_classifier(X, two, **{**KW, "refine": None}, loss="margin")
    _check_equal(res, X, two, loss="margin", refine=None)


@pytest.mark.parametrize("shared", [True, False])
def test_sample_weight_shared_and_per_data_set(shared):
    X, two, _ = _data()
    rng = np.random.default_rng(1)
    w = rng.uniform(0.2, 2.0, size=(200,) if shared else (3, 200))
    res = jaxtree.fit_batch_classifier(X, two, sample_weight=w, **KW)
    _check_equal(res, X, two, sample_weight=np.broadcast_to(w, (3, 200)))


@pytest.mark.filterwarnings("error:X does not have valid feature names")
def test_batched_models_vmap_decision_function_and_save_load(tmp_path):
    """Members labelled by ``feature_names`` were fitted on arrays: no feature-name warning
    on an array, fitted or loaded."""
    X, _, three = _data()
    res = jaxtree.fit_batch_classifier(X, three, feature_names=["a", "b", "c"], **KW)
    f = np.asarray(jax.jit(jax.vmap(classifier.decision_function))(res.models, X))
    assert f.shape == (3, 200, 3)
    for b, est in enumerate(res):
        np.testing.assert_allclose(f[b], est.decision_function(X[b]), rtol=1e-6, atol=1e-6)
        assert est.model_.feature_names == ("a", "b", "c")
        est.save(tmp_path / f"m{b}.json")
        back = jaxtree.load(tmp_path / f"m{b}.json")
        assert isinstance(back, jaxtree.TreeClassifier)
        assert back.classes_.tolist() == est.classes_.tolist()
        np.testing.assert_allclose(back.predict_proba(X[b]), est.predict_proba(X[b]),
                                   rtol=0, atol=1e-6)


def test_label_and_shape_errors():
    X, two, three = _data(n=20)
    fit = lambda X_, y_, **kw: jaxtree.fit_batch_classifier(X_, y_, k=1, refine=None, **kw)  # noqa: E731
    mixed = three.copy()
    mixed[1] = (X[1, :, 0] > 0.5)  # data set 1: two classes, the others three
    with pytest.raises(ValueError, match=r"same number of classes.*\[3, 2, 3\]"):
        fit(X, mixed)
    one = two.copy()
    one[2] = "yes"
    with pytest.raises(ValueError, match=r"y\[2\] \(data set 2\).*only one class"):
        fit(X, one)
    with pytest.raises(ValueError, match=r"y\[0\].*continuous"):
        fit(X, X[..., 0])
    nan = X[..., 0].round().astype(np.float64)
    nan[1, 3] = np.nan
    with pytest.raises(ValueError, match=r"y\[1\].*NaN"):
        fit(X, nan)
    with pytest.raises(ValueError, match=r"shape \(3, 20\)"):
        fit(X, two[:, :10])
    with pytest.raises(ValueError, match="3-D.*TreeClassifier"):
        fit(X[0], two[0])
    with pytest.raises(ValueError, match="sample_weight"):
        fit(X, two, sample_weight=np.ones(7))
    with pytest.raises(ValueError, match="loss"):
        fit(X, two, loss="hinge")
    with pytest.raises(ValueError, match="original units"):
        jaxtree.fit_batch_classifier(X, two, k=1, basis="physics")
