"""The safety rails of a fit (issue 28): what the data can support and what memory allows,
decided once per fit, before anything is compiled (:func:`check_size`, called by
:func:`jaxtree._fit.spec.planned`, which every fit of both estimators and the batch calls
as soon as it knows its rows, covariates and dtype).

* **``k`` is bounded by the rows.** A tree of ``k`` operations has ``k + 1`` leaf weights
  and an intercept, and each leaf is chosen among ``2·D·p·q`` candidates, so it has more
  freedom than ``k + 2`` parameters. At most one operation per :data:`ROWS_PER_OPERATION`
  (5) rows: ``k <= n // 5``. Decision: the paper's own Experiment 1 fits ``k = 10`` on
  ``n = 50`` rows, exactly this ratio, so every setting of the paper passes; beyond it a
  search mostly interpolates noise while its cost grows with ``k`` (each iteration scores
  ``2(k+1)`` leaf rows and refines ``k + 1`` weights; ``k = 1000`` on 300 rows ran for
  minutes, ``k = 100000`` for 30 CPU-minutes at 4.5 GB). A larger ``k`` is lowered to the
  bound with a :class:`jaxtree._inputs.validation.DataSizeWarning` that says the bound and why.
  ``p * q`` is no bound: a product tree may use one candidate twice (``x²``, ``sin·sin``).
* **Few rows warn.** Below :data:`MIN_ROWS` (10) rows even a single leaf chosen among the
  ``p * q`` candidates, with an intercept, passes through (nearly) every point: the model
  interpolates, and its training error says nothing about new data.
* **Few rows of positive weight warn too.** A row of weight 0 is no row of the fit, so with
  ``sample_weight`` the few-rows warning counts the rows of positive weight (400 rows of
  which 3 are weighted warn as 3 rows do: 3 distinct points are interpolated, whatever
  their weights); fewer than 2 of them are refused at the boundary
  (:func:`jaxtree._inputs.validation.check_weighted_rows`), as a table of fewer than 2
  rows is. Decision: the bound on ``k`` still counts every row, because integer weights
  must give the fit of the repeated rows (scikit-learn's
  ``check_sample_weight_equivalence``, tests/test_sklearn.py): 12 rows of positive weight
  summing to 30 would bound ``k`` at 2 where the 30 repeated rows allow 6. The memory
  budget counts every row (each is held).
* **A memory budget.** The search step holds about :data:`WORDS_PER_LEAF_ROW` floats per leaf
  row and row of a chunk (the candidates' regressors and targets, the tree's node values and
  their gradients) and :data:`WORDS_PER_LEAF_CANDIDATE` per leaf row and candidate column
  (the candidates' statistics): :func:`search_bytes`, measured on the CPU (float32, 2,048-row
  chunks: 90-110 bytes per leaf and row, greedy and backfit; 4 words per candidate). A fit
  whose estimate exceeds the budget (:func:`memory_budget`: half the memory of the device it
  runs on, or ``JAXTREE_MEMORY_BUDGET``) is refused with a ``ValueError`` that gives both
  numbers, the largest ``k`` that fits, and what to change.
"""

from __future__ import annotations

import os
from typing import Optional

import numpy as np

from jaxtree import plan as plan_
from jaxtree import program as prog
from jaxtree import scoring
from jaxtree._inputs import validation as V

ROWS_PER_OPERATION = 5
"""``k`` is at most ``n // ROWS_PER_OPERATION`` (the paper's Experiment 1: ``k = 10`` on 50 rows)."""

MIN_ROWS = 10
"""Fits of fewer rows warn that the model interpolates them."""

WORDS_PER_LEAF_ROW = 32
WORDS_PER_LEAF_CANDIDATE = 8

MEMORY_BUDGET_ENV = "JAXTREE_MEMORY_BUDGET"
"""Environment variable: the memory budget of a fit's search in bytes (a plain number, or with
a unit: ``"2GB"``, ``"512MiB"``); unset: :data:`MEMORY_FRACTION` of the device's memory."""

MEMORY_FRACTION = 0.5
DEFAULT_MEMORY = 8 * 2**30  # where the device's memory cannot be read

