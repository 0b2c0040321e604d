"""Compile ahead of time: fill jaxtree's compilation cache for common table sizes.

A first fit in a new process compiles its programs (the search step alone takes several
seconds on a small CPU). With jaxtree's persistent compilation cache on (the default,
:mod:`jaxtree._compilation_cache`) a later process loads them from disk instead, and tables
of nearby sizes share them: rows, covariates and ``k`` fall in buckets
(:func:`jaxtree.scoring.rows_for`, :func:`jaxtree.scoring.columns_for`,
:func:`jaxtree.program.capacity_for`) wherever compiling costs more than searching. So
compiling once per bucket, e.g. right after ``pip install``, makes every later first fit of a
table in those buckets fast::

    jaxtree warmup                       # the default sizes, about 1.5 minutes on 2 cores
    jaxtree warmup --sizes 5000x20       # a table of 5,000 rows and 20 covariates

or :func:`warmup` from Python. What it covers: the default estimator's tree search, held-out
size selection and refit (``TreeRegressor(k=...)``) for each size's bucket, and its shape
stage with the backfitting round (each size fits two tables: one of the tree's form, one
that takes shape terms), in float32 and the default basis; with ``classifier=True``
(``jaxtree warmup --classifier``) the same for ``TreeClassifier(k=...)`` on two classes, or
on ``classes=K`` (``--classes K``: its one-versus-rest step is compiled for its number of
trees). Not covered (they compile at the first fit as before): shape terms of a table's own
covariates at 10,000 rows and more (their candidate pairs are the table's), a custom basis,
another dtype or search, and sizes above the buckets' range (where a fit's search costs
more than its compilation anyway).
"""

from __future__ import annotations

import time
import warnings
from typing import Iterable, Optional

import numpy as np

from jaxtree import _compilation_cache
from jaxtree.classifier import TreeClassifier
from jaxtree.estimator import TreeRegressor

__all__ = ["DEFAULT_SIZES", "WARMUP_FOLDS", "warmup"]  # jaxtree exports warmup

DEFAULT_SIZES = ((500, 4), (1000, 6), (1000, 8), (1000, 10), (5000, 8), (5000, 10))
"""``(rows, covariates)`` of :func:`warmup`'s default: the buckets of small tables (below
the default's 10,000-row switch to the greedy search; coarse shape terms below 2,000 rows,
fine ones from 2,000)."""

WARMUP_FOLDS = 2
"""``additive_cv`` of warmup's classifier fits (unless ``params`` name one): the folds of the
binary classifier's cross-validated additive choice (on every two-class table of 100 to
1,999 rows). Its fold fits chunk as the whole table and run in the default's capacity
(:class:`jaxtree._fit.spec.FitSpec`'s ``bucket_rows`` and ``bucket_k``), so two folds
compile every program five do (seventy-second session: ``jaxtree warmup --classifier``'s
fold fits 15 -> 6 a table, and a later fit with five folds still compiles nothing:
tests/test_columns.py's warmup test). The regressor's fold fits chunk as their own rows (a
fold of half the table may fall in another row bucket than one of four fifths), so its
warmup keeps the estimator's folds."""


