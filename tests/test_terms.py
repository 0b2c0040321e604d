"""The per-term view (issue 12 item 5): the model as a sum of top-level terms."""

import numpy as np
import pytest

import jaxtree
from jaxtree import basis as B
from jaxtree import program as prog

from _shared import GREEDY


def _planted(n=800, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    # a large term in x1, a small product of x2 and x3: shares far apart
    y = 2.0 * np.sin(np.pi * X[:, 0]) + 0.3 * X[:, 1] * X[:, 2] + 0.01 * rng.normal(size=n)
    return X, y


def test_terms_sum_to_the_prediction_and_rank_by_share():
    X, y = _planted()
    basis = B.make_basis(hats=0, sines=2, cosines=0, powers=2, truncated_cubics=0)
    # the paper's y_bound = 1: the box |w| <= 1 then forces sin(pi x1) twice (merged below)
    est = jaxtree.TreeRegressor(k=2, basis=basis, y_bound=1.0, **GREEDY).fit(X, y)
    table = est.explain(X)  # a DataFrame, one row per term, the constant last
    assert list(table.columns) == ["term", "features", "share", "mean_abs", "values"]
    terms = table.to_dict("records")
    assert terms[-1]["term"] == "constant"
    total = terms[-1]["values"] + sum(t["values"] for t in terms[:-1])
    np.testing.assert_allclose(total, est.predict(X), rtol=1e-5, atol=1e-5)
    shares = [t["share"] for t in terms[:-1]]
    assert shares == sorted(shares, reverse=True) and abs(sum(shares) - 1) < 1e-9
    assert terms[0]["features"] == ["x1"] and terms[0]["share"] > 0.9  # equal leaves merged
    assert [t["features"] for t in terms[:-1]].count(["x1"]) == 1
    for t in terms[:-1]:
        assert abs(t["values"].mean()) < 1e-9 * (1 + np.abs(t["values"]).max())
        np.testing.assert_allclose(t["mean_abs"], np.mean(np.abs(t["values"])))
    # here the tree is a + chain of leaves: the x1 leaves (twice sin(pi x1): the box |w| <= 1
    # forces it) are one term whose weight is their sum
    a = prog.to_numpy(est.model_.program)
    on_x1 = (a["op"] == prog.LEAF) & (a["feature"] == 0)
    assert on_x1.sum() == 2 and len(set(a["basis"][on_x1])) == 1
    w = float(a["weight"][on_x1].sum())
    # named as the formula names it, in x1's units, y's scale folded into its coefficient;
    # x1's range is [0, 1] (uniform draws rounded out), so the argument is x1 itself
    text = terms[0]["term"]
    assert text in est.formula() and "sin(πx1)" in text, (text, est.formula())
    coef = float(text.split("·")[0])
    assert abs(coef - w * float(est.model_.y_scale)) < 1e-3 * abs(coef), (coef, w)


# ~16-19 s (a shapes fit of its own) for assertions other fast tests hold on shapes models:
# the terms' values sum to predict (test_group_exports.py::test_terms_and_explain_read_the_
# groups_columns: numeric and group main shapes and pairs, tree leaves), one plot_terms panel
# per term (test_notation.py::test_every_view_names_the_terms_of_formula[shapes]: the titles
# are the explained terms; test_group_exports.py::test_plots_draw_groups_by_level).
@pytest.mark.slow
def test_terms_of_a_shapes_model_and_plot():
    X, y = _planted(600, 1)
    X = np.c_[X, np.random.default_rng(9).uniform(size=len(X))]  # test_shapes' estimator shape
    est = jaxtree.TreeRegressor(k=1, shape_knots=(6, 4), **dict(GREEDY, shapes=3)).fit(X, y)
    terms = est.explain(X).to_dict("records")
    names = [t["term"] for t in terms]
    assert sum(n.startswith("f(") for n in names) == 3
    total = terms[-1]["values"] + sum(t["values"] for t in terms[:-1])
    np.testing.assert_allclose(total, est.predict(X), rtol=1e-4, atol=1e-4)
    fig = est.plot_terms(X)
    assert len([ax for ax in fig.axes if ax.get_title()]) == len(terms) - 1


def test_terms_errors():
    # the first test's data and settings (k=1 shares k=2's compiled step)
    X, y = _planted()
    basis = B.make_basis(hats=0, sines=2, cosines=0, powers=2, truncated_cubics=0)
    est = jaxtree.TreeRegressor(k=1, basis=basis, y_bound=1.0, **GREEDY).fit(X, y)
    with pytest.raises(ValueError, match="shape"):
        jaxtree.export.term_values(est.model_, X[:, :2])
