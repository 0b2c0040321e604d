r"""The printed formula: a fitted tree in the covariates' original units, simplified and rounded.

Why one long file (over 800 lines): the four rewriting steps below work on one expression
type and share its helpers (unit folding, indicator algebra, rounding bounds); split into
modules they would pass that private representation between them.

A fitted model predicts ``y = c + s (w0 + T(u))`` with ``u_j = (x_j - m_j) a_j`` the covariate
min-max scaled to ``[0, 1]`` (:mod:`jaxtree.model`). This module rewrites that expression
exactly, then rounds it:

1. **Original units.** Every leaf ``w phi_i(u_j)`` is written in ``x_j`` itself, its scale
   folded into the leaf's coefficient: a truncated cubic ``(u - t)_+^3 = a^3 (x - K)_+^3`` with
   the knot ``K = m + t/a`` (``(dep_time - 1730)₊³``), a power ``u^d = a^d (x - m)^d`` (``x``
   alone for ``d = 1``, the shift merged into the constant), a hat ``hat(x; K ± h)`` (peak at
   ``K``, zero beyond ``K ± h``), a sine ``sin(kπ·(x - m)/R)`` with ``R`` the training range
   (``sin(kπx)`` when ``m = 0, R = 1``), a family on the original values (``log(r)``, ``r⁻²``)
   as ``A g(x) + B``; any other family as its name at ``(x - m)/R``.
2. **Indicators.** A 0/1 covariate of the table encoding (:mod:`jaxtree._inputs.encoding`) takes two
   values only, so any leaf on it is ``phi(0) + (phi(1) - phi(0)) x``: it prints as
   ``[carrier = EV]`` (or ``[dep_time missing]``) times its coefficient, the rest merged into
   the constant. A numeric column that took two values in training (the encoding's
   ``two_valued``; :func:`indicator_labels` gives it the label None) prints the same way as
   a line in the column itself, ``1.5·am``; there "the training range" below means its two
   values (the check points take them), where the line is the leaf.
3. **Folding and merging.** Products carry one coefficient (the weights of their factors and
   of ``y``'s scale multiplied); a sum inside a product is divided by its largest term (over
   the training box), which then reads without a coefficient; equal terms of a sum are merged
   and constants collected; terms are listed largest first.
4. **Rounding.** Every number is rounded to the fewest significant digits ``d`` (the same ``d``
   for all) for which the rounded formula differs from the exact one by at most
   ``tol/2 * y_bound * y_scale`` at :data:`N_CHECK` points drawn uniformly in the training
   box (indicators at 0 and 1); ``y_bound * y_scale`` is half the training range of the
   target (``TreeModel.y_bound``: the search maps ``y`` into ``[-y_bound, y_bound]``) (of
   ``log y`` for a ``"log"`` target, of ``y²`` for ``"square"``). The factor 2 is a margin for the points between the
   checked ones. So **the printed formula changes no value of the fitted function inside the
   training range by more than** ``tol`` (default :data:`DEFAULT_TOL` = 0.1 %) **of the
   target's half-range**. Outside the training range ``predict`` clips the covariates
   (``clip=True``) and the formula does not; a regressor's ``predict`` also clips the
   prediction to the training targets' range (:func:`jaxtree.model.predict`), so the formula
   is ``predict(..., clip=False)`` inside the training box.

Shape terms (:mod:`jaxtree.shapes`) print by name (``f(x1)``, in ``y``'s units; their tables
are ``TreeRegressor.shape_terms()``); their constant is merged into the formula's. A main
shape that is a coefficient prints as one, in the tree's notation, and merges with the tree's
equal terms: on an indicator (it reads only ``f(0)`` and ``f(1)``) ``(f(1) - f(0))·[c = G]``,
and on a covariate whose shape is a line (a two-valued column: :func:`jaxtree.shapes.
two_valued_linear`), or within a quarter of ``tol`` of one, ``c·x3``; the value at the lower
level (at ``x = 0``) goes into the constant, so the formula still holds to ``tol``. Pair
shapes and curves stay ``f(...)``.

The structure is built once in float64 on the host; :func:`text`, :func:`latex` and
:func:`sympy_expr` render the same rounded structure, so the printed formula,
``to_latex()`` and ``to_sympy(tol=...)`` agree number for number.
"""

from __future__ import annotations

import math
import re
from typing import Mapping, NamedTuple, Optional

import numpy as np

from jaxtree import _target
from jaxtree import basis as basis_
from jaxtree import program as prog
from jaxtree import shapes as shapes_

DEFAULT_TOL = 1e-3
"""Default rounding tolerance: a fraction of the target's half-range (``y_scale``)."""

N_CHECK = 4096
"""Points of the training box at which the rounding is checked."""

LINE_EPS = 16
"""A main shape whose knot values lie on a line to this many of its dtype's epsilon (times
its largest value) prints as a coefficient (:meth:`_Builder.linear_shapes`)."""

_SUP = basis_.SUPERSCRIPT
_SIMPLE = basis_.NO_PARENS
_PLAIN_NAME = re.compile(r"[\w.]+")


def quoted(name: str) -> str:
    """A covariate's name as a formula's text prints it: as it is when it is one word
    (letters, digits, ``_`` and ``.``: ``age``, ``Solar.R``, ``température``), else in
    backticks, as R quotes such names (``0.998·`price ($)```, not ``0.998·price ($)``,
    which reads as a product with ``($)``).

    Decision (fifty-eighth session; a new user's check): a DataFrame's column names are
    printed as given, and ``price ($)``, ``x*y`` or ``dep time`` made a term ambiguous. The
    sympy expression and the exports keep the names as they are (their symbols are the
    model's ``feature_names``)."""
    return name if _PLAIN_NAME.fullmatch(name) else "`" + name.replace("`", "'") + "`"


