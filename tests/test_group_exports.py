"""Every consumer of shape terms on a categorical *group* term (``f(color)``, one value per
level; :mod:`jaxtree.shapes`, "categorical groups"): the model file, the sympy/LaTeX/callable
exports, the shape tables, the per-term view, the plots and ``jaxtree show``.

One small fit, shared: ``y = sin(2a) + eff[c] + 0.3·b·[d = Y]`` with ``c`` six levels and
``d`` three plus a few missing values (a ``d missing`` level), ``shapes=4``: the terms
``f(c)`` (a group's main shape), ``f(a)``, ``f(b, d)`` and ``f(a, c)`` (pairs with a group
axis). The oracles read the level order off the truth (``T`` has the largest effect, ``R``
the smallest; ``b``'s slope is in ``d = Y`` only), so a table or export one level off fails.
"""

import copy
import dataclasses
import json

import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

import jaxtree
from jaxtree import cli
from jaxtree import export as export_
from jaxtree import model as model_
from jaxtree import program as prog
from jaxtree import shapes as shapes_
from jaxtree import _formula

from _shared import lambdify

LEVELS = list("PQRSTU")
EFF = dict(zip(LEVELS, [0.0, 1.0, -1.0, 0.5, 2.0, -0.7]))


def _table(n, seed=0):
    rng = np.random.default_rng(seed)
    d = rng.choice(list("XYZ"), n).astype(object)
    d[rng.uniform(size=n) < 0.03] = np.nan  # a "d missing" covariate: a fourth level
    df = pd.DataFrame({"a": rng.uniform(-1, 1, n), "b": rng.uniform(-1, 1, n),
                       "c": pd.Categorical(rng.choice(LEVELS, n), categories=LEVELS),
                       "d": pd.Categorical(d, categories=list("XYZ"))})
    y = (np.sin(2 * df.a.to_numpy()) + df.c.map(EFF).astype(float).to_numpy()
         + 0.3 * df.b.to_numpy() * (df.d == "Y").to_numpy() + 0.05 * rng.normal(size=n))
    return df, y


@pytest.fixture(scope="module")
def fitted():
    # the tree is one leaf (k=0): the greedy step and no refinement of its weight (the
    # cheapest tree programs to compile) change nothing the consumers read
    df, y = _table(1500)
    est = jaxtree.TreeRegressor(shapes=4, k=0, validation_fraction=None, search="greedy",
                                refine=None).fit(df, y)
    spec = est.model_.shape_spec
    # the fit this module is about: two groups, a group's main term, pairs with group axes
    assert [g[0] for g in spec.groups] == ["c", "d"], spec.groups
    names = shapes_.term_names(est.model_.shapes, spec, est.model_.feature_names)
    assert sorted(names) == ["f(a)", "f(a, c)", "f(b, d)", "f(c)"], names
    return est, df, y


def _rows(df):
    """Every level of ``c`` and ``d`` (and ``d`` missing), then rows whose ``c`` or ``d`` is
    a level unseen in training (no level set: the group's knot 0)."""
    out = pd.concat([df.iloc[:40], df.iloc[:3]], ignore_index=True)
    c, d = np.array(out.c, object), np.array(out.d, object)
    c[-3:], d[-3:] = ["Z", "P", "Z"], ["X", "W", "W"]  # Z, W: not in training
    out["c"] = pd.Categorical(c, categories=LEVELS + ["Z"])
    out["d"] = pd.Categorical(d, categories=list("XYZW"))
    assert set(LEVELS) <= set(out.c[:40]) and set("XYZ") <= set(out.d[:40].dropna())
    assert out.d[:40].isna().any()
    return out


def _group_term(model, name):
    """``(members, coef)`` of the main shape of group ``name`` (:func:`shapes.host_terms`)."""
    spec = model.shape_spec
    members, = [m for g, m in spec.groups if g == name]
    coef, = [c for f, c in shapes_.host_terms(model.shapes, spec) if f == (members[0],)]
    return members, coef


# ------------------------------------------------------------------------------ files


