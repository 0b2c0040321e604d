"""Same data and settings give the same model, whatever the chunking; ties break low."""

import numpy as np
import pytest

import jaxtree
from jaxtree import model as model_

from _shared import K, N, choice_key as key, smooth_data as data  # noqa: E402


# slow: restates test_pipeline.py::test_the_order_held_out_rows_support_is_kept (both cases:
# a second default fit (backfit, held-out size) of the same data predicts bitwise as the
# first) and test_pipeline.py::test_pipeline_is_a_function_of_its_arguments (the same
# arguments give the same model, history and predictions) on a fit compiled for its own shapes
@pytest.mark.slow
def test_run_to_run_bitwise_identical():
    X, y = data()
    a = jaxtree.TreeRegressor(k=K, refine=None).fit(X, y)
    b = jaxtree.TreeRegressor(k=K, refine=None).fit(X.copy(), y.copy())
    assert model_.to_dict(a.model_) == model_.to_dict(b.model_)
    for u, v in zip(a.model_.program, b.model_.program):
        np.testing.assert_array_equal(np.asarray(u), np.asarray(v))
    np.testing.assert_array_equal(a.history_, b.history_)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


@pytest.mark.slow  # ~9 s (the default fit compiled for chunks of 24); its oracle (the fit does
# not depend on the chunking, a padded last chunk included) runs by default in
# test_plan.py::test_accelerator_plan_gives_the_cpu_plans_fit (3 padded chunks = 1, float64)
# and test_batch_moves.py (the estimator's row-bucketed chunks = fit_batch's own, backfit)
def test_same_tree_across_chunk_sizes():
    X, y = data(1)
    fits = {c: jaxtree.TreeRegressor(k=K, refine=None, chunk_size=c).fit(X, y)
            for c in (24, N)}  # 24: three chunks, the last one padded; N: one chunk
    ref = fits[N]
    for c, e in fits.items():
        assert key(e.choices_) == key(ref.choices_), c
        assert e.formula() == ref.formula(), c
        np.testing.assert_allclose(e.predict(X), ref.predict(X), rtol=1e-5, atol=1e-8)


def test_ties_break_to_the_lowest_flat_index():
    rng = np.random.default_rng(2)
    x = rng.uniform(size=N)
    X = np.c_[x, x, rng.uniform(size=N)]  # columns 0 and 1 identical
    y = 0.7 * x ** 2
    e = jaxtree.TreeRegressor(k=K, refine=None).fit(X, y)
    assert e.choices_[0]["feature"] == 0  # the lower column wins the exact tie
    assert all(c["feature"] != 1 for c in e.choices_)
    # Swapping the identical columns changes nothing; moving x to column 1 of a
    # different pair picks column 1 only because column 0 is then a different function.
    e2 = jaxtree.TreeRegressor(k=K, refine=None).fit(X[:, [1, 0, 2]], y)
    assert key(e2.choices_) == key(e.choices_)
