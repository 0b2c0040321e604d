"""The one search driver (jaxtree.search.run): every engine and path reports the same
choices, units and status, honours a callback's stop, and compiles nothing twice."""

import gc
import weakref

import numpy as np
import pytest

import jaxtree
from jaxtree import basis as B
from jaxtree import search, stream
from jaxtree.debug import count_compilations

from _shared import GREEDY, smooth_data

SMALL = B.make_basis(hats=3, sines=2, cosines=2, powers=2, truncated_cubics=0)


def _fit(engine, k=4, **kw):
    """The paper's greedy search grown to ``k`` on either engine (the in-memory default
    below 10,000 rows is ``"backfit"`` with a held-out size; the reference engine's is greedy)."""
    X, y = smooth_data(seed=3, n=120)
    kw = {**GREEDY, **kw}
    return jaxtree.TreeRegressor(k=k, basis=SMALL, engine=engine, refine="coordinate", **kw).fit(X, y)


def test_both_engines_report_the_same_choice_records():
    jax_est, ref_est = _fit("jax"), _fit("reference")
    assert len(jax_est.choices_) == len(ref_est.choices_) == 5
    for cj, cr in zip(jax_est.choices_, ref_est.choices_):
        assert set(cj) == set(cr) == set(search.CHOICE_KEYS)
        for key in ("flat_index", "slot", "op", "feature", "basis"):
            assert cj[key] == cr[key], key
        for key in ("weight", "intercept", "sse"):
            np.testing.assert_allclose(cj[key], cr[key], rtol=1e-7, atol=1e-10, err_msg=key)
    assert jax_est.choices_[0]["op"] == ref_est.choices_[0]["op"] == jaxtree.program.LEAF
    assert all(c["op"] in (jaxtree.program.ADD, jaxtree.program.MUL) for c in jax_est.choices_[1:])
    np.testing.assert_allclose(jax_est.history_, ref_est.history_, rtol=1e-7)
    assert jax_est.status_ == ref_est.status_ == search.Status.OK


@pytest.mark.parametrize("engine", ["jax", "reference"])
def test_callback_stop_is_honoured_with_losses_in_y_units(engine):
    seen = []

    def callback(it, loss, info):
        seen.append(loss)
        return it == 2

    est = _fit(engine, callback=callback)
    assert len(est.history_) == 3 and len(est.choices_) == 3
    np.testing.assert_allclose(seen, est.history_, rtol=1e-12)  # one unit everywhere
    X, y = smooth_data(seed=3, n=120)
    mse = np.mean((est.predict(X) - y) ** 2)
    np.testing.assert_allclose(est.history_[-1], mse, rtol=1e-6)  # the user's units
    assert est.status_ == search.Status.STOPPED
    assert "callback" in search.message(est.status_)


def test_stop_on_the_last_iteration_is_not_a_stop():
    est = _fit("jax", k=2, callback=lambda it, loss, info: it == 2)
    assert est.status_ == search.Status.OK and len(est.history_) == 3


def test_status_messages():
    assert search.message(search.Status.OK) == "ok"
    both = search.message(search.Status.NO_CANDIDATE | search.Status.FULL)
    assert "no finite candidate" in both and "capacity" in both


def _memmap(tmp_path, name, n=300, p=3, seed=0):
    X, y = smooth_data(seed=seed, n=n)
    mm = np.lib.format.open_memmap(tmp_path / name, mode="w+", dtype=np.float64, shape=(n, p))
    mm[:] = X
    mm.flush()
    return mm, y


def test_second_streamed_fit_compiles_nothing_and_keeps_no_source(tmp_path):
    mm1, y1 = _memmap(tmp_path, "a.npy", seed=0)
    # A tree alone: a streamed shape stage compiles its backfitting programs for the terms
    # it chose (their counts are static there; streamed tables are large, where the passes
    # cost more than compiling), so a second table that chooses other terms compiles them.
    kw = dict(k=2, basis=SMALL, chunk_size=64, refine="optax", refine_steps=3, shapes=0)
    first = jaxtree.TreeRegressor(**kw).fit(mm1, y1)
    mm2, y2 = _memmap(tmp_path, "b.npy", seed=1)
    with count_compilations() as count:
        second = jaxtree.TreeRegressor(**kw).fit(mm2, y2)
    assert count.lowerings == 0, count
    assert np.isfinite(second.history_).all() and first.history_[-1] != second.history_[-1]
    # The finished fits hold no reference to their data source.
    ref = weakref.ref(mm2)
    reader = stream.ChunkReader(mm1, y1, chunk_size=64)
    ref_reader = weakref.ref(reader)
    del mm2, reader
    gc.collect()
    assert ref() is None and ref_reader() is None


@pytest.mark.slow  # ~6 s; its oracle runs by default in
# test_first_fit.py::test_another_k_compiles_nothing[default] (second default fits, backfit,
# held-out size and shape stage, lower and compile nothing) and test_shape_buckets.py (a
# second table's whole default fit compiles nothing)
def test_second_in_memory_fit_compiles_nothing():
    X, y = smooth_data(seed=4, n=100)
    kw = dict(k=3, basis=SMALL)
    jaxtree.TreeRegressor(**kw).fit(X, y)
    with count_compilations() as count:
        jaxtree.TreeRegressor(**kw).fit(X + 1.0, -y)
    assert count.lowerings == 0, count


def test_patience_stops_once_the_held_out_loss_stops_falling():
    """``run(patience=3)`` stops after three iterations in a row above the best held-out
    loss, keeps everything up to there, and says STOPPED; without it all iterations run."""
    vals = [5.0, 4.0, 3.0, 3.5, 3.2, 3.1, 2.0, 1.0]

    def step(i):
        ch = search.Choice(*([0] * len(search.CHOICE_KEYS)))
        return i + 1, search.StepInfo(np.float64(10 - i), ch, np.int64(search.STATUS_OK),
                                      np.float64(vals[i]))

    res = search.run(step, 0, len(vals), patience=3)
    assert res.val_history.tolist() == vals[:6] and res.program == 6
    assert res.status & search.Status.STOPPED
    full = search.run(step, 0, len(vals))
    assert full.val_history.tolist() == vals and not full.status & search.Status.STOPPED
    assert search.run(step, 0, len(vals), patience=4).val_history.tolist() == vals
