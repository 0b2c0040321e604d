r"""Basis functions: the leaf vocabulary of a jaxtree formula.

Why one long file: each family's evaluation, bounds, text/LaTeX/sympy rendering and file
form must agree with each other, so a family is written in one place beside the rest
(the presets, binding to training ranges, custom functions).

A leaf of a jaxtree formula is ``w * phi_i(x_j)``: basis function ``i`` (of ``q``) applied to
covariate ``j``. Covariates are scaled to ``[0, 1]`` before the basis is applied, and the theory
(paper, Theorem 1) assumes ``|phi_i(x)| <= 1`` there, so every built-in function maps ``[0, 1]``
into ``[-1, 1]``.

A :class:`Basis` is an ordered tuple of *families*; its columns are the families in order and,
within a family, the functions in order:

=========================  ==========================================  ==============================
family                     functions                                   names (variable ``x``)
=========================  ==========================================  ==============================
``Hats(n)``, ``n >= 2``    ``max(0, 1 - |x - t_m| / h)``,              ``hat(x; 0.25)``
                           ``t_m = m / (n-1)``, ``m = 0..n-1``,
                           ``h = 1 / (n-1)`` (degree-1 B-splines)
``Sines(n)``               ``sin(i pi x)``, ``i = 1..n``               ``sin(πx)``, ``sin(3πx)``
``Cosines(n)``             ``cos(i pi x)``, ``i = 1..n``               ``cos(πx)``, ``cos(2πx)``
``Powers(degree)``         ``x, x^2, ..., x^degree``                   ``x``, ``x²``, ``x³``
``TruncatedCubics(n)``     ``(x - t_m)_+^3``,                          ``(x-0.1)₊³``
                           ``t_m = m / (n+1)``, ``m = 1..n``
``CustomFunction``         any elementwise ``jnp`` function            from the user's template
``PowerLaws(exponents)``   ``x^a`` (``log x`` for ``a = 0``)           ``⟨x⁻²⟩``, ``⟨log(x)⟩``
                           on the covariate's *original* values,
                           affine onto ``[-1, 1]`` per covariate;
                           ``normalise="ratio"``: the pure
                           ``x^a / max|x^a|``                          ``⟦x⁻²⟧``
``Decays(scales)``         ``exp(-x / (c (hi - lo)))``, affine         ``⟨exp(-x/0.25)⟩``
                           onto ``[-1, 1]``
=========================  ==========================================  ==============================

``PowerLaws`` and ``Decays`` (the ``"physics"`` preset, opt-in; issue 14) are described in the
design note above :class:`PowerLaws`: ``PowerLaws`` needs the covariates' training ranges
(:meth:`Basis.bind`, done by ``TreeRegressor.fit``), which are stored with the model.

The paper's basis (:func:`default_basis`) has ``q = 40``: 10 hats, ``sin(i pi x)`` and
``cos(i pi x)`` for ``i = 1..9``, ``x, x^2, x^3`` and 9 truncated cubics with knots
``0.1, ..., 0.9``.

Numerics. XLA's ``sin``/``cos`` cost about 9 ns per element on CPU, and the basis is evaluated on
millions of rows per search iteration, so this module never calls them: ``Sines`` and
``Cosines`` use the polynomial kernels of :mod:`jaxtree._trig` (an exact argument reduction,
Taylor polynomials in the reduced argument, and one complex product per non-power-of-two
frequency; the math and its measurements are in that module's docstring). Measured against
float64 numpy on ``[0, 1]``: max absolute error about ``3e-7`` in float32 and ``4e-16`` in
float64 for frequencies up to 20.

:meth:`Basis.evaluate_at` evaluates one function per element from a *parametric* formula (the
element's family and two parameters gathered from small constant tables, then a select among
the families' parametric forms), so it costs a few dozen flops per element instead of ``q``
evaluations.

One owner per formula. Each family class holds every form of its functions: the array
evaluation (``evaluate``), the parametric traced form (``params``, ``evaluate_params``), the
text name (``templates``, ``render``) and the exports that :mod:`jaxtree.export` asks it for
(``to_sympy``, ``to_latex``, ``to_numeric``). A new family is one new class.

Examples:
    >>> import jax.numpy as jnp
    >>> from jaxtree.basis import default_basis, make_basis
    >>> basis = default_basis()
    >>> basis.q
    40
    >>> basis.names[10:13]
    ('sin(πx)', 'sin(2πx)', 'sin(3πx)')
    >>> basis.evaluate(jnp.zeros((5, 3))).shape
    (5, 3, 40)
    >>> small = make_basis(hats=0, sines=0, cosines=2, powers=2, truncated_cubics=0)
    >>> small.names
    ('cos(πx)', 'cos(2πx)', 'x', 'x²')
    >>> small.render(3, "age")
    'age²'
"""

from __future__ import annotations

import dataclasses
import math
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtree import _trig

__all__ = [
    "Basis",
    "Cosines",
    "CustomFunction",
    "Hats",
    "Powers",
    "Sines",
    "TruncatedCubics",
    "Decays",
    "default_basis",
    "get_basis",
    "PHYSICS_EXPONENTS",
    "PHYSICS_SCALES",
    "PowerLaws",
    "make_basis",
    "PRESETS",
]


SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


def _fmt(t: float) -> str:
    """Formats a knot or center compactly: 0.25 -> '0.25', 1/9 -> '0.1111', 1.0 -> '1'."""
    return format(round(float(t), 4), "g")