def indicator_labels(encoding) -> dict:
    """``{covariate index: label}`` for the two-valued covariates of a table encoding.

    Args:
      encoding: a :class:`jaxtree._inputs.encoding.EncodingSpec` (``est.encoding_``) or None.

    Returns:
      ``{j: "carrier = EV"}`` for a level, ``"carrier = other"`` for the grouped levels,
      ``"dep_time missing"`` for a missing indicator (each printed ``[label]``), and None for
      a numeric column that took exactly two values in training (``two_valued``: printed as
      itself); ``{}`` for None.

    Decision (fifty-seventh session): a numeric column of two values (a 0/1 flag, a one-hot
    column made before jaxtree, two levels coded as numbers) keeps them as the ends of its
    range (:func:`jaxtree._scaling.round_bounds`), so on the training rows any leaf on it is
    the line ``phi(0) + (phi(1) - phi(0)) u`` in its scaled value ``u``, and it prints as
    one, ``1.5·am`` (a coefficient on the column, the rest in the constant), as a main shape
    on it already did (:func:`jaxtree.shapes.two_valued_linear`), not as the basis function
    the search happened to choose (``hat(am; 0 ± 0.1111)``, ``cos(4π·am)``). The formula holds
    on the values the column took; at a value between them ``predict`` evaluates the leaf's
    own function, which the formula does not describe.
    """
    out, j = {}, 0
    for c in getattr(encoding, "columns", ()) or ():
        if c.kind == "numeric":
            if c.two_valued:
                out[j] = None
            j += 1
        else:
            for lv in c.levels:
                out[j] = f"{c.name} = {lv}"
                j += 1
            if c.other:
                out[j] = f"{c.name} = other"
                j += 1
        if c.indicator:
            out[j] = f"{c.name} missing"
            j += 1
    return out


# ------------------------------------------------------------------------- the structure
#
# A sum is a dict {factors: coefficient} plus a constant; ``factors`` is a sorted tuple of
# ``(factor, power)``; a factor is an atom ``("A", kind, j, i, params)`` (``i`` the global
# basis index or -1, ``params`` the floats that get rounded) or a normalised sum
# ``("S", const, ((factors, coef), ...))``. Everything is a tuple of numbers and strings, so
# equal terms compare and hash equal.


class _Sum:
    __slots__ = ("c", "t")

    def __init__(self, c=0.0, t=None):
        self.c = float(c)
        self.t = dict(t or {})


def _atom(kind, j, i=-1, params=()):
    return ("A", kind, int(j), int(i), tuple(float(p) for p in params))


