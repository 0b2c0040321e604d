"""A regression fit as one chain of stages over explicit values (DESIGN.md section 10):

    read the table (validate, encode) -> target transform -> scale
        -> stages (jaxtree._fit.stages) -> FitResult

The table is read once per fit (:func:`jaxtree._inputs.table.read_table` in memory, both
estimators; :func:`read_stream` block by block) and planned once (:func:`fit_table`): the
held-out choice of a target transform fits its candidates on rows of the same
:class:`jaxtree._inputs.table.Table`.

:func:`fit` takes the table, the targets and the estimator's ``get_params()`` and returns a
:class:`FitResult`; the estimator turns it into fitted attributes
(:func:`jaxtree._base.set_fitted`). Nothing here reads or writes an estimator.
"""

from __future__ import annotations

import dataclasses
import sys
import warnings
from typing import Any, Optional

import jax
import numpy as np

from jaxtree import _executables
from jaxtree import _target as target_
from jaxtree import export
from jaxtree import model as model_
from jaxtree import plan as plan_
from jaxtree import program as prog_
from jaxtree import search
from jaxtree import stream as stream_
from jaxtree._fit import progress, select, source, stages
from jaxtree._fit import spec as spec_
from jaxtree._inputs import encoding as encoding_
from jaxtree._inputs import table as table_
from jaxtree._inputs import validation as V

PREDICT_CHUNK_ROWS = 1 << 18
"""``predict`` evaluates at most this many rows per call (more rows: blocks of this size,
the last one padded, one compiled program), so the device and float64 copies of the input
and the intermediates stay ``O(block)`` (issue 12 item 7)."""

PREDICT_MIN_ROWS = 1024
"""The smallest row bucket of ``predict`` (:func:`predict_block_rows`)."""

PREDICT_LIGHT_ROWS = PREDICT_MIN_ROWS
"""``predict``'s blocks of at most this many rows (its smallest bucket: every call of up to
1,024 rows) compile with :data:`jaxtree._executables.LIGHT_LLVM1` (LLVM's level 1, XLA's
elemental fusion emitters), larger ones with XLA's defaults.

Decision (fiftieth session, issue 27): a user's first ``predict`` after a fit compiles the
model's prediction, and on a small table that is a visible part of the first fit-and-score
(the demo prints its test error). The program lowered once from the demo model's call and
compiled each way, fresh processes (BENCHMARKS.md, "The first prediction's program
compiled light"): 1,000 rows 0.40-0.52 s of compiling at XLA's defaults against 0.24-0.35 s,
running as fast (0.20-0.36 against 0.22-0.35 ms a call); at 200,000 rows the light program
ran 30-75% slower (7.3-8.5 against 9.9-13.4 ms), so only the smallest bucket takes it. The
predictions were bitwise those of a larger block's program (float64 and float32, with and
without shape terms); other options could round otherwise."""

HOST_PREDICT_MAX_ROWS = PREDICT_MIN_ROWS
"""``predict`` of at most this many rows computes on the host (numpy, float64:
:func:`host_predictions`) where the model's basis has no custom function; more rows, or a
custom function, go to the compiled prediction (:func:`predict_rows`).

Decision (sixty-fifth session, issue 27): after a first fit, a user's first ``predict``
compiled the model's prediction program (0.17-0.19 s on the demo's 333 test rows in a fast
hour, 0.4-0.5 s on slow days; BENCHMARKS.md, "The first prediction on the host"), for a
pass of well under a millisecond; the README's main command and every first score of a
small table paid it, and so did each new model structure (a refit with another ``k``
bucket or shape knots). On the host it takes about a millisecond and compiles nothing.
The compiled prediction stays for larger calls (it runs faster there, and its memory
stays bounded by its row blocks) and for :func:`jaxtree.model.predict`, the pure function
JAX users trace. The two agree to the model's float rounding: the host computes in float64,
so a float32 model's host predictions differ from the compiled ones in the last bits
(``tests/test_pipeline.py`` checks the agreement, float64 to 1e-12)."""

BUCKET_TREE_MAX_ROWS = 1 << 16
"""``predict`` evaluates a tree in its capacity bucket (:func:`jaxtree.model.slotted`: one
compiled program for every ``k <= 8``, ...) in blocks of at most this many rows, and at its
own size in larger blocks. Measured (the 2-core CPU, ``TreeRegressor.paper(k=1)``, p = 10):
the padded tree costs 0.0-0.1 ms at 1,000 rows and about 10 ms a call at 10^5, 30-90 ms at
10^6 rows (BENCHMARKS.md, "Trees of every size up to k = 8 share one prediction"), against
0.2-1 s of compiling a new program; a block below 2^16 rows loses at most a few ms."""