_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "kib": 2**10, "m": 10**6, "mb": 10**6,
          "mib": 2**20, "g": 10**9, "gb": 10**9, "gib": 2**30, "t": 10**12, "tb": 10**12,
          "tib": 2**40}


def max_k_for_rows(n: int) -> int:
    """The largest ``k`` that ``n`` rows support: ``n // ROWS_PER_OPERATION``."""
    return max(int(n), 0) // ROWS_PER_OPERATION


def search_bytes(k: int, n: int, p: int, q: int, dtype, chunk: int, batch: int = 1) -> int:
    """Estimated bytes the search step of ``k`` operations holds on ``n`` rows of ``p``
    covariates with ``q`` basis functions in ``dtype``, ``chunk`` rows per step and ``batch``
    data sets at once: ``itemsize * batch * L * (32 m + 8 P)`` with ``L`` the leaf rows of the
    compiled capacity (:func:`jaxtree.program.capacity_for` where compiling dominates, as the
    estimators do), ``m`` the rows of one step and ``P`` the candidate columns (the column
    bucket's ``p`` times ``q`` where compiling dominates)."""
    per_leaf, leaves, _, _ = _footprint(k, n, p, q, dtype, chunk, batch)
    return per_leaf * leaves


def _footprint(k: int, n: int, p: int, q: int, dtype, chunk: int, batch: int) -> tuple:
    """``(bytes per leaf row, L, m, rounded)`` of :func:`search_bytes`: what one leaf row of
    the compiled capacity holds; ``L``, the leaf rows of a ``k``-operation search (the
    compiled capacity plus one, the capacity being ``k`` rounded up,
    :func:`jaxtree.program.capacity_for`, where compiling dominates, else ``k`` itself);
    ``m``, the rows of one step; and whether the capacity is rounded. One
    :func:`jaxtree.scoring.layout` serves every ``k`` (the bytes per leaf row do not depend
    on it)."""
    n, p, q = max(int(n), 1), max(int(p), 1), max(int(q), 1)
    lay = scoring.layout(n, p, q, int(chunk))
    small = lay.compiling_dominates
    cols = (lay.columns if small else p) * q
    words = WORDS_PER_LEAF_ROW * lay.rows_per_step + WORDS_PER_LEAF_CANDIDATE * cols
    leaves = (prog.capacity_for(k) if small else max(int(k), 0)) + 1
    per_leaf = int(np.dtype(dtype).itemsize) * max(int(batch), 1) * int(words)
    return per_leaf, leaves, lay.rows_per_step, small


def parse_bytes(text: str) -> int:
    """``"2GB"`` -> 2e9, ``"512MiB"`` -> 536870912, ``"1e9"`` -> 1e9.

    Raises:
      ValueError: naming the variable and the accepted forms.
    """
    s = str(text).strip().lower().replace(" ", "")
    num = s.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = s[len(num):]
    try:
        value = float(num) * _UNITS[unit]
    except (KeyError, ValueError):
        raise ValueError(f"{MEMORY_BUDGET_ENV}={text!r} is not a size: use a number of bytes, "
                         "optionally with a unit (e.g. 4GB, 512MiB).") from None
    if not value > 0:
        raise ValueError(f"{MEMORY_BUDGET_ENV}={text!r} must be positive.")
    return int(value)


def memory_budget(platform: str) -> tuple:
    """``(bytes, where it comes from)``: ``JAXTREE_MEMORY_BUDGET`` when set, else
    :data:`MEMORY_FRACTION` of the memory of the fit's device (an accelerator's
    ``bytes_limit``, a CPU's physical memory; :data:`DEFAULT_MEMORY` when unreadable)."""
    env = os.environ.get(MEMORY_BUDGET_ENV)
    if env:
        return parse_bytes(env), f"{MEMORY_BUDGET_ENV}={env}"
    total = None
    if plan_.is_accelerator(platform):
        try:
            import jax

            stats = jax.devices()[0].memory_stats() or {}
            total = stats.get("bytes_limit")
        except Exception:  # noqa: BLE001 - a backend without memory statistics
            total = None
        what = "the accelerator's memory"
    else:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, ValueError, OSError):  # not POSIX
            total = None
        what = "this machine's memory"
    if not total:
        return int(MEMORY_FRACTION * DEFAULT_MEMORY), f"half of an assumed {_gb(DEFAULT_MEMORY)}"
    return int(MEMORY_FRACTION * total), f"half of {what}, {_gb(total)}"


