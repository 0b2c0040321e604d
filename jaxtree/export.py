r"""Exports of a fitted :class:`jaxtree.model.TreeModel`: sympy, LaTeX, standalone callables,
Graphviz DOT and matplotlib drawings.

Why one long file (over 800 lines): every export walks the same model (the tree's leaves
through :mod:`jaxtree._formula`, the shape terms through :func:`jaxtree.shapes.host_terms`
and their categorical groups) and renders it once per target; the drawings share the shape
tables and the per-term values with the text exports. A split by target (plots apart) is
the natural next cut when it grows.

A fitted model predicts

.. math::

    \hat y = c + s \bigl(w_0 + T(u)\bigr), \qquad u_j = (x_j - m_j)\, a_j,

with ``m = x_min``, ``a = x_scale`` (covariates min-max scaled to ``[0, 1]``), ``c = y_center``,
``s = y_scale`` and ``T`` the tree of ``+``/``*`` nodes over leaves ``w * phi_i(u_j)``.

* :func:`to_sympy` returns that expression in the original units of ``x`` and ``y``.
* :func:`to_latex` writes the printed formula of :meth:`TreeModel.formula` (original units,
  folded, merged and rounded within a stated tolerance: :mod:`jaxtree._formula`);
  ``to_latex(scaled=True)`` and :func:`to_dot` describe the raw tree in the scaled covariates
  ``u`` (they need neither sympy nor Graphviz). ``to_sympy(tol=1e-3)`` is the printed formula
  as a sympy expression.
* :func:`to_callable` returns a standalone ``f(X) -> y`` (plain numpy, or jitted JAX) equal to
  :func:`jaxtree.predict`.
* :func:`plot_tree` and :func:`plot_history` draw with matplotlib.

sympy and matplotlib are optional (``pip install jaxtree[export]``) and imported only when
needed. Every function reads the model once to the host; none is meant for a hot path.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

import jax
import numpy as np

from jaxtree import _drawing as drawing
from jaxtree import _formula
from jaxtree import _target
from jaxtree import basis as basis_
from jaxtree import program as prog
from jaxtree import shapes as shapes_
from jaxtree._fit import host_shapes, select
from jaxtree._inputs import validation as V
from jaxtree.basis import latex_number

__all__ = ["to_sympy", "to_latex", "to_callable", "to_dot", "plot_tree", "plot_history",
           "shape_terms", "level_labels", "plot_shapes", "plot_path", "term_values",
           "plot_terms"]

BACKENDS = ("numpy", "jax")


# ------------------------------------------------------------------------------ helpers


def require(module: str, what: str):
    """The optional dependency ``module`` imported, or ImportError saying that ``what`` needs
    it and how to install it."""
    try:
        return __import__(module, fromlist=["_"])
    except ImportError as exc:
        raise ImportError(
            f"{what} needs {module.split('.')[0]}, which is not installed. Install it with "
            "`pip install jaxtree[export]`."
        ) from exc


class _Host:
    """The model's arrays on the host (float64) and its leaf functions, read once."""

    def __init__(self, model):
        a = prog.to_numpy(model.program)
        self.op, self.left, self.right = a["op"], a["left"], a["right"]
        self.feature, self.basis_index = a["feature"], a["basis"]
        self.weight = np.asarray(a["weight"], np.float64)
        self.intercept = float(a["intercept"])
        self.n_slots = int(a["n_slots"])
        self.x_min = np.asarray(model.x_min, np.float64)
        self.x_scale = np.asarray(model.x_scale, np.float64)
        self.y_center = float(model.y_center)
        self.y_scale = float(model.y_scale)
        self.basis = model.basis
        self.target = _target.of(model)
        self.names = tuple(str(n) for n in model.feature_names)
        # Global basis index -> (family, index within the family). Each leaf function renders
        # itself: the family's to_sympy / to_latex / to_numeric (jaxtree.basis), so no formula
        # of a basis function is written in this module.
        self.functions = [model.basis.locate(i) for i in range(model.basis.q)]

    def fold(self, leaf: Callable[[int], Any], add: Callable, mul: Callable, empty):
        """Folds the tree bottom-up: ``leaf(slot)`` at leaves, ``add``/``mul`` at op nodes."""
        if self.n_slots == 0:
            return empty

        def rec(slot):
            op = int(self.op[slot])
            if op == prog.LEAF:
                return leaf(slot)
            lhs, rhs = rec(int(self.left[slot])), rec(int(self.right[slot]))
            return add(lhs, rhs) if op == prog.ADD else mul(lhs, rhs)

        return rec(0)


def _check_model(model) -> None:
    if not all(hasattr(model, a) for a in ("program", "x_min", "x_scale", "basis")):
        raise TypeError(
            f"expected a fitted jaxtree.TreeModel (e.g. est.model_); got {type(model).__name__}. "
            "For an estimator use its methods (est.to_sympy(), ...) or pass est.model_."
        )


# ------------------------------------------------------------------------------- sympy