def predict_block_rows(n: int) -> int:
    """The rows ``predict`` evaluates ``n`` rows in, per call: the power of two at or above
    ``n`` (at least :data:`PREDICT_MIN_ROWS`), at most :data:`PREDICT_CHUNK_ROWS`.

    Decision (issue 27): a prediction is row by row, so padding rows changes no prediction
    (the padded rows repeat the last one; tests/test_pipeline.py checks the predictions
    bitwise), and rounding the block up lets predictions of other lengths share one compiled
    program. Each new length used to compile the model's prediction again: after the demo's
    fit, predicting five test sets of 120-300 rows took 2.1-2.6 s, now 0.4-0.5 s (one
    compilation); warm calls are level within the noise at 1-1,024 rows (0.2-0.6 ms;
    ``benchmarks/bench_predict_lengths.py``, BENCHMARKS.md "Predictions of every length up
    to 1,024 rows share one program").
    """
    n = max(int(n), 1)
    return min(PREDICT_CHUNK_ROWS, max(PREDICT_MIN_ROWS, 1 << (n - 1).bit_length()))


@dataclasses.dataclass(frozen=True)
class FitResult:
    """Everything one fit produced.

    Attributes:
      model: the fitted :class:`jaxtree.model.TreeModel`.
      history, choices, status: the driver's (every stage's iterations, in order).
      names: the table's column names, or None (numbers, or a streamed fit).
      encoding: the table encoding (:mod:`jaxtree._inputs.encoding`), or None for numeric columns as
        they are.
      spec: the resolved settings the fit ran with (its row plan in ``spec.plan``).
      path, shape_path: the held-out size and shape-count paths, or None.
      pruned: the leaves pruning removed, or None.
      transform_scores: with ``target_transform="auto"``, each transform's held-out MSE.
      target_name: the target's own name (a pandas Series' ``name``), or None.
      classes: a classifier's sorted class labels (:mod:`jaxtree._fit.classify`), else None.
      order: where a small table's fit tried both orders of the tree and the shape terms
        (:func:`jaxtree._fit.stages.order_choice`), ``(the order kept, each order's held-out
        MSE)``, else None.
      two_valued: the covariates that took exactly two values in training (the source's
        scaling finds them: :func:`jaxtree._scaling.two_valued`, a streamed pass
        :func:`jaxtree._scaling.add_two_values`); the numeric ones are marked in the
        estimator's encoding (:func:`jaxtree._inputs.encoding.with_two_valued`).
      cut: ``((j, low, high), ...)``: the covariates whose range stops short of a far tail
        (:func:`jaxtree._scaling.far_tails`) with their observed extremes
        (:func:`jaxtree._scaling.cut_columns`); the estimator's ``far_tails_``.
    """

    model: model_.TreeModel
    history: np.ndarray
    choices: list
    status: search.Status
    names: Optional[tuple]
    encoding: Any
    spec: spec_.FitSpec
    path: Optional[list] = None
    shape_path: Optional[list] = None
    pruned: Optional[list] = None
    transform_scores: Optional[dict] = None
    target_name: Optional[str] = None
    classes: Optional[np.ndarray] = None
    order: Optional[tuple] = None
    two_valued: tuple = ()
    cut: tuple = ()


def fitted_model(result: FitResult) -> model_.TreeModel:
    """The model a fit's result gives the estimator (:func:`jaxtree._base.set_fitted`): a
    fit's (not a loaded file's, which keeps its own) with its ``y_bound`` (the formula's
    tolerance) and ``clip_y`` (predictions within the training targets' range,
    :func:`jaxtree.model.predict`; the pipeline's own predictions are not clipped)."""
    if result.spec is None:
        return result.model
    return dataclasses.replace(result.model, y_bound=result.spec.y_bound, clip_y=True)


def fit(X, y, sample_weight, hyper: dict) -> FitResult:
    """The fit of ``TreeRegressor(**hyper)`` (checked with :func:`jaxtree._fit.spec.check_params`):
    the table read (:func:`read`), its target transform chosen, the table fitted
    (:func:`fit_table`)."""
    params = spec_.check_params(hyper)
    transform = hyper.get("target_transform") or "identity"
    table = read(X, y, sample_weight, hyper, transform)
    scores = None
    if transform == "auto":
        transform, scores = _choose_transform(table, hyper, params)
    res = additive_choice(table, hyper, transform, fit_table(table, hyper, params, transform))
    return dataclasses.replace(res, transform_scores=scores, target_name=target_.name_of(y))


ADDITIVE_SETTINGS = {"additive": {"shapes": "additive"},
                     "additive k=0": {"shapes": "additive", "k": 0},
                     "additive k=0 all terms": {"shapes": "additive", "k": 0},
                     "additive k=0 lines": {"shapes": "additive", "k": 0}}
"""The settings :func:`additive_choice` weighs against the default: ``shapes="additive"``
(GCV main shapes, then the tree on their residual, its size chosen on held-out rows), the
same with ``k=0`` (the tree cut to its first leaf: the main shapes and one leaf), that
with every covariate's term (:data:`ALL_TERMS`), and that with every term a line, a ridge
regression (:data:`LINES`)."""

TERMS_ALONE = {"additive terms": {"shapes": "additive", "k": 0},
               "all additive terms": {"shapes": "additive", "k": 0},
               "additive lines": {"shapes": "additive", "k": 0}}