class _Builder:
    """Reads a model once and builds, evaluates and renders its readable structure."""

    def __init__(self, model, indicators: Optional[Mapping[int, str]] = None,
                 n_check: int = N_CHECK, line_tol: float = 0.0):
        a = prog.to_numpy(model.program)
        self.line_tol = float(line_tol)  # a main shape this close to a line prints as it
        self.a = a
        self.model = model
        self.basis = model.basis
        self.names = tuple(str(n) for n in model.feature_names)
        self.x_min = np.asarray(model.x_min, np.float64).reshape(-1)
        self.x_scale = np.asarray(model.x_scale, np.float64).reshape(-1)
        self.y_center = float(np.asarray(model.y_center))
        self.y_scale = float(np.asarray(model.y_scale))
        self.target = _target.of(model)
        given = {int(j): v for j, v in dict(indicators or {}).items()
                 if 0 <= int(j) < len(self.names)}
        self.ind = {j: str(v) for j, v in given.items() if v is not None}
        self.two = {j for j, v in given.items() if v is None}  # two-valued: a line in x
        p = len(self.names)
        rng = np.random.default_rng(0)
        z = self.x_min + rng.uniform(size=(n_check, p)) / self.x_scale
        for j in self.ind:
            z[:, j] = rng.integers(0, 2, n_check)
        for j in self.two:  # the two values the column took: its range's ends
            z[:, j] = self.x_min[j] + rng.integers(0, 2, n_check) / self.x_scale[j]
        self.z = z
        self._cache: dict = {}
        self._atoms: dict = {}
        self.folded: set = set()  # shape terms printed as a coefficient (linear_shapes)

    # ---- leaves

    def _phi(self, i, j, u):
        fam, m = self.basis.locate(i)
        u = np.asarray(u, np.float64)
        if fam.per_feature:
            return np.asarray(fam.to_numeric(np, m, u, feature=j), np.float64)
        return np.asarray(fam.to_numeric(np, m, u), np.float64)

    def leaf(self, slot) -> _Sum:
        w = float(self.a["weight"][slot])
        j, i = int(self.a["feature"][slot]), int(self.a["basis"][slot])
        if w == 0.0:
            return _Sum()
        m, sc = self.x_min[j], self.x_scale[j]
        fam, mm = self.basis.locate(i)
        if j in self.ind:
            u = np.clip((np.array([0.0, 1.0]) - m) * sc, 0.0, 1.0)
            v0, v1 = self._phi(i, j, u)
            return _Sum(w * v0, {((_atom("ind", j), 1),): w * (v1 - v0)} if v1 != v0 else {})
        if j in self.two:  # u in {0, 1}: the line phi(0) + (phi(1) - phi(0)) (x - m) a
            v0, v1 = self._phi(i, j, np.array([0.0, 1.0]))
            slope = w * (v1 - v0) * sc
            return _Sum(w * v0 - slope * m, {((_atom("x", j), 1),): slope} if slope else {})
        R = 1.0 / sc
        if isinstance(fam, basis_.Powers):
            d = mm + 1
            if d == 1:
                return _Sum(-w * sc * m, {((_atom("x", j), 1),): w * sc})
            return _Sum(0.0, {((_atom("pow", j, d, (m,)), 1),): w * sc ** d})
        if isinstance(fam, basis_.TruncatedCubics):
            knot = m + float(fam.knots()[mm]) * R
            return _Sum(0.0, {((_atom("tcub", j, -1, (knot,)), 1),): w * sc ** 3})
        if isinstance(fam, basis_.Hats):
            return _Sum(0.0, {((_atom("hat", j, -1, (m + mm / (fam.n - 1) * R,
                                                      R / (fam.n - 1))), 1),): w})
        if isinstance(fam, (basis_.Sines, basis_.Cosines)):
            return _Sum(0.0, {((_atom("trig", j, i, (m, R)), 1),): w})
        if isinstance(fam, basis_.PowerLaws):
            amp, off = fam.affine_in_x(mm, j)
            if amp == 0.0:
                return _Sum(w * off)
            kind = "x" if fam.exponents[mm] == 1 else "plaw"
            return _Sum(w * off, {((_atom(kind, j, -1 if kind == "x" else i), 1),): w * amp})
        return _Sum(0.0, {((_atom("gen", j, i, (m, R)), 1),): w})

    # ---- algebra

    @staticmethod
    def add(x: _Sum, y: _Sum) -> _Sum:
        out = _Sum(x.c + y.c, x.t)
        for f, c in y.t.items():
            out.t[f] = out.t.get(f, 0.0) + c
        out.t = {f: c for f, c in out.t.items() if c != 0.0}
        return out

    def _monomial(self, s: _Sum):
        """``(coef, factors)`` with ``s = coef * prod(factors)``."""
        if s.c == 0.0 and len(s.t) == 1:
            (f, c), = s.t.items()
            return c, f
        # A sum: divide by its largest part over the box (the constant, or a term).
        parts = [(abs(s.c), (), s.c)] if s.c != 0.0 else []
        parts += [(float(np.max(np.abs(c * self.eval_factors(f)))), f, c) for f, c in s.t.items()]
        big, _, piv = max(parts, key=lambda r: (r[0], _order(r[1])))
        terms = tuple(sorted(((f, c / piv) for f, c in s.t.items()), key=lambda r: _order(r[0])))
        return piv, ((("S", s.c / piv, terms), 1),)

    def mul(self, x: _Sum, y: _Sum) -> _Sum:
        if not x.t or not y.t:
            k, other = (x.c, y) if not x.t else (y.c, x)
            if k == 0.0:
                return _Sum()
            return _Sum(k * other.c, {f: k * c for f, c in other.t.items()})
        cx, fx = self._monomial(x)
        cy, fy = self._monomial(y)
        powers: dict = {}
        for f, p in fx + fy:
            powers[f] = powers.get(f, 0) + p
        # A 0/1 indicator is its own square.
        fs = tuple(sorted(((f, 1 if f[0] == "A" and f[1] == "ind" else p)
                           for f, p in powers.items()), key=lambda r: _order(r[0])))
        return _Sum(0.0, {fs: cx * cy})

    def build(self) -> _Sum:
        a = self.a
        if int(a["n_slots"]) == 0:
            tree = _Sum()
        else:
            def rec(slot):
                op = int(a["op"][slot])
                if op == prog.LEAF:
                    return self.leaf(slot)
                lhs, rhs = rec(int(a["left"][slot])), rec(int(a["right"][slot]))
                return self.add(lhs, rhs) if op == prog.ADD else self.mul(lhs, rhs)
            tree = rec(0)
        inner = self.add(_Sum(float(a["intercept"])), tree)
        if getattr(self.model, "shapes", None) is not None:
            inner.c += float(np.asarray(self.model.shapes.intercept))
            inner = self.add(inner, self.linear_shapes())
        s = self.y_scale
        return _Sum(self.y_center + s * inner.c, {f: s * c for f, c in inner.t.items()})

    def linear_shapes(self) -> _Sum:
        """The main shape terms that are a coefficient, as tree terms (scaled units), their
        value at the lower level in the constant; records their indices in ``self.folded``.

        A main shape on an indicator reads only its values at 0 and 1: ``f(0) + (f(1) - f(0))
        [c = G]``. A main shape whose knot values lie on a line (:func:`jaxtree.shapes.
        two_valued_linear` makes them so on a two-valued covariate) is that line over the
        training range, ``f(x) = b_0 + (b_end - b_0) (x - m) a``: ``c·x`` (to
        :data:`LINE_EPS` times the dtype's epsilon of its largest value, float rounding).
        A main shape within ``line_tol`` (the shapes' units) of its least-squares line at
        every knot prints as that line too: a shape is linear between its knots, so that
        is its largest change over the whole range (:func:`build`'s decision). Pairs and
        curves stay shapes."""
        out = _Sum()
        model = self.model
        if not int(model.shapes.n_terms):
            return out
        eps = LINE_EPS * float(np.finfo(np.asarray(model.shapes.main).dtype).eps)
        for i, (feats, coef) in enumerate(shapes_.host_terms(model.shapes, model.shape_spec)):
            if len(feats) != 1 or shapes_.group_at(model.shape_spec, int(feats[0])):
                continue  # a pair, or a categorical group's term (one value per level)
            j = int(feats[0])
            m, sc = self.x_min[j], self.x_scale[j]
            if j in self.ind:
                u = np.clip((np.array([0.0, 1.0]) - m) * sc, 0.0, 1.0)
                v0, v1 = _hat_sum(coef, u)
                term = _Sum(v0, {((_atom("ind", j), 1),): v1 - v0} if v1 != v0 else {})
            else:
                t = np.linspace(0.0, 1.0, len(coef))
                b0, b1 = coef[0], coef[-1] - coef[0]  # the line through the ends
                exact = eps * max(1.0, float(np.max(np.abs(coef))))
                if np.max(np.abs(coef - b0 - b1 * t)) > exact:
                    b1, b0 = np.polyfit(t, coef, 1)  # the least-squares line, within line_tol
                    if not np.max(np.abs(coef - b0 - b1 * t)) <= self.line_tol:
                        continue  # a curve
                slope = b1 * sc
                term = _Sum(b0 - slope * m, {((_atom("x", j), 1),): slope} if slope else {})
            out = self.add(out, term)
            self.folded.add(i)
        return out

    # ---- evaluation (float64, on the check points)

    def eval_atom(self, atom, z):
        if z is self.z:  # the check points: every rounding trial re-uses the unchanged atoms
            hit = self._atoms.get(atom)
            if hit is None:
                hit = self._atoms[atom] = self._eval_atom(atom, z)
            return hit
        return self._eval_atom(atom, z)

    def _eval_atom(self, atom, z):
        _, kind, j, i, pr = atom
        x = z[:, j]
        if kind in ("x", "ind"):
            return x
        if kind == "pow":
            return (x - pr[0]) ** i
        if kind == "tcub":
            return np.maximum(x - pr[0], 0.0) ** 3
        if kind == "hat":
            return np.maximum(1.0 - np.abs(x - pr[0]) / pr[1], 0.0)
        if kind == "trig":
            fam, mm = self.basis.locate(i)
            return getattr(np, fam.sympy_name)((mm + 1) * math.pi * (x - pr[0]) / pr[1])
        if kind == "plaw":
            fam, mm = self.basis.locate(i)
            e = fam.exponents[mm]
            with np.errstate(all="ignore"):
                return np.log(x) if e == 0 else np.power(x, e)
        return self._phi(i, j, (x - pr[0]) / pr[1])  # "gen"

    def eval_factor(self, f, z):
        if f[0] == "A":
            return self.eval_atom(f, z)
        _, c, terms = f
        out = np.full(z.shape[0], c)
        for fs, k in terms:
            out = out + k * self.eval_factors(fs, z)
        return out

    def eval_factors(self, fs, z=None):
        if z is None:  # the check points: cached (the builder evaluates terms repeatedly)
            key = fs
            if key not in self._cache:
                self._cache[key] = self.eval_factors(fs, self.z)
            return self._cache[key]
        out = np.ones(z.shape[0])
        for f, p in fs:
            out = out * self.eval_factor(f, z) ** p
        return out

    def eval_sum(self, s: _Sum, z):
        out = np.full(z.shape[0], s.c)
        for fs, c in s.t.items():
            out = out + c * self.eval_factors(fs, z)
        return out