def to_sympy(model, *, clip: bool = False, custom_functions: Optional[Mapping[str, Callable]] = None,
             tol: Optional[float] = None, digits: Optional[int] = None,
             indicators: Optional[Mapping[int, str]] = None):
    """The fitted formula as a sympy expression in the original units of ``x`` and ``y``.

    By default the exact expression (equal to :func:`jaxtree.predict`, nothing rounded). With
    ``tol`` (or ``digits``) set, the printed formula instead (:meth:`TreeModel.formula
    <jaxtree.model.TreeModel.formula>`, :mod:`jaxtree._formula`): the same folded, merged
    and rounded numbers, within ``tol`` times the target's half-range of ``predict`` in the
    training range (``clip`` is then ignored; a shape term printed by name, ``f(x1)``, is in
    it exactly, as its sum of hats). Print it with ``sympy.sstr(expr, full_prec=False)``.

    Each scaled covariate is substituted, ``u_j = (x_j - x_min_j) * x_scale_j``, and the
    output mapped back, ``y = y_center + y_scale * (w0 + T(u))``. Hats become
    ``Max(0, 1 - |u - t|/h)``, truncated cubics ``Max(u - t, 0)**3``; custom basis functions
    become undefined ``sympy.Function`` s named after them unless ``custom_functions`` maps
    their name to a sympy counterpart (e.g. ``{"tanh": sympy.tanh}``).

    Args:
      model: a fitted :class:`jaxtree.model.TreeModel` (``est.model_``).
      clip: clamp each ``u_j`` to ``[0, 1]`` with ``Min``/``Max``, and a regressor's
        ``w0 + T(u)`` to the training targets' range, as :func:`jaxtree.predict` does by
        default. Without it the expression is the formula, which equals the predictions
        where neither clip binds.
      custom_functions: ``{name: f}`` with ``f(sympy_expr) -> sympy_expr``.
      tol: None (exact) or the rounding tolerance of the printed formula (e.g. ``1e-3``).
      digits: a fixed number of significant digits for the printed formula.
      indicators: with ``tol``/``digits``: ``{covariate index: label}`` of the 0/1 covariates
        (they stay their 0/1 symbols; the estimator passes them); a label None marks a
        numeric column of two values, whose leaves are lines in it.

    Returns:
      A sympy expression in symbols named after ``model.feature_names``.

    Raises:
      ImportError: if sympy is not installed (``pip install jaxtree[export]``).
    """
    _check_model(model)
    sp = require("sympy", "to_sympy")
    if tol is not None or digits is not None:
        r = _formula.build(model, tol=_formula.DEFAULT_TOL if tol is None else tol,
                           digits=digits, indicators=indicators)
        return _formula.sympy_expr(r, sp, custom_functions)
    h = _Host(model)
    custom = dict(custom_functions or {})
    symbols = [sp.Symbol(n, real=True) for n in h.names]
    scaled, original = [], []
    for j, x in enumerate(symbols):
        u = (x - sp.Float(h.x_min[j])) * sp.Float(h.x_scale[j])
        scaled.append(sp.Min(sp.Max(u, 0), 1) if clip else u)
        hi = h.x_min[j] + 1.0 / h.x_scale[j]
        original.append(sp.Min(sp.Max(x, sp.Float(h.x_min[j])), sp.Float(hi)) if clip else x)

    def leaf(slot):
        # The readable form (exact rationals, |u - t|/h), equal to predict in exact arithmetic;
        # the numeric form of to_callable differs on purpose (see jaxtree.basis families).
        # Families on the original units (PowerLaws) are written in the covariate itself.
        fam, m = h.functions[int(h.basis_index[slot])]
        j = int(h.feature[slot])
        if fam.per_feature:
            phi = fam.to_sympy(m, scaled[j], custom, feature=j, x=original[j])
        else:
            phi = fam.to_sympy(m, scaled[j], custom)
        return sp.Float(h.weight[slot]) * phi

    tree = h.fold(leaf, lambda a, b: a + b, lambda a, b: a * b, sp.Integer(0))
    tree = tree + shape_terms_sympy(model, symbols, h, sp)
    value = sp.Float(h.intercept) + tree
    bound = _target.clip_bound(model)  # predict's clip to the targets' range
    if clip and bound is not None:
        value = sp.Min(sp.Max(value, -sp.Float(bound)), sp.Float(bound))
    inner = sp.Float(h.y_center) + sp.Float(h.y_scale) * value
    return h.target.to_sympy(inner, sp)


def shape_terms_sympy(model, symbols, h, sp, terms=None, intercept: bool = True):
    """The shape terms (:mod:`jaxtree.shapes`) as sums of hats of the clipped scaled covariates
    (shapes always clip, whatever ``clip`` says for the tree); 0 without shapes. ``terms``:
    the indices of the terms to write (None: all), ``intercept``: whether the shapes'
    constant is added (``h``: anything with the covariates' ``x_min`` and ``x_scale``). A categorical
    group's axis (:func:`jaxtree.shapes.group_at`) is its level code as the shapes see it
    (:func:`jaxtree.shapes.view`): ``sum_l l·u[members[l-1]] / (n - 1)`` for ``n`` hats, so
    level ``l`` sits on knot ``l`` (and a row with no level set on knot 0)."""
    if getattr(model, "shapes", None) is None:
        return sp.Integer(0)
    spec = model.shape_spec
    u = [sp.Min(sp.Max((x - sp.Float(h.x_min[j])) * sp.Float(h.x_scale[j]), 0), 1)
         for j, x in enumerate(symbols)]
    h1, h2 = basis_.Hats(spec.n1), basis_.Hats(spec.n2)

    def axis(j, n):
        group = shapes_.group_at(spec, j)
        if group is None:
            return u[j]
        members = group[1]
        spread = n - 1 if len(members) <= n - 1 else len(members)  # as shapes.view spreads
        return sp.Add(*(sp.Integer(r + 1) * u[m] for r, m in enumerate(members))) / spread

    out = sp.Float(float(model.shapes.intercept)) if intercept else sp.Integer(0)
    for i, (feats, coef) in enumerate(shapes_.host_terms(model.shapes, spec)):
        if terms is not None and i not in terms:
            continue
        if len(feats) == 1:
            z = axis(feats[0], spec.n1)
            out += sum(sp.Float(c) * h1.to_sympy(m, z) for m, c in enumerate(coef) if c)
        else:
            za, zb = axis(feats[0], spec.n2), axis(feats[1], spec.n2)
            out += sum(sp.Float(coef[i, l]) * h2.to_sympy(i, za) * h2.to_sympy(l, zb)
                       for i in range(spec.n2) for l in range(spec.n2) if coef[i, l])
    return out