"""The binary classifier's settings (:data:`jaxtree._fit.classify.ADDITIVE_CHOICES` and
``WIDE_CHOICES``): the ``k=0`` settings of :data:`ADDITIVE_SETTINGS` without their leaf, the
additive fit alone (``FitSpec.additive_tree``: no tree is searched; the model's tree is
empty), each term one of the formula's ``max_terms``.

Decision (eightieth session, issue 29): the leaf of the ``k=0`` settings is the best single
basis function of the additive fit's residual, searched on the training rows with nothing
to say whether it generalises (those settings hold no rows out), and in the classifier it
did not. On ISLR Default the ridge logistic lines took a ``0.25·cos(8π·balance/2660)`` leaf,
whose wiggle cost 0.0012 AUC on the benchmark's first fold (0.9467 against 0.9479 without
it; logistic regression's 0.9479). On bench_accuracy's stratified folds at three split
seeds, the classifier's choice with these settings instead of the leaf's: breast cancer
0.9930 -> 0.9951, 0.9954 -> 0.9956, 0.9954 -> 0.9961 AUC (logistic regression 0.9955,
0.9954, 0.9957; the lines are ``max_terms`` now, 19 and a leaf before), Pima 0.8575 ->
0.8586, 0.8571 -> 0.8574, 0.8462 -> 0.8454, Titanic level (BENCHMARKS.md, "The
classifier's additive fits without their leaf"). The regressor keeps its leaf: without it
mtcars went 2.675 -> 3.116 RMSE on the benchmark's split (above ridge regression's 2.925),
diabetes 54.47 -> 54.09, the other three small tables within 1%."""

ALL_TERMS = frozenset({"additive k=0 all terms", "all additive terms"})
"""The settings of :data:`ADDITIVE_SETTINGS` whose GCV fit keeps every covariate's term: no
backward elimination, the penalty's shrinkage alone (``FitSpec.additive_terms``).

Decision (seventieth session, issue 29): measured on the five small regressions' folds at
two split seeds, the GCV fit without its backward elimination was below the fit with it on
8 of 10 table-seeds for both additive settings (mtcars -10 to -23%, airquality -3 to
-14%, ggplot2 mpg -1 to -9%, diabetes to -0.5%) and above it on Boston's two (+1 to +2%):
the elimination is a subset selection, and on small tables of correlated covariates
shrinkage predicts better. Made the only fit, it cost Boston its target (3.609 -> 3.749
RMSE with the choice); as a fourth setting of the choice (its fits of ``k=0`` are the
cheapest, and compile nothing new) it lowered four of the five tables' errors and moved
Boston by +0.7% (BENCHMARKS.md, "The additive fit without its elimination"). The option
``shapes="additive"`` keeps the elimination (its formulas name only the covariates GCV
supports)."""


LINES = frozenset({"additive k=0 lines", "additive lines"})
"""The settings of :data:`ADDITIVE_SETTINGS` whose terms are lines: a ridge regression on the
covariates, its penalty chosen by GCV (``FitSpec.additive_terms``,
:func:`jaxtree._fit.additive.fit`'s ``terms="lines"``), and one leaf; the classifier's a ridge
logistic regression (:func:`jaxtree._fit.additive.fit_logistic`).

Decision (seventy-eighth session, issue 29): issue 29 asks that the default never be worse
than a linear model, and on mtcars and diabetes a ridge regression on standardised
covariates was below every setting the choice weighed. A linear model is in jaxtree's model
class (a main shape on a line prints as ``w * x``), so the choice weighs it as a fifth
setting: its fits are the cheapest of all (a ridge solve on the host and the one-leaf tree
of the ``k=0`` settings' compiled step). On bench_accuracy's folds at three split seeds:
mtcars 10-20% lower on each (below ridge on two), diabetes 54.75 -> 54.47 on the
benchmark's split (below ridge), airquality 18.84 -> 20.27 on one seed (its folds'
cross-validation preferred the lines by chance), the other table-seeds within 2% or
unchanged (BENCHMARKS.md, "Lines in the regressor's choice")."""


def terms_of(name: str) -> str:
    """How the choice's setting ``name`` (:data:`ADDITIVE_SETTINGS`, :data:`TERMS_ALONE`)
    makes its additive terms (``FitSpec.additive_terms``): ``"all"`` for :data:`ALL_TERMS`,
    ``"lines"`` for :data:`LINES`, else ``"eliminate"``."""
    return "all" if name in ALL_TERMS else "lines" if name in LINES else "eliminate"


def tree_of(name: str) -> bool:
    """Whether the choice's setting ``name`` grows a tree after its additive terms
    (``FitSpec.additive_tree``): all but :data:`TERMS_ALONE`."""
    return name not in TERMS_ALONE


