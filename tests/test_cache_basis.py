"""``cache_basis="auto"`` (the default): the basis values of all rows are kept where
compiling dominates (:func:`jaxtree._fit.spec.resolve`), and the fit is the one that
evaluates the basis chunk by chunk, to rounding."""

import warnings

import numpy as np
import pytest

import jaxtree
from jaxtree import scoring
from jaxtree._fit import source
from jaxtree._fit import spec as spec_


def _kept(n, in_memory=True, **hyper):
    """Whether the resolved spec of a fit of ``n`` rows of 4 covariates keeps the basis."""
    dtype = np.dtype(np.float32)
    params, plan = spec_.planned(spec_.check_params(hyper), n, 4, dtype)
    return spec_.resolve(hyper, params, n, 4, dtype, plan, in_memory=in_memory).cache_basis


def test_the_auto_rule():
    # "auto": in-memory JAX fits where compiling dominates (n*p*q below BUCKET_MIN_WORK);
    # True and False as asked, numpy's bools too
    q = jaxtree.basis.default_basis().q
    large = scoring.BUCKET_MIN_WORK // (4 * q) + 1
    assert _kept(300)
    assert not _kept(large)
    assert not _kept(300, in_memory=False)  # read block by block
    assert not _kept(300, engine="reference", search="greedy", refine="coordinate")
    assert _kept(large, cache_basis=True) and _kept(300, in_memory=False, cache_basis=True)
    assert _kept(large, cache_basis=np.bool_(True))
    assert not _kept(300, cache_basis=False)


def test_cache_basis_is_checked():
    X = np.zeros((20, 2))
    with pytest.raises(TypeError, match="cache_basis must be True, False or 'auto'"):
        jaxtree.TreeRegressor(cache_basis="yes").fit(X, np.arange(20.0))


@pytest.fixture
def kept(monkeypatch):
    """The row counts of the chunked data whose basis values a fit keeps."""
    calls = []
    real = source.kept_basis

    def spy(x, basis, host):
        calls.append(x.shape)
        return real(x, basis, host)

    monkeypatch.setattr(source, "kept_basis", spy)
    return calls


@pytest.mark.parametrize("task", ["regress", "classify"])
def test_a_small_tables_kept_values_come_from_the_host(x64, rng, monkeypatch, task):
    # at most HOST_BASIS_MAX_VALUES kept values on a CPU: numpy's (Basis.host_evaluate),
    # nothing compiled for them; the fit equals the one with the compiled values (float64:
    # the values agree to the last bits, the L-BFGS refinements then stop within its relative
    # tolerance of each other, ~1e-8). A wrong layout of the host values (the function-major
    # columns, the chunks' order) changes the formula.
    X = rng.uniform(size=(300, 4))
    f = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2]
    if task == "regress":
        y = f + 0.05 * rng.standard_normal(300)
        make = lambda: jaxtree.TreeRegressor(k=4, random_state=0)  # noqa: E731
        out = lambda m: m.predict(X)  # noqa: E731
    else:
        y = (f + 0.3 * rng.standard_normal(300) > np.median(f)).astype(int)
        make = lambda: jaxtree.TreeClassifier(k=3, random_state=0)  # noqa: E731
        out = lambda m: m.predict_proba(X)  # noqa: E731

    def refuse(*args):
        raise AssertionError("the kept values' program was called on a small table")

    with monkeypatch.context() as m:
        m.setattr(source, "designs_cached", refuse)
        host = make().fit(X, y)
    monkeypatch.setattr(source, "HOST_BASIS_MAX_VALUES", 0)
    compiled = make().fit(X, y)
    assert host.formula() == compiled.formula()
    np.testing.assert_allclose(out(host), out(compiled), rtol=1e-7, atol=1e-7)


