"""The small table's shape stage on the host (jaxtree._fit.host_shapes) against the compiled
stage (jaxtree.shapes): the same choices, coefficients, losses and held-out errors in
float64, the same pair screen, and a small table's fit that compiles none of the stage."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import scoring, search
from jaxtree import shapes as S
from jaxtree._fit import host_shapes as H
from jaxtree._fit import select, stages


def _table(seed, n=300, p=5, columns=8, dtype=np.float64):
    """Scaled rows with a two-valued covariate, weights, zero-weight padding rows and NaN
    padding columns (as a bucketed fit chunks them)."""
    rng = np.random.default_rng(seed)
    x = rng.random((n, p))
    x[:, 3] = rng.integers(0, 2, n)  # two-valued: its main shape is a line
    x[:4, 0] = [0.0, 1.0, 0.5, 1 - 1e-9]  # knots and edges
    y = (np.sin(5 * x[:, 0]) + np.abs(x[:, 1] - 0.4) * 2 + 1.5 * x[:, 2] * x[:, 3]
         + 0.8 * x[:, 3] + 0.1 * rng.standard_normal(n))
    w = rng.uniform(0.2, 2.0, n)
    data = scoring.chunk(x.astype(dtype), y.astype(dtype), w.astype(dtype), chunk_size=64,
                         rows=6, columns=columns)
    return x, y, w, data


def _specs(p, columns, knots, max_terms=7):
    plain = S.ShapeSpec(n1=knots[0], n2=knots[1], max_terms=max_terms, pairs=S.pair_list(p))
    return [plain, S.slots(plain, p, S.pair_slots(columns), columns)]


def _close(a, b, tol=1e-9):
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=tol,
                               atol=tol)


@pytest.fixture(params=["sparse", "products"])
def pair_form(request, monkeypatch):
    """Both forms of the host's pair blocks (host_shapes._Blocks of the sparse hats, and
    host_shapes._PairProducts), whatever the size rule would pick."""
    monkeypatch.setattr(H, "PRODUCTS", request.param == "products")
    return request.param


@pytest.mark.parametrize("knots", [(3, 2), (4, 3)])
@pytest.mark.parametrize("slotted", [False, True])
def test_host_steps_equal_the_compiled_steps_in_float64(x64, knots, slotted, pair_form):
    x, y, w, data = _table(0)
    hx, hy, hw, held = _table(1, n=90)
    p, cols = 5, data.x.shape[-1]
    spec = _specs(p, cols, knots)[slotted]
    if not slotted:  # a ShapeSpec's search runs on the table's own columns
        data = scoring.chunk(x, y, w, chunk_size=64)
        held = scoring.chunk(hx, hy, hw, chunk_size=64)
    gr = S.with_table_jit(S.grams_jit(data, spec), spec)
    st, hs = S.start_jit(data, spec), H.start(data, spec)
    design = H.Design(data, spec)
    _close(st.fit, hs.fit)
    for _ in range(spec.max_terms):
        st, info = search.shape_step_jit(st, data, gr, spec)
        hs, hinfo = H.step(hs, design)
        assert int(hinfo.status) == int(info.status)
        for field in ("flat_index", "feature", "feature2", "move"):
            assert int(getattr(hinfo.choice, field)) == int(getattr(info.choice, field)), field
        _close(hinfo.loss, info.loss)
        _close(hinfo.choice.sse, info.choice.sse)
        for a, b in zip(hs.shapes, st.shapes):
            _close(a, b)
        _close(hs.fit, st.fit)
        mse, rows = select.shape_errors(st.shapes, held, spec)
        hmse, hrows = H.held_errors(hs.shapes, held, spec)
        _close(hmse, mse)
        _close(hrows, rows)
    order = np.asarray(hs.shapes.order)[: int(hs.shapes.n_terms)]
    assert 3 in order or any(t >= cols for t in order)  # the stage found some term


def test_host_terms_are_lines_along_a_two_valued_covariate(x64):
    """The planted bug: without two_valued_linear the inner knot of the 0/1 covariate's
    main shape is pinned by the ridge near 0, a dip between its two values."""
    _, _, _, data = _table(2)
    spec = S.ShapeSpec(n1=5, n2=3, max_terms=5, pairs=())
    design = H.Design(data, spec)
    hs = H.start(data, spec)
    for _ in range(spec.max_terms):
        hs, _ = H.step(hs, design)
    assert bool(hs.shapes.main_on[3])
    coef = np.asarray(hs.shapes.main[3])
    _close(coef, coef[0] + (coef[-1] - coef[0]) * np.linspace(0, 1, 5), 1e-12)
    assert abs(coef[-1] - coef[0]) > 0.1


def test_box_solve_satisfies_kkt_and_equals_the_compiled_solve(x64):
    rng = np.random.default_rng(3)
    for _ in range(5):
        m = rng.standard_normal((30, 8))
        a = m.T @ m + 0.1 * np.eye(8)
        c = rng.standard_normal(8) * 60  # large: the box binds
        b = H._box_solve(a, c)
        _close(b, S._box_solve(jnp.asarray(a), jnp.asarray(c)), 1e-12)
        grad = a @ b - c
        assert np.all(np.abs(b) <= 1) and np.any(np.abs(b) == 1.0)
        free = np.abs(b) < 1 - 1e-9
        np.testing.assert_allclose(grad[free], 0, atol=1e-5 * np.abs(c).max())
        assert np.all(grad[b >= 1 - 1e-12] <= 1e-6) and np.all(grad[b <= -1 + 1e-12] >= -1e-6)
    # ill-conditioned systems, where the active set does not settle in its iterations and
    # the projected-gradient steps move the solution (about 2% of them): the compiled
    # solve's numbers still
    rng = np.random.default_rng(0)
    compiled = jax.jit(S._box_solve)
    for _ in range(300):
        k = int(rng.choice([4, 8]))
        m = rng.standard_normal((k, k))
        a, c = m @ m.T + 0.01 * np.eye(k), rng.standard_normal(k) * rng.choice([1, 5, 50])
        _close(H._box_solve(a, c), compiled(a, c), 1e-10)


def test_a_blocks_own_system_solves_as_its_padded_system(x64):
    """A term's block is solved at its own size (host_shapes.Design.solve), where the compiled
    sweep solves it padded to the largest block with the identity (jaxtree.shapes._solve_block):
    the same solution, the polish's step set by the identity's rows where the block's own
    rows sum to less than 1 (small weights; a planted step from the block's rows alone fails).
    """
    rng = np.random.default_rng(7)
    compiled = jax.jit(S._box_solve)
    for _ in range(300):
        k, pad = int(rng.choice([4, 8])), 16
        m = rng.standard_normal((k, k))
        a = 0.02 * (m @ m.T + 0.01 * np.eye(k))  # row sums of |A| mostly below 1
        c = 0.02 * rng.standard_normal(k) * rng.choice([1, 5, 50])
        big, cb = np.eye(pad), np.zeros(pad)
        big[:k, :k], cb[:k] = a, c
        _close(H._box_solve(a, c, 1.0), np.asarray(compiled(big, cb))[:k], 1e-10)


def test_host_screen_keeps_the_compiled_screens_pairs(x64, pair_form):
    rng = np.random.default_rng(4)
    n, p = 400, 13  # 78 pairs: more than MAX_PAIRS, so the screen ranks them
    x = rng.random((n, p))
    y = 3 * (x[:, 2] - 0.5) * (x[:, 7] - 0.5) + np.sin(3 * x[:, 0]) + 0.1 * rng.standard_normal(n)
    data = scoring.chunk(x, y, None, chunk_size=64, columns=16)
    spec = S.ShapeSpec(n1=3, n2=2, max_terms=1)
    want = S.screen_pairs(data, p=p, spec=spec)
    got = H.screen_pairs(data, p=p, spec=spec)
    assert got == want and len(got) == S.MAX_PAIRS and (2, 7) in got


def test_host_screen_of_many_pairs_is_the_compiled_screen(x64, monkeypatch):
    # Past HOST_SCREEN_WORK pairs times rows the host stage ranks its pairs with the
    # compiled screen (sixty-eighth session): called once, the same pairs as the host's.
    rng = np.random.default_rng(4)
    n, p = 400, 13
    x = rng.random((n, p))
    y = 3 * (x[:, 2] - 0.5) * (x[:, 7] - 0.5) + np.sin(3 * x[:, 0]) + 0.1 * rng.standard_normal(n)
    data = scoring.chunk(x, y, None, chunk_size=64, columns=16)
    spec = S.ShapeSpec(n1=3, n2=2, max_terms=1)
    calls = []
    plain = S.screen_pairs
    monkeypatch.setattr(S, "screen_pairs", lambda *a, **k: calls.append(1) or plain(*a, **k))
    host = H.screen_pairs(data, p=p, spec=spec)
    assert calls == [] and 78 * 7 * 64 <= H.HOST_SCREEN_WORK  # 78 pairs on 7 chunks: the host's
    monkeypatch.setattr(H, "HOST_SCREEN_WORK", 78 * 7 * 64)
    assert H.screen_pairs(data, p=p, spec=spec) == host and calls == []  # at the bound
    monkeypatch.setattr(H, "HOST_SCREEN_WORK", 78 * 7 * 64 - 1)
    assert H.screen_pairs(data, p=p, spec=spec) == host and calls == [1]


def _smooth_table(seed=0, n=500):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, 4))
    y = 2 * np.abs(x[:, 0] - 0.5) + np.sin(3 * x[:, 1]) + x[:, 2] + 0.05 * rng.standard_normal(n)
    return x, y


def _refuse_compiled_stage(monkeypatch):
    """The compiled shape stage's kernels (jaxtree._fit.stages.OneFit) raise from here on."""
    def refuse(*_a, **_k):
        raise AssertionError("the compiled shape stage ran")

    for name in ("term_grams", "factored", "add_term", "held_errors", "empty_model",
                 "compile_ahead", "shape_values"):
        monkeypatch.setattr(stages.OneFit, name, staticmethod(refuse))


def test_a_small_tables_shape_stage_runs_on_the_host_and_compiles_nothing(monkeypatch):
    """The compiled stage's kernels raise here: the fit (the count chosen on held-out rows
    and the order choice) runs on the host. Its shape terms and predictions are the compiled
    stage's to float32 rounding. (The default's cross-validated choice of an additive fit,
    which these smooth data would take, is off: its fits have no shape stage to compare.)"""
    from jaxtree._fit import spec as spec_

    monkeypatch.setattr(spec_, "ADDITIVE_CV_FOLDS", 0)
    x, y = _smooth_table()
    ref = jaxtree.TreeRegressor(k=6, random_state=0)
    with monkeypatch.context() as m:
        m.setattr(H, "MAX_BLOCK", 0)  # the compiled stage
        ref.fit(x, y)

    _refuse_compiled_stage(monkeypatch)
    est = jaxtree.TreeRegressor(k=6, random_state=0).fit(x, y)
    assert [r["terms"] for r in est.shape_path_] == [r["terms"] for r in ref.shape_path_]
    assert len(est.shape_path_) > 1
    got = [r["val_mse"] for r in est.shape_path_]
    np.testing.assert_allclose(got, [r["val_mse"] for r in ref.shape_path_], rtol=1e-4)
    np.testing.assert_allclose(est.predict(x), ref.predict(x), rtol=1e-4, atol=1e-4)


def test_the_host_stage_only_where_its_blocks_are_small():
    from jaxtree._fit import spec as spec_
    assert H.applies(spec_.SMALL_SHAPE_KNOTS)
    assert H.applies(spec_.AUTO_SHAPE_KNOTS)  # pairs of 256 coefficients
    assert not H.applies((8, 17)) and not H.applies((257, 2))
    assert stages.after_kernels(type("S", (), {"host_shapes": True})) is stages.HostFit
    assert stages.after_kernels(type("S", (), {"host_shapes": False})) is stages.OneFit


@pytest.mark.parametrize("classes", [2, 3])
def test_the_classifiers_host_stage_equals_the_compiled_one(monkeypatch, classes):
    """The classifier's shape stage (one tree's working data; one-versus-rest: each
    tree's) runs on the host too: the same terms as the compiled stage's, the
    probabilities to float32 rounding."""
    x, f = _smooth_table(1, n=600)
    y = np.digitize(f, np.quantile(f, np.linspace(0, 1, classes + 1)[1:-1]))
    with monkeypatch.context() as m:
        m.setattr(H, "MAX_BLOCK", 0)
        ref = jaxtree.TreeClassifier(k=4, random_state=0).fit(x, y)
    for name in ("add_term", "held_errors", "empty_model", "compile_ahead"):
        monkeypatch.setattr(stages.OneFit, name, staticmethod(
            lambda *a, **k: (_ for _ in ()).throw(AssertionError("compiled stage"))))
    est = jaxtree.TreeClassifier(k=4, random_state=0).fit(x, y)
    assert est.model_.shapes is not None  # the stage kept terms
    np.testing.assert_allclose(est.predict_proba(x), ref.predict_proba(x), atol=1e-4)


@pytest.mark.parametrize("families", [{}, dict(power_laws=(0.5, -1.0, 2.0), decays=(0.3,),
                                               hats=4, sines=2, cosines=2)])
def test_host_tree_values_equal_the_compiled_ones(x64, families):
    """The tree's values on the host (every family's to_numeric: per-covariate power laws,
    decays, hats, trigonometric, powers, truncated cubics) against the compiled evaluation
    of the same program; a custom function's basis is left to the compiled one (None)."""
    from jaxtree.basis import make_basis
    rng = np.random.default_rng(5)
    X = rng.uniform(0.5, 3.0, size=(300, 3))
    y = np.sqrt(X[:, 0]) * X[:, 1] + np.exp(-X[:, 2]) + np.sin(2 * X[:, 1])
    kw = dict(basis=make_basis(**families)) if families else {}
    model = jaxtree.TreeRegressor(k=8, shapes=0, **kw).fit(X, y).model_
    u = (X - np.asarray(model.x_min)) * np.asarray(model.x_scale)
    want = np.asarray(select.tree_values(model.program, scoring.chunk(u, np.zeros(300)).x,
                                         model.basis)).reshape(-1)[:300]
    got = select.host_tree_values(model.program, u, model.basis)
    _close(got, want, 1e-9)
    assert np.std(got) > 0.01 and int(model.program.n_slots) >= 7  # leaves, not a constant
    custom = make_basis(functions=[("sq", lambda v: v * v)])
    assert select.host_tree_values(model.program, u, custom) is None


def test_host_held_out_errors_equal_the_compiled_ones_and_serve_a_small_fit(x64, monkeypatch):
    """The size selection's held-out errors on the host against the compiled program (padding
    rows and columns included); a small table's fit then runs none of the compiled one."""
    rng = np.random.default_rng(6)
    X = rng.uniform(size=(400, 4))
    y = np.sin(3 * X[:, 0]) * X[:, 1] + X[:, 2] + 0.05 * rng.standard_normal(400)
    model = jaxtree.TreeRegressor(k=6, shapes=0).fit(X, y).model_
    u = (X - np.asarray(model.x_min)) * np.asarray(model.x_scale)
    held = scoring.chunk(u[:150], rng.standard_normal(150), rng.uniform(0.5, 2, 150),
                         chunk_size=64, rows=4, columns=6)
    mse, rows = select.held_out_errors_cached(model.program, held, model.basis)
    hmse, hrows = select.host_held_out_errors(held, model.basis)(model.program)
    _close(hmse, mse)
    _close(hrows, rows)
    monkeypatch.setattr(select, "held_out_errors_cached", None)  # would fail if called
    est = jaxtree.TreeRegressor(k=6).fit(X, y)
    assert len(est.path_) > 3 and est.path_[-1]["val_mse"] < est.path_[0]["val_mse"]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 32])