def additive_setting(name: str, hyper: dict) -> dict:
    """The hyperparameters of the choice's setting ``name`` (:data:`ADDITIVE_SETTINGS`,
    :data:`TERMS_ALONE`) for the estimator's ``hyper``, in the regressor's and the
    classifier's choices; a ``k=0`` one without held-out rows where
    ``validation_fraction`` is ``"auto"``: they would choose
    among one size, and the tree grown to ``k = 0`` on all rows is the refit they lead to,
    with no selection run and no held-out evaluation to compute or compile (the same
    predictions to the bit on Pima, Titanic, airquality and Boston, seventy-first session;
    its program cut back to one slot instead of the held-out path's three;
    ``tests/test_additive_choice.py`` holds the scores to separate estimators with held-out
    rows). A fraction the user gave is kept (the fit then has its size path, ``path_``, as
    the user asked; a setting of :data:`TERMS_ALONE` searches no tree and has none).

    Decision (seventy-second session): the regressor's choice too, which had kept its
    held-out rows in the seventy-first: the same predictions to the bit on airquality,
    mtcars, diabetes, Boston and ggplot2 mpg (whole tables), warm fits (medians of six,
    alternating with the old code) diabetes 3.33 -> 3.02 s and Boston 5.21 -> 4.78 s, the
    others level within the machine's noise (BENCHMARKS.md, "The regressor's ``k=0``
    settings without held-out rows")."""
    kw = {**ADDITIVE_SETTINGS, **TERMS_ALONE}[name]
    if kw.get("k") == 0 and hyper.get("validation_fraction", "auto") == "auto":
        return {**kw, "validation_fraction": None}
    return dict(kw)


def additive_choice(table: table_.Table, hyper: dict, transform: str,
                    res: FitResult) -> FitResult:
    """``res`` (the default's fit of a small table), or the fit of ``shapes="additive"``
    (with its tree, or with ``k=0``: :data:`ADDITIVE_SETTINGS`) where
    cross-validation on the training rows prefers it; ``res.order`` then holds the choice
    (``"additive"``, ``"additive k=0"``, ``"additive k=0 all terms"`` or ``"additive k=0
    lines"``) and each setting's
    cross-validated MSE (``"cv default"``, ``"cv additive"``, ...; ``y``'s units).

    It runs only where the default's fit chose between the orders of the tree and the shape
    terms (``res.order``: ``shapes="auto"``, in memory, fewer than
    :data:`~jaxtree._fit.spec.SHAPES_FIRST_MAX_ROWS` rows, held-out rows) and its shape
    terms alone came within :data:`~jaxtree._fit.spec.SHAPES_FIRST_GATE` of the tree first's
    held-out MSE (data of the tree's own form, such as the paper's, stay well above it and
    pay nothing more). Each additive setting is fitted on all rows first: one whose formula
    has more than ``max_terms`` terms (:func:`n_terms`: the default's own bound; the GCV fit
    keeps up to ``max_terms`` main shapes and its tree adds terms on top) is never kept and
    not cross-validated. Then the default and the others are fitted on each of
    :data:`~jaxtree._fit.spec.ADDITIVE_CV_FOLDS` folds' training parts and scored on their
    held-out rows (each row held out once, weighted by ``sample_weight``, with the
    predictions the estimator would give); the setting of the lowest mean squared error is
    kept (ties to the default, then in the order above).

    Decision (sixty-ninth session, issue 29): ``shapes="additive"`` beat the default on the
    small smooth tables (Boston, airquality, mtcars) and lost on others and on the paper's
    function; one held-out split could not tell which (``ADDITIVE_ORDER``, measured in the
    sixtieth session: 6-100 held-out rows), five folds of the training rows could. Its tree,
    sized on a fifth of a small table, can overfit (airquality: 22.14 RMSE with
    ``shapes="additive"``, 19.49 with ``k=0``), so ``k=0`` is a third candidate: on two
    split seeds of the five small regressions the three-way choice was better than the
    two-way one on 5 table-seeds (airquality 22.14 -> 20.31 and 20.77 -> 18.24), level on
    6, worse on one (mtcars seed 0, 3.188 -> 3.245) (BENCHMARKS.md, "The additive fit chosen
    by cross-validation"). The fourth, ``k=0`` with every covariate's term, is
    :data:`ALL_TERMS`' decision, the fifth, ``k=0`` with lines, :data:`LINES`'. The cost is
    twenty-nine more fits of a table of fewer than 2,000 rows (warm fits about ten times
    longer; twelve of them the cheap ``k=0`` fits of the fourth and fifth settings), paid
    only past the gate; ``additive_cv=0`` turns it off."""
    order = res.order
    k = spec_.additive_folds(hyper, spec_.ADDITIVE_CV_FOLDS)  # additive_cv: 0 for none
    if (order is None or k < 2 or table.reader is not None
            or res.status & search.Status.STOPPED):  # a callback stopped the fit: no more fits
        return res
    scores = order[1]
    alone = scores.get("shape terms alone", np.inf)
    if not alone <= spec_.SHAPES_FIRST_GATE * scores["tree first"]:
        return res
    sw, ya = table.sample_weight, table.y
    try:
        parts = select.folds(table.n, k, hyper.get("random_state"), sw)
    except ValueError:  # too few rows to cross-validate: the default's fit
        return res
    # Every fit from here on is quiet (no progress bars, no callback: the default's fit
    # reported its own) and with each setting's own checked parameters (Params holds k).
    quiet = {**hyper, "verbose": 0, "callback": None}
    settings = {"default": quiet,
                **{name: {**quiet, **additive_setting(name, hyper)} for name in ADDITIVE_SETTINGS}}
    checked = {name: spec_.check_params(h) for name, h in settings.items()}

    def fitted(rows, train, name):  # train: the rows' indices in the table (unused here)
        with warnings.catch_warnings():  # the default's fit on all rows said it, once
            warnings.simplefilter("ignore", V.DataSizeWarning)
            # in the default's capacity bucket: the k=0 setting shares its compiled step
            return fit_table(rows, settings[name], checked[name], transform,
                             bucket_k=res.spec.k, terms=terms_of(name))

    clip = hyper.get("clip", True)
    weighed = weigh_settings(
        table, parts, list(settings), fitted,
        lambda cand, held: (predict_rows(fitted_model(cand), table.x[held], clip) - ya[held]) ** 2,
        res.spec.max_terms, hyper.get("verbose", 0), "MSE")
    if weighed is None:  # every setting over max_terms terms: the default's fit
        return res
    best, kept, cv = weighed
    if best == "default":
        return dataclasses.replace(res, order=(order[0], {**scores, **cv}))
    return dataclasses.replace(kept[best], order=(best, {**scores, **cv}))