def _hat_sum(coef, u):
    """``sum_m coef_m hat_m(u)`` at scaled ``u`` in ``[0, 1]`` (the hats of a main shape)."""
    n = len(coef)
    return np.maximum(1.0 - np.abs(np.asarray(u)[:, None] * (n - 1) - np.arange(n)), 0.0) @ coef


def _order(fs):
    """A sort key for factors (tuples of numbers and strings): their repr is total and stable."""
    return repr(fs)


# ----------------------------------------------------------------------------- rounding


def _r(v: float, d: int) -> float:
    """``v`` to ``d`` significant digits (0 digits: 0)."""
    if d == 0:
        return 0.0
    return float(f"{v:.{d}g}") if v != 0.0 and math.isfinite(v) else v


class _Rounder:
    """Rounds every number of a structure, the ``n``-th number met (in a fixed walk of the
    exact structure) to ``digits[n]`` significant digits (``default`` when absent). Records
    which numbers may become 0 (constants and the shifts ``m`` of ``x - m``)."""

    def __init__(self, digits: dict, default: int):
        self.digits, self.default, self.n, self.zeroable = digits, default, 0, []
        self.seen: dict = {}

    def __call__(self, v: float, zeroable: bool = False, key=None) -> float:
        """Rounds the next number; ``key`` names a number shared by several places (a
        covariate's minimum or range), rounded alike everywhere."""
        if key is None:
            key = self.n
            self.n += 1
        if key not in self.seen:
            self.seen[key] = None
            if zeroable and v != 0.0:
                self.zeroable.append(key)
        return _r(v, self.digits.get(key, self.default))

    def factor(self, f):
        if f[0] == "A":
            kind, j, pr = f[1], f[2], f[4]
            if kind in ("pow", "trig", "gen"):  # (x_min_j, range_j): shared by the covariate
                keys = (("m", j), ("R", j))
                return f[:4] + (tuple(self(p, zeroable=k == 0, key=keys[k])
                                      for k, p in enumerate(pr)),)
            return f[:4] + (tuple(self(p) for p in pr),)
        _, c, terms = f
        c = self(c, zeroable=True)
        return ("S", c, tuple((self.factors(fs), self(k)) for fs, k in terms))

    def factors(self, fs):
        return tuple((self.factor(f), p) for f, p in fs)

    def sum(self, s: _Sum) -> _Sum:
        out = _Sum(self(s.c, zeroable=True))
        for fs, c in s.t.items():
            key = self.factors(fs)
            out.t[key] = out.t.get(key, 0.0) + self(c)
        return out


