"""Safety rails (issue 28): ``k`` bounded by the rows, a warning on very few rows, a memory
budget checked before compiling, the ``tol`` stop with its status, progress bars that end
full, and the message for a text target (jaxtree._fit.limits, jaxtree.search.run)."""

import re
import warnings

import jax
import numpy as np
import pytest

import jaxtree
from jaxtree import basis as B
from jaxtree import search
from jaxtree._fit import limits
from jaxtree._fit.progress import ProgressBar
from jaxtree._inputs import validation as V
from jaxtree.debug import count_compilations

SMALL = B.make_basis(hats=3, sines=2, cosines=2, powers=2, truncated_cubics=0)
N = 60  # rows of the estimator fits below: k <= 60 // 5 = 12 (one compiled capacity, 12)


def _noisy(n=N, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 2.0, size=(n, 2))
    return X, np.sin(2 * X[:, 0]) + 0.3 * X[:, 1] + 0.2 * rng.standard_normal(n)


def _paper(k, **kw):
    """The paper's greedy search grown to k (tol=None), on the small basis."""
    return jaxtree.TreeRegressor.paper(k=k, basis=SMALL, refine="coordinate", **kw)


# ------------------------------------------------------------------ k bounded by the rows


def test_k_above_what_the_rows_support_warns_and_the_fit_uses_the_bound():
    # Catches: the bound not applied (k_ would be 50), the warning missing, or it not saying
    # the bound and why; and a bound that is off by one (k = 12 on 60 rows must not warn).
    X, y = _noisy()
    with pytest.warns(V.DataSizeWarning, match=r"k=50 is more than 60 rows support") as rec:
        big = _paper(50).fit(X, y)
    text = str(rec[0].message)
    assert "k <= n // 5 = 12" in text and "the fit uses k=12" in text and "leaf" in text
    assert rec[0].filename == __file__  # points at the user's fit line
    assert big.k_ == 12 and len(big.history_) == 13  # grown to the bound, not to 50
    assert big.model_.program.capacity == 2 * 12 + 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", V.DataSizeWarning)
        exact = _paper(12).fit(X, y)  # at the bound: no warning, the same fit
    np.testing.assert_array_equal(exact.predict(X), big.predict(X))
    assert big.k == 50  # the hyperparameter is left as given (scikit-learn's rule)


def test_the_bound_admits_the_papers_experiment_and_its_rule_is_rows_over_five():
    # Catches: a rule that would cut the paper's Experiment 1 (k = 10 on 50 rows).
    assert limits.max_k_for_rows(50) == 10 and limits.max_k_for_rows(300) == 60
    assert limits.max_k_for_rows(4) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", V.DataSizeWarning)
        assert limits.check_size(10, 50, 100, 40, np.float32, 2048, "cpu") == 10
    with pytest.warns(V.DataSizeWarning, match="the fit uses k=60"):
        assert limits.check_size(100_000, 300, 2, 40, np.float32, 2048, "cpu") == 60


def test_few_rows_warn_that_the_model_interpolates():
    # Catches: no warning on 3 rows (the issue: an interpolating cos(9π·…) said nothing),
    # and a threshold other than MIN_ROWS = 10.
    # The greedy search without refinement: the rails are planned before any search (the
    # default's backfit step would compile ~10 s for this one-leaf fit).
    X = np.array([[0.0], [0.5], [1.0]])
    with pytest.warns(V.DataSizeWarning) as rec:
        est = jaxtree.TreeRegressor(basis=SMALL, search="greedy", refine=None).fit(
            X, np.array([1.0, 3.0, 2.0]))
    said = [str(r.message) for r in rec]
    assert any("Only 3 rows" in m and "interpolate" in m for m in said), said
    assert est.k_ == 0  # and k is bounded: 3 // 5 = 0 operations, one leaf
    with pytest.warns(V.DataSizeWarning, match="Only 9 rows"):
        limits.check_size(1, 9, 1, 13, np.float64, 2048, "cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error", V.DataSizeWarning)
        limits.check_size(2, 10, 1, 13, np.float64, 2048, "cpu")