def _gb(b: float) -> str:
    return f"{b / 1e9:.1f} GB" if b >= 1e9 else f"{b / 1e6:.1f} MB"


def check_size(k: int, n: int, p: int, q: int, dtype, chunk: int, platform: str,
               batch: int = 1, budget: Optional[int] = None,
               n_weighted: Optional[int] = None) -> int:
    """The ``k`` a fit runs with: ``k`` bounded by the rows (a warning says so), after the
    few-rows warning; refuses a search whose memory estimate exceeds the budget.

    Args:
      k: the asked number of operations; n, p, q: rows, covariates (after encoding) and
        basis functions; dtype: the fit's float dtype; chunk: rows per step of the row plan;
        platform: the plan's platform; batch: data sets searched at once
        (:func:`jaxtree.fit_batch`); budget: bytes (None: :func:`memory_budget`);
        n_weighted: the rows of positive ``sample_weight`` (None: no weights), which the
        few-rows warning counts instead of ``n`` (the bound on ``k`` counts ``n``: see the
        module docstring).

    Returns:
      The bounded ``k``.

    Raises:
      ValueError: when the search would need more memory than the budget, with the numbers
        and the fix.
    """
    k, n = int(k), int(n)
    if n <= 0:  # rows unknown: nothing to bound
        return k
    rows, what = n, f"{n} rows"
    if n_weighted is not None and int(n_weighted) < n:  # a row of weight 0 is no row
        rows = int(n_weighted)
        what = f"{rows} rows of positive sample_weight (of {n})"
    if rows < MIN_ROWS:
        V.warn_user(
            f"Only {what}: with fewer than {MIN_ROWS} rows the model will interpolate them "
            f"(a leaf chosen among the p*q = {p * q} candidate functions, with an intercept, "
            "passes through nearly every point), so its training error says nothing about new "
            "data. Fit more rows, or read the formula as a description of these points only.",
            V.DataSizeWarning)
    bound = max_k_for_rows(n)
    if k > bound:
        V.warn_user(
            f"k={k} is more than {n} rows support: a tree of k operations has k + 1 leaf "
            f"weights and an intercept, each leaf chosen among 2·(k+1)·p·q candidates, so at "
            f"most one operation per {ROWS_PER_OPERATION} rows is fitted "
            f"(k <= n // {ROWS_PER_OPERATION} = {bound}); the fit uses k={bound}. Pass "
            f"k <= {bound} to silence this, or fit more rows.", V.DataSizeWarning)
        k = bound
    if budget is None:
        budget, where = memory_budget(platform)
    else:
        where = "the given budget"
    # One layout for the estimate of k and for the largest k that fits: the leaf rows of
    # the compiled capacity are what a larger k adds (search_bytes).
    per_leaf, leaves, m, small = _footprint(k, n, p, q, dtype, chunk, batch)
    need = per_leaf * leaves
    if need > budget:
        most = budget // per_leaf - 1  # the largest capacity within the budget
        fits = min(k, prog.largest_k_within(most) if small else most)
        advice = (f"use k <= {fits} (the largest that fits), " if fits >= 0 else "")
        raise ValueError(
            f"k={k} on {n:,} rows of {p} covariates would need about {_gb(need)} for the "
            f"search (its compiled capacity holds about {WORDS_PER_LEAF_ROW} floats per leaf "
            f"and row of a {m:,}-row step, {np.dtype(dtype).name}), more than the memory "
            f"budget of {_gb(budget)} ({where}). Refused before compiling: {advice}a smaller "
            f"chunk_size (fewer rows per step), or set {MEMORY_BUDGET_ENV} (bytes, e.g. "
            f"{MEMORY_BUDGET_ENV}=16GB) to allow more.")
    return k
