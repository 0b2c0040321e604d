"""Shape-function terms (jaxtree.shapes) against float64 brute force, and through the
estimator (issue 11: one- and two-covariate shape insertions)."""

import dataclasses
import json
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import debug, scoring, search
from jaxtree import program as prog
from jaxtree import shapes as S

from _shared import GREEDY, fitted_values as _fitted


def _hats_np(z, n):
    """Independent hat formula: piecewise-linear interpolation weights on n knots."""
    z = np.clip(z, 0, 1)
    t = np.linspace(0, 1, n)
    return np.maximum(0, 1 - np.abs(z[:, None] - t[None, :]) * (n - 1))


def _block_np(x, term, spec):
    if term < x.shape[1]:
        return _hats_np(x[:, term], spec.n1)
    a, b = spec.pairs[term - x.shape[1]]
    ha, hb = _hats_np(x[:, a], spec.n2), _hats_np(x[:, b], spec.n2)
    return (ha[:, :, None] * hb[:, None, :]).reshape(len(x), -1)


def _problem(seed, n=300, p=4, chunk=64):
    rng = np.random.default_rng(seed)
    x = rng.random((n, p))
    x[:5] = np.r_[0.0, 1.0, 0.5, 1e-9, 1 - 1e-9][:, None]  # knots and edges
    y = rng.standard_normal(n)
    w = rng.uniform(0.2, 2.0, n)
    spec = S.ShapeSpec(n1=5, n2=3, max_terms=4, pairs=S.pair_list(p))
    data = scoring.chunk(jnp.asarray(x), jnp.asarray(y), jnp.asarray(w), chunk_size=chunk)
    return x, y, w, spec, data


