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

from _shared import GREEDY, at_xla_defaults, choice_key, smooth_data


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


# Both cases in the slow suite (backfit-held-out ~36 s: the default fit compiled twice, at
# the exact and the bucketed capacity; greedy ~19 s). The bucketed fit = the exact-capacity
# fit keeps its oracle in the default suite on the classifier's step with a held-out size
# (test_classifier_shares_the_step_across_k[binary]) and on fit_batch's step
# (test_fit_batch_shares_the_step_across_k); the backfit's pair moves stopping at k in the
# larger capacity: test_pairs_stop_at_k_operations_in_a_larger_capacity.
@pytest.mark.slow
@pytest.mark.parametrize("kw", [
    pytest.param(dict(k=4), id="backfit-held-out"),  # a pair, a held-out size, a refit
    pytest.param(dict(GREEDY, k=5), id="greedy"),
])
def test_buckets_change_no_result(monkeypatch, request, kw):
    """The bucketed fit makes the same choices and predictions, and its model has the
    shapes of an exact-capacity fit (a search that used the capacity instead of ``k`` as its
    bound, or a tree not cut back, fails here). The slow case compares at XLA's default
    flags (:func:`_shared.at_xla_defaults`)."""
    if not at_xla_defaults(request):
        return
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


# y_bound=1: at the default 0.25 the held-out choice at k = 2 is 0 operations, whose refit
# keeps the capacity of one pair move (3 slots), which this check does not model.
# The greedy search grown to k in the slow suite (~5 s of compiling its step): the default
# case's oracle on the greedy step, whose sharing across k keeps an oracle in the default
# suite in test_classifier_shares_the_step_across_k[binary] (the greedy search, the same
# capacity buckets) and test_selection_run_and_refit_share_one_step[regressor].
@pytest.mark.parametrize("kw", [pytest.param({"y_bound": 1.0}, id="default"),
                                pytest.param(GREEDY, id="greedy", marks=pytest.mark.slow)])
def test_another_k_compiles_nothing(kw):
    """After a fit with k = 3, fits with k = 5 and k = 2 (one capacity bucket) compile
    nothing: neither the step nor anything else of the fit, the default's shape stage after
    trees of other sizes included (120 rows: it runs, and accepts a term)."""
    X, y = smooth_data(0, n=120)
    greedy = kw == GREEDY
    jaxtree.TreeRegressor(k=3, **kw).fit(X, y)
    with count_compilations() as count:
        for k in (5, 2):
            est = jaxtree.TreeRegressor(k=k, **kw).fit(X, y)
            assert est.model_.program.capacity == 2 * (est.k_ if not greedy else k) + 1
            assert (est.model_.shapes is not None) == (not greedy)
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


# ------------------------------------------------ fit_batch and TreeClassifier (issue 12)

def _batch_data(seeds=(2, 0)):
    rows = [smooth_data(s) for s in seeds]
    return np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows])


def _exact(monkeypatch, fit):
    """``fit()`` with the search compiled for exactly ``k`` (as before the buckets)."""
    monkeypatch.setattr(prog, "capacity_for", lambda k: k)
    try:
        return fit()
    finally:
        monkeypatch.undo()


