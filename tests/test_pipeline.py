"""The fit pipeline (jaxtree._fit): hyperparameters resolved once into a frozen spec, results
passed as values, the estimator a thin shell, and no module reaching into another module's
private names. (That no fit leaves a scratch attribute is checked on every path of
tests/test_golden.py.)"""

import ast
import dataclasses
import gc
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import plan as plan_
from jaxtree import scoring
from jaxtree._fit import pipeline
from jaxtree._fit import spec as spec_
from jaxtree.debug import count_compilations

from _shared import jax_events

SMALL = jaxtree.basis.make_basis(hats=2, sines=2, cosines=0, powers=2, truncated_cubics=0)
PKG = pathlib.Path(jaxtree.__file__).parent


def _data(n=300, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p))
    return X, X[:, 0] ** 2 + 0.5 * X[:, 1] + 0.01 * rng.normal(size=n)


def test_a_failed_fit_leaves_the_estimator_as_it_was():
    X, y = _data()
    est = jaxtree.TreeRegressor.paper(k=2, basis=SMALL).fit(X, y)
    before = {k: v for k, v in vars(est).items()}

    def boom(it, loss, info):
        raise KeyboardInterrupt

    est.set_params(callback=boom)  # same shapes: nothing compiles, the first step stops it
    with pytest.raises(KeyboardInterrupt):
        est.fit(X, -y)
    est.set_params(callback=None)
    assert set(vars(est)) == set(before)
    assert all(vars(est)[k] is v for k, v in before.items() if k != "callback")


def test_predict_block_rows_are_powers_of_two_within_the_bounds():
    got = [pipeline.predict_block_rows(n) for n in (1, 300, 1024, 1025, 3000, 10**9)]
    assert got == [1024, 1024, 1024, 2048, 4096, pipeline.PREDICT_CHUNK_ROWS]


def test_predictions_of_nearby_lengths_share_one_program_and_are_unpadded(monkeypatch):
    """Rows are padded to a bucket (issue 27): 300 and 400 rows compile one program, and
    every row's prediction is the one unpadded evaluation gives, for a regressor and a
    3-class classifier, with the rows in several blocks too (the compiled prediction: the
    host's, of up to HOST_PREDICT_MAX_ROWS rows, is tested below)."""
    monkeypatch.setattr(pipeline, "HOST_PREDICT_MAX_ROWS", 0)
    chunk_rows = pipeline.PREDICT_CHUNK_ROWS
    X, y = _data(n=400)
    est = jaxtree.TreeRegressor.paper(k=2, basis=SMALL).fit(X, y)
    clf = jaxtree.TreeClassifier(k=2, basis=SMALL, search="greedy").fit(
        X, np.digitize(y, np.quantile(y, [0.3, 0.7])))
    for fitted, predict in ((est, jaxtree.predict),
                            (clf, jaxtree.classifier.decision_function)):
        values = fitted.decision_function if fitted is clf else fitted.predict
        first = values(X[:300])
        with count_compilations() as count:
            got = values(X)
        assert count.lowerings == 0, count
        whole = np.asarray(predict(fitted.model_, X), np.float64)  # 400 rows, unpadded
        np.testing.assert_array_equal(first, whole[:300])
        np.testing.assert_array_equal(got, whole)
        monkeypatch.setattr(pipeline, "PREDICT_CHUNK_ROWS", 128)  # blocks of 128, one padded
        np.testing.assert_array_equal(values(X), whole)
        monkeypatch.setattr(pipeline, "PREDICT_CHUNK_ROWS", chunk_rows)
    assert clf.decision_function(X).shape == (400, 3)
    # a float32 model (users' dtype without x64) casts float64 rows on the host: the first
    # call of a bucket compiles no eager cast beside the prediction, the next length nothing
    m32 = jax.tree_util.tree_map(
        lambda a: a.astype(np.float32) if np.issubdtype(a.dtype, np.floating) else a, est.model_)
    with jax_events("backend_compile_duration") as names, jax.enable_x64(False):
        first = pipeline.predict_rows(m32, X[:300], True)
        with count_compilations() as count:
            got = pipeline.predict_rows(m32, X, True)
    assert "jit(convert_element_type)" not in names and count.lowerings == 0, (names, count)
    np.testing.assert_array_equal(got[:300], first)
    np.testing.assert_allclose(got, est.predict(X), rtol=1e-5, atol=1e-5)