def _check_count(name: str, value: Any, minimum: int) -> int:
    """Validates a non-negative integer count and returns it as an int."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"{name} must be an int; got {value!r} of type {type(value).__name__}. "
            f"Pass a whole number such as {name}=9."
        )
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}; got {value}.")
    return value


def _float_dtype(x: Any) -> jnp.ndarray:
    """Returns x as a floating jnp array (integers and bools become the default float)."""
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        if jnp.issubdtype(x.dtype, jnp.complexfloating):
            raise TypeError(f"x must be a real floating array; got dtype {x.dtype}.")
        x = x.astype(jnp.result_type(float))
    return x


_SIMPLE_SYMBOL = re.compile(r"[^\W\d_](_?\d+)?")  # x, x1, x_1, α
NO_PARENS = re.compile(r"[\w.\[\]'\"]+")  # identifiers, attribute and item access, numbers


def render_fields(var: str) -> dict[str, str]:
    """Returns the template fields for variable ``var``.

    ``{x}`` is the variable as an operand (parenthesised if it holds operators or spaces),
    ``{arg}`` the variable as a function argument (never parenthesised), ``{cx}`` the variable
    after a numeric coefficient (``3πx1`` for a short symbol, ``3π·age`` otherwise).
    """
    operand = var if NO_PARENS.fullmatch(var) else f"({var})"
    coefficient = var if _SIMPLE_SYMBOL.fullmatch(var) else f"·{operand}"
    return {"x": operand, "arg": var, "cx": coefficient}


# --------------------------------------------------------------------------------------------
# Families
# --------------------------------------------------------------------------------------------
#
# Every family owns every form of its formula (STYLE.md: one owner per fact). The methods,
# with ``m`` the function's index within the family (``0 <= m < size``):
#
#   evaluate(x, cache, axis)        all ``size`` functions on an array (the scorer's hot path);
#   params()                        ``(a, b)`` per function, for the parametric form below;
#   evaluate_params(x, a, b, cache) one function per element, chosen by per-element ``a, b``
#                                   (:meth:`Basis.evaluate_at`, used by predict and refinement);
#   render(m, var)                  the text name (``templates()`` holds the placeholders);
#   to_sympy(m, u, custom)          a sympy expression in the symbol or expression ``u``;
#   to_latex(m, var)                LaTeX, ``var`` already LaTeX (no ``digits``: centers and
#                                   knots are constants, written with 4 digits as in the names);
#   to_numeric(xp, m, u)            ``numpy`` or ``jax.numpy`` code on the array ``u``.
#
# Two sets of formulas differ on purpose. ``to_numeric`` is written as ``evaluate`` computes
# the function (a hat as ``max(1 - |u (n-1) - m|, 0)``, not the readable ``|u - t|/h``) so
# that ``jaxtree.export.to_callable`` agrees with ``predict`` to rounding; ``to_sympy`` shows
# the readable form with exact rationals (``Max(0, 1 - |u - t|/h)``), equal in exact
# arithmetic. ``to_numeric`` calls ``xp.sin``/``xp.cos``: it is an export, not a hot path, and
# the callable built from it must not need jaxtree.
#
# Parameters of ``evaluate_params``: :meth:`Basis.evaluate_at` gathers ``(a, b)`` for every
# element from one table holding all families' rows, evaluates every family's parametric form
# on all elements and selects, per element, the value of the family the element belongs to.
# So a family sees the parameters of other families' elements too: they are finite numbers,
# and the family's value there is computed and discarded. A parametric form must stay finite
# for any finite parameters (a NaN there would poison the gradient through the select; e.g.
# ``x ** a`` for Powers would), which is why the trigonometric form needs no masking of the
# other families' ``a`` (its polynomial is finite for any finite argument).


def _sympy():
    """Imports sympy or raises an ImportError that says how to install it."""
    try:
        import sympy
    except ImportError as exc:
        raise ImportError(
            "symbolic basis functions need sympy, which is not installed. Install it with "
            "`pip install jaxtree[export]`."
        ) from exc
    return sympy


def latex_number(v: float, digits: int) -> str:
    """Formats a number for LaTeX with ``digits`` significant digits: 1e-05 -> 1 \\cdot 10^{-5}."""
    text = f"{v:.{digits}g}"
    if "e" in text:
        mant, exp = text.split("e")
        return f"{mant} \\cdot 10^{{{int(exp)}}}"
    return text


def _shared_sincos_params(x: jnp.ndarray, a: jnp.ndarray, cache: dict):
    """(sin(pi a x), cos(pi a x)) for per-element frequencies ``a``, once per ``cache``.

    ``Sines`` and ``Cosines`` receive the same gathered ``a`` from :meth:`Basis.evaluate_at`, so
    the first of them computes both and the second reuses them: one polynomial per element.
    """
    if "sincos_params" not in cache:
        cache["sincos_params"] = _trig.sincos_pi_times(x, a)
    return cache["sincos_params"]


class _FamilyBase:
    """Renderings shared by the families; each family adds its formulas."""

    # True for families whose functions depend on the covariate (per-covariate constants,
    # :class:`PowerLaws`): their evaluate_params/to_sympy/to_numeric also take ``feature``.
    per_feature = False
    # True for families whose ``evaluate`` also takes ``xp=numpy`` (the same operations on
    # the host: :meth:`Basis.host_evaluate`).
    on_host = False

    def render(self, m: int, var: str = "x") -> str:
        """The name of function ``m`` of the family with variable ``var`` (see Basis.render)."""
        return self.templates()[m].format(**render_fields(var))


@dataclasses.dataclass(frozen=True)
class Hats(_FamilyBase):
    """Degree-1 B-spline hat functions on ``n`` equally spaced centers.

    ``phi_m(x) = max(0, 1 - |x - t_m| / h)`` with ``t_m = m / (n-1)`` for ``m = 0..n-1`` and
    half-width ``h = 1 / (n-1)``. Values lie in ``[0, 1]``; they sum to one on ``[0, 1]``.

    Computed as ``max(0, 1 - |x (n-1) - m|)`` (no division, exact centers); the sympy form
    shows the readable ``|x - t_m| / h``.

    Attributes:
        n: Number of hats, ``n >= 2``.
    """

    n: int

    def __post_init__(self):
        object.__setattr__(self, "n", _check_count("Hats.n", self.n, 2))

    @property
    def size(self) -> int:
        """Number of functions in the family."""
        return self.n

    def templates(self) -> tuple[str, ...]:
        """Name templates with placeholders ``{x}``/``{arg}``/``{cx}``, one per function."""
        return tuple(f"hat({{arg}}; {_fmt(m / (self.n - 1))})" for m in range(self.n))

    on_host = True

    def evaluate(self, x: jnp.ndarray, cache: dict, axis: int = -1, xp=jnp) -> jnp.ndarray:
        """Evaluates the family: float array (...,) -> n values stacked at ``axis``.

        Args:
          x: float array ``(...,)`` of scaled covariate values.
          cache: a dict shared by the families within one evaluation, for reused intermediates.
          axis: where the functions' axis is inserted.
          xp: the array module (``numpy`` for a numpy ``x``: :meth:`Basis.host_evaluate`).
        """
        xe, centers = _along(x, np.arange(self.n), axis, xp)
        return xp.maximum(1 - xp.abs(xe * xp.asarray(self.n - 1, x.dtype) - centers), 0)

    def params(self) -> list[tuple[float, float]]:
        """``(a, b) = (n - 1, m)`` per function, for :meth:`evaluate_params`."""
        return [(float(self.n - 1), float(m)) for m in range(self.n)]

    def evaluate_params(self, x, a, b, cache: dict) -> jnp.ndarray:
        """Parametric form ``max(0, 1 - |x a - b|)``: x, a, b float arrays of one shape.

        Args:
          x: float array of scaled covariate values.
          a: the per-element parameter ``a`` of :meth:`params`, the shape of ``x``.
          b: the per-element parameter ``b`` of :meth:`params`, the shape of ``x``.
          cache: a dict shared by the families within one evaluation, for reused intermediates.
        """
        return jnp.maximum(1 - jnp.abs(x * a - b), 0)

    def to_sympy(self, m: int, u, custom: Mapping[str, Callable] | None = None):
        """``Max(0, 1 - |u - t_m|/h)`` with exact rationals ``t_m = m h``, ``h = 1/(n-1)``.

        Args:
          m: the function's index within the family.
          u: the sympy symbol or expression of the scaled covariate.
          custom: ``{name: callable}`` for custom functions (unused by this family).
        """
        sp = _sympy()
        h = sp.Rational(1, self.n - 1)
        return sp.Max(0, 1 - sp.Abs(u - m * h) / h)

    def to_latex(self, m: int, var: str) -> str:
        """``\\operatorname{hat}(var; t_m)``, the center with 4 significant digits.

        Args:
          m: the function's index within the family.
          var: the variable, already LaTeX.
        """
        return f"\\operatorname{{hat}}({var}; {latex_number(m / (self.n - 1), 4)})"

    def to_numeric(self, xp, m: int, u):
        """``max(1 - |u (n-1) - m|, 0)`` with ``xp`` = numpy or jax.numpy, as evaluate does."""
        return xp.maximum(1 - xp.abs(u * (self.n - 1) - m), 0)

    def to_config(self) -> dict:
        """JSON-serialisable description of the family."""
        return {"kind": "hats", "n": self.n}


class _Trig(_FamilyBase):
    """What ``Sines`` and ``Cosines`` share: frequencies ``1..n``, kernels in ``jaxtree._trig``.

    Subclasses set ``_part`` (0 for sin, 1 for cos of the kernels' ``(sin, cos)`` pairs),
    ``sympy_name`` and ``latex_name``.
    """

    _part: int
    sympy_name: str
    latex_name: str

    @property
    def size(self) -> int:
        """Number of functions in the family."""
        return self.n

    def templates(self) -> tuple[str, ...]:
        """Name templates with placeholders ``{x}``/``{arg}``/``{cx}``, one per function."""
        head = self.sympy_name
        return tuple(f"{head}({'' if i == 1 else i}π{{cx}})" for i in range(1, self.n + 1))

    on_host = True

    def evaluate(self, x: jnp.ndarray, cache: dict, axis: int = -1, xp=jnp) -> jnp.ndarray:
        """Evaluates the family: float array (...,) -> n values stacked at ``axis``.

        Shares one :func:`jaxtree._trig.sincos_pi_range` with the other trigonometric family
        evaluated on the same ``x`` through ``cache``; ``xp``: the array module (``numpy``
        for a numpy ``x``: :meth:`Basis.host_evaluate`).
        """
        pairs = _trig.shared_sincos_pi_range(x, self.n, cache, xp)
        return xp.stack([pair[self._part] for pair in pairs], axis=axis)

    def params(self) -> list[tuple[float, float]]:
        """``(a, b) = (frequency, 0)`` per function, for :meth:`evaluate_params`."""
        return [(float(i), 0.0) for i in range(1, self.n + 1)]

    def evaluate_params(self, x, a, b, cache: dict) -> jnp.ndarray:
        """Parametric form ``sin(pi a x)`` or ``cos(pi a x)``: x, a float arrays of one shape.

        Computed once per ``cache`` for both trigonometric families (one polynomial per
        element), without calling ``sin``/``cos`` (:func:`jaxtree._trig.sincos_pi_times`).

        Args:
          x: float array of scaled covariate values.
          a: the per-element frequency ``a``, the shape of ``x``.
          b: the per-element parameter ``b`` (unused by this family).
          cache: a dict shared by the families within one evaluation, for reused intermediates.
        """
        return _shared_sincos_params(x, a, cache)[self._part]

    def to_sympy(self, m: int, u, custom: Mapping[str, Callable] | None = None):
        """``sin((m+1) pi u)`` or ``cos((m+1) pi u)`` with sympy's exact ``pi``.

        Args:
          m: the function's index within the family.
          u: the sympy symbol or expression of the scaled covariate.
          custom: ``{name: callable}`` for custom functions (unused by this family).
        """
        sp = _sympy()
        return getattr(sp, self.sympy_name)((m + 1) * sp.pi * u)

    def to_latex(self, m: int, var: str) -> str:
        """``\\sin(3\\pi var)`` (the frequency 1 omitted).

        Args:
          m: the function's index within the family.
          var: the variable, already LaTeX.
        """
        freq = "" if m == 0 else str(m + 1)
        return f"{self.latex_name}({freq}\\pi {var})"

    def to_numeric(self, xp, m: int, u):
        """``xp.sin((m+1) pi u)`` or ``xp.cos(...)`` with ``xp`` = numpy or jax.numpy."""
        return getattr(xp, self.sympy_name)((m + 1) * math.pi * u)


@dataclasses.dataclass(frozen=True)
class Sines(_Trig):
    """Sines ``sin(i pi x)`` for ``i = 1..n``.

    Attributes:
        n: Number of frequencies, ``n >= 1``.
    """

    n: int
    _part = 0
    sympy_name = "sin"
    latex_name = "\\sin"

    def __post_init__(self):
        object.__setattr__(self, "n", _check_count("Sines.n", self.n, 1))

    def to_config(self) -> dict:
        """JSON-serialisable description of the family."""
        return {"kind": "sines", "n": self.n}


@dataclasses.dataclass(frozen=True)
class Cosines(_Trig):
    """Cosines ``cos(i pi x)`` for ``i = 1..n``.

    Attributes:
        n: Number of frequencies, ``n >= 1``.
    """

    n: int
    _part = 1
    sympy_name = "cos"
    latex_name = "\\cos"

    def __post_init__(self):
        object.__setattr__(self, "n", _check_count("Cosines.n", self.n, 1))

    def to_config(self) -> dict:
        """JSON-serialisable description of the family."""
        return {"kind": "cosines", "n": self.n}


@dataclasses.dataclass(frozen=True)
class Powers(_FamilyBase):
    """Monomials ``x, x^2, ..., x^degree``.

    Computed by repeated multiplication (``x^d = x^(d-1) * x``), in every numeric form.

    Attributes:
        degree: Highest power, ``degree >= 1``.
    """

    degree: int

    def __post_init__(self):
        object.__setattr__(self, "degree", _check_count("Powers.degree", self.degree, 1))

    @property
    def size(self) -> int:
        """Number of functions in the family."""
        return self.degree

    def templates(self) -> tuple[str, ...]:
        """Name templates with placeholders ``{x}``/``{arg}``/``{cx}``, one per function."""
        return tuple(
            "{x}" if d == 1 else "{x}" + str(d).translate(SUPERSCRIPT)
            for d in range(1, self.degree + 1)
        )

    on_host = True

    def evaluate(self, x: jnp.ndarray, cache: dict, axis: int = -1, xp=jnp) -> jnp.ndarray:
        """Evaluates the family: float array (...,) -> ``degree`` values stacked at ``axis``.

        Args:
          x: float array ``(...,)`` of scaled covariate values.
          cache: a dict shared by the families within one evaluation, for reused intermediates.
          axis: where the functions' axis is inserted.
          xp: the array module (``numpy`` for a numpy ``x``: :meth:`Basis.host_evaluate`).
        """
        cols = [x]
        for _ in range(self.degree - 1):
            cols.append(cols[-1] * x)
        return xp.stack(cols, axis=axis)

    def params(self) -> list[tuple[float, float]]:
        """``(a, b) = (d, 0)`` per function ``x^d``, for :meth:`evaluate_params`."""
        return [(float(d), 0.0) for d in range(1, self.degree + 1)]

    def evaluate_params(self, x, a, b, cache: dict) -> jnp.ndarray:
        """Parametric form ``x^a`` for integer ``a`` in ``1..degree`` (0 for other ``a``).

        The same products as :meth:`evaluate` (so the same rounding), selected by ``a``.

        Args:
          x: float array of scaled covariate values.
          a: the per-element exponent ``a``, the shape of ``x``.
          b: the per-element parameter ``b`` (unused by this family).
          cache: a dict shared by the families within one evaluation, for reused intermediates.
        """
        zero = jnp.zeros((), x.dtype)
        acc = x
        val = jnp.where(a == 1, x, zero)
        for d in range(2, self.degree + 1):
            acc = acc * x
            val = jnp.where(a == d, acc, val)
        return val

    def to_sympy(self, m: int, u, custom: Mapping[str, Callable] | None = None):
        """``u**(m+1)``.

        Args:
          m: the function's index within the family.
          u: the sympy symbol or expression of the scaled covariate.
          custom: ``{name: callable}`` for custom functions (unused by this family).
        """
        return u ** (m + 1)

    def to_latex(self, m: int, var: str) -> str:
        """``var`` or ``var^{d}``.

        Args:
          m: the function's index within the family.
          var: the variable, already LaTeX.
        """
        return var if m == 0 else f"{var}^{{{m + 1}}}"

    def to_numeric(self, xp, m: int, u):
        """``u ** (m+1)`` (numpy and jax.numpy arrays alike).

        Args:
          xp: ``numpy`` or ``jax.numpy``.
          m: the function's index within the family.
          u: array of scaled covariate values.
        """
        return u ** (m + 1)

    def to_config(self) -> dict:
        """JSON-serialisable description of the family."""
        return {"kind": "powers", "degree": self.degree}


@dataclasses.dataclass(frozen=True)
class TruncatedCubics(_FamilyBase):
    """Truncated cubics ``(x - t_m)_+^3`` with knots ``t_m = m / (n+1)``, ``m = 1..n``.

    ``n = 9`` gives the knots ``0.1, 0.2, ..., 0.9``. Values lie in ``[0, 1)`` on ``[0, 1]``.

    Attributes:
        n: Number of knots, ``n >= 1``.
    """

    n: int

    def __post_init__(self):
        object.__setattr__(self, "n", _check_count("TruncatedCubics.n", self.n, 1))

    @property
    def size(self) -> int:
        """Number of functions in the family."""
        return self.n

    def knots(self) -> np.ndarray:
        """The knots ``m / (n+1)``, float64 array of shape (n,)."""
        return np.arange(1, self.n + 1, dtype=np.float64) / (self.n + 1)

    def templates(self) -> tuple[str, ...]:
        """Name templates with placeholders ``{x}``/``{arg}``/``{cx}``, one per function."""
        return tuple(f"({{x}}-{_fmt(t)})₊³" for t in self.knots())

    on_host = True

    def evaluate(self, x: jnp.ndarray, cache: dict, axis: int = -1, xp=jnp) -> jnp.ndarray:
        """Evaluates the family: float array (...,) -> n values stacked at ``axis``.

        Args:
          x: float array ``(...,)`` of scaled covariate values.
          cache: a dict shared by the families within one evaluation, for reused intermediates.
          axis: where the functions' axis is inserted.
          xp: the array module (``numpy`` for a numpy ``x``: :meth:`Basis.host_evaluate`).
        """
        xe, knots = _along(x, self.knots(), axis, xp)
        u = xp.maximum(xe - knots, 0)
        return u * u * u

    def params(self) -> list[tuple[float, float]]:
        """``(a, b) = (t_m, 0)`` per function, for :meth:`evaluate_params`."""
        return [(float(t), 0.0) for t in self.knots()]

    def evaluate_params(self, x, a, b, cache: dict) -> jnp.ndarray:
        """Parametric form ``max(x - a, 0)^3``: x, a float arrays of one shape.

        Args:
          x: float array of scaled covariate values.
          a: the per-element knot ``a``, the shape of ``x``.
          b: the per-element parameter ``b`` (unused by this family).
          cache: a dict shared by the families within one evaluation, for reused intermediates.
        """
        u = jnp.maximum(x - a, 0)
        return u * u * u

    def to_sympy(self, m: int, u, custom: Mapping[str, Callable] | None = None):
        """``Max(u - t, 0)**3`` with the exact knot ``t = (m+1)/(n+1)``.

        Args:
          m: the function's index within the family.
          u: the sympy symbol or expression of the scaled covariate.
          custom: ``{name: callable}`` for custom functions (unused by this family).
        """
        sp = _sympy()
        return sp.Max(u - sp.Rational(m + 1, self.n + 1), 0) ** 3

    def to_latex(self, m: int, var: str) -> str:
        """``(var - t)_+^{3}``, the knot with 4 significant digits.

        Args:
          m: the function's index within the family.
          var: the variable, already LaTeX.
        """
        t = latex_number((m + 1) / (self.n + 1), 4)
        return f"({var} - {t})_+^{{3}}"

    def to_numeric(self, xp, m: int, u):
        """``max(u - t, 0) ** 3`` with ``xp`` = numpy or jax.numpy.

        Args:
          xp: ``numpy`` or ``jax.numpy``.
          m: the function's index within the family.
          u: array of scaled covariate values.
        """
        return xp.maximum(u - (m + 1) / (self.n + 1), 0) ** 3

    def to_config(self) -> dict:
        """JSON-serialisable description of the family."""
        return {"kind": "truncated_cubics", "n": self.n}


@dataclasses.dataclass(frozen=True, eq=False)
class CustomFunction(_FamilyBase):
    """A user-supplied basis function.

    Equality and hashing use the name and the *identity* of ``fn``, so a basis holding custom
    functions is hashable (usable as a static argument of ``jax.jit``) even when ``fn`` is not.

    Construction checks ``fn`` on ``jnp.linspace(0, 1, 101)``: it must return an array of the
    same shape with finite values. Values outside ``[-1, 1]`` give a ``UserWarning``: the
    theory (and the ``|w| <= 1`` weight box) assumes ``|phi| <= 1``.

    Attributes:
        name: A name template with a ``{x}`` placeholder for the variable, such as
            ``"tanh(3{x})"`` or ``"{x}⁴"``, or a plain function name such as ``"tanh"``,
            rendered ``tanh(x)`` (a name holding any brace is read as a template; write literal
            braces there as ``{{`` and ``}}``).
        fn: Elementwise function of one array: float array (...,) -> (...,).

    Raises:
        TypeError: If ``name`` is not a str or ``fn`` is not callable.
        ValueError: If ``name`` is empty or a bad template, or ``fn`` fails the check.
    """

    name: str
    fn: Callable[[jnp.ndarray], jnp.ndarray]

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise TypeError(
                f"a custom basis function name must be a str; got {type(self.name).__name__}. "
                "Pass pairs (name, fn), e.g. ('tanh', jnp.tanh)."
            )
        if not self.name.strip():
            raise ValueError("a custom basis function name must be a non-empty str, e.g. 'tanh'.")
        if not callable(self.fn):
            raise TypeError(
                f"custom basis function {self.name!r}: fn must be callable; got "
                f"{type(self.fn).__name__}. Pass a jnp function of one array, e.g. jnp.tanh."
            )
        try:
            self.template.format(**render_fields("x"))
        except (KeyError, IndexError, ValueError) as err:
            raise ValueError(
                f"custom basis function name {self.name!r} is not a valid template ({err!r}). "
                "Use the placeholder {x} for the variable (e.g. 'tanh(3{x})') and write literal "
                "braces as {{ and }}."
            ) from None
        grid = jnp.linspace(0.0, 1.0, 101)
        try:
            values = jnp.asarray(self.fn(grid))
        except Exception as err:  # noqa: BLE001 - re-raised with context
            raise ValueError(
                f"custom basis function {self.name!r} failed on jnp.linspace(0, 1, 101): "
                f"{type(err).__name__}: {err}. It must be a jnp function of one array."
            ) from err
        if values.shape != grid.shape:
            raise ValueError(
                f"custom basis function {self.name!r} must be elementwise: on an input of shape "
                f"{grid.shape} it returned shape {values.shape}."
            )
        if not bool(jnp.all(jnp.isfinite(values))):
            raise ValueError(
                f"custom basis function {self.name!r} returned non-finite values on [0, 1]; "
                "basis functions must be finite on [0, 1]."
            )
        peak = float(jnp.max(jnp.abs(values)))
        if peak > 1.0 + 1e-6:
            warnings.warn(
                f"custom basis function {self.name!r} reaches |phi| = {peak:.4g} on [0, 1]; the "
                "theory assumes |phi| <= 1 (rescale it, e.g. divide by its maximum).",
                UserWarning,
                stacklevel=4,
            )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CustomFunction):
            return NotImplemented
        return self.name == other.name and self.fn is other.fn

    def __hash__(self) -> int:
        return hash((CustomFunction, self.name, id(self.fn)))

    @property
    def template(self) -> str:
        """The name template (``name(x)`` if ``name`` has no ``{x}`` placeholder)."""
        if "{" in self.name or "}" in self.name:
            return self.name
        escaped = self.name.replace("{", "{{").replace("}", "}}")
        return escaped + "({arg})"

    @property
    def size(self) -> int:
        """Number of functions in the family (1)."""
        return 1

    def templates(self) -> tuple[str, ...]:
        """Name templates with placeholders ``{x}``/``{arg}``/``{cx}``, one per function."""
        return (self.template,)

    def _values(self, x: jnp.ndarray) -> jnp.ndarray:
        """``fn(x)`` checked to be elementwise, in the dtype of ``x``."""
        values = jnp.asarray(self.fn(x))
        if values.shape != x.shape:
            raise ValueError(
                f"custom basis function {self.name!r} must be elementwise: on an input of shape "
                f"{x.shape} it returned shape {values.shape}."
            )
        return values.astype(x.dtype)

    def evaluate(self, x: jnp.ndarray, cache: dict, axis: int = -1) -> jnp.ndarray:
        """Evaluates the function: float array (...,) -> one value stacked at ``axis``.

        Args:
          x: float array ``(...,)`` of scaled covariate values.
          cache: a dict shared by the families within one evaluation, for reused intermediates.
          axis: where the functions' axis is inserted.
        """
        return jnp.expand_dims(self._values(x), axis)

    def params(self) -> list[tuple[float, float]]:
        """``(a, b) = (0, 0)``: the function has no parameters."""
        return [(0.0, 0.0)]

    def evaluate_params(self, x, a, b, cache: dict) -> jnp.ndarray:
        """``fn(x)`` on every element (``a``, ``b`` unused).

        Args:
          x: float array of scaled covariate values.
          a: unused.
          b: unused.
          cache: unused (kept for the common signature).
        """
        return self._values(x)

    def to_sympy(self, m: int, u, custom: Mapping[str, Callable] | None = None):
        """``custom[name](u)`` if given, else an undefined ``sympy.Function`` named after it.

        The function's name is made an identifier (``"tanh(3{x})"`` -> ``tanh_3_x``).

        Args:
          m: the function's index (0: the family has one function).
          u: the sympy symbol or expression of the scaled covariate.
          custom: ``{name: callable}``: the sympy function to use for this one.
        """
        custom = custom or {}
        if self.name in custom:
            return custom[self.name](u)
        sp = _sympy()
        ident = re.sub(r"\W+", "_", self.name).strip("_") or "phi"
        if ident[0].isdigit():
            ident = "f_" + ident
        return sp.Function(ident)(u)

    def to_latex(self, m: int, var: str) -> str:
        """The name template with ``var``; ``name(...)`` becomes ``\\operatorname{name}(...)``.

        Args:
          m: the function's index within the family.
          var: the variable, already LaTeX.
        """
        text = self.template.format(x=var, arg=var, cx=var)
        if re.fullmatch(r"[A-Za-z]+\(.*\)", text):
            head, rest = text.split("(", 1)
            return f"\\operatorname{{{head}}}({rest}"
        return text

    def to_numeric(self, xp, m: int, u):
        """``fn(u)`` as given (on numpy arrays for ``xp = numpy``).

        Args:
          xp: ``numpy`` or ``jax.numpy``.
          m: the function's index within the family.
          u: array of scaled covariate values.
        """
        return xp.asarray(self.fn(u))

    def to_config(self) -> dict:
        """JSON-serialisable description: the name only (pass ``fn`` again to load)."""
        return {"kind": "function", "name": self.name}


# --------------------------------------------------------------------------------------------
# Families on the covariates' original values (opt-in: the "physics" preset)
# --------------------------------------------------------------------------------------------
#
# Design (issue 14). The search, the scorer and predict hand every family the covariate
# min-max scaled to ``z in [0, 1]``. A law such as ``1/r`` or ``log x`` is not a function of
# ``z`` alone: it depends on where the training range ``[lo_j, hi_j]`` sits. So these families
# map ``z`` back, ``x = lo_j + (hi_j - lo_j) z``, with per-covariate constants *bound at fit
# time* (:meth:`Basis.bind`; ``TreeRegressor`` binds the training range), and normalise each
# function *affinely onto [-1, 1] over the training range of each covariate*:
#
#     phi_{a,j}(x) = A_{a,j} g_a(x / M_j) + B_{a,j},   M_j = max(|lo_j|, |hi_j|),
#
# with ``A, B`` chosen so that ``min phi = -1`` and ``max phi = +1`` on ``[lo_j, hi_j]``.
#
# Why spanning [-1, 1] (and not ``g / max|g|``): ``y`` is scaled to ``[-1, 1]`` (paper) and the
# intercept is free, so a law ``y = c + d g(x_j)`` is *one leaf with |w| = 1* exactly, and a
# separable law ``y = c + sum_j d_j g_j(x_j)`` on a product domain is reachable with
# ``sum |w_j| = 1`` (the range of a separable sum is the sum of the ranges). Products of powers
# become such sums under ``TreeRegressor(target_transform="log")``. The default basis's values
# are not changed (the paper's numbers and the numpy reference depend on them); a
# multiplicative law that the box still blocks is reached with ``TreeRegressor(y_bound=...)``.
#
# Why also ``g / max|g|`` (``PowerLaws(normalise="ratio")``, the preset's "monomials"): a
# spanning leaf is ``A x**a + B``, so the ``*`` of two of them is ``(A x2 + B)(C/x3 + D)``, not
# the law's ``x2/x3``: the offsets bring two more terms the search must cancel with two more
# leaves, and it did not (issue 14: ``x1 exp(-x2/x3)`` under the log target came out as 9
# operations of sines and hats). A ratio leaf is a pure multiple of ``x**a`` (``|phi| <= 1``
# still), so a product of leaves is a monomial. The preset keeps both: a single leaf of either
# fits equally well (free intercept), the ratio columns come first so ties pick the pure
# power, and the spanning ones stay for sums whose weights the ratio's narrower range would
# push out of the box. ``log`` has no ratio form (a multiple of ``log(x/M)`` is not one of
# ``log x``; logs enter laws additively).
#
# The constants are static (python floats in the hashable basis): a fit on data with another
# range compiles once more, but growing the tree never retraces. They are written in the
# model file with the family (``to_config``), so a loaded model evaluates the same functions.


_LOG = 0.0  # Box-Cox convention: the exponent 0 stands for log x.

PHYSICS_EXPONENTS = (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
"""Exponents of the ``"physics"`` preset's :class:`PowerLaws` (``0`` means ``log x``)."""

PHYSICS_MONOMIALS = tuple(a for a in PHYSICS_EXPONENTS if a != _LOG)
"""Exponents of the ``"physics"`` preset's pure monomials (``PowerLaws(normalise="ratio")``)."""

POWER_NORMALISATIONS = ("span", "ratio")
"""How :class:`PowerLaws` normalises ``x**a`` on the training range (see the design note)."""

PHYSICS_SCALES = (0.1, 0.25, 0.5, 1.0)
"""Scales of the ``"physics"`` preset's :class:`Decays`, as fractions of each covariate's range."""


def _is_integer_power(a: float) -> bool:
    return a >= 1 and float(a).is_integer()


def _power_g(t, a: float, xp=jnp):
    """``t**a`` (``log t`` for ``a == 0``) as every numeric form computes it.

    Integer powers by repeated multiplication (any sign of ``t``); other exponents through
    ``exp(a log t)`` on ``t`` clamped to the smallest normal number (callers zero the
    function where ``t <= 0`` is possible, so the clamp only keeps values finite).
    """
    if _is_integer_power(a):
        out = t
        for _ in range(int(a) - 1):
            out = out * t
        return out
    tiny = np.finfo(np.float32).tiny
    ts = xp.maximum(t, tiny)
    if a == _LOG:
        return xp.log(ts)
    return xp.exp(a * xp.log(ts))


def power_name(a: float) -> str:
    """Text of ``x^a`` with ``{x}`` placeholder: ``log({arg})``, ``√{x}``, ``{x}⁻²``, ``{x}^1.5``."""
    if a == _LOG:
        return "log({arg})"
    if a == 0.5:
        return "√{x}"
    if float(a).is_integer():
        return "{x}" if a == 1 else "{x}" + str(int(a)).translate(SUPERSCRIPT)
    return "{x}^" + format(a, "g")


def _check_floats(name: str, values, *, positive: bool = False, allow_none: bool = False):
    """A tuple of finite python floats (TypeError/ValueError that say what to pass)."""
    if values is None and allow_none:
        return None
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must be a sequence of numbers; got {type(values).__name__}.")
    out = []
    for v in np.asarray(values, dtype=object).ravel().tolist():
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name} must hold numbers; got {v!r}.")
        v = float(v)
        if not math.isfinite(v) or (positive and v <= 0):
            kind = "positive finite" if positive else "finite"
            raise ValueError(f"{name} must hold {kind} numbers; got {v!r}.")
        out.append(v)
    return tuple(out)


