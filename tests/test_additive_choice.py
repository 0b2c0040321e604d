"""The default's cross-validated choice of ``shapes="additive"`` on small tables
(:func:`jaxtree._fit.pipeline.additive_choice`) and its folds (:func:`jaxtree._fit.select.folds`).

Oracles: the folds hold every row of positive weight out exactly once; each setting's
cross-validated MSE equals the one computed here from separate estimators fitted on the same
folds (so a fold misassigned, a weight dropped, or the two settings' scores swapped shows);
the kept fit is the lower score's, and it is the plain fit of that setting (so a choice that
never refits, or refits the other setting, shows); data of the tree's form close the gate
and pay no cross-validation."""

import contextlib
import re
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree._fit import pipeline, select
from jaxtree._fit import spec as spec_
from jaxtree.debug import count_compilations

pytestmark = pytest.mark.additive_choice  # the classifier's choice as users have it (conftest)

SMALL = jaxtree.basis.make_basis(hats=2, sines=2, cosines=0, powers=2, truncated_cubics=0)
FOLDS = spec_.ADDITIVE_CV_FOLDS  # the tests turn the choice off to compute it by hand
SETTINGS = {"default": {}, "additive": {"shapes": "additive"},
            "additive k=0": {"shapes": "additive", "k": 0},
            "additive k=0 all terms": {"shapes": "additive", "k": 0},
            "additive k=0 lines": {"shapes": "additive", "k": 0}}


@contextlib.contextmanager
def _as_chosen(name, fit="fit"):
    """The fits of setting ``name`` as the choice makes them: for a setting of ALL_TERMS the
    additive fit (``additive.fit``, or the classifier's ``fit="fit_logistic"``) keeps every
    covariate's term (no elimination; pipeline.ALL_TERMS), for one of LINES its terms are
    lines (pipeline.LINES), and for one of the classifier's TERMS_ALONE no tree follows
    them (``FitSpec.additive_tree``)."""
    from jaxtree._fit import additive, classify, pipeline

    patched = []
    if name in pipeline.ALL_TERMS | pipeline.LINES:
        extra = {"terms": pipeline.terms_of(name)}
        orig = getattr(additive, fit)
        patched.append((additive, fit, orig))
        setattr(additive, fit, lambda *args, **kw: orig(*args, **{**kw, **extra}))
    if not pipeline.tree_of(name):  # the classifier's terms alone: no tree after them
        table_fit = classify._fit_table
        patched.append((classify, "_fit_table", table_fit))
        classify._fit_table = lambda *args, **kw: table_fit(*args, **{**kw, "tree": False})
    try:
        yield
    finally:
        for module, attr, original in patched:
            setattr(module, attr, original)


def _plain(name, X, y, **kw):
    """The plain estimator of setting ``name`` fitted on ``(X, y)``."""
    with _as_chosen(name):
        return jaxtree.TreeRegressor(**{**kw, **SETTINGS[name]}).fit(X, y)