def test_sparse_hats_are_the_dense_hats_bit_for_bit(x64, n):
    """The host's hats are kept as the two that may be nonzero on a row: scattered back, the
    compiled stage's dense hats (jaxtree.shapes._hats) exactly, at the knots and the edges
    too; a NaN stays NaN. A pair's four are the dense tensor product's nonzeros."""
    rng = np.random.default_rng(n)
    z = np.r_[rng.random(300), np.linspace(0, 1, max(n, 2)), 1 - 1e-12, np.nan]
    dense = np.asarray(S._hats(jnp.asarray(z), n))
    idx, val = H._sparse_hats(z, n)
    got = np.zeros((len(z), n))
    np.add.at(got, (np.repeat(np.arange(len(z)), 2), idx.reshape(-1)), val.reshape(-1))
    ok = ~np.isnan(z)
    np.testing.assert_array_equal(got[ok], dense[ok])
    assert np.isnan(val[~ok]).all()
    if n >= 2:  # a pair of the first two halves of z
        a, b = z[:150], z[150:300]
        pidx, pval = H._sparse_pair_hats(H._sparse_hats(np.stack([a, b]), n), [0], [1], n)
        dense2 = (np.asarray(S._hats(jnp.asarray(a), n))[:, :, None]
                  * np.asarray(S._hats(jnp.asarray(b), n))[:, None, :]).reshape(150, n * n)
        got2 = np.zeros((150, n * n))
        np.add.at(got2, (np.repeat(np.arange(150), 4), pidx[0].reshape(-1)), pval[0].reshape(-1))
        np.testing.assert_array_equal(got2, dense2)


