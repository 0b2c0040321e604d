"""One notation everywhere (issue 28 item 2): ``formula()``, ``path_``, ``explain()``, the
plots' titles and ``jaxtree show`` name the same terms, in original units, indicators as plain
coefficients (``3·[c = red]``), the target by its own name; classifiers say what their
formula is (``logit P(y = a) = ...``)."""

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

import jaxtree
from jaxtree import _drawing, _formula, _target, cli, export
from jaxtree._inputs import encoding as _encoding

pd = pytest.importorskip("pandas")


def split_terms(formula: str) -> set:
    """The terms of a printed formula: its right-hand side cut at the ``+``/``-`` outside
    parentheses, each with its sign (``-2.04·cos(π·t/9.97)``); the constant left out."""
    rhs = formula.split(" = ", 1)[1]
    out, depth, start = [], 0, 0
    for i, ch in enumerate(rhs):
        depth += (ch in "([") - (ch in ")]")
        if depth == 0 and rhs[i:i + 3] in (" + ", " - "):
            out.append(rhs[start:i])
            start = i + 1
    out.append(rhs[start:])
    terms = {t.replace("+ ", "", 1) if t.startswith("+ ") else t.replace("- ", "-", 1)
             for t in (s.strip() for s in out)}
    return {t for t in terms if not re.fullmatch(r"-?[\d.e+-]+", t)}


def title_terms(fig) -> set:
    """The terms named by ``plot_terms``' panel titles (wrapped lines joined, share dropped)."""
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    return {re.sub(r"\s+\(\d+%\)$", "", t).replace("\n", " ") for t in titles}


def _table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"c": pd.Categorical(rng.choice(["red", "blue", "green"], n)),
                       "t": rng.uniform(0.0, 10.0, n)})
    y = pd.Series(3.0 * (df.c == "red") + 0.5 * df.t, name="ozone")
    return df, y


@pytest.fixture(scope="module")
def table_model():
    """A table with a categorical and a numeric column, noise-free ``3·[c = red] + 0.5·t``,
    the target a Series named ``ozone``; the greedy search with its held-out size path (the
    notation does not depend on the search; the greedy step compiles in half the time of the
    default's backfit step)."""
    df, y = _table()
    est = jaxtree.TreeRegressor(k=3, search="greedy").fit(df, y)
    return est, df, y


@pytest.fixture(scope="module")
def shapes_model():
    """Shape terms (``shapes=2``) before a small tree, numeric columns, held-out path. Seven
    columns (the last four unused by ``y``): ``binary_shapes_model``'s 300 rows of 7
    encoded covariates and settings, so the two fits share every compiled program."""
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(300, 7))
    y = np.sin(2 * np.pi * X[:, 0]) + 4 * (X[:, 1] - 0.5) ** 2 + 0.5 * X[:, 2]
    est = jaxtree.TreeRegressor(k=1, shapes=2, shape_knots=(6, 4), search="greedy",
                                validation_fraction=0.2).fit(X, y)
    assert int(est.model_.shapes.n_terms) == 2
    return est, X, y


def _show_terms(est, frame, tmp_path, capsys) -> tuple:
    """``jaxtree show model --data rows.csv``: (its formula line, the terms it lists)."""
    model, data = tmp_path / "m.json", tmp_path / "rows.csv"
    est.save(model)
    frame.to_csv(data, index=False)
    capsys.readouterr()
    assert cli.main(["show", str(model), "--data", str(data)]) == 0
    out = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(out) if "share of the explained variance" in line)
    listed = []
    for line in out[at + 1:]:
        m = re.match(r"\s+[\d.]+%\s+\S+\s+(.*)$", line)
        if not m:
            break
        listed.append(m.group(1))
    return out[0], set(listed)