def _smooth(n, seed, noise):
    """Four covariates, three smooth main effects and one of noise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 4))
    f = np.sin(2 * np.pi * X[:, 0]) + 2 * X[:, 1] ** 2 + np.exp(X[:, 2])
    return X, f + noise * rng.normal(size=n)


def _cv_by_hand(X, y, w, random_state=None, folds=FOLDS):
    """Each setting's cross-validated MSE from separate estimators on select.folds' folds,
    with the choice itself off."""
    sse = {name: 0.0 for name in SETTINGS}
    for train, held in select.folds(len(y), folds, random_state, w):
        for name, kw in SETTINGS.items():
            e = jaxtree.TreeRegressor(**{"k": 4, "basis": SMALL, "random_state": random_state,
                                         **kw})
            with _as_chosen(name):
                e.fit(X[train], y[train], sample_weight=None if w is None else w[train])
            wh = np.ones(len(held)) if w is None else w[held]
            sse[name] += float(np.sum(wh * (e.predict(X[held]) - y[held]) ** 2))
    total = len(y) if w is None else float(np.sum(w))
    return {f"cv {k}": v / total for k, v in sse.items()}


def test_folds_hold_every_weighted_row_out_once():
    w = np.ones(53)
    w[[3, 10, 11]] = 0.0
    for weights in (None, w):
        parts = select.folds(53, 5, 7, weights)
        held = np.concatenate([h for _, h in parts])
        on = np.arange(53) if weights is None else np.flatnonzero(w > 0)
        np.testing.assert_array_equal(np.sort(held), on)  # each such row exactly once
        sizes = [len(h) for _, h in parts]
        assert max(sizes) - min(sizes) <= 1 and len(parts) == 5
        for train, h in parts:
            assert np.all(np.diff(h) > 0) and not np.intersect1d(train, h).size
            assert len(train) + len(h) == 53  # zero-weight rows always train
    again = select.folds(53, 5, 7, w)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(parts, again))
    other = select.folds(53, 5, 8, w)
    assert not all(np.array_equal(a[1], b[1]) for a, b in zip(parts, other))
    with pytest.raises(ValueError, match="at least 10 rows of positive weight; got 9"):
        select.folds(20, 5, 0, np.r_[np.ones(9), np.zeros(11)])


def test_weigh_settings_fits_all_rows_first_and_folds_only_the_settings_within_max_terms(
        monkeypatch, capsys):
    """pipeline.weigh_settings with stand-in fits and losses: every setting but the default
    is fitted on all rows before any fold; one over ``max_terms`` terms (the lowest loss
    here) is never cross-validated nor kept; the rest and the default are fitted once a
    fold; the lowest mean loss wins, ties to the earlier setting (the default first); with
    no setting within ``max_terms`` it returns None; ``verbose`` names the loss."""
    import dataclasses
    from types import SimpleNamespace

    from jaxtree._fit import pipeline

    @dataclasses.dataclass
    class Rows:  # what cross_validated and table_rows read of a table
        x: np.ndarray
        y: np.ndarray
        sample_weight: object = None
        n_weighted: object = None

        @property
        def n(self):
            return len(self.x)

    table = Rows(np.arange(20.0)[:, None], np.arange(20.0))
    terms = {"default": 3, "a": 5, "b": 30, "c": 4}
    level = {"default": 1.0, "a": 0.5, "b": 0.1, "c": 0.5}
    calls = []

    def fit(rows, train, name):
        calls.append((name, None if train is None else len(train)))
        return SimpleNamespace(model=SimpleNamespace(terms=terms[name]), name=name, n=rows.n)

    monkeypatch.setattr(pipeline, "n_terms", lambda model: model.terms)
    parts = select.folds(20, 4, 0)
    losses = lambda cand, held: np.full(len(held), level[cand.name])  # noqa: E731
    best, kept, cv = pipeline.weigh_settings(table, parts, ["default", "a", "b", "c"], fit,
                                             losses, 10, 1, "log-loss")
    assert calls[:3] == [("a", None), ("b", None), ("c", None)]  # all rows, before any fold
    assert sorted(calls[3:]) == sorted([(n, 15) for n in ("default", "a", "c")] * 4)
    assert best == "a" and set(kept) == {"a", "c"} and kept["a"].n == 20
    assert cv == {"cv default": 1.0, "cv a": 0.5, "cv c": 0.5}
    err = capsys.readouterr().err
    assert "weighing a, c against the default by 4-fold cross-validation (12 fits)" in err
    assert "4-fold log-loss default 1, a 0.5, c 0.5: kept a" in err
    level.update(a=1.0, c=1.0)  # a tie with the default: the default
    assert pipeline.weigh_settings(table, parts, ["default", "a", "c"], fit, losses, 10, 0,
                                   "MSE")[0] == "default"
    calls.clear()
    assert pipeline.weigh_settings(table, parts, ["default", "b"], fit, losses, 10, 0,
                                   "MSE") is None
    assert calls == [("b", None)]  # no fold fitted


def _linear(n, seed, noise):
    """Six covariates sharing one factor (correlation about 0.8), a linear truth: few rows
    of it are what a ridge regression predicts best (pipeline.LINES)."""
    rng = np.random.default_rng(seed)
    X = 0.9 * rng.normal(size=(n, 1)) + 0.45 * rng.normal(size=(n, 6))
    return X, X @ np.array([1.0, -0.5, 0.8, 0.3, 0.2, 0.6]) + noise * rng.normal(size=n)


@pytest.mark.parametrize("data, seed, noise, kept", [
    (_smooth, 1, 0.5, "additive"), (_smooth, 0, 0.3, "tree first"),
    (_linear, 0, 1.0, "tree first")])
def test_the_setting_cross_validation_prefers_is_kept(monkeypatch, data, seed, noise, kept):
    """Each setting's score is the one computed by hand from separate fits; the lowest
    setting is kept as its plain fit: here the additive fit with its tree (150 smooth rows),
    the default (less noise), and the lines (60 rows of correlated linear covariates)."""
    n = 60 if data is _linear else 150
    X, y = data(n, seed, noise)
    est = jaxtree.TreeRegressor(k=4, basis=SMALL).fit(X, y)
    scores = est.shape_order_scores_
    # past the gate: the default's shape terms alone near its tree-first fit
    assert scores["shape terms alone"] <= spec_.SHAPES_FIRST_GATE * scores["tree first"]
    monkeypatch.setattr(spec_, "ADDITIVE_CV_FOLDS", 0)
    hand = _cv_by_hand(X, y, None)
    assert {key for key in scores if key.startswith("cv")} == set(hand)  # every setting weighed
    for key in hand:
        np.testing.assert_allclose(scores[key], hand[key], rtol=1e-9)
    names = list(SETTINGS)  # ties go to the earlier setting
    lowest = min(names, key=lambda n: (hand["cv " + n], names.index(n)))
    assert est.shape_order_ == (kept if lowest == "default" else lowest)
    assert (lowest == "additive k=0 lines") == (data is _linear)
    if data is _linear:  # the lines print as coefficients on the covariates
        assert "f(" not in est.formula() and re.search(r"\d·x1 ", est.formula())
    rival = min(hand["cv " + n] for n in names if (n == "default") != (lowest == "default"))
    assert rival / hand["cv " + lowest] - 1 > 0.05  # the default against the rest: no near tie
    plain = _plain(lowest, X, y, k=4, basis=SMALL)
    Xt, _ = data(300, 9, 0.0)
    np.testing.assert_array_equal(est.predict(Xt), plain.predict(Xt))
    assert est.formula() == plain.formula()
    if lowest == "default":  # the default's own order choice and scores, the CV's added
        assert plain.shape_order_ == kept
        own = {k: v for k, v in scores.items() if not k.startswith("cv")}
        assert own.keys() == plain.shape_order_scores_.keys()
        np.testing.assert_array_equal(list(own.values()),
                                      list(plain.shape_order_scores_.values()))


def test_the_lowest_of_three_settings_is_kept(monkeypatch):
    """Three distinct settings: the additive setting's tree grown to ``k`` without held-out
    rows (so that it overfits these 150 noisy rows) against the same with ``k=0`` (the main
    shapes and one leaf) and the default. The lowest cross-validated MSE (``k=0``) is kept,
    and it is that setting's plain fit."""
    from jaxtree._fit import pipeline

    grown = {"additive": {"shapes": "additive", "validation_fraction": None},
             "additive k=0": {"shapes": "additive", "k": 0}}
    monkeypatch.setattr(pipeline, "ADDITIVE_SETTINGS", grown)
    monkeypatch.setattr(sys.modules[__name__], "SETTINGS", {"default": {}, **grown})
    X, y = _smooth(150, 1, 0.5)
    est = jaxtree.TreeRegressor(k=4, basis=SMALL).fit(X, y)
    scores = est.shape_order_scores_
    monkeypatch.setattr(spec_, "ADDITIVE_CV_FOLDS", 0)
    hand = _cv_by_hand(X, y, None)
    for key in hand:
        np.testing.assert_allclose(scores[key], hand[key], rtol=1e-9)
    assert hand["cv additive k=0"] < 0.95 * min(hand["cv additive"], hand["cv default"])
    assert est.shape_order_ == "additive k=0"
    plain = jaxtree.TreeRegressor(basis=SMALL, shapes="additive", k=0).fit(X, y)
    np.testing.assert_array_equal(est.predict(X), plain.predict(X))
    assert est.k_ == 0 and est.formula() == plain.formula()


