r"""Basis functions: the leaf vocabulary of a jaxtree formula.

A leaf of a jaxtree formula is ``w * phi_i(x_j)``: basis function ``i`` (of ``q``) applied to
covariate ``j``. Covariates are scaled to ``[0, 1]`` before the basis is applied, and the theory
(paper, Theorem 1) assumes ``|phi_i(x)| <= 1`` there, so every built-in function maps ``[0, 1]``
into ``[-1, 1]``.

A :class:`Basis` is an ordered tuple of *families*; its columns are the families in order and,
within a family, the functions in order:

=========================  ===================================  ==============================
family                     functions                            names (variable ``x``)
=========================  ===================================  ==============================
``Hats(n)``, ``n >= 2``    ``max(0, 1 - |x - t_m| / h)``,       ``hat(x; 0.25)``
                           ``t_m = m / (n-1)``, ``m = 0..n-1``,
                           ``h = 1 / (n-1)`` (degree-1 B-splines)
``Sines(n)``               ``sin(i pi x)``, ``i = 1..n``        ``sin(πx)``, ``sin(3πx)``
``Cosines(n)``             ``cos(i pi x)``, ``i = 1..n``        ``cos(πx)``, ``cos(2πx)``
``Powers(degree)``         ``x, x^2, ..., x^degree``            ``x``, ``x²``, ``x³``
``TruncatedCubics(n)``     ``(x - t_m)_+^3``,                   ``(x-0.1)₊³``
                           ``t_m = m / (n+1)``, ``m = 1..n``
``CustomFunction``         any elementwise ``jnp`` function     from the user's template
=========================  ===================================  ==============================

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
    "default_basis",
    "get_basis",
    "make_basis",
    "PRESETS",
]


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


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
_NO_PARENS = re.compile(r"[\w.\[\]'\"]+")  # identifiers, attribute and item access, numbers


def _render_fields(var: str) -> dict[str, str]:
    """Returns the template fields for variable ``var``.

    ``{x}`` is the variable as an operand (parenthesised if it holds operators or spaces),
    ``{arg}`` the variable as a function argument (never parenthesised), ``{cx}`` the variable
    after a numeric coefficient (``3πx1`` for a short symbol, ``3π·age`` otherwise).
    """
    operand = var if _NO_PARENS.fullmatch(var) else f"({var})"
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


def _latex_number(v: float, digits: int) -> str:
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

    def render(self, m: int, var: str = "x") -> str:
        """The name of function ``m`` of the family with variable ``var`` (see Basis.render)."""
        return self.templates()[m].format(**_render_fields(var))


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

    def evaluate(self, x: jnp.ndarray, cache: dict, axis: int = -1) -> jnp.ndarray:
        """Evaluates the family: float array (...,) -> n values stacked at ``axis``."""
        xe, centers = _along(x, np.arange(self.n), axis)
        return jnp.maximum(1 - jnp.abs(xe * jnp.asarray(self.n - 1, x.dtype) - centers), 0)

    def params(self) -> list[tuple[float, float]]:
        """``(a, b) = (n - 1, m)`` per function, for :meth:`evaluate_params`."""
        return [(float(self.n - 1), float(m)) for m in range(self.n)]

    def evaluate_params(self, x, a, b, cache: dict) -> jnp.ndarray:
        """Parametric form ``max(0, 1 - |x a - b|)``: x, a, b float arrays of one shape."""
        return jnp.maximum(1 - jnp.abs(x * a - b), 0)

    def to_sympy(self, m: int, u, custom: Mapping[str, Callable] | None = None):
        """``Max(0, 1 - |u - t_m|/h)`` with exact rationals ``t_m = m h``, ``h = 1/(n-1)``."""
        sp = _sympy()
        h = sp.Rational(1, self.n - 1)
        return sp.Max(0, 1 - sp.Abs(u - m * h) / h)

    def to_latex(self, m: int, var: str) -> str:
        """``\\operatorname{hat}(var; t_m)``, the center with 4 significant digits."""
        return f"\\operatorname{{hat}}({var}; {_latex_number(m / (self.n - 1), 4)})"

    def to_numeric(self, xp, m: int, u):
        """``max(1 - |u (n-1) - m|, 0)`` with ``xp`` = numpy or jax.numpy, as evaluate does."""
        return xp.maximum(1 - xp.abs(u * (self.n - 1) - m), 0)

    def to_config(self) -> dict:
        """JSON-serialisable description of the family."""
        return {"kind": "hats", "n": self.n}


class _Trig(_FamilyBase):
    """What ``Sines`` and ``Cosines`` share: frequencies ``1..n``, kernels in ``jaxtree._trig``.

    Subclasses set ``_part`` (0 for sin, 1 for cos of the kernels' ``(sin, cos)`` pairs),
    ``_sympy_name`` and ``_latex_name``.
    """

    _part: int
    _sympy_name: str
    _latex_name: str

    @property
    def size(self) -> int:
        """Number of functions in the family."""
        return self.n

    def templates(self) -> tuple[str, ...]:
        """Name templates with placeholders ``{x}``/``{arg}``/``{cx}``, one per function."""
        head = self._sympy_name
        return tuple(f"{head}({'' if i == 1 else i}π{{cx}})" for i in range(1, self.n + 1))

    def evaluate(self, x: jnp.ndarray, cache: dict, axis: int = -1) -> jnp.ndarray:
        """Evaluates the family: float array (...,) -> n values stacked at ``axis``.

        Shares one :func:`jaxtree._trig.sincos_pi_range` with the other trigonometric family
        evaluated on the same ``x`` through ``cache``.
        """
        pairs = _trig.shared_sincos_pi_range(x, self.n, cache)
        return jnp.stack([pair[self._part] for pair in pairs], axis=axis)

    def params(self) -> list[tuple[float, float]]:
        """``(a, b) = (frequency, 0)`` per function, for :meth:`evaluate_params`."""
        return [(float(i), 0.0) for i in range(1, self.n + 1)]

    def evaluate_params(self, x, a, b, cache: dict) -> jnp.ndarray:
        """Parametric form ``sin(pi a x)`` or ``cos(pi a x)``: x, a float arrays of one shape.

        Computed once per ``cache`` for both trigonometric families (one polynomial per
        element), without calling ``sin``/``cos`` (:func:`jaxtree._trig.sincos_pi_times`).
        """
        return _shared_sincos_params(x, a, cache)[self._part]

    def to_sympy(self, m: int, u, custom: Mapping[str, Callable] | None = None):
        """``sin((m+1) pi u)`` or ``cos((m+1) pi u)`` with sympy's exact ``pi``."""
        sp = _sympy()
        return getattr(sp, self._sympy_name)((m + 1) * sp.pi * u)

    def to_latex(self, m: int, var: str) -> str:
        """``\\sin(3\\pi var)`` (the frequency 1 omitted)."""
        freq = "" if m == 0 else str(m + 1)
        return f"{self._latex_name}({freq}\\pi {var})"

    def to_numeric(self, xp, m: int, u):
        """``xp.sin((m+1) pi u)`` or ``xp.cos(...)`` with ``xp`` = numpy or jax.numpy."""
        return getattr(xp, self._sympy_name)((m + 1) * math.pi * u)


@dataclasses.dataclass(frozen=True)
class Sines(_Trig):
    """Sines ``sin(i pi x)`` for ``i = 1..n``.

    Attributes:
        n: Number of frequencies, ``n >= 1``.
    """

    n: int
    _part = 0
    _sympy_name = "sin"
    _latex_name = "\\sin"

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
    _sympy_name = "cos"
    _latex_name = "\\cos"

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
            "{x}" if d == 1 else "{x}" + str(d).translate(_SUPERSCRIPT)
            for d in range(1, self.degree + 1)
        )

    def evaluate(self, x: jnp.ndarray, cache: dict, axis: int = -1) -> jnp.ndarray:
        """Evaluates the family: float array (...,) -> ``degree`` values stacked at ``axis``."""
        cols = [x]
        for _ in range(self.degree - 1):
            cols.append(cols[-1] * x)
        return jnp.stack(cols, axis=axis)

    def params(self) -> list[tuple[float, float]]:
        """``(a, b) = (d, 0)`` per function ``x^d``, for :meth:`evaluate_params`."""
        return [(float(d), 0.0) for d in range(1, self.degree + 1)]

    def evaluate_params(self, x, a, b, cache: dict) -> jnp.ndarray:
        """Parametric form ``x^a`` for integer ``a`` in ``1..degree`` (0 for other ``a``).

        The same products as :meth:`evaluate` (so the same rounding), selected by ``a``.
        """
        zero = jnp.zeros((), x.dtype)
        acc = x
        val = jnp.where(a == 1, x, zero)
        for d in range(2, self.degree + 1):
            acc = acc * x
            val = jnp.where(a == d, acc, val)
        return val

    def to_sympy(self, m: int, u, custom: Mapping[str, Callable] | None = None):
        """``u**(m+1)``."""
        return u ** (m + 1)

    def to_latex(self, m: int, var: str) -> str:
        """``var`` or ``var^{d}``."""
        return var if m == 0 else f"{var}^{{{m + 1}}}"

    def to_numeric(self, xp, m: int, u):
        """``u ** (m+1)`` (numpy and jax.numpy arrays alike)."""
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

    def evaluate(self, x: jnp.ndarray, cache: dict, axis: int = -1) -> jnp.ndarray:
        """Evaluates the family: float array (...,) -> n values stacked at ``axis``."""
        xe, knots = _along(x, self.knots(), axis)
        u = jnp.maximum(xe - knots, 0)
        return u * u * u

    def params(self) -> list[tuple[float, float]]:
        """``(a, b) = (t_m, 0)`` per function, for :meth:`evaluate_params`."""
        return [(float(t), 0.0) for t in self.knots()]

    def evaluate_params(self, x, a, b, cache: dict) -> jnp.ndarray:
        """Parametric form ``max(x - a, 0)^3``: x, a float arrays of one shape."""
        u = jnp.maximum(x - a, 0)
        return u * u * u

    def to_sympy(self, m: int, u, custom: Mapping[str, Callable] | None = None):
        """``Max(u - t, 0)**3`` with the exact knot ``t = (m+1)/(n+1)``."""
        sp = _sympy()
        return sp.Max(u - sp.Rational(m + 1, self.n + 1), 0) ** 3

    def to_latex(self, m: int, var: str) -> str:
        """``(var - t)_+^{3}``, the knot with 4 significant digits."""
        t = _latex_number((m + 1) / (self.n + 1), 4)
        return f"({var} - {t})_+^{{3}}"

    def to_numeric(self, xp, m: int, u):
        """``max(u - t, 0) ** 3`` with ``xp`` = numpy or jax.numpy."""
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
            self.template.format(**_render_fields("x"))
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
        """Evaluates the function: float array (...,) -> one value stacked at ``axis``."""
        return jnp.expand_dims(self._values(x), axis)

    def params(self) -> list[tuple[float, float]]:
        """``(a, b) = (0, 0)``: the function has no parameters."""
        return [(0.0, 0.0)]

    def evaluate_params(self, x, a, b, cache: dict) -> jnp.ndarray:
        """``fn(x)`` on every element (``a``, ``b`` unused)."""
        return self._values(x)

    def to_sympy(self, m: int, u, custom: Mapping[str, Callable] | None = None):
        """``custom[name](u)`` if given, else an undefined ``sympy.Function`` named after it.

        The function's name is made an identifier (``"tanh(3{x})"`` -> ``tanh_3_x``).
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
        """The name template with ``var``; ``name(...)`` becomes ``\\operatorname{name}(...)``."""
        text = self.template.format(x=var, arg=var, cx=var)
        if re.fullmatch(r"[A-Za-z]+\(.*\)", text):
            head, rest = text.split("(", 1)
            return f"\\operatorname{{{head}}}({rest}"
        return text

    def to_numeric(self, xp, m: int, u):
        """``fn(u)`` as given (on numpy arrays for ``xp = numpy``)."""
        return xp.asarray(self.fn(u))

    def to_config(self) -> dict:
        """JSON-serialisable description: the name only (pass ``fn`` again to load)."""
        return {"kind": "function", "name": self.name}


_Family = Hats | Sines | Cosines | Powers | TruncatedCubics | CustomFunction
_FAMILY_TYPES = (Hats, Sines, Cosines, Powers, TruncatedCubics, CustomFunction)
_CONFIG_KINDS = {
    "hats": (Hats, "n"),
    "sines": (Sines, "n"),
    "cosines": (Cosines, "n"),
    "powers": (Powers, "degree"),
    "truncated_cubics": (TruncatedCubics, "n"),
    "function": (CustomFunction, "name"),
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
        fields = _render_fields("x")
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

    def evaluate_at(self, x: jnp.ndarray, index: jnp.ndarray) -> jnp.ndarray:
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

        Returns:
            Array of the broadcast shape of ``x`` and ``index``, dtype of ``x``.

        Raises:
            TypeError: If ``index`` is not an integer array.
        """
        x = _float_dtype(x)
        index = jnp.asarray(index)
        if not jnp.issubdtype(index.dtype, jnp.integer):
            raise TypeError(
                f"index must be an integer array; got dtype {index.dtype}. Use "
                "index.astype(jnp.int32)."
            )
        return _evaluate_at_jit(self, x, index)

    def _evaluate_at_impl(self, x: jnp.ndarray, index: jnp.ndarray) -> jnp.ndarray:
        # One row (family number g, a, b) per function; every family's parametric form runs on
        # all elements and a select keeps, per element, its own family's value. The families
        # share work through `cache` (both trigonometric families: one polynomial).
        x, index = jnp.broadcast_arrays(x, index)
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
        values = [fam.evaluate_params(x, a, b, cache) for fam in self.families]
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
            if kind not in _CONFIG_KINDS:
                raise ValueError(
                    f"basis config family {pos} has unknown kind {kind!r}; valid kinds are "
                    f"{sorted(_CONFIG_KINDS)}."
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


def _evaluate_impl(basis: Basis, x: jnp.ndarray, axis: int = -1) -> jnp.ndarray:
    max_freq = max((f.n for f in basis.families if isinstance(f, (Sines, Cosines))), default=0)
    cache: dict = {"max_freq": max_freq}
    blocks = [f.evaluate(x, cache, axis) for f in basis.families]
    return blocks[0] if len(blocks) == 1 else jnp.concatenate(blocks, axis=axis)


def _along(x: jnp.ndarray, consts: np.ndarray, axis: int) -> tuple[jnp.ndarray, jnp.ndarray]:
    """``x`` with a new function axis at ``axis`` (as in ``jnp.stack``), ``consts`` along it."""
    xe = jnp.expand_dims(x, axis)
    shape = [1] * xe.ndim
    shape[axis] = -1
    return xe, jnp.asarray(consts, x.dtype).reshape(shape)


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
    functions: Sequence[tuple[str, Callable]] | Mapping[str, Callable] = (),
) -> Basis:
    """Builds a basis from per-family counts.

    Families appear in the order hats, sines, cosines, powers, truncated cubics, custom
    functions; a count of 0 leaves the family out.

    Args:
        hats: Number of hat functions, 0 or >= 2.
        sines: Number of sines ``sin(i pi x)``, ``i = 1..sines``.
        cosines: Number of cosines ``cos(i pi x)``, ``i = 1..cosines``.
        powers: Highest power: ``x, ..., x^powers``.
        truncated_cubics: Number of truncated cubics, knots ``m / (n+1)``.
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


PRESETS: dict[str, dict[str, int]] = {
    "default": {},
    "fourier": {"hats": 0, "sines": 20, "cosines": 20, "powers": 0, "truncated_cubics": 0},
    "splines": {"hats": 20, "sines": 0, "cosines": 0, "powers": 0, "truncated_cubics": 20},
    "polynomial": {"hats": 0, "sines": 0, "cosines": 0, "powers": 3, "truncated_cubics": 20},
}
"""Named bases accepted by :func:`get_basis`, as :func:`make_basis` keyword arguments."""


def get_basis(spec: Basis | str | Mapping[str, Any] | None = None) -> Basis:
    """Resolves a user's ``basis=`` argument to a :class:`Basis`.

    Args:
        spec: ``None`` or ``"default"`` (the paper's basis); a preset name (``"fourier"``:
            20 sines and 20 cosines, ``"splines"``: 20 hats and 20 truncated cubics,
            ``"polynomial"``: ``x, x², x³`` and 20 truncated cubics); a :class:`Basis`; a dict of
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
        if key not in PRESETS:
            raise ValueError(
                f"unknown basis {spec!r}; valid names are {sorted(PRESETS)}, or pass a Basis or "
                "a dict of make_basis arguments."
            )
        return make_basis(**PRESETS[key])
    if isinstance(spec, Mapping):
        if "families" in spec:
            return Basis.from_config(spec)
        valid = ["hats", "sines", "cosines", "powers", "truncated_cubics", "functions"]
        unknown = sorted(map(str, set(spec) - set(valid)))
        if unknown:
            raise ValueError(f"unknown basis option(s) {unknown}; valid options are {valid}.")
        return make_basis(**spec)
    raise TypeError(
        f"basis must be None, a preset name {sorted(PRESETS)}, a Basis, or a dict of make_basis "
        f"arguments; got {type(spec).__name__}."
    )