def weigh_settings(table: table_.Table, parts, names: list, fit, row_losses, max_terms: int,
                   verbose: int, judge: str):
    """The sequence the regressor's and the classifier's additive choices share. Each setting
    of ``names`` but the first (the default, whose fit on all rows the caller holds) is
    fitted on all rows first (``fit(table, None, name)``); one whose formula has more than
    ``max_terms`` terms (:func:`n_terms`) is never kept, so no folds are fitted for it (the
    default's formula stays this short). The default and the rest are then cross-validated
    on the folds ``parts`` (:func:`cross_validated`, with ``fit`` and ``row_losses``).

    Returns:
      None where no setting is left; else ``(best, kept, cv)``: the name of the lowest mean
      loss (ties to the earlier name, so to the default first), the all-row fits of the
      other settings by name, and ``{"cv <name>": mean loss}`` of every weighed setting.
      ``verbose > 0`` says what is weighed and kept (``judge`` names the loss)."""
    default, *others = names
    kept = {name: fit(table, None, name) for name in others}
    kept = {name: one for name, one in kept.items() if n_terms(one.model) <= max_terms}
    if not kept:
        return None
    names = [default, *kept]
    if verbose > 0:
        print(f"[jaxtree] shapes='auto': weighing {', '.join(kept)} against the default by "
              f"{len(parts)}-fold cross-validation ({len(names) * len(parts)} fits)",
              file=sys.stderr)
    loss, total = cross_validated(table, parts, names, fit, row_losses)
    cv = {f"cv {name}": v / total for name, v in loss.items()}
    best = min(loss, key=loss.get)  # ties to the earlier setting (the default first)
    if verbose > 0:
        said = ", ".join(f"{name} {v:.4g}" for name, v in zip(loss, cv.values()))
        print(f"[jaxtree] shapes='auto': {len(parts)}-fold {judge} {said}: kept {best}",
              file=sys.stderr)
    return best, kept, cv


def cross_validated(table: table_.Table, parts, names, fit, row_losses) -> tuple:
    """``({name: summed held-out loss}, total weight)`` of the settings ``names`` over the
    folds ``parts`` (:func:`jaxtree._fit.select.folds`) of the in-memory ``table``:
    ``fit(rows, train, name)`` fits a setting on a fold's training part (``rows``, the
    :func:`table_rows` of the indices ``train``; :func:`weigh_settings` passes the whole
    table with ``train`` None), ``row_losses(fit, held)`` gives its losses
    on the held-out rows ``held``, weighted by ``sample_weight``. The one fold loop of the
    regressor's and the classifier's additive choices."""
    sw = table.sample_weight
    loss = dict.fromkeys(names, 0.0)
    for train, held in parts:
        rows = table_rows(table, train)
        w = np.ones(len(held)) if sw is None else sw[held]
        for name in names:
            loss[name] += float(np.sum(w * row_losses(fit(rows, train, name), held)))
    return loss, float(table.n if sw is None else np.sum(sw))


def table_rows(table: table_.Table, rows) -> table_.Table:
    """The in-memory ``table``'s rows ``rows``: their covariates, targets (where the table
    holds them) and weights, with its encoding (a fold's training part)."""
    sw = table.sample_weight
    return dataclasses.replace(table, x=table.x[rows],
                               y=None if table.y is None else table.y[rows],
                               sample_weight=None if sw is None else sw[rows],
                               n_weighted=None if sw is None else int(np.sum(sw[rows] > 0)))


def n_terms(model: model_.TreeModel) -> int:
    """The terms of a model's formula that ``max_terms`` counts: its shape terms and the
    tree's top-level terms (:func:`jaxtree.program.n_terms`)."""
    shapes = 0 if model.shapes is None else int(np.asarray(model.shapes.n_terms))
    return shapes + prog_.n_terms(model.program)


