"""Shape terms for the classifier (issues 26 and 29): ``TreeClassifier(shapes="auto")`` with
the logistic loss (each one-versus-rest tree on its own) fits one- and two-covariate shapes
of the tree's working residual (a Newton step of the log-loss), their count chosen on
held-out rows, then refitted on all rows (:meth:`jaxtree._fit.classify.Labels.backfit`).

Oracles: the recorded training loss is the log-loss of the fitted model's probabilities
(float64, recomputed from ``predict_proba``); the shapes lower the training and the held-out
log-loss below the tree alone's on data whose logit the tree cannot hold in ``k = 1`` (a
working response of the wrong sign, or a no-op refit, fails both); ``shapes=0`` is the tree
alone exactly; each one-versus-rest tree gets the binary fit's terms; the model saves and
loads with its shapes; a second fit compiles nothing. The row threshold (10,000) is lowered
so that the fits are small.
"""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree.debug import count_compilations

K = dict(k=1, search="greedy", validation_fraction=None)  # the large-table default, small


def _data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    # a bump and a checkerboard: local shapes that one tree operation cannot hold
    logit = (5 * np.exp(-((X[:, 0] - 0.5) / 0.1) ** 2) - 2
             + 3 * np.sign((X[:, 1] - 0.5) * (X[:, 2] - 0.5)))
    y = rng.uniform(size=n) < 1 / (1 + np.exp(-logit))
    return X, y


def _log_loss(y, p1):
    p1 = np.clip(np.asarray(p1, np.float64), 1e-15, 1 - 1e-15)
    return float(-np.mean(np.where(y, np.log(p1), np.log1p(-p1))))


@pytest.fixture(scope="module")
def fits():
    X, y = _data(2000, 0)
    with_shapes = jaxtree.TreeClassifier(**K).fit(X, y)
    with count_compilations() as count:
        again = jaxtree.TreeClassifier(**K).fit(X, y)
    tree = jaxtree.TreeClassifier(shapes=0, **K).fit(X, y)
    return X, y, with_shapes, again, count, tree


def test_shapes_are_fitted_and_the_history_is_the_models_log_loss(fits):
    X, y, est, _, _, tree = fits
    assert est.model_.shapes is not None and int(est.model_.shapes.n_terms) >= 1
    assert tree.model_.shapes is None
    # the last recorded training loss is the fitted model's own log-loss (float64)
    assert est.history_[-1] == pytest.approx(_log_loss(y, est.predict_proba(X)[:, 1]), rel=1e-5)
    assert tree.history_[-1] == pytest.approx(_log_loss(y, tree.predict_proba(X)[:, 1]), rel=1e-5)
    # the tree's iterations come first, then one entry per shape term
    n_tree = len(tree.history_)
    np.testing.assert_allclose(est.history_[:n_tree], tree.history_, rtol=1e-12)
    assert len(est.history_) == n_tree + int(est.model_.shapes.n_terms)


def test_max_terms_caps_the_classifiers_shapes(fits):
    """The regressor's cap in the classifier's stage: with room for the one term the
    default takes, the default's model; with none, the tree alone bit for bit (the same
    programs as the fixture's fits: nothing new compiles)."""
    from jaxtree import program as prog

    X, y, est, _, _, tree = fits
    n_tree = prog.n_terms(tree.model_.program)
    assert int(est.model_.shapes.n_terms) == 1  # the held-out rows took one term
    one = jaxtree.TreeClassifier(max_terms=n_tree + 1, **K).fit(X, y)
    np.testing.assert_array_equal(one.predict_proba(X), est.predict_proba(X))
    none = jaxtree.TreeClassifier(max_terms=n_tree, **K).fit(X, y)
    assert none.model_.shapes is None
    np.testing.assert_array_equal(none.predict_proba(X), tree.predict_proba(X))


def test_shapes_lower_the_training_and_held_out_log_loss(fits):
    X, y, est, _, _, tree = fits
    assert est.history_[-1] < 0.9 * tree.history_[-1]
    Xt, yt = _data(3000, 1)
    assert _log_loss(yt, est.predict_proba(Xt)[:, 1]) < 0.9 * _log_loss(yt, tree.predict_proba(Xt)[:, 1])
    assert est.score(Xt, yt) > tree.score(Xt, yt)
    assert "f(x2, x3)" in est.formula() or "f(x1)" in est.formula()


def test_a_second_fit_compiles_nothing_and_is_deterministic(fits):
    X, _, est, again, count, _ = fits
    assert count.lowerings == 0 and count.compiles == 0
    np.testing.assert_array_equal(again.predict_proba(X), est.predict_proba(X))


def test_decision_function_reads_the_pairs_as_data_with_the_static_values(fits):
    """The estimator's decision function (``model.slotted``: the pairs as data) is the model's
    (``jaxtree.classifier.decision_function``: the pairs static) bitwise."""
    X, _, est, _, _, _ = fits
    want = np.asarray(jaxtree.classifier.decision_function(est.model_, X), np.float64)
    np.testing.assert_array_equal(est.decision_function(X), want)


