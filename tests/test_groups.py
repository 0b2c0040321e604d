"""Categorical group shape terms (issues 26, 29): a categorical column's main shape is one
term with one value per level (:mod:`jaxtree.shapes`, "categorical groups")."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

import jaxtree
from jaxtree import shapes as shapes_
from jaxtree._fit import spec as spec_


def _one_hot(rng, n, sizes):
    """Random rows of groups of 0/1 columns, one set per row (some rows none: an unseen
    level), and the levels (1-based, 0: none)."""
    cols, levels = [], []
    for L in sizes:
        lv = rng.integers(0, L + 1, n)  # 0: no level set
        cols.append((lv[:, None] == np.arange(1, L + 1)[None, :]).astype(np.float64))
        levels.append(lv)
    return np.concatenate(cols, 1), levels


def _reference_view(x, groups, n):
    """The view written plainly: per row, a group's first column holds ``level / (n - 1)``."""
    out = x.copy()
    for _, members in groups:
        L = len(members)
        code = sum((r + 1) * np.clip(x[:, j], 0, 1) for r, j in enumerate(members))
        out[:, members[0]] = code / (n - 1 if L <= n - 1 else L)
        out[:, list(members[1:])] = np.nan
    return out


def test_view_is_the_level_code_on_the_knots_float64():
    rng = np.random.default_rng(7)
    onehot, levels = _one_hot(rng, 200, [5, 3])
    num = rng.uniform(0, 1, (200, 2))
    pad = np.full((200, 1), np.nan)  # a padding column stays NaN and spoils no code
    x = np.concatenate([num[:, :1], onehot, num[:, 1:], pad], 1)
    groups = (("g", (1, 2, 3, 4, 5)), ("h", (6, 7, 8)))
    spec = shapes_.ShapeSpec(n1=8, n2=4, max_terms=3, groups=groups)
    ref8, ref4 = _reference_view(x, groups, 8), _reference_view(x, groups, 4)
    np.testing.assert_allclose(shapes_.view(jnp.asarray(x), spec, 8), ref8, atol=1e-15)
    # a group of 5 levels on 4 hats (the coarse screen only) spreads its codes over (0, 1]
    np.testing.assert_allclose(shapes_.view(jnp.asarray(x), spec, 4), ref4, atol=1e-15)
    np.testing.assert_allclose(ref8[:, 1] * 7, levels[0])  # exactly on knot `level`
    assert np.isnan(ref8[:, 10]).all() and not np.isnan(ref8[:, 9]).any()
    # jit, the numpy twin (exports) and the traced arrays of a SlotSpec agree
    jitted = jax.jit(lambda a: shapes_.view(a, spec, 8))(jnp.asarray(x))
    np.testing.assert_allclose(jitted, ref8, atol=1e-15)
    np.testing.assert_allclose(shapes_.view(x, spec, 8, np), ref8, atol=1e-15)
    slot = shapes_.slots(spec, 10, 8, columns=11)
    traced = jax.jit(lambda a, s: shapes_.view(a, s, 8))(jnp.asarray(x), slot)
    np.testing.assert_allclose(traced, ref8, atol=1e-15)


def test_slot_specs_of_other_groups_share_one_structure():
    """Groups are data in a SlotSpec: two tables with different categoricals in the same
    bucket trace the same programs (issue 27), one without any keeps the old ones."""
    a = shapes_.ShapeSpec(n1=8, n2=4, max_terms=3, groups=(("g", (1, 2, 3)),))
    b = shapes_.ShapeSpec(n1=8, n2=4, max_terms=3, groups=(("h", (0, 1)), ("k", (4, 5, 6))))
    sa, sb = shapes_.slots(a, 7, 8, 12), shapes_.slots(b, 7, 8, 12)
    assert jax.tree_util.tree_structure(sa) == jax.tree_util.tree_structure(sb)
    plain = shapes_.slots(shapes_.ShapeSpec(n1=8, n2=4, max_terms=3), 7, 8, 12)
    assert plain.level is None
    assert int(sa.live) == 7 - 2 and int(sb.live) == 7 - 3  # a group counts once