@pytest.mark.parametrize("which", ["table", "shapes"])
def test_every_view_names_the_terms_of_formula(which, table_model, shapes_model, tmp_path,
                                               capsys):
    """The target test: formula(), explain(), plot_terms' titles and ``jaxtree show`` carry
    the same set of terms; path_'s last row carries the terms its own model's views carry.
    Catches any view left on the scaled notation (``hat(c=red; 1 ± 0.11)``, ``-0.965·sin(2πx)``,
    ``1·Temp²``), a truncated title, a missing or extra term."""
    est, X, _ = table_model if which == "table" else shapes_model
    formula = est.formula()
    terms = split_terms(formula)
    assert terms, formula
    table = est.explain(X)
    assert isinstance(table, pd.DataFrame) and table["term"].iloc[-1] == "constant"
    assert set(table["term"].iloc[:-1]) == terms
    assert title_terms(est.plot_terms(X, max_terms=50)) == terms
    plt.close("all")
    frame = X if which == "table" else pd.DataFrame(
        X, columns=[f"x{j + 1}" for j in range(X.shape[1])])
    first, listed = _show_terms(est, frame, tmp_path, capsys)
    assert first == formula and listed == terms
    # path_: every row in the estimator's notation; the last row's formula names the terms
    # its model's explain names (the final model is a refit on all rows: other numbers).
    row = est.path_[-1]
    xe = _encoding.transform(est.encoding_, X) if which == "table" else X
    labels = _formula.indicator_labels(est.encoding_)
    own = export.term_values(row["model"], np.asarray(xe, np.float64), indicators=labels)
    assert split_terms(row["formula"]) == {t["term"] for t in own[:-1]}
    assert all(r["formula"].startswith(f"{est.target_name_} = ") for r in est.path_)
    if which == "table":
        assert est.target_name_ == "ozone" and formula.startswith("ozone = ")
        for text in [formula, row["formula"], *terms]:
            assert "hat(" not in text and "c=" not in text, text
    else:
        assert sum(t.startswith("f(") for t in terms) == 2


def test_indicator_reads_as_a_plain_coefficient_and_is_drawn_as_two_bars(table_model):
    """``3·[c = red]``: the coefficient is the effect of the level (predict at red minus at
    another level, t fixed), and its panel is two bars (0 and 1), not a line from 0 to 1."""
    est, df, _ = table_model
    table = est.explain(df)
    red = [t for t in table["term"] if "[c = red]" in t]
    assert len(red) == 1, list(table["term"])
    coef = float(re.match(r"(-?[\d.]+)·\[c = red\]$", red[0]).group(1))
    pair = pd.DataFrame({"c": pd.Categorical(["red", "blue"], categories=df.c.cat.categories),
                         "t": [5.0, 5.0]})
    effect = float(np.diff(est.predict(pair))[0])
    assert abs(coef - 3.0) < 0.01 and abs(-effect - coef) < 0.01 * 3, (coef, effect)
    fig = est.plot_terms(df)
    ax = next(a for a in fig.axes if "[c = red]" in a.get_title())
    assert len(ax.patches) == 2 and not any(len(line.get_xdata()) > 2 for line in ax.lines)
    heights = sorted(p.get_height() for p in ax.patches)
    # the bars differ by the exact coefficient, the printed one rounded within tol (1e-3 of
    # the half-range, about 4 here)
    assert abs((heights[1] - heights[0]) - coef) < 5e-3, (heights, coef)
    plt.close("all")


@pytest.fixture(scope="module")
def wide_model():
    """The paper's greedy tree (k = 7, the default basis: hats, sines, cosines, powers, cubics)
    on covariates far from [0, 1], so every leaf's label carries a shift and a scale."""
    rng = np.random.default_rng(4)
    lo, hi = np.array([10.0, -4.0, 0.0, 5.0]), np.array([20.0, 0.0, 1.0, 6.0])
    X = rng.uniform(lo, hi, size=(200, 4))
    u = (X - lo) / (hi - lo)
    y = np.sin(3 * np.pi * u[:, 0]) * np.cos(2 * np.pi * u[:, 1]) + u[:, 2] ** 2 - u[:, 3]
    return jaxtree.TreeRegressor.paper(k=7).fit(X, y), X


def test_plot_tree_labels_in_formula_notation_never_overlap(table_model, wide_model):
    """Leaves read as the formula reads them (``[c = red]``, ``t`` in its units) and no two
    labels overlap, in the figure plot_tree sizes and in a small fixed Axes (font shrunk,
    leaves staggered). Catches the scaled labels (``hat(c=red; 1)``) and overlapping boxes."""
    for est in (table_model[0], wide_model[0]):
        for small in (False, True):
            fig = est.plot_tree(ax=plt.subplots(figsize=(5, 2.5))[1] if small else None)
            texts = [t for a in fig.axes for t in a.texts]
            assert len(texts) == 2 * est.k_ + 1
            assert _drawing.text_overlaps(fig, texts) == []
            plt.close("all")
    fig = table_model[0].plot_tree()
    labels = " ".join(t.get_text() for t in fig.axes[0].texts)
    assert "[c = red]" in labels and "hat(c=" not in labels and "c=red" not in labels
    assert fig.axes[0].get_title().startswith("ozone = ")
    plt.close("all")