def read(X, y, sample_weight, hyper: dict, transform: str) -> table_.Table:
    """The regressor's table with its targets: a memmap or ChunkReader streamed
    (:func:`read_stream`), else read in memory (:func:`jaxtree._inputs.table.read_table`)
    with ``y`` checked in the compute dtype."""
    if streams(X, hyper.get("engine", "jax")):
        check_streamable_options(transform)
        return read_stream(X, y, sample_weight, hyper)
    table = table_.read_table(X, sample_weight, hyper)
    return dataclasses.replace(table, y=V.check_targets(y, table.n, table.dtype))


def fit_table(table: table_.Table, hyper: dict, params: spec_.Params,
              transform: str, bucket_k: int = 0, terms: str = "eliminate") -> FitResult:
    """The fit of a read table with a fixed target transform (``"identity"``, ``"log"``,
    ``"square"``; a streamed table's is the identity); ``bucket_k``: the search compiles for
    at least that ``k``'s capacity (``FitSpec.bucket_k``); ``terms``: how
    ``shapes="additive"`` makes its terms (``FitSpec.additive_terms``,
    :data:`jaxtree._fit.additive.TERMS`).

    The one planning call of a regressor's fit (:func:`jaxtree._fit.spec.fit_spec`: the row
    plan, the bounded ``k``, the rest of the settings) comes here, once the encoded
    covariates are known, for a streamed table too. The source reads the rows as the plan
    says (:func:`jaxtree._fit.source.scaled`: a reader with the plan's chunk; a large
    in-memory matrix chunk by chunk)."""
    xa, sw, enc, streamed = table.x, table.sample_weight, table.encoding, table.reader
    spec = spec_.fit_spec(hyper, params, xa, table.dtype, transform,
                          chunk_size=table.chunk_size, streamed=streamed is not None,
                          n_weighted=table.n_weighted)
    spec = spec.replace(shape_groups=spec_.shape_groups(enc, spec.shape_knots),
                        filled=spec_.filled(enc), bucket_k=bucket_k,
                        additive_terms=terms)
    yt = None if streamed is not None else target_.forward(table.y, transform, sw)  # y <= 0
    rows = streamed if streamed is not None else (xa, yt, sw)
    res = _fit_rows(rows, spec, table.feature_names, enc, table.names)
    # (a chunked fit has no target transform: fits_in_chunks; the model is then unchanged)
    return dataclasses.replace(
        res, model=model_.with_target_transform(res.model, transform, xa, yt, sw))


def read_stream(X, y, sample_weight, hyper: dict) -> table_.Table:
    """The table of a memmap or a :class:`jaxtree.stream.ChunkReader`, read block by block.

    Missing values (issue 12): with ``missing="indicator"`` one streamed pass over ``X``
    first (:func:`jaxtree._inputs.encoding.streamed_rows`) finds the columns with NaN and their
    minima and builds the spec the in-memory fit builds for the same array; when there are
    some, the search reads ``X`` encoded on demand (:class:`jaxtree._inputs.encoding.EncodedRows`:
    fill values and ``"<col> missing"`` indicators made block by block, never for the whole
    array), so the model, its ``encoding_`` and formulas are the in-memory fit's. The price
    is that one extra read of ``X``; ``missing="error"`` skips it for data known to hold no
    NaN (the scaling pass refuses a NaN, naming its row and column). A user's ChunkReader is
    read the same way (its ``x`` wrapped, its ``y``, weights and chunk size kept). ``inf``
    is refused under both policies.

    :func:`fit_table` plans the fit with the chunk size asked and the encoded covariates
    (the encoding pass reads blocks of at least ``2**22`` values whatever the chunk, so
    the plan's chunk is not needed before it). The compute dtype is the covariates' as read
    (the encoding keeps it: :class:`jaxtree._inputs.encoding.EncodedRows` are float32 for floats
    of at most 4 bytes, else float64)."""
    if hyper.get("engine", "jax") != "jax":
        raise ValueError("Streaming a memmap or ChunkReader needs engine='jax'.")
    check_stream_args(X, y, sample_weight, "them")  # held-out sizes stream
    own = isinstance(X, stream_.ChunkReader)
    dtype = V.float_dtype_for(X.x if own else X, bool(jax.config.jax_enable_x64))  # as read
    if own:
        reader, asked = X, X.chunk_size
    else:
        y = y if isinstance(y, np.ndarray) else V.check_y(y, X.shape[0] if X.ndim else 0)
        if y.dtype.kind in "biu":  # integer targets: n numbers, cheap to hold as floats
            y = np.asarray(y, np.float64)
        asked = hyper.get("chunk_size", "auto")
        chunk = plan_.CPU_CHUNK if asked == "auto" else asked  # until the plan's
        # A small memmap simply fits: one chunk of all its rows.
        chunk = min(chunk, X.shape[0]) if X.ndim and X.shape[0] else chunk
        reader = stream_.ChunkReader(X, y, sample_weight, chunk_size=chunk)
    x, enc = encoding_.streamed_rows(reader.x, reader.chunk_size,
                                     hyper.get("missing", "indicator"))
    if enc is not None:  # the same rows, chunk size, dtype, y and weights; x encoded
        reader = stream_.ChunkReader(x, reader.y, reader.sample_weight,
                                     chunk_size=reader.chunk_size, dtype=reader.dtype)
    n_weighted = V.check_weighted_rows(reader.sample_weight, reader.n)
    return table_.Table(reader.x, reader.sample_weight, enc, None, dtype, y=reader.y,
                        reader=reader, chunk_size=asked, n_weighted=n_weighted)


