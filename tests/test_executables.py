"""The on-disk cache of compiled search steps (jaxtree._executables, issue 12 item 6).

In-process tests turn the cache on in a private temporary directory with
``_executables.enable`` (JAX's own persistent cache stays off, as in the whole suite) and use
small jitted functions; one subprocess test runs the estimator's held-out fit in two fresh
processes on one cache directory (``test_compilation_cache.run_child``).
"""

import os
import textwrap
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtree import _executables as ex
from jaxtree import _threads
from jaxtree import basis as basis_
from _shared import jax_events
from test_compilation_cache import run_child


def _affine(x, n, scale):
    return x * scale + n, jnp.sum(x)


affine = jax.jit(_affine, static_argnums=2)


def _other(x, n, scale):
    return x - scale * n, jnp.max(x)


other = jax.jit(_other, static_argnums=2)


class Forbidden:
    """Stands in for the jitted function once the executable is on disk: tracing, lowering
    or calling it fails the test, so a result proves the executable came from the file."""

    def lower(self, *a):
        raise AssertionError("traced again")

    def __call__(self, *a):
        raise AssertionError("called the jitted function")


@pytest.fixture
def exe_dir(tmp_path):
    d = tmp_path / "exe"
    d.mkdir(mode=0o700)
    ex.enable(str(d))
    yield d
    ex.enable(None)
    ex._broken.clear()


def files(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".exe"))


def test_a_stored_executable_is_loaded_without_tracing_and_gives_the_jitted_result(exe_dir):
    x, n = np.linspace(-1, 1, 7), np.float64(0.25)
    want = affine(x, n, 3.0)
    c = ex.cached(affine, static_argnums=(2,))
    got = c(x, n, 3.0)
    assert len(files(exe_dir)) == 1
    ex._memory.clear()  # a new process: only the file is left
    c.fn = Forbidden()
    loaded = c(x, n, 3.0)
    for a, b, w in zip(got, loaded, want):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(w))
        np.testing.assert_array_equal(np.asarray(b), np.asarray(w))
    assert loaded[0].dtype == want[0].dtype and loaded[0].shape == (7,)


def test_every_part_of_the_signature_changes_the_key(exe_dir):
    c = ex.cached(affine, static_argnums=(2,))
    x = np.linspace(0, 1, 5)
    calls = [(x, np.float64(1), 2.0), (x, np.float64(1), 3.0),            # static value
             (x[:4], np.float64(1), 2.0),                                  # shape
             (x.astype(np.float32), np.float32(1), 2.0),                   # dtype
             (x, 1.0, 2.0)]                                                # weak type
    for args in calls:
        np.testing.assert_allclose(np.asarray(c(*args)[0]), np.asarray(affine(*args)[0]))
    assert len(files(exe_dir)) == len(calls)
    c(*calls[0])  # the same call again: no new file
    assert len(files(exe_dir)) == len(calls)
    d = ex.cached(other, static_argnums=(2,))  # another function, same arguments
    np.testing.assert_allclose(np.asarray(d(*calls[0])[0]), np.asarray(other(*calls[0])[0]))
    assert len(files(exe_dir)) == len(calls) + 1



def test_the_source_hash_reads_subpackages(tmp_path):
    """A change in any ``.py`` file of the package, a subpackage's included (``_fit``'s
    programs are cached ones), gives stored executables another key; caches and other files
    do not. Planted bug caught: hashing the top folder only (the code until the
    fifty-third session)."""
    (tmp_path / "_fit").mkdir()
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "top.py").write_text("a = 1\n")
    (tmp_path / "_fit" / "select.py").write_text("b = 1\n")
    before = ex._source_hash(str(tmp_path))
    assert ex._source_hash(str(tmp_path)) == before  # deterministic
    (tmp_path / "__pycache__" / "top.cpython.pyc").write_bytes(b"\0")
    (tmp_path / "_fit" / "notes.txt").write_text("not code")
    assert ex._source_hash(str(tmp_path)) == before
    (tmp_path / "_fit" / "select.py").write_text("b = 2\n")
    assert ex._source_hash(str(tmp_path)) != before
    assert len(ex._source_hash()) == 64  # the package's own

def test_a_key_is_remembered_for_equal_arguments(monkeypatch):
    # A fit calls its programs every iteration: the second key of equal arguments is the
    # first one, not written and hashed again; a static value of another type is another key.
    x = np.linspace(0, 1, 5)
    first = ex._key("f", (2.0,), (x, np.float64(1)))
    monkeypatch.setattr(ex, "environment", lambda: pytest.fail("the key was computed again"))
    assert ex._key("f", (2.0,), (x.copy(), np.float64(3))) == first
    monkeypatch.undo()
    assert ex._key("f", (2,), (x, np.float64(1))) != first
    assert ex._key("f", (2.0,), (x[:4], np.float64(1))) != first


def test_a_corrupt_file_is_replaced_and_the_result_is_right(exe_dir):
    c = ex.cached(affine, static_argnums=(2,))
    x, n = np.arange(4.0), np.float64(2)
    want = np.asarray(affine(x, n, 5.0)[0])
    c(x, n, 5.0)
    (name,) = files(exe_dir)
    (exe_dir / name).write_bytes(b"not an executable")
    ex._memory.clear()
    np.testing.assert_array_equal(np.asarray(c(x, n, 5.0)[0]), want)
    assert files(exe_dir) == [name]
    assert (exe_dir / name).read_bytes() != b"not an executable"  # compiled and written again


def test_a_file_that_does_not_run_is_dropped_and_the_jitted_function_answers(exe_dir):
    c = ex.cached(affine, static_argnums=(2,))
    x, n = np.arange(6.0), np.float64(1)
    c(x, n, 2.0)
    (good,) = files(exe_dir)
    c(x[:3], n, 2.0)  # another program (3 rows), filed under its own key
    (bad,) = set(files(exe_dir)) - {good}
    os.replace(exe_dir / bad, exe_dir / good)  # the 3-row program under the 6-row key
    ex._memory.clear()
    np.testing.assert_array_equal(np.asarray(c(x, n, 2.0)[0]), np.asarray(affine(x, n, 2.0)[0]))
    assert files(exe_dir) == []  # dropped; the next compilation writes it afresh


def test_off_and_custom_bases_call_the_jitted_function(tmp_path):
    c = ex.cached(affine, static_argnums=(2,))
    assert ex.directory() is None
    c.fn = lambda *a: "direct"  # noqa: E731
    assert c(np.ones(2), np.float64(0), 1.0) == "direct"
    custom = basis_.Basis((basis_.Powers(2), basis_.CustomFunction("tanh", jnp.tanh)))
    plain = basis_.Basis((basis_.Powers(2),))
    assert ex._key("f", (custom,), (np.ones(2),)) is None
    assert ex._key("f", (plain,), (np.ones(2),)) is not None
    assert ex._key("f", (plain,), (np.ones(2),)) != ex._key("g", (plain,), (np.ones(2),))


def test_a_prediction_is_kept_unless_its_basis_has_a_custom_function(exe_dir):
    """``model.predict_checked`` runs through the executable cache, except for a model whose
    basis holds a custom Python function (its key cannot see the function's code: the cache
    finds it in the model's static data, twice, the second time remembered); both give the
    jitted function's values."""
    import dataclasses

    import jaxtree
    from jaxtree import model as model_

    X = np.random.default_rng(0).uniform(size=(40, 2))
    plain = jaxtree.TreeRegressor(k=1, search="greedy", validation_fraction=None, refine=None,
                                  shapes=0, basis=basis_.Basis((basis_.Powers(2),))).fit(
        X, X[:, 0] ** 2).model_
    custom = dataclasses.replace(plain, basis=basis_.Basis(
        (basis_.Powers(1), basis_.CustomFunction("tanh", jnp.tanh))))
    before, kept = set(files(exe_dir)), set(ex._memory)
    for _ in range(2):
        got = model_.predict_checked(custom, X)
        assert set(files(exe_dir)) == before and set(ex._memory) == kept
    np.testing.assert_array_equal(np.asarray(got), np.asarray(model_._predict_jit(custom, X, True)))
    got = model_.predict_checked(plain, X)
    assert len(set(files(exe_dir)) - before) == 1 and len(set(ex._memory) - kept) == 1
    np.testing.assert_array_equal(np.asarray(got), np.asarray(model_._predict_jit(plain, X, True)))