def test_few_rows_of_positive_weight_warn_as_few_rows_do():
    # Catches: 60 rows of which 3 are weighted fitting silently (a row of weight 0 is no row
    # of the fit), and messages that change for weights that are all positive. The bound on
    # k counts every row (integer weights equal repeated rows, tests/test_sklearn.py).
    X, y = _noisy(n=N)
    sw = np.zeros(N)
    sw[:3] = 1.0
    with pytest.warns(V.DataSizeWarning) as rec:
        est = _paper(5, validation_fraction=None, y_bound=0.25).fit(X, y, sample_weight=sw)
    said = [str(r.message) for r in rec]
    assert any(f"Only 3 rows of positive sample_weight (of {N})" in m and "interpolate" in m
               for m in said), said
    assert est.k_ == 5
    with pytest.warns(V.DataSizeWarning, match=r"Only 9 rows of positive sample_weight \(of 400\)"):
        assert limits.check_size(50, 400, 1, 13, np.float64, 2048, "cpu", n_weighted=9) == 50
    with warnings.catch_warnings():
        warnings.simplefilter("error", V.DataSizeWarning)
        assert limits.check_size(12, 60, 1, 13, np.float64, 2048, "cpu", n_weighted=60) == 12
        assert limits.check_size(2, 400, 1, 13, np.float64, 2048, "cpu", n_weighted=10) == 2
    with pytest.warns(V.DataSizeWarning, match=r"Only 9 rows: with"):  # all weighted
        limits.check_size(1, 9, 1, 13, np.float64, 2048, "cpu", n_weighted=9)


# ------------------------------------------------------------------------ memory budget


def test_a_fit_over_the_memory_budget_is_refused_before_compiling(monkeypatch):
    # Catches: no refusal (the k = 100000 ran at 4.5 GB), a refusal after compiling
    # (the step would have compiled), and a message without the numbers or the fix.
    X, y = _noisy(n=20_000)
    monkeypatch.setenv(limits.MEMORY_BUDGET_ENV, "50MB")

    def searched(*_):  # a fit that was not refused fails here, after its first step
        raise AssertionError("the search ran: the budget was not checked before compiling")

    with count_compilations() as c:
        with pytest.raises(ValueError) as info:
            _paper(3000, chunk_size=512, callback=searched).fit(X, y)
    assert c.lowerings == 0 and c.compiles == 0
    msg = str(info.value)
    assert "more than the memory budget of 50.0 MB" in msg and "Refused before compiling" in msg
    need = limits.search_bytes(3000, 20_000, 2, SMALL.q, np.float64, 512)
    assert f"about {need / 1e6:.1f} MB" in msg and "chunk_size" in msg
    advised = int(re.search(r"use k <= (\d+)", msg).group(1))
    fits = lambda k: limits.search_bytes(k, 20_000, 2, SMALL.q, np.float64, 512) <= 50e6  # noqa: E731
    assert fits(advised) and not fits(advised + 1)  # the largest k that fits, exactly


def test_the_classifiers_budget_counts_its_one_vs_rest_trees(monkeypatch):
    # K > 2 classes search K one-vs-rest trees at once (batch=K in search_bytes), a binary
    # fit one tree. A budget between one tree's estimate and three trees' refuses the
    # 3-class fit and lets the binary one run. Catches the classifier estimating one tree
    # for any number of classes (the 3-class fit then runs).
    X, y = _noisy()
    dtype = V.float_dtype_for(X, bool(jax.config.jax_enable_x64))
    one = limits.search_bytes(2, N, 2, SMALL.q, dtype, 32)
    assert limits.search_bytes(2, N, 2, SMALL.q, dtype, 32, batch=3) == 3 * one
    monkeypatch.setenv(limits.MEMORY_BUDGET_ENV, str(2 * one))
    # the greedy search (the estimate does not depend on it; its step compiles in half the
    # backfit step's time), shared with test_the_classifier_shares_the_bound below
    kw = dict(k=2, basis=SMALL, refine=None, chunk_size=32, validation_fraction=None,
              search="greedy")
    labels = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))  # 0, 1, 2
    with count_compilations() as c:
        with pytest.raises(ValueError, match="more than the memory budget") as info:
            jaxtree.TreeClassifier(**kw).fit(X, labels)
    assert c.compiles == 0
    assert f"about {_gb_text(3 * one)}" in str(info.value)
    clf = jaxtree.TreeClassifier(**kw).fit(X, labels > 0)  # two classes: one tree, fits
    assert clf.k_ <= 2


def _gb_text(b):
    return f"{b / 1e9:.1f} GB" if b >= 1e9 else f"{b / 1e6:.1f} MB"