@pytest.mark.parametrize("n2", [2, 3, 4])
def test_pair_products_equal_the_sparse_pair_blocks(x64, n2, monkeypatch):
    """The pair blocks' statistics as matrix products of the covariates' hats
    (host_shapes._PairProducts) against the sparse per-row count (host_shapes._Blocks), on
    rows with a NaN padding column, a covariate NaN on some rows, rows at the knots and
    zero-weight rows: the same right-hand sides, Grams, values and projections (row-major
    (a, b) blocks, the second covariate's hat fastest), and the same NaN blocks."""
    rng = np.random.default_rng(10 + n2)
    n, cols = 257, 7
    x = rng.random((n, cols))
    x[:, 6] = np.nan  # a padding column
    x[::5, 4] = np.nan  # a group's member where its row has no level
    x[:3, 1] = [0.0, 1.0, 0.5]
    w = rng.uniform(0.1, 2.0, n)
    w[-10:] = 0.0
    r = rng.standard_normal(n)
    pairs = [(0, 1), (1, 2), (2, 0), (3, 5), (0, 4), (1, 6), (5, 3)]
    first, second = (np.array(c) for c in zip(*pairs))
    sparse = H._Blocks(*H._sparse_pair_hats(H._sparse_hats(x.T, n2), first, second, n2), n2 * n2)
    prods = H._PairProducts(H._dense_hats(x.T, n2), first, second, n2)
    np.testing.assert_array_equal(prods.nan, sparse.nan)
    assert prods.nan.tolist() == [False, False, False, False, True, True, False]
    _close(prods.sums(r), sparse.sums(r), 1e-12)
    _close(prods.grams(w), sparse.grams(w), 1e-12)
    # a planted transpose of the block's (a, b) order would fail: the Grams are not symmetric
    # under it on these rows
    g = prods.grams(w)[0].reshape(n2, n2, n2, n2)
    assert not np.allclose(g, g.transpose(1, 0, 3, 2))
    for i in range(len(pairs)):
        coef = rng.standard_normal(n2 * n2)
        _close(prods.times(i, coef), sparse.times(i, coef), 1e-12)
        if not sparse.nan[i]:  # (a NaN block is never chosen, so never projected on)
            _close(prods.project(i, r), sparse.project(i, r), 1e-12)
    # the products are used where the size rule says so, the sparse form elsewhere
    assert H._by_products(2016, 64, 3) and not H._by_products(5, 10, 16)
    assert isinstance(H._pair_blocks(x, first, second, n2), H._PairProducts)
    # the sparse form as the design makes it (each row's cell and its four corners' hats)
    monkeypatch.setattr(H, "PRODUCTS", False)
    cells = H._pair_blocks(x, first, second, n2)
    assert isinstance(cells, H._Blocks) and cells.offsets.tolist() == [0, 1, n2, n2 + 1]
    np.testing.assert_array_equal(cells.nan, sparse.nan)
    _close(cells.sums(r), sparse.sums(r), 1e-12)
    _close(cells.grams(w), prods.grams(w), 1e-12)
    coef = rng.standard_normal(n2 * n2)
    _close(cells.times(2, coef), prods.times(2, coef), 1e-12)
    _close(cells.project(2, r), prods.project(2, r), 1e-12)


