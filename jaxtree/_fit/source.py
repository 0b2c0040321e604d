"""Where a fit's rows live, behind one protocol: the stages (:mod:`jaxtree._fit.stages`)
call these methods and never branch on the place.

- :class:`InMemory`: the scaled rows as arrays, chunked (and sharded over ``devices``) for
  each pass; the JAX engine's jitted search, or the reference engine's numpy one.
- :class:`Streamed`: rows read block by block from a :class:`jaxtree.stream.ChunkReader`
  (a memmap, a user's reader, or an in-memory array above the chunking threshold); every
  pass streams (:mod:`jaxtree.stream`), and the shape stage's subsets are read into memory.

Both offer: the tree search (:meth:`grow`) and its held-out selection run
(:meth:`selection_run`), the rows of a shape search (:meth:`shape_split`,
:meth:`shape_search_rows`), fitting chosen shape terms on all rows (:meth:`fit_shapes`),
the tree's source given shape terms (:meth:`given_shapes`), the backfitting round
(:meth:`backfit`) and pruning (:meth:`prune`). Each returns values; nothing is left on an
estimator.
"""

from __future__ import annotations

import copy
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from jaxtree import _executables
from jaxtree import _scaling as scaling_
from jaxtree import program as prog
from jaxtree import reference as reference_
from jaxtree import scoring, search
from jaxtree import shapes as shapes_
from jaxtree import sharding as sharding_
from jaxtree import simplify as simplify_
from jaxtree import stream as stream_
from jaxtree._fit import additive as additive_
from jaxtree._fit import host_shapes
from jaxtree._fit import select
from jaxtree._fit import spec as spec_
from jaxtree._inputs import encoding as encoding_


designs_cached = _executables.cached(scoring.designs, static_argnums=(1,),
                                     light=_executables.LIGHT_LLVM1)
"""The kept basis values of a fit's chunked rows (``cache_basis``,
:func:`jaxtree.scoring.designs`), stored and loaded like the search's programs, so that a
second process compiles nothing for them (light at LLVM level 1: no L-BFGS loop,
:data:`jaxtree._executables.LIGHT_LLVM1`)."""


HOST_BASIS_MAX_VALUES = 2_000_000
"""Up to this many kept basis values (rows of the chunks times ``p*q``), in a fit whose spec
allows it (``host_basis``: a CPU, compiling dominates, not the greedy search),
:func:`kept_basis` evaluates them in numpy instead of compiling :data:`designs_cached`.

Decision (sixty-fourth session, issue 27): the compiled program cost the demo's first fit
(1,000 x 10, 409,600 values) about 0.3 s on the fit's thread (trace 0.03, lower 0.09,
compile 0.2 s) before the search step could be traced; numpy takes about 1.4 ms there. Numpy's
cost grows faster than the values (3.4 ns a value at 1,024 x 10 rows, 5.8 ns at 4,096 x 10:
9.5 ms, 6.7 ns at 16,384 x 10: 44 ms; a default fit evaluates three times): at 2 million
values about 12 ms an evaluation, past which a warm fit would pay more than a first fit
saves. The values differ from XLA's in the last bit or two (it may fuse a multiply and an
add), so a table's fit moves by rounding against the compiled values; which one a table
gets depends only on its size."""


def kept_basis(x, basis, host: bool):
    """The kept basis values (``cache_basis``) of the chunked rows ``x (n_chunks, m, p)``:
    on the host (:func:`jaxtree.scoring.host_designs`) where the fit allows it (``host``:
    :attr:`jaxtree._fit.spec.FitSpec.host_basis`), the basis has a numpy form and there are
    at most :data:`HOST_BASIS_MAX_VALUES` values, else the compiled :data:`designs_cached`."""
    if host and basis.on_host and x.size * basis.q <= HOST_BASIS_MAX_VALUES:
        return jax.device_put(scoring.host_designs(np.asarray(x), basis))
    return designs_cached(x, basis)


supported_cached = _executables.cached(scoring.supported, static_argnums=(1,),
                                       light=_executables.LIGHT_LLVM1)
""":func:`jaxtree.scoring.supported` of a fit's chunked rows (``min_support``), stored and
loaded as :data:`designs_cached`."""


def support_rows(spec: spec_.FitSpec, n: int, sw) -> int:
    """The fewest rows a candidate column must be nonzero on (``spec.min_support``), of the
    ``n`` rows of weights ``sw`` (None: all positive)."""
    return spec.support_rows(n if sw is None else int(np.count_nonzero(np.asarray(sw) > 0)))


def with_support(data: scoring.Data, spec: spec_.FitSpec, xs, sw) -> scoring.Data:
    """The tree search's chunked rows ``data`` of the scaled rows ``xs (n, p)`` (weights
    ``sw`` or None) with the candidate columns ``spec.min_support`` allows
    (:func:`jaxtree.scoring.with_support`), counted on the rows of positive weight, the
    cheapest way that applies: where compiling dominates, on the host from the columns'
    distinct values (:func:`jaxtree.scoring.host_support_counts`, up to
    :data:`jaxtree.scoring.HOST_SUPPORT_MAX_WORK`), else from the kept basis values
    (:func:`jaxtree.scoring.kept_support_counts`), else by one jitted pass
    (:data:`supported_cached`). No program is compiled on the first two."""
    q = spec.basis.q
    least = support_rows(spec, len(xs), sw)
    if least <= 1:
        return data
    counts = scoring.cheap_support_counts(xs, sw, spec.basis)
    if counts is None and data.phi is not None:
        counts = scoring.kept_support_counts(data, q)
    if counts is None:
        return scoring.with_support(data, spec.basis, least, supported_cached)
    return with_counts(data, counts, least, q)