def test_the_k0_setting_shares_the_default_step(monkeypatch):
    """``k = 10`` compiles its step in capacity 12, ``k = 0`` alone in capacity 8: the
    choice fits its ``k=0`` setting in the default's capacity (``FitSpec.bucket_k``), so once
    the default's and the additive setting's programs exist the whole choice compiles
    nothing, and the kept ``k=0`` fit is the plain one: the same formula and predictions,
    its tree cut back to one slot (it holds no rows out, pipeline.additive_setting: no size
    path) where the plain fit's held-out path keeps three."""
    from jaxtree._fit import pipeline

    grown = {"additive": {"shapes": "additive", "validation_fraction": None},
             "additive k=0": {"shapes": "additive", "k": 0}}
    monkeypatch.setattr(pipeline, "ADDITIVE_SETTINGS", grown)
    X, y = _smooth(150, 1, 0.5)
    with monkeypatch.context() as m:  # the default's and the grown setting's programs
        m.setattr(spec_, "ADDITIVE_CV_FOLDS", 0)
        for rows in (slice(None), slice(120)):  # all rows, and a fold's training part
            jaxtree.TreeRegressor(basis=SMALL).fit(X[rows], y[rows])
        jaxtree.TreeRegressor(basis=SMALL, **grown["additive"]).fit(X, y)
    with count_compilations() as count:
        est = jaxtree.TreeRegressor(basis=SMALL).fit(X, y)
    assert est.shape_order_ == "additive k=0"
    assert count.compiles == 0 and count.lowerings == 0
    plain = jaxtree.TreeRegressor(basis=SMALL, shapes="additive", k=0).fit(X, y)
    assert est.k_ == 0 and est.model_.program.capacity == 1
    assert plain.model_.program.capacity == 3 and plain.path_ is not None
    assert est.formula() == plain.formula()
    np.testing.assert_allclose(est.predict(X), plain.predict(X), rtol=1e-6)