def _shapes_latex(model, h) -> str:
    """``f(x_1) + f(x_2, x_3) + ...``: the shape terms by name (a categorical group's by its
    column's, :func:`jaxtree.shapes.axis_name`; their tables: ``TreeRegressor.shape_terms()``);
    empty without shapes."""
    if getattr(model, "shapes", None) is None or not int(model.shapes.n_terms):
        return ""
    spec = model.shape_spec
    names = [", ".join(_formula.latex_var(shapes_.axis_name(spec, j, h.names)) for j in feats)
             for feats, _ in shapes_.host_terms(model.shapes, spec)]
    k = latex_number(float(model.shapes.intercept), 3)
    return f"{k} + " + " + ".join(f"f({n})" for n in names)


# ------------------------------------------------------------------------------- LaTeX


def to_latex(model, *, digits: Optional[int] = None, tol: float = 1e-3, scaled: bool = False,
             indicators: Optional[Mapping[int, str]] = None, lhs: str = "y") -> str:
    """The fitted formula as a LaTeX string (no sympy needed).

    By default the printed formula of :meth:`jaxtree.model.TreeModel.formula`, number for
    number: original units, products folded into one coefficient, equal terms merged,
    indicators ``[\\text{carrier = EV}]``, numbers rounded so that no prediction in the
    training range moves by more than ``tol`` times the target's half-range
    (:mod:`jaxtree._formula`). ``scaled=True`` gives the raw tree on the covariates min-max
    scaled to ``[0, 1]``, ``y = c + s [w_0 + T]`` (the bracket omitted when ``c = 0``,
    ``s = 1``), every weight with ``digits`` significant digits (default 3).

    Args:
      model: a fitted :class:`jaxtree.model.TreeModel`.
      digits: a fixed number of significant digits (None: chosen from ``tol``; 3 when scaled).
      tol: the rounding tolerance, a fraction of the target's half-range (default ``1e-3``).
      scaled: the raw scaled tree instead of the readable formula.
      indicators: ``{covariate index: label}`` of 0/1 covariates (the estimator passes its
        table encoding's; a label None: a numeric column of two values, read as a line).
      lhs: the left-hand side, LaTeX (the estimator passes its target's name).

    Returns:
      A LaTeX math string (without ``$`` delimiters), e.g.
      ``y = 3 + 0.5\\, x_{1}^{2} + 2.1\\, [\\text{c = b}]``.
    """
    _check_model(model)
    if not scaled:
        return _formula.latex(_formula.build(model, tol=tol, digits=digits,
                                             indicators=indicators), lhs)
    digits = 3 if digits is None else digits
    h = _Host(model)

    def leaf(slot):
        fam, m = h.functions[int(h.basis_index[slot])]
        var = _formula.latex_var(h.names[int(h.feature[slot])])
        return ("leaf", f"{latex_number(h.weight[slot], digits)}\\,"
                        f"{fam.to_latex(m, var)}")

    def add(a, b):
        return ("+", f"{a[1]} + {b[1]}")

    def mul(a, b):
        parts = [f"\\left({t}\\right)" if kind == "+" else t for kind, t in (a, b)]
        return ("*", "\\,".join(parts))

    tree = h.fold(leaf, add, mul, None)
    inner = latex_number(h.intercept, digits)
    if tree is not None:
        inner = f"{inner} + {tree[1]}"
    shapes_text = _shapes_latex(model, h)
    if shapes_text:
        inner = f"{shapes_text} + {inner}"
    inner = inner.replace("+ -", "- ")
    if not (h.y_center == 0.0 and h.y_scale == 1.0):
        inner = (f"{latex_number(h.y_center, digits)} + "
                 f"{latex_number(h.y_scale, digits)}\\left[{inner}\\right]")
    return h.target.to_latex(inner, latex_number(h.target.smearing, digits), lhs)


# ---------------------------------------------------------------------------- callables


def to_callable(model, backend: str = "numpy", *, clip: bool = True) -> Callable:
    """A standalone function ``f(X) -> y`` equal to ``jaxtree.predict(model, X, clip=clip)``.

    The tree is unrolled into plain array code at export time, so ``f`` needs no jaxtree
    machinery: with ``backend="numpy"`` it is pure numpy in float64 (custom basis functions
    are called as given, on numpy arrays); with ``backend="jax"`` it is ``jax.numpy`` code
    under ``jax.jit`` in the model's dtype (differentiable, vmappable).

    Missing values follow ``jaxtree.predict``'s rule (:attr:`jaxtree.model.TreeModel.missing`):
    a NaN takes its covariate's training minimum (the numpy form warns as ``predict`` does
    on host arrays); for a model fitted with ``missing="error"`` the numpy form raises a
    ``ValueError`` and the jax form, like ``jax.jit(jaxtree.predict)``, returns NaN for
    that row.

    Args:
      model: a fitted :class:`jaxtree.model.TreeModel`.
      backend: ``"numpy"`` or ``"jax"``.
      clip: clip covariates to the training range first, and a regressor's prediction to its
        training targets' range, as ``predict`` does by default.

    Returns:
      ``f``: float ``(n, p)`` (or one row ``(p,)``) -> ``(n,)`` (or ``()``).

    Raises:
      ValueError: for an unknown backend.
    """
    _check_model(model)
    if backend not in BACKENDS:
        raise ValueError(f"Unknown backend {backend!r}; valid values are {list(BACKENDS)}.")
    h = _Host(model)
    if backend == "numpy":
        xp = np
        x_min, x_scale = h.x_min, h.x_scale
        dtype = np.float64
    else:
        import jax
        import jax.numpy as xp

        dtype = np.asarray(model.x_min).dtype
        x_min, x_scale = xp.asarray(h.x_min, dtype), xp.asarray(h.x_scale, dtype)
    p = h.x_min.shape[0]
    bound = _target.clip_bound(model)
    missing = getattr(model, "missing", "fill")

    def f(X):
        x = xp.asarray(X, dtype)
        single = x.ndim == 1
        x2 = x[None, :] if single else x
        if x2.ndim != 2 or x2.shape[1] != p:
            raise ValueError(f"X must have shape (n_samples, {p}) or ({p},); got {x.shape}.")
        if xp is np:  # jaxtree.predict's rule on host arrays: its warning or its error
            x2 = V.fill_missing(x2, x_min, refuse=missing == "error", names=h.names)
        elif missing != "error":  # ... and under jit
            x2 = xp.where(xp.isnan(x2), x_min, x2)
        u = (x2 - x_min) * x_scale
        if clip:
            u = xp.clip(u, 0.0, 1.0)

        def leaf(slot):
            # to_numeric is written as Basis.evaluate computes the function (a hat as
            # max(1 - |u (n-1) - m|, 0), not the readable |u - t|/h of to_sympy) so that f
            # agrees with predict to rounding; see the family methods in jaxtree.basis.
            fam, m = h.functions[int(h.basis_index[slot])]
            j = int(h.feature[slot])
            if fam.per_feature:
                return h.weight[slot] * fam.to_numeric(xp, m, u[:, j], feature=j)
            return h.weight[slot] * fam.to_numeric(xp, m, u[:, j])

        tree = h.fold(leaf, lambda a, b: a + b, lambda a, b: a * b, 0.0)
        if getattr(model, "shapes", None) is not None:
            tree = tree + shapes_.to_numeric(xp, model.shapes, model.shape_spec,
                                             (x2 - x_min) * x_scale)
        inner = h.intercept + tree + xp.zeros(x2.shape[0], dtype)
        if clip and bound is not None:  # predict's clip to the targets' range
            inner = xp.clip(inner, -bound, bound)
        out = h.y_center + h.y_scale * inner
        out = h.target.to_numeric(out, xp).astype(dtype)
        return out[0] if single else out

    return f if backend == "numpy" else jax.jit(f)


