"""``fit_batch(tol=...)``: each member stops as its estimator's fit with the same ``tol``.

The three data sets stop at different iterations: a linear law at the float floor after its
first leaf, a noisy sine when a second leaf gains less than ``tol`` (its move undone), and a
richer law that runs to ``k``. The vmapped step runs on for the longest member; a member's
result must still be the separate fit's (the driver's stop, member by member,
:func:`jaxtree.search.run`).
"""

import numpy as np
import pytest

import jaxtree
from jaxtree import basis as B
from jaxtree import batch, search

SMALL = B.make_basis(hats=3, sines=2, cosines=2, powers=2, truncated_cubics=2)
TOL = 1e-2


def _stack(n=150):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(3, n, 3))
    y = np.stack([2 * X[0, :, 0] + 1,
                  np.sin(3 * X[1, :, 0]) + 0.3 * rng.normal(size=n),
                  np.sin(3 * X[2, :, 0]) * X[2, :, 1] + X[2, :, 2] ** 2
                  + 0.01 * rng.normal(size=n)])
    return X, y


@pytest.mark.parametrize("how, fraction", [
    ("greedy", None), ("greedy", 0.25),
    # the greedy cases' oracle on the batched beam (~20 s of compiling; its members equal the
    # separate fits in test_batch_moves.py)
    pytest.param("beam", None, marks=pytest.mark.slow),
    pytest.param("backfit", None, marks=pytest.mark.slow)])
def test_a_member_equals_the_separate_fit_with_the_same_tol(how, fraction):
    # Catches: no stop in a batch (every member grows to k), a stopped member whose later
    # steps are kept (its undone move or more stays in the tree), the wrong status, and a
    # member estimator that says tol=None.
    X, y = _stack()
    kw = dict(k=6, basis=SMALL, chunk_size=64, refine="coordinate", search=how,
              validation_fraction=fraction)
    res = batch.fit_batch(X, y, tol=TOL, **kw)
    lengths = []
    for b, member in enumerate(res):
        est = jaxtree.TreeRegressor(tol=TOL, shapes=0, **kw).fit(X[b], y[b])
        assert [c["flat_index"] for c in member.choices_] == [c["flat_index"]
                                                              for c in est.choices_]
        assert member.k_ == est.k_ and member.status_ == est.status_
        np.testing.assert_allclose(member.predict(X[b]), est.predict(X[b]), rtol=1e-9,
                                   atol=1e-9)
        np.testing.assert_allclose(member.history_, est.history_, rtol=1e-9, atol=1e-15)
        assert member.get_params()["tol"] == TOL
        lengths.append(len(member.choices_))
    # the linear law stops at the float floor after its first leaf, as the estimator does
    assert res[0].k_ == 0 and res[0].status_ & search.Status.CONVERGED
    if fraction is None:
        assert len(set(lengths)) >= 2, lengths  # the members stopped at different iterations
        h = np.asarray(res.history)
        for b, n_rec in enumerate(lengths):  # the batch's history: NaN after a member's end
            assert np.isfinite(h[b, :n_rec]).all() and np.isnan(h[b, n_rec:]).all(), h


def test_without_tol_every_member_grows_to_k():
    X, y = _stack()
    res = batch.fit_batch(X, y, k=3, basis=SMALL, chunk_size=64, refine="coordinate")
    assert [m.k_ for m in res] == [3, 3, 3] and [m.get_params()["tol"] for m in res] == [None] * 3