def test_old_files_beyond_the_limit_are_deleted(exe_dir, monkeypatch):
    monkeypatch.setattr(ex, "MAX_FILES", 2)
    c = ex.cached(affine, static_argnums=(2,))
    for i, s in enumerate((1.0, 2.0, 3.0)):
        c(np.ones(3), np.float64(0), s)
        assert len(files(exe_dir)) == min(i + 1, 2)
    ex._memory.clear()
    c.fn = Forbidden()
    c(np.ones(3), np.float64(0), 3.0)  # the newest two are kept
    c(np.ones(3), np.float64(0), 2.0)
    with pytest.raises(AssertionError, match="called the jitted function"):
        c(np.ones(3), np.float64(0), 1.0)  # the oldest was deleted


CHILD = textwrap.dedent("""
    import numpy as np
    from jaxtree import _executables
    from jaxtree.debug import count_compilations
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(160, 2))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.01 * rng.normal(size=160)
    # The default fit's two cached call sites (the held-out size's step and loss, then the
    # refit's step) with the greedy step, the cheapest to compile.
    make = lambda: jaxtree.TreeRegressor(k=3, search="greedy", validation_fraction=0.25,
                                         basis={"hats": 0, "sines": 2, "cosines": 0,
                                                "powers": 2, "truncated_cubics": 2})
    with count_compilations() as count:  # the fit and its prediction (a cached program too)
        est = make().fit(X, y)
        pred = est.predict(X)
    out = {"pred": pred.tolist(), "formula": est.formula(),
           "lowerings": count.lowerings, "dir": _executables.directory()}
    if os.environ["CHILD_MODE"] == "also_off":   # the same fit through the plain jitted functions
        jaxtree.disable_compilation_cache()
        off = make().fit(X, y)
        out["pred_off"] = off.predict(X).tolist()
    print(json.dumps(out))
""")


# slow: restates test_columns.py::test_warmup_fills_the_cache_for_another_table_in_its_buckets
# (a fresh process on the same cache directory fits the greedy k=3, held-out 0.25 search
# with no lowering or compilation, from the executables on disk) and, for loaded = jitted
# bitwise, test_a_stored_executable_is_loaded_without_tracing_and_gives_the_jitted_result and
# test_a_prediction_is_kept_unless_its_basis_has_a_custom_function, on two more subprocesses
# (~18 s)
@pytest.mark.slow
def test_a_second_process_fits_without_tracing_the_search(tmp_path):
    from test_compilation_cache import run_child

    def child(mode):  # a fresh process on the cache directory under tmp_path
        return run_child(CHILD, tmp_path, CHILD_MODE=mode)[0]

    first = child("also_off")
    exe_dir = tmp_path / "xdg" / "jaxtree" / "executables"
    assert first["dir"] == str(exe_dir) and oct(os.stat(exe_dir).st_mode & 0o777) == "0o700"
    assert len(files(exe_dir)) >= 3  # the search step(s), the held-out loss, the prediction
    assert first["pred"] == first["pred_off"]  # bitwise: the same program as jax.jit's
    second = child("on")
    assert second["lowerings"] == 0  # nothing traced, lowered or compiled: fit, prediction
    assert second["pred"] == first["pred"] and second["formula"] == first["formula"]


SHAPES_CHILD = textwrap.dedent("""
    import numpy as np
    from jaxtree import _executables
    from jaxtree._fit import stages
    from jaxtree.debug import count_compilations
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(200, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.05 * rng.normal(size=200)
    seen = []  # whether the shape stage ran bucketed (a traced SlotSpec, the cached programs)
    bucket = stages.bucket
    stages.bucket = lambda src: seen.append(bucket(src)) or bucket(src)
    with count_compilations() as count:
        est = jaxtree.TreeRegressor(k=2, search="greedy", shapes=2, validation_fraction=None,
                                    shape_knots=(5, 3)).fit(X, y)
    print(json.dumps({"pred": est.predict(X).tolist(), "compiles": count.compiles,
                      "bucketed": seen[0] is not None,
                      "files": len([f for f in os.listdir(_executables.directory())
                                    if f.endswith(".exe")])}))
""")


@pytest.mark.slow  # ~20 s, a second process; the default suite's second-process fit from the
# cache is test_columns.py::test_warmup_fills_the_cache_for_another_table_in_its_buckets
def test_a_second_process_loads_the_shape_stage_and_its_lapack_solves(tmp_path):
    # The shape step solves ridge problems with LAPACK. A process that only loads the stored
    # executable lowers no LAPACK call, and before _executables._ensure_lapack its first
    # solve crashed the process (a segmentation fault, not an exception; jaxlib sets up the
    # kernels of every dtype at once, so float32 covers float64).
    first = run_child(SHAPES_CHILD, tmp_path)[0]
    assert first["bucketed"] and first["files"] >= 5  # the tree's and the shapes' programs
    second = run_child(SHAPES_CHILD, tmp_path)[0]
    assert second["pred"] == first["pred"]
    assert second["compiles"] < first["compiles"] // 2


LAPACK_CHILD = """
    import numpy as np
    from jaxtree import _executables
    _executables._ensure_lapack()
    after_setup = sorted(m for m in sys.modules if m.startswith("scipy.linalg"))
    import jax.numpy as jnp
    a = np.array([[4.0, 1.0], [2.0, 3.0]], np.float32)
    x = jax.jit(jnp.linalg.solve)(a, np.array([1.0, 2.0], np.float32))
    import scipy.linalg  # as always afterwards: its package, with the kernels bound
    rng = np.random.default_rng(0)
    q, r = scipy.linalg.qr(rng.uniform(size=(5, 3)))
    u, v = rng.uniform(size=5), rng.uniform(size=3)
    q1, r1 = scipy.linalg.qr_update(q, r, u, v)   # a Cython user of cython_blas/lapack
    report(after_setup=after_setup, ready=_executables._lapack_ready,
           x=np.asarray(x, np.float64).tolist(),
           bound=[hasattr(scipy.linalg, m) for m in ("cython_blas", "cython_lapack")],
           update=float(np.abs(q1 @ r1 - (q @ r + np.outer(u, v))).max()))
"""


def test_lapack_is_set_up_without_importing_scipy_linalg(tmp_path):
    # jaxlib's set-up reads the kernels from scipy.linalg.cython_blas/cython_lapack; loaded
    # on their own they spare a second process scipy.linalg's __init__ (0.25-0.45 s), and
    # they leave sys.modules so that a later `import scipy.linalg` is as without jaxtree.
    res, _ = run_child(LAPACK_CHILD, tmp_path)
    assert res["ready"] and res["after_setup"] == []
    np.testing.assert_allclose(res["x"], [0.1, 0.6], rtol=1e-6)  # 4x+y=1, 2x+3y=2
    assert res["bound"] == [True, True] and res["update"] < 1e-12


def test_an_unsafe_executables_directory_is_not_used(tmp_path):
    exe_dir = tmp_path / "xdg" / "jaxtree" / "executables"
    exe_dir.mkdir(parents=True)
    os.chmod(tmp_path / "xdg" / "jaxtree", 0o700)
    os.chmod(exe_dir, 0o777)  # others could plant code there
    res, _ = run_child("from jaxtree import _executables as ex\n"
                       "report(path=cc.enable(), exe=ex.directory())", tmp_path)
    assert res["path"] == str(tmp_path / "xdg" / "jaxtree" / "jax") and res["exe"] is None


def test_a_change_of_jax_configuration_changes_the_key():
    args = ("f", (), (np.ones(2),))
    before = ex._key(*args)
    with jax.default_matmul_precision("float32"):
        during = ex._key(*args)
    assert before != during and ex._key(*args) == before