def test_a_wide_tables_pair_screen_by_products(x64):
    """The screen of all 1,128 pairs of 48 covariates (the case that made the products: 2,016
    pairs of 64 covariates, whose sparse count took 1.35 s a design) keeps the same pairs in
    both forms and finds the planted product."""
    rng = np.random.default_rng(5)
    n, p = 400, 48
    x = rng.random((n, p))
    y = 3 * (x[:, 10] - 0.5) * (x[:, 40] - 0.5) + np.sin(3 * x[:, 0]) + 0.1 * rng.standard_normal(n)
    data = scoring.chunk(x, y, None, chunk_size=128)
    spec = S.ShapeSpec(n1=3, n2=2, max_terms=1)
    got = {}
    for form in (True, False):
        H.PRODUCTS = form
        try:
            got[form] = H.screen_pairs(data, p=p, spec=spec)
        finally:
            H.PRODUCTS = None
    assert got[True] == got[False] and len(got[True]) == S.MAX_PAIRS and (10, 40) in got[True]


@pytest.mark.parametrize("knots", [(4, 3), (8, 5)])
@pytest.mark.parametrize("slotted", [False, True])
def test_host_refit_equals_the_compiled_refit_in_float64(x64, knots, slotted):
    """The backfitting round's sweep on the host (host_shapes.refit: the chosen terms' own
    hats, Grams and box solves) against jaxtree.shapes.refit on the same compacted terms and
    a new target, as the round gives it the tree's residual: the same coefficients,
    intercept and fitted values to 1e-9. (8, 5) knots: pair blocks of 25 coefficients."""
    x, y, w, data = _table(7)
    p, cols = 5, data.x.shape[-1]
    spec = _specs(p, cols, knots)[slotted]
    if not slotted:
        data = scoring.chunk(x, y, w, chunk_size=64)
    gr = S.with_table_jit(S.grams_jit(data, spec), spec)
    st = S.start_jit(data, spec)
    for _ in range(5):
        st, _ = search.shape_step_jit(st, data, gr, spec)
    found, cspec, _ = S.compact(st.shapes, spec)
    order = np.asarray(found.order)[: int(found.n_terms)]
    assert any(t >= p for t in order)  # a pair among the terms
    xs = np.asarray(data.x)
    target = np.asarray(data.y) - 0.4 * np.sin(4 * np.nan_to_num(xs[..., 1]))
    rdata = data._replace(y=jnp.asarray(target))
    want = S.refit(found, rdata, cspec, 2)
    got = H.refit(found, scoring.Data(xs, target, np.asarray(data.w)), cspec, 2)
    for a, b in zip(got.shapes, want.shapes):
        _close(a, b)
    _close(got.fit, want.fit)
    assert np.max(np.abs(np.asarray(got.shapes.main) - np.asarray(found.main))) > 1e-3  # moved