def test_shapes_zero_is_the_tree_alone_and_saves_with_its_shapes(fits, tmp_path):
    X, y, est, _, _, tree = fits
    plain = jaxtree.TreeClassifier(shapes=0, **K).fit(X, y)  # below the threshold anyway
    np.testing.assert_array_equal(plain.predict_proba(X), tree.predict_proba(X))
    est.save(tmp_path / "m.json")
    back = jaxtree.load(tmp_path / "m.json")
    np.testing.assert_array_equal(back.predict_proba(X), est.predict_proba(X))
    assert back.shapes == "auto"


def test_the_margin_loss_gets_no_shapes():
    X, y = _data(300, 2)
    assert jaxtree.TreeClassifier(loss="margin", refine=None, **K).fit(X, y).model_.shapes is None


def test_one_vs_rest_trees_get_the_binary_fits_shapes(tmp_path):
    """More than two classes: each one-versus-rest tree gets the shape stage of the binary
    fit of its class against the rest (jaxtree._fit.stages.shapes_after_each), the terms
    stacked in one spec. Oracles: each class's decision function equals that binary fit's
    (catches terms stacked under the wrong class, a pair renumbered to another, a class's
    stage run on another's labels); the save/load round trip is exact; the callback names
    the class of each shape iteration; the views add up to each class's decision function."""
    # no refinement: the shape stage does not depend on it (each tree's step compiles
    # without L-BFGS, ~9 s less)
    X, _ = _data(600, 2)
    logit = (5 * np.exp(-((X[:, 0] - 0.5) / 0.1) ** 2) - 2
             + 3 * np.sign((X[:, 1] - 0.5) * (X[:, 2] - 0.5)))
    y3 = np.digitize(logit + np.random.default_rng(2).normal(size=600), [-1.5, 1.5])
    seen = []
    ovr = jaxtree.TreeClassifier(refine=None, callback=lambda it, loss, info: seen.append(
        (it, info["class_index"], info["class"])), **K).fit(X, y3)
    n_terms = np.asarray(ovr.model_.shapes.n_terms)
    assert n_terms.shape == (3,) and n_terms.sum() >= 2 and ovr.model_.shape_spec.pairs
    f = ovr.decision_function(X)
    for c in range(3):
        one = jaxtree.TreeClassifier(refine=None, **K).fit(X, y3 == c)
        np.testing.assert_allclose(f[:, c], one.decision_function(X), rtol=1e-5, atol=1e-4)
        assert int(n_terms[c]) == (0 if one.model_.shapes is None
                                   else int(one.model_.shapes.n_terms))
        # the history: the tree's, then one loss per shape term, padded with the last
        own = one.history_
        np.testing.assert_allclose(ovr.history_[c, :len(own)], own, rtol=1e-5)
        assert np.all(ovr.history_[c, len(own):] == own[-1])
    # every shape iteration reported under its class, after the trees' iterations
    shaped = [(it, c) for it, c, label in seen if it >= 2 and label == c]
    assert sorted(c for _, c in shaped) == [c for c in range(3) for _ in range(n_terms[c])]
    # the prediction reads the classes' pairs as data (classify.slotted): the static form's
    # values, and a fit that chose other pairs compiles nothing, fit or prediction
    from jaxtree._fit import classify
    assert classify.slotted(ovr.model_)[1][0] is classify.slotted(ovr.model_)[1][0]  # once
    static = classify.decision_values(ovr.model_, jnp.asarray(X), True)
    np.testing.assert_allclose(np.asarray(static), f, rtol=1e-6, atol=1e-6)
    # the public functional form under jit and grad (JAX users embed the model)
    jitted = jax.jit(jaxtree.classifier.decision_function)(ovr.model_, jnp.asarray(X))
    np.testing.assert_allclose(np.asarray(jitted), f, rtol=1e-6, atol=1e-6)
    g = jax.grad(lambda x: jaxtree.classifier.predict_proba(ovr.model_, x[None])[0, 2])(
        jnp.asarray(X[0] * 0.9 + 0.05))
    assert g.shape == (3,) and np.isfinite(np.asarray(g)).all()
    X2, _ = _data(600, 3)
    y2 = np.digitize(3 * np.sign((X2[:, 0] - 0.5) * (X2[:, 1] - 0.5))
                     + np.random.default_rng(3).normal(size=600), [-1.5, 1.5])
    with count_compilations() as count:
        other = jaxtree.TreeClassifier(refine=None, **K).fit(X2, y2)
        other.decision_function(X2)
    assert other.model_.shape_spec.pairs != ovr.model_.shape_spec.pairs
    assert count.compiles == 0, count
    # a callback that stops at a class's first shape iteration ends the fit there: that
    # class keeps one term, the later classes their trees alone
    first = min(c for it, c, _ in seen if it >= 2)
    stopped = jaxtree.TreeClassifier(refine=None, callback=lambda it, loss, info: it >= 2,
                                     **K).fit(X, y3)
    assert stopped.status_ & jaxtree.search.Status.STOPPED
    kept = np.asarray(stopped.model_.shapes.n_terms)
    assert kept[first] == 1 and kept[first + 1:].sum() == 0 and kept[:first].sum() == 0
    ovr.save(tmp_path / "m.json")
    back = jaxtree.load(tmp_path / "m.json")
    np.testing.assert_array_equal(back.decision_function(X), f)
    assert back.formula() == ovr.formula()
    # a file whose classes' terms are not one per class, or not in one spec, is refused
    d = json.loads((tmp_path / "m.json").read_text())
    del d["checksum"]  # as a file written by hand
    for bad, message in ((d["task"]["shapes"][:2], "one per class"),
                         ([dict(d["task"]["shapes"][0], n1=4)] + d["task"]["shapes"][1:],
                          "shapes main|one spec")):
        (tmp_path / "bad.json").write_text(json.dumps(dict(d, task=dict(d["task"],
                                                                        shapes=bad))))
        with pytest.raises(ValueError, match=message):
            jaxtree.load(tmp_path / "bad.json")
    # the trees' views: one per class, in the order of classes_
    tables = ovr.explain(X[:50])
    assert len(tables) == 3 and len(ovr.to_dot()) == 3
    assert [len(t) for t in ovr.shape_terms()] == n_terms.tolist()
    for c, table in enumerate(tables):  # each class's terms add up to its decision function
        np.testing.assert_allclose(sum(t["values"] for t in table.to_dict("records")),
                                   f[:50, c], rtol=1e-5, atol=1e-5)
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs = ovr.plot_tree()
    assert len(figs) == 3 and "logit P(y = 2)" in figs[2].axes[0].get_title()
    with pytest.raises(ValueError, match="ax draws one tree; this classifier has 3"):
        ovr.plot_tree(ax=figs[0].axes[0])
    ax = ovr.plot_history().axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["0", "1", "2"]
    assert ax.get_ylabel() == "training log-loss"
    plt.close("all")