def _round_sum(s: _Sum, d: int, digits: Optional[dict] = None) -> _Sum:
    return _Rounder(digits or {}, d).sum(s)


def _choose_digits(b, exact: _Sum, smear, budget: float):
    """The fewest significant digits ``d`` for all numbers within ``budget`` on the check points,
    then, number by number (shifts and constants first, each tried at 0), fewer where the
    budget still holds. Returns ``(d, {number index: digits})``."""
    ref = b.eval_sum(exact, b.z)

    def err(d, digits):
        got = _round_sum(exact, d, digits)
        e = float(np.max(np.abs(b.eval_sum(got, b.z) - ref))) if len(ref) else 0.0
        if smear is not None:
            e += abs(math.log(_r(smear, d) / smear))
        return e

    for d in range(1, 18):
        if err(d, None) <= budget:
            break
    walk = _Rounder({}, d)
    walk.sum(exact)
    digits: dict = {}
    zero = set(walk.zeroable)
    order = walk.zeroable + [n for n in walk.seen if n not in zero]
    for n in order:
        for k in ([0] if n in zero else []) + list(range(1, d)):
            trial = {**digits, n: k}
            if err(d, trial) <= budget:
                digits = trial
                break
    return d, digits


class Readable:
    """A model's readable structure, rounded (what :func:`build` returns).

    Attributes:
      expr: the rounded sum (constant, terms) in ``y``'s units (of ``log y`` for a log target).
      digits: the significant digits used.
      tol: the tolerance (fraction of ``y_scale``) the digits were chosen for; None when
        ``digits`` was given.
      smearing: the rounded smearing factor of a ``"log"`` target, else None.
      transform: the model's target transform (``"identity"``, ``"log"``, ``"square"``).
      shape_names: ``f(x1)``, ``f(x1, x2)``: every shape term of the model, in its order
        (:func:`jaxtree.shapes.host_terms`). shown: the indices of those printed by name;
        the others are a coefficient among the tree's terms (:meth:`_Builder.linear_shapes`).
      shape_texts: the same names as the text prints them, covariates :func:`quoted`.
    """

    def __init__(self, builder, expr, digits, tol, smearing, shape_names, exact=None,
                 per_number=None, shape_texts=None):
        self.b, self.expr, self.digits, self.tol = builder, expr, digits, tol
        self.smearing, self.shape_names = smearing, shape_names
        self.shape_texts = list(shape_names if shape_texts is None else shape_texts)
        self.shown = tuple(i for i in range(len(shape_names)) if i not in builder.folded)
        self.transform = builder.target.name
        self.exact, self.per_number = exact, dict(per_number or {})


def check_digits(digits) -> None:
    """Refuses a ``digits`` that is not None or an int >= 1 (``formula``, ``law``)."""
    if digits is not None and (isinstance(digits, bool) or not isinstance(
            digits, (int, np.integer)) or digits < 1):
        raise ValueError(f"digits must be an int >= 1 (significant digits) or None (as few as "
                         f"tol allows); got {digits!r}.")


