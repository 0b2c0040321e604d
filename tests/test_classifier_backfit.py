"""The backfit search under a classification loss, and the classifier's regressor-like
defaults (issues 26 and 29).

* float64 oracles of :func:`jaxtree.search._loss_backfit`'s rule: from the same tree the
  backfit step's true loss is never above the greedy step's, its reported loss is
  :func:`jaxtree.losses.mean_loss` of the tree it returns, and the moves do happen;
* the classifier's ``search="auto"`` / ``validation_fraction="auto"`` resolve by the
  regressor's rule (``search_``, ``validation_fraction_``), binary and three classes;
* ``engine="reference"`` refuses ``search="backfit"``; a second fit compiles nothing;
* the one-versus-rest batch makes each binary backfit search's moves, and ``tol`` now
  stops each one-versus-rest tree.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import losses, scoring, search
from jaxtree import program as prog
from jaxtree._fit import classify
from jaxtree._fit import spec as spec_
from jaxtree.debug import count_compilations

BASIS = jaxtree.make_basis(hats=0, sines=2, cosines=2, powers=2, truncated_cubics=0)  # q = 6
# losses.mean_loss called eagerly compiles its scan again on every call (a new closure per
# call: 18 compilations of one program in the test below); jitted once, the same function.
_mean_loss = jax.jit(losses.mean_loss, static_argnums=(2, 3), static_argnames=("report",))


def _xor(n=240, seed=0, noise=0.15):
    """Labels whose factors carry no marginal signal: ``sign((x1 - 1/2)(x2 - 1/2))`` (a pair
    move's case), plus a weak additive term in ``x3``."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    f = np.cos(np.pi * X[:, 0]) * np.cos(np.pi * X[:, 1]) + 0.2 * (X[:, 2] - 0.5)
    y = np.where(f + noise * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _steps(loss, X, y, n_iter=6, k=6):
    """Per iteration of a backfit search in float64: ``(tree, backfit step, greedy step)``
    from the same tree (each step's ``(program, info)``)."""
    data = scoring.chunk(X, y, None, chunk_size=128, dtype=jnp.float64)
    backfit = search.search_config("backfit", k, X.shape[1] * BASIS.q, loss=loss)
    greedy = search.Config(max_k=k, loss=loss)
    tree = prog.empty_program(k, jnp.float64)
    out = []
    for _ in range(n_iter):
        b = search.step_jit(tree, data, BASIS, backfit)
        g = search.step_jit(tree, data, BASIS, greedy)
        out.append((tree, b, g))
        tree = b[0]
    return data, out


# The margin loss in the slow suite (~60 s of compiling): the [logistic] case's oracle on the
# other loss, whose search keeps its float64 reference oracles in test_classifier_reference.py.
@pytest.mark.parametrize("loss", ["logistic", pytest.param("margin", marks=pytest.mark.slow)])
def test_backfit_step_is_never_worse_than_the_greedy_step(x64, loss):
    """Float64 oracle of the rule: from the same tree, the backfit step's true loss (the
    logistic loss; the margin loss's squared hinge, which the search minimises) is at most
    the greedy step's; its reported loss is ``mean_loss(report=True)`` of its program; and
    the pair and replacement moves are taken on this data (the test is not vacuous).
    Catches a pair or replacement kept by its Newton score alone, a refinement skipped, or a
    reported loss that is not the returned tree's."""
    X, y = _xor()
    data, out = _steps(loss, X, y)
    moved = 0
    for tree, (pb, ib), (pg, ig) in out:
        lb = float(_mean_loss(pb, data, BASIS, loss))
        lg = float(_mean_loss(pg, data, BASIS, loss))
        assert lb <= lg * (1 + 1e-10) + 1e-14, (lb, lg)
        reported = float(_mean_loss(pb, data, BASIS, loss, report=True))
        assert float(ib.loss) == pytest.approx(reported, rel=1e-12, abs=1e-15)
        assert int(ib.status) == search.STATUS_OK
        rec = search.host_choice(ib.choice)
        moved += rec["move"] == search.MOVE_PAIR or rec["replaced"] > 0
        if rec["move"] == search.MOVE_PAIR:  # two operations, under the per-operation rule
            assert int(pb.n_slots) == int(tree.n_slots) + 4
            assert rec["feature2"] >= 0 and rec["basis2"] >= 0
        if rec["replaced"] > 0 and rec["move"] != search.MOVE_PAIR:
            # a kept replacement lowered the loss below the refined insertion's
            assert lb < lg
    assert moved >= 1


def test_pair_rule_on_the_true_losses():
    """:func:`jaxtree.search.loss_pair_kept`: gain per operation above the insertion's and
    never above the insertion's loss."""
    kept = lambda before, ins, pair: bool(search.loss_pair_kept(  # noqa: E731
        jnp.float64(before), jnp.float64(ins), jnp.float64(pair)))
    assert kept(1.0, 0.9, 0.7)  # gain 0.3 > 2 * 0.1
    assert not kept(1.0, 0.9, 0.85)  # lower than the insertion, but 0.15 < 2 * 0.1
    assert not kept(1.0, 1.05, 1.06)  # the insertion raised the loss: the pair is worse still
    assert not kept(1.0, 0.9, np.inf)


def test_backfit_history_never_increases(x64):
    """A whole backfit fit (no held-out size, no early stop): the training log-loss never
    increases from one iteration to the next, the tree holds ``k`` operations, and the
    estimator's backfit search makes replacement moves and no pair move
    (:func:`jaxtree._fit.classify.config`: the pair lookahead is the regressor's), on the
    XOR data whose pair the functional step takes (the test above)."""
    X, y = _xor(300, seed=1)
    clf = jaxtree.TreeClassifier(k=6, basis=BASIS, search="backfit", shapes=0,
                                 validation_fraction=None, tol=None).fit(X, y)
    assert clf.search_ == "backfit" and clf.validation_fraction_ is None
    h = clf.history_
    assert np.all(np.diff(h) <= 1e-12 * h[:-1]), h
    assert clf.k_ == 6 and len(h) == 7
    assert not any(c["move"] == search.MOVE_PAIR for c in clf.choices_)
    assert sum(c["replaced"] for c in clf.choices_) > 0  # the backfit moves ran
    cfg = classify.config(clf.get_params(), clf._check_params(), 300, 3, BASIS.q, 2, "backfit")
    assert cfg.pair_leaves == 0 and cfg.replace_moves == search.REPLACE_MOVES


def test_defaults_resolve_like_the_regressor():
    """The classifier's ``search="auto"`` is the regressor's rule (one function,
    :func:`jaxtree._fit.spec.resolve_auto`): backfit and 0.2 held out on small in-memory
    fits, greedy and None on large, streamed, sharded or reference fits; the classifier's
    ``validation_fraction="auto"`` is None everywhere (its trees grow to ``k``), an explicit
    fraction is kept (:func:`jaxtree._fit.classify.classifier_spec`)."""
    q = BASIS.q
    small = spec_.resolve_auto("auto", "auto", 500, 3, q, in_memory=True)
    assert small == ("backfit", spec_.AUTO_VALIDATION)
    assert spec_.resolve_auto("auto", "auto", spec_.AUTO_SMALL_MAX_ROWS, 3, q,
                              in_memory=True) == ("greedy", None)
    assert spec_.resolve_auto("auto", "auto", 500, 3, q, in_memory=False) == ("greedy", None)
    assert spec_.resolve_auto("auto", "auto", 500, 3, q, in_memory=True,
                              engine="reference") == ("greedy", None)
    assert spec_.resolve_auto("greedy", 0.3, 500, 3, q, in_memory=True) == ("greedy", 0.3)
    clf = jaxtree.TreeClassifier()
    assert clf.search == "auto" and clf.validation_fraction == "auto"
    from jaxtree._fit import classify

    for fraction, want in [("auto", None), (0.3, 0.3)]:
        h = dict(clf.get_params(), basis=BASIS, validation_fraction=fraction)
        params, plan = spec_.planned(spec_.check_classifier_params(h), 500, 3, np.float64)
        spec = classify.classifier_spec(h, params, 500, 3, np.float64, plan, in_memory=True)
        assert (spec.search, spec.validation_fraction) == ("backfit", want), fraction


@pytest.mark.slow  # ~40 s: the resolution is test_defaults_resolve_like_the_regressor's, the
# backfit classifier's fits test_backfit_history_never_increases's and
# test_one_vs_rest_batch_makes_the_binary_backfit_moves's, its held-out size test_classifier.py's
def test_binary_and_three_class_fits_with_the_new_defaults():
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(300, 3))
    f = np.sin(3 * X[:, 0]) + X[:, 1] - 0.9
    clf = jaxtree.TreeClassifier(k=4, basis=BASIS).fit(X, f > 0)
    assert clf.search_ == "backfit" and clf.validation_fraction_ is None
    assert clf.path_ is None and 0 <= clf.k_ <= 4
    assert clf.predict_proba(X).shape == (300, 2) and clf.score(X, f > 0) > 0.8
    y3 = np.digitize(f, [-0.3, 0.3])
    clf3 = jaxtree.TreeClassifier(k=4, basis=BASIS, validation_fraction=0.2).fit(X, y3)
    assert clf3.search_ == "backfit" and clf3.validation_fraction_ == 0.2
    assert len(clf3.path_) == 3 and clf3.k_per_class_.shape == (3,)
    assert np.all(clf3.k_per_class_ <= 4)
    assert clf3.history_.shape[0] == 3
    assert clf3.predict_proba(X).shape == (300, 3) and clf3.score(X, y3) > 0.6


def test_reference_engine_refuses_backfit_and_resolves_auto_to_greedy():
    X, y = _xor(80)
    with pytest.raises(ValueError, match="engine='reference'.*search='greedy'"):
        jaxtree.TreeClassifier(k=2, engine="reference", refine="coordinate",
                               search="backfit").fit(X, y)
    with pytest.raises(ValueError, match="Unknown search 'beam'.*'backfit'"):
        jaxtree.TreeClassifier(search="beam").fit(X, y)
    clf = jaxtree.TreeClassifier(k=2, basis=BASIS, engine="reference",
                                 refine="coordinate").fit(X, y)
    assert clf.search_ == "greedy" and clf.validation_fraction_ is None
    assert clf.history_.shape == (3,)


@pytest.mark.slow  # ~12 s; tests/test_first_fit.py::test_classifier_shares_the_step_across_k
# keeps a compile count of the classifier's backfit fits in the default suite
def test_a_second_fit_of_the_same_shapes_compiles_nothing():
    """The backfit classifier with its held-out size (selection run and refit share the
    step; the moves are one compiled step): a second fit, other labels, compiles nothing."""
    X, y = _xor(200, seed=3)
    kw = dict(k=3, basis=BASIS)
    jaxtree.TreeClassifier(**kw).fit(X, y)
    X2, y2 = _xor(200, seed=4)
    with count_compilations() as count:
        est = jaxtree.TreeClassifier(**kw).fit(X2, y2)
    assert count.compiles == 0, count
    assert est.search_ == "backfit"


# ~15 s on CI: test_classifier.py's oracle (each one-versus-rest member is the binary fit of
# its class) on the backfit step.
@pytest.mark.slow
def test_one_vs_rest_batch_makes_the_binary_backfit_moves(x64):
    """Member ``c`` of a three-class backfit fit is the binary backfit fit of ``c`` against
    the rest (the one-versus-rest step with per-tree ``max_ops``; no pair moves, as the
    binary fit makes none)."""
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(240, 3))
    f = np.cos(np.pi * X[:, 0]) * np.cos(np.pi * X[:, 1]) + 0.5 * X[:, 2]
    y3 = np.digitize(f, [-0.1, 0.4])
    kw = dict(k=3, basis=BASIS, search="backfit", validation_fraction=None, tol=None, shapes=0)
    multi = jaxtree.TreeClassifier(**kw).fit(X, y3)
    assert multi.history_.shape[0] == 3
    for c in range(3):
        one = jaxtree.TreeClassifier(**kw).fit(X, y3 == c)
        np.testing.assert_allclose(multi.decision_function(X)[:, c], one.decision_function(X),
                                   rtol=1e-6, atol=1e-6)
        assert [ch["move"] for ch in multi.choices_[c]] == [ch["move"] for ch in one.choices_]