@pytest.mark.filterwarnings("ignore::jaxtree.WeightBoxWarning")  # k = 5 on this table
def test_trees_of_every_size_in_a_bucket_share_one_prediction_with_the_unpadded_values(
        monkeypatch):
    """The estimators predict a tree padded to its capacity bucket (``model.slotted``,
    issue 27): after a model of ``k = 1``, models of ``k = 3`` and ``5`` (both in the bucket
    of 8 operations) compile no prediction, a binary classifier's decision values too, and
    each prediction equals the unpadded model's (``jaxtree.predict``) bitwise. Above
    ``BUCKET_TREE_MAX_ROWS`` a block evaluates the tree at its own size (and compiles).
    The compiled prediction: the host's (``HOST_PREDICT_MAX_ROWS``) compiles nothing."""
    monkeypatch.setattr(pipeline, "HOST_PREDICT_MAX_ROWS", 0)
    X, y = _data(n=300)
    ests = [jaxtree.TreeRegressor.paper(k=k, basis=SMALL).fit(X, y) for k in (1, 3, 5)]
    assert [e.model_.program.capacity for e in ests] == [3, 7, 11]
    labels = (y > np.median(y)).astype(int)
    clfs = [jaxtree.TreeClassifier(k=k, basis=SMALL, search="greedy", shapes=0).fit(X, labels)
            for k in (1, 4)]
    assert [c.model_.program.capacity for c in clfs] == [3, 9]
    first = [ests[0].predict(X), clfs[0].decision_function(X)]
    with count_compilations() as count:
        rest = [e.predict(X) for e in ests[1:]] + [clfs[1].decision_function(X)]
    assert count.lowerings == 0, count
    for fitted, got in zip(ests + clfs, first[:1] + rest[:2] + [first[1], rest[2]]):
        np.testing.assert_array_equal(got, np.asarray(jaxtree.predict(fitted.model_, X),
                                                      np.float64))
    assert not np.allclose(first[0], rest[0])  # the trees are read: other trees, other values
    padded, _ = jaxtree.model.slotted(ests[1].model_)
    assert padded.program.capacity == 17 and jaxtree.program.n_ops(padded.program) == 3
    # padded once per model (not at every call), and forgotten with the model
    assert jaxtree.model.slotted(ests[1].model_)[0].program is padded.program
    key = id(ests[0].model_)
    assert key in jaxtree.model._BUCKETED
    ests[0] = None
    gc.collect()
    assert key not in jaxtree.model._BUCKETED
    monkeypatch.setattr(pipeline, "BUCKET_TREE_MAX_ROWS", 512)  # X's block: 1,024 rows
    with count_compilations() as count:
        got = ests[2].predict(X)
    assert count.lowerings == 1, count
    np.testing.assert_array_equal(got, rest[1])


def test_pipeline_is_a_function_of_its_arguments():
    """``pipeline.fit`` reads no estimator: the same arguments give the same result, and the
    estimator's fitted attributes are the result's."""
    X, y = _data()
    hyper = jaxtree.TreeRegressor.paper(k=2, basis=SMALL).get_params()
    a = pipeline.fit(X, y, None, hyper)
    b = pipeline.fit(X, y, None, dict(hyper))
    assert isinstance(a, pipeline.FitResult)
    np.testing.assert_array_equal(pipeline.predict_rows(a.model, X, True),
                                  pipeline.predict_rows(b.model, X, True))
    est = jaxtree.TreeRegressor.paper(k=2, basis=SMALL).fit(X, y)
    np.testing.assert_array_equal(est.predict(X), pipeline.predict_rows(a.model, X, True))
    assert (est.search_, est.validation_fraction_) == (a.spec.search, a.spec.validation_fraction)
    np.testing.assert_array_equal(est.history_, a.history)


