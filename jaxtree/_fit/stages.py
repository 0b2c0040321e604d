"""The stages of a fit, written once for every source (:mod:`jaxtree._fit.source`):

    [shapes=S: shape terms first | shapes="additive": every main shape by GCV] ->
    tree (its size on held-out rows) ->
    [shapes="auto": shape terms of its residual] -> backfitting round -> prune

Each takes the source, the :class:`~jaxtree._fit.spec.FitSpec` and a
:class:`~jaxtree._fit.progress.Reporter`, and returns values; :func:`search_model` chains
them into a :class:`Searched`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from typing import NamedTuple, Optional

import jax
import numpy as np

from jaxtree import _executables
from jaxtree import program as prog
from jaxtree import search
from jaxtree import shapes as shapes_
from jaxtree._fit import additive as additive_
from jaxtree._fit import host_shapes as host_
from jaxtree._fit import select
from jaxtree._fit import spec as spec_


class Searched(NamedTuple):
    """What the stages found: the search result (the tree's program, the histories and
    choices of every stage, the status), the shape terms ``(terms, spec)`` or None, the size
    path and shape path (held-out selection runs) or None, the pruned leaves or None, and
    where both orders were fitted (:func:`order_choice`) ``(the order kept, each order's
    held-out MSE)``, else None."""

    result: search.SearchResult
    shapes: Optional[tuple]
    path: Optional[list]
    shape_path: Optional[list]
    pruned: Optional[list]
    order: Optional[tuple] = None


def search_model(src, spec: spec_.FitSpec, rep) -> Searched:
    """All stages of one fit on ``src``. The default's shape stage (``shapes="auto"``) on a
    small table compiles its programs for compile time (``spec.quick_shapes``,
    :func:`jaxtree._executables.quick`; the tree's search programs as always, and so the
    backfitting round's refinement where it runs through the search's own
    :func:`jaxtree.search.refine_step`; where it needs an L-BFGS program of its own, the
    backfit search's, that one is quick too: 1.4 -> 0.6 s of compiling, the same fits on
    tests/test_golden.py). ``shapes=S`` compiles as always: such fits are
    :func:`jaxtree.batch.fit_batch`'s members, which must equal them, and a quick stage moved
    one member's predictions by 1.7e-5 (``refine="optax"``: twenty L-BFGS steps carry the
    last bits; measured on tests/test_batch_shapes.py's data at XLA's default flags)."""
    shape_fit = shape_path = order = None
    quick = _executables.quick if spec.quick_shapes else contextlib.nullcontext
    if spec.additive:
        res, shape_fit, path = additive_first(src, spec, rep)
    elif spec.shapes:
        res, shape_fit, path, shape_path = shapes_first(src, spec, rep)
    else:
        ahead = _shapes_ahead(src, spec, quick) if spec.shapes_after else None
        with _executables.while_waiting(ahead) if ahead else contextlib.nullcontext():
            res, path, held = tree(src, spec, rep)
        held = _chosen(held) if spec.both_orders else None
        with quick():
            if spec.shapes_after and getattr(src, "n_trees", 1) > 1:  # each tree its own
                res, shape_fit, shape_path, held = shapes_after_each(src, spec, rep, res)
            elif spec.shapes_after:
                res, shape_fit, shape_path, held = shapes_after(src, spec, rep, res)
            if spec.both_orders and held is not None and not res.status & search.Status.STOPPED:
                (res, shape_fit, path, shape_path), order = order_choice(
                    src, spec, rep, (res, shape_fit, path, shape_path), held)
    pruned = None
    if spec.prune_tol is not None:
        program, pruned = src.prune(res.program, shape_fit)
        res = res._replace(program=program)
        if spec.verbose > 0 and pruned:
            print(f"[jaxtree] pruned {len(pruned)} leaf(s) at prune_tol={spec.prune_tol}",
                  file=sys.stderr)
    return Searched(res, shape_fit, path, shape_path, pruned, order)


def _shapes_ahead(src, spec: spec_.FitSpec, quick):
    """A task that starts compiling the shape count's programs (:meth:`OneFit.compile_ahead`)
    before the tree is found, for :func:`jaxtree._executables.while_waiting`: the tree's
    search waits for its own programs' compilation, and meanwhile this thread traces and
    lowers the shape stage's. None where the stage's programs do not follow from the table
    alone (not bucketed: a :class:`jaxtree.shapes.ShapeSpec` names the screened pairs).

    The programs depend on the shapes of their arguments only (a bucketed stage's pairs are
    data, :class:`jaxtree.shapes.SlotSpec`), so the split of ``y`` itself, with no pair,
    stands in for the split of the tree's residual (:func:`shapes_after`); its calls then
    take the executables, compiled once under their own keys (``quick``: the stage's
    block, :attr:`jaxtree._fit.spec.FitSpec.quick_shapes`).

    Why (issue 27): the demo's first fit waited about 2 s for the search step's two
    programs on a thread with nothing to do, then traced and compiled the shape stage's
    programs one after the other, about 1.3 s. The forty-seventh session ran this task at
    the first wait and measured no gain (its tracing and compilations competed with the
    step's for the two cores); since the fifty-second it runs once a core is free and its
    compilations queue behind the step's (:func:`jaxtree._executables.while_waiting`).
    The binary classifier names its search step ahead too (``Labels._search``), so its
    fits run the task while that step compiles (its ``shape_split`` without a tree gives
    the working data of the zero decision function, of the same shapes)."""
    own = bucket(src)
    if own is None or spec.host_shapes:  # the host stage compiles nothing
        return None

    def task():
        data, held_data, _ = src.shape_split()
        with quick():
            OneFit.compile_ahead(data, held_data, _spec(data, spec, spec.shape_capacity, (), own))

    return task


# -------------------------------------------------------------------------- the tree

def tree(src, spec: spec_.FitSpec, rep, selected=None) -> tuple:
    """``(search result, size path or None, held or None)``: the tree grown to ``k``
    operations, or with a ``validation_fraction`` its size chosen on held-out rows first
    (the source's ``size_path``: the paired standard-error rule,
    :func:`jaxtree._fit.select.choose_size` for a regression, per one-versus-rest tree for a
    classifier, :mod:`jaxtree._fit.classify`) and then refitted on all rows. ``held``: the
    selection run's per-row held-out losses and the rows' weights (the source's
    ``selection_run``; :func:`order_choice` reads them); ``selected``: that run's result
    when it has run already."""
    cfg = src.tree_config()
    if spec.validation_fraction is None:
        return src.grow(spec.k, cfg, rep), None, None
    sel, held = src.selection_run(cfg, rep) if selected is None else selected
    k_best, path = src.size_path(sel, held, rep.names)  # per tree for one-versus-rest trees
    rep.reset(int(np.max(k_best)), "refit")
    res = src.grow(k_best, cfg, rep, chosen=True)
    # The selection run's early stop (tol) is why the sizes end before k: the status says so
    # (per member of a batch, jaxtree.batch's source).
    status = np.asarray(res.status, np.int64) | (
        np.asarray(sel.status, np.int64) & int(search.Status.CONVERGED))
    res = res._replace(status=search.Status(int(status)) if status.ndim == 0 else status)
    return res, path, held


# ------------------------------------------------------------------------ shape terms

def shapes_first(src, spec: spec_.FitSpec, rep) -> tuple:
    """``shapes=S``: the shape terms first, then the tree on their residual, then one
    backfitting round (the shapes refitted given the tree, the tree's weights refined given
    the shapes). Returns ``(search result, (terms, spec), size path, shape path)``.

    The shape search and the tree search each run through the one driver
    (:func:`jaxtree.search.run`); their histories and choices are concatenated (the tree's
    losses are the full model's: it is fitted to the shapes' residual). With
    ``validation_fraction`` the number of shapes is chosen first (paired standard-error rule on
    held-out rows, ``shapes`` is the upper bound), then the tree's size on the shapes'
    residual, as for a tree alone. The terms are searched on at most
    ``shapes.SEARCH_ROWS`` rows, then backfitted on all rows over the chosen terms only.
    :func:`jaxtree.fit_batch`'s members run this stage too, with the batch's kernels
    (``src.shape_kernels``): each member's count, histories and choices are its own.

    With ``devices`` only the tree search is sharded: the shape stage runs on one device.
    On CPU devices (``--xla_force_host_platform_device_count``) the shape search run
    sharded deadlocked: every device runs the batched LAPACK solve of
    :func:`jaxtree.shapes.candidate_gains` at once, and each batch's solves are spread over
    the one thread pool the devices share and waited for, so with as many devices as the
    pool has workers all of them wait for tasks that no free worker is left to run.
    """
    scale = src.loss_scale
    kernels = getattr(src, "shape_kernels", OneFit)  # jaxtree.fit_batch's members: a batch's
    n_shapes, screened, shape_path = spec.shapes, None, None
    own = bucket(src)
    if spec.validation_fraction is not None:
        n_shapes, screened, _, _, shape_path, _, _ = choose_shapes(
            src.shape_split(), spec, rep, scale, spec.shapes, p=own, kernels=kernels)
        # the chosen terms, then the tree's first leaf and k insertions
        rep.phase(int(np.max(n_shapes)) + spec.k + 1, "refit")
    sub, all_rows = src.shape_search_rows()
    sres, found, sspec, gr = shape_search(sub, spec, rep, scale, n_shapes, spec.shapes, screened,
                                          grams=all_rows and src.reuses_grams, p=own,
                                          kernels=kernels)
    del sub
    fit = src.fit_shapes(sres, found, sspec, gr, all_rows)
    done = len(sres.history) if np.ndim(sres.status) == 0 else max(map(len, sres.history))
    with rep.after(done):  # the tree's iterations follow the shapes'
        found_tree, path, _ = tree(src.given_shapes(fit, sspec), spec, rep)
    path = kernels.with_shapes(path, *shapes_.unslot(fit.terms, sspec, own, spec.shape_groups))
    terms, program, mse = src.backfit(src.tree_program(found_tree.program), fit.terms, sspec, fit)
    terms, sspec = shapes_.unslot(terms, sspec, bucket(src), spec.shape_groups)
    return _joined(sres, found_tree, program, mse, scale), (terms, sspec), path, shape_path


def additive_first(src, spec: spec_.FitSpec, rep) -> tuple:
    """``shapes="additive"``: every covariate's main shape by penalised least squares, its
    smoothness chosen by GCV on all training rows (:func:`jaxtree._fit.additive.fit`, on the
    host; a binary classifier's by penalised IRLS and UBRE,
    :func:`jaxtree._fit.additive.fit_logistic`: the source's ``additive_fit``), then the tree
    on their residual (a classifier's searched with their logits as its offset), its size
    chosen on held-out rows where the fit holds rows out.
    The terms are not refitted after the tree (a backfitting round would refit them
    unpenalised). Returns ``(search result, (terms, spec), size path)``; the result's
    history and choices are the tree's (its losses the whole model's: the tree is fitted
    to the terms' residual). Only in memory (:func:`jaxtree._fit.spec.resolve` refuses a
    streamed fit).

    With ``k=0`` the terms are at most ``max_terms - 1``: the tree's one leaf is a term of
    the formula too. Before the seventy-ninth session such a fit of more covariates than
    ``max_terms`` had ``max_terms + 1`` terms, so the cross-validated choices never kept
    their ``k=0`` settings there (:func:`jaxtree._fit.pipeline.weigh_settings`).

    Without ``spec.additive_tree`` the terms are the model (up to ``max_terms`` of them): the
    tree is empty and no search runs; the result's history is the terms' training loss
    (the source's ``terms_loss``), with no choices (the binary classifier's choice,
    :data:`jaxtree._fit.pipeline.TERMS_ALONE`)."""
    leaf = spec.additive_tree and spec.k == 0
    gam = src.additive_fit(max(spec.max_terms - leaf, 1), _additive_hats(spec))
    terms = additive_.on_device(gam.terms)
    if spec.additive_tree:
        found_tree, path, _ = tree(src.given_values(gam.values), spec, rep)
    else:
        empty = prog.empty_program(src.tree_config().max_k, spec.dtype)
        found_tree = search.SearchResult(empty, np.asarray([src.terms_loss(gam.values)]), [],
                                         search.Status.OK)
        path = None
    path = OneFit.with_shapes(path, terms, gam.spec)
    return found_tree._replace(program=src.tree_program(found_tree.program)), \
        (terms, gam.spec), path


def _joined(sres, found_tree, program, mse, scale) -> search.SearchResult:
    """The search result of the shape terms, then the tree: histories and choices
    concatenated (a batch's per member), the last loss the final model's ``mse`` (scaled
    space) in the history's units, the shapes' status without FULL (their capacity is no
    stop of the model's)."""
    full = int(search.Status.FULL)
    if np.ndim(found_tree.status) == 0:
        history = list(sres.history) + list(found_tree.history)
        history[-1] = mse * scale
        status = search.Status(int(sres.status) & ~full) | found_tree.status
        return search.SearchResult(program, np.asarray(history, np.float64),
                                   list(sres.choices) + list(found_tree.choices), status)
    mse = np.asarray(mse, np.float64) * scale
    histories, choices = [], []
    for b, tree_choices in enumerate(found_tree.choices):  # a member's tree may end early
        h = np.r_[sres.history[b], np.asarray(found_tree.history[b])[: len(tree_choices)]]
        h[-1] = mse[b]
        histories.append(h)
        choices.append(list(sres.choices[b]) + list(tree_choices))
    status = (np.asarray(sres.status, np.int64) & ~full) | np.asarray(found_tree.status, np.int64)
    return search.SearchResult(program, histories, choices, status)


def shapes_after(src, spec: spec_.FitSpec, rep, found_tree) -> tuple:
    """``shapes="auto"``: up to ``spec.shape_capacity`` shape terms of the tree's residual
    (:data:`~jaxtree._fit.spec.AUTO_SHAPES` at the default ``max_terms``), with the tree's
    terms at most ``spec.max_terms``, as many as held-out rows support (the paired
    standard-error rule; often none, and then the fit is the tree's exactly), then the
    backfitting round. Returns ``(search result, (terms, spec) or None, shape path, held)``.

    The tree comes first so that data whose truth has the tree's form keeps the tree's
    formula: shapes fitted first take such structure with piecewise-linear pieces the tree
    cannot undo (BENCHMARKS.md, "Shape terms"). The selection run reads at most
    ``shapes.SEARCH_ROWS`` training rows (a streamed source reads them into memory, so its
    memory is ``O(SEARCH_ROWS * p)``); its terms at the chosen count are the model's (no
    second search). The selection run's own stops (the bound, its early stop, or running
    out of candidates: with p covariates there are p mains and at most ``MAX_PAIRS`` pairs,
    fewer than ``AUTO_SHAPES`` at p <= 5) are not the model's status: the count it chose lies
    before any of them. ``held``: the per-row held-out losses at the chosen count and the
    rows' weights, None where no shape term had room."""
    scale = src.loss_scale
    program = src.tree_program(found_tree.program)
    # The formula stays readable: the tree's terms and the shapes' together at most
    # max_terms (issue 29; 20 by default). The selection run keeps its capacity (so one
    # compiled shape step serves every tree) and runs fewer iterations.
    room = min(spec.shape_capacity, spec.max_terms - prog.n_terms(program))
    if room <= 0:
        return found_tree, None, None, None
    after = len(found_tree.history)
    split = src.shape_split(program)
    n_shapes, _, sel, sspec, shape_path, (rows, w), train_grams = choose_shapes(
        split, spec, rep, scale, spec.shape_capacity, states=True, n_iter=room,
        p=bucket(src), kernels=after_kernels(spec))
    rep.phase(after + n_shapes, "shapes", done=after)  # the tree's iterations, then the terms
    held = (rows[n_shapes], w)
    stopped = search.Status.OK
    losses = src.shape_losses(program, sel, n_shapes, sspec)  # the history's units
    for i in range(n_shapes):  # the progress bar and callback, as for a search
        if rep(after + i, float(losses[i]), sel.choices[i]):
            stopped = search.Status.STOPPED if i + 1 < n_shapes else stopped
            n_shapes = i + 1  # the callback stops here
            break
    if n_shapes == 0:
        return found_tree, None, shape_path, held
    terms, sspec, program, mse = _backfitted(
        src, spec, program, jax.device_get(sel.programs[n_shapes - 1]).shapes, sspec,
        (train_grams,) + tuple(split[1:]))
    history = list(found_tree.history) + list(losses[:n_shapes])
    history[-1] = mse * scale
    res = search.SearchResult(program, np.asarray(history, np.float64),
                              list(found_tree.choices) + list(sel.choices[:n_shapes]),
                              found_tree.status | stopped)
    return res, (terms, sspec), shape_path, held


def shapes_after_each(src, spec: spec_.FitSpec, rep, found_tree) -> tuple:
    """:func:`shapes_after` for a source of several trees (``src.n_trees``: a classifier's
    one-versus-rest trees): each tree gets the stage of the source of that tree alone
    (``src.member(b, found_tree)``: that source and its tree's search result; for a
    classifier the binary fit of its class against the rest, the same working residual,
    count on held-out rows and backfit), one tree after the other. The trees are not
    changed (a classifier's backfit keeps its tree as the offset). Returns ``(search
    result, (terms, spec) or None, the trees' shape paths, None)``.

    The trees' terms are stacked as the source stacks them (``src.stack_terms``: one spec,
    :func:`jaxtree.shapes.stacked`, each tree keeps exactly its own terms), so the model
    stays one pytree with a leading axis. The histories are padded with each tree's last
    loss (as an ended tree's are in the search), the choices are per tree, the status is
    every tree's together. The callback sees each tree's shape iterations with
    ``src.member_tag(b)`` in its ``info`` (a class and its index; its ``label`` names the
    progress bar's phases); a callback that stops the fit ends it there (the later trees
    keep their trees alone).

    Decision (fifty-ninth session, issue 26): "the classifier gets everything the regressor
    has", its shape terms for more than two classes too. Tree by tree, not as one batch:
    the stage is the one-tree stage unchanged, so each class's model is the binary fit's
    (tests/test_classifier_shapes.py), at ``K`` times one stage's warm cost."""
    B = src.n_trees
    fits, paths = [None] * B, [None] * B
    histories = list(np.asarray(found_tree.history, np.float64).reshape(B, -1))
    choices, status = list(found_tree.choices), int(found_tree.status)
    rep.asked_stop = False
    for b in range(B):
        one, tree_b = src.member(b, found_tree)
        with rep.tagged(**src.member_tag(b)):
            out, fits[b], paths[b], _ = shapes_after(one, spec, rep, tree_b)
        histories[b], choices[b] = np.asarray(out.history, np.float64), list(out.choices)
        status |= int(out.status)
        if rep.asked_stop:  # (at a tree's last term too: the later trees' stages are cut)
            status |= int(search.Status.STOPPED) if b + 1 < B else 0
            break
    width = max(map(len, histories))
    history = np.stack([np.r_[h, np.full(width - len(h), h[-1])] for h in histories])
    result = found_tree._replace(history=history, choices=choices, status=search.Status(status))
    return result, src.stack_terms(fits), paths, None


def order_choice(src, spec: spec_.FitSpec, rep, tree_first: tuple, held: tuple) -> tuple:
    """``spec.both_orders`` (``shapes="auto"`` on a small in-memory regression): ``(fit,
    (order, scores))``, the fit of the other order (:func:`shapes_then_tree`) where held-out
    rows support it, else ``tree_first``. Both fits are ``(search result, (terms, spec) or
    None, size path, shape path)``; ``held``: the tree-first fit's per-row held-out losses
    (at its chosen count of shape terms) and the rows' weights. ``order``: ``"tree first"``
    or ``"shapes first"``; ``scores``: each order's held-out MSE in the units of the paths'
    ``val_mse`` (``"shapes first"``: nan where held-out rows accepted no shape term first,
    so that order is the tree alone, or where the terms alone were too far behind for its
    tree to be searched: :data:`~jaxtree._fit.spec.SHAPES_FIRST_GATE`).

    The other order's held-out losses: up to ``spec.shape_capacity`` shape terms of ``y``
    (at most ``max_terms - 1``, leaving the tree a term), as many as held-out rows support,
    then the tree's size selection run on the residual of those terms as the count's own
    selection run fitted them (on the training rows only), so they are the losses of a
    model that never saw the held-out rows. Only where that order is kept are its tree
    refitted on all rows and the backfitting round run (so the paper's data, which keeps the
    tree first, compiles no backfitting programs for it).

    Decision (nineteenth session): the other order is kept only where its per-row held-out
    losses are lower than the tree-first fit's by more than half a paired standard error
    (:func:`jaxtree._fit.select.choose_size_rows`, the tree first listed first, as the
    smaller model is for the sizes). Why both: on a small table whose truth is smooth in
    each covariate (R's airquality, mtcars, Boston) shape terms fitted first leave the tree
    the interactions, while the tree first spends its few held-out-supported operations on
    the main effects; on data of the tree's form (the paper's) shape terms fitted first take
    its structure with piecewise-linear pieces the tree cannot undo, and held-out rows
    refuse them (BENCHMARKS.md, "Which comes first on small tables"). Why only below
    :data:`~jaxtree._fit.spec.SHAPES_FIRST_MAX_ROWS` rows: that is where it was measured and
    where the second order costs tenths of a second. The tree-first fit's first stage (the
    tree refitted on all rows) saw the held-out rows, so the comparison leans to it.

    Decision (twentieth session): the other order's tree is searched only where its shape
    terms alone have a held-out MSE at most :data:`~jaxtree._fit.spec.SHAPES_FIRST_GATE`
    (3) times the tree-first fit's; otherwise the tree first is kept and no second tree is
    searched (``"shapes first"`` scores nan). Why: that tree is the second order's cost (a
    whole size-selection run), and where the terms alone were that far behind, the tree on
    their residual never closed the gap: over 5 folds x 3 repeats of mtcars, airquality,
    ggplot2 mpg, diabetes and Boston, the folds that kept the shapes first had the terms
    alone at 0.05-1.43 times the tree-first MSE, and the paper's data are at 7.9-12.9
    (BENCHMARKS.md, "Which comes first on small tables")."""
    rows_a, w = held
    scale, own = src.loss_scale, bucket(src)
    scores = {"tree first": float(select.held_mean(rows_a, w)) * scale,
              "shapes first": float("nan")}
    if spec.max_terms < 2:  # no room for a shape term and the tree's
        return tree_first, ("tree first", scores)
    if spec_.ADDITIVE_ORDER:
        return _additive_order(src, spec, rep, tree_first, held, scores)
    kernels = after_kernels(spec)
    n_shapes, _, sel, sspec, shape_path, (rows_s, w_s), _ = choose_shapes(
        src.shape_split(), spec, rep, scale, spec.shape_capacity, states=True,
        n_iter=min(spec.shape_capacity, spec.max_terms - 1), p=own, kernels=kernels)
    alone = float(select.held_mean(rows_s[n_shapes], w_s)) * scale  # the terms alone
    if n_shapes:  # what the additive choice's gate reads (jaxtree._fit.pipeline)
        scores["shape terms alone"] = alone
    if n_shapes == 0 or alone > spec_.SHAPES_FIRST_GATE * scores["tree first"]:
        return tree_first, ("tree first", scores)
    chosen = jax.device_get(sel.programs[n_shapes - 1]).shapes
    given = src.given_values(kernels.shape_values(src, chosen, sspec))
    rep.phase(spec.k + 1, "choosing the order")
    selected = given.selection_run(given.tree_config(), rep)
    rows_b, _ = _chosen(selected[1])
    if rows_b.shape != rows_a.shape:  # the same held-out rows, or no comparison
        return tree_first, ("tree first", scores)
    index, val, _ = select.choose_size_rows(np.stack([rows_a, rows_b]), w)
    scores.update(zip(("tree first", "shapes first"), (float(v) * scale for v in val)))
    if index == 0:
        return tree_first, ("tree first", scores)
    other = shapes_then_tree(src, given, spec, rep, (n_shapes, chosen, sel, sspec, shape_path),
                             selected)
    if other is None:  # a callback stopped the fit
        res = tree_first[0]
        return (res._replace(status=res.status | search.Status.STOPPED),) + tree_first[1:], \
            ("tree first", scores)
    return other, ("shapes first", scores)


def _additive_hats(spec: spec_.FitSpec) -> int:
    """Hats per main shape of the GCV fit: the fit's own with ``shapes="additive"``, else
    (the order choice's other order) :data:`~jaxtree._fit.additive.ADDITIVE_KNOTS`'s. The
    table's groups are the fit's (for the default's coarse knots: none, a category's levels
    one term each)."""
    return spec.shape_knots[0] if spec.additive else additive_.ADDITIVE_KNOTS[0]


def _additive_order(src, spec: spec_.FitSpec, rep, tree_first: tuple, held: tuple,
                    scores: dict) -> tuple:
    """:func:`order_choice` with ``shapes="additive"``'s fit as the other order
    (:data:`~jaxtree._fit.spec.ADDITIVE_ORDER`; measured, not the default): the GCV main
    shapes fitted on the training part of the split, the tree's selection run on their
    residual, judged against the tree-first fit on the same held-out rows by the same rule;
    kept, it is refitted on all rows (:func:`additive_first`)."""
    rows_a, w = held
    scale = src.loss_scale
    train, out = select.split(src.n, spec.held_out_fraction, spec.random_state, src.sw)
    sw = None if src.sw is None else src.sw[train]
    gam = additive_.fit(src.xs[train], src.ys[train], sw, spec.shape_groups,
                        spec.max_terms - 1, _additive_hats(spec), np.dtype(spec.dtype))
    values = additive_.values(gam.terms, gam.spec, src.xs)
    wh = np.ones(len(out)) if src.sw is None else src.sw[out]
    alone = float(np.sum(wh * (src.ys[out] - values[out]) ** 2) / np.sum(wh)) * scale
    if alone > spec_.SHAPES_FIRST_GATE * scores["tree first"]:
        return tree_first, ("tree first", scores)
    given = src.given_values(values)
    selected = given.selection_run(given.tree_config(), rep)
    rows_b, _ = _chosen(selected[1])
    if rows_b.shape != rows_a.shape:
        return tree_first, ("tree first", scores)
    index, val, _ = select.choose_size_rows(np.stack([rows_a, rows_b]), w)
    scores = dict(zip(scores, (float(v) * scale for v in val)))
    if index == 0:
        return tree_first, ("tree first", scores)
    res, shape_fit, path = additive_first(src, spec, rep)
    return (res, shape_fit, path, None), ("shapes first", scores)


def shapes_then_tree(src, given, spec: spec_.FitSpec, rep, shapes: tuple, selected) -> tuple:
    """The other order's fit (:func:`order_choice`): the shape terms of its count's
    selection run (``shapes = (count, the terms at that count on the host, the run, its
    spec, shape path)``), the tree of the size
    its selection run ``selected`` chose on ``given`` (the rows with the terms' residual)
    refitted on all rows, then the backfitting round, as :func:`shapes_after` ends.
    Returns ``(search result, (terms, spec), size path, shape path)``, or None where a
    callback stopped the fit."""
    n_shapes, chosen, sel, sspec, shape_path = shapes
    losses = src.shape_losses(None, sel, n_shapes, sspec)
    rep.phase(n_shapes, "shapes first")
    for i in range(n_shapes):  # the progress bar and callback, as for a search
        if rep(i, float(losses[i]), sel.choices[i]):
            return None
    with rep.after(n_shapes):  # the tree's iterations follow the shapes'
        found_tree, path, _ = tree(given, spec, rep, selected)
    terms, sspec, program, mse = _backfitted(src, spec, src.tree_program(found_tree.program),
                                             chosen, sspec)
    path = OneFit.with_shapes(path, terms, sspec)
    sres = search.SearchResult(None, np.asarray(losses, np.float64),
                               list(sel.choices[:n_shapes]), search.Status.OK)
    return _joined(sres, found_tree, program, mse, src.loss_scale), (terms, sspec), path, \
        shape_path


def _backfitted(src, spec: spec_.FitSpec, program, found, sspec, parts=None) -> tuple:
    """``(terms, spec, program, mse)``: the backfitting round (the source's ``backfit``) of
    the tree ``program`` and the shape terms ``found`` of a count's selection run (spec
    ``sspec``), compacted to the chosen terms first and the result in the table's own term
    ids (:func:`jaxtree.shapes.unslot`). ``parts``: ``(Grams of the selection run's
    training rows or None, held-out data, held-out rows)``, from which a source that can
    (``split_grams``: an in-memory regression whose split holds every row) sums all rows'
    Grams of the chosen terms instead of a pass over all rows (seventy-fifth session)."""
    found, sspec, gr = shapes_.compact(found, sspec, None if parts is None else parts[0])
    grams = None
    if gr is not None and hasattr(src, "split_grams"):
        grams = src.split_grams(gr, parts[1], parts[2], sspec)
    terms, program, mse = src.backfit(program, found, sspec) if grams is None else \
        src.backfit(program, found, sspec, grams=grams)
    terms, sspec = shapes_.unslot(terms, sspec, bucket(src), spec.shape_groups)
    return terms, sspec, program, mse


def _chosen(held):
    """A selection run's per-row held-out losses ``(rows (S, m), w)`` at the size it chose
    (:func:`jaxtree._fit.select.choose_size`): ``(rows[s], w)``; None stays None."""
    if held is None:
        return None
    rows, w = held
    return rows[select.choose_size(rows, w)], w


def bucket(src):
    """The table's covariates ``p`` when ``src``'s shape stage runs on bucketed data (an
    in-memory regression or classification where compiling dominates: rows and columns
    padded to the tree's buckets, candidate pairs traced, :class:`jaxtree.shapes.SlotSpec`),
    else None (the table's own rows and columns, a static :class:`jaxtree.shapes.ShapeSpec`:
    streamed fits)."""
    return getattr(src, "shape_bucket", None)


def _spec(data, spec: spec_.FitSpec, max_terms: int, pairs, p):
    """The shape search's spec on chunked ``data``: a :class:`jaxtree.shapes.ShapeSpec` of
    ``pairs``, or for a bucketed stage (``p``: the table's covariates) its
    :class:`jaxtree.shapes.SlotSpec` of the data's width's pair slots."""
    n1, n2 = spec.shape_knots
    sspec = shapes_.ShapeSpec(n1=n1, n2=n2, max_terms=max_terms, pairs=pairs,
                              groups=spec.shape_groups)
    if p is None:
        return sspec
    cols = data.x.shape[-1]
    return shapes_.slots(sspec, p, shapes_.pair_slots(cols), cols)


def _screen(data, spec: spec_.FitSpec, p):
    """The candidate pairs of the shape search on ``data`` (:func:`jaxtree.shapes.screen_pairs`,
    the table's groups counted as one covariate each)."""
    return shapes_.screen_pairs(data, p=p, spec=_spec(data, spec, 1, (), None))


def _unpadded(run, data, p):
    """A shape run's choices in the table's own term ids (a bucketed stage's pairs follow
    its padding columns' ids)."""
    if p is None:
        return run
    return run._replace(choices=shapes_.unpadded_choices(run.choices, p, data.x.shape[-1]))


class OneFit:
    """The pieces of one fit's shape stage (:func:`shapes_first`, :func:`shape_search`,
    :func:`choose_shapes`; a source's ``shape_kernels``, this by default).
    :func:`jaxtree.fit_batch`'s source has the batched twin (the same pure functions of
    :mod:`jaxtree.shapes` vmapped over its data sets, each member's pairs screened, its
    count chosen and its terms numbered on its own), so that the stage is written once."""

    @staticmethod
    def screen_terms(data, spec: spec_.FitSpec, p) -> tuple:
        """``(candidate pairs, allowed)``: the screened pairs (:func:`_screen`); ``allowed``
        is None (a batch: which member may take which pair)."""
        return _screen(data, spec, p), None

    term_grams = staticmethod(shapes_.grams_jit)
    factored = staticmethod(shapes_.with_table_jit)
    add_term = staticmethod(search.shape_step_jit)
    held_errors = staticmethod(select.shape_errors)

    @staticmethod
    def empty_model(data, sspec, allowed):
        return shapes_.start_jit(data, sspec)

    @staticmethod
    def compile_ahead(data, held_data, sspec) -> None:
        """Starts compiling :func:`choose_shapes`' programs that are neither in memory nor
        on disk, each on the previous ones' output shapes, on background threads
        (:meth:`jaxtree._executables.cached.ahead`): each program is traced and lowered
        while the ones before it compile, and the calls then take them (the search's two
        programs do the same, :func:`jaxtree.search.compile_ahead`). A program whose
        inputs come from one compiled already is left to its call.

        Measured (forty-sixth session, BENCHMARKS.md "Compiling a fit's next programs
        ahead"): on a 20,000 x 10 table with a categorical column, whose shape programs
        compile in 0.6-1.7 s each, the first fit 7.43 -> 7.16 s (means of eight, ABBA; seven
        of eight pairs shorter); on the demo, whose shape programs are small, level."""
        grams = shapes_.grams_jit.ahead(data, sspec)
        table = None if grams is None else shapes_.with_table_jit.ahead(grams, sspec)
        start = shapes_.start_jit.ahead(data, sspec)
        if start is None:
            return
        if table is not None:
            search.shape_step_jit.ahead(start, data, table, sspec)
        select.shape_errors.ahead(start.shapes, held_data, sspec)

    @staticmethod
    def run_terms(step, start, n_shapes, rep, scale: float) -> search.SearchResult:
        return search.run(step, start, n_shapes, rep, loss_scale=scale)

    @staticmethod
    def compacted(found, sspec, gr, allowed) -> tuple:
        return shapes_.compact(found, sspec, gr)

    @staticmethod
    def own_ids(run, data, p, pairs, allowed):
        """A run's choices with the table's own term ids (:func:`_unpadded`)."""
        return _unpadded(run, data, p)

    @staticmethod
    def with_shapes(path, terms, sspec):
        return _with_shapes(path, terms, sspec)

    @staticmethod
    def shape_values(src, shapes, sspec) -> np.ndarray:
        """The terms' values on every row of ``src``, ``(n,)`` float64 (scaled space)."""
        return src.shape_values(shapes, sspec)

    @staticmethod
    def counted(rows, weights, sel, data, empty, sspec, scale: float, names) -> tuple:
        """``(count, shape path)`` by the paired standard-error rule on the per-row held-out
        losses ``rows`` (the intercept-only model first) of the selection run ``sel``."""
        path = select.shape_path(select.start_mse(data.y, data.w) * scale, float(empty), sel,
                                 sspec, names)
        return select.choose_size(rows, weights), path


class HostFit(OneFit):
    """:class:`OneFit` on the host (:mod:`jaxtree._fit.host_shapes`: the same algorithm in
    numpy, nothing compiled): the shape stage after the tree on a small table
    (:attr:`jaxtree._fit.spec.FitSpec.host_shapes`), whose blocks hold at most
    :data:`jaxtree._fit.host_shapes.MAX_BLOCK` coefficients. The Grams are a
    :class:`jaxtree._fit.host_shapes.Design` (the rows on the host and every block's
    system); a state is a :class:`jaxtree.shapes.State` of host arrays, which the backfitting
    round takes as it takes the compiled stage's."""

    @staticmethod
    def screen_terms(data, spec: spec_.FitSpec, p) -> tuple:
        return host_.screen_pairs(data, p=p, spec=_spec(data, spec, 1, (), None)), None

    term_grams = staticmethod(host_.Design)
    factored = staticmethod(lambda design, sspec: design)
    add_term = staticmethod(lambda state, data, design, sspec: host_.step(state, design))
    held_errors = staticmethod(host_.held_errors)

    @staticmethod
    def empty_model(data, sspec, allowed):
        return host_.start(data, sspec)

    @staticmethod
    def compile_ahead(data, held_data, sspec) -> None:
        return None

    @staticmethod
    def shape_values(src, shapes, sspec) -> np.ndarray:
        return host_.values(shapes, src.data(shard=False), sspec)[: src.n]


def after_kernels(spec: spec_.FitSpec):
    """The kernels of the shape stage after the tree (:func:`shapes_after`,
    :func:`order_choice`): :class:`HostFit` where ``spec.host_shapes``, else
    :class:`OneFit`."""
    return HostFit if spec.host_shapes else OneFit


def shape_search(sub, spec: spec_.FitSpec, rep, scale: float, n_shapes, max_terms: int,
                 screened, grams: bool = False, p=None, kernels=OneFit) -> tuple:
    """The greedy search of ``n_shapes`` shape terms on the chunked rows ``sub``, its progress
    reported. ``screened``: the ``(candidate pairs, allowed)`` of :func:`choose_shapes`, None
    screens them (:func:`jaxtree.shapes.screen_pairs`); ``p``: the table's covariates when
    ``sub`` is bucketed (:func:`bucket`); ``kernels``: :class:`OneFit` or a batch's (then
    ``n_shapes`` is each member's count). Returns ``(search result, chosen terms and spec
    compacted, sub's Grams compacted, or None when not ``grams``)``."""
    pairs, allowed = kernels.screen_terms(sub, spec, p) if screened is None else screened
    sspec = _spec(sub, spec, max_terms, pairs, p)
    gr = kernels.term_grams(sub, sspec)
    fgr = kernels.factored(gr, sspec)  # the steps solve with the systems' factors
    sres = kernels.run_terms(lambda s: kernels.add_term(s, sub, fgr, sspec),
                             kernels.empty_model(sub, sspec, allowed), n_shapes, rep, scale)
    found, sspec, gr = kernels.compacted(sres.program.shapes, sspec, gr if grams else None,
                                         allowed)
    return kernels.own_ids(sres, sub, p, pairs, allowed), found, sspec, gr


def choose_shapes(split, spec: spec_.FitSpec, rep, scale: float, max_terms: int,
                  states: bool = False, n_iter: Optional[int] = None,
                  p=None, kernels=OneFit) -> tuple:
    """``(number of shapes, (candidate pairs, allowed), selection run, its spec, shape
    path, held)`` chosen on held-out rows: the shape search on the training part of ``split
    = (training data, held-out data, held-out rows)`` with the held-out MSE after each term;
    the smallest count within half a paired standard error of the best (counting the
    intercept-only model as 0 terms; :func:`jaxtree._fit.select.choose_size`). ``held``:
    the per-row held-out losses of every count (the intercept-only model first) and the
    rows' weights. The caller starts the progress bar's next phase. ``states``: stop once
    :data:`~jaxtree._fit.spec.AUTO_PATIENCE` more terms have not lowered the held-out MSE
    (``shapes="auto"``); ``n_iter``: at most this many terms (default ``max_terms``, the
    selection run's capacity); ``p``: the table's covariates when the split is bucketed
    (:func:`bucket`; the spec returned is then a :class:`jaxtree.shapes.SlotSpec`);
    ``kernels``: :class:`OneFit` or a batch's (then the count and the path are per member).
    The seventh entry: the training part's Grams (:func:`jaxtree.shapes.grams`) with
    :class:`OneFit`, else None."""
    n_iter = max_terms if n_iter is None else n_iter
    data, held_data, held = split
    pairs, allowed = kernels.screen_terms(data, spec, p)
    sspec = _spec(data, spec, max_terms, pairs, p)
    kernels.compile_ahead(data, held_data, sspec)
    fgr = kernels.factored(kernels.term_grams(data, sspec), sspec)
    step = select.with_held_out_rows(lambda s: kernels.add_term(s, data, fgr, sspec),
                                     lambda s: kernels.held_errors(s.shapes, held_data, sspec))
    start = kernels.empty_model(data, sspec, allowed)
    empty, empty_rows = kernels.held_errors(start.shapes, held_data, sspec)
    rep.phase(n_iter, "choosing shapes")  # the bar moves while the count is chosen
    sel = search.run(step, (start, empty_rows), n_iter, rep.tick, loss_scale=scale,
                     keep_states=True, patience=spec_.AUTO_PATIENCE if states else None)
    sel, rows = select.split_run(sel, len(held))
    sel = _unpadded(sel, data, p)
    rows = np.concatenate([select.held_rows([empty_rows], len(held)), rows], axis=-2)
    w = select.held_weights(held_data, len(held))
    n_best, path = kernels.counted(rows, w, sel, data, np.asarray(empty, np.float64) * scale,
                                   sspec, scale, rep.names)
    return n_best, (pairs, allowed), sel, sspec, path, (rows, w), \
        fgr[:5] if kernels is OneFit else None


def _with_shapes(path, terms, sspec):
    """The tree sizes' path, if any: each model with the shape terms its tree was searched
    after (``shapes=S``)."""
    for row in path or ():
        row["model"] = dataclasses.replace(row["model"], shapes=terms, shape_spec=sspec)
        row.pop("formula", None)  # written on first access of path_
    return path