def check_tol(tol) -> None:
    """Refuses a rounding ``tol`` that is not a finite positive number (``formula``, ``law``)."""
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating)) or not (
            math.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive number (a share of the target's half-range, "
                         f"e.g. 1e-3); got {tol!r}.")


def build(model, *, tol: Optional[float] = DEFAULT_TOL, digits: Optional[int] = None,
          indicators: Optional[Mapping[int, str]] = None) -> Readable:
    """The readable, rounded structure of a (single, unbatched) model; see the module docstring.

    Args:
      model: a fitted :class:`jaxtree.model.TreeModel`.
      tol: float ``> 0``: the largest change of a prediction the rounding may cause, as a
        fraction of the target's half-range (``y_bound * y_scale``). Ignored when ``digits``
        is given.
      digits: a fixed number of significant digits instead of the tolerance.
      indicators: ``{covariate index: label}`` of the 0/1 covariates, a label None for a
        numeric column of two values (:func:`indicator_labels`).

    Raises:
      ValueError: for a ``tol`` that is not a positive number, or ``digits`` below 1.
    """
    if digits is not None:
        check_digits(digits)
    else:
        check_tol(tol)
    # Decision (fifty-eighth session): with a tolerance, a main shape within a quarter of it
    # of a line prints as the line (``0.997·a``, not ``f(a)``): a straight effect fitted by
    # shape terms (a small table's shapes-first order) printed as a term a reader could not
    # evaluate. A shape is linear between its knots, so its largest distance from the line
    # is at a knot; the rest of the tolerance is the rounding's (_choose_digits takes half).
    # With ``digits``, only exact lines (float rounding).
    bound = float(getattr(model, "y_bound", 1.0))  # the shapes' units: y_scale / y_bound
    line_tol = 0.0 if digits is not None else 0.25 * float(tol) * bound
    b = _Builder(model, indicators, line_tol=line_tol)
    exact = b.build()
    smear = b.target.smearing if b.target.name == "log" else None
    shape_names, shape_texts = [], []
    if getattr(model, "shapes", None) is not None and int(model.shapes.n_terms):
        shape_names = list(shapes_.term_names(model.shapes, model.shape_spec, b.names))
        shape_texts = list(shapes_.term_names(  # an indicator keeps its own name there
            model.shapes, model.shape_spec,
            tuple(n if j in b.ind else quoted(n) for j, n in enumerate(b.names))))
    per_number: dict = {}
    if digits is None:
        # tol is a fraction of the target's half-range: y_scale is that over y_bound
        half = b.y_scale * float(getattr(b.model, "y_bound", 1.0))
        digits, per_number = _choose_digits(b, exact, smear, 0.5 * float(tol) * half)
        used_tol = float(tol)
    else:
        digits, used_tol = int(digits), None
    return Readable(b, _round_sum(exact, digits, per_number), digits, used_tol,
                    None if smear is None else _r(smear, digits), shape_names, exact, per_number,
                    shape_texts)


# ------------------------------------------------------------------------------- text


def _num(v: float) -> str:
    """The (already rounded) number, positional where reasonable: 1730, 0.00123, 1.5e-07."""
    if v == 0.0:
        return "0"
    if 1e-5 <= abs(v) < 1e15:
        text = np.format_float_positional(v, trim="-")
        return text
    return np.format_float_scientific(v, trim="-", exp_digits=1).replace("e+", "e")


def _shifted(name: str, m: float) -> str:
    """``name - m`` (``name + m`` for a negative ``m``; ``name`` for 0)."""
    if m == 0.0:
        return name
    return f"{name} - {_num(m)}" if m > 0 else f"{name} + {_num(-m)}"


def _operand(text: str) -> str:
    one_name = len(text) > 1 and text[0] == text[-1] == "`" and text.count("`") == 2
    return text if one_name or _SIMPLE.fullmatch(text) else f"({text})"


def _sup(p: int) -> str:
    return str(int(p)).translate(_SUP)


def _atom_text(r: Readable, atom) -> str:
    b = r.b
    _, kind, j, i, pr = atom
    name = quoted(b.names[j])
    if kind == "ind":
        return f"[{b.ind[j]}]"
    if kind == "x":
        return name
    if kind == "pow":
        return _operand(_shifted(name, pr[0])) + _sup(i)
    if kind == "tcub":
        return f"({_shifted(name, pr[0])})₊³"
    if kind == "hat":
        return f"hat({name}; {_num(pr[0])} ± {_num(pr[1])})"
    if kind == "plaw":
        fam, mm = b.basis.locate(i)
        return basis_.power_name(fam.exponents[mm]).format(**basis_.render_fields(name))
    m, R = pr
    if m == 0.0 and R == 1.0:
        return b.basis.render(i, name)
    if kind == "trig":
        fam, mm = b.basis.locate(i)
        arg = _operand(_shifted(name, m)) if m != 0.0 else name
        k = "" if mm == 0 else str(mm + 1)
        return f"{fam.sympy_name}({k}π·{arg}{'' if R == 1.0 else '/' + _num(R)})"
    var = _shifted(name, m)
    var = var if R == 1.0 else f"{_operand(var)}/{_num(R)}"
    return b.basis.render(i, var)


def _factor_text(r: Readable, f, p: int) -> str:
    if f[0] == "A":
        text = _atom_text(r, f)
        return text if p == 1 else _operand_pow(text) + _sup(p)
    _, c, terms = f
    inner = _sum_text(r, c, dict(terms), const_last=True)  # (x1 - 10), not (-10 + x1)
    return f"({inner})" + ("" if p == 1 else _sup(p))


def _operand_pow(text: str) -> str:
    # f(...)² and [..]² read fine; a bare power or product needs parentheses.
    if _SIMPLE.fullmatch(text) or (text.endswith(")") and text.count("(") == 1) or (
            text.startswith("[") and text.endswith("]")):
        return text
    return f"({text})"


def _term_text(r: Readable, c: float, fs) -> tuple:
    """``(sign, text)`` of ``c * prod(fs)``."""
    body = "·".join(_factor_text(r, f, p) for f, p in fs)
    mag = abs(c)
    text = body if mag == 1.0 else f"{_num(mag)}·{body}"
    return ("-" if c < 0 else "+"), text


def _ordered(r: Readable, terms: dict):
    """Terms largest first over the check points (ties: a stable order)."""
    b = r.b
    size = {fs: float(np.max(np.abs(c * b.eval_factors(fs, b.z)))) if b.z.shape[0] else 0.0
            for fs, c in terms.items()}
    return sorted(terms.items(), key=lambda kv: (-size[kv[0]], _order(kv[0])))


def _sum_text(r: Readable, c: float, terms: dict, extra=(), const_last: bool = False) -> str:
    parts = []
    const = [("-" if c < 0 else "+", _num(abs(c)))] if c != 0.0 or (not terms and not extra) else []
    parts += [] if const_last else const
    parts += [("+", e) for e in extra]
    parts += [_term_text(r, k, fs) for fs, k in _ordered(r, terms)]
    parts += const if const_last else []
    return _join(parts)


def _join(parts) -> str:
    """``a - b + c`` from ``[(sign, text), ...]`` (a leading ``+`` is dropped)."""
    sign, first = parts[0]
    out = ("-" if sign == "-" else "") + first
    for sign, t in parts[1:]:
        out += f" {sign} {t}"
    return out


class Term(NamedTuple):
    """One top-level term of the printed formula (:func:`terms`).

    Attributes:
      sign: ``"+"`` or ``"-"``, as the formula joins it.
      body: the term without its sign: ``3·[c = red]``, ``2.04·cos(π·t/9.97)``, ``f(x1)``.
      features: the covariate indices (of the model's columns) it reads.
      key: what it is in the structure: ``("tree", factors)`` or ``("shape", i)`` (the
        ``i``-th shape term).
    """

    sign: str
    body: str
    features: tuple
    key: tuple

    @property
    def text(self) -> str:
        """The term as it reads alone: ``-2.04·cos(π·t/9.97)`` (a leading ``-`` only)."""
        return ("-" if self.sign == "-" else "") + self.body


def _features_of(fs) -> set:
    out = set()
    for f, _ in fs:
        if f[0] == "A":
            out.add(int(f[2]))
        else:
            for inner, _ in f[2]:
                out |= _features_of(inner)
    return out


def shape_features(spec, feats) -> tuple:
    """The covariates a shape term on ``feats`` (:func:`jaxtree.shapes.host_terms`'s) reads:
    each axis's covariate, a categorical group's axis all its level covariates in level order
    (``f(color)`` reads ``color=D``, ``color=E``, ...; :func:`jaxtree.shapes.group_at`)."""
    out = []
    for j in feats:
        group = shapes_.group_at(spec, int(j))
        out += [int(j)] if group is None else [int(m) for m in group[1]]
    return tuple(out)


def terms(r: Readable) -> list:
    """The top-level terms of the printed formula, in its order: the shape terms by name,
    then the tree's terms largest first. :func:`text` is the constant followed by these, so
    every view that lists terms (``path_``, ``explain``, plot titles, ``jaxtree show``) reads
    exactly as the formula. A term's ``features`` are the covariates it reads: a categorical
    group's shape (``f(color)``) all its column's level covariates (:func:`shape_features`)."""
    out = []
    model = r.b.model
    if r.shown:
        spec = model.shape_spec
        feats = [f for f, _ in shapes_.host_terms(model.shapes, spec)]
        out += [Term("+", r.shape_texts[i], shape_features(spec, feats[i]), ("shape", i))
                for i in r.shown]
    for fs, k in _ordered(r, r.expr.t):
        sign, body = _term_text(r, k, fs)
        out.append(Term(sign, body, tuple(sorted(_features_of(fs))), ("tree", fs)))
    return out


def tree_term_values(r: Readable, z) -> dict:
    """``{factors: values}``: each tree term of :func:`terms` (its ``key[1]``) evaluated
    exactly (its unrounded coefficients and numbers, the exact terms rounding merged into it
    summed) at covariates ``z`` (float64 ``(n, p)`` in the model's units, already clipped to
    the training box as ``predict`` clips), in the units of ``y`` (``log y``, ``y²``)."""
    walk = _Rounder(r.per_number, r.digits)  # the walk of _round_sum: exact term -> its key
    walk(r.exact.c, zeroable=True)
    out: dict = {}
    for fs, c in r.exact.t.items():
        key = walk.factors(fs)
        walk(c)
        v = c * r.b.eval_factors(fs, z)
        out[key] = out[key] + v if key in out else v
    return out


def text(r: Readable, lhs: str = "y") -> str:
    """``y = ...``: the readable formula as text (``lhs``: the target's name, or a
    classifier's ``logit P(y = a)``): the constant, then :func:`terms`."""
    c = r.expr.c
    parts = [t[:2] for t in terms(r)]
    if c != 0.0 or not parts:
        parts.insert(0, ("-" if c < 0 else "+", _num(abs(c))))
    inner = _join(parts)
    if r.transform == "square":
        return f"{lhs} = √({inner})"
    if r.smearing is None:
        return f"{lhs} = {inner}"
    if r.smearing == 1.0:  # no bias to correct at this rounding (an exact law): exp alone
        return f"{lhs} = exp({inner})"
    return f"{lhs} = {_num(r.smearing)}·exp({inner})"


def leaf_texts(model, indicators: Optional[Mapping[int, str]] = None, digits: int = 2) -> dict:
    """``{slot: text}``: each leaf ``w phi(u_j)`` of the raw tree in the formula's notation
    (``x_j`` in its own units, indicators ``[c = red]``, numbers to ``digits`` significant
    digits), for drawings of the tree (:func:`jaxtree.export.plot_tree`): ``0.75·[c = red]``,
    ``-0.51·cos(π·t/9.97)``, ``0.2·t - 0.4``. In the tree's units (before ``y``'s scaling)."""
    r = build(model, digits=digits, indicators=indicators)
    b, a = r.b, r.b.a
    out = {}
    for slot in range(int(a["n_slots"])):
        if int(a["op"][slot]) == prog.LEAF:
            leaf = _round_sum(b.leaf(slot), digits)
            out[slot] = _sum_text(r, leaf.c, leaf.t, const_last=True)
    return out


# ------------------------------------------------------------------------------- LaTeX


def latex_var(name: str) -> str:
    """A covariate name as a LaTeX variable: ``x12`` -> ``x_{12}``, one letter as it is,
    anything else upright (``\\mathrm{}``, LaTeX's special characters escaped)."""
    m = re.fullmatch(r"([A-Za-z])_?(\d+)", name)
    if m:
        return f"{m.group(1)}_{{{m.group(2)}}}"
    if re.fullmatch(r"[A-Za-z]", name):
        return name
    escaped = re.sub(r"([_#$%&{}])", r"\\\1", name)
    return f"\\mathrm{{{escaped}}}"


def _tex_escape(s: str) -> str:
    out = s
    for a, bb in (("\\", "\\backslash "), ("_", "\\_"), ("%", "\\%"), ("&", "\\&"), ("#", "\\#"),
                  ("$", "\\$"), ("{", "\\{"), ("}", "\\}"), (" ", "\\ ")):
        out = out.replace(a, bb)
    return out


def _tex_num(v: float) -> str:
    t = _num(v)
    if "e" in t:
        mant, ex = t.split("e")
        return f"{mant} \\cdot 10^{{{int(ex)}}}"
    return t


def _tex_shift(name: str, m: float) -> str:
    if m == 0.0:
        return name
    return f"{name} - {_tex_num(m)}" if m > 0 else f"{name} + {_tex_num(-m)}"


def _atom_latex(r: Readable, atom) -> str:
    b = r.b
    _, kind, j, i, pr = atom
    name = latex_var(b.names[j])
    if kind == "ind":
        return f"[\\text{{{_tex_escape(b.ind[j]).replace(chr(92) + ' ', ' ')}}}]"
    if kind == "x":
        return name
    if kind == "pow":
        return (f"({_tex_shift(name, pr[0])})" if pr[0] else name) + f"^{{{i}}}"
    if kind == "tcub":
        return f"({_tex_shift(name, pr[0])})_+^{{3}}"
    if kind == "hat":
        return f"\\operatorname{{hat}}({name}; {_tex_num(pr[0])} \\pm {_tex_num(pr[1])})"
    fam, mm = b.basis.locate(i)
    if kind == "plaw":
        return fam.to_latex(mm, name).replace("\\langle ", "").replace(" \\rangle", "")
    m, R = pr
    if m == 0.0 and R == 1.0:
        return fam.to_latex(mm, name)
    var = _tex_shift(name, m)
    var = var if R == 1.0 else f"\\frac{{{var}}}{{{_tex_num(R)}}}"
    if kind == "trig":
        return f"{fam.latex_name}\\left({'' if mm == 0 else mm + 1}\\pi {var}\\right)"
    return fam.to_latex(mm, f"\\left({var}\\right)")


def _factor_latex(r: Readable, f, p: int) -> str:
    if f[0] == "A":
        t = _atom_latex(r, f)
        return t if p == 1 else f"\\left({t}\\right)^{{{p}}}"
    _, c, terms = f
    inner = _sum_latex(r, c, dict(terms), const_last=True)
    return f"\\left({inner}\\right)" + ("" if p == 1 else f"^{{{p}}}")


def _sum_latex(r: Readable, c: float, terms: dict, extra=(), const_last: bool = False) -> str:
    parts = []
    const = ([("-" if c < 0 else "+", _tex_num(abs(c)))]
             if c != 0.0 or (not terms and not extra) else [])
    parts += [] if const_last else const
    parts += [("+", e) for e in extra]
    for fs, k in _ordered(r, terms):
        body = " ".join(_factor_latex(r, f, p) for f, p in fs)
        parts.append(("-" if k < 0 else "+", body if abs(k) == 1.0 else f"{_tex_num(abs(k))}\\, {body}"))
    parts += const if const_last else []
    return _join(parts)


def latex(r: Readable, lhs: str = "y") -> str:
    """LaTeX of the same rounded structure as :func:`text` (``lhs`` already LaTeX)."""
    shapes = [f"f({', '.join(latex_var(n.strip()) for n in r.shape_names[i][2:-1].split(','))})"
              for i in r.shown]
    inner = _sum_latex(r, r.expr.c, r.expr.t, shapes)
    if r.transform == "square":
        return f"{lhs} = \\sqrt{{{inner}}}"
    if r.smearing is None:
        return f"{lhs} = {inner}"
    if r.smearing == 1.0:
        return f"{lhs} = \\exp\\left({inner}\\right)"
    return f"{lhs} = {_tex_num(r.smearing)}\\,\\exp\\left({inner}\\right)"


# ------------------------------------------------------------------------------- sympy


def sympy_expr(r: Readable, sp, custom=None):
    """The same rounded structure as a sympy expression in symbols named after the covariates
    (real; an indicator is its 0/1 covariate). A shape term printed by name (``f(x1)``) is in
    it exactly, as its sum of hats (:func:`jaxtree.export.to_sympy`'s form; its constant is in
    the rounded one); a shape printed as a coefficient is in it as in the text.

    Decision (fifty-eighth session; a new user's check): the shapes printed by name were left
    out, so ``to_sympy(tol=1e-3)`` of a model with shape terms was off ``predict`` by most
    of the target's half-range, while the docs call it the printed formula."""
    b = r.b
    syms = [sp.Symbol(n, real=True) for n in b.names]
    F = sp.Float

    def atom(a):
        _, kind, j, i, pr = a
        x = syms[j]
        if kind in ("x", "ind"):
            return x
        if kind == "pow":
            return (x - F(pr[0])) ** i
        if kind == "tcub":
            return sp.Max(x - F(pr[0]), 0) ** 3
        if kind == "hat":
            return sp.Max(0, 1 - sp.Abs(x - F(pr[0])) / F(pr[1]))
        fam, mm = b.basis.locate(i)
        if kind == "plaw":
            e = fam.exponents[mm]
            return sp.log(x) if e == 0 else x ** sp.nsimplify(e)
        u = (x - F(pr[0])) / F(pr[1])
        if kind == "trig":
            return getattr(sp, fam.sympy_name)((mm + 1) * sp.pi * u)
        return fam.to_sympy(mm, u, custom or {})

    def factor(f, p):
        if f[0] == "A":
            return atom(f) ** p
        _, c, terms = f
        return ssum(c, dict(terms)) ** p

    def ssum(c, terms):
        out = F(c)
        for fs, k in terms.items():
            term = F(k)
            for f, p in fs:
                term = term * factor(f, p)
            out = out + term
        return out

    inner = ssum(r.expr.c, r.expr.t)
    if r.shown:  # the shapes printed by name, exact, in y's units
        from jaxtree import export  # (export imports this module)

        inner = inner + F(b.y_scale) * export.shape_terms_sympy(
            b.model, syms, b, sp, terms=r.shown, intercept=False)
    if r.transform == "square":
        return sp.sqrt(inner)
    if r.smearing is None:
        return inner
    return F(r.smearing) * sp.exp(inner)