def test_search_bytes_grows_with_the_capacity_and_the_step_rows():
    # The measured model: about 32 floats per leaf row and row of a step (k = 1000 on
    # 2,048-row steps, float32: 0.53 GB, measured 0.21-0.46 GB above the process).
    b = limits.search_bytes
    assert b(1000, 4096, 2, 40, np.float32, 2048) == 4 * 1025 * (32 * 2048 + 8 * 80)
    assert b(100, 4096, 2, 40, np.float32, 2048) < b(1000, 4096, 2, 40, np.float32, 2048)
    assert b(1000, 4096, 2, 40, np.float32, 512) < b(1000, 4096, 2, 40, np.float32, 2048)
    assert b(1000, 4096, 2, 40, np.float64, 2048) == 2 * b(1000, 4096, 2, 40, np.float32, 2048)
    assert limits.parse_bytes("2GB") == 2 * 10**9 and limits.parse_bytes("1MiB") == 2**20
    with pytest.raises(ValueError, match="JAXTREE_MEMORY_BUDGET='lots' is not a size"):
        limits.parse_bytes("lots")


# ----------------------------------------------------------------------- the tol stop


def _scripted(losses, status=None):
    """A driver step whose state is the iteration count and whose losses are scripted."""
    import jax.numpy as jnp

    def step(state):
        i = state
        choice = search.Choice(*(np.int32(0),) * 5, np.float64(0), np.float64(0), np.float64(0))
        st = search.STATUS_OK if status is None else status[i]
        return i + 1, search.StepInfo(jnp.asarray(losses[i]), choice, np.int32(st))

    return step


def test_the_driver_stops_when_no_candidate_lowers_the_loss_by_rtol():
    # Catches: no stop, a stop that keeps the useless move (the state must be the one before
    # it), a stop without the CONVERGED status, and one that judges the first leaf.
    losses = [1.0, 0.5, 0.5 * (1 - 1e-8), 0.1]
    res = search.run(_scripted(losses), 0, 4, stop=search.Stop(rtol=1e-6))
    assert res.program == 2 and len(res.history) == 2 and len(res.choices) == 2
    assert res.status == search.Status.CONVERGED and "tol" in search.message(res.status)
    assert search.run(_scripted(losses), 0, 4).program == 4  # no stop: every iteration
    # The floor: once the loss is at most atol the search ends after that iteration.
    res = search.run(_scripted([1.0, 1e-30, 1e-31]), 0, 3, stop=search.Stop(1e-6, 1e-28))
    assert res.program == 2 and len(res.history) == 2 and res.status == search.Status.CONVERGED
    # The last iteration reaching the floor is no early stop; a failed iteration is not judged.
    assert search.run(_scripted([1.0, 1e-30]), 0, 2, stop=search.Stop(1e-6, 1e-28)).status == 0
    flags = [0, search.STATUS_NO_CANDIDATE, 0]
    res = search.run(_scripted([1.0, 1.0, 0.5], flags), 0, 3, stop=search.Stop(1e-6))
    assert res.program == 3 and res.status == search.Status.NO_CANDIDATE


def test_an_exact_fit_stops_at_the_float_floor_and_the_status_says_so(capsys):
    # y = 2 x1 + 1 is one leaf of the basis (x1 itself; weight 0.5 at y_bound 0.25): tol stops
    # after it instead of inserting leaves that lower an exact loss by rounding. Catches: the
    # stop not wired into the estimator (k_ would be 8), the status not set, a bar at 1/9.
    X, _ = _noisy()
    y = 2 * X[:, 0] + 1
    est = _paper(8, tol=1e-6, verbose=1, y_bound=0.25).fit(X, y)
    assert est.k_ == 0 and len(est.history_) == 1
    assert est.status_ & search.Status.CONVERGED
    assert est.score(X, y) > 1 - 1e-12
    counts = re.findall(r"(\d+)/(\d+) \[", capsys.readouterr().err)
    assert counts and counts[-1][0] == counts[-1][1] == "1", counts  # the bar ends full: 1/1
    grown = _paper(8, y_bound=0.25).fit(X, y)  # tol=None (the paper's): grown to k
    assert grown.k_ == 8 and grown.status_ == search.Status.OK