# --------------------------------------------------------------------------------- DOT


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(model, *, digits: int = 3, name: str = "jaxtree") -> str:
    """The tree as Graphviz DOT text, drawn like the paper's figures.

    Op nodes are circles labelled ``+`` or ``*``; leaves are boxes ``w·φ(x)`` (covariates
    scaled to ``[0, 1]``). A tree with ``k`` operations has ``2k+1`` nodes; the intercept and
    the output scaling are the graph's label. Render with ``dot -Tpng tree.dot -o tree.png``
    or the ``graphviz`` Python package.

    Args:
      model: a fitted :class:`jaxtree.model.TreeModel`.
      digits: significant digits of the weights.
      name: the graph's name.

    Returns:
      The DOT source.
    """
    _check_model(model)
    h = _Host(model)
    lines = [f'digraph "{_dot_escape(name)}" {{', '  node [fontname="Helvetica"];']
    for slot in range(h.n_slots):
        op = int(h.op[slot])
        if op == prog.LEAF:
            term = h.basis.render(int(h.basis_index[slot]), h.names[int(h.feature[slot])])
            label = f"{h.weight[slot]:.{digits}g}·{term}"
            lines.append(f'  n{slot} [label="{_dot_escape(label)}", shape=box];')
        else:
            sym = prog.OP_SYMBOLS[op]
            lines.append(f'  n{slot} [label="{sym}", shape=circle];')
    for slot in range(h.n_slots):
        if int(h.op[slot]) in (prog.ADD, prog.MUL):
            lines.append(f"  n{slot} -> n{int(h.left[slot])};")
            lines.append(f"  n{slot} -> n{int(h.right[slot])};")
    caption = (f"y = {h.y_center:.{digits}g} + {h.y_scale:.{digits}g}·"
               f"({h.intercept:.{digits}g} + T)")
    lines.append(f'  label="{_dot_escape(caption)}";')
    lines.append("}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------- plots


def _axes(ax, figsize):
    if ax is not None:
        return ax.figure, ax
    plt = require("matplotlib.pyplot", "plotting")
    fig, ax = plt.subplots(figsize=figsize)
    return fig, ax


def _layout(h: _Host):
    """(x, depth) per used slot: leaves left to right, parents centred over children."""
    pos, counter = {}, [0]

    def rec(slot, depth):
        if int(h.op[slot]) == prog.LEAF:
            pos[slot] = (float(counter[0]), depth)
            counter[0] += 1
        else:
            rec(int(h.left[slot]), depth + 1)
            rec(int(h.right[slot]), depth + 1)
            xl, xr = pos[int(h.left[slot])][0], pos[int(h.right[slot])][0]
            pos[slot] = ((xl + xr) / 2, depth)

    if h.n_slots:
        rec(0, 0)
    return pos


def plot_tree(model, ax=None, *, digits: int = 2, indicators: Optional[Mapping[int, str]] = None,
              lhs: str = "y"):
    """Draws the tree with matplotlib: ``+``/``*`` circles over its leaves, each written in
    the formula's notation (:func:`jaxtree._formula.leaf_texts`: the covariate in its own
    units, indicators ``[c = red]``, the leaf's weight in the tree's units), under the title
    ``y = c + s·(w0 + T)``. Labels never overlap: long ones are wrapped between factors, the
    figure is as wide as they need, and where an ``ax`` of fixed size is too small the font
    shrinks and neighbouring leaves are staggered.

    Args:
      model: a fitted :class:`jaxtree.model.TreeModel`.
      ax: a matplotlib Axes to draw on; a new figure when None.
      digits: significant digits of the weights.
      indicators: ``{covariate index: label}`` of 0/1 covariates (the estimator passes its
        table encoding's; a label None: a numeric column of two values, read as a line).
      lhs: the target's name in the title.

    Returns:
      The matplotlib ``Figure``.

    Raises:
      ImportError: if matplotlib is not installed (``pip install jaxtree[export]``).
    """
    _check_model(model)
    h = _Host(model)
    pos = _layout(h)
    labels = _formula.leaf_texts(model, indicators, digits) if h.n_slots else {}
    leaves = [s for s in pos if int(h.op[s]) == prog.LEAF]
    text = {s: drawing.wrap_label(labels[s]) if s in labels else prog.OP_SYMBOLS[int(h.op[s])]
            for s in pos}
    widest = max((len(line) for s in leaves for line in text[s].split("\n")), default=1)
    lines_per = max((text[s].count("\n") + 1 for s in leaves), default=1)
    depth = max((d for _, d in pos.values()), default=0)
    pos = {s: (x, depth if s in labels else d) for s, (x, d) in pos.items()}  # leaves: one row
    per_leaf = max(1.6, 0.07 * widest + 0.35)  # inches per leaf: a line at font 9, padded
    # (the axes take 77.5% of a new figure's width)
    fig, ax = _axes(ax, (min(max(4.0, per_leaf * (len(leaves) + 0.6) / 0.775), 80.0),
                         max(2.5, (0.9 + 0.18 * lines_per) * (depth + 1))))
    edges = []
    for slot, (x, d) in pos.items():
        if int(h.op[slot]) in (prog.ADD, prog.MUL):
            for child in (int(h.left[slot]), int(h.right[slot])):
                cx, cd = pos[child]
                edges.append((slot, child, ax.plot([x, cx], [-d, -cd], color="0.4", lw=1,
                                                   zorder=1)[0]))
    texts = {}
    for slot, (x, d) in pos.items():
        leaf = int(h.op[slot]) == prog.LEAF
        box = dict(boxstyle="round", fc="#eef3fb") if leaf else dict(boxstyle="circle",
                                                                      fc="#fdf1dc")
        texts[slot] = ax.text(x, -d, text[slot], ha="center", va="center", fontsize=9,
                              bbox=box, zorder=2)
    c, s, w0 = h.y_center, h.y_scale, h.intercept
    ax.set_title(f"{lhs} = {c:.3g} + {s:.3g}·({w0:.3g} + T)" if (c, s) != (0.0, 1.0)
                 else f"{lhs} = {w0:.3g} + T", fontsize=10)
    ax.set_xlim(-0.8, max(len(leaves) - 1, 0) + 0.8)
    ax.set_ylim(-depth - 0.8, 0.6)
    ax.axis("off")
    drawing.untangle(fig, texts, labels, pos, edges)
    return fig


def plot_history(history, ax=None, *, ylabel: str = "training MSE", labels=None):
    """Plots the training loss after the first leaf and each insertion.

    Args:
      history: ``est.history_`` (float ``(k+1,)``, longer with shape terms; one row per
        class for a one-versus-rest classifier, one line per class), or a fitted estimator.
      ax: a matplotlib Axes to draw on; a new figure when None.
      ylabel: the loss's name (a classifier's: ``"training log-loss"``).
      labels: with a 2-D history, the legend's name of each row (e.g. the classes).

    Returns:
      The matplotlib ``Figure``.

    Raises:
      ImportError: if matplotlib is not installed (``pip install jaxtree[export]``).
      ValueError: if ``history`` is not 1-D or 2-D, or ``labels`` do not match its rows.
    """
    h = np.asarray(getattr(history, "history_", history), np.float64)
    if h.ndim not in (1, 2):
        raise ValueError(f"history must be 1-D (n_iterations,) or 2-D (n_trees, n_iterations); "
                         f"got shape {h.shape}.")
    rows = h[None] if h.ndim == 1 else h
    if labels is not None and len(labels) != rows.shape[0]:
        raise ValueError(f"labels must name each of the {rows.shape[0]} rows of history; got "
                         f"{len(labels)}.")
    fig, ax = _axes(ax, (5.0, 3.2))
    for i, row in enumerate(rows):
        ax.plot(np.arange(row.shape[0]), row, marker="o",
                label=None if labels is None else str(labels[i]))
    if labels is not None:
        ax.legend()
    if h.size and (h > 0).all():
        ax.set_yscale("log")
    ax.set_xlabel("operations k")
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    return fig


def level_labels(name: str, members, feature_names) -> list:
    """The level labels of a categorical group (:func:`jaxtree.shapes.group_at`).

    Args:
      name: the group's (the raw column's) name, e.g. ``"color"``.
      members: the group's covariates in level order (indices into ``feature_names``).
      feature_names: the model's covariate names.

    Returns:
      One label per member: its name without the column's ``"<name>="`` prefix
      (``"color=D"`` -> ``"D"``, ``"color=other"`` -> ``"other"``), ``"missing"`` for the
      ``"<name> missing"`` indicator, any other name as it is.
    """
    out = []
    for j in members:
        f = str(feature_names[j])
        if f.startswith(f"{name}="):
            out.append(f[len(name) + 1:])
        elif f == f"{name} missing":
            out.append("missing")
        else:
            out.append(f)
    return out


def shape_terms(model) -> list:
    """The shape terms of a model (:mod:`jaxtree.shapes`) in original units, in the order
    they were chosen; ``[]`` for a model without shapes.

    Each term is a dict with one entry per axis (1 for a main shape, 2 for a pair) in
    ``features``, ``knots`` and ``levels``, and the term's ``values``:

    * ``features``: the axes' names: a covariate's name, or a categorical column's for its
      group (:func:`jaxtree.shapes.axis_name`: ``f(color)`` reads all of ``color``'s level
      covariates).
    * ``knots``: a numeric axis's hat centres in the covariate's units (float64 array); a
      categorical group's axis: its level labels (:func:`level_labels`: ``["D", "E",
      "other", "missing"]``), one per level in the encoding's order.
    * ``levels``: a group axis's level labels (the same list as its ``knots``), None for a
      numeric axis; e.g. ``(None,)`` for ``f(x1)``, ``(["D", "E"],)`` for ``f(color)``,
      ``(None, ["D", "E"])`` for ``f(carat, color)``.
    * ``values``: the term's contribution to ``y`` (in ``y``'s units) at the knots, float64
      ``(len(knots[0]),)`` or ``(len(knots[0]), len(knots[1]))``: along a numeric axis the
      shape is the linear interpolation of these values between knots (flat outside the
      training range); along a group axis entry ``l`` is level ``l``'s value (a one-value-
      per-level table, e.g. ``values[2]`` is ``f(color)`` for the third level). A row whose
      column has no level set (an unseen level of a column without an ``other`` level, or a
      missing value where training had none) is not in the table: it is at the shape's knot
      0, where a fitted term is 0 (every training row has a level);
      :func:`jaxtree.shapes.host_terms` has it.
    """
    _check_model(model)
    if getattr(model, "shapes", None) is None:
        return []
    spec = model.shape_spec
    x_min = np.asarray(model.x_min, np.float64)
    x_scale = np.asarray(model.x_scale, np.float64)
    names = tuple(str(n) for n in model.feature_names)
    out = []
    for feats, coef in shapes_.host_terms(model.shapes, spec):
        n = spec.n1 if len(feats) == 1 else spec.n2
        values = float(model.y_scale) * np.asarray(coef, np.float64)
        axes, knots, levels = [], [], []
        for a, j in enumerate(feats):
            group = shapes_.group_at(spec, j)
            if group is None:
                axes.append(names[j])
                knots.append(x_min[j] + np.linspace(0.0, 1.0, n) / x_scale[j])
                levels.append(None)
                continue
            name, members = group
            labels = level_labels(name, members, names)
            axes.append(name)
            knots.append(labels)
            levels.append(labels)
            # level l (1-based) sits exactly on knot l (shapes.view); knot 0: no level set
            values = np.take(values, np.arange(1, len(members) + 1), axis=a)
        out.append({"features": tuple(axes), "knots": knots, "levels": tuple(levels),
                    "values": values})
    return out


def _level_ticks(ax, which: str, labels, ticks=None) -> None:
    """A group axis's ticks: one per level, at ``ticks`` (default ``0, 1, ...``), labelled
    (slanted when they would crowd)."""
    ticks = np.arange(len(labels)) if ticks is None else ticks
    rotate = 45 if max((len(str(v)) for v in labels), default=0) * len(labels) > 24 else 0
    if which == "x":
        ax.set_xticks(ticks, labels, rotation=rotate, ha="right" if rotate else "center")
    else:
        ax.set_yticks(ticks, labels)


def plot_shapes(model, *, columns: int = 4):
    """Plots every shape term: a curve for a one-covariate shape, bars by level for a
    categorical group's shape (``f(color)``), a heat map for a pair (a group axis's cells
    labelled by level).

    Args:
      model: a fitted model with shape terms.
      columns: the most subplots per row of the figure.

    Returns:
      The matplotlib ``Figure``.

    Raises:
      ImportError: without matplotlib. ValueError: for a model without shape terms.
    """
    terms = shape_terms(model)
    if not terms:
        raise ValueError("this model has no shape terms (fit with TreeRegressor(shapes=...)).")
    plt = require("matplotlib.pyplot", "plotting")
    cols = min(columns, len(terms))
    rows = -(-len(terms) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False)
    for ax, t in zip(axes.ravel(), terms):
        if len(t["features"]) == 1 and t["levels"][0] is not None:  # one value per level
            labels = t["levels"][0]
            ax.bar(np.arange(len(labels)), t["values"], width=0.6, color="#3b6fb6")
            ax.axhline(0.0, color="0.3", lw=0.8)
            _level_ticks(ax, "x", labels)
            ax.set_xlabel(t["features"][0])
            ax.set_title(f"f({t['features'][0]})", fontsize=9)
        elif len(t["features"]) == 1:
            ax.plot(t["knots"][0], t["values"], marker=".")
            ax.set_xlabel(t["features"][0])
            ax.set_title(f"f({t['features'][0]})", fontsize=9)
        else:
            (ka, kb), v = t["knots"], t["values"]
            la, lb = t["levels"]
            vmax = float(np.abs(v).max()) or 1.0
            if la is None and lb is None:
                im = ax.pcolormesh(kb, ka, v, shading="gouraud", cmap="RdBu_r",
                                   vmin=-vmax, vmax=vmax)
            else:  # a group axis: one cell per level at 0, 1, ..., labelled
                ya = np.arange(len(la)) if la is not None else ka
                xb = np.arange(len(lb)) if lb is not None else kb
                im = ax.pcolormesh(xb, ya, v, shading="nearest", cmap="RdBu_r",
                                   vmin=-vmax, vmax=vmax)
                if la is not None:
                    _level_ticks(ax, "y", la)
                if lb is not None:
                    _level_ticks(ax, "x", lb)
            fig.colorbar(im, ax=ax)
            ax.set_xlabel(t["features"][1])
            ax.set_ylabel(t["features"][0])
            ax.set_title(f"f({', '.join(t['features'])})", fontsize=9)
    for ax in axes.ravel()[len(terms):]:
        ax.axis("off")
    fig.tight_layout()
    return fig


def plot_path(path, ax=None):
    """Plots a size path: training and held-out MSE against the number of operations (or
    of shape terms), the size-versus-error picture of symbolic-regression tools.

    Args:
      path: ``est.path_`` or ``est.shape_path_`` (a fit with ``validation_fraction``), or the
        estimator itself (its ``path_``); a :class:`jaxtree.TreeClassifier`'s path plots its
        held-out loss (one pair of curves per class for a one-versus-rest model).
      ax: a matplotlib Axes to draw on; a new figure when None.

    Returns:
      The matplotlib ``Figure``.

    Raises:
      ValueError: if there is no path (fit with ``validation_fraction`` to get one).
    """
    rows = getattr(path, "path_", path)
    if not rows:
        raise ValueError("no size path: fit with validation_fraction set to record one "
                         "(est.path_, est.shape_path_).")
    # A one-versus-rest classifier's path_ is one path per class.
    paths = [(f"class {i}: ", r) for i, r in enumerate(rows)] if isinstance(rows[0], list) \
        else [("", rows)]
    fig, ax = _axes(ax, (5.0, 3.2))
    for label, rows in paths:
        key = "n_ops" if "n_ops" in rows[0] else "n_shapes"
        loss = "mse" if "train_mse" in rows[0] else "loss"  # a classifier's: log-loss or ramp
        size = np.asarray([r[key] for r in rows], np.float64)
        ax.plot(size, [r[f"train_{loss}"] for r in rows], marker="o", label=label + "training")
        ax.plot(size, [r[f"val_{loss}"] for r in rows], marker="s", label=label + "held out")
    ax.set_xlabel("operations" if key == "n_ops" else "shape terms")
    ax.set_ylabel("MSE" if loss == "mse" else "loss")
    ax.legend()
    ax.grid(True, alpha=0.3)
    return fig


# ------------------------------------------------------------------------- per-term view


_evaluate_jit = jax.jit(prog.evaluate, static_argnames=("basis",))
"""The tree's ``w0 + T(u)`` as one program (eagerly, :func:`term_values`' first call compiled
about 48 small programs: 1.9 s on diabetes' default model against 0.4 s)."""


def term_values(model, X, *, indicators: Optional[Mapping[int, str]] = None) -> list:
    """The model as a sum of top-level terms, each evaluated at ``X`` (EBM-style global view).

    The terms are those of the printed formula (:meth:`TreeModel.formula
    <jaxtree.model.TreeModel.formula>`, :func:`jaxtree._formula.terms`), named as it names
    them: the shape terms (``f(x1)``, :mod:`jaxtree.shapes`) and the tree's top-level
    summands in the covariates' own units (``3·[c = red]``, ``-2.04·cos(π·t/9.97)``; equal
    terms merged, a product one term). Each is evaluated exactly (its unrounded numbers), on
    ``X`` clipped to the training range as ``predict`` clips it. The prediction is ``constant
    + sum of the terms`` (``"identity"`` target transform; for ``"log"`` it is the log
    prediction before the back-transform, for ``"square"`` the square), where it lies in the
    training targets' range; a regressor's ``predict`` clips it to that range.

    Args:
      model: a fitted :class:`jaxtree.model.TreeModel`; X: ``(n, p)`` covariates (the encoded
        matrix for a model of a raw table).
      indicators: ``{covariate index: label}`` of 0/1 covariates (the estimator passes its
        table encoding's), named ``[label]`` as in the formula; a label None marks a numeric
        column of two values, whose leaves are lines in it.

    Returns:
      A list of dicts, largest share first: ``term`` (the formula's text of the term, with
      its sign), ``features`` (names of the model's covariates it reads; a categorical
      group's shape ``f(color)``: all of its column's level covariates, ``color=D``, ...,
      :func:`jaxtree._formula.shape_features`), ``values`` (float64
      ``(n,)``, the term's contribution in ``y``'s units, centred on ``X``), ``mean_abs``
      (mean absolute centred contribution, EBM's importance) and ``share`` (its variance over
      the sum of the terms' variances); and, last, a ``constant`` entry with the rest of the
      prediction.
    """
    _check_model(model)
    h = _Host(model)
    x = np.asarray(X, np.float64)
    if x.ndim != 2 or x.shape[1] != h.x_min.shape[0]:
        raise ValueError(f"X must have shape (n, {h.x_min.shape[0]}); got {x.shape}.")
    u = np.clip((x - h.x_min) * h.x_scale, 0.0, 1.0)
    z = h.x_min + u / h.x_scale  # x clipped to the training range, as predict clips it
    r = _formula.build(model, indicators=indicators)
    tree = _formula.tree_term_values(r, z)
    shape_vals = []
    if r.shape_names:
        spec = model.shape_spec
        for feats, _ in shapes_.host_terms(model.shapes, spec):
            tid = feats[0] if len(feats) == 1 else h.x_min.shape[0] + spec.pairs.index(tuple(feats))
            one = model.shapes._replace(order=np.asarray([tid]), n_terms=np.asarray(1),
                                        intercept=np.asarray(0.0))
            shape_vals.append(h.y_scale * host_shapes.evaluate(one, u, spec))
    # the prediction before the target's back-transform: y_center + y_scale (w0 + T + shapes):
    # on the host (numpy, float64) unless the basis has a custom function (sixty-fifth
    # session: the compiled tree's values took 0.2-0.4 s to compile at a first explain)
    inner = select.host_tree_values(model.program, u, model.basis)  # w0 + T
    if inner is None:
        dt = np.asarray(model.x_min).dtype
        uj = np.asarray(u, dt)  # a host array: the program takes it (no cast to compile)
        inner = np.asarray(_evaluate_jit(model.program, uj, model.basis), np.float64)
    if model.shapes is not None:
        inner = inner + float(model.shapes.intercept)
    total = h.y_center + h.y_scale * inner + sum(shape_vals, np.zeros(len(x)))
    out = []
    for t in _formula.terms(r):
        val = tree[t.key[1]] if t.key[0] == "tree" else shape_vals[t.key[1]]
        centred = val - val.mean()
        total = total - centred
        out.append({"term": t.text, "features": [h.names[j] for j in t.features],
                    "values": centred, "mean_abs": float(np.mean(np.abs(centred))),
                    "var": float(np.var(val))})
    var_sum = sum(r_["var"] for r_ in out) or 1.0
    for row in out:
        row["share"] = row.pop("var") / var_sum
    out.sort(key=lambda row: -row["share"])  # stable: the formula's order among equals
    out.append({"term": "constant", "features": [], "values": total, "mean_abs": 0.0,
                "share": 0.0})
    return out


def _term_axes(idx, spec) -> list:
    """The axes a term reading covariates ``idx`` is drawn on: a categorical group (of
    ``spec``, :func:`jaxtree.shapes.group_at`) whose every level covariate it reads is one axis
    ``("group", name, members)`` (the term is a function of the column's level), any other
    covariate its own ``("x", j)``; in the order of ``idx``."""
    groups = [g for g in (getattr(spec, "groups", ()) or ()) if set(g[1]) <= set(idx)]
    out, done = [], set()
    for j in idx:
        if j in done:
            continue
        group = next((g for g in groups if j in g[1]), None)
        if group is None:
            out.append(("x", j))
            done.add(j)
        else:
            out.append(("group", group[0], tuple(group[1])))
            done |= set(group[1])
    return out


def _level_positions(x, name: str, members, names) -> tuple:
    """``(position, labels)``: each row's level of a categorical group as a position
    (``l - 1`` for level ``l``, -1 for a row with no level set) and the labels of the
    positions ``-1, 0, 1, ...`` (``"(none)"``, then :func:`level_labels`)."""
    on = np.asarray(x, np.float64)[:, list(members)] > 0.5
    pos = np.where(on.any(1), np.argmax(on, 1), -1)
    return pos, ["(none)"] + level_labels(name, members, names)


def _title(text: str, share: float, width: int = 38) -> str:
    """A panel's title: the term as the formula writes it, wrapped at its spaces (never cut:
    joining the lines with one space gives the term back), and its share."""
    import textwrap

    lines = textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)
    return "\n".join(lines or [text]) + f"  ({100 * share:.0f}%)"