# In the slow suite (two classes ~15 s, three ~25 s of compiling): the cache's oracle on the
# classifier's steps; the regressor's step keeps it in the default suite
# (test_a_stored_executable_is_loaded_without_tracing_and_gives_the_jitted_result and the
# second process's test).
@pytest.mark.slow
@pytest.mark.parametrize("classes", [2, 3])
def test_classifier_steps_go_through_the_cache(exe_dir, monkeypatch, classes):
    """TreeClassifier's search step (one tree, or the one-versus-rest batch) is stored, then
    loaded and called without tracing it (the jitted functions replaced by ones that fail),
    with the results of the plain jitted fit."""
    import jaxtree
    from jaxtree import search
    from jaxtree._fit import classify
    from jaxtree.debug import count_compilations

    rng = np.random.default_rng(3)
    X = rng.uniform(size=(120, 2))
    s = X[:, 0] + np.sin(3 * X[:, 1])
    y = s > np.median(s) if classes == 2 else np.digitize(s, np.quantile(s, [1 / 3, 2 / 3]))
    kw = dict(k=2, refine=None, shapes=0, basis={"hats": 0, "sines": 2, "cosines": 0,
                                                 "powers": 2, "truncated_cubics": 0})
    first = jaxtree.TreeClassifier(**kw).fit(X, y)
    # the step: two programs (classify.binary_step for one small tree, ovr_step_two for the
    # one-versus-rest batch); the kept basis values come from the host (nothing compiled)
    assert len(files(exe_dir)) == 2
    ex._memory.clear()  # a new process: only the files are left
    for wrapper in (search.step_cached, classify.ovr_insert_cached, classify.ovr_finish_cached,
                    classify.binary_insert_cached, classify.binary_finish_cached):
        monkeypatch.setattr(wrapper, "fn", Forbidden())
    with count_compilations() as count:
        second = jaxtree.TreeClassifier(**kw).fit(X, y)
    assert count.lowerings == 0 and count.compiles == 0
    monkeypatch.undo()
    ex.enable(None)
    plain = jaxtree.TreeClassifier(**kw).fit(X, y)
    np.testing.assert_array_equal(second.predict_proba(X), first.predict_proba(X))
    np.testing.assert_array_equal(second.predict_proba(X), plain.predict_proba(X))
    assert second.formula() == plain.formula()


def test_a_static_shape_spec_is_part_of_the_key_and_its_program_is_stored(exe_dir):
    import jax.numpy as jnp

    from jaxtree import scoring, shapes

    rng = np.random.default_rng(0)
    data = scoring.chunk(jnp.asarray(rng.uniform(size=(50, 3))), jnp.asarray(rng.normal(size=50)),
                         chunk_size=32)
    spec = shapes.ShapeSpec(n1=4, n2=3, max_terms=3, pairs=((0, 1),))
    want = jax.device_get(shapes.grams_jit(data, spec))
    assert len(files(exe_dir)) == 1
    other = shapes.ShapeSpec(n1=4, n2=3, max_terms=3, pairs=((0, 2),))
    assert ex._key("g", (other,), (data,)) != ex._key("g", (spec,), (data,))
    ex._memory.clear()  # a new process: the file is loaded, nothing traced or compiled
    from jaxtree.debug import count_compilations

    with count_compilations() as counted:
        got = jax.device_get(shapes.grams_jit(data, spec))
    assert (counted.lowerings, counted.compiles) == (0, 0)
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert len(files(exe_dir)) == 1


# ------------------------------------------------------------------ quick compilation
# jaxtree._executables.quick: inside the block, programs made with quick=True are compiled
# with the QUICK options (a small table's shape stage, FitSpec.quick_shapes).

@pytest.fixture
def compiles(monkeypatch):
    """The compiler options of every AOT compilation (jax.stages.Lowered.compile)."""
    return _recorded_compiles(monkeypatch, lambda lowered, options: options)


def _recorded_compiles(monkeypatch, entry):
    """A list that gets ``entry(lowered, compiler options)`` of every AOT compilation
    (jax.stages.Lowered.compile, patched for the test)."""
    seen = []
    real = jax.stages.Lowered.compile

    def record(self, compiler_options=None, **kw):
        seen.append(entry(self, dict(compiler_options or {})))
        return real(self, compiler_options=compiler_options, **kw)

    monkeypatch.setattr(jax.stages.Lowered, "compile", record)
    return seen


def _program_name(lowered) -> str:
    """A lowered program's name (``"jit(designs)"``)."""
    return getattr(getattr(lowered, "_lowering", None), "_name", "?")


@pytest.mark.parametrize("cache_on", [False, True])
def test_quick_programs_compile_with_the_quick_options_and_give_the_jitted_result(
        tmp_path, compiles, cache_on):
    if cache_on:
        d = tmp_path / "exe"
        d.mkdir(mode=0o700)
        ex.enable(str(d))
    try:
        fn = ex.cached(jax.jit(_affine, static_argnums=2), (2,), quick=True)
        plain = ex.cached(jax.jit(_other, static_argnums=2), (2,))  # not made quick
        x = np.random.default_rng(0).normal(size=(5, 3))
        with ex.quick():
            got = fn(x, 1.5, 2.0)
            again = fn(x, 1.5, 2.0)  # kept: not compiled twice
            other_got = plain(x, 1.5, 2.0)
        assert compiles[0] == {**ex._MARK, **ex.QUICK} and len(compiles) == 1 + cache_on
        want = _affine(x, 1.5, 2.0)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        for a, b in zip(again, want):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        np.testing.assert_allclose(other_got[0], _other(x, 1.5, 2.0)[0], rtol=1e-12)
        if cache_on:  # the plain one through the cache at its own (default) options
            assert compiles[1] == ex._MARK
        fn(x, 1.5, 2.0)  # outside the block: the default program, another executable
        if cache_on:
            assert compiles[-1] == ex._MARK and len(compiles) == 3
            assert len(files(d)) == 3  # the quick one is filed apart from the default one
        else:
            assert len(compiles) == 1  # the plain jitted call (JAX's own compilation)
    finally:
        ex.enable(None)
        ex._broken.clear()


def test_quick_is_per_thread_and_restored(compiles):
    fn = ex.cached(jax.jit(_affine, static_argnums=2), (2,), quick=True)
    x = np.ones((2, 2))
    with ex.quick():
        with ex.quick():
            pass
        fn(x, 0.5, 3.0)  # still inside the outer block
    assert compiles == [{**ex._MARK, **ex.QUICK}]
    import threading

    def other_thread():
        fn(x, 0.5, 4.0)  # another thread is not in the block: the plain call

    with ex.quick():
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
    assert len(compiles) == 1