def test_spec_is_resolved_once_and_frozen():
    params = spec_.check_params({"k": 4, "basis": SMALL})
    hyper = jaxtree.TreeRegressor(k=4, basis=SMALL).get_params()
    small = spec_.resolve(hyper, params._replace(chunk=2048), 500, 3, np.float32, None, True)
    assert (small.search, small.validation_fraction) == ("backfit", spec_.AUTO_VALIDATION)
    assert small.shapes == 0 and small.shapes_after and small.shape_knots == (3, 2)
    assert small.progress_bound == 4 + spec_.AUTO_SHAPES
    large = spec_.resolve(hyper, params._replace(chunk=2048), 20_000, 3, np.float32, None, True)
    assert (large.search, large.validation_fraction, large.shapes_after) == ("greedy", None, True)
    assert large.progress_bound == 4 + spec_.AUTO_SHAPES
    assert (small.max_terms, small.shape_capacity) == (spec_.AUTO_TERMS, spec_.AUTO_SHAPES)
    # max_terms up to the default keeps the shape step's capacity (one compiled program);
    # above it the capacity grows by the excess
    for m, capacity in ((5, spec_.AUTO_SHAPES), (20, 16), (21, 17), (40, 36)):
        wide = spec_.resolve(dict(hyper, max_terms=m), params._replace(chunk=2048), 20_000, 3,
                             np.float32, None, True)
        assert (wide.max_terms, wide.shape_capacity, wide.progress_bound) == (m, capacity,
                                                                              4 + capacity)
    streamed = spec_.resolve(hyper, params._replace(chunk=2048), 500, 3, np.float32, None, False)
    assert (streamed.search, streamed.validation_fraction) == ("greedy", None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        small.k = 5
    fixed = spec_.resolve(dict(hyper, shapes=3, search="beam", validation_fraction=0.3),
                          params._replace(chunk=2048), 500, 3, np.float32, None, True)
    assert (fixed.shapes, fixed.shapes_after, fixed.search, fixed.validation_fraction) == (
        3, False, "beam", 0.3)


def test_shapes_auto_searches_shapes_from_100_rows_coarse_below_2000():
    """shapes="auto": shape terms after the tree from AUTO_SHAPES_MIN_ROWS rows (100), at the
    coarse knots (3, 2) below FINE_KNOTS_MIN_ROWS (2,000) and (32, 16) from it, for the
    regressor and a logistic classifier, in memory or streamed (one versus rest too: each
    tree its own, jaxtree._fit.stages.shapes_after_each); none for the margin loss. Knots given are kept at any size; shapes=S has
    (24, 12) at any size.
    The search stays "backfit" with a held-out size below 10,000 rows (AUTO_SMALL_MAX_ROWS)."""
    from jaxtree._fit import classify

    params = spec_.check_params({"k": 4, "basis": SMALL})._replace(chunk=2048)
    hyper = jaxtree.TreeClassifier(k=4, basis=SMALL).get_params()

    def at(n, **kw):
        return classify.classifier_spec(dict(hyper, **kw), params, n, 3, np.float32, None,
                                        in_memory=True)

    assert spec_.AUTO_SHAPES_MIN_ROWS == 100 < spec_.FINE_KNOTS_MIN_ROWS == 2_000
    assert spec_.FINE_KNOTS_MIN_ROWS < spec_.AUTO_SMALL_MAX_ROWS == 10_000
    assert at(100).shapes_after and not at(99).shapes_after
    assert (at(1_999).shape_knots, at(2_000).shape_knots) == ((3, 2), (32, 16))
    reg = jaxtree.TreeRegressor(k=4, basis=SMALL).get_params()
    for n, after, knots in ((99, False, (3, 2)), (100, True, (3, 2)), (1_999, True, (3, 2)),
                            (2_000, True, (32, 16)), (9_999, True, (32, 16))):
        r = spec_.resolve(reg, params, n, 3, np.float32, None, True)
        assert (r.shapes_after, r.shape_knots, r.search, r.validation_fraction) == (
            after, knots, "backfit", spec_.AUTO_VALIDATION)
    for n in (500, 5_000):  # given knots; shapes=S: (24, 12), below 2,000 rows and from them
        for kw in (dict(shape_knots=(6, 4)), dict(shapes=3)):
            r = spec_.resolve(dict(reg, **kw), params, n, 3, np.float32, None, True)
            assert r.shape_knots == kw.get("shape_knots", (24, 12))
    assert not at(5_000, loss="margin").shapes_after
    assert not at(5_000, shapes=0).shapes_after
    assert classify.classifier_spec(hyper, params, 5_000, 3, np.float32, None,
                                    in_memory=False).shapes_after


def test_the_quick_shape_stage_follows_the_row_bucket():
    """FitSpec.quick_shapes (the default's shape stage compiled for compile time) holds for
    the in-memory fits whose row bucket has at most QUICK_SHAPES_MAX_ROWS rows: every table
    of one bucket alike (in chunks of 2,048, 2,049-4,096 rows are one bucket, 4,097-8,192
    the next), so that they share the stage's programs; never for streamed rows."""
    params = spec_.check_params({"k": 4, "basis": SMALL})._replace(chunk=2048)
    reg = jaxtree.TreeRegressor(k=4, basis=SMALL).get_params()

    def quick(n, in_memory=True, platform="cpu"):
        plan = plan_.row_plan(n, 3, SMALL.q, np.float32, chunk_size=2048, platform=platform)
        return spec_.resolve(reg, params, n, 3, np.float32, plan, in_memory).quick_shapes

    assert spec_.QUICK_SHAPES_MAX_ROWS == 4_096
    assert quick(2_000) and quick(2_049) and quick(4_096)
    assert not quick(4_097) and not quick(8_192) and not quick(20_000)
    assert not quick(3_000, in_memory=False)
    # the options were measured on a CPU: an accelerator's plan compiles as usual
    assert not quick(3_000, platform="gpu")


def test_light_compilation_follows_the_compiling_rule():
    """FitSpec.light (the fit's programs compiled without the fusion emitters) holds where
    compiling dominates an in-memory JAX fit on a CPU (scoring.compiling_dominates: the rule
    of the buckets and the kept basis), and nowhere else."""
    params = spec_.check_params({"k": 4})._replace(chunk=2048)
    reg = jaxtree.TreeRegressor(k=4).get_params()
    q = params.basis.q

    def light(n, p=3, in_memory=True, platform="cpu", **hyper):
        plan = plan_.row_plan(n, p, q, np.float32, chunk_size=2048, platform=platform)
        return spec_.resolve(dict(reg, **hyper), params, n, p, np.float32, plan,
                             in_memory).light

    assert light(1_000) and light(20_000, 10)
    assert scoring.compiling_dominates(20_000, 10, q)
    assert not scoring.compiling_dominates(100_000, 10, q) and not light(100_000, 10)
    assert not light(1_000, in_memory=False)
    assert not light(1_000, platform="gpu")
    assert not light(1_000, engine="reference", search="greedy", refine="coordinate")


def _imported_modules(tree) -> dict:
    """Local names bound to jaxtree modules by the file's imports."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("jaxtree"):
                    names[a.asname or a.name.split(".")[0]] = a.name
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("jaxtree"):
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if (PKG.parent / (full.replace(".", "/") + ".py")).exists() or (
                        PKG.parent / full.replace(".", "/")).is_dir():
                    names[a.asname or a.name] = full
    return names


@pytest.mark.parametrize("streamed", [False, True])
def test_a_regressor_fit_plans_once_with_its_encoded_covariates(tmp_path, monkeypatch, streamed):
    """One planning call per fit (spec.planned: the row plan, the bound on k), in memory or
    streamed, made once the encoding is known: a memmap with a column of NaN is planned
    with its indicator covariate, as the same array in memory is."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(300, 3)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] * X[:, 2]).astype(np.float32)
    X[::7, 1] = np.nan
    if streamed:
        mm = np.memmap(tmp_path / "x.dat", dtype=np.float32, mode="w+", shape=X.shape)
        mm[:] = X
        mm.flush()
        X = mm
    calls = []
    real = spec_.planned

    def planned(params, n, p, *args, **kw):
        calls.append((n, p))
        return real(params, n, p, *args, **kw)

    monkeypatch.setattr(spec_, "planned", planned)
    est = jaxtree.TreeRegressor(k=3, search="greedy", shapes=0, random_state=0).fit(X, y)
    assert calls == [(300, 4)]
    assert est.model_.n_features == 4 and "x2 missing" in est.encoded_feature_names_


def test_no_module_uses_another_modules_private_names():
    offences = []
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("jaxtree"):
                offences += [f"{path.name}: from {node.module} import {a.name}" for a in node.names
                             if a.name.startswith("_") and not (
                                 PKG.parent / f"{node.module}.{a.name}".replace(".", "/")).exists()
                             and not (PKG.parent / (f"{node.module}.{a.name}".replace(".", "/")
                                                    + ".py")).exists()]
        modules = _imported_modules(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in modules and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                offences.append(f"{path.name}: {node.value.id}.{node.attr}")
    assert offences == []


def test_the_private_name_check_catches_a_planted_use(tmp_path):
    # the AST rule above on a file that reaches into another module's private helper
    tree = ast.parse("from jaxtree import estimator as E\nE._secret(1)\n")
    modules = _imported_modules(tree)
    hits = [n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name) and n.value.id in modules and n.attr.startswith("_")]
    assert hits == ["_secret"]


def test_both_orders_on_small_in_memory_regressions():
    """FitSpec.both_orders: ``shapes="auto"`` also fits the shapes first on an in-memory
    regression of 20 (held-out rows from AUTO_VALIDATION_MIN_ROWS) to 1,999 rows; never from
    SHAPES_FIRST_MAX_ROWS (2,000), without held-out rows, for shapes=0 or S, streamed rows,
    or the classifier."""
    from jaxtree._fit import classify

    params = spec_.check_params({"k": 4, "basis": SMALL})._replace(chunk=2048)
    reg = jaxtree.TreeRegressor(k=4, basis=SMALL).get_params()

    def at(n, in_memory=True, **kw):
        return spec_.resolve(dict(reg, **kw), params, n, 3, np.float32, None,
                             in_memory).both_orders

    assert spec_.SHAPES_FIRST_MAX_ROWS == spec_.FINE_KNOTS_MIN_ROWS == 2_000
    assert spec_.AUTO_VALIDATION_MIN_ROWS == 20
    assert at(20) and at(99) and at(100) and at(1_999)
    assert not at(19) and not at(2_000) and not at(20_000)
    assert at(100, validation_fraction=0.3)
    assert not at(19, validation_fraction=0.25)  # too few rows, even with held-out rows
    assert not at(500, validation_fraction=None)
    assert not at(500, shapes=0) and not at(500, shapes=3)
    assert not at(500, in_memory=False)
    clf = jaxtree.TreeClassifier(k=4, basis=SMALL, validation_fraction=0.2).get_params()
    assert not classify.classifier_spec(clf, params, 500, 3, np.float32, None,
                                        in_memory=True).both_orders


def _bends(n, seed, truth="bends"):
    """Six covariates; ``bends``: a sum of one bend per covariate (a main shape at the coarse
    knots exactly), ``product``: ``sin(2 pi x0) x1^2 + x2 / 2`` (the tree's form in SMALL's
    basis)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 6))
    if truth == "bends":
        f = sum((j + 1) * np.abs(X[:, j] - 0.5) for j in range(6))
        return X, f + 0.1 * rng.normal(size=n), f
    f = np.sin(2 * np.pi * X[:, 0]) * X[:, 1] ** 2 + 0.5 * X[:, 2]
    return X, f + 0.01 * rng.normal(size=n), f


def _val_at_choice(est):
    """The held-out MSE of a fit's last held-out choice, read from its paths: the shape
    count after the tree, or the tree's size."""
    if est.shape_path_ is not None and est.shape_order_ != "shapes first":
        n = 0 if est.model_.shapes is None else est.model_.shapes.n_terms
        return est.shape_path_[int(n)]["val_mse"]
    return next(r["val_mse"] for r in est.path_ if r["n_ops"] == est.k_)


@pytest.mark.parametrize("truth, seed, kept", [("bends", 1, "shapes first"),
                                              ("product", 0, "tree first")])
def test_the_order_held_out_rows_support_is_kept(monkeypatch, truth, seed, kept):
    """Oracles of the order choice (stages.order_choice) on 200 rows. A sum of bends keeps
    the shapes first and is closer to the truth on fresh rows than the tree-first fit it was
    chosen over (the rule off: SHAPES_FIRST_MAX_ROWS = 0); a product keeps the tree first,
    and that fit is the rule-off fit exactly (fitting the other order leaves no trace), with
    the gate (SHAPES_FIRST_GATE: the terms alone too far behind, no second tree) and without. Each
    order's score is the held-out MSE its own path reports at its choice. A second fit
    compiles nothing. (The bends' tree-first fit takes one shape term after its tree: its
    score is that count's.)"""
    from jaxtree.debug import count_compilations

    X, y, _ = _bends(200, seed, truth)
    Xt, _, ft = _bends(500, 5, truth)
    est = jaxtree.TreeRegressor(k=4, basis=SMALL).fit(X, y)
    with count_compilations() as count:
        again = jaxtree.TreeRegressor(k=4, basis=SMALL).fit(X, y)
    assert count.compiles == 0
    np.testing.assert_array_equal(again.predict(Xt), est.predict(Xt))
    monkeypatch.setattr(spec_, "SHAPES_FIRST_MAX_ROWS", 0)
    off = jaxtree.TreeRegressor(k=4, basis=SMALL).fit(X, y)
    assert off.shape_order_ is None and off.shape_order_scores_ is None
    assert (off.model_.shapes is not None) == (truth == "bends")
    scores = est.shape_order_scores_
    assert est.shape_order_ == kept
    np.testing.assert_allclose(scores["tree first"], _val_at_choice(off), rtol=1e-5)
    if kept == "tree first":
        # The shape terms alone are more than SHAPES_FIRST_GATE times the tree first's
        # held-out MSE: their tree is not searched (no score); with the gate open it is, and
        # held-out rows refuse it. Both fits are the rule-off fit.
        assert np.isnan(scores["shapes first"])
        monkeypatch.setattr(spec_, "SHAPES_FIRST_MAX_ROWS", 2_000)
        monkeypatch.setattr(spec_, "SHAPES_FIRST_GATE", np.inf)
        ungated = jaxtree.TreeRegressor(k=4, basis=SMALL).fit(X, y)
        assert ungated.shape_order_ == "tree first"
        opened = ungated.shape_order_scores_
        assert opened["shapes first"] > opened["tree first"] == scores["tree first"]
        for e in (est, ungated):
            np.testing.assert_array_equal(e.predict(Xt), off.predict(Xt))
            np.testing.assert_array_equal(e.history_, off.history_)
        return
    assert scores["shapes first"] < 0.5 * scores["tree first"]
    np.testing.assert_allclose(scores["shapes first"], _val_at_choice(est), rtol=1e-5)
    assert est.model_.shapes is not None
    assert len(est.history_) == len(est.choices_)
    rmse = lambda e: np.sqrt(np.mean((e.predict(Xt) - ft) ** 2))  # noqa: E731
    assert rmse(est) < 0.6 * rmse(off)
    # A callback that stops at the kept order's first shape term (reported as iteration 0;
    # the tree-first fit's shape terms follow its tree's iterations) ends the fit with the
    # tree-first fit, flagged STOPPED.
    monkeypatch.setattr(spec_, "SHAPES_FIRST_MAX_ROWS", 2_000)

    def stop(it, loss, info):
        return it == 0 and info.get("move") == jaxtree.search.MOVE_SHAPE

    stopped = jaxtree.TreeRegressor(k=4, basis=SMALL, callback=stop).fit(X, y)
    assert stopped.shape_order_ == "tree first"
    assert stopped.status_ & jaxtree.search.Status.STOPPED
    np.testing.assert_array_equal(stopped.predict(Xt), off.predict(Xt))


def _host_models():
    """Fitted models covering each step of a prediction: shape terms (and the same model
    with a pair term added), the log and square target transforms (a smearing factor), a
    binary classifier's decision values, a covariate with missing values (its indicator),
    a prediction bound that binds."""
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(500, 4))
    X[rng.random(500) < 0.1, 3] = np.nan  # missing="indicator": a fifth, indicator covariate
    f = np.sin(3 * X[:, 0]) + 2 * X[:, 1] * X[:, 2] + np.nan_to_num(X[:, 3])
    y = f + 0.05 * rng.normal(size=500)
    fit = dict(k=3, search="greedy", validation_fraction=None)
    models = {
        "shapes": jaxtree.TreeRegressor(shapes=4, **fit).fit(X, y).model_,
        "log": jaxtree.TreeRegressor(target_transform="log", **fit).fit(X, np.exp(y)).model_,
        "square": jaxtree.TreeRegressor(target_transform="square", **fit).fit(
            X, np.sqrt(y - y.min() + 1)).model_,
        "classifier": jaxtree.TreeClassifier(k=3, search="greedy").fit(
            X, (y > np.median(y)).astype(int)).model_,
    }
    models["bound"] = dataclasses.replace(models["shapes"], y_bound=0.05)  # binds on most rows
    m = models["shapes"]  # and a pair term on (x1, x2) after its mains (as test_shapes builds)
    sh, spec = m.shapes, m.shape_spec
    n = min(int(sh.n_terms), spec.max_terms - 1)
    order = np.asarray(sh.order).copy()
    order[n] = m.n_features  # the first pair's term id
    models["pair"] = dataclasses.replace(m, shape_spec=spec._replace(pairs=((0, 1),)), shapes=sh._replace(
        pair=jnp.asarray(rng.normal(size=(1, spec.n2 ** 2)), sh.main.dtype),
        pair_on=jnp.ones(1, bool), order=jnp.asarray(order),
        n_terms=jnp.asarray(n + 1, sh.n_terms.dtype)))
    sq = models["square"]  # shifted so that the fitted y² is negative on half the rows
    fitted_sq = np.asarray(jaxtree.predict(sq, np.c_[X, np.isnan(X[:, 3])]), np.float64) ** 2
    models["square_low"] = dataclasses.replace(sq, y_center=sq.y_center - np.median(fitted_sq))
    assert models["shapes"].shapes is not None and int(models["shapes"].shapes.n_terms) >= 2
    assert models["log"].target_transform == "log" and float(models["log"].smearing) != 1.0
    assert models["square"].target_transform == "square"
    return X, models