def test_the_trees_views_read_the_classifiers_shapes(fits):
    """explain, shape_terms and the plots of a two-class classifier with shape terms (the
    regressor's views, in the decision function's units): the terms add up to the decision
    function, one of them a shape term whose values shape_terms lists."""
    X, _, est, _, _, _ = fits
    terms = est.explain(X[:200]).to_dict("records")
    np.testing.assert_allclose(sum(t["values"] for t in terms), est.decision_function(X[:200]),
                               rtol=1e-5, atol=1e-5)
    assert any(t["term"].startswith("f(") for t in terms)
    shapes = est.shape_terms()
    assert len(shapes) == int(est.model_.shapes.n_terms) >= 1
    named = {t["term"] for t in terms}
    assert all(f"f({', '.join(t['features'])})" in named for t in shapes), (shapes, named)
    assert est.to_dot().startswith("digraph")
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    assert "logit P(y = True)" in est.plot_tree().axes[0].get_title()
    assert est.plot_history().axes[0].get_ylabel() == "training log-loss"
    assert len(est.plot_shapes().axes) >= len(shapes)
    plt.close("all")


def test_shapes_values_are_checked():
    X, y = _data(100, 3)
    with pytest.raises(ValueError, match="shapes"):
        jaxtree.TreeClassifier(shapes=3).fit(X, y)


def test_a_shape_term_moves_the_logit_by_more_than_its_box(fits):
    # The checkerboard on (x2, x3) spans 6 logits. The shapes' coefficients live in |b| <= 1
    # (their values at the knots), so the classifier fits them in units of SHAPE_UNIT logits;
    # in logit units (as the model holds them) the pair's shape spans more than the box's
    # width 2. Catches the terms fitted in logit units (range capped at 2; the training
    # log-loss then 0.41 instead of 0.29).
    from jaxtree._fit import classify

    _, _, est, _, _, _ = fits
    sh = est.model_.shapes
    on = np.flatnonzero(np.asarray(sh.pair_on))
    assert len(on) == 1
    pair = np.asarray(sh.pair, np.float64)[on[0]]
    assert np.ptp(pair) > 2.0
    assert np.max(np.abs(pair)) <= classify.SHAPE_UNIT * (1 + 1e-6)


def test_shape_knots_reach_the_classifiers_shapes(fits):
    """``shape_knots`` (the regressor's parameter, on the classifier since the eighty-first
    session) sets the hats of the fitted terms; ``"auto"`` keeps the knots by size, and the
    recorded loss is still the model's own log-loss. A value outside ``[2, 64]`` is refused
    with the parameter's name."""
    X, y, auto, _, _, _ = fits
    est = jaxtree.TreeClassifier(shape_knots=(8, 4), **K).fit(X, y)
    assert est.model_.shapes is not None
    assert (est.model_.shape_spec.n1, est.model_.shape_spec.n2) == (8, 4)
    assert (auto.model_.shape_spec.n1, auto.model_.shape_spec.n2) == (32, 16)
    assert est.history_[-1] == pytest.approx(_log_loss(y, est.predict_proba(X)[:, 1]), rel=1e-5)
    assert not np.allclose(est.decision_function(X), auto.decision_function(X))
    assert est.get_params()["shape_knots"] == (8, 4)
    with pytest.raises(ValueError, match="shape_knots"):
        jaxtree.TreeClassifier(shape_knots=(1, 4)).fit(X, y)