def test_a_small_tables_shape_stage_compiles_quick_and_equals_the_default(compiles,
                                                                           monkeypatch):
    """TreeRegressor(shapes="auto") on 600 rows (below QUICK_SHAPES_MAX_ROWS): the shape
    stage's programs compile with the QUICK options, the tree's do not; the fit equals the
    one with the rule off (float64: the same terms, predictions to 1e-10). shapes=S
    compiles as always (fit_batch's members)."""
    import jaxtree
    from jaxtree._fit import host_shapes
    from jaxtree._fit import spec as spec_

    rng = np.random.default_rng(3)
    X = rng.uniform(size=(600, 3))
    y = np.sin(5 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.05 * rng.normal(size=600)
    # (8, 5) hats: pair blocks of 25 coefficients; the host stage is off
    # (jaxtree._fit.host_shapes.applies), so the shape stage compiles
    monkeypatch.setattr(host_shapes, "MAX_BLOCK", 0)
    kw = dict(k=1, search="greedy", validation_fraction=None, shape_knots=(8, 5))
    quick = jaxtree.TreeRegressor(**kw).fit(X, y)
    assert quick.model_.shapes is not None  # the stage chose terms
    n_quick = sum(c == {**ex._MARK, **ex.QUICK} for c in compiles)
    assert n_quick >= 3  # grams, start, step, sweeps, values: compiled quick
    del compiles[:]
    jaxtree.TreeRegressor(shapes=2, **kw).fit(X, y)
    assert not any(c == {**ex._MARK, **ex.QUICK} for c in compiles)
    monkeypatch.setattr(spec_, "QUICK_SHAPES_MAX_ROWS", 0)
    del compiles[:]
    plain = jaxtree.TreeRegressor(**kw).fit(X, y)
    assert not any(c == {**ex._MARK, **ex.QUICK} for c in compiles)
    assert quick.formula() == plain.formula()
    np.testing.assert_allclose(quick.predict(X), plain.predict(X), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(quick.history_, plain.history_, rtol=1e-10, atol=1e-12)


@pytest.fixture
def named_compiles(monkeypatch):
    """``(program, compiler options)`` of every AOT compilation, the program by its name
    (``"jit(designs)"``)."""
    return _recorded_compiles(monkeypatch,
                              lambda lowered, options: (_program_name(lowered), options))


# ------------------------------------------------------------------ light compilation
# jaxtree._executables.light: inside the block every cached program compiles with the LIGHT
# options (a small table's fit, FitSpec.light), except those the process's XLA_FLAGS set
# (the suite's flags set them all, so its fits compile as before).

def test_light_programs_compile_with_the_light_options_unless_xla_flags_set_them(
        compiles, monkeypatch):
    fn = ex.cached(jax.jit(_affine, static_argnums=2), (2,))
    qk = ex.cached(jax.jit(_other, static_argnums=2), (2,), quick=True)
    x = np.random.default_rng(1).normal(size=(6, 2))
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
    assert ex._light_options() == ex.LIGHT
    with ex.light():
        got = fn(x, 0.5, 3.0)
        fn(x, 0.5, 3.0)  # kept: compiled once
        with ex.quick():
            qk(x, 0.5, 3.0)  # a quick program in a quick block: the QUICK options
    assert compiles == [{**ex._MARK, **ex.LIGHT}, {**ex._MARK, **ex.QUICK}]
    want = affine(x, 0.5, 3.0)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)
    del compiles[:]
    fn(x, 0.5, 3.0)  # outside the block: the plain jitted call
    assert compiles == []
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_use_fusion_emitters=false")
    assert ex._light_options() == {}
    with ex.light():  # the process's own flags say it: nothing left to set
        fn(x, 0.5, 3.0)
    assert compiles == []
    # a program's own light options (the search's insertion: LLVM level 1 too); the flags
    # still win where they name one
    llvm1 = ex.cached(jax.jit(_other, static_argnums=2), (2,), light=ex.LIGHT_LLVM1)
    with ex.light():
        got = llvm1(x, 0.5, 3.0)
    assert compiles == [{**ex._MARK, "xla_backend_optimization_level": 1}]
    for a, b in zip(got, other(x, 0.5, 3.0)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)
    assert ex._light_options(ex.LIGHT_LLVM1) == {"xla_backend_optimization_level": 1}
    monkeypatch.setenv("XLA_FLAGS", "")
    assert ex._light_options(ex.LIGHT_LLVM1) == ex.LIGHT_LLVM1


def test_light_anywhere_programs_compile_light_outside_a_light_block(compiles, monkeypatch):
    """A program made with light_anywhere (the shape stage's, measured to run as fast light
    at every size) compiles with its light options on a CPU fit whether or not a light block
    is open; a plain light program only inside one; the process's XLA_FLAGS still win; the
    results are the plain jitted call's."""
    from jaxtree import search
    from jaxtree import shapes as shapes_
    from jaxtree._fit import select

    anywhere = ex.cached(jax.jit(_other, static_argnums=2), (2,), light=ex.LIGHT_LLVM1,
                         light_anywhere=True)
    blocked = ex.cached(jax.jit(_affine, static_argnums=2), (2,), light=ex.LIGHT_LLVM1)
    x = np.random.default_rng(2).normal(size=(6, 2))
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
    ex._quick_memory.clear()  # another test's light program of the same key
    got = anywhere(x, 0.5, 3.0)
    blocked(x, 0.5, 3.0)  # no block: the plain jitted call
    assert compiles == [{**ex._MARK, **ex.LIGHT_LLVM1}]
    for a, b in zip(got, other(x, 0.5, 3.0)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)
    del compiles[:]
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_use_fusion_emitters=false "
                       "--xla_backend_optimization_level=0")  # the suite's: nothing to set
    anywhere(x, 0.25, 3.0)
    assert compiles == []
    # the shape stage's programs and the tree's values; not the held-out errors (slower
    # without the fusion emitters at 50,000 rows) nor the L-BFGS programs
    assert search.shape_step_jit.programs[0].light_anywhere
    assert all(c.light_anywhere for f in (shapes_.grams_jit, shapes_.with_table_jit,
                                          shapes_.start_jit, shapes_.finish_jit)
               for c in f.programs)
    assert select.tree_values.light_anywhere
    assert not any(c.light_anywhere for c in select.shape_errors.programs)
    assert not any(c.light_anywhere for c in shapes_.evaluate_chunks_jit.programs)
    assert not (search.finish_cached.light_anywhere or select.joint_cached.light_anywhere
                or search.insert_cached.light_anywhere
                or search.finish_backfit_cached.light_anywhere)


def test_a_small_tables_fit_compiles_light_and_equals_the_default(named_compiles, monkeypatch):
    """TreeRegressor on 300 rows (compiling dominates: FitSpec.light) with XLA_FLAGS that
    leave the fusion emitters on: the fit's programs compile with their light options (the
    kept basis values at LLVM level 1, LIGHT_LLVM1, as every program without an L-BFGS loop;
    those with one with LIGHT alone), except the one-program greedy step (light=False: it
    ran slower); the fit equals the one whose XLA_FLAGS already turn them off (the suite's
    flags; to 1e-6 in float64: other LLVM levels round otherwise)."""
    import jaxtree
    from jaxtree import search
    from jaxtree._fit import select, source

    rng = np.random.default_rng(7)
    X = rng.uniform(size=(300, 3))
    y = np.cos(3 * X[:, 1]) + X[:, 0] * X[:, 2] + 0.05 * rng.normal(size=300)
    kw = dict(k=2, search="greedy", validation_fraction=None, shapes=0)
    suite_flags = os.environ.get("XLA_FLAGS", "")
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
    monkeypatch.setattr(source, "HOST_BASIS_MAX_VALUES", 0)  # the kept values compiled
    ex._quick_memory.clear()
    light = jaxtree.TreeRegressor(**kw).fit(X, y)
    lit = {name: opts for name, opts in named_compiles
           if opts in ({**ex._MARK, **ex.LIGHT}, {**ex._MARK, **ex.LIGHT_LLVM1})}
    assert lit.get("jit(designs)") == {**ex._MARK, **ex.LIGHT_LLVM1}, named_compiles
    assert not any("step" in name for name in lit), lit  # search.step_cached: light=False
    # the step's two programs compile light: the insertion at LLVM level 1, the finish of
    # the backfit search (the default below 10,000 rows) too (its compilation ends the
    # demo's first fit), the greedy search's finish and the backfitting round's L-BFGS loop
    # without level 1 (they ran slower there where compiling did not end the fit)
    assert search.insert_cached.light == ex.LIGHT_LLVM1 and search.finish_cached.light == ex.LIGHT
    assert search.finish_backfit_cached.light == ex.LIGHT_LLVM1
    assert search.finish_backfit_cached.name != search.finish_cached.name  # their own keys
    assert select.joint_cached.light == ex.LIGHT
    assert not search.step_cached.light
    # the programs measured to run as fast at level 1 (BENCHMARKS.md, thirty-sixth session)
    assert source.designs_cached.light == ex.LIGHT_LLVM1
    assert source.supported_cached.light == ex.LIGHT_LLVM1
    assert select.held_out_errors_cached.light == select.tree_values.light == ex.LIGHT_LLVM1
    assert all(c.light == ex.LIGHT_LLVM1 for c in search.shape_step_jit.programs)
    monkeypatch.setenv("XLA_FLAGS", suite_flags)
    del named_compiles[:]
    plain = jaxtree.TreeRegressor(**kw).fit(X, y)
    assert not any(opts in ({**ex._MARK, **ex.LIGHT}, {**ex._MARK, **ex.LIGHT_LLVM1})
                   for _, opts in named_compiles)
    assert light.formula() == plain.formula()
    # LLVM level 1 there, level 0 under the suite's flags: the same arithmetic rounded
    # otherwise, carried through the L-BFGS refinement (measured: 8e-8 relative)
    np.testing.assert_allclose(light.predict(X), plain.predict(X), rtol=1e-6, atol=1e-9)