def test_the_backfitting_round_runs_on_the_host(monkeypatch):
    """Where compiling dominates (host_backfit), the round after the shape stage reads the
    tree's values and sweeps the chosen terms on the host: the compiled tree values and
    refit raise here, and the fit equals the one through them (host values off) to float32
    rounding, its shape terms kept."""
    X, f, rng = _round_table(8)
    y = f + 0.05 * rng.standard_normal(len(f))
    est, ref = _host_and_compiled_round(
        monkeypatch, lambda: jaxtree.TreeRegressor(k=4, random_state=0), X, y)
    assert est.model_.shapes is not None
    assert est.formula() == ref.formula()
    np.testing.assert_allclose(est.predict(X), ref.predict(X), rtol=1e-4, atol=1e-4)


def test_the_round_sweeps_the_terms_chosen_after_the_tree_backfit_sweeps_times(monkeypatch):
    """The backfitting round of ``shapes="auto"`` sweeps its terms
    :data:`~jaxtree._fit.spec.BACKFIT_SWEEPS` times given the tree, and on a table of
    overlapping terms (a pair and its covariates' mains) the later sweeps still lower the
    training loss: a round that swept once would leave it higher (seventy-fifth session)."""
    from jaxtree._fit import spec as spec_

    seen, real = [], H.refit
    monkeypatch.setattr(H, "refit",
                        lambda t, d, s, sweeps=1: seen.append((t, d, s, sweeps)) or
                        real(t, d, s, sweeps))
    X, f, rng = _round_table(8)
    est = jaxtree.TreeRegressor(k=4, random_state=0).fit(X, f + 0.05 * rng.standard_normal(len(f)))
    assert est.model_.shapes is not None
    assert [c[3] for c in seen] == [spec_.BACKFIT_SWEEPS] and spec_.BACKFIT_SWEEPS > 1
    terms, data, sspec, _ = seen[0]
    w, y = np.asarray(data.w, np.float64), np.asarray(data.y, np.float64)

    def loss(sweeps):
        return float(np.sum(w * (y - np.asarray(real(terms, data, sspec, sweeps).fit)) ** 2))

    once, rounds = loss(1), loss(spec_.BACKFIT_SWEEPS)
    assert rounds < once * (1 - 1e-4), (once, rounds)