def test_save_load_round_trip_is_exact(fitted, tmp_path):
    est, df, _ = fitted
    path = tmp_path / "g.json"
    est.save(path)
    d = json.loads(path.read_text())
    assert d["shapes"]["groups"] == [{"name": name, "covariates": list(m)}
                                     for name, m in est.model_.shape_spec.groups]
    back = jaxtree.load(path)
    assert back.model_.shape_spec == est.model_.shape_spec  # groups as tuples again
    assert back.formula() == est.formula()
    rows = _rows(df)
    np.testing.assert_array_equal(back.predict(rows), est.predict(rows))  # bit for bit
    for a, b in zip(back.shape_terms(), est.shape_terms()):
        assert a["features"] == b["features"] and a["levels"] == b["levels"]
        np.testing.assert_array_equal(a["values"], b["values"])


def test_a_model_without_groups_writes_no_groups_key(fitted):
    """Older files (no groups) stay byte-identical: the key is written only when used."""
    m = fitted[0].model_
    plain = dataclasses.replace(m, shape_spec=m.shape_spec._replace(groups=()))
    assert "groups" not in model_.to_dict(plain)["shapes"]
    assert "groups" in model_.to_dict(m)["shapes"]


def _corrupt(d, edit):
    d = copy.deepcopy(d)
    edit(d["shapes"])
    d["checksum"] = model_.checksum(d)  # a file written so by hand: its checks must refuse it
    return d


def _set(key, value, g=0):
    def edit(s):
        s["groups"][g][key] = value
    return edit


CORRUPTIONS = {
    "not a list": (lambda s: s.__setitem__("groups", {"c": [2, 3]}), "groups must be a list"),
    "entry keys": (lambda s: s["groups"][0].pop("name"), r"groups\[0\] must have the keys"),
    "name": (_set("name", 7), "name must be a non-empty string"),
    "out of range": (_set("covariates", [2, 3, 99]), r"integers in \[0, 1[0-9]\)"),
    "not ints": (_set("covariates", [2, 3.0]), "list of integers"),
    "repeated": (_set("covariates", [2, 3, 3]), "must be distinct"),
    "one level": (_set("covariates", [2]), "has 1 covariates; a group holds 2 to n1 - 1"),
    "overlap": (_set("covariates", [7, 8], g=1), "shares covariate"),
    "member with a term": (_set("covariates", [3, 2, 4, 5, 6, 7]),
                           "only its first covariate"),
}


@pytest.mark.parametrize("what", sorted(CORRUPTIONS))
def test_a_corrupted_groups_entry_is_refused(fitted, tmp_path, what):
    est = fitted[0]
    d = model_.to_dict(est.model_)
    edit, message = CORRUPTIONS[what]
    bad = _corrupt(d, edit)
    with pytest.raises(ValueError, match=message) as info:
        model_.from_dict(bad, path="bad.json")
    assert str(info.value).startswith("bad.json: not a valid jaxtree model file: shapes groups")
    path = tmp_path / "bad.json"  # and through the estimator's loader, whole file
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="not a valid jaxtree model file"):
        jaxtree.load(path)


@pytest.mark.parametrize("edit, message", [
    (_set("covariates", [2, 3, 4, 5, 6]), r"covers covariates \[2, 3, 4, 5, 6\], but the "
                                          r"encoding gives that column the covariates "
                                          r"\[2, 3, 4, 5, 6, 7\]"),
    (_set("name", "zz"), "has no categorical column of that name"),
])
def test_a_group_that_is_not_its_columns_covariates_is_refused(fitted, tmp_path, edit, message):
    """A saved estimator whose group is valid on its own (distinct covariates, no term on a
    member) but not the covariates of the categorical column it names would read wrong level
    codes: its loader refuses it (the model file alone cannot tell)."""
    est = fitted[0]
    path = tmp_path / "g.json"
    est.save(path)
    bad = _corrupt(json.loads(path.read_text()), edit)
    model_.from_dict(bad, path="bad.json")  # the model's own checks pass
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match=message):
        jaxtree.load(path)


def test_a_pair_on_a_groups_other_covariate_is_refused(fitted):
    est = fitted[0]
    d = model_.to_dict(est.model_)
    home = est.model_.shape_spec.groups[1][1][0]  # d's first covariate

    def edit(s):
        i = [pr for pr in s["pairs"]].index([1, home])  # f(b, d)
        s["pairs"][i] = [1, home + 1]
    with pytest.raises(ValueError, match=r"pair \[1, 9\] uses a covariate of group 'd'"):
        model_.from_dict(_corrupt(d, edit), path="bad.json")