@dataclasses.dataclass(frozen=True)
class PowerLaws(_FamilyBase):
    """Powers and the logarithm of a covariate's *original* values, normalised on its range.

    Function ``m`` is ``phi(x) = A g(x / M) + B`` with ``g(t) = t**a_m`` (``log t`` when
    ``a_m == 0``, the Box-Cox convention), ``x = lo_j + (hi_j - lo_j) z`` the covariate in its own
    units, ``M = max(|lo_j|, |hi_j|)``. With ``normalise="span"`` (default) ``A, B`` per
    covariate make ``phi`` span exactly ``[-1, 1]`` on the training range ``[lo_j, hi_j]``;
    rendered ``⟨x⁻²⟩``. With ``normalise="ratio"``, ``B = 0`` and ``A = 1 / max|g|`` on the
    range: ``phi`` is a pure multiple of ``x**a`` with ``max |phi| = 1``, so products of such
    leaves are products of powers; rendered ``⟦x⁻²⟧`` (see the design note above the class).
    :func:`jaxtree.export.to_sympy` writes the exact form in original units.

    Domains. Integer exponents ``>= 1`` work for any covariate. Other positive exponents need
    ``lo_j >= 0``; ``log`` and negative exponents need ``lo_j > 0``. Where a covariate does not
    qualify (or is constant), the function is *skipped* for it: it is the constant 0, so
    it never improves the fit and is never chosen over a real candidate (a zero column scores
    ``w' = 0``). :meth:`valid` tells which pairs are live.

    The family is unusable until bound to the training ranges (:meth:`bind`, done by
    :meth:`Basis.bind` and ``TreeRegressor.fit``); an unbound family raises on evaluation.

    Attributes:
        exponents: Tuple of distinct finite exponents; ``0`` means ``log x``.
        lo: Per-covariate training minimum (tuple of floats), or None when unbound.
        hi: Per-covariate training maximum, or None when unbound.
        normalise: ``"span"`` (onto ``[-1, 1]``) or ``"ratio"`` (``g / max|g|``).
    """

    exponents: tuple = PHYSICS_EXPONENTS
    lo: tuple | None = None
    hi: tuple | None = None
    normalise: str = "span"
    per_feature = True

    def __post_init__(self):
        exps = _check_floats("PowerLaws.exponents", self.exponents)
        if not exps or len(set(exps)) != len(exps) or len(exps) > 64:
            raise ValueError(
                f"PowerLaws.exponents must be 1 to 64 distinct numbers; got {self.exponents!r}. "
                "For example PowerLaws((-1, 0, 0.5, 2)) (0 means log x).")
        if any(abs(a) > 16 for a in exps):
            raise ValueError(f"PowerLaws.exponents must lie in [-16, 16]; got {exps}.")
        lo = _check_floats("PowerLaws.lo", self.lo, allow_none=True)
        hi = _check_floats("PowerLaws.hi", self.hi, allow_none=True)
        if (lo is None) != (hi is None):
            raise ValueError("PowerLaws.lo and PowerLaws.hi must both be given or both be None.")
        if lo is not None and (len(lo) != len(hi) or not lo or any(a > b for a, b in zip(lo, hi))):
            raise ValueError(
                "PowerLaws.lo and PowerLaws.hi must be non-empty, of one length, with lo <= hi "
                f"per covariate; got lo={lo}, hi={hi}.")
        if self.normalise not in POWER_NORMALISATIONS:
            raise ValueError(f"PowerLaws.normalise must be one of {POWER_NORMALISATIONS}; got "
                             f"{self.normalise!r}.")
        object.__setattr__(self, "exponents", exps)
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)

    @property
    def size(self) -> int:
        """Number of functions in the family."""
        return len(self.exponents)

    @property
    def bound(self) -> bool:
        """Whether the per-covariate training ranges are set."""
        return self.lo is not None

    def bind(self, lo, hi) -> PowerLaws:
        """The family bound to per-covariate training ranges ``lo (p,)``, ``hi (p,)``."""
        return PowerLaws(self.exponents, tuple(map(float, lo)), tuple(map(float, hi)),
                         self.normalise)

    def templates(self) -> tuple[str, ...]:
        """Name templates with placeholders ``{x}``/``{arg}``/``{cx}``, one per function."""
        left, right = ("⟨", "⟩") if self.normalise == "span" else ("⟦", "⟧")
        return tuple(left + power_name(a) + right for a in self.exponents)

    def _require_bound(self, p: int | None = None):
        if not self.bound:
            raise ValueError(
                "PowerLaws works on the covariates' original units and needs their training "
                "ranges: bind the basis first, basis.bind(x_min, x_max) (TreeRegressor.fit "
                "does this for you).")
        if p is not None and p != len(self.lo):
            raise ValueError(
                f"this basis was bound to {len(self.lo)} covariates but the input has {p} in its "
                "last axis. PowerLaws needs the covariates in the last axis, (..., p).")

    def valid(self) -> np.ndarray:
        """bool ``(size, p)``: whether function ``m`` is live for covariate ``j``."""
        return self._tables()[0]

    def _tables(self):
        """``valid, t0, t1, A, B`` as float64 ``(size, p)`` tables (``t = t0 + t1 z``)."""
        self._require_bound()
        cached = self.__dict__.get("_tables_cache")
        if cached is not None:
            return cached
        lo, hi = np.asarray(self.lo), np.asarray(self.hi)
        big = np.maximum(np.abs(lo), np.abs(hi))
        big = np.where(big > 0, big, 1.0)
        t0, t1 = lo / big, (hi - lo) / big
        shape = (self.size, lo.shape[0])
        valid, a_t, b_t = np.zeros(shape, bool), np.zeros(shape), np.zeros(shape)
        for m, a in enumerate(self.exponents):
            if _is_integer_power(a):
                ok = hi > lo
            elif a > 0:
                ok = (hi > lo) & (lo >= 0)
            else:
                ok = (hi > lo) & (lo > 0)
            with np.errstate(all="ignore"):
                g_lo = _power_g(np.where(ok, t0, 1.0), a, np)
                g_hi = _power_g(np.where(ok, t0 + t1, 2.0), a, np)
            g_min, g_max = np.minimum(g_lo, g_hi), np.maximum(g_lo, g_hi)
            if _is_integer_power(a) and int(a) % 2 == 0:  # an even power crossing zero
                g_min = np.where((t0 < 0) & (t0 + t1 > 0), 0.0, g_min)
            span = g_max - g_min
            ok = ok & np.isfinite(span) & (span > 0)
            if self.normalise == "span":  # A g + B onto [-1, 1]
                amp = np.where(ok, 2.0 / np.where(ok, span, 1.0), 0.0)
                off = np.where(ok, -1.0 - amp * g_min, 0.0)
            else:  # "ratio": g / max|g|, a pure multiple of x**a
                top = np.maximum(np.abs(g_min), np.abs(g_max))
                amp = np.where(ok, 1.0 / np.where(ok, top, 1.0), 0.0)
                off = np.zeros_like(amp)
            valid[m], a_t[m], b_t[m] = ok, amp, off
        tables = (valid, np.broadcast_to(t0, shape), np.broadcast_to(t1, shape), a_t, b_t)
        self.__dict__["_tables_cache"] = tables
        return tables

    def evaluate(self, x: jnp.ndarray, cache: dict, axis: int = -1) -> jnp.ndarray:
        """Evaluates the family: float array (..., p) -> ``size`` values stacked at ``axis``.

        The last axis of ``x`` must be the covariates (the scorer's ``(m, p)`` chunks).

        Args:
          x: float array ``(..., p)``, the covariates on the last axis.
          cache: a dict shared by the families within one evaluation, for reused intermediates.
          axis: where the functions' axis is inserted.
        """
        self._require_bound(x.shape[-1] if x.ndim else None)
        _, t0, t1, a_t, b_t = self._tables()
        t = jnp.asarray(t0[0], x.dtype) + jnp.asarray(t1[0], x.dtype) * x
        cols = [jnp.asarray(a_t[m], x.dtype) * _power_g(t, a) + jnp.asarray(b_t[m], x.dtype)
                for m, a in enumerate(self.exponents)]
        return jnp.stack(cols, axis=axis)

    def params(self) -> list[tuple[float, float]]:
        """``(a, b) = (m, 0)``: the function's index in the family."""
        return [(float(m), 0.0) for m in range(self.size)]

    def evaluate_params(self, x, a, b, cache: dict, feature=None) -> jnp.ndarray:
        """Parametric form: function ``a`` (its index) on covariate ``feature`` per element.

        The same operations as :meth:`evaluate`, selected per element by ``a``.

        Args:
          x: float array of scaled covariate values.
          a: the per-element function index, the shape of ``x``.
          b: the per-element parameter ``b`` (unused by this family).
          cache: a dict shared by the families within one evaluation, for reused intermediates.
          feature: the per-element covariate index (required).
        """
        if feature is None:
            raise ValueError("PowerLaws needs each element's covariate: pass feature= to "
                             "Basis.evaluate_at.")
        self._require_bound()
        _, t0, t1, a_t, b_t = self._tables()
        p = t0.shape[1]
        j = jnp.clip(feature, 0, p - 1)
        m = jnp.clip(a, 0, self.size - 1).astype(jnp.int32)
        dt = x.dtype
        t = jnp.asarray(t0[0], dt)[j] + jnp.asarray(t1[0], dt)[j] * x
        amp = jnp.asarray(a_t, dt)[m, j]
        off = jnp.asarray(b_t, dt)[m, j]
        g = jnp.zeros((), dt)
        for k, e in enumerate(self.exponents):
            g = jnp.where(m == k, _power_g(t, e), g)
        return amp * g + off

    def affine_in_x(self, m: int, j: int) -> tuple[float, float]:
        """``(A', B')`` with ``phi = A' x**a + B'`` (``A' log x + B'``) in original units:
        function ``m`` of this family on covariate ``j`` (``(0, 0)`` where it is not
        defined there). The formula printer reads it (:mod:`jaxtree._formula`)."""
        valid, _, _, a_t, b_t = self._tables()
        if not valid[m, j]:
            return 0.0, 0.0
        a = self.exponents[m]
        big = max(abs(self.lo[j]), abs(self.hi[j])) or 1.0
        if a == _LOG:  # A log(x / M) + B = A log x + (B - A log M)
            return float(a_t[m, j]), float(b_t[m, j] - a_t[m, j] * math.log(big))
        return float(a_t[m, j] / big ** a), float(b_t[m, j])

    def to_sympy(self, m: int, u, custom: Mapping[str, Callable] | None = None, *,
                 feature: int, x=None):
        """``A' * x**a + B'`` (``A' log x + B'``) in the covariate's own units ``x``.

        ``x`` is the covariate (a sympy expression, clipped by the caller if wanted); exponents
        are exact rationals (``x**(-2)``, ``sqrt(x)``).

        Args:
          m: the function's index within the family.
          u: the scaled covariate (unused: the expression is written in ``x``).
          custom: ``{name: callable}`` for custom functions (unused by this family).
          feature: the covariate's index.
          x: the covariate in its own units, a sympy expression.
        """
        sp = _sympy()
        amp, off = self.affine_in_x(m, feature)
        if amp == 0.0:
            return sp.Integer(0)
        a = self.exponents[m]
        g = sp.log(x) if a == _LOG else x ** sp.nsimplify(a)
        return sp.Float(amp) * g + sp.Float(off)

    def to_latex(self, m: int, var: str) -> str:
        """``\\langle var^{a} \\rangle`` (``\\log``, ``\\sqrt``), normalised on the training range.

        Args:
          m: the function's index within the family.
          var: the variable, already LaTeX.
        """
        a = self.exponents[m]
        if a == _LOG:
            inner = f"\\log {var}"
        elif a == 0.5:
            inner = f"\\sqrt{{{var}}}"
        elif a == 1:
            inner = var
        else:
            inner = f"{var}^{{{format(a, 'g')}}}"
        return f"\\langle {inner} \\rangle"

    def to_numeric(self, xp, m: int, u, *, feature: int):
        """``A g(t0 + t1 u) + B`` on the scaled column ``u``, as :meth:`evaluate` computes it.

        Args:
          xp: ``numpy`` or ``jax.numpy``.
          m: the function's index within the family.
          u: array of scaled covariate values.
          feature: the covariate's index.
        """
        _, t0, t1, a_t, b_t = self._tables()
        j = feature
        t = t0[0, j] + t1[0, j] * u
        return a_t[m, j] * _power_g(t, self.exponents[m], xp) + b_t[m, j]

    def to_config(self) -> dict:
        """JSON-serialisable description, with the bound ranges (the normalising constants)."""
        out = {"kind": "power_laws", "exponents": list(self.exponents),
               "lo": None if self.lo is None else list(self.lo),
               "hi": None if self.hi is None else list(self.hi)}
        if self.normalise != "span":  # written only when used: older files stay byte-identical
            out["normalise"] = self.normalise
        return out