def _same_batch(got, want, k):
    for name in ("op", "left", "right", "feature", "basis", "n_slots"):
        np.testing.assert_array_equal(getattr(got.models.program, name),
                                      getattr(want.models.program, name))
    assert got.models.program.capacity == want.models.program.capacity == 2 * k + 1
    np.testing.assert_allclose(got.models.program.weight, want.models.program.weight,
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got.history, want.history, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(got.status, want.status)
    for a, b in zip(got, want):
        assert a.k_ == b.k_ and a.formula() == b.formula()
        assert choice_key(a.choices_) == choice_key(b.choices_)
        assert [c["move"] for c in a.choices_] == [c["move"] for c in b.choices_]
        if b.path_ is not None:
            assert [r["n_ops"] for r in a.path_] == [r["n_ops"] for r in b.path_]
            assert all(r["model"].program.capacity == 2 * k + 1 for r in a.path_)


def test_fit_batch_shares_the_step_across_k(monkeypatch):
    """fit_batch with k = 3 and k = 5 (capacity 8) compiles its batched step once, and each
    equals the batch searched at exactly k (trees cut back to 2k+1 slots)."""
    from jaxtree import batch

    X, y = _batch_data()
    kw = dict(refine=None)  # the mechanics, not the refinement: a quick compilation
    got = {3: jaxtree.fit_batch(X, y, k=3, **kw)}
    with count_compilations() as count:
        size = batch.step_batch_jit._cache_size()
        got[5] = jaxtree.fit_batch(X, y, k=5, **kw)
        assert batch.step_batch_jit._cache_size() == size  # the k = 3 batch's step
    assert count.compiles <= 4  # only eager slices of the members (k-shaped models)
    for k, res in got.items():
        _same_batch(res, _exact(monkeypatch, lambda: jaxtree.fit_batch(X, y, k=k, **kw)), k)


@pytest.mark.slow  # test_pairs_stop_at_k_operations_in_a_larger_capacity's oracle on the
# batched backfit step (~25 s of compiling); its members stopping at k as the separate fits
# do: test_batch_moves.py::test_members_make_the_separate_fits_moves[backfit]
def test_fit_batch_pairs_stop_at_k_in_a_larger_capacity():
    """The backfit batch, k = 3 in capacity 8: member 0 takes a pair (two operations) and
    stops at 3 operations, as in capacity 3 (the per-member max_ops; unbounded it would grow
    a fourth, which trim refuses), its search ended when full (three records)."""
    X, y = _batch_data()
    res = jaxtree.fit_batch(X, y, k=3, search="backfit", refine=None, y_bound=1.0)
    assert [c["move"] for c in res[0].choices_] == [0, 0, 1]  # a pair, then full
    assert [e.k_ for e in res] == [3, 3] and res.models.program.capacity == 7


def _three_classes(y):
    return np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))


def _same_classifier(got, want, X):
    assert got.k_ == want.k_
    if want.k_per_class_ is None:
        assert got.k_per_class_ is None
        flat = lambda c: c  # noqa: E731
    else:
        np.testing.assert_array_equal(got.k_per_class_, want.k_per_class_)
        flat = lambda c: [r for cls in c for r in cls]  # noqa: E731
    assert got.model_.program.capacity == want.model_.program.capacity
    assert choice_key(flat(got.choices_)) == choice_key(flat(want.choices_))
    np.testing.assert_allclose(got.predict_proba(X), want.predict_proba(X), rtol=0, atol=1e-9)
    np.testing.assert_allclose(got.history_, want.history_, rtol=1e-9, atol=1e-12)
    assert got.formula() == want.formula()
    if want.path_ is not None:
        paths = (lambda p: [p]) if want.k_per_class_ is None else (lambda p: p)  # noqa: E731
        for pg, pw in zip(paths(got.path_), paths(want.path_)):
            assert [r["n_ops"] for r in pg] == [r["n_ops"] for r in pw]
            assert [r["model"].program.capacity for r in pg] == \
                [r["model"].program.capacity for r in pw]
            np.testing.assert_allclose([r["val_loss"] for r in pg], [r["val_loss"] for r in pw],
                                       rtol=1e-9)


@pytest.mark.parametrize("classes, kw", [
    # the greedy search (with the default held-out size): the buckets are the same for every
    # search, and its step compiles in half the time of the backfit one (compiled 3 times here)
    pytest.param(2, dict(refine=None, search="greedy"), id="binary"),
    pytest.param(3, dict(refine=None), id="one-vs-rest", marks=pytest.mark.slow),  # time
    # the [binary] case's oracle on three trees with a held-out size (~60 s of compiling);
    # the held-out run and refit sharing a step: test_selection_run_and_refit_share_one_step
    pytest.param(3, dict(refine=None, validation_fraction=0.3), id="one-vs-rest-held-out",
                 marks=pytest.mark.slow),
])
def test_classifier_shares_the_step_across_k(monkeypatch, classes, kw):
    """TreeClassifier k = 3 then k = 5 (capacity 8): the second fit compiles nothing, and each
    equals the fit searched at exactly k (models cut back to 2k+1 slots, probabilities,
    choices, k_ and k_per_class_; the held-out path and the per-class refit)."""
    X, y = smooth_data(1)
    y = (y > np.median(y)).astype(int) if classes == 2 else _three_classes(y)
    got = {3: jaxtree.TreeClassifier(k=3, **kw).fit(X, y)}
    with count_compilations() as count:
        got[5] = jaxtree.TreeClassifier(k=5, **kw).fit(X, y)
    assert count.lowerings == 0 and count.compiles == 0
    for k, est in got.items():
        assert est.model_.program.capacity == 2 * k + 1
        _same_classifier(est, _exact(monkeypatch,
                                     lambda: jaxtree.TreeClassifier(k=k, **kw).fit(X, y)), X)