@pytest.mark.filterwarnings("ignore::jaxtree.MissingValueWarning")  # NaN given to the model
@pytest.mark.parametrize("clip", [True, False])
def test_host_predictions_equal_the_compiled_prediction_in_float64(clip):
    """``pipeline.host_predictions`` (numpy, what ``predict`` computes for calls of up to
    ``HOST_PREDICT_MAX_ROWS`` rows) equals ``jaxtree.predict`` (compiled) in float64 to
    1e-12 on rows inside and outside the training range and with missing values, with and
    without clipping; a custom basis function is left to the compiled prediction."""
    X, models = _host_models()
    rows = np.r_[X[:100], 1.6 * X[100:200] - 0.3]  # half of them outside the range
    for name, model in models.items():
        enc = np.c_[rows, np.isnan(rows[:, 3])] if model.n_features == 5 else rows
        got = pipeline.host_predictions(model, enc, clip)
        want = np.asarray(jaxtree.predict(model, enc, clip=clip), np.float64)
        assert np.isfinite(want).all() and np.std(want) > 1e-3, name
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max(),
                                   err_msg=name)
        if name == "bound" and clip:  # the bound binds: predictions on it
            edge = np.asarray(model.y_center + model.y_scale * np.array([-1.1, 1.1])
                              * model.y_bound, np.float64)
            assert np.isclose(got[:, None], edge[None, :], rtol=1e-12).any(axis=1).mean() > 0.5
    custom = jaxtree.basis.Basis((jaxtree.basis.CustomFunction("tanh(2{x})",
                                                               lambda v: jnp.tanh(2 * v)),))
    enc = np.c_[X[:3], np.isnan(X[:3, 3])]
    assert models["shapes"].n_features == 5
    assert pipeline.host_predictions(dataclasses.replace(models["shapes"], basis=custom),
                                     enc, clip) is None