@dataclasses.dataclass(frozen=True)
class Decays(_FamilyBase):
    """Exponential decays ``exp(-x / s)`` with ``s = c (hi_j - lo_j)``, spanning ``[-1, 1]``.

    With the scale a fraction ``c`` of each covariate's range, ``exp(-x/s)`` normalised on the
    training range equals ``exp(-z/c)`` normalised on ``[0, 1]`` (``z`` the min-max scaled
    covariate): ``phi(z) = (2 exp(-z/c) - 1 - e) / (1 - e)`` with ``e = exp(-1/c)``, ``phi(0) = 1``,
    ``phi(1) = -1``. So no per-covariate constant is needed, and the exports in original units
    (``z = (x - lo) / (hi - lo)``) show ``exp(-(x - lo) / (c (hi - lo)))``. Any covariate
    qualifies. Rendered ``⟨exp(-x/0.25)⟩`` (the variable scaled to ``[0, 1]``).

    Attributes:
        scales: Tuple of distinct positive fractions ``c`` of the covariate's range.
    """

    scales: tuple = PHYSICS_SCALES
    per_feature = False

    def __post_init__(self):
        scales = _check_floats("Decays.scales", self.scales, positive=True)
        if not scales or len(set(scales)) != len(scales) or len(scales) > 64:
            raise ValueError(f"Decays.scales must be 1 to 64 distinct positive numbers; got "
                             f"{self.scales!r}. For example Decays((0.25, 1.0)).")
        if min(scales) < 1e-3:
            raise ValueError(f"Decays.scales must be >= 1e-3 (exp(-1/c) underflows); got {scales}.")
        object.__setattr__(self, "scales", scales)

    @property
    def size(self) -> int:
        """Number of functions in the family."""
        return len(self.scales)

    def templates(self) -> tuple[str, ...]:
        """Name templates with placeholders ``{x}``/``{arg}``/``{cx}``, one per function."""
        return tuple(f"⟨exp(-{{x}}/{_fmt(c)})⟩" for c in self.scales)

    @staticmethod
    def _phi(x, rate, xp=jnp):
        e = xp.exp(-rate)
        return (2 * xp.exp(-rate * x) - 1 - e) / (1 - e)

    def evaluate(self, x: jnp.ndarray, cache: dict, axis: int = -1) -> jnp.ndarray:
        """Evaluates the family: float array (...,) -> ``size`` values stacked at ``axis``.

        Args:
          x: float array ``(...,)`` of scaled covariate values.
          cache: a dict shared by the families within one evaluation, for reused intermediates.
          axis: where the functions' axis is inserted.
        """
        cols = [self._phi(x, jnp.asarray(1.0 / c, x.dtype)) for c in self.scales]
        return jnp.stack(cols, axis=axis)

    def params(self) -> list[tuple[float, float]]:
        """``(a, b) = (1/c, 0)`` per function, for :meth:`evaluate_params`."""
        return [(1.0 / c, 0.0) for c in self.scales]

    def evaluate_params(self, x, a, b, cache: dict) -> jnp.ndarray:
        """Parametric form with rate ``a = 1/c`` (kept finite for other families' ``a``).

        Args:
          x: float array of scaled covariate values.
          a: the per-element rate ``a = 1/c``, the shape of ``x``.
          b: the per-element parameter ``b`` (unused by this family).
          cache: a dict shared by the families within one evaluation, for reused intermediates.
        """
        rate = jnp.where(a > 0, a, 1.0)
        return self._phi(x, rate)

    def to_sympy(self, m: int, u, custom: Mapping[str, Callable] | None = None):
        """``(2 exp(-u/c) - 1 - e) / (1 - e)``, ``e = exp(-1/c)`` as a float.

        Args:
          m: the function's index within the family.
          u: the sympy symbol or expression of the scaled covariate.
          custom: ``{name: callable}`` for custom functions (unused by this family).
        """
        sp = _sympy()
        c = self.scales[m]
        e = math.exp(-1.0 / c)
        return (2 * sp.exp(-u / sp.Float(c)) - 1 - sp.Float(e)) / sp.Float(1 - e)

    def to_latex(self, m: int, var: str) -> str:
        """``\\langle e^{-var/c} \\rangle`` (normalised to ``[-1, 1]`` on ``[0, 1]``).

        Args:
          m: the function's index within the family.
          var: the variable, already LaTeX.
        """
        return f"\\langle e^{{-{var}/{latex_number(self.scales[m], 4)}}} \\rangle"

    def to_numeric(self, xp, m: int, u):
        """As :meth:`evaluate`, with ``xp`` = numpy or jax.numpy.

        Args:
          xp: ``numpy`` or ``jax.numpy``.
          m: the function's index within the family.
          u: array of scaled covariate values.
        """
        rate = 1.0 / self.scales[m]
        if xp is np:
            return self._phi(np.asarray(u, np.float64), rate, np)
        return self._phi(u, xp.asarray(rate, u.dtype), xp)

    def to_config(self) -> dict:
        """JSON-serialisable description of the family."""
        return {"kind": "decays", "scales": list(self.scales)}