def test_tol_stops_each_one_vs_rest_tree(x64):
    """``tol`` on three classes (the driver's rule per tree): tree ``c`` ends at the first
    iteration ``i`` whose relative decrease ``1 - h[i]/h[i-1]`` of the grown tree's history is
    at most ``tol`` (that move undone: ``i - 1`` operations, ``Status.CONVERGED``) while the
    others go on; its history then repeats its last loss and its choices end there. ``tol``
    is set between the trees' decreases so that some stop and some do not."""
    rng = np.random.default_rng(6)
    X = rng.uniform(size=(240, 2))
    y3 = np.digitize(X[:, 0] + 0.3 * rng.normal(size=240), [0.33, 0.66])
    kw = dict(k=6, basis=BASIS, search="greedy", validation_fraction=None)
    grown = jaxtree.TreeClassifier(tol=None, **kw).fit(X, y3)
    assert np.all(grown.k_per_class_ == 6)
    g = 1 - grown.history_[:, 1:] / grown.history_[:, :-1]  # (3, 6) relative decreases
    tol = float(np.median(g))
    want = [next((i for i in range(1, 7) if g[c, i - 1] <= tol), 7) - 1 for c in range(3)]
    assert min(want) < 6  # some tree stops
    stopped = jaxtree.TreeClassifier(tol=tol, **kw).fit(X, y3)
    assert stopped.status_ & search.Status.CONVERGED
    assert stopped.k_per_class_.tolist() == want
    h = stopped.history_
    for c in range(3):
        k_c = want[c]
        assert len(stopped.choices_[c]) == k_c + 1
        np.testing.assert_allclose(h[c, :k_c + 1], grown.history_[c, :k_c + 1], rtol=1e-10)
        assert np.all(h[c, k_c:] == h[c, k_c])