def with_counts(data: scoring.Data, counts, least: int, q: int) -> scoring.Data:
    """``data`` with ``allowed = counts >= least``, the table's ``(p*q,)`` counts padded to
    ``data``'s width with columns not allowed (its NaN padding columns, which count no row on
    the device either, :func:`jaxtree.scoring.support_counts`)."""
    pad = data.x.shape[-1] * q - len(counts)
    allowed = np.concatenate([np.asarray(counts) >= least, np.zeros(pad, bool)])
    return data._replace(allowed=jax.device_put(allowed))


def scaled(rows, spec: spec_.FitSpec):
    """The source of a regression's rows, scaled: ``rows`` is ``(x, y, sample_weight)``
    (held in memory, :class:`InMemory`, or read chunk by chunk where the row plan says so,
    ``spec.streamed``) or a :class:`jaxtree.stream.ChunkReader` (a memmap's or a user's).
    A source read block by block (:class:`Streamed`) reads chunks of the plan's size. The
    scaling (:mod:`jaxtree._scaling`: one pass, or one streamed pass) is bounded by
    ``spec.y_bound``, and the source's spec has its basis bound to the covariates' ranges
    (:meth:`jaxtree._fit.spec.FitSpec.bound_to`)."""
    rows = _reader(rows, spec)
    if isinstance(rows, stream_.ChunkReader):  # the 0/1 columns found in the scaling pass
        raw, found, flags, cut = stream_.scaling_and_indicators(
            rows, round_x=scaling_.rounds(spec.basis))
        sc = scaling_.bounded(raw, spec.y_bound)
        rows = rows.with_x(encoding_.refill(rows.x, spec.filled, sc.x_min))
        return Streamed(rows, spec.bound_to(sc).with_indicators(rows.n, rows.p, lambda: found),
                        sc, two_valued=flags, cut=cut)
    raw, two, cut = scaling_.from_rows_cut(*rows, round_x=scaling_.rounds(spec.basis))
    sc = scaling_.bounded(raw, spec.y_bound)
    encoding_.refill(rows[0], spec.filled, sc.x_min)  # our encoded matrix, in place
    xs, ys = scaling_.scale_rows(sc, *rows)
    # the tree search's indicator columns, read on the scaled rows (scaling_.scale_rows
    # clips every row into range; the rule reads the rows of positive weight)
    spec = spec.bound_to(sc).with_indicators(
        *xs.shape, lambda: scoring.binary_columns(xs, rows[2]))
    return InMemory(xs, ys, rows[2], spec, sc, two_valued=scaling_.positions(two), cut=cut)


def _reader(rows, spec: spec_.FitSpec):
    """``rows`` as the row plan reads them: a ChunkReader with the plan's chunk (a large
    in-memory matrix wrapped, without a copy; integer weights as floats), else as given."""
    if isinstance(rows, stream_.ChunkReader):
        return rows.with_chunk(min(spec.chunk, rows.n))
    if not spec.streamed:
        return rows
    x, y, sw = rows
    w = None if sw is None else np.asarray(sw, np.float64)
    return stream_.ChunkReader(x, y, w, chunk_size=min(spec.chunk, x.shape[0]))


class ShapeFit(NamedTuple):
    """Shape terms fitted on all rows before the tree (``shapes=S``): ``terms``, and what
    the source's backfitting round reuses (``state``: the in-memory shape state; ``grams``:
    all rows' Grams)."""

    terms: shapes_.Shapes
    state: Optional[shapes_.State]
    grams: object


class _Regression:
    """What both regression sources share: the size choice of a selection run and the
    shape terms' training losses."""

    two_valued: tuple = ()  # the columns of two values its scaling found (formulas read
    # them as lines: jaxtree._scaling.two_valued, or a streamed pass's add_two_values)
    cut: tuple = ()  # the columns whose range stops short of a far tail, with their observed
    # extremes (jaxtree._scaling.cut_columns; the fit's far_tails_)

    def size_path(self, sel, n_held: int, names) -> tuple:
        """``(k_best, path)`` of a selection run (:func:`jaxtree._fit.select.size_path`)."""
        return select.size_path(sel, n_held, self.sc, self.spec.dtype, self.spec.basis, names)

    def shape_losses(self, program, sel, n_shapes: int, sspec) -> list:
        """The training losses after each of the first ``n_shapes`` shape terms of a
        shape-count selection run (``history_``'s entries): the run's own training MSE of
        the residual of ``program``, in ``y``'s units."""
        return list(sel.history[:n_shapes])


def in_capacity(program, cfg: search.Config):
    """``program`` padded to the tree search's capacity ``cfg.max_k`` (the same tree and
    values, :func:`jaxtree.program.pad`), or itself where it is larger. A tree cut back to
    its ``2k+1`` slots after a search in a capacity bucket (:func:`jaxtree.program.capacity_for`)
    then enters the shape stage's tree programs (its values on the rows, the backfitting
    round's refinement) in that bucket: fits of nearby ``k`` or chosen sizes share them, as
    they share the search's step (tests/test_first_fit.py)."""
    if program.capacity >= 2 * cfg.max_k + 1:
        return program
    return prog.pad(program, cfg.max_k)