_Family = (Hats | Sines | Cosines | Powers | TruncatedCubics | CustomFunction | PowerLaws
           | Decays)
_FAMILY_TYPES = (Hats, Sines, Cosines, Powers, TruncatedCubics, CustomFunction, PowerLaws,
                 Decays)
_CONFIG_KINDS = {
    "hats": (Hats, "n"),
    "sines": (Sines, "n"),
    "cosines": (Cosines, "n"),
    "powers": (Powers, "degree"),
    "truncated_cubics": (TruncatedCubics, "n"),
    "function": (CustomFunction, "name"),
}
# Families described by several keys: kind -> (type, required keys, optional keys).
_MULTI_KEY_KINDS = {
    "power_laws": (PowerLaws, ("exponents",), ("lo", "hi", "normalise")),
    "decays": (Decays, ("scales",), ()),
}


# --------------------------------------------------------------------------------------------
# Basis
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Basis:
    """An ordered, immutable, hashable set of ``q`` basis functions.

    Hashable and compared by value (custom functions by identity), so it can be a static
    argument of ``jax.jit``. Its columns are the families in order and, within a family, the
    functions in order.

    Attributes:
        families: Tuple of families (``Hats``, ``Sines``, ``Cosines``, ``Powers``,
            ``TruncatedCubics``, ``CustomFunction``).

    Raises:
        TypeError: If a family is not one of the family types.
        ValueError: If there are no families, or two custom functions share a name.

    Examples:
        >>> import jax, jax.numpy as jnp
        >>> from jaxtree.basis import Basis, Sines, Powers
        >>> basis = Basis((Sines(3), Powers(2)))
        >>> basis.names
        ('sin(πx)', 'sin(2πx)', 'sin(3πx)', 'x', 'x²')
        >>> jax.jit(basis.evaluate)(jnp.array([0.5])).round(6).tolist()
        [[1.0, -0.0, -1.0, 0.5, 0.25]]
    """

    families: tuple[_Family, ...]

    def __post_init__(self):
        families = self.families
        if isinstance(families, _FAMILY_TYPES):
            families = (families,)
        if not isinstance(families, (tuple, list)):
            raise TypeError(
                f"Basis(families) takes a tuple of families; got {type(families).__name__}. "
                "Use make_basis(...) to build one from counts."
            )
        families = tuple(families)
        for fam in families:
            if not isinstance(fam, _FAMILY_TYPES):
                raise TypeError(
                    f"a Basis family must be one of {[t.__name__ for t in _FAMILY_TYPES]}; got "
                    f"{type(fam).__name__}."
                )
        if not families:
            raise ValueError(
                "a Basis needs at least one function (q >= 1); got no families. For example "
                "make_basis(sines=9)."
            )
        custom = [f.name for f in families if isinstance(f, CustomFunction)]
        dupes = sorted({n for n in custom if custom.count(n) > 1})
        if dupes:
            raise ValueError(
                f"custom basis function names must be unique; {dupes} appear more than once. "
                "Give each function its own name."
            )
        object.__setattr__(self, "families", families)

    # ---- description -----------------------------------------------------------------------

    @property
    def has_custom_functions(self) -> bool:
        """Whether a family is a :class:`CustomFunction` (a user's Python function: no key
        written from the basis can stand for its code, so its programs are not stored)."""
        return any(isinstance(f, CustomFunction) for f in self.families)

    @property
    def q(self) -> int:
        """Total number of basis functions."""
        return sum(f.size for f in self.families)

    @property
    def templates(self) -> tuple[str, ...]:
        """Name templates, one per function (placeholders ``{x}``, ``{arg}``, ``{cx}``)."""
        return tuple(t for f in self.families for t in f.templates())

    @property
    def names(self) -> tuple[str, ...]:
        """Names of the ``q`` functions with variable ``x``, e.g. ``'sin(3πx)'``, ``'x²'``."""
        fields = render_fields("x")
        return tuple(t.format(**fields) for t in self.templates)

    def render(self, i: int, var: str = "x") -> str:
        """Returns the name of function ``i`` with variable ``var`` substituted.

        ``var`` is parenthesised where an operator follows it and it holds spaces or
        operators; after a numeric coefficient a short symbol is juxtaposed (``sin(3πx1)``),
        a longer name gets a dot (``sin(3π·age)``).

        Args:
            i: Function index in ``[0, q)``.
            var: Variable name, e.g. ``"x1"`` or ``"age"``.

        Returns:
            The rendered name, e.g. ``render(i_sin3, "x1") == "sin(3πx1)"``.

        Raises:
            TypeError: If ``i`` is not an int or ``var`` not a str.
            ValueError: If ``i`` is out of range or ``var`` is empty.
        """
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"i must be an int in [0, {self.q}); got {type(i).__name__}.")
        if not 0 <= i < self.q:
            raise ValueError(f"i must be in [0, {self.q}) for this basis; got {i}.")
        if not isinstance(var, str):
            raise TypeError(f"var must be a str; got {type(var).__name__}.")
        if not var:
            raise ValueError("var must be a non-empty str, e.g. 'x1'.")
        family, m = self.locate(i)
        return family.render(m, var)

    def locate(self, i: int) -> tuple[_Family, int]:
        """Returns the family holding function ``i`` and the function's index within it.

        Args:
            i: Function index in ``[0, q)``.

        Returns:
            ``(family, m)`` with ``0 <= m < family.size``; the family's methods (``render``,
            ``to_sympy``, ``to_latex``, ``to_numeric``) take ``m``.

        Raises:
            TypeError: If ``i`` is not an int.
            ValueError: If ``i`` is out of range.

        Examples:
            >>> from jaxtree.basis import Basis, Sines, Powers
            >>> Basis((Sines(3), Powers(2))).locate(4)
            (Powers(degree=2), 1)
        """
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"i must be an int in [0, {self.q}); got {type(i).__name__}.")
        if not 0 <= i < self.q:
            raise ValueError(f"i must be in [0, {self.q}) for this basis; got {i}.")
        m = int(i)
        for family in self.families:
            if m < family.size:
                return family, m
            m -= family.size
        raise AssertionError("unreachable: i < q")  # pragma: no cover

    # ---- evaluation ------------------------------------------------------------------------

    def evaluate(self, x: jnp.ndarray, axis: int = -1) -> jnp.ndarray:
        """Evaluates all ``q`` functions elementwise.

        Pure ``jnp``: works under ``jit``, ``vmap`` and ``grad``. Never calls ``sin``/``cos``
        (see the module docstring for the method and its accuracy).

        Args:
            x: Float array of any shape (...,), normally scaled to ``[0, 1]``. Integer input is
                promoted to the default float dtype.
            axis: Position of the function index in the output, as in ``jnp.stack``: ``-1``
                (default) gives ``(..., q)``. An axis before the last one of ``x`` writes
                each function's values in runs of the trailing axes (the scorer evaluates
                ``(m, p)`` chunks with ``axis=1``: runs of ``p`` values, faster on CPU).

        Returns:
            Array of ``x``'s shape with ``q`` inserted at ``axis``, dtype of ``x``; entry ``i``
            along ``axis`` is ``phi_i(x)``.

        Raises:
            ValueError: If ``axis`` is not an integer in ``[-(x.ndim + 1), x.ndim]``.
        """
        x = _float_dtype(x)
        if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) or not (
                -(x.ndim + 1) <= axis <= x.ndim):
            raise ValueError(
                f"axis must be an integer in [{-(x.ndim + 1)}, {x.ndim}] for an input of "
                f"shape {x.shape}; got {axis!r}.")
        return _evaluate_jit(self, x, int(axis))

    @property
    def on_host(self) -> bool:
        """Whether :meth:`host_evaluate` can evaluate this basis: every family is a built-in
        one with a numpy form (hats, sines, cosines, powers, truncated cubics)."""
        return all(f.on_host for f in self.families)

    def host_evaluate(self, x: np.ndarray, axis: int = -1) -> np.ndarray:
        """:meth:`evaluate` in numpy on the host: the same operations in the same order, in
        ``x``'s float dtype, nothing compiled. The values equal :meth:`evaluate`'s to the
        last bit or two (XLA may fuse a multiply and an add where numpy rounds twice).

        Decision (sixty-fourth session, issue 27): a small table's fit keeps its rows' basis
        values (``cache_basis``); their compiled program cost the demo's first fit about
        0.3 s on the fit's thread (trace, lower, compile) before the search step could be
        traced, for work that numpy does in about 1.4 ms
        (:func:`jaxtree._fit.source.kept_basis`).

        Args:
            x: float numpy array of any shape (``float32`` or ``float64``).
            axis: as for :meth:`evaluate`.

        Returns:
            A numpy array of ``x``'s shape with ``q`` inserted at ``axis``, ``x``'s dtype.

        Raises:
            ValueError: where a family has no numpy form (:attr:`on_host`), or ``x`` is not
                a float array.
        """
        if not self.on_host:
            names = sorted({type(f).__name__ for f in self.families if not f.on_host})
            raise ValueError(f"host_evaluate needs families with a numpy form; this basis has "
                             f"{', '.join(names)}. Use evaluate() instead.")
        x = np.asarray(x)
        if x.dtype.kind != "f":
            raise ValueError(f"host_evaluate takes a float array; got dtype {x.dtype}.")
        if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) or not (
                -(x.ndim + 1) <= axis <= x.ndim):
            raise ValueError(
                f"axis must be an integer in [{-(x.ndim + 1)}, {x.ndim}] for an input of "
                f"shape {x.shape}; got {axis!r}.")
        with np.errstate(over="ignore", invalid="ignore"):  # inf and NaN rows as XLA's
            return _evaluate_impl(self, x, int(axis), xp=np)

    def evaluate_at(self, x: jnp.ndarray, index: jnp.ndarray, feature=None) -> jnp.ndarray:
        """Evaluates one basis function per element: ``phi_index(x)``.

        Costs a few dozen flops per element, not ``q`` evaluations: each index selects its
        family and two parameters from constant tables, and the result is a select among the
        families' parametric forms (``evaluate_params``; one column per custom function).
        Agrees with
        ``evaluate(x)[..., index]`` to rounding (float32 ~1e-6 for frequencies <= 20; the
        other built-in families to an ulp: the formulas are the same, but the compiler may
        fuse a multiply-add differently in the two programs).

        Args:
            x: Float array of shape (...,).
            index: Integer array broadcastable with ``x``, values in ``[0, q)``. Elements with
                an index outside that range give NaN.
            feature: Integer array broadcastable with ``x``: each element's covariate. Needed
                only by a basis with per-covariate families (:class:`PowerLaws`, see
                :attr:`per_feature`); ignored otherwise.

        Returns:
            Array of the broadcast shape of ``x`` and ``index``, dtype of ``x``.

        Raises:
            TypeError: If ``index`` (or ``feature``) is not an integer array.
            ValueError: If the basis has per-covariate families and ``feature`` is None.
        """
        x = _float_dtype(x)
        index = jnp.asarray(index)
        if not jnp.issubdtype(index.dtype, jnp.integer):
            raise TypeError(
                f"index must be an integer array; got dtype {index.dtype}. Use "
                "index.astype(jnp.int32)."
            )
        if not self.per_feature:
            return _evaluate_at_jit(self, x, index, None)
        if feature is None:
            raise ValueError(
                "this basis has per-covariate families (PowerLaws): pass feature=, each "
                "element's covariate index, to evaluate_at.")
        feature = jnp.asarray(feature)
        if not jnp.issubdtype(feature.dtype, jnp.integer):
            raise TypeError(f"feature must be an integer array; got dtype {feature.dtype}.")
        return _evaluate_at_jit(self, x, index, feature)

    @property
    def per_feature(self) -> bool:
        """Whether a family depends on the covariate (needs ``feature`` in evaluate_at)."""
        return any(f.per_feature for f in self.families)

    @property
    def bound(self) -> bool:
        """False while a per-covariate family still needs :meth:`bind`."""
        return all(getattr(f, "bound", True) for f in self.families)

    def bind(self, x_min, x_max) -> Basis:
        """The basis with its per-covariate families bound to the training ranges.

        Families on the covariates' original units (:class:`PowerLaws`) need each covariate's
        training range to map the scaled ``z in [0, 1]`` back, ``x = lo + (hi - lo) z``, and
        to normalise onto ``[-1, 1]``. Other families are unchanged; a basis without such
        families is returned as is (so the default basis never changes). Binding a bound
        basis again replaces its ranges.

        Args:
            x_min: float ``(p,)`` training minimum of each covariate.
            x_max: float ``(p,)`` training maximum of each covariate.

        Returns:
            The bound basis.

        Raises:
            ValueError: If the ranges are not finite 1-D arrays of one length with
                ``x_min <= x_max``.
        """
        if not self.per_feature:
            return self
        lo = np.asarray(x_min, np.float64)
        hi = np.asarray(x_max, np.float64)
        if lo.ndim != 1 or lo.shape != hi.shape or not lo.size:
            raise ValueError(
                f"bind needs x_min and x_max of shape (p,); got {lo.shape} and {hi.shape}.")
        if not (np.isfinite(lo).all() and np.isfinite(hi).all() and (lo <= hi).all()):
            raise ValueError("bind needs finite x_min <= x_max per covariate.")
        return Basis(tuple(f.bind(lo, hi) if f.per_feature else f for f in self.families))

    def _evaluate_at_impl(self, x: jnp.ndarray, index: jnp.ndarray, feature=None) -> jnp.ndarray:
        # One row (family number g, a, b) per function; every family's parametric form runs on
        # all elements and a select keeps, per element, its own family's value. The families
        # share work through `cache` (both trigonometric families: one polynomial).
        if feature is None:
            x, index = jnp.broadcast_arrays(x, index)
        else:
            x, index, feature = jnp.broadcast_arrays(x, index, feature)
        dtype = x.dtype
        rows = [(g, a, b) for g, fam in enumerate(self.families) for a, b in fam.params()]
        group_t = np.array([r[0] for r in rows], np.int32)
        a_t = np.array([r[1] for r in rows], dtype)
        b_t = np.array([r[2] for r in rows], dtype)

        valid = (index >= 0) & (index < self.q)
        idx = jnp.clip(index, 0, self.q - 1)
        group = jnp.asarray(group_t)[idx]
        a = jnp.asarray(a_t)[idx]
        b = jnp.asarray(b_t)[idx]
        cache: dict = {}
        conds = [group == g for g in range(len(self.families))]
        values = [fam.evaluate_params(x, a, b, cache, feature=feature) if fam.per_feature
                  else fam.evaluate_params(x, a, b, cache) for fam in self.families]
        out = jnp.select(conds, values, jnp.zeros((), dtype))
        return jnp.where(valid, out, jnp.asarray(jnp.nan, dtype))

    # ---- composition and serialisation -----------------------------------------------------

    def __add__(self, other: Basis) -> Basis:
        """Concatenates two bases: the columns of ``self`` then those of ``other``."""
        if not isinstance(other, Basis):
            return NotImplemented
        return Basis(self.families + other.families)

    def to_config(self) -> dict:
        """Returns a JSON-serialisable description of the basis.

        Custom functions are stored by name; pass them again to :meth:`from_config`.

        Returns:
            ``{"families": [{"kind": "hats", "n": 10}, {"kind": "powers", "degree": 3},
            {"kind": "function", "name": "tanh"}, ...]}``.
        """
        return {"families": [f.to_config() for f in self.families]}

    @classmethod
    def from_config(
        cls,
        config: Mapping[str, Any],
        custom_functions: Mapping[str, Callable] | None = None,
    ) -> Basis:
        """Rebuilds a basis from :meth:`to_config` output.

        Args:
            config: A dict ``{"families": [...]}`` as written by :meth:`to_config`.
            custom_functions: Maps each custom function's name to its ``fn``; needed only if
                the config holds custom functions.

        Returns:
            The basis; equal to the original if the same ``fn`` objects are supplied.

        Raises:
            ValueError: If the config is malformed, names an unknown kind, or needs a custom
                function that ``custom_functions`` does not supply.
            TypeError: If ``config`` is not a mapping.
        """
        if not isinstance(config, Mapping):
            raise TypeError(
                f"config must be a dict like {{'families': [...]}}; got {type(config).__name__}."
            )
        if set(config) != {"families"} or not isinstance(config["families"], (list, tuple)):
            raise ValueError(
                "a basis config must be a dict with exactly one key 'families' holding a list; "
                f"got keys {sorted(map(str, config))}."
            )
        custom_functions = dict(custom_functions or {})
        families = []
        for pos, entry in enumerate(config["families"]):
            if not isinstance(entry, Mapping) or "kind" not in entry:
                raise ValueError(
                    f"basis config family {pos} must be a dict with a 'kind' key; got {entry!r}."
                )
            kind = entry["kind"]
            if kind in _MULTI_KEY_KINDS:
                family_type, keys, optional = _MULTI_KEY_KINDS[kind]
                if not set(keys) <= set(entry) <= set(keys) | set(optional) | {"kind"}:
                    raise ValueError(
                        f"basis config family {pos} ({kind!r}) must have the keys "
                        f"{['kind', *keys]} (optional {list(optional)}); got "
                        f"{sorted(map(str, entry))}.")
                try:
                    families.append(family_type(**{k: entry[k] for k in (*keys, *optional)
                                                   if k in entry}))
                except TypeError as err:
                    raise ValueError(f"basis config family {pos}: {err}") from None
                continue
            if kind not in _CONFIG_KINDS:
                raise ValueError(
                    f"basis config family {pos} has unknown kind {kind!r}; valid kinds are "
                    f"{sorted([*_CONFIG_KINDS, *_MULTI_KEY_KINDS])}."
                )
            family_type, key = _CONFIG_KINDS[kind]
            if set(entry) != {"kind", key}:
                raise ValueError(
                    f"basis config family {pos} ({kind!r}) must have exactly the keys "
                    f"['kind', {key!r}]; got {sorted(map(str, entry))}."
                )
            if family_type is CustomFunction:
                name = entry["name"]
                if name not in custom_functions:
                    raise ValueError(
                        f"the basis config needs the custom basis function {name!r}; pass it "
                        f"as Basis.from_config(config, custom_functions={{{name!r}: fn}})."
                    )
                families.append(CustomFunction(name, custom_functions[name]))
            else:
                try:
                    families.append(family_type(entry[key]))
                except TypeError as err:
                    raise ValueError(f"basis config family {pos}: {err}") from None
        return cls(tuple(families))