def test_small_predictions_compile_light_and_equal_a_larger_block(named_compiles,
                                                                   monkeypatch):
    """predict's blocks of at most PREDICT_LIGHT_ROWS rows (every call of up to 1,024 rows:
    the first predict after a small fit) compile the prediction at LIGHT_LLVM1, with
    XLA_FLAGS that leave the options to jaxtree; a larger block compiles as always (the
    light program ran 30-75% slower at 200,000 rows). A row's prediction is the larger block's
    (to 1e-12: other LLVM levels may round otherwise; measured bitwise at XLA's defaults)."""
    import jaxtree
    from jaxtree._fit import pipeline

    rng = np.random.default_rng(8)
    X = rng.uniform(size=(300, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2]
    est = jaxtree.TreeRegressor(k=2, search="greedy", validation_fraction=None,
                                shapes=0).fit(X, y)
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
    monkeypatch.setattr(pipeline, "HOST_PREDICT_MAX_ROWS", 0)  # the compiled prediction's
    ex._quick_memory.clear()
    del named_compiles[:]
    small = est.predict(X[:200])  # a block of 1,024 rows
    est.predict(X[:30])  # the same block: kept
    assert named_compiles == [("jit(_predict_impl)", {**ex._MARK, **ex.LIGHT_LLVM1})], (
        named_compiles)
    del named_compiles[:]
    big = est.predict(np.concatenate([X] * 4))  # 1,200 rows: a block of 2,048
    assert all(opts != {**ex._MARK, **ex.LIGHT_LLVM1} for _, opts in named_compiles), (
        named_compiles)
    np.testing.assert_allclose(small, big[:200], rtol=1e-12, atol=1e-12)
    assert pipeline.PREDICT_LIGHT_ROWS == pipeline.PREDICT_MIN_ROWS == 1024


def test_a_one_versus_rest_prediction_is_cached_and_compiles_light(named_compiles,
                                                                     monkeypatch):
    """A 3-class classifier's decision values (one program for the K trees,
    _fit.classify._block_values) go through the executable cache as the regressor's prediction
    does: at LIGHT_LLVM1 in blocks of up to 1,024 rows, as always in larger ones, the rows'
    values the same."""
    import jaxtree

    rng = np.random.default_rng(9)
    X = rng.uniform(size=(300, 3))
    y = np.digitize(np.sin(3 * X[:, 0]) + X[:, 1], [0.6, 1.2])
    clf = jaxtree.TreeClassifier(k=1, search="greedy", validation_fraction=None,
                                 shapes=0).fit(X, y)
    assert clf.decision_function(X[:5]).shape == (5, 3)
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
    from jaxtree._fit import pipeline
    monkeypatch.setattr(pipeline, "HOST_PREDICT_MAX_ROWS", 0)  # the compiled prediction's
    ex._quick_memory.clear()
    del named_compiles[:]
    small = clf.decision_function(X[:200])
    assert named_compiles == [("jit(_block_values)", {**ex._MARK, **ex.LIGHT_LLVM1})], (
        named_compiles)
    del named_compiles[:]
    big = clf.decision_function(np.concatenate([X] * 4))
    assert all(opts != {**ex._MARK, **ex.LIGHT_LLVM1} for _, opts in named_compiles), (
        named_compiles)
    np.testing.assert_allclose(small, big[:200], rtol=1e-12, atol=1e-12)


def test_a_small_binary_classifiers_step_compiles_light_and_equals_the_default(
        named_compiles, monkeypatch):
    """TreeClassifier on 300 rows (FitSpec.light) with XLA_FLAGS that leave the fusion
    emitters on: its search step's two programs (classify.binary_step: the step's rows at
    most LIGHT_STEP_MAX_ROWS) and kept basis values compile at LIGHT_LLVM1 in the fit's
    light block; with the rule at 0 rows the step is the regressor's one-program
    search.step_cached (XLA's defaults) where classify.SPLIT_LARGE_STEP is off, and else two
    programs, the finish at LIGHT (classify.binary_finish_large_cached); the probabilities
    agree to 1e-6 (other LLVM levels round otherwise)."""
    import jaxtree
    from jaxtree import search
    from jaxtree._fit import classify, source

    rng = np.random.default_rng(11)
    X = rng.uniform(size=(300, 3))
    y = (np.sin(4 * X[:, 0]) + X[:, 1] - 0.6 + 0.2 * rng.normal(size=300) > 0).astype(int)
    kw = dict(k=2, validation_fraction=None, shapes=0)
    suite_flags = os.environ.get("XLA_FLAGS", "")
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
    monkeypatch.setattr(source, "HOST_BASIS_MAX_VALUES", 0)  # the kept values compiled
    ex._quick_memory.clear()
    light = jaxtree.TreeClassifier(**kw).fit(X, y)
    lit = {name: opts for name, opts in named_compiles if opts == {**ex._MARK, **ex.LIGHT_LLVM1}}
    assert {"jit(loss_insert_step)", "jit(loss_finish_step)", "jit(designs)"} <= set(lit), (
        named_compiles)
    assert "jit(step)" not in dict(named_compiles), named_compiles
    # above the rule, in a light fit: the insertion at LIGHT_LLVM1, the finish at LIGHT
    monkeypatch.setattr(classify, "LIGHT_STEP_MAX_ROWS", 0)
    del named_compiles[:]
    large = jaxtree.TreeClassifier(**kw).fit(X, y)
    compiled = dict(named_compiles)
    # (the insertion is the light fit's program, the same key: not compiled again)
    assert compiled.get("jit(loss_insert_step)", {**ex._MARK, **ex.LIGHT_LLVM1}) == {
        **ex._MARK, **ex.LIGHT_LLVM1}, compiled
    assert compiled.get("jit(loss_finish_step)") == {**ex._MARK, **ex.LIGHT}, compiled
    assert "jit(step)" not in compiled
    assert light.formula() == large.formula()
    np.testing.assert_allclose(light.predict_proba(X), large.predict_proba(X), rtol=1e-6,
                               atol=1e-9)
    monkeypatch.setenv("XLA_FLAGS", suite_flags)
    monkeypatch.setattr(classify, "SPLIT_LARGE_STEP", False)
    used = []
    shared = search.step_cached

    def counted(*a):
        used.append(1)
        return shared(*a)

    counted.ahead = lambda *a: used.append(1) or shared.ahead(*a)  # named ahead first
    monkeypatch.setattr(search, "step_cached", counted)
    del named_compiles[:]
    plain = jaxtree.TreeClassifier(**kw).fit(X, y)
    assert used  # above the rule: the regressor's cached step
    assert not any(opts == {**ex._MARK, **ex.LIGHT_LLVM1} for _, opts in named_compiles)
    assert light.formula() == plain.formula()
    np.testing.assert_allclose(light.predict_proba(X), plain.predict_proba(X), rtol=1e-6,
                               atol=1e-9)


# ------------------------------------------------------------------ read-ahead
# jaxtree._executables._follow: a process's first program's <key>.trail lists the programs
# that followed it; a later process loads those on a background thread.

def _new_process(d):
    """What a new process sees: only the files (memory, trail and pending loads reset)."""
    ex.enable(str(d))


def _wait_read_ahead():
    import concurrent.futures

    concurrent.futures.wait(list(ex._pending.values()))  # no race with the test's next call


def _two_programs(d):
    """Runs affine then other once (a first process); returns their keys and arguments."""
    x, n = np.linspace(-1, 1, 6), np.float64(0.5)
    first, second = ex.cached(affine, (2,)), ex.cached(other, (2,))
    first(x, n, 2.0)
    k1 = ex._trail[0][0]
    second(x, n, 2.0)
    k2 = ex._trail[1][0]
    return first, second, (x, n, 2.0), k1, k2


def test_a_second_process_reads_ahead_the_programs_that_followed_its_first(exe_dir):
    import json

    first, second, args, k1, k2 = _two_programs(exe_dir)
    trail = exe_dir / (k1 + ".trail")
    assert json.loads(trail.read_text()) == [[k2, False]]  # the first program's followers
    assert not (exe_dir / (k2 + ".trail")).exists()
    written = trail.stat().st_mtime_ns
    _new_process(exe_dir)
    first.fn = second.fn = Forbidden()  # both must come from their files
    used = ex.read_ahead_used
    got1 = first(*args)
    assert k2 in ex._pending  # its load started with the first program's
    _wait_read_ahead()
    got2 = second(*args)
    assert ex.read_ahead_used == used + 1 and not ex._pending
    for got, fn in ((got1, _affine), (got2, _other)):
        for a, w in zip(got, fn(*args)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(w), rtol=1e-12)
    assert trail.stat().st_mtime_ns == written  # the same order: nothing rewritten


@pytest.mark.parametrize("content", ["not json", '[["../../etc/passwd", false]]',
                                     '[["' + "ab" * 32 + '", false]]', '{"a": 1}'])
def test_a_malformed_or_stale_trail_is_ignored_and_then_rewritten(exe_dir, content):
    import json

    first, second, args, k1, k2 = _two_programs(exe_dir)
    trail = exe_dir / (k1 + ".trail")
    trail.write_text(content)  # garbage, a path, a program not on disk, another type
    _new_process(exe_dir)
    used = ex.read_ahead_used
    got1 = first(*args)
    assert not ex._pending  # nothing loaded ahead
    got2 = second(*args)  # loaded by itself from its file
    assert ex.read_ahead_used == used
    np.testing.assert_allclose(np.asarray(got1[0]), np.asarray(_affine(*args)[0]), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(got2[0]), np.asarray(_other(*args)[0]), rtol=1e-12)
    assert json.loads(trail.read_text()) == [[k2, False]]  # this process's order written


def test_a_corrupt_file_read_ahead_falls_back_to_a_fresh_compilation(exe_dir):
    first, second, args, k1, k2 = _two_programs(exe_dir)
    (exe_dir / (k2 + ".exe")).write_bytes(b"not an executable")
    _new_process(exe_dir)
    used = ex.read_ahead_used
    first.fn = Forbidden()
    first(*args)
    _wait_read_ahead()
    got = second(*args)  # the read-ahead load failed; its own load fails: compiled again
    assert ex.read_ahead_used == used
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(_other(*args)[0]), rtol=1e-12)
    assert (exe_dir / (k2 + ".exe")).read_bytes() != b"not an executable"