def _round_table(seed, n=2100):
    """``(X, f, rng)``: rows with fine knots (32, 16), pair blocks of 256 coefficients, and
    an additive truth with a pair, for the backfitting round's fits."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 4))
    return X, 2 * np.abs(X[:, 0] - 0.5) + np.sin(3 * X[:, 1]) + 3 * X[:, 2] * X[:, 3], rng


def _host_and_compiled_round(monkeypatch, make, X, y):
    """``(host, compiled)``: the estimator ``make()`` fitted to ``(X, y)`` with the compiled
    round refused (:func:`_refuse_compiled_round`), and with ``HOST_BACKFIT`` off."""
    from jaxtree._fit import source
    from jaxtree._fit import spec as spec_

    with monkeypatch.context() as m:
        m.setattr(spec_, "HOST_BACKFIT", False)
        compiled = make().fit(X, y)
    _refuse_compiled_round(monkeypatch, source)
    return make().fit(X, y), compiled


def _refuse_compiled_round(monkeypatch, source):
    def refuse(*_a, **_k):
        raise AssertionError("the compiled backfitting round ran")

    monkeypatch.setattr(source.InMemory, "_tree_fit", refuse)
    monkeypatch.setattr(select, "tree_values", refuse)
    monkeypatch.setattr(S, "refit", refuse)
    monkeypatch.setattr(S, "refit_ahead", refuse)
    monkeypatch.setattr(S, "evaluate_jit", refuse)


@pytest.mark.parametrize("classes", [2, 3])
def test_the_classifiers_newton_round_runs_on_the_host(monkeypatch, classes):
    """The classifier's Newton sweeps after the shape stage (each one-versus-rest tree's
    too) and the tree's and the terms' values they read run on the host where compiling
    dominates: the compiled ones raise here, and the probabilities equal those of the fit
    through them (host_backfit off) to float32 rounding. At 2,100 rows the shape stage
    itself is compiled (fine knots), so only the round moves."""
    X, f, rng = _round_table(9)
    y = np.digitize(f + 0.3 * rng.standard_normal(len(f)),
                    np.quantile(f, np.linspace(0, 1, classes + 1)[1:-1]))
    est, ref = _host_and_compiled_round(
        monkeypatch, lambda: jaxtree.TreeClassifier(k=3, random_state=0), X, y)
    assert est.model_.shapes is not None
    np.testing.assert_allclose(est.predict_proba(X), ref.predict_proba(X), atol=1e-4)


def test_the_classifiers_kept_hats_change_no_value(monkeypatch):
    """The classifier keeps each shape term's sparse hats on its training rows between the
    evaluations of one fit, per spec (``Labels._host_rows``: the shape count's losses under
    the selection run's spec, the Newton sweeps under the compacted one); a fit that forms
    them afresh at every evaluation has the same probabilities, history and terms bit for
    bit. Two pairs are chosen, (x1, x3) and (x2, x3), whose ids the compacted spec
    renumbers (1 and 3 among the candidates, 0 and 1 after it): hats kept under a term id
    across the two specs would give the second pair the first's."""
    from jaxtree._fit import classify

    rng = np.random.default_rng(9)
    X = rng.uniform(size=(2100, 4))
    c = X - 0.5
    f = 2 * np.abs(c[:, 0]) + 24 * c[:, 0] * c[:, 2] + 24 * c[:, 1] * c[:, 2] + np.sin(3 * X[:, 3])
    y = (f + 0.3 * rng.standard_normal(len(f)) > np.median(f)).astype(int)
    kept = jaxtree.TreeClassifier(k=1, random_state=0).fit(X, y)
    assert kept.model_.shape_spec.pairs == ((0, 2), (1, 2))
    rows = classify.Labels._host_rows
    monkeypatch.setattr(classify.Labels, "_host_rows",
                        lambda self, sspec: (rows(self, sspec)[0], {}))  # no hats kept
    fresh = jaxtree.TreeClassifier(k=1, random_state=0).fit(X, y)
    np.testing.assert_array_equal(kept.predict_proba(X), fresh.predict_proba(X))
    np.testing.assert_array_equal(kept.history_, fresh.history_)
    assert kept.formula() == fresh.formula()


@pytest.mark.parametrize("n2", [1, 2, 3, 16])
def test_factored_gains_are_the_dense_quadratic_forms(x64, n2):
    """host_shapes._Factors (a block Cholesky of a pair's block-tridiagonal Gram and the
    centring by Sherman-Morrison) against ``c' A^{-1} c`` of the dense centred system in
    float64, on pair blocks with a NaN padding column, zero-weight rows, rows at the knots
    and at both ends, and a block whose hats see few rows; the main shapes' blocks
    factored whole. A non-finite block or right-hand side gives NaN."""
    rng = np.random.default_rng(n2)
    n, cols = 700, 5
    x = rng.uniform(size=(n, cols))
    x[:40, 1] = np.round(x[:40, 1] * (n2 - 1) + 0.0) / max(n2 - 1, 1)  # on the knots
    x[:5, 2], x[5:10, 2] = 0.0, 1.0
    x[:, 3] = 0.9 + 0.1 * x[:, 3]  # its hats past the first few see no row
    x[:, 4] = np.nan  # a padding column
    w = rng.uniform(0.0, 2.0, n)
    w[::7] = 0.0
    first, second = np.array([0, 0, 1, 2, 3, 0]), np.array([1, 2, 3, 3, 2, 4])
    blocks = H._pair_blocks(x, first, second, n2)
    s, g = blocks.sums(w), blocks.grams(w)
    nw = float(w.sum())
    f = H._Factors(g, s, nw, n2)
    c = rng.standard_normal(s.shape) * rng.choice([1.0, 30.0], size=(len(s), 1))
    got = f.quadratic(c)
    for i in range(len(s)):
        if not np.isfinite(g[i]).all():
            assert np.isnan(got[i])
            continue
        a = H._system(g[i].copy(), s[i], nw)
        want = c[i] @ np.linalg.solve(a, c[i])
        np.testing.assert_allclose(got[i], want, rtol=1e-10)
    assert np.isnan(got[-1]) and np.isfinite(got[:-1]).all()
    c[0, 0] = np.nan
    assert np.isnan(f.quadratic(c)[0]) and np.isfinite(f.quadratic(c)[1:-1]).all()
    # the main shapes: one block each, factored whole
    n1 = 2 * n2 + 1
    idx, val = H._sparse_hats(x.T[:4], n1)
    mains = H._Blocks(idx, val, n1)
    s1, g1 = mains.sums(w), mains.grams(w)
    c1 = rng.standard_normal(s1.shape)
    got1 = H._Factors(g1, s1, nw, 1).quadratic(c1)
    for i in range(4):
        a = H._system(g1[i].copy(), s1[i], nw)
        np.testing.assert_allclose(got1[i], c1[i] @ np.linalg.solve(a, c1[i]), rtol=1e-10)


def test_a_search_design_keeps_only_its_live_pair_slots(x64):
    """A slotted search's padding pair slots are not formed (host_shapes.Design keeps the
    live ones): their gains are -inf and the live ones' are those of a design of the live
    pairs alone."""
    x, y, w, data = _table(4)
    p, cols = 5, data.x.shape[-1]
    spec = _specs(p, cols, (4, 3))[1]
    first, second, live = S.pair_index(spec)
    live = np.asarray(live, bool)
    assert (~live).any() and live.any()
    d = H.Design(data, spec)
    fit = np.asarray(H.start(data, spec).fit, np.float64).reshape(-1) + 0.1 * np.sin(
        7 * np.arange(d.y.size))
    gains = d.gains(*d.rhs(fit))
    assert gains.shape == (cols + len(live),)  # the design's mains: every column
    assert np.all(gains[cols:][~live] == -np.inf)
    plain = S.ShapeSpec(n1=4, n2=3, max_terms=7, pairs=tuple(
        (int(a), int(b)) for a, b in zip(np.asarray(first)[live], np.asarray(second)[live])))
    ref = H.Design(data, plain)
    want = ref.gains(*ref.rhs(fit))
    assert np.isfinite(want[cols:]).all()
    _close(gains[cols:][live], want[cols:], 1e-10)
    np.testing.assert_array_equal(np.isnan(gains[:cols]), np.isnan(want[:cols]))
    _close(np.nan_to_num(gains[:cols]), np.nan_to_num(want[:cols]), 1e-10)


def test_a_fine_knot_shape_stage_runs_on_the_host_where_compiling_dominates(monkeypatch):
    """From 2,000 rows (knots (32, 16): pairs of 256 coefficients) the stage runs on the host
    where compiling dominates an in-memory CPU fit (spec.HOST_SHAPES; 5,000 rows, above the
    quick stage's row bucket, so the rule itself decides): the compiled stage's kernels
    raise, and the terms, held-out errors and predictions are those of the fit through the
    compiled stage (HOST_SHAPES off) to float32 rounding."""
    from jaxtree._fit import spec as spec_

    X, f, rng = _round_table(3, n=5_000)
    y = f + 0.1 * rng.standard_normal(len(f))
    ref = jaxtree.TreeRegressor(k=4, random_state=0)
    with monkeypatch.context() as m:
        m.setattr(spec_, "HOST_SHAPES", False)
        ref.fit(X, y)

    _refuse_compiled_stage(monkeypatch)
    specs, real = [], stages.shapes_after
    monkeypatch.setattr(stages, "shapes_after",
                        lambda src, spec, *a: specs.append(spec) or real(src, spec, *a))
    est = jaxtree.TreeRegressor(k=4, random_state=0).fit(X, y)
    assert specs and all(s.host_shapes and not s.quick_shapes for s in specs)
    assert est.model_.shapes is not None
    assert [r["terms"] for r in est.shape_path_] == [r["terms"] for r in ref.shape_path_]
    assert len(est.shape_path_) > 2
    np.testing.assert_allclose([r["val_mse"] for r in est.shape_path_],
                               [r["val_mse"] for r in ref.shape_path_], rtol=1e-4)
    np.testing.assert_allclose(est.predict(X), ref.predict(X), rtol=1e-4, atol=1e-4)