def _evaluate_impl(basis: Basis, x: jnp.ndarray, axis: int = -1, xp=jnp) -> jnp.ndarray:
    max_freq = max((f.n for f in basis.families if isinstance(f, (Sines, Cosines))), default=0)
    cache: dict = {"max_freq": max_freq}
    if xp is jnp:  # the families' own signature (a custom family need not take xp)
        blocks = [f.evaluate(x, cache, axis) for f in basis.families]
    else:
        blocks = [f.evaluate(x, cache, axis, xp=xp) for f in basis.families]
    return blocks[0] if len(blocks) == 1 else xp.concatenate(blocks, axis=axis)


def _along(x: jnp.ndarray, consts: np.ndarray, axis: int,
           xp=jnp) -> tuple[jnp.ndarray, jnp.ndarray]:
    """``x`` with a new function axis at ``axis`` (as in ``jnp.stack``), ``consts`` along it
    (``xp``: the array module)."""
    xe = xp.expand_dims(x, axis)
    shape = [1] * xe.ndim
    shape[axis] = -1
    return xe, xp.asarray(consts, x.dtype).reshape(shape)


# Jitted once at module level with the (hashable) basis static: eager calls run one compiled
# program instead of dozens of dispatched ops; under an outer jit they are simply inlined.
_evaluate_jit = jax.jit(_evaluate_impl, static_argnums=(0, 2))
_evaluate_at_jit = jax.jit(Basis._evaluate_at_impl, static_argnums=0)