# ---------------------------------------------------------------------------- exports


def test_callables_and_sympy_equal_predict_on_every_level_and_unseen_ones(fitted):
    est, df, _ = fitted
    rows = _rows(df)
    want = est.predict(rows)
    X = np.asarray(est._rows(rows), np.float64)  # the encoded covariates the model reads
    # the unseen rows really have no level set in their group
    m = est.model_
    for name, members in m.shape_spec.groups:
        assert (X[-3:, list(members)].sum(1) == 0).any(), name
    scale = float(np.max(np.abs(want)))
    for backend in ("numpy", "jax"):
        f = jaxtree.export.to_callable(m, backend)
        np.testing.assert_allclose(np.asarray(f(X)), want, rtol=0, atol=1e-6 * scale,
                                   err_msg=backend)
    pytest.importorskip("sympy")
    expr = jaxtree.export.to_sympy(m)
    assert {s.name for s in expr.free_symbols} <= set(m.feature_names)
    g = lambdify(expr, m.feature_names)  # tests/_shared.py: sympy.lambdify, quick here
    np.testing.assert_allclose(g(*X.T), want, rtol=0, atol=1e-6 * scale)


def test_latex_names_a_group_by_its_column(fitted):
    est = fitted[0]
    for tex in (est.to_latex(), est.to_latex(scaled=True)):
        assert "f(c)" in tex and "f(b, d)" in tex and "f(a, c)" in tex, tex
        assert "c=P" not in tex and "d=X" not in tex, tex


# ----------------------------------------------------------------------------- tables


def test_shape_table_has_one_value_per_level_in_level_order(fitted):
    est, df, _ = fitted
    m = est.model_
    terms = {t["features"]: t for t in est.shape_terms()}
    t = terms[("c",)]
    assert t["knots"][0] == LEVELS and t["levels"] == (LEVELS,)
    members, coef = _group_term(m, "c")
    np.testing.assert_array_equal(t["values"], float(m.y_scale) * coef[1:len(members) + 1])
    assert coef[0] == 0.0  # knot 0 (no level set) holds no training row
    # Oracle: the truth's order. T has the largest effect, R the smallest; the values are
    # the effects up to the shared constant. Level l read at knot l - 1 fails all three.
    got = dict(zip(t["knots"][0], t["values"]))
    assert max(got, key=got.get) == "T" and min(got, key=got.get) == "R", got
    truth = np.array([EFF[c] for c in LEVELS])
    np.testing.assert_allclose(t["values"] - t["values"].mean(), truth - truth.mean(),
                               atol=0.05)
    # a numeric axis keeps its knots and no levels
    assert terms[("a",)]["levels"] == (None,) and len(terms[("a",)]["knots"][0]) == 24


def test_pair_table_has_the_levels_along_its_group_axis(fitted):
    est = fitted[0]
    m = est.model_
    t = {t["features"]: t for t in est.shape_terms()}[("b", "d")]
    assert t["levels"] == (None, ["X", "Y", "Z", "missing"]) and t["knots"][1] == t["levels"][1]
    assert t["values"].shape == (m.shape_spec.n2, 4)
    coef, = [c for f, c in shapes_.host_terms(m.shapes, m.shape_spec) if len(f) == 2
             and f[0] == 1]  # f(b, d)
    np.testing.assert_array_equal(t["values"], float(m.y_scale) * coef[:, 1:5])
    # Oracle: b's slope (0.3 over b in [-1, 1]) is in d = Y's column only
    rise = t["values"][-1] - t["values"][0]
    assert t["knots"][1][int(np.argmax(np.abs(rise)))] == "Y", rise
    assert abs(rise[1] - 0.6) < 0.15, rise