def test_grams_and_rhs_equal_dense_float64(x64):
    x, y, w, spec, data = _problem(0)
    g1, s1, g2, s2, n = S.grams_jit(data, spec)
    p = x.shape[1]
    for j in range(p):
        phi = _block_np(x, j, spec)
        np.testing.assert_allclose(g1[j], phi.T @ (w[:, None] * phi), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(s1[j], phi.T @ w, rtol=1e-12)
    for c in range(len(spec.pairs)):
        phi = _block_np(x, p + c, spec)
        np.testing.assert_allclose(g2[c], phi.T @ (w[:, None] * phi), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(s2[c], phi.T @ w, rtol=1e-12)
    np.testing.assert_allclose(n, w.sum(), rtol=1e-12)
    fit = jnp.asarray(np.random.default_rng(1).standard_normal(data.y.shape))
    b1, b2, esum = jax.jit(S._rhs, static_argnames="spec")(data, fit, spec)
    e = y - np.asarray(fit).ravel()[: len(y)]
    for j in range(p):
        np.testing.assert_allclose(b1[j], _block_np(x, j, spec).T @ (w * e), rtol=1e-10, atol=1e-10)
    for c in range(len(spec.pairs)):
        np.testing.assert_allclose(b2[c], _block_np(x, p + c, spec).T @ (w * e), rtol=1e-10,
                                   atol=1e-10)
    np.testing.assert_allclose(esum, np.sum(w * e), rtol=1e-10)


@pytest.mark.parametrize("p, pairs, cross", [
    (5, ((0, 3), (3, 4), (1, 3)), True),   # the cross product of the 3 paired columns only
    (8, ((0, 1), (2, 3), (4, 5), (6, 7)), False),  # 8 columns for 4 pairs: one product each
    (5, "slots", True),                   # pairs as data (a SlotSpec), padding slots included
    (20, "axes", True),   # a SlotSpec's pairs of 4 of 20 columns: their 8 axis slots' product
])
def test_pair_grams_and_rhs_equal_dense_float64_on_both_forms(x64, p, pairs, cross):
    """:func:`jaxtree.shapes._rhs` and :func:`jaxtree.shapes.grams` read the pair blocks
    from one cross product of the paired columns' hats (their band products for the Grams)
    where they are few, else one product per pair (scatter-adds for the Grams); both against
    the dense design (a swapped or misplaced block, or a band slot read for another, would
    differ)."""
    rng = np.random.default_rng(7)
    n = 200
    x = rng.random((n, p))
    y, w = rng.standard_normal(n), rng.uniform(0.2, 2.0, n)
    data = scoring.chunk(jnp.asarray(x), jnp.asarray(y), jnp.asarray(w), chunk_size=64)
    if pairs in ("slots", "axes"):
        real = ((1, 4), (0, 2), (2, 3)) if pairs == "slots" else ((3, 17), (0, 3), (5, 17), (0, 5))
        spec = S.slots(S.ShapeSpec(n1=5, n2=4, max_terms=4, pairs=real), p, 8 if p < 8 else 16)
        assert (spec.axes is not None) == (pairs == "axes")  # 5 columns: in place
        fun, grams = jax.jit(S._rhs), jax.jit(S.grams)
    else:
        real = pairs
        spec = S.ShapeSpec(n1=5, n2=4, max_terms=4, pairs=pairs)
        fun = jax.jit(S._rhs, static_argnames="spec")
        grams = jax.jit(S.grams, static_argnames="spec")
    cols, _, _, form = S._pair_axes(spec, p)
    assert (len(cols) ** 2 <= 10 * len(spec.pairs)) == cross == form
    fit = jnp.asarray(rng.standard_normal(data.y.shape))
    _, b2, _ = fun(data, fit, spec)
    e = w * (y - np.asarray(fit).ravel()[:n])
    _, _, g2, s2, _ = grams(data, spec)
    plain = S.ShapeSpec(n1=5, n2=4, max_terms=4, pairs=real)
    for c in range(len(real)):
        phi = _block_np(x, p + c, plain)
        np.testing.assert_allclose(b2[c], phi.T @ e, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(g2[c], phi.T @ (w[:, None] * phi), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(s2[c], phi.T @ w, rtol=1e-10)


@pytest.mark.parametrize("factored", [False, True])
def test_gain_is_the_drop_of_the_penalised_least_squares_objective(x64, factored):
    """Gain of each block = min over (a) of sum w (e - a)^2 minus min over (a, b) of
    sum w (e - a - Phi b)^2 + lam |b|^2, solved by an independent augmented lstsq; also
    with the systems factored once (:func:`jaxtree.shapes.gain_factors`), as a search's
    steps solve (factors of another block, or of the uncentred Gram, would differ)."""
    x, y, w, spec, data = _problem(2)
    gr = S.grams_jit(data, spec)
    fit = jnp.zeros(data.y.shape)
    b1, b2, esum = jax.jit(S._rhs, static_argnames="spec")(data, fit, spec)
    factors = S.gain_factors(gr, spec) if factored else None
    gains = np.asarray(S.candidate_gains(gr, b1, b2, esum, spec, factors))
    sw = np.sqrt(w)
    base = np.sum(w * (y - np.average(y, weights=w)) ** 2)
    for t in range(x.shape[1] + len(spec.pairs)):
        phi = _block_np(x, t, spec)
        g = phi.T @ (w[:, None] * phi)
        # the mains' ridge weight and the pairs' (a pair's cells are many and thinly filled)
        lam = (S.RIDGE if t < x.shape[1] else S.PAIR_RIDGE) * np.trace(g) / g.shape[0]
        a = np.vstack([np.c_[sw, sw[:, None] * phi], np.c_[np.zeros(len(g)), np.sqrt(lam) * np.eye(len(g))]])
        rhs = np.r_[sw * y, np.zeros(len(g))]
        coef, *_ = np.linalg.lstsq(a, rhs, rcond=None)
        obj = np.sum((a @ coef - rhs) ** 2)
        np.testing.assert_allclose(gains[t], base - obj, rtol=1e-7, atol=1e-9)
    assert np.all(gains > 0)


# slow: restates test_gain_is_the_drop_of_the_penalised_least_squares_objective[True] and
# test_term_update_is_the_blocks_ridge_solution_for_mains_and_pairs[True-*] (the gains and the
# block updates solved with the LU factors, against numpy, float64; fit_step only passes
# gr[5] on to them) on a float32 search of four steps compiled twice (plain and factored)
@pytest.mark.slow
def test_factored_grams_give_the_same_gains_and_steps():
    """A search's steps take the Grams with their systems' LU factors (``with_factors``):
    float32 gains equal to the bit to those solved from the Grams, at every step, and the
    same terms chosen with the same losses. (The steps' other arithmetic may round apart by
    an ulp under the suite's XLA flags, so their states are compared at a tolerance.)"""
    rng = np.random.default_rng(3)
    x = rng.random((600, 4)).astype(np.float32)
    y = (np.sin(5 * x[:, 0]) * x[:, 1] + x[:, 2] ** 2 + 0.05 * rng.standard_normal(600))
    data = scoring.chunk(jnp.asarray(x), jnp.asarray(y, jnp.float32),
                         jnp.ones(600, jnp.float32), chunk_size=128)
    spec = S.ShapeSpec(n1=6, n2=4, max_terms=4, pairs=S.pair_list(4))
    gr = S.grams_jit(data, spec)
    fgr = S.with_factors_jit(gr, spec)
    assert len(fgr) == 6
    for a, b in zip(fgr[:5], gr):
        np.testing.assert_array_equal(a, b)
    rhs = jax.jit(S._rhs, static_argnames="spec")
    gains = jax.jit(S.candidate_gains, static_argnames="spec")
    plain = factored = S.start_jit(data, spec)
    for _ in range(4):
        b1, b2, esum = rhs(data, factored.fit, spec)
        np.testing.assert_array_equal(gains(gr, b1, b2, esum, spec=spec),
                                      gains(gr, b1, b2, esum, spec=spec, factors=fgr[5]))
        plain, a = search.shape_step_jit(plain, data, gr, spec)
        factored, b = search.shape_step_jit(factored, data, fgr, spec)
        assert int(a.choice.flat_index) == int(b.choice.flat_index)
        np.testing.assert_allclose(b.loss, a.loss, rtol=1e-5)
        np.testing.assert_allclose(factored.fit, plain.fit, atol=1e-5)
    assert int(plain.shapes.n_terms) == 4


# jitted once: called eagerly the solve compiles its loop again for each of the five problems
_box_solve = jax.jit(S._box_solve)


def test_box_solve_satisfies_kkt(x64):
    rng = np.random.default_rng(3)
    for _ in range(5):
        m = rng.standard_normal((30, 8))
        a = jnp.asarray(m.T @ m + 0.1 * np.eye(8))
        c = jnp.asarray(rng.standard_normal(8) * 60)  # large: the box binds
        b = np.asarray(_box_solve(a, c))
        grad = np.asarray(a) @ b - np.asarray(c)
        assert np.all(np.abs(b) <= 1 + 1e-12)
        assert np.any(np.abs(b) == 1.0)
        free = np.abs(b) < 1 - 1e-9
        np.testing.assert_allclose(grad[free], 0, atol=1e-5 * np.abs(c).max())
        assert np.all(grad[b >= 1 - 1e-12] <= 1e-6) and np.all(grad[b <= -1 + 1e-12] >= -1e-6)


_term_update = jax.jit(
    lambda gr, tid, b, esum, p, spec: S._term_update(S._padded_grams(gr, spec, p), tid, p, gr[4],
                                                     b, esum, spec),
    static_argnames=("p", "spec"))


def test_factored_solves_match_numpy_and_scipy_lu_solve(x64):
    """The kept factors (``_factor``: ``lu`` transposed and the row permutation) solve
    ``A x = c`` as numpy does (float64), batched under ``jit``/``vmap``, for systems whose
    factorisation pivots (a planted inverse permutation or an untransposed factor would
    fail), padded with the identity (``_pad_lu``) too; and in float32 they give
    ``jax.scipy.linalg.lu_solve``'s numbers to the bit, as the decision in ``_lu_solve``
    says."""
    rng = np.random.default_rng(11)
    g = rng.standard_normal((5, 7, 7))
    g[:, 0, 0] = 1e-3  # the first column's largest entry is off the diagonal: rows swap
    s, n = np.zeros((5, 7)), 1.0
    a = np.asarray(jax.vmap(lambda g, s: S._block_system(g, s, n))(g, s))
    c = rng.standard_normal((5, 7))
    factors = jax.jit(S._factor)(g, s, n)
    perm = np.asarray(factors[1])
    assert np.any(perm != np.arange(7))
    got = jax.jit(jax.vmap(S._lu_solve))(factors, c)
    want = np.linalg.solve(a, c[..., None])[..., 0]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    lu, perm_p = S._pad_lu(*factors, 10)
    padded = jax.vmap(S._lu_solve)((lu, perm_p), np.c_[c, np.ones((5, 3))])
    np.testing.assert_allclose(padded[:, :7], want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(padded[:, 7:], 1.0, rtol=1e-12)
    g32, c32 = g.astype(np.float32), c.astype(np.float32)
    f32 = S._factor(g32, s.astype(np.float32), np.float32(1))
    plain = jax.vmap(jax.scipy.linalg.lu_factor)(
        jax.vmap(lambda g: S._block_system(g, np.zeros(7, np.float32), np.float32(1)))(g32))
    np.testing.assert_array_equal(jax.vmap(S._lu_solve)(f32, c32),
                                  jax.vmap(jax.scipy.linalg.lu_solve)(plain, c32))


@pytest.mark.parametrize("knots", [(5, 3), (12, 3)])  # mains padded to the pairs' 9; pairs to 12
@pytest.mark.parametrize("factored", [False, True])
def test_term_update_is_the_blocks_ridge_solution_for_mains_and_pairs(x64, knots, factored):
    """A block update (every block one padded system) against the centred ridge normal
    equations of that block solved in numpy, zero on the padding, with the intercept shift;
    with the gains' LU factors (a search's Grams, padded for the first iteration) too."""
    x, y, w, spec, data = _problem(7)
    spec = spec._replace(n1=knots[0], n2=knots[1])
    p, mm = x.shape[1], max(spec.n1, spec.n2 ** 2)
    gr = S.grams_jit(data, spec)
    gr = S.with_factors_jit(gr, spec) if factored else gr
    e = 0.01 * np.random.default_rng(8).standard_normal(len(y))  # small: the box stays slack
    for tid in (1, p + 2):
        phi = _block_np(x, tid, spec)
        k = phi.shape[1]
        g, sums, n = phi.T @ (w[:, None] * phi), phi.T @ w, w.sum()
        b, esum = phi.T @ (w * e), np.sum(w * e)
        ridge = S.RIDGE if tid < p else S.PAIR_RIDGE  # the mains' weight, the pairs'
        a = g - np.outer(sums, sums) / n + ridge * np.trace(g) / k * np.eye(k)
        coef = np.linalg.solve(a, b - sums * esum / n)
        assert np.abs(coef).max() < 1
        new, shift = _term_update(gr, jnp.int32(tid), jnp.asarray(np.pad(b, (0, mm - k))),
                                  jnp.asarray(esum), p=p, spec=spec)
        np.testing.assert_allclose(new[:k], coef, rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(new[k:], 0.0)
        np.testing.assert_allclose(shift, (esum - sums @ coef) / n, rtol=1e-9, atol=1e-15)


def test_steps_never_raise_the_loss_and_report_the_model_mse(x64):
    x, y, w, spec, data = _problem(4)
    y = np.sin(4 * x[:, 0]) * x[:, 1] + 0.3 * x[:, 2] ** 2 + 0.05 * np.random.default_rng(0).standard_normal(len(x))
    data = data._replace(y=scoring.chunk(jnp.asarray(x), jnp.asarray(y), chunk_size=64).y)
    gr = S.grams_jit(data, spec)
    st = S.start(data, spec)
    prev = float(S.mse(data, st.fit))
    for _ in range(spec.max_terms):
        st, info = search.shape_step_jit(st, data, gr, spec)
        loss = float(info.loss)
        assert loss <= prev * (1 + 1e-12)
        prev = loss
        direct = S.evaluate(st.shapes, jnp.asarray(x), spec)
        np.testing.assert_allclose(np.asarray(st.fit).ravel()[: len(y)], direct, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(loss, np.average((y - direct) ** 2, weights=w), rtol=1e-10)
    assert int(st.shapes.n_terms) == spec.max_terms
    # More sweeps: a block-coordinate minimiser never increases the loss either.
    more = S.finish_jit(st, data, gr, spec, 3)
    assert float(S.mse(data, more.fit)) <= prev * (1 + 1e-12)


def test_single_block_backfit_equals_the_exact_box_free_solution(x64):
    """One main term, sweeps to convergence = the ridge least-squares fit of that block."""
    x, y, w, spec, data = _problem(5)
    spec = spec._replace(max_terms=1, pairs=())
    y = 0.3 * np.cos(3 * x[:, 2])
    data = scoring.chunk(jnp.asarray(x), jnp.asarray(y), jnp.asarray(w), chunk_size=64)
    gr = S.grams_jit(data, spec)
    st, info = search.shape_step_jit(S.start(data, spec), data, gr, spec)
    assert int(info.choice.feature) == 2 and int(info.choice.move) == search.MOVE_SHAPE
    assert int(info.choice.feature2) == -1
    phi = _block_np(x, 2, spec)
    g = phi.T @ (w[:, None] * phi)
    lam = S.RIDGE * np.trace(g) / len(g)
    sw = np.sqrt(w)
    a = np.vstack([np.c_[sw, sw[:, None] * phi], np.c_[np.zeros(len(g)), np.sqrt(lam) * np.eye(len(g))]])
    coef, *_ = np.linalg.lstsq(a, np.r_[sw * y, np.zeros(len(g))], rcond=None)
    np.testing.assert_allclose(st.shapes.main[2], coef[1:], atol=1e-8)
    np.testing.assert_allclose(float(st.shapes.intercept), coef[0], atol=1e-8)


def test_planted_interaction_without_marginal_signal_is_found_by_screening():
    rng = np.random.default_rng(0)
    n, p = 3000, 20
    x = rng.random((n, p))
    y = np.sin(2 * np.pi * x[:, 3]) * np.sin(2 * np.pi * x[:, 11]) + 0.05 * rng.standard_normal(n)
    data = scoring.chunk(jnp.asarray(x, jnp.float32), jnp.asarray(y, jnp.float32), chunk_size=1024)
    pairs = S.screen_pairs(data, keep=8)
    assert len(pairs) == 8 and (3, 11) in pairs
    spec = S.ShapeSpec(n1=8, n2=8, max_terms=1, pairs=pairs)
    st, info = search.shape_step_jit(S.start(data, spec), data, S.grams_jit(data, spec), spec)
    assert (int(info.choice.feature), int(info.choice.feature2)) == (3, 11)
    assert float(info.loss) < 0.02


def test_evaluate_matches_independent_formula_and_is_differentiable(x64):
    x, _, _, spec, _ = _problem(6)
    p = x.shape[1]
    rng = np.random.default_rng(7)
    sh = S.init(p, spec, jnp.float64)._replace(
        main=jnp.asarray(rng.uniform(-1, 1, (p, spec.n1))), main_on=jnp.asarray([True, False, True, False]),
        pair=jnp.asarray(rng.uniform(-1, 1, (len(spec.pairs), spec.n2 ** 2))),
        pair_on=jnp.zeros(len(spec.pairs), bool).at[4].set(True), intercept=jnp.asarray(0.25),
        order=jnp.asarray([2, p + 4, 0, -1], jnp.int32), n_terms=jnp.asarray(3, jnp.int32))
    want = 0.25 + _block_np(x, 0, spec) @ sh.main[0] + _block_np(x, 2, spec) @ sh.main[2] \
        + _block_np(x, p + 4, spec) @ sh.pair[4]
    np.testing.assert_allclose(S.evaluate(sh, jnp.asarray(x), spec), want, rtol=1e-12)
    np.testing.assert_allclose(jax.jit(S.evaluate, static_argnums=2)(sh, jnp.asarray(x), spec), want,
                               rtol=1e-12)
    one = jax.vmap(lambda r: S.evaluate(sh, r[None], spec)[0])(jnp.asarray(x))
    np.testing.assert_allclose(one, want, rtol=1e-12)
    g = jax.grad(lambda m: S.evaluate(sh._replace(main=m), jnp.asarray(x), spec).sum())(sh.main)
    np.testing.assert_allclose(g[0], _block_np(x, 0, spec).sum(0), rtol=1e-12)
    np.testing.assert_allclose(g[1], 0)  # main 1 is off


# ----------------------------------------------------------------------------- estimator


def _table(seed=0, n=2000):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 4))
    bump = np.exp(-((X[:, 1] - 0.4) ** 2 + (X[:, 2] - 0.6) ** 2) / 0.05)
    y = 3 * np.sin(3 * X[:, 0]) + 2 * bump + np.abs(X[:, 3] - 0.3) + 0.05 * rng.standard_normal(n)
    return X, y


@pytest.mark.slow  # suite time (~20 s); shape-term correctness has its own oracles here
def test_estimator_with_shapes_beats_the_greedy_tree_and_reports_its_loss():
    X, y = _table()
    Xt, yt = _table(1, 1000)
    # a tree alone: at 2,000 rows the default shapes="auto" would add shape terms to it
    greedy = jaxtree.TreeRegressor(k=6, **GREEDY).fit(X, y)
    est = jaxtree.TreeRegressor(k=2, shape_knots=(12, 8), **dict(GREEDY, shapes=4)).fit(X, y)
    err = np.sqrt(np.mean((est.predict(Xt) - yt) ** 2))
    assert err < 0.6 * np.sqrt(np.mean((greedy.predict(Xt) - yt) ** 2))
    assert err < 0.1
    # history_: shapes first, then the tree; the last entry is the final model's MSE
    assert len(est.history_) == 4 + 3 and len(est.choices_) == 7
    assert [c["move"] for c in est.choices_[:4]] == [search.MOVE_SHAPE] * 4
    np.testing.assert_allclose(est.history_[-1], np.mean((_fitted(est, X) - y) ** 2), rtol=1e-3)
    assert "f(x2, x3)" in est.formula() or "f(x3, x2)" in est.formula()
    # the pure predict function agrees, under jit and grad
    m = est.model_
    np.testing.assert_allclose(jax.jit(jaxtree.predict)(m, X), est.predict(X), rtol=1e-5, atol=1e-5)
    g = jax.grad(lambda x: jaxtree.predict(m, x).sum())(jnp.asarray(X[:10], jnp.float32))
    assert np.isfinite(np.asarray(g)).all()


def test_shapes_model_save_load_round_trip(tmp_path):
    X, y = _table(n=600)
    est = jaxtree.TreeRegressor(k=1, shape_knots=(6, 4), **dict(GREEDY, shapes=3)).fit(X, y)
    path = tmp_path / "m.json"
    est.save(path)
    back = jaxtree.load(path)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    assert back.formula() == est.formula()
    d = json.loads(path.read_text())
    d["shapes"]["order"][0] = 99
    d.pop("checksum")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    with pytest.raises(ValueError, match="shapes"):
        jaxtree.load(bad)


def test_second_fit_with_shapes_compiles_nothing():
    X, y = _table(n=600)
    est = jaxtree.TreeRegressor(k=1, shape_knots=(6, 4), **dict(GREEDY, shapes=3))
    est.fit(X, y)
    with debug.count_compilations() as count:
        est.fit(X, y + 1.0)
    assert count.lowerings == 0 and count.compiles == 0


def test_models_of_other_pairs_predict_with_one_program_and_the_static_values(monkeypatch):
    """The estimators predict a model's shape terms with its chosen pairs as data
    (``model.slotted``, issue 27): a model that chose other pairs (of the same settings),
    or none, compiles no new prediction, and each prediction equals the static form's
    (``jaxtree.predict``, the pairs a static tuple) bitwise (to rounding for the model
    without pairs). Ten columns: wide enough for the pairs' sums to come from pair axes
    (``shapes._axes``)."""
    from jaxtree._fit import pipeline

    X = np.random.default_rng(2).random((600, 10))
    y = np.sin(3 * X[:, :7]) @ np.arange(7, 0, -1.0)  # seven main effects: no pair chosen
    m = jaxtree.TreeRegressor(k=1, shape_knots=(6, 4), **dict(GREEDY, shapes=7)).fit(X, y).model_
    sh, spec, p = m.shapes, m.shape_spec, m.n_features
    rng = np.random.default_rng(1)
    monkeypatch.setattr(pipeline, "HOST_PREDICT_MAX_ROWS", 0)  # the compiled prediction's

    def with_pairs(pairs):  # the tree and the first fitted mains, then these pairs
        n = min(int(sh.n_terms), spec.max_terms - len(pairs))
        order = np.asarray(sh.order).copy()
        order[n:n + len(pairs)] = p + np.arange(len(pairs))
        dt = sh.main.dtype
        return dataclasses.replace(m, shape_spec=spec._replace(pairs=pairs), shapes=sh._replace(
            pair=jnp.asarray(rng.normal(size=(len(pairs), spec.n2 ** 2)), dt),
            pair_on=jnp.ones(len(pairs), bool), order=jnp.asarray(order),
            n_terms=jnp.asarray(n + len(pairs), sh.n_terms.dtype)))

    assert p == 10 and spec.max_terms >= 3 and not spec.pairs
    models = [with_pairs(((0, 1),)), with_pairs(((1, 2),)), with_pairs(((0, 2), (1, 2))),
              with_pairs(())]
    assert jaxtree.model.slotted(models[0])[1][1].axes is not None  # read from pair axes
    # made once per model, not at every prediction
    assert jaxtree.model.slotted(models[0])[1][0] is jaxtree.model.slotted(models[0])[1][0]
    first = pipeline.predict_rows(models[0], X, True)
    with debug.count_compilations() as count:
        rest = [pipeline.predict_rows(mo, X, True) for mo in models[1:]]
    assert count.lowerings == 0, count
    for mo, got in zip(models[:3], [first] + rest[:2]):
        np.testing.assert_array_equal(got, np.asarray(jaxtree.predict(mo, X), np.float64))
    # without pairs, the static form sums the mains alone and the slotted one the mains and
    # the padding pairs' zeros, in another order: equal to rounding
    np.testing.assert_allclose(rest[2], np.asarray(jaxtree.predict(models[3], X), np.float64),
                               rtol=1e-13, atol=0)
    assert not np.allclose(first, rest[0])  # the pairs are read: other pairs, other values


@pytest.mark.parametrize("kwargs, match", [
    (dict(shapes=-1), "shapes"),
    (dict(shapes="best"), "'auto', 'additive' or an integer"),
    (dict(shapes=2, shape_knots=(1, 4)), "shape_knots"),
    (dict(shapes=2, shape_knots=(4,)), "shape_knots"),
    (dict(shapes=2, engine="reference", refine="coordinate"), "engine='jax'"),
])
def test_shape_parameter_errors(kwargs, match):
    X, y = _table(n=100)
    with pytest.raises(ValueError, match=match):
        jaxtree.TreeRegressor(k=1, **kwargs).fit(X, y)


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-3, ValueError), (2.5, TypeError),
                                        (True, TypeError), (None, TypeError)])
def test_a_bad_max_terms_is_refused_before_fitting(bad, error):
    X, y = _table(n=100)
    for est in (jaxtree.TreeRegressor(max_terms=bad), jaxtree.TreeClassifier(max_terms=bad)):
        with pytest.raises(error, match="max_terms must be an integer >= 1"):
            est.fit(X, y if isinstance(est, jaxtree.TreeRegressor) else y > np.median(y))
    assert jaxtree.TreeRegressor().max_terms == jaxtree.TreeClassifier().max_terms == 20


def test_exports_of_a_shapes_model_agree_with_predict():
    sympy = pytest.importorskip("sympy")
    X, y = _table(n=600)
    est = jaxtree.TreeRegressor(k=1, shape_knots=(6, 4), **dict(GREEDY, shapes=3)).fit(X, y)
    m = est.model_
    want = est.predict(X[:40])
    np.testing.assert_allclose(jaxtree.export.to_callable(m)(X[:40]), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(jaxtree.export.to_callable(m, "jax")(X[:40]), want, rtol=1e-5,
                               atol=1e-5)
    expr = jaxtree.export.to_sympy(m)
    f = sympy.lambdify(sympy.symbols("x1:5", real=True), expr, "numpy")
    np.testing.assert_allclose(f(*X[:40].T), want, rtol=1e-4, atol=1e-4)
    tex = jaxtree.export.to_latex(m)
    assert tex.count("f(") == 3


def test_shape_terms_are_the_model_in_original_units():
    X, y = _table(n=600)
    X = X * np.array([10.0, 2.0, 5.0, 1.0]) + 3.0
    est = jaxtree.TreeRegressor(k=1, shape_knots=(6, 4), **dict(GREEDY, shapes=3)).fit(X, y)
    terms = est.shape_terms()
    assert len(terms) == 3
    m = est.model_
    # Rebuild the shapes' part of the prediction by interpolating each term's table.
    part = np.zeros(50)
    xs = X[:50]
    for t in terms:
        cols = [list(m.feature_names).index(n) for n in t["features"]]
        if len(cols) == 1:
            part += np.interp(xs[:, cols[0]], t["knots"][0], t["values"])
        else:
            ka, kb = t["knots"]
            wa = _hats_np((xs[:, cols[0]] - ka[0]) / (ka[-1] - ka[0]), len(ka))
            wb = _hats_np((xs[:, cols[1]] - kb[0]) / (kb[-1] - kb[0]), len(kb))
            part += np.einsum("na,ab,nb->n", wa, t["values"], wb)
    const = float(m.y_center) + float(m.y_scale) * (float(m.shapes.intercept) + float(m.program.intercept))
    tree = est.predict(xs) - const - part  # the tree's part
    np.testing.assert_allclose(tree, float(m.y_scale) * np.asarray(
        jaxtree.program.evaluate(m.program, jaxtree.model.scale_x(m, jnp.asarray(xs, jnp.float32)),
                                 m.basis) - m.program.intercept), atol=1e-4)
    fig = est.plot_shapes()
    assert len(fig.axes) >= 3


@pytest.mark.slow  # ~40 s (3,000 rows, up to 6 shapes): the held-out count of shapes keeps
# test_auto_shapes_follow_the_tree_only_where_held_out_rows_support_them's oracle
def test_validation_chooses_the_number_of_shapes_of_a_planted_additive_model():
    """Two planted one-covariate shapes plus noise: with up to 6 shapes allowed, held-out rows
    choose 2 (or 3 within one standard error, never the noise-fitting maximum), and every
    path row's held-out MSE is that of its model."""
    rng = np.random.default_rng(3)
    n = 3000
    X = rng.random((n, 5))
    y = np.sin(4 * X[:, 0]) + np.abs(X[:, 2] - 0.5) + 0.3 * rng.standard_normal(n)
    est = jaxtree.TreeRegressor(k=1, shapes=6, shape_knots=(8, 4), validation_fraction=0.3,
                                random_state=0, search="greedy").fit(X, y)
    n_shapes = int(est.model_.shapes.n_terms)
    # The tree's path rows carry the shapes they were searched with: their recorded errors
    # are their models' errors on the same held-out rows.
    from jaxtree._fit.select import split as _split
    train, held = _split(n, 0.3, 0)
    for row in est.path_:
        pred = np.asarray(jaxtree.predict(row["model"], X))
        np.testing.assert_allclose(np.mean((pred[held] - y[held]) ** 2), row["val_mse"], rtol=1e-4)
    assert 2 <= n_shapes <= 3
    assert [r["n_shapes"] for r in est.shape_path_] == list(range(7))
    terms = est.shape_path_[n_shapes]["terms"]
    assert {"f(x1)", "f(x3)"} <= set(terms) or any("x1" in t and "x3" in t for t in terms)
    vals = [r["val_mse"] for r in est.shape_path_]
    assert vals[0] > 1.5 * min(vals)  # the intercept-only model is clearly worse
    fig = jaxtree.export.plot_path(est.shape_path_)
    assert fig.axes[0].get_xlabel() == "shape terms"
    assert len(fig.axes[0].lines[1].get_xdata()) == 7
    again = jaxtree.TreeRegressor(k=1, shapes=6, shape_knots=(8, 4), validation_fraction=0.3,
                                  random_state=0, search="greedy").fit(X, y)
    np.testing.assert_array_equal(again.predict(X), est.predict(X))


def test_compact_keeps_the_model_and_its_sweeps_and_drops_unchosen_pairs(x64):
    x, y, w, spec, data = _problem(6)
    y = 8 * (x[:, 0] - 0.5) * (x[:, 1] - 0.5) + 0.5 * x[:, 2] + 0.3 * np.cos(3 * x[:, 3])
    data = data._replace(y=scoring.chunk(jnp.asarray(x), jnp.asarray(y), chunk_size=64).y)
    gr = S.grams_jit(data, spec)
    st = S.start(data, spec)
    for _ in range(3):
        st, _ = search.shape_step_jit(st, data, gr, spec)
    on = np.flatnonzero(np.asarray(st.shapes.pair_on))
    assert 0 < len(on) < len(spec.pairs)  # something to drop, something to keep
    sh, sp, g = S.compact(st.shapes, spec, gr)
    assert sp.pairs == tuple(spec.pairs[i] for i in on) and bool(np.all(sh.pair_on))
    assert S.term_names(sh, sp, ["a", "b", "c", "d"]) == S.term_names(st.shapes, spec, ["a", "b", "c", "d"])
    np.testing.assert_allclose(S.evaluate(sh, jnp.asarray(x), sp),
                               S.evaluate(st.shapes, jnp.asarray(x), spec), rtol=1e-12, atol=1e-12)
    for sliced, direct in zip(g, S.grams_jit(data, sp)):  # sliced Grams = the compact spec's
        np.testing.assert_allclose(sliced, direct, rtol=1e-12, atol=1e-12)
    full = S.finish_jit(st, data, gr, spec, 2)
    small = S.finish_jit(S.State(sh, st.fit), data, g, sp, 2)
    np.testing.assert_allclose(small.fit, full.fit, rtol=1e-10, atol=1e-10)


def test_large_fits_choose_shapes_on_a_deterministic_subset(monkeypatch):
    from jaxtree._fit import select as E

    X, y = _table(n=1500)
    monkeypatch.setattr(S, "SEARCH_ROWS", 600)
    assert E.subsample(600, 600, None) is None
    rows = E.subsample(1500, 600, None)
    assert len(np.unique(rows)) == 600 and np.all(np.diff(rows) > 0)
    kw = dict(k=1, shape_knots=(6, 4), refine=None, **dict(GREEDY, shapes=3))
    est = jaxtree.TreeRegressor(**kw).fit(X, y)
    # the terms are those a search on the subset chooses (its history: the subset's MSE)
    sub = jaxtree.TreeRegressor(**kw).fit(X[rows], y[rows])
    term = lambda c: (c["move"], c["feature"], c["feature2"])
    assert [term(c) for c in est.choices_[:3]] == [term(c) for c in sub.choices_[:3]]
    # ... and backfitted on all rows: the full model fits all rows at least as well
    mse = lambda m: np.mean((m.predict(X) - y) ** 2)
    assert mse(est) <= mse(sub) * (1 + 1e-6)
    np.testing.assert_array_equal(jaxtree.TreeRegressor(**kw).fit(X, y).predict(X), est.predict(X))


def test_auto_shapes_follow_the_tree_only_where_held_out_rows_support_them(monkeypatch):
    """``shapes="auto"``: the tree first (exactly the fit without shapes), then shape terms of
    its residual counted by held-out rows: none for a truth of the tree's form (the model is
    then the tree's, bit for bit), some for a bump the tree cannot build, and none below
    ``AUTO_SHAPES_MIN_ROWS`` rows."""
    from jaxtree._fit import select
    from jaxtree._fit import spec as E

    monkeypatch.setattr(E, "AUTO_SHAPES_MIN_ROWS", 1000)
    # The tree of a fit of >= 10,000 rows, where shapes="auto" applies: the greedy search to k
    # (the default below 10,000 rows would be backfit with a held-out size).
    kw = dict(GREEDY, k=3, shape_knots=(6, 4), refine="coordinate")
    del kw["shapes"]
    rng = np.random.default_rng(3)
    X = rng.random((1500, 4))
    tree_form = 0.8 * np.sin(np.pi * X[:, 0]) + 0.3 * X[:, 2] + 0.01 * rng.standard_normal(1500)
    plain = jaxtree.TreeRegressor(shapes=0, **kw).fit(X, tree_form)
    auto = jaxtree.TreeRegressor(shapes="auto", **kw).fit(X, tree_form)
    assert auto.model_.shapes is None and auto.shape_path_ is not None
    np.testing.assert_array_equal(auto.predict(X), plain.predict(X))
    assert auto.choices_ == plain.choices_

    Xb, yb = _table(n=1500)
    Xt, yt = _table(1, 1000)
    plain = jaxtree.TreeRegressor(shapes=0, **kw).fit(Xb, yb)
    calls, rule = [], select.choose_size_rows  # the count is the rule's on the per-row losses
    monkeypatch.setattr(select, "choose_size_rows",
                        lambda L, w=None, floor=select.MSE_FLOOR, n_se=select.SE_FACTOR:
                        calls.append((L, w)) or rule(L, w, floor, n_se))
    auto = jaxtree.TreeRegressor(shapes="auto", **kw).fit(Xb, yb)
    monkeypatch.setattr(select, "choose_size_rows", rule)
    n_shapes = int(auto.model_.shapes.n_terms)
    assert n_shapes >= 1
    rows = auto.shape_path_
    (L, w), = calls  # 300 held-out rows; their weighted means are the path's held-out MSEs
    assert L.shape == (len(rows), 300)
    np.testing.assert_allclose(L @ w / w.sum() * float(auto.model_.y_scale) ** 2,
                               [r["val_mse"] for r in rows], rtol=1e-9)
    assert n_shapes == rows[select.choose_size(L, w)]["n_shapes"]
    # the tree's insertions first, unchanged, then the shapes
    assert auto.choices_[:4] == plain.choices_
    assert [c["move"] for c in auto.choices_[4:]] == [search.MOVE_SHAPE] * n_shapes
    np.testing.assert_allclose(auto.history_[-1], np.mean((_fitted(auto, Xb) - yb) ** 2), rtol=1e-3)
    err = lambda m: np.sqrt(np.mean((m.predict(Xt) - yt) ** 2))
    assert err(auto) < 0.8 * err(plain)
    if n_shapes > 1:  # a callback stops the shapes as it stops a search
        seen = []
        cut = jaxtree.TreeRegressor(shapes="auto", callback=lambda it, loss, ch: seen.append(it)
                                    or it == 4, **kw).fit(Xb, yb)
        assert seen == list(range(5)) and int(cut.model_.shapes.n_terms) == 1
        assert cut.status_ & search.Status.STOPPED

    # The joint cap (issue 29): the tree's terms and the shapes together at most max_terms
    # (default AUTO_TERMS). Catches a cap not applied (n_shapes terms again) or counted from
    # the wrong tree, and a max_terms not passed to the stage.
    tree_terms = prog.n_terms(plain.model_.program)
    assert n_shapes + tree_terms <= E.AUTO_TERMS
    one = jaxtree.TreeRegressor(shapes="auto", max_terms=tree_terms + 1, **kw).fit(Xb, yb)
    assert one.choices_[:4] == plain.choices_ and len(one.shape_path_) == 2  # 0 and 1 terms
    assert int(one.model_.shapes.n_terms) == 1  # the first of the 8 terms still pays
    # no room: the tree's model, bit for bit
    none = jaxtree.TreeRegressor(shapes="auto", max_terms=tree_terms, **kw).fit(Xb, yb)
    assert none.model_.shapes is None and none.shape_path_ is None
    np.testing.assert_array_equal(none.predict(Xb), plain.predict(Xb))

    monkeypatch.setattr(E, "AUTO_SHAPES_MIN_ROWS", 2000)  # fewer rows: no shapes at all
    small = jaxtree.TreeRegressor(shapes="auto", **kw).fit(Xb, yb)
    np.testing.assert_array_equal(small.predict(Xb), plain.predict(Xb))
    assert small.shape_path_ is None


@pytest.mark.slow  # ~55 s (6,000 rows, 24 covariates, two shape capacities); the cap's
# oracle in the default suite is test_auto_shapes_follow_the_tree_only_where_held_out_rows_
# support_them (max_terms below the default) and tests/test_pipeline.py's capacity rule
def test_max_terms_above_the_default_takes_more_shape_terms():
    """An additive truth of 24 smooth effects: the default stops at 16 shape terms
    (``AUTO_SHAPES``), ``max_terms=30`` takes more (the capacity grows by the excess), and
    the formula's terms stay within the cap. Catches a capacity left at 16 and a cap not
    applied above the default."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(6000, 24))
    y = sum(np.sin(2 * np.pi * X[:, j] + j) for j in range(24)) + 0.05 * rng.normal(size=6000)
    counts = {}
    for m in (20, 30):
        est = jaxtree.TreeRegressor(k=2, max_terms=m).fit(X, y)
        counts[m] = int(est.model_.shapes.n_terms)
        assert counts[m] + prog.n_terms(est.model_.program) <= m
    assert counts[20] == 16 and counts[30] > 16, counts


@pytest.mark.slow  # ~20 s of compiling for one covariate's shapes (a regression check of an
# IndexError); the shapes' oracles run in the default suite above
def test_one_covariate_fits_with_shapes_and_no_pairs():
    # One covariate: no pair candidates; compacting the spec after the search used to index
    # an empty table (IndexError).
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(200, 1))
    y = np.sin(5 * X[:, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one term is all there is: no "no candidate" warning
        # (the k=0 leaf, (x1 - 0.9)+^3 on the shapes' residual, wants |w| > 1: the box warning
        # is right, and not what this test is about)
        warnings.simplefilter("ignore", jaxtree.WeightBoxWarning)
        est = jaxtree.TreeRegressor(k=0, shapes=2, validation_fraction=None, refine=None,
                                    search="greedy", shape_knots=(12, 4)).fit(X, y)
    assert est.model_.shape_spec.pairs == () and int(est.model_.shapes.n_terms) == 1
    assert est.score(X, y) > 0.99
    shapes, spec, _ = S.compact(est.model_.shapes, est.model_.shape_spec)
    assert spec == est.model_.shape_spec and shapes is est.model_.shapes


def test_start_mse_is_the_empty_shapes_mse(x64):
    """The shape path's first row (``select.start_mse``, host float64) is the weighted MSE of
    the search's start, :func:`jaxtree.shapes.start` (the weighted mean), evaluated as the
    shapes evaluate it, on chunked data with zero-weight padding rows; a mean taken without
    the weights, or over the padding rows, would differ."""
    from jaxtree._fit import select

    rng = np.random.default_rng(4)
    x, y = rng.uniform(size=(203, 3)), rng.normal(2.0, 3.0, 203)
    w = rng.uniform(0.2, 5.0, 203)
    data = scoring.chunk(jnp.asarray(x), jnp.asarray(y), jnp.asarray(w), chunk_size=64)
    spec = S.ShapeSpec(n1=4, n2=3, max_terms=2)
    start = S.start(data, spec)
    fit = jax.vmap(lambda xb: S.evaluate(start.shapes, xb, spec))(data.x)
    want = float(S.mse(data, fit))
    assert select.start_mse(data.y, data.w) == pytest.approx(want, rel=1e-12)
    assert want == pytest.approx(np.average((y - np.average(y, weights=w)) ** 2, weights=w),
                                 rel=1e-12)


def _random_terms(rng, p, spec, order):
    """Shape terms of ``spec`` with random coefficients and the terms ``order`` on."""
    on = np.zeros(p + len(spec.pairs), bool)
    on[order] = True
    full = np.full(spec.max_terms, -1, np.int32)
    full[:len(order)] = order
    return S.Shapes(rng.normal(size=(p, spec.n1)) * on[:p, None], on[:p],
                    rng.normal(size=(len(spec.pairs), spec.n2 ** 2)) * on[p:, None], on[p:],
                    np.float64(rng.normal()), full, np.int32(len(order)))


def test_stacked_terms_keep_each_models_own_terms_and_values():
    """jaxtree.shapes.stacked (the one-versus-rest classifier's terms, one spec): each slice
    evaluates as its own model (float64, fresh random coefficients and rows) and lists the
    same terms in the same order. Catches a pair left at its own index in the common spec
    (the models here chose different pairs), a term order not renumbered, a model's slice
    holding another's terms."""
    rng = np.random.default_rng(7)
    p = 4
    a = S.ShapeSpec(n1=5, n2=3, max_terms=4, pairs=((0, 1), (2, 3)))
    b = S.ShapeSpec(n1=5, n2=3, max_terms=6, pairs=((1, 3),))
    fits = [(_random_terms(rng, p, a, [p + 1, 0, p + 0]), a), None,
            (_random_terms(rng, p, b, [3, p + 0, 1]), b)]
    terms, spec = S.stacked(fits, np.float64)
    assert spec.pairs == ((0, 1), (1, 3), (2, 3)) and spec.max_terms == 6
    assert np.asarray(terms.main).shape == (3, p, 5)
    x = rng.uniform(size=(50, p))
    for c, fit in enumerate(fits):
        one = jax.tree_util.tree_map(lambda v: jnp.asarray(np.asarray(v)[c]), terms)  # noqa: B023
        got = np.asarray(S.evaluate(one, jnp.asarray(x), spec), np.float64)
        if fit is None:  # no terms: the zero function, none listed
            np.testing.assert_array_equal(got, 0.0)
            assert S.host_terms(one, spec) == []
            continue
        own = jax.tree_util.tree_map(jnp.asarray, fit[0])
        np.testing.assert_allclose(got, np.asarray(S.evaluate(own, jnp.asarray(x), fit[1]),
                                                   np.float64), rtol=1e-12, atol=1e-12)
        for (fa, ca), (fb, cb) in zip(S.host_terms(one, spec), S.host_terms(*fit), strict=True):
            assert fa == fb
            np.testing.assert_array_equal(ca, cb)
    with pytest.raises(ValueError, match="same knots"):
        S.stacked([fits[0], (fits[2][0], b._replace(n1=4))], np.float64)