# --------------------------------------------------------------------------------------------
# Constructors
# --------------------------------------------------------------------------------------------


def make_basis(
    *,
    hats: int = 10,
    sines: int = 9,
    cosines: int = 9,
    powers: int = 3,
    truncated_cubics: int = 9,
    power_laws: Sequence[float] = (),
    decays: Sequence[float] = (),
    monomials: Sequence[float] = (),
    functions: Sequence[tuple[str, Callable]] | Mapping[str, Callable] = (),
) -> Basis:
    """Builds a basis from per-family counts.

    Families appear in the order hats, sines, cosines, powers, truncated cubics, monomials,
    power laws, decays, custom functions; a count of 0 (an empty sequence) leaves the family
    out. Monomials come before power laws: a single leaf of either fits equally well (the
    intercept is free), and ties go to the lower column, the pure power that a later ``*``
    turns into a product of powers.

    Args:
        hats: Number of hat functions, 0 or >= 2.
        sines: Number of sines ``sin(i pi x)``, ``i = 1..sines``.
        cosines: Number of cosines ``cos(i pi x)``, ``i = 1..cosines``.
        powers: Highest power: ``x, ..., x^powers``.
        truncated_cubics: Number of truncated cubics, knots ``m / (n+1)``.
        power_laws: Exponents of a :class:`PowerLaws` family on the covariates' original
            units (``0`` means ``log x``), e.g. :data:`PHYSICS_EXPONENTS`; empty for none.
        decays: Scales of a :class:`Decays` family (fractions of each covariate's range),
            e.g. :data:`PHYSICS_SCALES`; empty for none.
        monomials: Exponents of a :class:`PowerLaws` family with ``normalise="ratio"``:
            ``x**a / max|x**a|`` on the training range, a pure multiple of ``x**a``, so that a
            product of two leaves is a product of powers (``x2 / x3``); empty for none.
        functions: Custom functions as ``(name, fn)`` pairs (or a dict name -> fn). ``name``
            is a template with a ``{x}`` placeholder (``"tanh(3{x})"``) or a function name
            (``"tanh"``, rendered ``tanh(x)``); ``fn`` an elementwise ``jnp`` function.

    Returns:
        The basis, with ``q`` = the sum of the counts plus ``len(functions)``.

    Raises:
        TypeError: If a count is not an int or ``functions`` is not a sequence of pairs.
        ValueError: If a count is negative, ``hats == 1``, or ``q == 0``.

    Examples:
        >>> import jax.numpy as jnp
        >>> basis = make_basis(hats=0, sines=1, cosines=0, powers=0, truncated_cubics=0,
        ...                    functions=[("tanh", jnp.tanh)])
        >>> basis.names
        ('sin(πx)', 'tanh(x)')
    """
    counts = {
        "hats": hats,
        "sines": sines,
        "cosines": cosines,
        "powers": powers,
        "truncated_cubics": truncated_cubics,
    }
    for key, value in counts.items():
        counts[key] = _check_count(key, value, 0)
    if counts["hats"] == 1:
        raise ValueError(
            "hats must be 0 (no hat functions) or >= 2 (hats need two centers, 0 and 1); got 1."
        )
    families: list[_Family] = []
    for key, family_type in [
        ("hats", Hats),
        ("sines", Sines),
        ("cosines", Cosines),
        ("powers", Powers),
        ("truncated_cubics", TruncatedCubics),
    ]:
        if counts[key]:
            families.append(family_type(counts[key]))
    if len(_check_floats("monomials", monomials)):
        families.append(PowerLaws(tuple(monomials), normalise="ratio"))
    if len(_check_floats("power_laws", power_laws)):
        families.append(PowerLaws(tuple(power_laws)))
    if len(_check_floats("decays", decays, positive=True)):
        families.append(Decays(tuple(decays)))

    if isinstance(functions, Mapping):
        functions = list(functions.items())
    if isinstance(functions, (str, bytes)) or not isinstance(functions, Sequence):
        raise TypeError(
            f"functions must be a sequence of (name, fn) pairs; got {type(functions).__name__}. "
            "For example functions=[('tanh', jnp.tanh)]."
        )
    for item in functions:
        if isinstance(item, CustomFunction):
            families.append(item)
            continue
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError(
                f"each entry of functions must be a (name, fn) pair; got {item!r}. For example "
                "functions=[('tanh', jnp.tanh)]."
            )
        families.append(CustomFunction(item[0], item[1]))

    if not families:
        raise ValueError(
            "the basis is empty (q == 0): every count is 0 and no functions were given. Set at "
            "least one count > 0, e.g. make_basis(sines=9)."
        )
    return Basis(tuple(families))