def plot_terms(model, X, *, columns: int = 4, max_terms: int = 12,
               indicators: Optional[Mapping[int, str]] = None):
    """One panel per top-level term (:func:`term_values`), titled with the term as the formula
    writes it (wrapped, never cut) and its share of the explained variance: its contribution
    against its covariate (one numeric covariate), two bars for a term on one 0/1 indicator
    (its value at 0 and at 1: an indicator has no values in between), a bar per level for a
    categorical group's shape (``f(color)``: its mean over ``X``'s rows of each level), or
    coloured over its first two axes (more; a group's axis by level, labelled), in ``X``'s
    units.

    Args:
      model: a fitted :class:`jaxtree.model.TreeModel`; X: ``(n, p)`` covariates (encoded).
      columns: panels per row. max_terms: the largest terms drawn.
      indicators: ``{covariate index: label}`` of 0/1 covariates (as :func:`term_values`).

    Returns:
      The matplotlib ``Figure``.

    Raises:
      ValueError: for a constant model (no terms). ImportError: without matplotlib.
    """
    terms = [t for t in term_values(model, X, indicators=indicators)
             if t["term"] != "constant"][:max_terms]
    if not terms:
        raise ValueError("the model has no terms to plot (a constant model).")
    plt = require("matplotlib.pyplot", "plotting")
    x = np.asarray(X, np.float64)
    names = list(model.feature_names)
    ind = {j: v for j, v in dict(indicators or {}).items() if v is not None}  # labelled
    cols = min(columns, len(terms))
    rows = -(-len(terms) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 2.9 * rows), squeeze=False)
    spec = model.shape_spec if getattr(model, "shapes", None) is not None else None
    for ax, t in zip(axes.ravel(), terms):
        idx = [names.index(f) for f in t["features"]]
        parts = _term_axes(idx, spec)
        if len(parts) == 1 and parts[0][0] == "group":  # a categorical column: a bar per level
            _, name, members = parts[0]
            pos, labels = _level_positions(x, name, members, names)
            at = np.arange(-1, len(members))
            vals = [float(t["values"][pos == k].mean()) if (pos == k).any() else np.nan
                    for k in at]
            if not (pos < 0).any():  # no row without a level: no bar for it
                at, vals, labels = at[1:], vals[1:], labels[1:]
            ax.bar(at, vals, width=0.6, color="#3b6fb6")
            ax.axhline(0.0, color="0.3", lw=0.8)
            _level_ticks(ax, "x", labels, at)
            ax.set_xlabel(name)
        elif len(parts) >= 2 and any(a[0] == "group" for a in parts[:2]):  # by level
            coords = [_level_positions(x, a[1], a[2], names)[0] if a[0] == "group"
                      else x[:, a[1]] for a in parts[:2]]
            sc = ax.scatter(coords[0], coords[1], c=t["values"], s=4, cmap="RdBu_r")
            fig.colorbar(sc, ax=ax)
            for a, coord, axis in zip(parts[:2], coords, ("x", "y")):
                if a[0] == "group":
                    at, labels = np.arange(-1, len(a[2])), _level_positions(x, *a[1:], names)[1]
                    if not (coord < 0).any():  # no row without a level: no tick for it
                        at, labels = at[1:], labels[1:]
                    _level_ticks(ax, axis, labels, at)
                getattr(ax, f"set_{axis}label")(a[1] if a[0] == "group" else names[a[1]])
        elif len(idx) == 1 and idx[0] in ind:  # a 0/1 indicator: its two values
            on = x[:, idx[0]] > 0.5
            vals = [float(t["values"][~on].mean()) if (~on).any() else np.nan,
                    float(t["values"][on].mean()) if on.any() else np.nan]
            ax.bar([0, 1], vals, width=0.5, color=["0.6", "#3b6fb6"])
            ax.axhline(0.0, color="0.3", lw=0.8)
            ax.set_xticks([0, 1], ["no", "yes"])
            ax.set_xlim(-0.6, 1.6)
            ax.set_xlabel(f"[{ind[idx[0]]}]")
        elif len(idx) == 1:
            order = np.argsort(x[:, idx[0]], kind="stable")
            ax.plot(x[order, idx[0]], t["values"][order])
            ax.set_xlabel(t["features"][0])
        else:
            sc = ax.scatter(x[:, idx[0]], x[:, idx[1]], c=t["values"], s=4, cmap="RdBu_r")
            fig.colorbar(sc, ax=ax)
            ax.set_xlabel(t["features"][0])
            ax.set_ylabel(t["features"][1])
        ax.set_title(_title(t["term"], t["share"]), fontsize=8)
    for ax in axes.ravel()[len(terms):]:
        ax.axis("off")
    fig.tight_layout()
    return fig