def _fit_rows(rows, spec: spec_.FitSpec, feature_names, enc, names) -> FitResult:
    """The stages on a table's rows, held in memory (``(x, y, sample_weight)``) or read
    block by block (a :class:`jaxtree.stream.ChunkReader`): scaled
    (:func:`jaxtree._fit.source.scaled`), searched, made a model in the covariates' units."""
    src = source.scaled(rows, spec)
    with progress.reporting(src.spec, feature_names) as rep, _executables.light_if(spec.light):
        found = stages.search_model(src, src.spec, rep)
    return _result(_model(found, src.sc, src.spec, feature_names), found, src.spec, enc, names,
                   src.two_valued, src.cut)


def _model(found: stages.Searched, sc, spec: spec_.FitSpec, feature_names) -> model_.TreeModel:
    model = model_.TreeModel.from_scaling(found.result.program, sc, spec.dtype, spec.basis,
                                          feature_names, spec.model_missing)
    if found.shapes is not None:
        model = dataclasses.replace(model, shapes=found.shapes[0], shape_spec=found.shapes[1])
    return model


def _result(model, found: stages.Searched, spec, enc, names, two_valued: tuple,
            cut: tuple = ()) -> FitResult:
    res = found.result
    return FitResult(model=model, history=np.asarray(res.history, np.float64),
                     choices=list(res.choices), status=search.Status(int(res.status)),
                     names=names, encoding=encoding_.with_range_fills(enc, model.x_min),
                     spec=spec, path=found.path, shape_path=found.shape_path,
                     pruned=found.pruned, order=found.order, two_valued=two_valued, cut=cut)


# ---------------------------------------------------------------------------- encode

def streams(X, engine: str) -> bool:
    """Whether a fit of ``X`` reads its rows block by block (both estimators): a memmap or a
    :class:`jaxtree.stream.ChunkReader` (data larger than memory is streamed, never
    materialised), except a memmap under the reference engine, whose plain numpy reads it
    like any array."""
    return (isinstance(X, stream_.STREAMED_TYPES)
            and not (engine == "reference" and isinstance(X, np.memmap)))


def check_stream_args(X, y, sample_weight, held: str, validation_fraction=None) -> None:
    """What both estimators refuse before streaming ``X`` (a memmap or a ChunkReader): a
    held-out size (the classifier's), and ``y``/``sample_weight`` beside a ChunkReader (which
    holds ``held``)."""
    if validation_fraction is not None:
        raise ValueError("validation_fraction is not supported for streamed data (a memmap or "
                         "ChunkReader) yet; set validation_fraction=None and choose k, or fit an "
                         "in-memory array.")
    if isinstance(X, stream_.ChunkReader) and (y is not None or sample_weight is not None):
        raise ValueError("With a ChunkReader pass y=None and sample_weight=None: the reader "
                         f"already holds {held}.")


def check_streamable_options(transform) -> None:
    if transform != "identity":
        raise ValueError("target_transform is not supported for streamed data (a memmap or "
                         "ChunkReader) yet; fit an in-memory array, or leave it at None.")


# ---------------------------------------------------------------------------- target


def _choose_transform(table: table_.Table, hyper: dict, params: spec_.Params) -> tuple:
    """``(transform, scores)`` for ``target_transform="auto"``: identity, log or square,
    chosen on held-out rows (the caller refits the choice on all rows).

    A deterministic split (``random_state``, 25% held out) fits each applicable transform on
    the rest; the held-out MSE in ``y``'s units (predictions back-transformed) decides, ties
    to the earlier of identity, log, square. ``log`` is not tried when some ``y <= 0``,
    ``square`` when some ``y < 0``. ``scores`` holds each transform's held-out MSE (inf where
    not tried; identity's NaN when no other transform applies).

    The candidates are fitted on the encoded covariates as plain numeric columns (no
    categorical groups for the shape terms, and a filled column's filled rows left at its
    training minimum, :func:`jaxtree._inputs.encoding.refill`), as they were when each
    candidate re-encoded the encoded matrix; the choice, not the candidates, reaches the
    user.
    """
    n, sw, ya = table.n, table.sample_weight, table.y
    keep = np.ones(n, bool) if sw is None else sw > 0
    scores = {"identity": np.inf, "log": np.inf, "square": np.inf}
    tried = ["identity"] + (["log"] if (ya[keep] > 0).all() else []) + (
        ["square"] if (ya[keep] >= 0).all() else [])
    if n >= 8 and len(tried) > 1:
        train, held = select.split(n, 0.25, hyper.get("random_state"), sw)
        w = np.ones(len(held)) if sw is None else sw[held]
        rows = table_.Table(table.x[train], None if sw is None else sw[train], None, None,
                            table.dtype, y=ya[train])  # no encoding: plain numeric columns
        for t in tried:
            with warnings.catch_warnings():  # the refit on all rows says it, once
                warnings.simplefilter("ignore", V.DataSizeWarning)
                cand = fit_table(rows, hyper, params, t)
            err = (predict_rows(cand.model, table.x[held], hyper.get("clip", True))
                   - ya[held]) ** 2
            scores[t] = float(np.sum(w * err) / max(np.sum(w), 1e-300))
    else:
        scores["identity"] = np.nan  # not compared: no other transform applies
    choice = min(tried, key=lambda t: (scores[t], tried.index(t)))
    choice = choice if np.isfinite(scores[choice]) else "identity"
    if hyper.get("verbose", 0) > 0:
        said = ", ".join(f"{t} {scores[t]:.4g}" for t in scores)
        print(f"[jaxtree] target_transform='auto' chose {choice!r} (held-out MSE: {said})",
              file=sys.stderr)
    return choice, scores