def default_basis() -> Basis:
    """Returns the paper's basis, ``q = 40``.

    10 hats, ``sin(i pi x)`` and ``cos(i pi x)`` for ``i = 1..9``, ``x, x^2, x^3`` and 9 truncated
    cubics with knots ``0.1..0.9``. It holds the paper's synthetic target's functions
    ``sin(3πx)``, ``cos(2πx)``, ``x²`` and ``x``.

    Returns:
        ``make_basis()``.
    """
    return make_basis()


_NO_DEFAULT_FAMILIES = {"hats": 0, "sines": 0, "cosines": 0, "powers": 0, "truncated_cubics": 0}

PRESETS: dict[str, dict[str, Any]] = {
    "default": {},
    "physics": {**_NO_DEFAULT_FAMILIES, "power_laws": PHYSICS_EXPONENTS,
                "decays": PHYSICS_SCALES, "monomials": PHYSICS_MONOMIALS},
    "fourier": {"hats": 0, "sines": 20, "cosines": 20, "powers": 0, "truncated_cubics": 0},
    "splines": {"hats": 20, "sines": 0, "cosines": 0, "powers": 0, "truncated_cubics": 20},
    "polynomial": {"hats": 0, "sines": 0, "cosines": 0, "powers": 3, "truncated_cubics": 20},
}
"""Named bases accepted by :func:`get_basis`, as :func:`make_basis` keyword arguments.

``"physics"`` (``q = 21``) holds only families on the covariates' original units: the pure
monomials ``x^a / max|x^a|`` for :data:`PHYSICS_MONOMIALS` (``PowerLaws(normalise="ratio")``:
products of leaves are products of powers), then ``x^a`` for :data:`PHYSICS_EXPONENTS`
(``log x``, ``1/x``, ``1/x²``, ``√x``, ...) and ``exp(-x/s)`` for :data:`PHYSICS_SCALES`, each
normalised to span ``[-1, 1]`` on the training range. Join names with ``+`` to concatenate
presets: ``"default+physics"`` is the paper's 40 functions followed by these 21
(``q = 61``)."""


def get_basis(spec: Basis | str | Mapping[str, Any] | None = None) -> Basis:
    """Resolves a user's ``basis=`` argument to a :class:`Basis`.

    Args:
        spec: ``None`` or ``"default"`` (the paper's basis); a preset name (``"fourier"``:
            20 sines and 20 cosines, ``"splines"``: 20 hats and 20 truncated cubics,
            ``"polynomial"``: ``x, x², x³`` and 20 truncated cubics, ``"physics"``: see
            :data:`PRESETS`), or names joined by ``+`` (``"default+physics"``, the columns of
            each in order); a :class:`Basis`; a dict of
            :func:`make_basis` keyword arguments; or a :meth:`Basis.to_config` dict without
            custom functions.

    Returns:
        The basis.

    Raises:
        ValueError: For an unknown preset name or bad dict contents.
        TypeError: For any other type.

    Examples:
        >>> get_basis("fourier").q
        40
        >>> get_basis({"hats": 0, "sines": 2, "cosines": 0, "powers": 1,
        ...            "truncated_cubics": 0}).names
        ('sin(πx)', 'sin(2πx)', 'x')
    """
    if spec is None:
        return default_basis()
    if isinstance(spec, Basis):
        return spec
    if isinstance(spec, str):
        key = spec.strip().lower()
        if "+" in key:  # "default+physics": the presets' columns in order
            parts = [get_basis(part) for part in key.split("+")]
            out = parts[0]
            for part in parts[1:]:
                out = out + part
            return out
        if key not in PRESETS:
            raise ValueError(
                f"unknown basis {spec!r}; valid names are {sorted(PRESETS)}, or pass a Basis or "
                "a dict of make_basis arguments."
            )
        return make_basis(**PRESETS[key])
    if isinstance(spec, Mapping):
        if "families" in spec:
            return Basis.from_config(spec)
        valid = ["hats", "sines", "cosines", "powers", "truncated_cubics", "power_laws",
                 "decays", "monomials", "functions"]
        unknown = sorted(map(str, set(spec) - set(valid)))
        if unknown:
            raise ValueError(f"unknown basis option(s) {unknown}; valid options are {valid}.")
        return make_basis(**spec)
    raise TypeError(
        f"basis must be None, a preset name {sorted(PRESETS)}, a Basis, or a dict of make_basis "
        f"arguments; got {type(spec).__name__}."
    )