def _as_numpy(text: str) -> str:
    """A leaf label of the formula's notation as a numpy expression (pos, hat defined below)."""
    text = re.sub(r"hat\(([^;]+); (\S+) ± ([^)]+)\)", r"hat(\1, \2, \3)", text)
    text = re.sub(r"\(([^()]*)\)₊³", r"pos(\1)**3", text)
    text = re.sub(r"(\d)π", r"\1*pi", text).replace("π", "pi")
    return text.replace("·", "*").replace("²", "**2").replace("³", "**3")


def test_leaf_labels_evaluate_to_the_leaves(wide_model):
    """Each label of plot_tree is its leaf ``w phi(u_j)`` in x's units (every family of the
    default basis, shifted and scaled covariates): evaluated at x it equals the leaf's value
    on the scaled covariate. A wrong shift, scale or family name fails."""
    from jaxtree import program as prog

    est, X = wide_model
    texts = _formula.leaf_texts(est.model_, digits=12)
    u = (X - np.asarray(est.model_.x_min)) * np.asarray(est.model_.x_scale)
    leaf = np.asarray(prog.leaf_values(est.model_.program, u, est.model_.basis))
    env = {"pi": np.pi, "sin": np.sin, "cos": np.cos, "pos": lambda v: np.maximum(v, 0.0),
           "hat": lambda x, k, h: np.maximum(1 - np.abs(x - k) / h, 0.0),
           **{f"x{j + 1}": X[:, j] for j in range(X.shape[1])}}
    assert len(texts) == est.k_ + 1
    for slot, text in texts.items():
        got = eval(_as_numpy(text), env)  # noqa: S307 - our own label
        np.testing.assert_allclose(got, leaf[slot], rtol=1e-8, atol=1e-8, err_msg=text)


def test_target_name_from_series_saved_and_never_a_covariate(table_model, tmp_path):
    est, df, y = table_model
    assert est.target_name_ == "ozone"
    est.save(tmp_path / "m.json")
    again = jaxtree.load(tmp_path / "m.json")
    assert again.target_name_ == "ozone" and again.formula() == est.formula()
    assert est.to_latex().startswith("\\mathrm{ozone} = ")
    # a covariate called y (the diamonds table): the target is y_, named or not. Four
    # columns of 300 rows: table_model's encoded shapes, so these fits compile nothing new.
    X = pd.DataFrame({"x": df.t, "y": np.cos(df.t), "u": np.sin(df.t), "v": df.t ** 0.5})
    for target in (pd.Series(df.t ** 2, name="y"), (df.t ** 2).to_numpy()):
        e = jaxtree.TreeRegressor(k=1, search="greedy", validation_fraction=None).fit(X, target)
        assert e.target_name_ == "y_" and e.formula().startswith("y_ = "), e.formula()
    # no name and no covariate y: y
    e = jaxtree.TreeRegressor(k=1, search="greedy", validation_fraction=None).fit(
        X.to_numpy(), (df.t ** 2).to_numpy())
    assert e.target_name_ == "y" and e.formula().startswith("y = ")


def test_display_name_rule():
    assert _target.display_name(None, ["a"]) == "y"
    assert _target.display_name("  ", ["a"]) == "y"
    assert _target.display_name("price", ["y"]) == "price"
    assert _target.display_name("y", ["y", "y_"]) == "y__"
    assert _target.display_name("x", ["c=x", "x"]) == "x_"
    assert _target.name_of(pd.Series([1.0], name="mpg")) == "mpg"
    assert _target.name_of(pd.Series([1.0])) is None and _target.name_of(np.ones(2)) is None


def test_cli_names_the_target_by_its_column(tmp_path, capsys):
    rng = np.random.default_rng(3)
    x = rng.uniform(size=(300, 4))  # table_model's encoded shapes: nothing new to compile
    data = tmp_path / "d.csv"
    pd.DataFrame({"temp": x[:, 0], "a": x[:, 1], "b": x[:, 2], "c": x[:, 3],
                  "ozone": 2 * x[:, 0] + 1}).to_csv(data, index=False)
    model = tmp_path / "m.json"
    assert cli.main(["fit", str(data), "--target", "ozone", "--out", str(model), "--k", "1",
                     "--search", "greedy", "--quiet"]) == 0
    assert capsys.readouterr().out.startswith("ozone = ")
    assert cli.main(["show", str(model)]) == 0
    assert capsys.readouterr().out.startswith("ozone = ")