def test_small_predictions_compile_nothing_and_larger_ones_the_compiled_program(monkeypatch):
    """An estimator's ``predict`` of at most ``HOST_PREDICT_MAX_ROWS`` rows (1,024: the
    first predict after a small fit) compiles nothing and gives the compiled prediction's
    values to float64 rounding; one more row goes to the compiled program (a regressor, a
    binary classifier, whose probabilities follow its decision values, and a 3-class
    one-versus-rest classifier with shape terms, each class's tree on the host)."""
    rng = np.random.default_rng(6)
    X = rng.uniform(size=(1025, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2]
    est = jaxtree.TreeRegressor(k=2, search="greedy", validation_fraction=None,
                                basis=SMALL).fit(X[:300], y[:300])
    clf = jaxtree.TreeClassifier(k=2, search="greedy", basis=SMALL).fit(
        X[:300], (y[:300] > np.median(y)).astype(int))
    three = jaxtree.TreeClassifier(k=2, search="greedy", basis=SMALL).fit(
        X[:300], np.digitize(y[:300], np.quantile(y, [0.3, 0.7])))
    assert three.model_.shapes is not None
    assert pipeline.HOST_PREDICT_MAX_ROWS == 1024
    for fitted, values in ((est, est.predict), (clf, clf.decision_function),
                           (three, three.decision_function)):
        with count_compilations() as count:
            small = values(X[:1024])
            proba = clf.predict_proba(X[:5]) if fitted is clf else None
        assert count.lowerings == 0, count
        predict = jaxtree.classifier.decision_function if fitted is three else jaxtree.predict
        want = np.asarray(predict(fitted.model_, X), np.float64)
        np.testing.assert_allclose(small, want[:1024], rtol=1e-12, atol=1e-12)
        if proba is not None:
            np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-want[:5])), rtol=1e-9)
        with count_compilations() as count:
            big = values(X)  # 1,025 rows: the compiled prediction
        assert count.lowerings >= 1, count
        np.testing.assert_allclose(big, want, rtol=1e-12, atol=1e-12)
