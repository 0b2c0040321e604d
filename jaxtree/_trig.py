r"""``sin(pi f x)`` and ``cos(pi f x)`` without calling ``sin`` or ``cos``: the kernels of the
``Sines`` and ``Cosines`` basis families (:mod:`jaxtree.basis`).

Why. XLA's ``sin``/``cos`` cost about 9 ns per element on CPU, and the basis is evaluated on
millions of rows per search iteration, so the basis never calls them. Instead
``sin(pi f x)`` and ``cos(pi f x)`` come from a reduced argument and a polynomial:

.. math::

    f x = k + r,\quad k = \mathrm{round}(f x),\ |r| \le 1/2,\qquad
    \sin(\pi f x) = (-1)^k \sin(\pi r),\quad \cos(\pi f x) = (-1)^k \cos(\pi r),

with ``sin(pi r)``, ``cos(pi r)`` as Taylor polynomials in ``r^2`` (degree chosen by dtype).
For a power of two ``f`` the product ``f x`` is exact; for other integers ``f`` the product is
made exact with a Veltkamp split of ``x``, so the reduction loses nothing even in float32.
Measured on a 2-core AVX-512 CPU (DESIGN.md, section 3): about 0.3 ns per element against
XLA's 9 ns, and more accurate.

A family of frequencies ``1..n`` (shared by the ``Sines`` and ``Cosines`` families,
:func:`sincos_pi_stack`) is one whole-array computation of this reduction over ``x`` and the
frequencies: one compiled kernel whatever ``n``. (Until issue 27's kernel count, only the
powers of two came from the polynomial and every other frequency ``a + b`` from the complex
product ``e^{i pi a x} e^{i pi b x}``: six flops per frequency, but two kernels of its own per
frequency in every compiled program that evaluates the basis, 54 of the demo's search step's
519, and slower on CPU in the end (the per-frequency arrays are written and stacked): a
``(65536, 8)`` block's nine sines and cosines took 50 ms that way against 34 ms now, on the
2-core CPU.) Measured against float64 numpy on ``[0, 1]``: max absolute error about
``1.8e-7`` in float32 (the recurrence's: ``3.9e-7``) for frequencies up to 20.

Every function here is pure ``jnp`` (traceable under ``jit``, ``vmap`` and ``grad``) and keeps
the dtype of ``x``.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp

__all__ = [
    "clip_unit",
    "is_high_precision",
    "shared_sincos_pi_stack",
    "sincos_pi_poly",
    "sincos_pi_stack",
    "sincos_pi_times",
]


def is_high_precision(dtype: Any) -> bool:
    """Whether ``dtype`` is float64-like (machine epsilon below 1e-10)."""
    return jnp.finfo(dtype).eps < 1e-10


def sincos_pi_poly(r: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Returns (sin(pi r), cos(pi r)) for |r| <= ~0.51 by Taylor polynomials in r**2.

    Args:
        r: Reduced argument, float array of any shape.

    Returns:
        Two arrays shaped and typed like ``r``. Truncation error below 1e-9 (float32 degree) or
        2e-17 (float64 degree) for ``|r| <= 1/2``.
    """
    n_terms = 11 if is_high_precision(r.dtype) else 7
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


def sincos_pi_times(x: jnp.ndarray, f: Any) -> tuple[jnp.ndarray, jnp.ndarray]:
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
    s, c = sincos_pi_poly(r)
    return clip_unit(sign * s), clip_unit(sign * c)


def clip_unit(v: jnp.ndarray) -> jnp.ndarray:
    """Clips to [-1, 1]: removes the last-ulp overshoot of the polynomial and products."""
    return jnp.clip(v, -1, 1)


def sincos_pi_stack(x: jnp.ndarray, n: int, axis: int = -1) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Returns ``(sin, cos)`` of ``pi i x`` for ``i = 1..n``, each stacked at ``axis``.

    Every frequency by :func:`sincos_pi_times` (the exact split reduction), as one
    whole-array computation over ``x`` and the frequencies.

    Args:
        x: Float array of any shape.
        n: Highest frequency, a Python int ``>= 1``.
        axis: where the frequencies' axis is inserted, as in ``jnp.stack``.

    Returns:
        Two arrays of ``x``'s shape with ``n`` inserted at ``axis``, dtype of ``x``.
    """
    ax = axis % (x.ndim + 1)
    shape = [1] * (x.ndim + 1)
    shape[ax] = n
    f = jnp.arange(1, n + 1, dtype=x.dtype).reshape(shape)
    return sincos_pi_times(jnp.expand_dims(x, ax), f)


def shared_sincos_pi_stack(
    x: jnp.ndarray, n: int, cache: dict, axis: int = -1
) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Frequencies 1..n of (sin, cos)(pi i x) stacked at ``axis`` (:func:`sincos_pi_stack`),
    shared between families through ``cache``.

    The first call computes frequencies up to ``max(n, cache["max_freq"])`` (the caller puts
    the highest frequency of all its trigonometric families there), so that ``Sines(n)`` and
    ``Cosines(m)`` evaluated on the same ``x`` run :func:`sincos_pi_stack` once.

    Args:
        x: Float array of any shape; the same array for every call sharing ``cache``.
        n: Highest frequency needed by the caller.
        cache: A dict shared by the families evaluated on ``x``; written under key ``"trig"``.
        axis: where the frequencies' axis is inserted, as in ``jnp.stack``.

    Returns:
        ``(sin, cos)``, each ``x``'s shape with ``n`` inserted at ``axis``.
    """
    ax = axis % (x.ndim + 1)
    have = cache.get("trig")
    if have is None or have[0] != ax or have[1].shape[ax] < n:
        have = (ax, *sincos_pi_stack(x, max(n, cache.get("max_freq", n)), ax))
        cache["trig"] = have
    return tuple(jax.lax.slice_in_dim(a, 0, n, axis=ax) for a in have[1:])