@pytest.fixture(scope="module")
def labels_data():
    rng = np.random.default_rng(5)
    df, _ = _table(240, 5)
    score = df.t + 4 * (df.c == "red") + rng.normal(size=len(df))
    return df, score


def test_binary_classifier_says_logit_of_the_second_class(labels_data, tmp_path):
    df, score = labels_data
    y = pd.Series(np.where(score > 6, "yes", "no"), name="buy")
    # the greedy search: the notation does not depend on it, and it compiles faster
    clf = jaxtree.TreeClassifier(k=2, search="greedy").fit(df, y)
    text = clf.formula()
    assert isinstance(text, str) and text.startswith("logit P(buy = yes) = "), text
    assert "[c = red]" in text or "c" not in clf.encoded_feature_names_[0]
    assert clf.to_latex().startswith("\\operatorname{logit} P(\\mathrm{buy} = \\text{yes}) = ")
    clf.save(tmp_path / "c.json")
    assert jaxtree.load(tmp_path / "c.json").formula() == text
    margin = jaxtree.TreeClassifier(k=1, loss="margin", search="greedy").fit(df, y)
    assert margin.formula().startswith("margin(buy = yes) = ")


def test_three_classes_give_one_labelled_line_each(labels_data):
    df, score = labels_data
    y = np.digitize(score, [4, 8])  # 0, 1, 2; a numpy array: the target is y
    clf = jaxtree.TreeClassifier(k=1, search="greedy", validation_fraction=0.2).fit(df, y)
    lines = clf.formula()
    assert [line.split(" = ", 2)[:2] for line in lines] == [
        ["logit P(y", f"{c})"] for c in clf.classes_]
    for c, rows in enumerate(clf.path_):  # path_: one path per class, labelled the same
        assert all(r["formula"].startswith(f"logit P(y = {clf.classes_[c]}) = ") for r in rows)


@pytest.fixture(scope="module")
def binary_shapes_model():
    """Shape terms on two-valued columns only: noise-free ``1 + 3·[c = red] - 1.5·b`` (``c``
    a category, ``b`` a numeric 0/1 column), ``shapes=2`` forcing one main shape on each,
    then a small tree; held-out path. ``c`` has six levels, more than the ``n1 - 1 = 5`` a
    group term holds at ``shape_knots=(6, 4)``, so each level stays a covariate of its own
    (a category with fewer is one group term ``f(c)``: tests/test_groups.py). Its shapes
    (300 rows, 7 covariates) and settings are ``shapes_model``'s: one set of compiled
    programs for both."""
    rng = np.random.default_rng(7)
    n = 300
    levels = ["red", "blue", "green", "amber", "black", "white"]
    df = pd.DataFrame({"c": pd.Categorical(rng.choice(levels, n)),
                       "b": rng.integers(0, 2, n).astype(float)})
    y = pd.Series(1.0 + 3.0 * (df.c == "red") - 1.5 * df.b, name="ozone")
    est = jaxtree.TreeRegressor(k=1, shapes=2, shape_knots=(6, 4), search="greedy",
                                validation_fraction=0.2, random_state=0).fit(df, y)
    assert int(est.model_.shapes.n_terms) == 2
    return est, df, y


def test_shape_on_a_two_valued_column_prints_as_a_coefficient(binary_shapes_model, tmp_path,
                                                              capsys):
    """Issue 28: ``f(c=red)`` (a 0/1 level) and ``f(b)`` (a 0/1 column) print as ``3·[c = red]``
    and ``-1.5·b``, every view names those terms, and the printed formula (to_sympy of the
    same rounded structure) is ``predict`` within tol of the half-range: the shapes' values
    at the lower level are folded into the constant (dropping that fold fails here)."""
    est, df, y = binary_shapes_model
    formula = est.formula()
    terms = split_terms(formula)
    assert "3·[c = red]" in terms and "-1.5·b" in terms, formula
    assert not any(t.startswith("f(") for t in terms), formula
    table = est.explain(df)
    assert set(table["term"].iloc[:-1]) == terms
    assert title_terms(est.plot_terms(df, max_terms=50)) == terms
    plt.close("all")
    first, listed = _show_terms(est, df, tmp_path, capsys)
    assert first == formula and listed == terms
    row = est.path_[-1]
    assert not any(t.startswith("f(") for t in split_terms(row["formula"])), row["formula"]
    sp = pytest.importorskip("sympy")
    tol = 1e-3
    expr = est.to_sympy(tol=tol)
    xe = np.asarray(_encoding.transform(est.encoding_, df), np.float64)
    f = sp.lambdify([sp.Symbol(n, real=True) for n in est.model_.feature_names], expr, "numpy")
    err = np.max(np.abs(f(*xe.T) - est.predict(df)))
    half = 0.5 * (y.max() - y.min())
    assert err <= tol * half, (err / half, formula)