def test_the_greedy_search_keeps_the_compiled_values(rng, monkeypatch):
    # the paper's setting (a 30 ms warm fit) keeps the compiled program (FitSpec.host_basis)
    def refuse(*args):
        raise AssertionError("the greedy search's kept values were evaluated on the host")

    monkeypatch.setattr(scoring, "host_designs", refuse)
    X = rng.uniform(size=(200, 3))
    model = jaxtree.TreeRegressor.paper(k=2).fit(X, X[:, 0] ** 2)
    assert model.k_ == 2


def test_the_host_values_are_the_compiled_ones_in_their_layout(rng):
    # scoring.host_designs against the jitted scoring.designs on padded chunks (the scorer's
    # (chunks, rows, q*p) function-major columns), float32: to the rounding of a multiply-add
    basis = jaxtree.basis.default_basis()
    x = rng.uniform(-0.1, 1.1, size=(3, 16, 5)).astype(np.float32)
    x[2, 10:] = 0.0  # padding rows
    x[:, :, 4] = np.nan  # a padding column of the column bucket: NaN values, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = scoring.host_designs(x, basis)
    want = np.asarray(scoring.designs(x, basis))
    assert got.shape == want.shape == (3, 16, basis.q * 5)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-6)  # NaN where the device's are


@pytest.mark.slow  # ~13 s; its kept = evaluated oracle runs by default wherever an estimator's
# small-table fit (the basis kept, in the column bucket) equals fit_batch's member (which
# evaluates it: cache_basis=False): test_batch_moves.py (backfit), test_oracles.py::
# test_fit_batch_optax_refines_and_equals_separate_fits (L-BFGS), test_batch_tol.py; the kept
# values' program on a small table: test_executables.py::
# test_a_small_tables_fit_compiles_light_and_equals_the_default ("jit(designs)")
def test_the_default_keeps_the_basis_on_a_small_table_and_fits_as_without(x64, rng, kept):
    # Float64: the gathered and the evaluated basis values agree to the last bits, so the
    # two fits agree far below float32's rounding. A wrong column of the kept values (the
    # function-major layout, the column bucket's padding) changes the formula.
    X = rng.uniform(size=(300, 4))
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.05 * rng.standard_normal(300)
    auto = jaxtree.TreeRegressor(k=4, random_state=0).fit(X, y)
    assert kept, "cache_basis='auto' kept no basis values on a 300-row table"
    del kept[:]
    plain = jaxtree.TreeRegressor(k=4, random_state=0, cache_basis=False).fit(X, y)
    assert not kept
    assert auto.k_ == plain.k_
    assert auto.formula() == plain.formula()
    np.testing.assert_allclose(auto.predict(X), plain.predict(X), rtol=1e-9,
                               atol=1e-9 * np.abs(y).max())


def test_the_classifier_keeps_its_searches_basis_only(rng, kept, monkeypatch):
    # its searches keep their own rows' values where compiling dominates (classify.Labels._data,
    # fortieth session); its spec keeps none for the other sources (classify.classifier_spec:
    # the shape stage's working rows, which no search reads), so every kept value is a search's
    from jaxtree._fit import classify

    searches = []
    real = classify.Labels._data

    def counted(self, *a, **kw):
        searches.append(1)
        return real(self, *a, **kw)

    monkeypatch.setattr(classify.Labels, "_data", counted)
    X = rng.uniform(size=(200, 3))
    jaxtree.TreeClassifier(k=2).fit(X, (X[:, 0] + X[:, 1] ** 2 > 0.8).astype(int))
    assert len(kept) == len(searches) > 0


def test_only_an_asked_basis_keeps_a_large_table_in_memory():
    # a table the row plan reads chunk by chunk (plan.in_memory False) stays chunked under
    # "auto"; True (numpy's too) asks for every row's basis values, so for the whole table
    class Large:
        in_memory = False

    xa = np.zeros((4, 2), np.float32)
    for cache, chunked in [("auto", True), (False, True), (True, False),
                           (np.bool_(True), False)]:
        assert spec_.fits_in_chunks({"cache_basis": cache}, xa, "identity", Large()) is chunked