def test_additive_cv_sets_the_folds_or_turns_the_choice_off(monkeypatch):
    """``additive_cv=3``: the scores of three folds (by hand, the choice off); ``0``: the
    default's own fit, no folds (equal to the fit with the choice switched off)."""
    X, y = _smooth(150, 1, 0.5)
    three = jaxtree.TreeRegressor(k=4, basis=SMALL, additive_cv=3).fit(X, y)
    none = jaxtree.TreeRegressor(k=4, basis=SMALL, additive_cv=0).fit(X, y)
    monkeypatch.setattr(spec_, "ADDITIVE_CV_FOLDS", 0)
    hand = _cv_by_hand(X, y, None, folds=3)
    for key in hand:
        np.testing.assert_allclose(three.shape_order_scores_[key], hand[key], rtol=1e-9)
    plain = jaxtree.TreeRegressor(k=4, basis=SMALL).fit(X, y)
    assert not any(k.startswith("cv") for k in none.shape_order_scores_)
    assert none.shape_order_ == plain.shape_order_ in ("tree first", "shapes first")
    np.testing.assert_array_equal(none.predict(X), plain.predict(X))


@pytest.mark.parametrize("value", [1, -2, 2.0, True, "5", None])
def test_additive_cv_refuses_other_values(value):
    X, y = _smooth(60, 0, 0.1)
    for est in (jaxtree.TreeRegressor(additive_cv=value), jaxtree.TreeClassifier(additive_cv=value)):
        with pytest.raises(ValueError, match="additive_cv must be 'auto', 0 .* at least 2; got"):
            est.fit(X, y if isinstance(est, jaxtree.TreeRegressor) else (y > 1).astype(int))


def test_weights_count_in_the_folds_and_the_scores(monkeypatch):
    X, y = _smooth(150, 1, 0.5)
    w = np.random.default_rng(3).uniform(0.5, 2.0, 150)
    w[:7] = 0.0
    est = jaxtree.TreeRegressor(k=4, basis=SMALL, random_state=4).fit(X, y, sample_weight=w)
    assert "cv default" in est.shape_order_scores_
    monkeypatch.setattr(spec_, "ADDITIVE_CV_FOLDS", 0)
    hand = _cv_by_hand(X, y, w, random_state=4)
    for key in hand:
        np.testing.assert_allclose(est.shape_order_scores_[key], hand[key], rtol=1e-9)