def test_pair_columns_count_a_group_once():
    spec = shapes_.ShapeSpec(n1=24, n2=4, groups=(("g", (1, 2, 3)), ("big", (4, 5, 6, 7))))
    # g's other members are no axis; big (4 levels) does not fit a pair's 3 free knots
    assert shapes_.pair_columns(9, spec) == [0, 1, 8]
    assert shapes_.pair_columns(3) == [0, 1, 2]


def test_shape_groups_of_an_encoding():
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0] * 5,
                      "c": pd.Categorical(list("pqrs") * 5),
                      "d": pd.Categorical(["u", "v"] * 10)})
    from jaxtree._inputs import encoding as enc_
    _, enc = enc_.fit_transform(X, {})
    # d's two levels are no group: its indicators' main shapes print as a coefficient
    assert spec_.shape_groups(enc, (24, 12)) == (("c", (1, 2, 3, 4)),)
    assert spec_.shape_groups(enc, (5, 3)) == (("c", (1, 2, 3, 4)),)  # 4 levels: 5 knots
    assert spec_.shape_groups(enc, (4, 3)) == ()
    # a missing indicator is a third covariate of d: then a group
    X.loc[0, "d"] = np.nan
    _, enc = enc_.fit_transform(X, {})
    assert spec_.shape_groups(enc, (24, 12)) == (("c", (1, 2, 3, 4)), ("d", (5, 6, 7)))


# slow: restates test_shape_groups_of_an_encoding (a two-level column is no group, a wider one
# is), test_notation.py::test_shape_on_a_two_valued_column_prints_as_a_coefficient (an
# indicator's main shape prints as its planted coefficient, _formula's linear_shapes) and
# test_group_exports.py::test_terms_and_explain_read_the_groups_columns /
# test_latex_names_a_group_by_its_column (a group's term is named f(column)) on a
# 3,000-row fit of its own
@pytest.mark.slow
def test_a_two_level_category_prints_as_a_coefficient():
    """A two-level column's main shape is one number: printed as the coefficient of its
    indicator (``-0.8·[sex = female]``), not as a table ``f(sex)``; a three-level column
    stays one group term ``f(cls)``; the coefficient is the planted effect."""
    rng = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame({"x": rng.uniform(size=n),
                       "sex": pd.Categorical(rng.choice(["female", "male"], n)),
                       "cls": pd.Categorical(rng.choice(["1st", "2nd", "3rd"], n))})
    y = (np.sin(3 * df.x.to_numpy()) + 0.8 * (df.sex == "male").to_numpy()
         + df.cls.map({"1st": 0.0, "2nd": 0.5, "3rd": -0.4}).astype(float).to_numpy()
         + 0.1 * rng.standard_normal(n))
    est = jaxtree.TreeRegressor(shapes=3, k=1, search="greedy", refine=None,
                                validation_fraction=None).fit(df, y)
    assert est.model_.shape_spec.groups == (("cls", (3, 4, 5)),)
    formula = est.formula()
    assert "f(cls)" in formula and "f(sex)" not in formula, formula
    m = re.search(r"([+-]) (\d+\.\d+)·\[sex = (female|male)\]", formula)
    assert m is not None, formula
    coef = float(m.group(2)) * (1 if m.group(1) == "+" else -1)
    want = 0.8 if m.group(3) == "male" else -0.8
    assert abs(coef - want) < 0.05, formula


def _table(n, seed=0):
    rng = np.random.default_rng(seed)
    levels = list("PQRSTU")
    eff = dict(zip(levels, [0.0, 1.0, -1.0, 0.5, 2.0, -0.7]))
    df = pd.DataFrame({"a": rng.uniform(-1, 1, n),
                       "c": pd.Categorical(rng.choice(levels, n)),
                       "b": rng.uniform(-1, 1, n)})
    y = np.sin(2 * df.a.to_numpy()) + df.c.map(eff).astype(float).to_numpy()
    return df, y, eff


@pytest.fixture(scope="module")
def fitted():
    """A bucketed in-memory fit (compiling dominates at this size: a SlotSpec stage). The
    tree is one leaf (``k=0``), so the greedy step and no refinement of its weight (the
    cheapest tree programs to compile) change nothing these tests read."""
    df, y, eff = _table(1200)
    seen, real = [], shapes_.unslot
    shapes_.unslot = lambda t, s, p, g=(): seen.append(type(s)) or real(t, s, p, g)
    try:
        est = jaxtree.TreeRegressor(shapes=2, k=0, validation_fraction=None, search="greedy",
                                    refine=None).fit(df, y)
    finally:
        shapes_.unslot = real
    assert shapes_.SlotSpec in seen  # the bucketed path ran
    return est, df, y, eff