UPGRADE_CHILD = textwrap.dedent("""
    import jax.numpy as jnp
    from jaxtree import _executables as ex
    cc.enable()
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)  # JAX keeps them all
    if os.environ["CHILD_SOURCE"] not in ("old", "older"):  # another jaxtree source
        ex._source_hash = lambda: os.environ["CHILD_SOURCE"]
    fn = jax.jit(lambda x, k: jnp.cumsum(jnp.sin(x) * k) @ jnp.cos(x), static_argnums=1)
    x = jnp.linspace(0.0, 1.0, 64)
    if os.environ["CHILD_SOURCE"] == "older":  # an older jaxtree: its compilation went to
        fn.lower(x, 3.0).compile(compiler_options=ex._MARK)  # JAX's cache as well
    c = ex.cached(fn, static_argnums=(1,))
    lowered = []
    real = fn.lower
    c.fn = type("Counting", (), {"lower": lambda self, *a: lowered.append(1) or real(*a)})()
    got = float(c(x, 3.0))
    key = ex._key(c.name, (3.0,), (x,))
    print(json.dumps({"got": got, "want": float(fn(x, 3.0)), "lowered": len(lowered),
                      "stored": os.path.exists(os.path.join(ex.directory(), key + ".exe")),
                      "broken": key in ex._broken}))
""")


def test_a_program_jax_kept_for_an_older_source_is_stored_again(tmp_path):
    """This module's compilations are stored here and not in JAX's persistent cache, and a
    program an older jaxtree left in JAX's cache is compiled afresh once and stored: after
    a change of jaxtree's source (an upgrade) the program's key here is new while JAX's
    cache held the same program, and an executable loaded from there cannot be stored
    (XLA cannot serialise a loaded executable), so the program was traced and lowered in
    every process of the new source."""
    def child(source, home):
        return run_child(UPGRADE_CHILD, tmp_path / home, CHILD_SOURCE=source)[0]

    older = child("older", "a")  # stored here; the older code's copy sits in JAX's cache
    assert older["stored"] and not older["broken"] and older["lowered"] == 1, older
    new = child("new", "a")  # JAX's cache has the program; this source's key is new
    assert new["stored"] and not new["broken"], new
    # lowered once: the compilation that found JAX's entry is redone from the same lowering
    # (under _RETRY), and the fresh executable is the one stored
    assert new["lowered"] == 1
    again = child("new", "a")
    assert again["stored"] and again["lowered"] == 0  # loaded from the file
    old = child("old", "b")  # this code's compilations leave nothing in JAX's cache:
    newer = child("newer", "b")  # a new source finds no entry there and compiles once
    for r in (old, newer):
        assert r["stored"] and not r["broken"] and r["lowered"] == 1, r
    for r in (older, new, again, old, newer):
        assert r["got"] == r["want"]


# ------------------------------------------------------------------ compiling ahead
# jaxtree._executables.cached.ahead: a program traced and lowered on the calling thread and
# compiled on a background thread, taken by the call that follows (forty-sixth session).

@pytest.fixture
def compile_threads(monkeypatch):
    """``(program name, thread name)`` of every AOT compilation."""
    import threading

    yield _recorded_compiles(monkeypatch, lambda lowered, options: (
        _program_name(lowered), threading.current_thread().name))
    for fut in list(ex._compiling.values()):  # a failed test leaves no compilation behind
        fut.exception()
    ex._compiling.clear()


def _halves(x, n):
    return x * 0.5 + n, 1.0  # a weak-typed second output


def _joined(a, b):
    return jnp.sum(a) * b


def test_ahead_compiles_once_on_a_background_thread_and_the_call_takes_it(
        exe_dir, compile_threads):
    first = ex.cached(jax.jit(_halves), ())
    second = ex.cached(jax.jit(_joined), ())
    x, n = np.linspace(-1, 1, 9), np.float64(0.5)
    spec = jax.ShapeDtypeStruct(x.shape, x.dtype)
    out = first.ahead(spec, n)
    assert out is not None and out[0].shape == (9,) and out[1].weak_type  # as the call's
    assert second.ahead(*out) is not None  # the next program, on the first's output shapes
    assert first.ahead(spec, n) is None  # compiling already: nothing started twice
    a, b = first(x, n)
    got = second(a, b)
    np.testing.assert_allclose(np.asarray(a), x * 0.5 + 0.5, rtol=0, atol=1e-15)
    assert float(got) == pytest.approx(np.sum(x * 0.5 + 0.5))
    # one compilation each, both off the calling thread, under the calls' own keys
    assert sorted(name for name, _ in compile_threads) == ["jit(_halves)", "jit(_joined)"]
    assert all(t.startswith("jaxtree-compile") for _, t in compile_threads), compile_threads
    assert len(files(exe_dir)) == 2  # stored as a call's own compilation is
    assert first.ahead(spec, n) is None  # in memory
    ex._memory.clear()
    assert first.ahead(spec, n) is None  # on disk: a load, not a compilation
    assert not ex._compiling


def test_ahead_does_nothing_where_the_call_would_not_use_the_cache(compile_threads):
    # the cache off and no light or quick options: the call is the jitted function's own
    fn = ex.cached(jax.jit(_halves), ())
    assert fn.ahead(jax.ShapeDtypeStruct((3,), np.float64), np.float64(1)) is None
    assert not compile_threads and not ex._compiling


def _waiting_setup(monkeypatch, cores):
    """Two programs through the cache: ``first`` (``_halves``), whose ahead compilation is
    held until the test's event is set, and ``second`` (``_joined``), which a
    :func:`jaxtree._executables.while_waiting` task names ahead. Returns ``(first, second,
    release, log)``; ``log`` gets ``("start"|"end", program name)`` of each compilation."""
    import threading

    monkeypatch.setattr(ex, "_cores", lambda: cores)
    release, log, real = threading.Event(), [], ex._compile

    def held(lowered, options, stored):
        name = _program_name(lowered)
        log.append(("start", name))
        if name == "jit(_halves)":
            assert release.wait(30)
        try:
            return real(lowered, options, stored)
        finally:
            log.append(("end", name))

    monkeypatch.setattr(ex, "_compile", held)
    return ex.cached(jax.jit(_halves), ()), ex.cached(jax.jit(_joined), ()), release, log