class InMemory(_Regression):
    """Scaled rows ``xs (n, p)``, ``ys (n,)``, weights ``sw`` held as arrays (a regression's,
    or a classifier's working data, :mod:`jaxtree._fit.classify`). The shape stage and the
    backfitting round run on bucketed data where the tree's search does (the spec's
    ``columns``: compiling dominates), see :attr:`shape_bucket`."""

    in_memory = True

    def __init__(self, xs, ys, sw, spec: spec_.FitSpec, sc: scaling_.Scaling,
                 two_valued: tuple = (), cut: tuple = ()):
        self.xs, self.ys, self.sw, self.spec, self.sc = xs, ys, sw, spec, sc
        self.two_valued, self.cut = two_valued, cut
        self._one = None  # the unsharded chunked data, made once (shape stages)
        self._grown = None  # the tree search's rows of the last refit (grow), small fits

    @property
    def shape_bucket(self):
        """The table's ``p`` when the shape stage and the backfitting round run on bucketed
        data, else None (:func:`jaxtree._fit.stages.bucket`).

        Decision (issue 27): where compiling dominates (the spec's ``columns``, the tree's
        column bucket), the shape stage's rows (all rows, the search's subset, the held-out
        split's parts) are chunked as their row bucket (:func:`jaxtree.scoring.rows_for`;
        zero-weight padding rows change no sum) with NaN padding columns up to ``columns``,
        and its candidate pairs are traced (:class:`jaxtree.shapes.SlotSpec`), so that a
        second table in the same buckets compiles no program of the shape stage, the
        backfitting round included (tests/test_shape_buckets.py). A NaN column's main shape
        is never a candidate (its gain is not finite), a tree never reads it, and the model
        keeps the table's own ``p`` (:func:`jaxtree.shapes.unslot`)."""
        return self.p if self.spec.columns else None

    def _split_buckets(self, n: int, n_train: int, n_held: int, max_train=None) -> tuple:
        """``(training rows, held-out rows)`` to chunk a bucketed shape stage's held-out split
        of ``n`` rows (``n_train`` training rows, ``n_held`` held out) as (:func:`jaxtree.scoring.chunk`'s ``rows``):
        the parts of all rows' bucket ``N`` (:func:`jaxtree.scoring.rows_for`), not the
        parts' own buckets, so that every table of one row bucket shares them: at 20,000 and
        22,000 rows (``N`` = 12 chunks of 2,048) the 16,000 and 17,600 training rows are 8 and
        9 chunks (own buckets 8 and 12), both chunked as 10 (``(1 - fraction) N``); the 4,000
        and 4,400 held-out rows 2 and 3 chunks, both as 3 (``fraction N``). Measured: the
        training part chunked as all of ``N`` (12 chunks) made the warm fit at 20,000 x 10
        10% slower. At least the parts' own rows (a table whose split rounds past its share);
        the training part at most ``max_train`` rows."""
        s = self.spec
        big = scoring.rows_for(n, s.chunk)
        share = int(round(s.held_out_fraction * big))
        train = big - share + 1  # n - round(f n) <= N - round(f N) + 1 for n <= N
        if max_train is not None:
            train = min(train, max_train)
        return max(train, n_train), max(share + 1, n_held)

    def _shape_layout(self, n: int) -> tuple:
        """``(rows, columns)`` to chunk ``n`` rows of the shape stage as (None: their own)."""
        if self.shape_bucket is None:
            return None, None
        return scoring.rows_for(n, self.spec.chunk), self.spec.columns

    @property
    def n(self) -> int:
        return self.xs.shape[0]

    @property
    def p(self) -> int:
        return self.xs.shape[1]

    @property
    def loss_scale(self) -> float:
        return float(self.sc.y_scale) ** 2

    # ------------------------------------------------------------------------ rows

    def data(self, ys=None, shard: bool = True, rows=None, xs=None, sw=None,
             basis: bool = True, support: bool = False) -> scoring.Data:
        """The chunked rows (basis cached with ``cache_basis``): the tree search's, sharded
        over ``devices`` and padded to the spec's column bucket (``columns``,
        :func:`jaxtree.scoring.columns_for`), or with ``shard=False`` the shape stage's (one
        device, the table's own columns: a shape term is fitted on every covariate, see
        :func:`jaxtree._fit.stages.shapes_first`); ``ys``/``xs``/``sw``: other rows than the
        source's; ``rows``: chunked as that many rows (:func:`jaxtree.scoring.chunk`);
        ``basis``: False skips the basis values of ``cache_basis`` (rows that only the shape
        terms read); ``support``: with the ``min_support`` mask (:func:`with_support`: the
        rows a tree's search scores). The source's own rows in the shape stage's layout are
        chunked once, for the tree's search and the shape stage alike."""
        s = self.spec
        xs = self.xs if xs is None else xs
        ys = self.ys if ys is None else ys
        sw = self.sw if sw is None else sw
        own = rows is None and xs is self.xs and ys is self.ys and sw is self.sw
        shape_layout = self._shape_layout(xs.shape[0])
        if not shard:  # the shape stage's buckets (shape_bucket), or its own rows and columns
            rows, columns = (shape_layout[0] if rows is None else rows), shape_layout[1]
        else:
            columns = s.columns or None
            if rows is None and xs is self.xs:
                rows = s.rows or None  # the row bucket (jaxtree.scoring.tree_rows)
        if own and (rows, columns) == shape_layout:
            # The shape stage's own rows, and the tree's where they are laid out alike (one
            # device, the same buckets): chunked and their basis values computed once for
            # both (thirty-second session).
            if self._one is None:
                self._one = self._chunk(xs, ys, sw, rows, columns)
            if support and self._one.allowed is None:
                self._one = with_support(self._one, s, xs, sw)
            data = self._one
        else:
            data = self._chunk(xs, ys, sw, rows, columns=columns, basis=basis)
            data = with_support(data, s, xs, sw) if support and basis else data
        if s.devices is not None and shard:
            data = sharding_.shard_data(data, s.devices)
        return data

    def _chunk(self, xs, ys, sw, rows, columns=None, basis: bool = True):
        # numpy in, so that the chunks are padded on the host (nothing compiled)
        data = scoring.chunk(np.asarray(xs), np.asarray(ys), None if sw is None else np.asarray(sw),
                             chunk_size=self.spec.chunk, rows=rows, dtype=self.spec.dtype,
                             columns=columns)
        if self.spec.cache_basis and basis:  # through the executable cache, as the search's
            data = data._replace(phi=kept_basis(data.x, self.spec.basis, self.spec.host_basis))
        if basis:  # the search's indicator columns, summed from two columns each
            data = scoring.with_indicators(data, self.spec.indicators)
        return data

    def held_out(self, ys=None, max_train=None, shard: bool = True):
        """``(training data, held-out data, held-out row indices)`` of the deterministic split
        (:func:`jaxtree._fit.select.split`), both chunked as the fit chunks (the training
        part as all rows where :func:`jaxtree._fit.select.selection_rows` says so);
        at most ``max_train`` training rows (a deterministic subset) when given; the training
        rows sharded as :meth:`data` shards them (``shard``)."""
        s, xs = self.spec, self.xs
        ys, sw = (self.ys if ys is None else ys), self.sw
        train, held = select.split(xs.shape[0], s.held_out_fraction, s.random_state, sw)
        if max_train is not None:
            sub = select.subsample(len(train), max_train, s.random_state)
            train = train if sub is None else train[sub]
        part = lambda a: None if a is None else a[train]  # noqa: E731
        rows = None if max_train is not None else select.selection_rows(
            *xs.shape, s.basis.q, rows=s.rows or None)
        held_rows, columns = None, None
        if shard:
            held_rows = scoring.rows_for(len(held), s.chunk) if s.columns else None
            columns = s.columns or None
        elif self.shape_bucket is not None:
            rows, held_rows = self._split_buckets(xs.shape[0], len(train), len(held), max_train)
            columns = s.columns
        # the shape split's parts feed shape terms only: no basis values (thirty-second session)
        data = self.data(ys[train], shard=shard, rows=rows, xs=xs[train], sw=part(sw), basis=shard,
                         support=shard)
        dt = s.dtype
        held_data = scoring.chunk(np.asarray(xs[held], dt), np.asarray(ys[held], dt),
                                  None if sw is None else np.asarray(sw[held], dt),
                                  chunk_size=s.chunk, rows=held_rows, columns=columns)
        return data, held_data, held

    # ------------------------------------------------------------------------ tree

    def tree_config(self) -> search.Config:
        s = self.spec  # the capacity bucket (search.table_config)
        cfg = search.table_config(s.config(self.n, self.p), self.xs, s.basis,
                                  max(s.k, s.bucket_k))
        return cfg._replace(screen_rows=s.screen_rows) if cfg.loss == "squared" else cfg

    def grow(self, k: int, cfg: search.Config, rep, chosen: bool = False) -> search.SearchResult:
        """The tree of ``k`` operations on all rows; ``chosen``: ``k`` was chosen on held-out
        rows (a pair uses two operations: ``max_ops`` bounds the refit's size in the same
        compiled step)."""
        s = self.spec
        if s.engine == "reference":
            return self._reference(rep)
        max_ops = (max(k, 1) if cfg.pair_leaves else s.k) if chosen else k
        data = self.data(support=True)
        # kept for the backfitting round where its chunking may differ (_in_tree_rows): only
        # where compiling dominates, so that a large fit's rows are not held any longer
        self._grown = data if scoring.compiling_dominates(self.n, self.p, s.basis.q) else None
        if s.search == "beam":  # greedy insertions only: k + 1 iterations never pass k operations
            res = search.beam_fit(data, s.basis, k, cfg, s.beam_width, callback=rep,
                                  loss_scale=self.loss_scale, stop=s.stop)
        else:
            res = search.fit(data, s.basis, k, cfg, callback=rep, loss_scale=self.loss_scale,
                             max_ops=max_ops, stop=s.stop, split=self._split_step())
        return res._replace(program=prog.trim(res.program, max_ops),
                            choices=self._unpadded(res.choices))

    def _split_step(self) -> bool:
        """Whether the search step runs as its two programs (:func:`jaxtree.search.step_function`):
        where a backfitting round will refine the tree through the second. One rule for the
        selection run and the refit, so that both run the same compiled programs."""
        return self.spec.shapes_after or bool(self.spec.shapes)

    def _unpadded(self, choices: list) -> list:
        return select.unpadded_choices(choices, self.p, self.spec.columns, self.spec.basis.q)

    def selection_run(self, cfg: search.Config, rep) -> tuple:
        """``(run, (rows, w))``: the search grown to ``k`` on the training part of the split,
        the held-out MSE after each iteration (``val_history``) and the program after each
        (``programs``, on the host); ``rows (S, n_held)`` every iteration's per-row held-out
        squared errors (scaled units, float64) and ``w (n_held,)`` the held-out rows'
        weights, what :func:`jaxtree._fit.select.choose_size` reads. A beam is judged by the
        member the beam would return at that size (the lowest training loss;
        :func:`jaxtree.search.beam_fit`'s rule)."""
        s = self.spec
        data, held_data, held = self.held_out()
        empty = prog.empty_program(cfg.max_k, s.dtype)
        if s.search == "beam":
            best = lambda ps: select.best_member(ps, data, s.basis)  # noqa: E731
            step = select.with_held_out_rows(
                lambda ps: search.beam_step_jit(ps, data, s.basis, cfg),
                lambda ps: select.held_out_errors(best(ps), held_data, s.basis))
            start = jax.tree_util.tree_map(
                lambda a: jnp.broadcast_to(a, (s.beam_width,) + a.shape), empty)
        else:
            best = lambda p: p  # noqa: E731
            # a small table's on the host (nothing compiled), as its shape stage (a row
            # bucket of at most QUICK_SHAPES_MAX_ROWS); not on the larger tables whose stage
            # runs there because compiling dominates: each call reads the search's tree
            # back, and on the weather table's 23,000 rows that wait made a warm fit 0.1 s
            # longer than the compiled errors (seventy-seventh session)
            errors = (select.host_held_out_errors(held_data, s.basis)
                      if s.host_shapes and s.quick_shapes else None)
            if errors is None:
                errors = lambda p: select.held_out_errors_cached(p, held_data, s.basis)  # noqa: E731
                # compiled while the search step's programs are (search.compile_ahead)
                select.held_out_errors_cached.ahead(empty, held_data, s.basis)
            step = select.with_held_out_rows(
                search.step_function(data, s.basis, cfg, np.int32(s.k), split=self._split_step()),
                errors)
            start = empty
        start = (start, np.zeros(held_data.y.shape, held_data.y.dtype))
        sel = search.run(step, start, s.k + 1, rep, loss_scale=self.loss_scale, keep_states=True,
                         stop=s.stop)
        sel, rows = select.split_run(sel, len(held))
        sel = sel._replace(programs=[jax.device_get(prog.trim(best(p), s.k))
                                     for p in sel.programs],
                           choices=self._unpadded(sel.choices))
        return sel, (rows, select.held_weights(held_data, len(held)))

    def _reference(self, rep) -> search.SearchResult:
        """The paper's algorithm in numpy (:func:`jaxtree.reference.step`) under the same
        driver as the JAX engine: same choices' keys, history units, callback and status."""
        s = self.spec
        xdt = jnp.float64 if jax.config.jax_enable_x64 else jnp.float32
        phi = np.asarray(s.basis.evaluate(jnp.asarray(self.xs, xdt)), np.float64)
        ys, sw = np.asarray(self.ys, np.float64), self.sw
        allowed = reference_.supported(phi, sw, support_rows(s, len(ys), sw))

        def step(tree):
            tree, r = reference_.step(tree, phi, ys, sw, max_k=s.k, refine=s.refine,
                                      sweeps=s.sweeps, allowed=allowed)
            choice = search.Choice(r.flat_index, r.slot, r.op, r.feature, r.basis, r.weight,
                                   r.intercept, r.sse)
            return tree, search.StepInfo(r.loss, choice, search.STATUS_OK)

        res = search.run(step, None, s.k + 1, rep, loss_scale=self.loss_scale, stop=s.stop)
        t = res.program
        program = prog.from_arrays(t.op, t.left, t.right, t.feature, t.basis, t.weight,
                                   t.intercept, t.n_slots, dtype=s.dtype)
        return res._replace(program=program)

    # ---------------------------------------------------------------------- shapes

    def tree_program(self, program):
        """A searched tree on the shape stage's device (a sharded tree read back first)."""
        return jax.device_put(jax.device_get(program))  # numpy to the device: nothing compiled

    def _tree_fit(self, program):
        return select.tree_values(in_capacity(program, self.tree_config()),
                                  self.data(shard=False).x, self.spec.basis)

    def shape_split(self, program=None):
        """``(training data, held-out data, held-out rows)`` of a shape-count selection run:
        the held-out split of ``y`` (or of the tree's residual, given ``program``), at most
        ``shapes.SEARCH_ROWS`` training rows, on one device."""
        ys = None
        if program is not None:
            fit = select.host_tree_values(program, self.xs, self.spec.basis) \
                if self.spec.host_values else None  # nothing compiled
            if fit is None:
                fit = np.asarray(self._tree_fit(program), np.float64).reshape(-1)[: self.n]
            ys = self.ys - fit
        return self.held_out(ys=ys, max_train=shapes_.SEARCH_ROWS, shard=False)

    def shape_search_rows(self) -> tuple:
        """``(rows, all_rows)``: the chunked rows the shape search of ``shapes=S`` runs on:
        all rows, or a deterministic subset of ``shapes.SEARCH_ROWS``."""
        s = self.spec
        rows = select.subsample(self.n, shapes_.SEARCH_ROWS, s.random_state)
        if rows is None:
            return self.data(shard=False), True
        sw = None if self.sw is None else self.sw[rows]
        return self.data(self.ys[rows], shard=False, xs=self.xs[rows], sw=sw), False

    reuses_grams = True  # fit_shapes reuses the shape search's Grams when it read all rows

    def fit_shapes(self, sres, found, sspec, grams, all_rows: bool) -> ShapeFit:
        """The searched terms backfitted on all rows over the chosen terms only (``grams``:
        the search's Grams when it ran on all rows)."""
        data = self.data(shard=False)
        if grams is not None:
            state = shapes_.finish_jit(sres.program._replace(shapes=found), data, grams, sspec,
                                       spec_.SHAPE_SWEEPS_ALL_ROWS)
        else:
            grams = shapes_.grams_jit(data, sspec)
            state = shapes_.refit(found, data, sspec, spec_.SHAPE_SWEEPS_SUBSET, gr=grams)
        return ShapeFit(state.shapes, state, grams)

    def given_shapes(self, fit: ShapeFit, sspec) -> "InMemory":
        """The tree's source: the rows with the shapes' partial residual as ``y``."""
        return self.given_values(np.asarray(fit.state.fit, np.float64).reshape(-1)[: self.n])

    def given_values(self, values) -> "InMemory":
        """The rows with ``y - values`` as ``y`` (``values (n,)``, scaled space)."""
        return InMemory(self.xs, self.ys - values, self.sw, self.spec, self.sc)

    def additive_fit(self, max_terms: int, n1: int):
        """``shapes="additive"``'s terms on these rows: the GCV fit of the scaled target
        (:func:`jaxtree._fit.additive.fit`; its ``values`` are what :meth:`given_values`
        takes)."""
        s = self.spec
        return additive_.fit(self.xs, self.ys, self.sw, s.shape_groups, max_terms, n1,
                             np.dtype(s.dtype), terms=s.additive_terms)

    def shape_values(self, shapes, sspec) -> np.ndarray:
        """Shape terms' values on every row, ``(n,)`` float64 (scaled space; ``sspec``: the
        terms' spec on this source's chunked rows)."""
        fit = shapes_.evaluate_chunks_jit(shapes, self.data(shard=False).x, sspec)
        return np.asarray(fit, np.float64).reshape(-1)[: self.n]

    def split_grams(self, grams, held_data, held, sspec):
        """All rows' Grams of the shape terms of ``sspec`` (:func:`jaxtree.shapes.grams`) from
        the parts of :meth:`shape_split`: the training part's ``grams`` (compacted to
        ``sspec``, :func:`jaxtree.shapes.compact`) plus the held-out rows' (``held_data``,
        ``held`` their indices), for :meth:`backfit`. None where the training part is a
        subset of its rows (more than ``shapes.SEARCH_ROWS``) or where the round runs on
        the host (``host_backfit``: no Grams).

        Why (seventy-fifth session, issue 29's cost): a Gram is a weighted sum over rows of
        the covariates alone, so the training part's (computed for the selection run) and
        the held-out part's add up to all rows'; the round's own pass over all rows cost
        94 ms of a 1.5 s warm fit (flights, 10^5 rows), the held-out part's a fifth of it.
        The sums differ from one pass's by float32 rounding (another order)."""
        if self.spec.host_backfit or self.n - len(held) > shapes_.SEARCH_ROWS:
            return None
        return shapes_.grams_sum_jit(grams[:5], shapes_.grams_jit(held_data, sspec), sspec)

    def backfit(self, program, terms, sspec, fit: Optional[ShapeFit] = None,
                grams=None) -> tuple:
        """The backfitting round: the shapes refitted given the tree (one sweep with
        ``shapes=S``, :data:`~jaxtree._fit.spec.BACKFIT_SWEEPS` for terms chosen after the
        tree), then with ``refine="optax"`` the tree's weights refined given the shapes.
        Returns ``(terms, program, mse of the model on all rows)`` (scaled space). ``fit``:
        the shapes of ``shapes=S`` (their state and Grams), else ``terms`` were chosen after
        the tree; ``grams``: then their Grams on all rows where the caller has them
        (:meth:`split_grams`), else computed here."""
        s = self.spec
        data = self.data(shard=False)
        sweeps = spec_.BACKFIT_SWEEPS
        values = select.host_tree_values(program, self.xs, s.basis) \
            if fit is None and s.host_backfit else None
        if values is not None:
            state, resid = self._host_backfit(data, values, terms, sspec, sweeps)
        else:
            if fit is None:
                shapes_.refit_ahead(terms, data, sspec, sweeps)
            rdata = data._replace(y=select.minus(data.y, self._tree_fit(program)))
            if fit is not None:
                state = shapes_.finish_jit(fit.state, rdata, fit.grams, sspec, 1)
            else:
                gr = shapes_.grams_jit(rdata, sspec) if grams is None else grams
                state = shapes_.refit(terms, rdata, sspec, sweeps, gr=gr)
            resid = data._replace(y=select.minus(data.y, state.fit))  # the tree's target
        if s.refine == "optax":
            # the refined program's weighted MSE on resid comes with it: no second pass, and
            # no mse program to compile in a first fit
            program, mse = self._refine(program, resid)
            return state.shapes, program, float(mse)
        return state.shapes, program, float(select.held_out_mse(program, resid, s.basis))

    def _host_backfit(self, data, values, terms, sspec, sweeps: int) -> tuple:
        """``(state, resid)``: :meth:`backfit`'s ``sweeps`` sweeps of the shapes on the host,
        given the tree's values ``values (n,)`` (float64, :func:`jaxtree._fit.select.host_tree_values`),
        and the tree's target (the rows ``data`` with ``y`` minus the shapes' values, on the
        device) (:attr:`jaxtree._fit.spec.FitSpec.host_backfit`).

        Why (sixty-third session, issue 27): the round's three programs (the Grams, the
        terms' values, the sweep) on all rows, and the tree's values, compiled at the end
        of a first fit, after the count was chosen (the compacted spec follows the chosen
        pairs), with nothing left to overlap: ~0.8 s of the first fit of a 20,000 x 10
        table. On the host the sweep reads each term's few nonzero hats per row
        (:class:`jaxtree._fit.host_shapes.Design`): tens of milliseconds at such sizes."""
        y = np.asarray(data.y, np.float64)
        tree = np.zeros(y.size)
        tree[: self.n] = values
        dt = np.dtype(data.x.dtype)
        host = scoring.Data(np.asarray(data.x), y - tree.reshape(y.shape), np.asarray(data.w))
        state = host_shapes.refit(terms, host, sspec, sweeps)
        resid = data._replace(y=jax.device_put((y - np.asarray(state.fit, np.float64)).astype(dt)))
        return state, resid

    def _refine(self, program, resid) -> tuple:
        """``(program, mse)``: the tree's weights refined by L-BFGS on ``resid`` (rows as
        :meth:`data` chunks them). Through the tree search's own compiled refinement
        (:func:`jaxtree.search.refine_step`: the greedy or backfit step's second part, the
        tree padded back to the search's capacity)
        where the search compiled one for these shapes, else :func:`jaxtree.refine.joint`
        alone (:func:`jaxtree._fit.select.joint_cached`), in the search's capacity too: one
        L-BFGS program fewer in a first fit, and one per capacity bucket, not per size
        (issue 27)."""
        s = self.spec
        cfg = self.tree_config()
        padded = in_capacity(program, cfg)
        if (not search.refines(cfg) or s.devices is not None
                or padded.capacity > 2 * cfg.max_k + 1):  # larger than the search's
            refined, mse = select.joint_cached(padded, resid, s.basis, s.steps)
        else:
            refined, mse = search.refine_step(padded, self._in_tree_rows(resid), s.basis, cfg)
        return prog.trim(refined, program.max_k), mse

    def _in_tree_rows(self, resid):
        """``resid`` (the shape stage's chunking) as the tree search's rows were chunked,
        where the two differ (the search kept its own chunks where padding to the row bucket
        would change its pair screen's stride, :func:`jaxtree.scoring.tree_rows`; the shape
        stage pads; and only the search's rows carry the support mask): the same rows and
        targets, so that the refinement runs the search's compiled program instead of
        compiling its own at the end of a first fit (sixty-seventh session: 0.9 s of a
        5,000-row table's with three 30-level categories). Else ``resid`` itself."""
        grown = self._grown
        if grown is None or (jax.tree_util.tree_structure(grown)
                             == jax.tree_util.tree_structure(resid)
                             and grown.y.shape == resid.y.shape):
            return resid
        y = np.zeros(grown.y.size, np.dtype(grown.y.dtype))
        y[: self.n] = np.asarray(resid.y).reshape(-1)[: self.n]
        return grown._replace(y=jax.device_put(y.reshape(grown.y.shape)))

    # ---------------------------------------------------------------------- prune

    def prune(self, program, shape_fit=None) -> tuple:
        """``(program, removed)``: leaves pruned at ``prune_tol`` (:func:`jaxtree.simplify.prune`),
        against the shape terms' partial residual when there are some."""
        s = self.spec
        ys = self.ys
        if shape_fit is not None:
            ys = ys - np.asarray(shapes_.evaluate_jit(shape_fit[0], jnp.asarray(self.xs, s.dtype),
                                                      shape_fit[1]), np.float64)
        data = self.data(ys)
        program = jax.tree_util.tree_map(jnp.asarray, program)
        out = simplify_.prune(program, data, s.basis, s.prune_tol, refine=s.refine,
                              refine_steps=s.steps, coordinate_sweeps=s.sweeps)
        return out.program, out.removed