def test_a_categorical_effect_is_one_term_with_a_value_per_level(fitted):
    est, df, y, eff = fitted
    model = est.model_
    spec = model.shape_spec
    assert spec.groups == (("c", (1, 2, 3, 4, 5, 6)),)
    names = shapes_.term_names(model.shapes, spec, model.feature_names)
    assert sorted(names) == ["f(a)", "f(c)"]  # one term for six levels
    (_, coef), = [t for t in shapes_.host_terms(model.shapes, spec) if t[0] == (1,)]
    # Oracle: the term's value at knot l is level l's effect (scaled units); one value per
    # level, so the effects are recovered up to the shared constant. An off-by-one (level l
    # at knot l - 1) or a view that kept the members apart fails here.
    truth = np.array([eff[c] for c in "PQRSTU"])
    got = float(model.y_scale) * coef[1:7]
    np.testing.assert_allclose(got - got.mean(), truth - truth.mean(), atol=0.03)
    resid = y - est.predict(df)
    assert np.sqrt(np.mean(resid ** 2)) < 0.03  # sin(2a) on 24 knots, the levels exact


def test_an_unseen_level_adds_the_no_level_value(fitted):
    est, df, y, eff = fitted
    row = df.iloc[:1].copy()
    row["c"] = pd.Categorical(["P"], categories=list("PQRSTU"))
    seen = est.predict(row)
    row["c"] = pd.Categorical(["Z"], categories=list("PQRSTUZ"))  # not in training
    with pytest.warns(jaxtree.UnseenLevelWarning, match=r"\['c'\] that no training row had"):
        unseen = est.predict(row)
    model = est.model_
    (_, coef), = [t for t in shapes_.host_terms(model.shapes, model.shape_spec) if t[0] == (1,)]
    np.testing.assert_allclose(unseen - seen, float(model.y_scale) * (coef[0] - coef[1]),
                               atol=1e-5)


def test_group_evaluate_under_jit_vmap_and_grad(fitted):
    est, df, *_ = fitted
    model = est.model_
    u = jnp.asarray(np.random.default_rng(1).uniform(0, 1, (5, model.n_features)))
    u = u.at[:, 1:7].set(jnp.eye(6)[jnp.arange(5)])  # one level set per row
    spec = model.shape_spec
    plain = shapes_.evaluate(model.shapes, u, spec)
    np.testing.assert_allclose(jax.jit(shapes_.evaluate, static_argnames="spec")(
        model.shapes, u, spec), plain, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(lambda r: shapes_.evaluate(
        model.shapes, r[None], spec)[0])(u), plain, rtol=1e-6)
    g = jax.grad(lambda a: shapes_.evaluate(model.shapes, a, spec).sum())(u)
    assert np.all(np.isfinite(np.asarray(g)))
    np.testing.assert_allclose(shapes_.to_numeric(np, model.shapes, spec, np.asarray(u)),
                               plain, rtol=1e-6)


def test_bucketed_group_stage_is_the_unbucketed_one(fitted, monkeypatch):
    """The in-memory regressor's bucketed shape stage (a SlotSpec, groups as arrays: the
    fixture's fit) chooses the terms the static-spec stage chooses, and predicts the same."""
    from jaxtree._fit import source

    bucketed, df, y, _ = fitted
    seen = []
    real = shapes_.unslot
    monkeypatch.setattr(shapes_, "unslot",
                        lambda t, s, p, g=(): seen.append(type(s)) or real(t, s, p, g))
    monkeypatch.setattr(source.InMemory, "shape_bucket", property(lambda self: None))
    plain = jaxtree.TreeRegressor(**bucketed.get_params()).fit(df, y)
    assert seen and shapes_.SlotSpec not in seen  # this fit ran the static spec
    assert bucketed.model_.shape_spec.groups == plain.model_.shape_spec.groups != ()
    assert bucketed.formula() == plain.formula()
    np.testing.assert_allclose(bucketed.predict(df), plain.predict(df), rtol=1e-5, atol=1e-6)