def test_a_waiting_task_runs_while_a_core_is_free_and_its_programs_compile_after(
        exe_dir, monkeypatch, compile_threads):
    """The task runs once, on the waiting thread, while the awaited program compiles; the
    program it names ahead compiles after that one, not beside it, and the call takes it."""
    import threading

    first, second, release, log = _waiting_setup(monkeypatch, cores=2)
    x, n = np.linspace(-1, 1, 9), np.float64(0.5)
    ran = []

    def task():
        ran.append(threading.current_thread().name)
        b = jax.ShapeDtypeStruct((), np.float64, weak_type=True)  # as first's output
        assert second.ahead(jax.ShapeDtypeStruct((9,), np.float64), b) is not None
        time.sleep(0.3)  # time enough for a compilation beside the held one to start
        release.set()

    assert first.ahead(jax.ShapeDtypeStruct(x.shape, x.dtype), n) is not None
    with ex.while_waiting(task):
        a, b = first(x, n)
        got = second(a, b)
    assert ran == [threading.current_thread().name]
    assert log.index(("end", "jit(_halves)")) < log.index(("start", "jit(_joined)")), log
    assert float(got) == pytest.approx(np.sum(x * 0.5 + 0.5))
    assert sorted(name for name, _ in compile_threads) == ["jit(_halves)", "jit(_joined)"]
    assert not ex._compiling and not getattr(ex._local, "waiting", None)


def test_a_waiting_task_waits_for_a_free_core_and_a_failing_one_is_no_error(
        exe_dir, monkeypatch, compile_threads):
    """On one core the thread waits without running the task (its tracing would compete
    with the compilation) and drops it at the block's end; a task that raises leaves the
    call's result and the thread's state as they were."""
    import threading

    first, _, release, _ = _waiting_setup(monkeypatch, cores=1)
    x, n = np.linspace(-1, 1, 9), np.float64(0.5)
    ran = []
    assert first.ahead(jax.ShapeDtypeStruct(x.shape, x.dtype), n) is not None
    release.set()
    with ex.while_waiting(lambda: ran.append(1)):
        first(x, n)
    assert not ran and not getattr(ex._local, "waiting", None)

    monkeypatch.setattr(ex, "_cores", lambda: 2)
    ex._memory.clear()
    ex._quick_memory.clear()
    for f in os.listdir(exe_dir):
        os.unlink(exe_dir / f)

    def fails():
        ran.append(2)
        raise RuntimeError("planted")

    release.clear()
    timer = threading.Timer(0.2, release.set)  # the held compilation ends after the task
    timer.start()
    assert first.ahead(jax.ShapeDtypeStruct(x.shape, x.dtype), n) is not None
    with ex.while_waiting(fails):
        a, _ = first(x, n)
    timer.join()
    assert ran == [2] and getattr(ex._local, "deferred", None) is None
    np.testing.assert_allclose(np.asarray(a), x * 0.5 + 0.5, rtol=0, atol=1e-15)


def test_a_failed_ahead_compilation_is_compiled_by_the_call(exe_dir, monkeypatch,
                                                             compile_threads):
    fn = ex.cached(jax.jit(_joined), ())
    a, b = np.arange(4.0), np.float64(2)
    real = ex._compile
    calls = []

    def fail_once(lowered, options, stored):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("planted")
        return real(lowered, options, stored)

    monkeypatch.setattr(ex, "_compile", fail_once)
    assert fn.ahead(a, b) is not None
    assert float(fn(a, b)) == 12.0
    assert len(calls) == 2 and not ex._compiling


def _fit_in_cache(d, fit):
    """``fit()`` with the executable cache on in the new private directory ``d``; the
    cache is off again afterwards."""
    d.mkdir(mode=0o700)
    ex.enable(str(d))
    try:
        return fit()
    finally:
        ex.enable(None)
        ex._broken.clear()


def _count_waiting_tasks(monkeypatch) -> list:
    """A list that gets, each time a fit's thread runs its waiting tasks, how many programs
    they started compiling ahead (``_cores`` raised so that the shape stage's task runs at
    the first wait, whatever the machine and its timing)."""
    monkeypatch.setattr(ex, "_cores", lambda: 64)
    started, real_run = [], ex._run_waiting

    def run_waiting(awaited):
        before = set(ex._compiling)
        real_run(awaited)
        started.append(len(set(ex._compiling) - before))

    monkeypatch.setattr(ex, "_run_waiting", run_waiting)
    return started


def test_a_fit_compiles_its_programs_ahead_once_each_and_equals_the_fit_without(
        tmp_path, compile_threads, monkeypatch):
    """The default regressor on a small table that keeps shape terms (the backfit search's
    two programs, the held-out errors, the shape stage, the backfitting round) through the
    executable cache: the programs named ahead compile on the compile threads, and the fit
    compiles the same programs, each once, as one whose programs compile at their calls, and
    equals it bit for bit. The shape stage's programs are named ahead by the task that runs
    while the search waits for its step, the backfitting round's at its start."""
    import jaxtree
    from jaxtree._fit import host_shapes
    from jaxtree._fit import spec as spec_

    tasks_run = _count_waiting_tasks(monkeypatch)
    monkeypatch.setattr(spec_, "HOST_BACKFIT", False)  # the compiled backfitting round
    monkeypatch.setattr(host_shapes, "MAX_BLOCK", 0)  # and the compiled shape stage
    # one fit's programs: not the cross-validated choice of shapes="additive" after it,
    # whose folds' fits are fits of their own rows
    monkeypatch.setattr(spec_, "ADDITIVE_CV_FOLDS", 0)

    rng = np.random.default_rng(3)
    X = rng.uniform(size=(400, 3))
    y = np.abs(X - 0.3) @ np.array([3.0, 1.0, 2.0]) + 0.05 * rng.normal(size=400)

    def fit(home):
        # (8, 5) hats, the shape stage compiled
        return _fit_in_cache(tmp_path / home,
                             lambda: jaxtree.TreeRegressor(k=3, shape_knots=(8, 5)).fit(X, y))

    ahead = fit("ahead")
    assert ahead.model_.shapes is not None  # the backfitting round ran
    assert tasks_run == [5], tasks_run  # the shape stage's task, once: its five programs
    names = sorted(name for name, _ in compile_threads)
    off_thread = {name for name, t in compile_threads if t.startswith("jaxtree-compile")}
    assert off_thread == {"jit(insert_step)", "jit(finish_step)", "jit(mse_and_errors)",
                          "jit(grams)", "jit(with_table)", "jit(start)", "jit(shape_step)",
                          "jit(shape_mse_and_errors)", "jit(evaluate_chunks)",
                          "jit(finish)"}, compile_threads
    monkeypatch.setattr(ex.cached, "ahead", lambda self, *args: None)
    del compile_threads[:]
    at_calls = fit("at_calls")
    assert compile_threads and not any(t.startswith("jaxtree-compile")
                                       for _, t in compile_threads)
    # the same compilations (two Grams and two evaluations: the search's and the round's
    # programs), none twice for being named ahead
    assert sorted(name for name, _ in compile_threads) == names
    assert ahead.formula() == at_calls.formula()
    np.testing.assert_array_equal(ahead.predict(X), at_calls.predict(X))


