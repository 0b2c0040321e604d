"""``refine_steps="auto"``: 20 L-BFGS steps an iteration, 10 from 32,768 training rows
(:func:`jaxtree._fit.spec.refine_steps_for`; BENCHMARKS.md, "Ten refinement steps on large
tables"), resolved once per fit where the row plan is (``spec.planned``) and reported in
``refine_steps_``."""
import numpy as np
import pytest

import jaxtree
from jaxtree import basis as B
from jaxtree._fit import spec as spec_

SMALL = B.make_basis(hats=3, sines=2, cosines=2, powers=2, truncated_cubics=2)


def test_auto_is_twenty_steps_and_ten_from_the_large_rows():
    big = spec_.LARGE_REFINE_MIN_ROWS
    assert spec_.refine_steps_for("auto", big - 1) == spec_.REFINE_STEPS == 20
    assert spec_.refine_steps_for("auto", big) == spec_.LARGE_REFINE_STEPS == 10
    assert spec_.refine_steps_for(None, 10 * big) == 10
    assert spec_.refine_steps_for(20, 10 * big) == 20  # an integer wins at every size
    assert spec_.refine_steps_for(0, 100) == 0
    # planned() resolves it once the rows are known, for every fit path
    for asked, n, want in (("auto", 1_000, 20), ("auto", 40_000, 10), (7, 40_000, 7),
                           (7, 1_000, 7)):
        params = spec_.check_params({"refine_steps": asked})
        assert params.steps == (None if asked == "auto" else asked)
        done, _ = spec_.planned(params, n, 3, np.float32)
        assert done.steps == want, (asked, n)
    assert spec_.planned(spec_.check_params({}), 40_000, 3, np.float32)[0].steps == 10


def test_defaults_paper_and_errors():
    assert jaxtree.TreeRegressor().get_params()["refine_steps"] == "auto"
    assert jaxtree.TreeClassifier().get_params()["refine_steps"] == "auto"
    # the paper's setting, which the races and the GPU targets time, keeps 20 at every size
    assert jaxtree.TreeRegressor.paper().get_params()["refine_steps"] == 20
    assert jaxtree.TreeRegressor.paper(refine_steps=5).get_params()["refine_steps"] == 5
    for bad, err in (("x", TypeError), (-1, ValueError), (True, TypeError), (2.0, TypeError)):
        with pytest.raises(err, match="refine_steps must be 'auto' or an integer"):
            jaxtree.TreeRegressor(refine_steps=bad).fit(np.zeros((30, 2)), np.arange(30.0))
        with pytest.raises(err, match="refine_steps must be 'auto' or an integer"):
            jaxtree.TreeClassifier(refine_steps=bad).fit(np.zeros((30, 2)), np.arange(30) % 2)


def _fit(monkeypatch, large: int, **kw):
    monkeypatch.setattr(spec_, "LARGE_REFINE_MIN_ROWS", large)
    X, y = jaxtree.datasets.paper_synthetic(400, p=4, seed=2)
    return jaxtree.TreeRegressor(k=6, basis=SMALL, search="greedy", shapes=0, tol=None,
                                 validation_fraction=None, **kw).fit(X, y), X


def test_the_fit_runs_the_resolved_steps(monkeypatch):
    # With the threshold moved below the table's 400 rows, "auto" is 10 steps: the fit says
    # so and equals the fit asked for 10, while 20 steps give another model on these rows
    # (a threshold read nowhere, or steps that never reach the search, would fail here).
    auto, X = _fit(monkeypatch, 100)
    ten, _ = _fit(monkeypatch, 100, refine_steps=10)
    twenty, _ = _fit(monkeypatch, 100, refine_steps=20)
    assert auto.refine_steps_ == ten.refine_steps_ == 10 and twenty.refine_steps_ == 20
    np.testing.assert_array_equal(auto.predict(X), ten.predict(X))
    assert not np.array_equal(ten.predict(X), twenty.predict(X))
    small, _ = _fit(monkeypatch, 10_000)  # below the threshold: 20 steps
    assert small.refine_steps_ == 20
    np.testing.assert_array_equal(small.predict(X), twenty.predict(X))


def test_the_classifier_reports_its_steps():
    X, y = jaxtree.datasets.paper_synthetic(300, p=4, seed=0)
    c = jaxtree.TreeClassifier(k=2, basis=SMALL, shapes=0).fit(X, (y > np.median(y)).astype(int))
    assert c.refine_steps_ == 20