def test_data_of_the_tree_form_close_the_gate(monkeypatch):
    """The paper's kind of data (a product): the shape terms alone are far behind the tree
    first, so nothing is cross-validated and the fit is the one without the choice."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(200, 6))
    y = np.sin(2 * np.pi * X[:, 0]) * X[:, 1] ** 2 + 0.5 * X[:, 2] + 0.01 * rng.normal(size=200)
    est = jaxtree.TreeRegressor(k=4, basis=SMALL).fit(X, y)
    scores = est.shape_order_scores_
    assert est.shape_order_ == "tree first" and "cv default" not in scores
    assert scores["shape terms alone"] > spec_.SHAPES_FIRST_GATE * scores["tree first"]
    monkeypatch.setattr(spec_, "ADDITIVE_CV_FOLDS", 0)
    off = jaxtree.TreeRegressor(k=4, basis=SMALL).fit(X, y)
    np.testing.assert_array_equal(est.predict(X), off.predict(X))
    assert off.shape_order_scores_.keys() == scores.keys()
    np.testing.assert_array_equal(list(off.shape_order_scores_.values()), list(scores.values()))
    # with the gate open the choice runs and keeps the tree's fit here
    monkeypatch.setattr(spec_, "ADDITIVE_CV_FOLDS", FOLDS)
    monkeypatch.setattr(spec_, "SHAPES_FIRST_GATE", np.inf)
    opened = jaxtree.TreeRegressor(k=4, basis=SMALL).fit(X, y)
    assert opened.shape_order_ == "tree first"
    assert opened.shape_order_scores_["cv default"] < opened.shape_order_scores_["cv additive"]


def test_no_choice_where_the_default_chose_no_order():
    """Above SHAPES_FIRST_MAX_ROWS, without held-out rows, or with shapes given, the fit has
    no order choice and no cross-validation."""
    X, y = _smooth(150, 1, 0.5)
    for kw in ({"validation_fraction": None}, {"shapes": 2}, {"shapes": "additive"}):
        e = jaxtree.TreeRegressor(k=4, basis=SMALL, **kw).fit(X, y)
        assert e.shape_order_ is None and e.shape_order_scores_ is None


def test_an_additive_fit_of_more_terms_than_max_terms_is_not_kept():
    """The GCV fit keeps up to ``max_terms`` main shapes and its tree adds terms on top: the
    choice keeps it only within ``max_terms`` in all (the default's bound), and past it fits
    no folds. Six smooth main effects: cross-validation prefers the additive fit of 7 terms,
    kept at ``max_terms=7``; at 6 the ``"additive"`` setting (7 terms here) is not
    cross-validated, while the ``k=0`` settings keep ``max_terms - 1`` shapes (their one
    leaf is the last term) and are."""
    from jaxtree._fit import pipeline

    rng = np.random.default_rng(2)
    X = rng.uniform(size=(150, 6))
    y = (np.sin(2 * np.pi * X[:, 0]) + 2 * X[:, 1] ** 2 + np.exp(X[:, 2])
         + 3 * np.abs(X[:, 3] - 0.5) + np.cos(3 * X[:, 4]) + X[:, 5]
         + 0.5 * rng.normal(size=150))
    fits = {m: jaxtree.TreeRegressor(k=4, basis=SMALL, max_terms=m).fit(X, y) for m in (6, 7)}
    for m, est in fits.items():
        scores = est.shape_order_scores_
        alone = jaxtree.TreeRegressor(k=4, basis=SMALL, max_terms=m, shapes="additive").fit(X, y)
        assert pipeline.n_terms(alone.model_) == 7
        assert (est.shape_order_ == "additive") == (m == 7)
        assert pipeline.n_terms(est.model_) <= m
        assert ("cv additive" in scores) == (m == 7)
        assert "cv additive k=0" in scores and "cv additive k=0 lines" in scores
    assert fits[7].shape_order_scores_["cv additive"] < fits[7].shape_order_scores_["cv default"]
    # a plain k=0 fit keeps max_terms - 1 shapes: its one leaf is the last term of the bound
    k0 = jaxtree.TreeRegressor(k=0, basis=SMALL, max_terms=6, shapes="additive").fit(X, y)
    assert int(np.asarray(k0.model_.shapes.n_terms)) == 5 and pipeline.n_terms(k0.model_) == 6


# ------------------------------------------------------------------------- the classifier


def _labels(n, seed, truth):
    """Binary labels of a smooth additive logit (``"smooth"``) or of a product
    (``"product"``: the tree's form)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 4))
    if truth == "smooth":
        logit = 2 * (np.sin(2 * np.pi * X[:, 0]) + 2 * (X[:, 1] - 0.5)
                     + 1.5 * np.abs(X[:, 2] - 0.5) + 0.8 * np.cos(5 * X[:, 3]))
    else:
        logit = 12 * (X[:, 0] - 0.5) * (X[:, 1] - 0.5) * 4
    return X, (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int)


def _classifier_settings(wide=False):
    """The classifier's choice's settings: the default and classify.ADDITIVE_CHOICES (of more
    covariates than max_terms, ``wide``: classify.WIDE_CHOICES)."""
    from jaxtree._fit import classify, pipeline

    names = classify.WIDE_CHOICES if wide else classify.ADDITIVE_CHOICES
    return {"default": {}, **{name: pipeline.TERMS_ALONE[name] for name in names}}


def _plain_classifier(name, X, y, **kw):
    """The plain classifier of setting ``name`` fitted on ``(X, y)``, the choice off."""
    with _as_chosen(name, "fit_logistic"):
        setting = {"default": {}, **pipeline.TERMS_ALONE}[name]
        return jaxtree.TreeClassifier(additive_cv=0, **{**kw, **setting}).fit(X, y)


def _cv_by_hand_classifier(X, y, w=None, wide=False, **extra):
    """Each setting's cross-validated log-loss from separate classifiers (the choice off) on
    select.folds' stratified folds; ``extra``: more parameters of every classifier."""
    settings = _classifier_settings(wide)
    loss = dict.fromkeys(settings, 0.0)
    for train, held in select.folds(len(y), FOLDS, None, w, strata=y):
        for name, kw in settings.items():
            e = jaxtree.TreeClassifier(**{"k": 4, "basis": SMALL, "additive_cv": 0, **extra,
                                          **kw})
            with _as_chosen(name, "fit_logistic"):
                e.fit(X[train], y[train], sample_weight=None if w is None else w[train])
            f = e.decision_function(X[held])
            wh = np.ones(len(held)) if w is None else w[held]
            loss[name] += float(np.sum(wh * np.logaddexp(0.0, -np.where(y[held] == 1, f, -f))))
    total = len(y) if w is None else float(np.sum(w))
    return {f"cv {k}": v / total for k, v in loss.items()}


def test_stratified_folds_keep_each_class_in_every_training_part():
    y = np.r_[np.zeros(40, int), np.ones(13, int)]
    parts = select.folds(53, 5, 0, strata=y)
    held = np.concatenate([h for _, h in parts])
    np.testing.assert_array_equal(np.sort(held), np.arange(53))
    assert max(len(h) for _, h in parts) - min(len(h) for _, h in parts) <= 1
    for train, h in parts:
        assert sorted(np.bincount(y[h], minlength=2)) in ([2, 8], [3, 8])
        assert set(y[train]) == {0, 1}
    with pytest.raises(ValueError, match="at least 10 rows of positive weight of each label; "
                                         "got 9"):
        select.folds(50, 5, 0, strata=np.r_[np.zeros(41, int), np.ones(9, int)])


@pytest.mark.parametrize("truth, seed", [("smooth", 1), ("product", 0)])
def test_the_binary_classifier_keeps_the_setting_cross_validation_prefers(truth, seed):
    """Each setting's score equals the one from separate classifiers on the same folds (held-out
    rows and no zero offset or row bucket there: the choice's shared steps change nothing);
    the lowest is kept (an additive setting on smooth additive logits, the default on a
    product), and the kept fit is that setting's plain fit, the default's to the bit."""
    X, y = _labels(300, seed, truth)
    est = jaxtree.TreeClassifier(k=4, basis=SMALL).fit(X, y)
    scores = est.shape_order_scores_
    hand = _cv_by_hand_classifier(X, y)
    assert scores.keys() == hand.keys() and len(hand) == 3
    for key in hand:
        np.testing.assert_allclose(scores[key], hand[key], rtol=1e-9)
    best = min(hand, key=hand.get)[len("cv "):]
    assert (best != "default") == (truth == "smooth")
    others = [v for key, v in hand.items() if key != f"cv {best}"]
    assert min(others) / hand[f"cv {best}"] - 1 > 1e-3  # not a tie
    if truth == "smooth":  # the additive settings' own difference is not what this checks
        assert hand["cv default"] / hand[f"cv {best}"] - 1 > 0.05
    assert est.shape_order_ == ("tree first" if best == "default" else best)
    plain = _plain_classifier(best, X, y, k=4, basis=SMALL)
    Xt, _ = _labels(200, 9, truth)
    np.testing.assert_array_equal(est.decision_function(Xt), plain.decision_function(Xt))
    assert plain.shape_order_ is None


def test_the_classifiers_settings_differ_and_the_all_terms_one_keeps_every_covariate():
    """Smooth logits of two covariates and two of noise: the terms setting's elimination
    drops noise terms that the all-terms setting keeps, so the two scores differ (a choice
    that fitted both alike, or ignored the switch, fails here)."""
    from jaxtree._fit import classify, pipeline

    assert set(classify.ADDITIVE_CHOICES) == {"additive terms", "all additive terms"}
    X, y = _labels(300, 1, "smooth")
    X[:, 2:] = np.random.default_rng(5).uniform(size=(300, 2))
    elim = _plain_classifier("additive terms", X, y, k=4, basis=SMALL)
    every = _plain_classifier("all additive terms", X, y, k=4, basis=SMALL)
    assert np.asarray(every.model_.shapes.n_terms) == 4
    assert np.asarray(elim.model_.shapes.n_terms) < 4
    est = jaxtree.TreeClassifier(k=4, basis=SMALL).fit(X, y)
    s = est.shape_order_scores_
    assert s["cv additive terms"] != s["cv all additive terms"]
    assert "all additive terms" in pipeline.ALL_TERMS


def test_the_classifiers_choice_compiles_no_step_of_its_own():
    """Once the default's own programs exist (its fit with the choice off), its fit with the
    whole choice compiles nothing: the folds chunk their rows as the table (``bucket_rows``:
    240 training rows would chunk in 256, the table's 300 in 512) and the additive settings
    search no tree (``TERMS_ALONE``; until the eightieth session their leaf's search ran
    on the additive fit's offset, and the default's search carried an offset of zeros to
    share those programs). The kept fit is the plain one of its setting, an empty tree."""
    X, y = _labels(300, 1, "smooth")
    jaxtree.TreeClassifier(basis=SMALL, additive_cv=0).fit(X, y)
    with count_compilations() as count:
        est = jaxtree.TreeClassifier(basis=SMALL).fit(X, y)
    assert est.shape_order_ in ("additive terms", "all additive terms")
    assert count.compiles == 0 and count.lowerings == 0
    plain = _plain_classifier(est.shape_order_, X, y, basis=SMALL)
    assert est.k_ == plain.k_ == 0 and est.formula() == plain.formula()
    np.testing.assert_allclose(est.decision_function(X), plain.decision_function(X),
                               rtol=1e-6, atol=1e-6)


def test_the_classifier_asks_for_the_choice_with_additive_cv(monkeypatch, capfd):
    """``"auto"`` runs the twin (classify.ADDITIVE_CV, on), saying with ``verbose`` what it
    weighs and keeps; ``additive_cv=5`` runs it with the switch off (the same scores and
    fit); ``additive_cv=0`` turns it off, as the switch off does."""
    from jaxtree._fit import classify

    X, y = _labels(300, 1, "smooth")
    on = jaxtree.TreeClassifier(k=4, basis=SMALL, verbose=1).fit(X, y)
    err = capfd.readouterr().err
    assert ("weighing additive terms, all additive terms against the default by 5-fold "
            "cross-validation (15 fits)") in err
    said = re.search(r"5-fold log-loss default (\S+), additive terms (\S+), all additive "
                     r"terms (\S+): kept (.+)\n", err)
    assert said and said.group(4) == on.shape_order_, err
    scores = on.shape_order_scores_
    np.testing.assert_allclose([float(v) for v in said.groups()[:3]],
                               [scores["cv default"], scores["cv additive terms"],
                                scores["cv all additive terms"]], rtol=1e-3)
    zero = jaxtree.TreeClassifier(k=4, basis=SMALL, additive_cv=0).fit(X, y)
    monkeypatch.setattr(classify, "ADDITIVE_CV", False)
    asked = jaxtree.TreeClassifier(k=4, basis=SMALL, additive_cv=5).fit(X, y)
    off = jaxtree.TreeClassifier(k=4, basis=SMALL).fit(X, y)
    assert asked.shape_order_ == on.shape_order_ and on.shape_order_ != "tree first"
    assert asked.shape_order_scores_ == on.shape_order_scores_
    np.testing.assert_array_equal(asked.decision_function(X), on.decision_function(X))
    for e in (zero, off):
        assert e.shape_order_ is None and e.shape_order_scores_ is None
    np.testing.assert_array_equal(zero.decision_function(X), off.decision_function(X))


def test_the_classifier_choice_runs_only_on_small_binary_logistic_fits():
    """On by default (classify.ADDITIVE_CV; the tests above see it run), only on two classes,
    the logistic loss, shapes="auto" and 100-1,999 rows; of more covariates than
    ``max_terms`` it weighs the lines instead (classify.WIDE_CHOICES)."""
    from jaxtree._fit import classify

    assert classify.ADDITIVE_CV is True  # the library's default (this module's marker)
    X, y = _labels(300, 1, "smooth")
    three = np.where(X[:, 3] > 0.66, 2, y)
    for e in (jaxtree.TreeClassifier(k=4, basis=SMALL, loss="margin").fit(X, y),
              jaxtree.TreeClassifier(k=4, basis=SMALL, shapes=0).fit(X, y),
              jaxtree.TreeClassifier(k=4, basis=SMALL).fit(X[:90], y[:90]),
              jaxtree.TreeClassifier(k=3, basis=SMALL).fit(X, three)):
        assert e.shape_order_ is None and e.shape_order_scores_ is None
    # four covariates, two of them noise: at max_terms=4 the shapes' settings are weighed,
    # at max_terms=3 (fewer than the covariates) the lines instead
    X[:, 2:] = np.random.default_rng(5).uniform(size=(300, 2))
    every = jaxtree.TreeClassifier(k=4, basis=SMALL, max_terms=4).fit(X, y)
    assert set(every.shape_order_scores_) == {"cv default", "cv additive terms",
                                              "cv all additive terms"}
    wide = jaxtree.TreeClassifier(k=4, basis=SMALL, max_terms=3).fit(X, y)
    assert set(wide.shape_order_scores_) == {"cv default", "cv additive lines"}


def test_a_wide_tables_choice_weighs_the_lines_of_largest_variance():
    """Of more covariates than ``max_terms``, the classifier's choice weighs the lines alone
    (classify.WIDE_CHOICES), each score the one of separate classifiers on the same folds;
    on logits linear in four covariates it keeps them: ``max_terms`` lines and no leaf
    (pipeline.TERMS_ALONE), those of the covariates of largest effect, the plain lines fit's
    decision function. Before the seventy-ninth session no choice ran here, and a ``k=0``
    fit of ``max_terms`` terms and a leaf was over the bound."""
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(400, 5))
    logit = 5 * X[:, 0] - 4 * X[:, 1] + 3 * X[:, 2] + 0.3 * X[:, 3] - 0.1 * X[:, 4] - 1.5
    y = (rng.uniform(size=400) < 1 / (1 + np.exp(-logit))).astype(int)
    est = jaxtree.TreeClassifier(k=4, basis=SMALL, max_terms=4).fit(X, y)
    hand = _cv_by_hand_classifier(X, y, wide=True, max_terms=4)
    assert est.shape_order_scores_.keys() == hand.keys() == {"cv default",
                                                            "cv additive lines"}
    for key in hand:
        np.testing.assert_allclose(est.shape_order_scores_[key], hand[key], rtol=1e-9)
    assert est.shape_order_ == "additive lines" == min(hand, key=hand.get)[len("cv "):]
    assert sorted(np.asarray(est.model_.shapes.order).tolist()) == [0, 1, 2, 3]
    assert pipeline.n_terms(est.model_) == 4 and est.k_ == 0
    plain = _plain_classifier("additive lines", X, y, k=4, basis=SMALL, max_terms=4)
    np.testing.assert_array_equal(est.decision_function(X), plain.decision_function(X))


@pytest.mark.parametrize("name", ["additive terms", "all additive terms", "additive lines"])
def test_the_classifiers_settings_are_the_additive_fit_alone(name):
    """A setting of pipeline.TERMS_ALONE (the classifier's choice) is the penalised logistic
    fit of its terms and nothing else: its decision function on the training rows is
    ``additive.fit_logistic``'s logits (its own oracle, float64, on the model's scaled
    rows), its tree is empty (no leaf, ``k_ = 0``), its formula names the terms alone and
    its history is their training log-loss. A setting that kept the leaf, searched a tree
    after the terms or dropped the terms fails here."""
    from jaxtree._fit import additive

    X, y = _labels(300, 1, "smooth")
    est = _plain_classifier(name, X, y, k=4, basis=SMALL)
    assert est.k_ == 0 and int(est.model_.program.n_slots) == 0
    xs = np.clip((X - np.asarray(est.model_.x_min)) * np.asarray(est.model_.x_scale), 0, 1)
    gam = additive.fit_logistic(xs, y, np.ones(len(y)), (), 20, additive.ADDITIVE_KNOTS[0],
                                np.float64, terms=pipeline.terms_of(name))
    f = est.decision_function(X)
    np.testing.assert_allclose(f, gam.values, rtol=2e-4, atol=2e-4)
    loss = np.mean(np.logaddexp(0.0, -np.where(y == 1, gam.values, -gam.values)))
    np.testing.assert_allclose(est.history_, [loss], rtol=1e-4)
    formula = est.formula()
    assert formula.count("f(x") + formula.count("·x") == int(est.model_.shapes.n_terms) >= 2
    assert "sin" not in formula and "cos" not in formula and "hat" not in formula


def test_a_classifier_of_additive_terms_alone_saves_loads_and_differentiates(tmp_path):
    """The additive terms alone (an empty tree, TERMS_ALONE) are a whole model: saved and
    loaded it gives the same decision function, and ``jaxtree.predict`` of its model is the
    decision function under ``jit``, ``vmap`` and ``grad`` (a finite-difference check)."""
    X, y = _labels(300, 1, "smooth")
    est = _plain_classifier("additive terms", X, y, k=4, basis=SMALL)
    assert est.k_ == 0
    path = tmp_path / "terms.json"
    est.save(path)
    back = jaxtree.load(path)
    np.testing.assert_array_equal(back.decision_function(X[:20]), est.decision_function(X[:20]))
    f = jax.jit(lambda x: jaxtree.predict(est.model_, x))
    np.testing.assert_allclose(f(X[:20]), est.decision_function(X[:20]), rtol=1e-5, atol=1e-5)
    one = lambda r: jaxtree.predict(est.model_, r[None])[0]  # noqa: E731
    np.testing.assert_allclose(jax.vmap(one)(jnp.asarray(X[:5])), f(X[:5]), rtol=1e-6)
    x0, h = np.array([0.31, 0.62, 0.43, 0.23]), 1e-3  # between the hats' knots
    g = np.asarray(jax.grad(one)(jnp.asarray(x0)))
    fd = [(float(one(jnp.asarray(x0 + h * e))) - float(one(jnp.asarray(x0 - h * e)))) / (2 * h)
          for e in np.eye(4)]
    np.testing.assert_allclose(g, fd, rtol=2e-2, atol=2e-2)


def test_a_classifier_fit_its_callback_stopped_runs_no_folds():
    """A callback that stops the classifier's fit ends it: no cross-validation (the same
    fit unstopped runs it)."""
    X, y = _labels(300, 1, "smooth")
    stopped = jaxtree.TreeClassifier(k=4, basis=SMALL,
                                     callback=lambda it, loss, info: it == 1).fit(X, y)
    assert stopped.status_ & jaxtree.search.Status.STOPPED
    assert stopped.shape_order_ is None
    assert jaxtree.TreeClassifier(k=4, basis=SMALL).fit(X, y).shape_order_ is not None


def test_a_fit_its_callback_stopped_runs_no_folds():
    """A callback that stops the fit (here at the kept order's first shape term, after the
    order choice ran) ends it: no cross-validation, no more fits."""
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(200, 6))
    y = sum((j + 1) * np.abs(X[:, j] - 0.5) for j in range(6)) + 0.1 * rng.normal(size=200)

    def stop(it, loss, info):
        return it == 0 and info.get("move") == jaxtree.search.MOVE_SHAPE

    full = jaxtree.TreeRegressor(k=4, basis=SMALL).fit(X, y)
    assert full.shape_order_ == "shapes first" and "cv default" in full.shape_order_scores_
    stopped = jaxtree.TreeRegressor(k=4, basis=SMALL, callback=stop).fit(X, y)
    assert stopped.status_ & jaxtree.search.Status.STOPPED
    assert "cv default" not in stopped.shape_order_scores_