class Streamed(_Regression):
    """Rows read block by block from ``reader`` (:class:`jaxtree.stream.ChunkReader`);
    ``shapes``: fixed shape terms ``(terms, spec)`` whose partial residual the tree fits."""

    in_memory = False

    def __init__(self, reader, spec: spec_.FitSpec, sc: scaling_.Scaling, shapes=None,
                 two_valued: tuple = (), cut: tuple = ()):
        self.reader, self.spec, self.sc, self.shapes = reader, spec, sc, shapes
        self.scaled = reader.scaled(sc, spec.dtype)
        self.two_valued = two_valued  # the columns of two values its scaling pass found
        self.cut = cut  # and those whose range it cut short of a far tail

    @property
    def n(self) -> int:
        return self.reader.n

    @property
    def p(self) -> int:
        return self.reader.p

    @property
    def loss_scale(self) -> float:
        return float(self.sc.y_scale) ** 2

    def _kw(self, rep) -> dict:
        s = self.spec
        return dict(callback=rep, devices=s.devices, chunks_per_block=s.block,
                    loss_scale=self.loss_scale, shapes=self.shapes,
                    beam_width=s.beam_width if s.search == "beam" else None, stop=s.stop,
                    min_support=s.min_support, binary=s.indicators)

    def read_rows(self, rows, program=None) -> scoring.Data:
        """The rows ``rows`` (sorted) read into memory, scaled and chunked as an in-memory fit
        chunks them, with ``y`` the target or, given ``program``, the tree's residual."""
        s = self.spec
        x, y, w = self.reader.take(rows)
        xs, ys = scaling_.scale_rows(self.sc, x, y, w)
        xj = jnp.asarray(xs, s.dtype)
        if program is not None:
            t_fit = select.tree_values(program, scoring.chunk(xj, jnp.zeros(len(rows), s.dtype),
                                                              chunk_size=s.chunk).x, s.basis)
            ys = ys - np.asarray(t_fit, np.float64).reshape(-1)[: len(rows)]
        return scoring.chunk(xj, jnp.asarray(ys, s.dtype),
                             None if w is None else jnp.asarray(w, s.dtype), chunk_size=s.chunk)

    # ------------------------------------------------------------------------ tree

    def tree_config(self) -> search.Config:
        return self.spec.config(self.n, self.p)._replace(screen_rows=self.spec.screen_rows)

    def grow(self, k: int, cfg: search.Config, rep, chosen: bool = False) -> search.SearchResult:
        if chosen and cfg.pair_leaves:  # a pair uses two operations: the capacity bounds the size
            cfg = cfg._replace(max_k=max(k, 1))
        return stream_.fit(self.scaled, self.spec.basis, k, cfg, **self._kw(rep))

    def selection_run(self, cfg: search.Config, rep) -> tuple:
        """The in-memory fit's split, read by index; ``(run, (rows, w))`` as the in-memory
        :meth:`InMemory.selection_run`'s. The per-row held-out errors of every size are read
        in one more pass over the held-out rows after the search (the streamed search
        reports only their MSE), evaluating every kept program on each block; they take
        ``k + 1`` values per held-out row on the host."""
        s = self.spec
        train, held = select.split(self.n, s.validation_fraction, s.random_state,
                                   self.reader.sample_weight)
        sel = stream_.fit(self.scaled.subset(train), s.basis, s.k, cfg,
                          held_out=self.scaled.subset(held), **self._kw(rep))
        programs = [jax.device_get(p) for p in sel.programs]
        if self.shapes is None:
            passes, _ = stream_.block_passes(self.scaled.subset(held), s.basis, s.block,
                                             s.devices, s.dtype)
        else:
            passes, _ = stream_.shape_residual_passes(
                self.scaled.subset(held), s.basis, *self.shapes, chunks_per_block=s.block,
                devices=s.devices, dtype=s.dtype)
        rows, w = [], []
        for xb, yb, wb in passes.blocks():
            rows.append(np.stack([np.asarray(select.block_errors(p, xb, yb, s.basis),
                                             np.float64).reshape(-1) for p in programs]))
            w.append(np.asarray(wb, np.float64).reshape(-1))
        rows = np.concatenate(rows, axis=1)[:, :len(held)]
        return sel._replace(programs=programs), (rows, np.concatenate(w)[:len(held)])

    # ---------------------------------------------------------------------- shapes

    def tree_program(self, program):
        return jax.tree_util.tree_map(jnp.asarray, program)

    def shape_split(self, program=None):
        """The rows of :func:`jaxtree._fit.select.shape_rows` read into memory (the in-memory
        fit's split while its held-out part is small), ``y`` or the tree's residual."""
        s = self.spec
        train, held = select.shape_rows(self.n, s.held_out_fraction, s.random_state,
                                        self.reader.sample_weight)
        return self.read_rows(train, program), self.read_rows(held, program), held

    def shape_search_rows(self) -> tuple:
        rows = select.subsample(self.n, shapes_.SEARCH_ROWS, self.spec.random_state)
        return self.read_rows(np.arange(self.n) if rows is None else rows), rows is None

    reuses_grams = False  # all rows' Grams are read by the first refit pass instead

    def fit_shapes(self, sres, found, sspec, grams, all_rows: bool) -> ShapeFit:
        """The searched terms backfitted on all rows, pass by pass
        (:func:`jaxtree.stream.refit_shapes`, the in-memory sweeps)."""
        s = self.spec
        sweeps = spec_.SHAPE_SWEEPS_ALL_ROWS if all_rows else spec_.SHAPE_SWEEPS_SUBSET
        terms, gr = stream_.refit_shapes(self.scaled, None, s.basis, found, sspec, sweeps=sweeps,
                                         devices=s.devices, dtype=s.dtype,
                                         chunks_per_block=s.block)
        return ShapeFit(terms, None, gr)

    def given_shapes(self, fit: ShapeFit, sspec) -> "Streamed":
        out = copy.copy(self)  # the same reader and scaled view, not read again
        out.shapes = (fit.terms, sspec)
        return out

    def backfit(self, program, terms, sspec, fit: Optional[ShapeFit] = None) -> tuple:
        """The sweeps of the shapes given the tree (:func:`jaxtree.stream.refit_shapes`; one
        with ``shapes=S``, else :data:`~jaxtree._fit.spec.BACKFIT_SWEEPS`), then
        with ``refine="optax"`` the tree's weights refined given the shapes
        (:func:`jaxtree.stream.refine_given_shapes`)."""
        s = self.spec
        kw = dict(devices=s.devices, dtype=s.dtype, chunks_per_block=s.block)
        program = jax.tree_util.tree_map(jnp.asarray, program)
        sweeps = 1 if fit is not None else spec_.BACKFIT_SWEEPS  # as the in-memory round's
        terms, _ = stream_.refit_shapes(self.scaled, program, s.basis, terms, sspec,
                                        sweeps=sweeps, gr=None if fit is None else fit.grams,
                                        **kw)
        steps = s.steps if s.refine == "optax" else 0
        program, mse = stream_.refine_given_shapes(self.scaled, program, s.basis, terms, sspec,
                                                   steps=steps, **kw)
        return terms, program, float(mse)

    # ---------------------------------------------------------------------- prune

    def prune(self, program, shape_fit=None) -> tuple:
        """The in-memory pruning's removals (:func:`jaxtree.stream.prune`)."""
        s = self.spec
        passes = None
        if shape_fit is not None:
            passes, _ = stream_.shape_residual_passes(self.scaled, s.basis, *shape_fit,
                                                      devices=s.devices, dtype=s.dtype,
                                                      chunks_per_block=s.block)
        out = stream_.prune(self.scaled, program, s.basis, s.prune_tol,
                            s.config(self.n, self.p), devices=s.devices, dtype=s.dtype,
                            passes=passes, chunks_per_block=s.block)
        return out.program, out.removed