def test_tol_is_checked_and_documented():
    with pytest.raises(ValueError, match=r"tol must be None or a number in \[0, 1\)"):
        jaxtree.TreeRegressor(tol=-1.0).fit(*_noisy())
    assert jaxtree.TreeRegressor().tol == 1e-6 and jaxtree.TreeRegressor.paper().tol is None
    assert jaxtree.TreeClassifier().tol == 1e-6
    stop = search.stop_rule(1e-6, np.float32, 0.25)
    assert stop.rtol == 1e-6 and stop.atol == pytest.approx(16 * 2**-23 * 0.25**2)
    assert search.stop_rule(None, np.float64) is None and search.stop_rule(0, np.float64) is None


# ------------------------------------------------------------------------ progress bars


def test_a_bar_ends_full_when_a_phase_runs_fewer_iterations(capsys):
    # Catches: bars that stop at 11/27 or 1/11 (the total is what ran when a phase ends).
    bar = ProgressBar(10, verbose=1)
    for it in range(3):
        bar.update(it, 1.0 / (it + 1), {})
    bar.phase(5, "refit", done=2)  # the next phase: its own total, the iterations so far
    assert (bar.bar.n, bar.bar.total) == (2, 5)
    bar.update(3, 0.1, {})
    bar.close()
    lines = capsys.readouterr().err.replace("\r", "\n")
    assert "3/3 [" in lines and "jaxtree refit" in lines
    assert re.findall(r"(\d+)/(\d+) \[", lines)[-1] == ("3", "3")


def test_a_bars_move_reads_apart_from_the_loss_and_folds_a_negative_weight(capsys):
    # Catches "mse=0.8482 + 0.158·sin(πx2) at slot 0" (read as the loss equal to a sum) and
    # "+ -0.0021·…" (a plus followed by a negative number).
    from jaxtree import program as prog

    bar = ProgressBar(4, verbose=2, names=("a", "b"), basis=SMALL)
    term = SMALL.render(3, "b")
    for it, (w, op) in enumerate([(0.31, prog.LEAF), (0.158, prog.ADD), (-0.0021, prog.ADD),
                                  (-0.5, prog.MUL)]):
        bar.update(it, 0.8482, {"feature": 1, "basis": 3, "op": op, "weight": w, "slot": 0})
    bar.update(4, 0.5, {})  # no move to show: the loss alone
    bar.close()
    lines = re.findall(r"\[jaxtree\] iteration +\d+  (.*)", capsys.readouterr().err)
    assert lines == [f"mse=0.8482 | leaf 0.31·{term}", f"mse=0.8482 | + 0.158·{term} at slot 0",
                     f"mse=0.8482 | - 0.0021·{term} at slot 0",
                     f"mse=0.8482 | * (-0.5·{term}) at slot 0", "mse=0.5"], lines


# ----------------------------------------------------------------- a text target


@pytest.mark.parametrize("kind", ["series", "array", "list", "numbers_as_text"])
def test_a_text_target_says_it_is_the_target_and_what_to_do(kind):
    # Catches the "column(s) ['None'] are not numeric ... one-hot encode".
    pd = pytest.importorskip("pandas")
    X = np.random.default_rng(0).uniform(size=(30, 2))
    y = {"series": pd.Series(["a", "b", "c"] * 10), "array": np.array(["a", "b"] * 15),
         "list": ["a", "b"] * 15, "numbers_as_text": pd.Series(["1.5", "2"] * 15, name="p")}[kind]
    with pytest.raises(TypeError) as info:
        jaxtree.TreeRegressor().fit(X, y)
    msg = str(info.value)
    assert msg.startswith("The target y must hold numbers") and "TreeClassifier" in msg
    assert "pd.to_numeric" in msg and "None" not in msg and "one-hot" not in msg


# ------------------------------------------------------------------------ classifier


def test_the_classifier_shares_the_bound():
    # The classifier's fit plans its rows through the same rails (jaxtree._fit.spec.planned).
    # The binary fit's settings of test_the_classifiers_budget_counts_its_one_vs_rest_trees
    # (40 and 60 rows are both 2 chunks of 32; k = 8 and 2 one capacity): nothing to compile.
    X, y = _noisy(n=40)
    with pytest.warns(V.DataSizeWarning, match="the fit uses k=8"):
        clf = jaxtree.TreeClassifier(k=30, basis=SMALL, refine=None, chunk_size=32,
                                     validation_fraction=None, search="greedy").fit(
            X, y > np.median(y))
    assert clf.k_ <= 8
