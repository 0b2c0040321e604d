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
millions of rows per search iteration, so this module never calls them. Instead
``sin(pi f x)`` and ``cos(pi f x)`` come from a reduced argument and a polynomial:

.. math::

    f x = k + r,\quad k = \mathrm{round}(f x),\ |r| \le 1/2,\qquad
    \sin(\pi f x) = (-1)^k \sin(\pi r),\quad \cos(\pi f x) = (-1)^k \cos(\pi r),

with ``sin(pi r)``, ``cos(pi r)`` as Taylor polynomials in ``r^2`` (degree chosen by dtype).
For a power of two ``f`` the product ``f x`` is exact; for other integers ``f`` the product is
made exact with a Veltkamp split of ``x``, so the reduction loses nothing even in float32.

A family of frequencies ``1..n`` (shared by the ``Sines`` and ``Cosines`` families) evaluates the
polynomial only at the powers of two ``f = 1, 2, 4, ...`` and builds every other frequency as one
complex product ``e^{i pi (a + b) x} = e^{i pi a x} e^{i pi b x}`` with ``a`` the highest power of
two in ``f``: six flops per frequency, and an error that grows with the number of binary digits
of ``f`` rather than with ``f`` (the three-term Chebyshev recurrence
``sin((i+1)t) = 2 cos(t) sin(it) - sin((i-1)t)`` is cheaper still, but its float32 error grows
like ``i^2`` near ``t = 0`` and ``t = pi``). Measured against float64 numpy on ``[0, 1]``: max
absolute error about ``3e-7`` in float32 and ``4e-16`` in float64 for frequencies up to 20.

:meth:`Basis.evaluate_at` evaluates one function per element from a *parametric* formula (a family
code and two parameters gathered from small constant tables, then a select among the family
formulas), so it costs a few dozen flops per element instead of ``q`` evaluations.

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

# Family codes used by the parametric formula of `Basis.evaluate_at`.
_HAT, _SIN, _COS, _POW, _TCUBIC, _CUSTOM = range(6)

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


def _is_high_precision(dtype: Any) -> bool:
    return jnp.finfo(dtype).eps < 1e-10