# 3 classes: the same bucket mechanism on more members (the [2] case), their equality to
# separate fits being test_classifier_batch.py::test_three_classes_one_vs_rest_flattened_into_the_batch's
# Slow: test_fit_batch_shares_the_step_across_k's oracle on the batched classifier step
# (which compiles once per fit_batch_classifier: test_classifier_batch.py).
@pytest.mark.slow
@pytest.mark.parametrize("classes", [2, pytest.param(3, marks=pytest.mark.slow)])
def test_fit_batch_classifier_shares_the_step_across_k(monkeypatch, classes):
    """fit_batch_classifier k = 3 then k = 5 (capacity 8): the batched step compiles once, and
    each batch equals the one searched at exactly k (trees cut back to 2k+1 slots; the same
    choices, probabilities, history and formulas; one-versus-rest flattened in the batch)."""
    from jaxtree import batch

    X, y = _batch_data()
    y = np.stack([(v > np.median(v)).astype(int) if classes == 2 else _three_classes(v)
                  for v in y])
    kw = dict(refine=None)
    got = {3: jaxtree.fit_batch_classifier(X, y, k=3, **kw)}
    size = batch._classifier_step_batch_jit._cache_size()
    got[5] = jaxtree.fit_batch_classifier(X, y, k=5, **kw)
    assert batch._classifier_step_batch_jit._cache_size() == size  # the k = 3 batch's step
    for k, res in got.items():
        want = _exact(monkeypatch, lambda: jaxtree.fit_batch_classifier(X, y, k=k, **kw))
        assert res.models.program.capacity == want.models.program.capacity == 2 * k + 1
        np.testing.assert_allclose(res.history, want.history, rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(res.status, want.status)
        for b, (a, w) in enumerate(zip(res, want)):
            _same_classifier(a, w, X[b])


# ------------------------------------- the held-out split's training part chunked as all rows

# the classifier in the slow suite (~11 s): the regressor's case keeps the oracle
@pytest.mark.parametrize("estimator", ["regressor", "wide", pytest.param("classifier", marks=pytest.mark.slow)])
def test_selection_run_and_refit_share_one_step(monkeypatch, estimator):
    """n = 300: the 225 training rows would be chunked as 256 and all rows as 512, two
    compiled steps; the training part is chunked as all rows, so the refit reuses the
    selection run's step. The zero-weight padding changes no result: the fit equals the one
    whose training part is chunked by its own size (float64: choices, k_, the held-out
    path, predictions). ``wide``: the same where compiling does not dominate by the buckets'
    rule (as on a wide table of a few thousand rows: ``BUCKET_MIN_WORK`` set to 1 here),
    below ``SHARED_SELECTION_ROWS`` (sixty-eighth session; two steps compiled before)."""
    from jaxtree import search
    from jaxtree._fit import classify

    from jaxtree._fit import spec as spec_

    if estimator == "wide":
        monkeypatch.setattr(scoring, "BUCKET_MIN_WORK", 1)
        assert not scoring.compiling_dominates(300, 4, 40)
    # one fit's programs: not the cross-validated choice of shapes="additive" after it,
    # whose folds' fits are fits of their own rows
    monkeypatch.setattr(spec_, "ADDITIVE_CV_FOLDS", 0)
    X, y = smooth_data(4, n=300)
    kw = dict(k=3, refine=None, validation_fraction=0.25)
    if estimator == "classifier":
        y = (y > np.median(y)).astype(int)
        make = lambda: jaxtree.TreeClassifier(search="greedy", **kw)  # noqa: E731
    else:
        make = lambda: jaxtree.TreeRegressor(search="greedy", **kw)  # noqa: E731
    # the regressor's greedy step is one program; the small binary classifier's two
    # (classify.binary_step)
    steps = ([classify.binary_insert_cached.fn, classify.binary_finish_cached.fn]
             if estimator == "classifier" else [search.step_jit])
    for jitted in steps:
        jitted.clear_cache()  # an earlier test of this worker may hold the same step
    got = make().fit(X, y)
    # one step: selection run and refit
    assert [jitted._cache_size() for jitted in steps] == [1] * len(steps)
    plain = scoring.chunk
    monkeypatch.setattr(scoring, "chunk", lambda *a, rows=None, **kw: plain(*a, **kw))
    want = make().fit(X, y)
    assert choice_key(got.choices_) == choice_key(want.choices_) and got.k_ == want.k_
    assert [r["n_ops"] for r in got.path_] == [r["n_ops"] for r in want.path_]
    key = "val_loss" if estimator == "classifier" else "val_mse"
    np.testing.assert_allclose([r[key] for r in got.path_], [r[key] for r in want.path_],
                               rtol=1e-10)
    out = (lambda e: e.predict_proba(X)) if estimator == "classifier" else (lambda e: e.predict(X))
    np.testing.assert_allclose(out(got), out(want), rtol=1e-10, atol=1e-12)


def test_a_backfit_selection_run_shares_the_refits_step_where_the_screens_stride_differs(
        monkeypatch):
    """A backfit search whose pair screen takes 256 rows: the 225 training rows of a 25%
    split would be chunked as 256 (stride 1) and all 300 rows as 512 (stride 2). The
    selection run is chunked as all rows, so the insertion and refinement programs compile
    once for both runs (they compiled twice before the sixty-seventh session)."""
    from jaxtree import search
    from _shared import jax_events

    monkeypatch.setattr(search, "PAIR_ROWS", 256)
    X, y = smooth_data(4, n=300)
    for jitted in (search.insert_jit, search.finish_jit):
        jitted.clear_cache()  # an earlier test of this worker may hold the same programs
    with jax_events("backend_compile_duration") as names:
        est = jaxtree.TreeRegressor(k=3, search="backfit", validation_fraction=0.25,
                                    shapes=0).fit(X, y)
    assert est.search_ == "backfit" and est.path_  # a selection run and a refit ran
    assert names.count("jit(insert_step)") == 1, names
    assert names.count("jit(finish_step)") == 1, names


def test_the_backfitting_round_refines_in_the_searchs_program_when_layouts_differ(
        monkeypatch):
    """300 rows in chunks of 128: the search keeps its own 3 chunks (padding to the row
    bucket's 4 would change a 200-row pair screen's stride, 2 -> 3), the shape stage pads to
    4. The default's backfitting round (shape terms after the tree) refines the tree on the
    search's chunking, so the refinement program compiles once in the fit (twice before the
    sixty-seventh session), and the model equals the one refined on the shape stage's
    chunking (float64). (``shapes=S`` grows its tree from another source and still
    compiles its own.)"""
    from jaxtree import search
    from jaxtree._fit import source
    from _shared import jax_events

    monkeypatch.setattr(search, "PAIR_ROWS", 200)
    monkeypatch.setattr(search, "PAIR_MIN_ROWS", 100)
    rng = np.random.default_rng(7)
    X = rng.uniform(size=(300, 4))
    y = (np.sin(6 * X[:, 0]) + 2 * np.abs(X[:, 1] - 0.5) + X[:, 2] * X[:, 3]
         + 0.05 * rng.standard_normal(300))
    make = lambda: jaxtree.TreeRegressor(k=3, chunk_size=128,  # noqa: E731 - shapes="auto"
                                         validation_fraction=None)
    search.finish_jit.clear_cache()  # an earlier test of this worker may hold the programs
    with jax_events("backend_compile_duration") as names:
        got = make().fit(X, y)
    assert got.search_ == "backfit" and len(got.shape_terms()) > 0
    assert names.count("jit(finish_step)") == 1, names
    monkeypatch.setattr(source.InMemory, "_in_tree_rows", lambda self, resid: resid)
    want = make().fit(X, y)
    assert choice_key(got.choices_) == choice_key(want.choices_)
    np.testing.assert_allclose(got.predict(X), want.predict(X), rtol=1e-9, atol=1e-10)


def test_selection_rows_are_all_rows_where_compiling_dominates_or_below_10000_rows():
    """The training part is chunked as all rows wherever compiling dominates, with a pair
    screen too (sixty-seventh session): at n = 5,000 the 3,750 training rows would fill 2
    chunks of 2,048 (a 4,096-row screen's stride 1) and all rows 3 (stride 2), and the
    selection run now takes all rows' chunks, sharing the refit's programs."""
    from jaxtree._fit.select import selection_rows as _selection_rows

    assert _selection_rows(300, 4, 40) == 300
    assert _selection_rows(6500, 10, 40) == 6500
    assert _selection_rows(5000, 10, 40) == 5000
    assert _selection_rows(5000, 10, 40, rows=8192) == 8192  # all rows' bucket
    assert _selection_rows(10 ** 5, 10, 40) is None  # searching dominates
    # Below SHARED_SELECTION_ROWS at any width (sixty-eighth session): a wide table's
    # selection run shares the refit's programs where compiling does not dominate by the
    # buckets' rule; from 10,000 rows (no default held-out split) it keeps its own chunks.
    assert not scoring.compiling_dominates(5000, 100, 40)
    assert _selection_rows(5000, 100, 40) == 5000
    assert _selection_rows(9999, 500, 40, rows=12288) == 12288
    assert _selection_rows(10_000, 100, 40) is None