def test_tables_rebuild_the_shapes_part_of_predict(fitted):
    """Interpolating each table (a level axis looked up by the row's level) gives the shapes'
    part of every prediction: the tables' level order is the one predict uses."""
    est, df, _ = fitted
    m = est.model_
    rows = df.iloc[:200]
    X = np.asarray(est._rows(rows), np.float64)
    names = list(m.feature_names)

    def axis_weights(label, knots, levels):
        if levels is None:  # hats of a numeric covariate at its knots
            xj = X[:, names.index(label)]
            z = (xj - knots[0]) / (knots[-1] - knots[0]) * (len(knots) - 1)
            return np.maximum(1 - np.abs(z[:, None] - np.arange(len(knots))[None, :]), 0)
        cols = [names.index(f) for f in names if f.startswith(f"{label}=")
                or f == f"{label} missing"]
        return X[:, cols]  # one-hot over the levels, in the table's order

    part = np.zeros(len(X))
    for t in est.shape_terms():
        w = [axis_weights(f, k, lv) for f, k, lv in zip(t["features"], t["knots"], t["levels"])]
        part += w[0] @ t["values"] if len(w) == 1 else np.einsum("na,ab,nb->n", w[0],
                                                                  t["values"], w[1])
    u = jnp.asarray(np.clip((X - np.asarray(m.x_min)) * np.asarray(m.x_scale), 0, 1),
                    m.x_min.dtype)
    tree = np.asarray(prog.evaluate(m.program, u, m.basis), np.float64)
    rest = float(m.y_center) + float(m.y_scale) * (tree + float(m.shapes.intercept))
    np.testing.assert_allclose(part, est.predict(rows) - rest, atol=2e-5)


def test_level_labels():
    names = ["x", "color=D", "color=E", "color=other", "color missing", "odd"]
    assert export_.level_labels("color", (1, 2, 3, 4, 5), names) == [
        "D", "E", "other", "missing", "odd"]


# ------------------------------------------------------------------- terms and explain


def test_terms_and_explain_read_the_groups_columns(fitted):
    est, df, _ = fitted
    m = est.model_
    r = _formula.build(m, indicators=est._labels())
    by_text = {t.body: t for t in _formula.terms(r)}
    c_members = m.shape_spec.groups[0][1]
    assert by_text["f(c)"].features == tuple(c_members)
    assert by_text["f(a, c)"].features == (0,) + tuple(c_members)
    rows = df.iloc[:300]
    ex = est.explain(rows)
    row = ex[ex.term == "f(c)"].iloc[0]
    assert list(row.features) == [f"c={lv}" for lv in LEVELS]
    # its values are the table's, per row's level, centred
    table = {t["features"]: t for t in est.shape_terms()}[("c",)]
    per = dict(zip(table["knots"][0], table["values"]))
    raw = np.array([per[c] for c in rows.c])
    np.testing.assert_allclose(row["values"], raw - raw.mean(), atol=1e-5)
    total = ex.iloc[-1]["values"] + np.sum(np.stack(ex.iloc[:-1]["values"].to_list()), 0)
    np.testing.assert_allclose(total, est.predict(rows), atol=1e-4)


# ----------------------------------------------------------------------- plots and CLI


def test_plots_draw_groups_by_level(fitted):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    est, df, _ = fitted
    fig = est.plot_shapes()
    titled = {ax.get_title(): ax for ax in fig.axes if ax.get_title()}
    assert set(titled) == {"f(c)", "f(a)", "f(b, d)", "f(a, c)"}
    assert [x.get_text() for x in titled["f(c)"].get_xticklabels()] == LEVELS
    assert [x.get_text() for x in titled["f(b, d)"].get_xticklabels()] == [
        "X", "Y", "Z", "missing"]
    plt.close(fig)
    fig = est.plot_terms(df.iloc[:300])
    panel = [ax for ax in fig.axes if ax.get_title().startswith("f(c)")][0]
    assert [x.get_text() for x in panel.get_xticklabels()] == LEVELS
    plt.close(fig)


# slow: restates test_notation.py::test_every_view_names_the_terms_of_formula[table] (show --data
# prints formula() and explain()'s terms, from a CSV with a categorical column) with
# test_terms_and_explain_read_the_groups_columns and test_latex_names_a_group_by_its_column
# (the group is named f(c) by its column) on explain's compilations for rows of its own
@pytest.mark.slow
def test_cli_show_names_the_column(fitted, tmp_path, capsys):
    est, df, _ = fitted
    path = tmp_path / "g.json"
    est.save(path)
    data = tmp_path / "rows.csv"
    df.iloc[:100].to_csv(data, index=False)
    assert cli.main(["show", str(path), "--data", str(data)]) == 0
    out = capsys.readouterr().out
    assert "f(c)" in out and "f(b, d)" in out and "c=P" in out.split("features:")[1]