def test_the_classifiers_shape_stage_and_round_compile_ahead_and_equal_the_fit_without(
        tmp_path, compile_threads, monkeypatch):
    """The binary classifier on a small table that keeps shape terms: its search step (two
    programs),
    the shape stage's programs (the waiting task, run once while the step compiles) and
    its Newton round's (named at the round's start) compile on the compile threads, the
    fit compiles the same programs as one whose programs compile at their calls, and its
    probabilities equal that one's bit for bit."""
    import jaxtree
    from jaxtree._fit import spec as spec_

    tasks_run = _count_waiting_tasks(monkeypatch)
    monkeypatch.setattr(spec_, "HOST_BACKFIT", False)  # the compiled Newton round
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(400, 3))
    y = (np.abs(X - 0.3) @ np.array([6.0, 2.0, 4.0]) - 3.0 + 0.3 * rng.normal(size=400)
         > 0).astype(int)

    def fit(home):
        return _fit_in_cache(tmp_path / home, lambda: jaxtree.TreeClassifier(k=3).fit(X, y))

    from jaxtree._fit import host_shapes
    monkeypatch.setattr(host_shapes, "MAX_BLOCK", 0)  # the compiled shape stage, not the host's

    ahead = fit("ahead")
    assert ahead.model_.shapes is not None  # the round ran
    assert tasks_run == [5], tasks_run  # the shape stage's task, while the step compiled
    names = sorted(name for name, _ in compile_threads)
    off_thread = {name for name, t in compile_threads if t.startswith("jaxtree-compile")}
    assert {"jit(loss_insert_step)", "jit(loss_finish_step)", "jit(grams)", "jit(with_table)",
            "jit(start)", "jit(shape_step)",
            "jit(shape_mse_and_errors)", "jit(evaluate_chunks)", "jit(finish)"} <= off_thread, \
        compile_threads
    monkeypatch.setattr(ex.cached, "ahead", lambda self, *args: None)
    del compile_threads[:]
    at_calls = fit("at_calls")
    assert sorted(name for name, _ in compile_threads) == names
    assert ahead.formula() == at_calls.formula()
    np.testing.assert_array_equal(ahead.predict_proba(X), at_calls.predict_proba(X))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_forgets_the_parents_loads_and_compilations():
    """A child forked while a read-ahead load or an ahead compilation was in flight has no
    thread to finish it: it starts without them (waiting would never end) and with a free
    lock."""
    import concurrent.futures
    import warnings

    never = concurrent.futures.Future()  # stands in for one a parent's thread would finish
    _threads.pool("compile", ex.COMPILE_THREADS)  # the parent's pool, whose threads the child lacks
    with ex._lock:
        ex._compiling["c" * 64] = never
        ex._pending["p" * 64] = never
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # JAX warns that a fork and threads do not mix
            pid = os.fork()
        if pid == 0:  # the child: no pytest here, only its exit status
            ok = (not ex._compiling and not ex._pending and not _threads._POOLS
                  and ex._lock.acquire(timeout=5))
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        assert ex._compiling and ex._pending and "compile" in _threads._POOLS  # the parent's
    finally:
        ex._compiling.pop("c" * 64, None)
        ex._pending.pop("p" * 64, None)


def test_cached_compiles_says_whether_ahead_would_start_a_compilation(tmp_path):
    """``cached.compiles``: True before a program is compiled (cache on, or a light tier),
    False once it is in memory or on disk, False where the call goes to the jitted function
    itself (cache off, no tier)."""
    x, n = np.linspace(-1, 1, 6), np.float64(0.5)
    fn = ex.cached(jax.jit(_affine, static_argnums=2), (2,))
    assert not fn.compiles(x, n, 3)  # cache off, no light block: the jitted function
    d = tmp_path / "exe"
    d.mkdir(mode=0o700)
    ex.enable(str(d))
    try:
        assert fn.compiles(x, n, 3)
        fn(x, n, 3)
        assert not fn.compiles(x, n, 3)  # in memory
        assert fn.compiles(x[:4], n, 3)  # another shape: another program
        _new_process(d)
        ex._memory.clear()
        assert not fn.compiles(x, n, 3)  # on disk
    finally:
        ex.enable(None)
        ex._broken.clear()


def _two_program_steps_data():
    """300 rows of 3 covariates, their +-1 labels chunked, a small basis, the step's limit."""
    from jaxtree import scoring

    rng = np.random.default_rng(13)
    X = rng.uniform(size=(300, 3))
    ypm = np.where(np.sin(4 * X[:, 0]) + X[:, 1] * X[:, 2] > 0.6, 1.0, -1.0)
    basis = basis_.make_basis(hats=2, sines=2, cosines=0, powers=2, truncated_cubics=0)
    return X, scoring.chunk(X, ypm, chunk_size=512), basis, np.int32(4)


def _binary_steps_agree(data, basis, cfg, limit):
    """classify.binary_step (search.loss_insert_step, then loss_finish_step) gives the
    one-program step's trees and records (search.step_jit) over four iterations, in float64
    to 1e-12."""
    from jaxtree import program as prog
    from jaxtree import search
    from jaxtree._fit import classify

    one = two = prog.empty_program(cfg.max_k, np.float64)
    run_two = classify.binary_step(data, basis, cfg, limit)
    for _ in range(4):
        one, info_one = search.step_jit(one, data, basis, cfg, limit)
        two, info_two = run_two(two)
        for a, b in zip(jax.tree_util.tree_leaves((one, info_one)),
                        jax.tree_util.tree_leaves((two, info_two))):
            np.testing.assert_allclose(np.asarray(b, np.float64), np.asarray(a, np.float64),
                                       rtol=1e-12, atol=1e-12)
    assert int(prog.n_ops(two)) >= 2


@pytest.mark.slow  # ~12 s; the default suite checks the classifier's own configuration
# (the backfit search without pair lookahead) in the test below
def test_the_two_program_steps_of_other_searches_and_one_versus_rest_are_the_one_program_steps():
    """The binary step in two programs for the backfit search with pair lookahead and the
    greedy one (:func:`_binary_steps_agree`), and the one-versus-rest step in two programs
    (classify.ovr_step_two) as the one-program ovr_step."""
    from jaxtree import program as prog
    from jaxtree import scoring
    from jaxtree import search
    from jaxtree._fit import classify

    X, data, basis, limit = _two_program_steps_data()
    backfit = search.search_config("backfit", 4, 3 * basis.q, loss="logistic")
    for cfg in (backfit, search.Config(max_k=4, loss="logistic")):
        _binary_steps_agree(data, basis, cfg, limit)
    cls = np.digitize(X[:, 0] + X[:, 1] * X[:, 2], [0.5, 0.9])
    ys = jnp.stack([scoring.chunk(X, np.where(cls == c, 1.0, -1.0), chunk_size=512).y
                    for c in range(3)])
    cfg = backfit._replace(pair_leaves=0)
    sizes = np.full(3, 4, np.int32)
    one = two = prog.stack_on_host([prog.empty_program(cfg.max_k, np.float64)] * 3)
    run_two = classify.ovr_step_two(data, ys, basis, cfg, sizes)
    for _ in range(3):
        one, info_one = classify.ovr_step_jit(one, data, ys, basis, cfg, sizes)
        two, info_two = run_two(two)
        for a, b in zip(jax.tree_util.tree_leaves((one, info_one)),
                        jax.tree_util.tree_leaves((two, info_two))):
            np.testing.assert_allclose(np.asarray(b, np.float64), np.asarray(a, np.float64),
                                       rtol=1e-12, atol=1e-12)
    assert min(int(prog.n_ops(prog.member_on_host(two, c))) for c in range(3)) >= 2


def test_the_small_binary_classifiers_step_in_two_programs_is_the_one_program_step(
        tmp_path, monkeypatch):
    """classify.binary_step gives the one-program step's trees and records in the
    classifier's own configuration (the backfit search without pair lookahead:
    :func:`_binary_steps_agree`; the other searches and the one-versus-rest step in the slow
    test above); from a filled executable cache (a new process) the binary step neither
    traces nor compiles."""
    from jaxtree import program as prog
    from jaxtree import search
    from jaxtree._fit import classify
    from jaxtree.debug import count_compilations

    _, data, basis, limit = _two_program_steps_data()
    backfit = search.search_config("backfit", 4, 3 * basis.q, loss="logistic")
    _binary_steps_agree(data, basis, backfit._replace(pair_leaves=0), limit)
    # a new process on a filled cache: the step's programs load, nothing traced
    d = tmp_path / "exe"
    d.mkdir(mode=0o700)
    ex.enable(str(d))
    try:
        cfg = backfit._replace(pair_leaves=0)
        classify.binary_step(data, basis, cfg, limit)(prog.empty_program(cfg.max_k, np.float64))
        _new_process(d)
        ex._memory.clear()
        jax.clear_caches()  # JAX's traces too, as in a new process
        with jax_events("jaxpr_trace_duration") as traced, count_compilations() as count:
            classify.binary_step(data, basis, cfg, limit)(prog.empty_program(cfg.max_k,
                                                                             np.float64))
        assert count.lowerings == 0 and count.compiles == 0, count
        assert not [t for t in traced if "loss_" in str(t)], traced
    finally:
        ex.enable(None)
        ex._broken.clear()
