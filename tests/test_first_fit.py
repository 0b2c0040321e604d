"""A fast first fit (issue 12): capacity buckets, so that fits of nearby ``k`` share one
compiled step and give the results of a search compiled for exactly ``k``
(``program.capacity_for``, ``program.trim``, the step's traced ``max_ops``); data and empty
programs built on the host, so that a fit compiles no small eager programs. The persistent
cache itself: ``test_compilation_cache.py``."""

import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import program as prog
from jaxtree import scoring
from jaxtree.debug import count_compilations

from _shared import GREEDY, choice_key, smooth_data


def test_capacity_ladder():
    caps = [prog.capacity_for(k) for k in range(0, 200)]
    assert all(c >= k for k, c in enumerate(caps))
    assert caps[:9] == [8] * 9  # every small k shares one program
    assert all(c <= 1.5 * k for k, c in enumerate(caps) if k > 8)  # at most 1.5x above 8
    assert caps == sorted(caps) and len(set(caps)) == 11
    with pytest.raises(ValueError, match="k must be >= 0"):
        prog.capacity_for(-1)


def test_trim_keeps_the_tree_and_refuses_to_cut_it():
    pad = lambda head, fill: np.r_[head, [fill] * (17 - len(head))]  # capacity 8: 17 slots
    p = prog.from_arrays(pad([prog.ADD, prog.LEAF, prog.LEAF], 0), pad([1, -1, -1], -1),
                         pad([2, -1, -1], -1), pad([-1, 0, 1], -1), pad([-1, 1, 2], -1),
                         pad([0.0, 0.5, 0.25], 0.0), 0.1, 3)
    t = prog.trim(p, 1)
    assert t.capacity == 3 and prog.trim(t, 5) is t
    for name in ("op", "left", "right", "feature", "basis", "weight"):
        np.testing.assert_array_equal(getattr(t, name), getattr(p, name)[:3])
    assert float(t.intercept) == 0.1 and int(t.n_slots) == 3
    with pytest.raises(ValueError, match="uses 3 slots"):
        prog.trim(p, 0)


def _fit(monkeypatch, bucketed, **kw):
    if not bucketed:  # the search compiled for exactly k, as before the buckets
        monkeypatch.setattr(prog, "capacity_for", lambda k: k)
    X, y = smooth_data(2)  # float64, the suite's shapes (compilations shared); pairs taken
    est = jaxtree.TreeRegressor(**kw).fit(X, y)
    monkeypatch.undo()
    return est, est.predict(X)


@pytest.mark.parametrize("kw", [
    pytest.param(dict(k=4), id="backfit-held-out"),  # a pair, a held-out size, a refit
    pytest.param(dict(GREEDY, k=5), id="greedy", marks=pytest.mark.slow),  # ~19 s: compiles
])
def test_buckets_change_no_result(monkeypatch, kw):
    """The bucketed fit makes the same choices and predictions, and its model has the
    shapes of an exact-capacity fit (a search that used the capacity instead of ``k`` as its
    bound, or a tree not cut back, fails here)."""
    exact, pe = _fit(monkeypatch, False, **kw)
    est, pb = _fit(monkeypatch, True, **kw)
    assert est.k_ == exact.k_ <= kw["k"]
    assert choice_key(est.choices_) == choice_key(exact.choices_)
    assert [c["move"] for c in est.choices_] == [c["move"] for c in exact.choices_]
    assert est.model_.program.capacity == exact.model_.program.capacity
    np.testing.assert_allclose(pb, pe, rtol=1e-9, atol=1e-12)
    assert est.formula() == exact.formula()
    if kw.get("validation_fraction", "auto") == "auto":
        assert [r["n_ops"] for r in est.path_] == [r["n_ops"] for r in exact.path_]
        assert all(r["model"].program.capacity == 2 * kw["k"] + 1 for r in est.path_)


def test_pairs_stop_at_k_operations_in_a_larger_capacity(monkeypatch):
    """k = 3 in capacity 8: the pair moves (two operations each) stop at 3 operations as
    they did in capacity 3, so the tree is never cut (trim would raise)."""
    est, _ = _fit(monkeypatch, True, k=3, validation_fraction=None)
    assert any(c["move"] == 1 for c in est.choices_)  # a pair was taken
    assert est.k_ == 3 and est.model_.program.capacity == 7


def test_another_k_compiles_nothing():
    """After a fit with k = 3, fits with k = 5 and k = 2 (one capacity bucket) compile
    nothing: neither the step nor anything else of the fit."""
    X, y = smooth_data(0)
    for kw in ({}, GREEDY):
        jaxtree.TreeRegressor(k=3, **kw).fit(X, y)
        with count_compilations() as count:
            for k in (5, 2):
                est = jaxtree.TreeRegressor(k=k, **kw).fit(X, y)
                assert est.model_.program.capacity == 2 * (est.k_ if kw == {} else k) + 1
        assert count.lowerings == 0 and count.compiles == 0, kw


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_host_chunking_equals_jax_and_compiles_nothing(dtype):
    rng = np.random.default_rng(0)
    x, y, w = rng.normal(size=(37, 3)), rng.normal(size=37), rng.uniform(size=37)
    x, y, w = x.astype(dtype), y.astype(dtype), w.astype(dtype)
    with count_compilations() as count:
        host = scoring.chunk(x, y, w, chunk_size=16)
        unit = scoring.chunk(x, y, None, chunk_size=64)
        empty = prog.empty_program(13, dtype)
    assert count.lowerings == 0 and count.compiles == 0
    for got, want in ((host, scoring.chunk(jnp.asarray(x), jnp.asarray(y), jnp.asarray(w), 16)),
                      (unit, scoring.chunk(jnp.asarray(x), jnp.asarray(y), None, 64))):
        for a, b in zip(got[:3], want[:3]):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert empty.weight.dtype == jnp.dtype(dtype) and empty.capacity == 27
