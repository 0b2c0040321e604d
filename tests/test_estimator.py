"""TreeRegressor end to end: recovery, functional predict under transformations, files, errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree.datasets import paper_function, paper_synthetic

from _shared import GREEDY

SMALL_BASIS = {"hats": 3, "sines": 3, "cosines": 3, "powers": 2, "truncated_cubics": 0}


@pytest.fixture(scope="module")
def fitted():
    """The default estimator (below 10,000 rows: backfit, the size chosen on held-out rows)."""
    X, y = paper_synthetic(1000, p=10, seed=0)
    return jaxtree.TreeRegressor(k=10).fit(X, y)


def test_recovers_the_papers_function(fitted):
    Xte, _ = paper_synthetic(2000, p=10, seed=1)
    rmse = np.sqrt(np.mean((fitted.predict(Xte) - paper_function(Xte)) ** 2))
    assert rmse < 0.03, rmse
    f = fitted.formula(scaled=True)  # the raw tree (original units: tests/test_export.py)
    assert "x3²" in f and "x4" in f
    # a product of sin(3πx1) and cos(2πx2): both inside one '·' chain of factors
    assert "sin(3πx1)" in f and "cos(2πx2)" in f
    prog_np = jaxtree.program.to_numpy(fitted.model_.program)
    names = fitted.model_.basis.names
    sin3, cos2 = names.index("sin(3πx)"), names.index("cos(2πx)")

    def leaf_set(slot):
        op = prog_np["op"][slot]
        if op == jaxtree.program.LEAF:
            return {(int(prog_np["feature"][slot]), int(prog_np["basis"][slot]))}
        return leaf_set(prog_np["left"][slot]) | leaf_set(prog_np["right"][slot])

    products = [(leaf_set(prog_np["left"][s]), leaf_set(prog_np["right"][s]))
                for s in range(int(prog_np["n_slots"])) if prog_np["op"][s] == jaxtree.program.MUL]
    assert any(((0, sin3) in a and (1, cos2) in b) or ((0, sin3) in b and (1, cos2) in a)
               for a, b in products), f
    # k=10 is an upper bound: the held-out rows keep the truth's three operations (four
    # leaves, g = 0.3 sin(3πx1) cos(2πx2) + 0.4 x3² - 0.3 x4) and nothing more.
    assert fitted.search_ == "backfit" and fitted.k_ == 3, f
    assert [r["n_ops"] for r in fitted.path_][-1] == 10  # the held-out run went on to k
    # One history entry per iteration of the refit (a pair move inserts two operations).
    assert 2 <= len(fitted.history_) <= fitted.k_ + 1
    assert np.all(np.diff(fitted.history_) <= 1e-9)


def test_k_counts_operations(fitted):
    prog_np = jaxtree.program.to_numpy(fitted.model_.program)  # k_ = 3 of at most 10
    assert prog_np["n_slots"] == 2 * fitted.k_ + 1 == 7
    assert np.sum(prog_np["op"] == jaxtree.program.LEAF) == fitted.k_ + 1
    # The paper's search grows the tree to exactly k: k=3 gives 7 nodes, 4 leaves.
    X, y = paper_synthetic(200, p=4, seed=2)
    paper = jaxtree.TreeRegressor.paper(3, basis=SMALL_BASIS, refine="coordinate").fit(X, y)
    prog_np = jaxtree.program.to_numpy(paper.model_.program)
    assert paper.k_ == 3 and prog_np["n_slots"] == 7 and len(paper.history_) == 4
    assert np.sum(prog_np["op"] == jaxtree.program.LEAF) == 4


def test_functional_predict_under_jit_vmap_grad(fitted):
    m = fitted.model_
    X, _ = paper_synthetic(50, p=10, seed=3)
    eager = jaxtree.predict(m, X)
    np.testing.assert_allclose(fitted.predict(X), eager, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jaxtree.predict)(m, X), eager, rtol=1e-6, atol=1e-6)
    rows = jax.vmap(jaxtree.predict, in_axes=(None, 0))(m, jnp.asarray(X, jnp.float32))
    np.testing.assert_allclose(rows, eager, rtol=1e-6, atol=1e-6)


def test_predict_checked_is_predict_without_the_host_checks(fitted):
    """model.predict_checked (the estimators' own predictions of validated rows) gives
    predict's numbers, under jit and vmap too; a NaN takes the training minimum as in
    predict, without predict's warning (the estimators' encoding warned before)."""
    import warnings
    from jaxtree import model as model_
    m = fitted.model_
    X, _ = paper_synthetic(40, p=10, seed=6)
    want = np.asarray(jaxtree.predict(m, X))
    np.testing.assert_array_equal(np.asarray(model_.predict_checked(m, X)), want)
    np.testing.assert_array_equal(
        np.asarray(jax.jit(lambda x: model_.predict_checked(m, x))(X)), want)
    rows = jax.vmap(lambda x: model_.predict_checked(m, x))(jnp.asarray(X, jnp.float32))
    np.testing.assert_allclose(rows, want, rtol=1e-6, atol=1e-6)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.warns(jaxtree.MissingValueWarning):
        filled = np.asarray(jaxtree.predict(m, Xn))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = np.asarray(model_.predict_checked(m, Xn))
    np.testing.assert_array_equal(got, filled)
    np.testing.assert_array_equal(np.delete(got, 3), np.delete(want, 3))
    np.testing.assert_allclose(
        np.asarray(model_.predict_checked(m, X, clip=False)),
        np.asarray(jaxtree.predict(m, X, clip=False)), rtol=0, atol=0)


def test_grad_matches_float64_finite_differences(fitted):
    m32 = fitted.model_
    m = jax.tree_util.tree_map(lambda a: a.astype(jnp.float64) if a.dtype == jnp.float32 else a, m32)
    x = jnp.asarray(paper_synthetic(1, p=10, seed=4)[0][0]) * 0.9 + 0.05  # stay inside the range
    gx = jax.grad(lambda v: jaxtree.predict(m, v))(x)
    eps = 1e-6
    for j in range(4):
        e = jnp.zeros_like(x).at[j].set(eps)
        fd = (jaxtree.predict(m, x + e) - jaxtree.predict(m, x - e)) / (2 * eps)
        np.testing.assert_allclose(gx[j], fd, rtol=1e-5, atol=1e-7)
    X = jnp.asarray(paper_synthetic(20, p=10, seed=5)[0])
    gw = jax.grad(lambda w: jnp.sum(jaxtree.predict(
        jaxtree.TreeModel(m.program._replace(weight=w), m.x_min, m.x_scale, m.y_center, m.y_scale,
                          m.basis, m.feature_names), X)))(m.program.weight)
    leaf = int(np.flatnonzero(np.asarray(m.program.op) == jaxtree.program.LEAF)[0])
    e = jnp.zeros_like(m.program.weight).at[leaf].set(eps)

    def total(w):
        return jnp.sum(jaxtree.predict(jaxtree.TreeModel(m.program._replace(weight=w), m.x_min, m.x_scale,
                                                         m.y_center, m.y_scale, m.basis, m.feature_names), X))
    fd = (total(m.program.weight + e) - total(m.program.weight - e)) / (2 * eps)
    np.testing.assert_allclose(gw[leaf], fd, rtol=1e-5)


def test_save_load_round_trip_is_exact(fitted, tmp_path):
    path = tmp_path / "m.json"
    fitted.save(path)
    back = jaxtree.load(path)
    X, _ = paper_synthetic(100, p=10, seed=6)
    np.testing.assert_array_equal(back.predict(X), fitted.predict(X))
    assert back.formula() == fitted.formula()
    np.testing.assert_allclose(back.history_, fitted.history_)
    with pytest.raises(FileNotFoundError, match=r"the folder '.*nope' does not exist"):
        fitted.save(tmp_path / "nope" / "m.json")  # named: not the temporary file's path
    assert not (tmp_path / "nope").exists()


# slow (~1.6 s): restates tests/test_driver.py::test_both_engines_report_the_same_choice_records
# (the estimator on both engines, the greedy search, coordinate refinement: the same choices,
# per-choice weights and history to 1e-7) and, for the predictions,
# tests/test_search.py::test_matches_reference_iteration_by_iteration
@pytest.mark.slow
def test_reference_engine_matches_jax_coordinate():
    X, y = paper_synthetic(200, p=4, seed=2)
    a = jaxtree.TreeRegressor(k=3, basis=SMALL_BASIS, refine="coordinate", engine="reference").fit(X, y)
    b = jaxtree.TreeRegressor(k=3, basis=SMALL_BASIS, refine="coordinate", engine="jax",
                              **GREEDY).fit(X, y)  # the reference engine runs the greedy search
    assert [c["flat_index"] for c in a.choices_] == [c["flat_index"] for c in b.choices_]
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kwargs, X, y, err, match", [
    ({}, np.ones(10), np.ones(10), ValueError, "2-D"),
    ({}, np.ones((10, 2)), np.ones((10, 2)), ValueError, "1-D"),
    ({}, np.ones((10, 2)), np.ones(9), ValueError, "rows"),
    ({"missing": "error"}, np.array([[np.nan, 1.0], [1.0, 2.0]]), np.ones(2), ValueError, "NaN"),
    ({}, np.ones((3, 2)), np.array([1.0, np.inf, 2.0]), ValueError, "infinite"),
    ({}, np.ones((1, 2)), np.ones(1), ValueError, "at least 2"),
    ({"k": -1}, np.ones((5, 2)), np.ones(5), ValueError, "k must be"),
    ({"k": 2.5}, np.ones((5, 2)), np.ones(5), TypeError, "k must be"),
    ({"basis": "nope"}, np.ones((5, 2)), np.ones(5), ValueError, "nope"),
    ({"refine": "sgd"}, np.ones((5, 2)), np.ones(5), ValueError, "refine"),
    ({"engine": "torch"}, np.ones((5, 2)), np.ones(5), ValueError, "engine"),
    ({"engine": "reference", "refine": "optax"}, np.ones((5, 2)), np.ones(5), ValueError, "coordinate"),
])
def test_bad_input(kwargs, X, y, err, match):
    with pytest.raises(err, match=match):
        jaxtree.TreeRegressor(**kwargs).fit(X, y)


def test_predict_errors(fitted):
    with pytest.raises(jaxtree.NotFittedError, match="fit"):
        jaxtree.TreeRegressor().predict(np.ones((2, 3)))
    with pytest.raises(ValueError, match="features"):
        fitted.predict(np.ones((2, 3)))


def test_weights_are_finite_and_bounded(fitted):
    w = np.asarray(fitted.model_.program.weight)
    assert np.all(np.isfinite(w)) and np.all(np.abs(w) <= 1)


@pytest.mark.slow  # suite time (~20 s: a fit per refine mode)
def test_float32_input_with_x64_enabled_stays_float32_for_every_refine_mode():
    X, y = paper_synthetic(200, p=4, seed=9)
    for refine in ("optax", "coordinate", None):
        est = jaxtree.TreeRegressor(k=2, refine=refine, **GREEDY).fit(X.astype(np.float32),
                                                                   y.astype(np.float32))
        assert est.model_.program.weight.dtype == jnp.float32
        assert np.all(np.isfinite(est.predict(X)))