def _sincos_pi_poly(r: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Returns (sin(pi r), cos(pi r)) for |r| <= ~0.51 by Taylor polynomials in r**2.

    Args:
        r: Reduced argument, float array of any shape.

    Returns:
        Two arrays shaped and typed like ``r``. Truncation error below 1e-9 (float32 degree) or
        2e-17 (float64 degree) for ``|r| <= 1/2``.
    """
    n_terms = 11 if _is_high_precision(r.dtype) else 7
    sin_c = [(-1) ** k * math.pi ** (2 * k + 1) / math.factorial(2 * k + 1) for k in range(n_terms)]
    cos_c = [(-1) ** k * math.pi ** (2 * k) / math.factorial(2 * k) for k in range(n_terms)]
    r2 = r * r
    ps = jnp.asarray(sin_c[-1], r.dtype)
    for c in reversed(sin_c[:-1]):
        ps = ps * r2 + jnp.asarray(c, r.dtype)
    pc = jnp.asarray(cos_c[-1], r.dtype)
    for c in reversed(cos_c[:-1]):
        pc = pc * r2 + jnp.asarray(c, r.dtype)
    return r * ps, pc


def _sincos_pi_times(x: jnp.ndarray, f: Any) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Returns (sin(pi f x), cos(pi f x)) accurately without calling sin or cos.

    The product ``f x`` is split as ``f x_hi + f x_lo`` (Veltkamp split of ``x``) so that both
    parts are exact for integer ``|f| < 2**(p // 2)`` (``p`` the mantissa bits: 4096 in float32),
    then reduced by the nearest integer ``k``; the sign ``(-1)**k`` is applied last.

    Args:
        x: Float array of any shape.
        f: Integer-valued frequency: a Python int (a power of two skips the split) or a float
            array broadcastable to ``x`` with the same dtype.

    Returns:
        Two arrays of the broadcast shape of ``x`` and ``f``, dtype of ``x``.
    """
    dtype = x.dtype
    if isinstance(f, int) and f > 0 and f & (f - 1) == 0:
        t = x * jnp.asarray(f, dtype)  # exact: scaling by a power of two
        k = jnp.round(t)
        r = t - k
    else:
        f = jnp.asarray(f, dtype)
        n_mant = jnp.finfo(dtype).nmant + 1
        split = jnp.asarray(2.0 ** ((n_mant + 1) // 2) + 1.0, dtype)
        c = x * split
        x_hi = c - (c - x)
        x_lo = x - x_hi
        t_hi = f * x_hi  # exact
        k = jnp.round(t_hi)
        r = (t_hi - k) + f * x_lo
    half_k = k * jnp.asarray(0.5, dtype)
    sign = jnp.where(jnp.floor(half_k) == half_k, jnp.asarray(1, dtype), jnp.asarray(-1, dtype))
    s, c = _sincos_pi_poly(r)
    return _clip_unit(sign * s), _clip_unit(sign * c)


def _clip_unit(v: jnp.ndarray) -> jnp.ndarray:
    """Clips to [-1, 1]: removes the last-ulp overshoot of the polynomial and products."""
    return jnp.clip(v, -1, 1)


def _sincos_pi_range(x: jnp.ndarray, n: int) -> list[tuple[jnp.ndarray, jnp.ndarray]]:
    """Returns [(sin(pi i x), cos(pi i x)) for i = 1..n].

    Powers of two come from the polynomial; frequency ``i = a + b`` (``a`` its highest power of
    two) is the complex product of frequencies ``a`` and ``b``, both already known.
    """
    out: list[tuple[jnp.ndarray, jnp.ndarray]] = [None] * (n + 1)  # type: ignore[list-item]
    for i in range(1, n + 1):
        a = 1 << (i.bit_length() - 1)
        if a == i:
            out[i] = _sincos_pi_times(x, i)
        else:
            (sa, ca), (sb, cb) = out[a], out[i - a]
            out[i] = (_clip_unit(sa * cb + ca * sb), _clip_unit(ca * cb - sa * sb))
    return out[1:]


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


@dataclasses.dataclass(frozen=True)
class Hats:
    """Degree-1 B-spline hat functions on ``n`` equally spaced centers.

    ``phi_m(x) = max(0, 1 - |x - t_m| / h)`` with ``t_m = m / (n-1)`` for ``m = 0..n-1`` and
    half-width ``h = 1 / (n-1)``. Values lie in ``[0, 1]``; they sum to one on ``[0, 1]``.

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

    def params(self) -> list[tuple[int, float, float]]:
        """(family code, a, b) per function for the parametric formula of ``evaluate_at``."""
        return [(_HAT, float(self.n - 1), float(m)) for m in range(self.n)]

    def to_config(self) -> dict:
        """JSON-serialisable description of the family."""
        return {"kind": "hats", "n": self.n}


@dataclasses.dataclass(frozen=True)
class Sines:
    """Sines ``sin(i pi x)`` for ``i = 1..n``.

    Attributes:
        n: Number of frequencies, ``n >= 1``.
    """

    n: int

    def __post_init__(self):
        object.__setattr__(self, "n", _check_count("Sines.n", self.n, 1))

    @property
    def size(self) -> int:
        """Number of functions in the family."""
        return self.n

    def templates(self) -> tuple[str, ...]:
        """Name templates with placeholders ``{x}``/``{arg}``/``{cx}``, one per function."""
        return tuple(f"sin({'' if i == 1 else i}π{{cx}})" for i in range(1, self.n + 1))

    def evaluate(self, x: jnp.ndarray, cache: dict, axis: int = -1) -> jnp.ndarray:
        """Evaluates the family: float array (...,) -> n values stacked at ``axis``."""
        return jnp.stack([s for s, _ in _trig(x, self.n, cache)], axis=axis)

    def params(self) -> list[tuple[int, float, float]]:
        """(family code, a, b) per function for the parametric formula of ``evaluate_at``."""
        return [(_SIN, float(i), 0.0) for i in range(1, self.n + 1)]

    def to_config(self) -> dict:
        """JSON-serialisable description of the family."""
        return {"kind": "sines", "n": self.n}


@dataclasses.dataclass(frozen=True)
class Cosines:
    """Cosines ``cos(i pi x)`` for ``i = 1..n``.

    Attributes:
        n: Number of frequencies, ``n >= 1``.
    """

    n: int

    def __post_init__(self):
        object.__setattr__(self, "n", _check_count("Cosines.n", self.n, 1))

    @property
    def size(self) -> int:
        """Number of functions in the family."""
        return self.n

    def templates(self) -> tuple[str, ...]:
        """Name templates with placeholders ``{x}``/``{arg}``/``{cx}``, one per function."""
        return tuple(f"cos({'' if i == 1 else i}π{{cx}})" for i in range(1, self.n + 1))

    def evaluate(self, x: jnp.ndarray, cache: dict, axis: int = -1) -> jnp.ndarray:
        """Evaluates the family: float array (...,) -> n values stacked at ``axis``."""
        return jnp.stack([c for _, c in _trig(x, self.n, cache)], axis=axis)

    def params(self) -> list[tuple[int, float, float]]:
        """(family code, a, b) per function for the parametric formula of ``evaluate_at``."""
        return [(_COS, float(i), 0.0) for i in range(1, self.n + 1)]

    def to_config(self) -> dict:
        """JSON-serialisable description of the family."""
        return {"kind": "cosines", "n": self.n}


def _trig(x: jnp.ndarray, n: int, cache: dict) -> list[tuple[jnp.ndarray, jnp.ndarray]]:
    """Frequencies 1..n of (sin, cos)(pi i x), shared between families through ``cache``."""
    have = cache.get("trig", [])
    if len(have) < n:
        have = _sincos_pi_range(x, max(n, cache.get("max_freq", n)))
        cache["trig"] = have
    return have[:n]


@dataclasses.dataclass(frozen=True)
class Powers:
    """Monomials ``x, x^2, ..., x^degree``.

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

    def params(self) -> list[tuple[int, float, float]]:
        """(family code, a, b) per function for the parametric formula of ``evaluate_at``."""
        return [(_POW, float(d), 0.0) for d in range(1, self.degree + 1)]

    def to_config(self) -> dict:
        """JSON-serialisable description of the family."""
        return {"kind": "powers", "degree": self.degree}


@dataclasses.dataclass(frozen=True)
class TruncatedCubics:
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

    def params(self) -> list[tuple[int, float, float]]:
        """(family code, a, b) per function for the parametric formula of ``evaluate_at``."""
        return [(_TCUBIC, float(t), 0.0) for t in self.knots()]

    def to_config(self) -> dict:
        """JSON-serialisable description of the family."""
        return {"kind": "truncated_cubics", "n": self.n}


@dataclasses.dataclass(frozen=True, eq=False)
class CustomFunction:
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

    def evaluate(self, x: jnp.ndarray, cache: dict, axis: int = -1) -> jnp.ndarray:
        """Evaluates the function: float array (...,) -> one value stacked at ``axis``."""
        values = jnp.asarray(self.fn(x))
        if values.shape != x.shape:
            raise ValueError(
                f"custom basis function {self.name!r} must be elementwise: on an input of shape "
                f"{x.shape} it returned shape {values.shape}."
            )
        return jnp.expand_dims(values.astype(x.dtype), axis)

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
        return self.templates[int(i)].format(**_render_fields(var))

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

        Costs a few dozen flops per element, not ``q`` evaluations: each index selects a
        family code and two parameters from constant tables, and the result is a select among
        the family formulas (plus one column per custom function, if any). Agrees with
        ``evaluate(x)[..., index]`` to rounding (float32 ~1e-6 for frequencies <= 20; built-in
        non-trigonometric families exactly).

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
        x, index = jnp.broadcast_arrays(x, index)
        dtype = x.dtype
        rows: list[tuple[int, float, float]] = []
        n_custom = 0
        for fam in self.families:
            if isinstance(fam, CustomFunction):
                rows.append((_CUSTOM, float(n_custom), 0.0))
                n_custom += 1
            else:
                rows.extend(fam.params())
        code_t = np.array([r[0] for r in rows], np.int32)
        a_t = np.array([r[1] for r in rows], dtype)
        b_t = np.array([r[2] for r in rows], dtype)
        codes = set(code_t.tolist())

        valid = (index >= 0) & (index < self.q)
        idx = jnp.clip(index, 0, self.q - 1)
        code = jnp.asarray(code_t)[idx]
        a = jnp.asarray(a_t)[idx]
        b = jnp.asarray(b_t)[idx]
        zero = jnp.zeros((), dtype)

        conds, values = [], []
        if _HAT in codes:
            conds.append(code == _HAT)
            values.append(jnp.maximum(1 - jnp.abs(x * a - b), 0))
        if _SIN in codes or _COS in codes:
            # A non-trig element gets frequency 1: harmless and keeps the split exact.
            freq = jnp.where((code == _SIN) | (code == _COS), a, jnp.ones((), dtype))
            s, c = _sincos_pi_times(x, freq)
            conds += [code == _SIN, code == _COS]
            values += [s, c]
        if _POW in codes:
            max_deg = max(f.degree for f in self.families if isinstance(f, Powers))
            acc = x
            val = jnp.where(a == 1, x, zero)
            for d in range(2, max_deg + 1):
                acc = acc * x
                val = jnp.where(a == d, acc, val)
            conds.append(code == _POW)
            values.append(val)
        if _TCUBIC in codes:
            u = jnp.maximum(x - a, 0)
            conds.append(code == _TCUBIC)
            values.append(u * u * u)
        if _CUSTOM in codes:
            customs = [f for f in self.families if isinstance(f, CustomFunction)]
            cols = jnp.stack([f.evaluate(x, {})[..., 0] for f in customs], axis=-1)
            which = jnp.clip(a.astype(jnp.int32), 0, n_custom - 1)
            conds.append(code == _CUSTOM)
            values.append(jnp.take_along_axis(cols, which[..., None], axis=-1)[..., 0])
        out = jnp.select(conds, values, zero)
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