def warmup(sizes: Optional[Iterable[tuple]] = None, k: int = 10, progress: bool = True,
           classifier: bool = False, classes: int = 2, **params) -> list:
    """Compiles the default estimator's programs for tables of the given sizes into jaxtree's
    compilation cache (a new process then loads them instead of compiling): its fit's. (A
    prediction of up to 1,024 rows computes on the host and compiles nothing:
    :data:`jaxtree._fit.pipeline.HOST_PREDICT_MAX_ROWS`.)

    Args:
      sizes: ``(rows, covariates)`` pairs (default ``((500, 4), (1000, 6), (1000, 8),
        (1000, 10), (5000, 8), (5000, 10))``); each stands for its bucket of nearby sizes.
      k: the estimator's ``k`` (its capacity bucket, :func:`jaxtree.program.capacity_for`).
      progress: print one line per size.
      classifier: the programs of :class:`jaxtree.TreeClassifier` instead of
        :class:`jaxtree.TreeRegressor`'s (call it once each for both).
      classes: the classifier's number of classes (2: one tree; more: one-versus-rest trees,
        whose programs are compiled per number of classes).
      **params: other parameters of that estimator, for a setting other than the default
        (e.g. ``search="greedy"`` or a basis); the same ones must be used by the fits it is
        meant to speed up.

    Returns:
      A list of ``{"rows", "covariates", "seconds"}``, one per size.

    Raises:
      ValueError: for a size that is not two positive integers, ``k < 1``, ``classes < 2``,
        or ``classes`` without ``classifier``.
      TypeError: for a parameter the estimator does not have.

    Warns:
      UserWarning: when jaxtree's compilation cache is off (``JAXTREE_COMPILATION_CACHE=0``,
        :func:`jaxtree.disable_compilation_cache`, or a cache the user configured): the
        programs then last only for this process.
    """
    sizes = DEFAULT_SIZES if sizes is None else tuple(sizes)
    checked = []
    for s in sizes:
        try:
            n, p = (int(v) for v in s)
        except (TypeError, ValueError):
            raise ValueError(f"each size must be (rows, covariates); got {s!r}.") from None
        if n < 2 or p < 1:
            raise ValueError(f"a size needs at least 2 rows and 1 covariate; got {s!r}.")
        checked.append((n, p))
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an integer >= 1; got {k!r}.")
    if not isinstance(classifier, (bool, np.bool_)):
        raise TypeError(f"classifier must be True or False; got {classifier!r}.")
    if isinstance(classes, bool) or not isinstance(classes, (int, np.integer)) or classes < 2:
        raise ValueError(f"classes must be an integer >= 2; got {classes!r}.")
    if classes != 2 and not classifier:
        raise ValueError(f"classes={classes} is the classifier's number of classes; add "
                         f"classifier=True.")
    estimator = TreeClassifier if classifier else TreeRegressor
    known = set(estimator().get_params())
    unknown = sorted(set(params) - known)
    if unknown:  # checked before any compiling (a TypeError from the first fit said less)
        raise TypeError(f"warmup got unknown parameter(s) {unknown}: table sizes go in sizes="
                        f"[(rows, covariates), ...]; other keywords are "
                        f"{estimator.__name__}'s parameters ({sorted(known)}).")
    if _compilation_cache.enable() is None:
        warnings.warn("jaxtree's compilation cache is off (JAXTREE_COMPILATION_CACHE=0, "
                      "disable_compilation_cache(), or a JAX cache you configured): the "
                      "programs compiled now last only for this process.", UserWarning,
                      stacklevel=2)
    folds = {"additive_cv": WARMUP_FOLDS} if classifier else {}
    out = []
    for i, (n, p) in enumerate(checked):
        rng = np.random.default_rng(i)
        X = rng.uniform(size=(n, p))
        noise = 0.1 * rng.normal(size=n)
        t0 = time.perf_counter()
        # two tables a size: one of the tree's form (in the default basis its fit takes no
        # shape term) and one of bends in every covariate, whose fit takes shape terms and
        # so compiles the backfitting round's programs (a table with shape terms compiled
        # them at its first fit after a warmup of the first table alone: 2.8 s at 1,000 x 10)
        # (the classifier's: the two tables' targets cut at their quantiles, e.g. above and
        # below the median for two classes)
        for y in (np.sin(3 * X[:, 0]) + X[:, -1] * X[:, 0] + noise,
                  np.abs(X - 0.5) @ (1.0 + np.arange(p) % 3) + noise):
            if classifier:
                y = np.digitize(y, np.quantile(y, np.arange(1, classes) / classes), right=True)
            estimator(k=int(k), **{**folds, **params}).fit(X, y)
        dt = time.perf_counter() - t0
        out.append({"rows": n, "covariates": p, "seconds": dt})
        if progress:
            what = f"TreeClassifier ({classes} classes)" if classifier else "TreeRegressor"
            print(f"jaxtree warmup: {what}, {n} rows x {p} covariates, k={k}: {dt:.1f} s",
                  flush=True)
    return out