def test_a_main_shape_within_tol_of_a_line_prints_as_the_line():
    """A straight effect fitted by a shape term prints as the line, ``0.3 + 0.8·x1`` (not
    ``f(x1)``, which a reader cannot evaluate), where the shape's knots are within a quarter
    of ``tol`` of their least-squares line; the printed formula is ``predict`` within tol of
    the half-range (a line with the wrong slope or without its shift in the constant fails
    here: the covariate's range starts at 2). A curve stays ``f(x1)``, and so does the near
    line with fixed ``digits`` (only exact lines fold there)."""
    rng = np.random.default_rng(4)
    X = rng.uniform(size=(300, 2))
    X[:, 0] = 2.0 + 3.0 * X[:, 0]
    a = X[:, 0]
    fits = {}
    for curve in (1e-6, 0.01):
        y = 0.3 + 0.8 * a + curve * (a - 2.0) ** 2
        fits[curve] = est = jaxtree.TreeRegressor(
            k=1, shapes=1, shape_knots=(6, 4), search="greedy",
            validation_fraction=None).fit(X, y)
        assert len(est.shape_terms()) == 1
        assert "f(x1)" in est.formula(digits=3)
    assert "f(x1)" in fits[0.01].formula(), fits[0.01].formula()
    est = fits[1e-6]
    # the tree's one leaf fits float32 noise (about 1e-4): which one is not the point
    assert est.formula().startswith("y = 0.3 + 0.8·x1"), est.formula()
    sp = pytest.importorskip("sympy")
    tol = 1e-3  # the default, where it folds (a finer tol keeps f(x1))
    f = sp.lambdify([sp.Symbol(n, real=True) for n in est.model_.feature_names],
                    est.to_sympy(tol=tol), "numpy")
    err = np.max(np.abs(f(*X.T) - est.predict(X)))
    assert err <= tol * 0.5 * np.ptp(est.predict(X)), (err, est.formula(tol=tol))


def test_a_name_of_several_words_or_symbols_prints_in_backticks():
    """``price ($)`` prints as ```price ($)``` (as R quotes such a name): unquoted, ``0.5·price
    ($)`` read as a product with ``($)``. One-word names (``Solar.R``, ``dep_time``) print as
    they are; every view lists the same terms; the sympy expression keeps the names as they
    are (its symbols are ``feature_names``) and is ``predict`` within tol."""
    rng = np.random.default_rng(7)
    df = pd.DataFrame({"price ($)": rng.uniform(0, 10, 200), "Solar.R": rng.uniform(0, 1, 200),
                       "dep time": rng.uniform(0, 1, 200)})
    y = 0.5 * df["price ($)"] + np.sin(3 * df["Solar.R"]) + 2.0 * df["dep time"] ** 2
    est = jaxtree.TreeRegressor(k=4, shapes=0, search="greedy", validation_fraction=None,
                                random_state=0).fit(df, y)
    formula = est.formula()
    assert "`price ($)`" in formula and "Solar.R" in formula, formula
    assert "`Solar.R`" not in formula, formula
    for name in ("price ($)", "dep time"):  # every occurrence quoted
        assert formula.count(name) == formula.count(f"`{name}`") > 0, formula
    terms = split_terms(formula)
    assert set(est.explain(df)["term"].iloc[:-1]) == terms
    sp = pytest.importorskip("sympy")
    tol = 1e-3
    f = sp.lambdify([sp.Symbol(n, real=True) for n in est.model_.feature_names],
                    est.to_sympy(tol=tol), "numpy")
    err = np.max(np.abs(f(*df.to_numpy().T) - est.predict(df)))
    assert err <= tol * 0.5 * float(y.max() - y.min()), (err, formula)