# --------------------------------------------------------------------------- predict

def predict_rows(model, xa, clip: bool, values=None, host=None) -> np.ndarray:
    """Float64 predictions ``(n,)`` of the validated matrix ``xa (n, p)``, by row blocks of
    :func:`predict_block_rows` rows (``xa`` may be a memmap's
    :class:`jaxtree._inputs.encoding.EncodedRows`: each block is encoded when read, and checked for
    infinite values there). Every block, the last included, is padded to that many rows (the
    last row repeated), so that all have one compiled shape, shared by nearby ``n``.

    ``values(model, block, clip)``: what is evaluated per block (rows first; a classifier's
    decision values, ``(rows,)`` or ``(rows, K)``); default
    :func:`jaxtree.model.predict_checked` of the model's :func:`jaxtree.model.slotted` form
    (one program for the models of the same settings, whichever shape pairs they chose,
    and in blocks of at most :data:`BUCKET_TREE_MAX_ROWS` rows whichever tree size up to
    its capacity bucket).

    ``host(rows)``: the same values computed on the host from all the rows at once, or None
    where it cannot (a basis with a custom function); default (without ``values``)
    :func:`host_predictions`. A call of at most :data:`HOST_PREDICT_MAX_ROWS` rows takes it
    where it gives values."""
    n, m = xa.shape[0], predict_block_rows(xa.shape[0])
    lazy = not isinstance(xa, np.ndarray)  # EncodedRows: rows encoded when read
    if host is None and values is None:
        def host(rows):
            return host_predictions(model, rows, clip)
    if host is not None and n <= HOST_PREDICT_MAX_ROWS:
        c = PREDICT_CHUNK_ROWS
        rows = (np.concatenate([_finite_block(xa[s:s + c], s) for s in range(0, n, c)])
                if lazy else xa)
        out = host(rows)
        if out is not None:
            return out
    if values is None:  # a regressor's model: its shape terms' pairs as data (model_.slotted)
        model, terms = model_.slotted(model, bucket_tree=m <= BUCKET_TREE_MAX_ROWS)

        def values(model, x, clip):
            return model_.predict_checked(model, x, clip=clip, terms=terms)
    parts = []
    with _executables.light_if(m <= PREDICT_LIGHT_ROWS):  # compiling dominates: see there
        for s in range(0, n, m):
            block = _finite_block(xa[s:s + m], s) if lazy else xa[s:s + m]
            rows = block.shape[0]
            if rows < m:  # pad: the same compiled shape
                block = np.concatenate([block, np.repeat(block[-1:], m - rows, 0)])
            parts.append(np.asarray(values(model, block, clip), np.float64)[:rows])
    return np.concatenate(parts) if len(parts) != 1 else parts[0]


def host_predictions(model, x, clip: bool) -> Optional[np.ndarray]:
    """Float64 predictions ``(n,)`` of one tree's model (a regressor's, or a binary
    classifier's decision values) at validated, encoded rows ``x (n, p)``, in numpy with
    nothing compiled: :func:`jaxtree.model.predict`'s missing-value rule (a NaN to the
    range's low end; applied here silently, as the compiled path does, where
    ``to_callable``'s would warn), then the model's numpy form
    (:func:`jaxtree.export.to_callable`: the scaling, the tree, the shape terms, the bound,
    the target's units). None where the basis has a custom function
    (:func:`jaxtree._fit.select.numpy_basis`: it may not take numpy arrays). Why:
    :data:`HOST_PREDICT_MAX_ROWS`."""
    if not select.numpy_basis(model.basis):
        return None
    x = np.asarray(x, np.float64)
    if model.missing != "error":  # the missing-value rule of jaxtree.model.predict
        x = np.where(np.isnan(x), np.asarray(model.x_min, np.float64), x)
    return export.to_callable(model, "numpy", clip=clip)(x)


def _finite_block(block, start: int) -> np.ndarray:
    """``block``, rows of ``X`` from row ``start`` (a memmap's rows encoded when read, at
    predict time): ValueError naming the first infinite value."""
    if not np.isfinite(block).all():
        row, col = (int(i) for i in np.argwhere(~np.isfinite(block))[0])
        raise ValueError(f"X contains an infinite value at row {start + row} (the first); "
                         "remove or replace infinite values before predicting.")
    return block
