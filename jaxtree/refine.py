"""Adjusting all weights of a tree after an insertion.

Two modes:

* :func:`coordinate`, the paper's: holding the other weights, ``T`` is affine in each
  leaf weight ``w_d`` (``T = b_d + k_d w_d phi_d``), so each coordinate step is the exact
  clipped one-dimensional least squares of ``y - b_d ~ a + w k_d phi_d`` with the
  intercept ``a`` re-fitted. Leaves are visited in ascending slot order, ``sweeps``
  times. A degenerate coordinate (constant regressor) keeps its weight and only
  re-fits the intercept. This must match :func:`jaxtree.reference.refine_coordinate`.
* :func:`joint`, the default: all leaf weights and the intercept at once by L-BFGS
  (optax's memory, a strong Wolfe line search: :func:`lbfgs_box`), each step followed by a
  projection onto the box ``|w| <= 1`` (``optax.projections.projection_box``). The loss
  is the weighted mean squared error, accumulated chunk by chunk with a hand-written VJP
  so that memory stays ``O(chunk)`` instead of keeping every chunk's intermediates for
  reverse mode;
  its gradient comes from the leaf multipliers (``dT/dw_d = k_d phi_d``), several times
  cheaper than reverse mode through the tree loop. The best iterate is kept, so the
  loss never increases.

Both modes evaluate the leaves' basis values once per refinement (:func:`leaf_cache`,
bounded memory) and pass over the data in chunks of up to ``REFINE_ROWS`` rows.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxtree import losses
from jaxtree import program as prog
from jaxtree import scoring

__all__ = [
    "chunk_value_and_grad",
    "coarse",
    "coordinate",
    "coordinate_moments",
    "coordinate_newton",
    "coordinate_update",
    "joint",
    "lbfgs_box",
    "lbfgs_rtol",
    "leaf_cache",
    "LEAF_CACHE_BYTES",
    "MAX_FAILS",
    "mse",
    "REFINE_ROWS",
]



REFINE_ROWS = 16384


def coarse(data: scoring.Data, max_rows: int = REFINE_ROWS) -> scoring.Data:
    """Regroups chunks into larger ones (a free reshape) for passes over the tree's values.

    The scorer's chunk is small because it materialises ``Phi (m, p*q)``; tree
    evaluation needs only ``O(S*m)`` memory, and on CPU its per-chunk loop overhead
    dominates at small ``m``, so refinement and loss passes use up to ``max_rows`` rows.
    A cached ``Phi`` (``data.phi``) is regrouped with the rows: these passes read the leaves'
    columns from it (:func:`jaxtree.program.leaf_basis`).
    """
    return scoring.regroup(data, max_rows)


LEAF_CACHE_BYTES = 512 * 2**20


def leaf_cache(program: prog.Program, data: scoring.Data, basis):
    """Each chunk's :func:`jaxtree.program.leaf_basis`, ``(n_chunks, L, m)``, or None.

    Refinement changes weights, never the structure, so the leaves' basis values are
    computed once per refinement instead of once per pass (the basis evaluation costs
    several times the tree arithmetic). Held only while it takes at most
    ``LEAF_CACHE_BYTES`` (``L*n`` floats) or the data carry a cached ``Phi`` (of which it is a
    gather of ``L`` columns); otherwise each pass re-evaluates it.
    """
    nc, m, _ = data.x.shape
    n_leaves = (program.capacity + 1) // 2
    if data.phi is not None:
        return jax.vmap(lambda xb, phb: prog.leaf_basis(program, xb, basis, phb))(data.x,
                                                                                  data.phi)
    if nc * m * n_leaves * data.x.dtype.itemsize > LEAF_CACHE_BYTES:
        return None
    return jax.lax.map(lambda xb: prog.leaf_basis(program, xb, basis), data.x)


def mse(program: prog.Program, data: scoring.Data, basis) -> jax.Array:
    """Weighted mean squared error of ``program`` on chunked ``data`` (scaled units).

    Args:
      program: the tree.
      data: chunked training data (:func:`jaxtree.scoring.chunk`).
      basis: the :class:`jaxtree.basis.Basis` the program indexes.
    """
    data = coarse(data)

    def body(acc, ch):
        xb, yb, wb, phb = ch
        res = yb - prog.evaluate(program, xb, basis, phb)
        return (acc[0] + jnp.sum(wb * res * res), acc[1] + jnp.sum(wb)), None

    z = jnp.zeros((), data.x.dtype)
    # a plain scan (not scoring.scan_live): a public function, reverse differentiable
    (sse, n), _ = jax.lax.scan(body, (z, z), (data.x, data.y, data.w, data.phi))
    return sse / n


def coordinate_moments(p: prog.Program, d, xb, yb, wb, basis, zb=None) -> scoring.Moments:
    """Moments of ``r = y - b_d`` and ``s = k_d phi_d(x)`` for leaf slot ``d`` on a chunk.

    ``zb``: optional cached :func:`jaxtree.program.leaf_basis` of the chunk ``(L, m)``.

    Args:
      p: the current tree.
      d: the leaf slot.
      xb: float ``(m, p)`` the chunk's features.
      yb: float ``(m,)`` its targets.
      wb: float ``(m,)`` its sample weights (0 on padding rows).
      basis: the :class:`jaxtree.basis.Basis` the program indexes.
    """
    zb = prog.leaf_basis(p, xb, basis) if zb is None else zb
    c = prog.leaf_values_from_basis(p, zb)
    v = prog.node_values(p, c, live=True)
    t = prog.tree_value(p, v)
    kd = prog.leaf_multipliers(p, v, live=True)[d]
    rank = jnp.sum((p.op == prog.LEAF) & (jnp.arange(p.capacity) < d))
    s = kd * zb[rank]
    r = yb - (t - kd * c[d])
    return scoring.pair_moments(wb, r, s)


def coordinate_update(p: prog.Program, d, mo: scoring.Moments):
    """Applies the clipped 1-D optimum for leaf ``d`` given its merged moments.

    Args:
      p: the current tree.
      d: the leaf slot.
      mo: the :class:`jaxtree.scoring.Moments` of :func:`coordinate_moments`, merged over all
        chunks.

    Returns:
      ``(program, loss)``: the updated program and its weighted mean squared error,
      exact from the moments (the tree after the update is ``a + b_d + w k_d phi_d``).
    """
    fit = scoring.closed_form(mo)
    w_old = p.weight[d]
    w = jnp.where(fit.degenerate, w_old, fit.weight)
    a = jnp.where(fit.degenerate, mo.rbar - w_old * mo.sbar, fit.intercept)
    sse = jnp.maximum(mo.mrr - 2 * w * mo.mrs + w * w * mo.mss, 0)
    new = p._replace(weight=p.weight.at[d].set(w), intercept=a.astype(p.intercept.dtype))
    return new, scoring.safe_div(sse, mo.n).astype(p.weight.dtype)


def coordinate(program: prog.Program, data: scoring.Data, basis, *, sweeps: int,
               max_leaves: int):
    """The paper's coordinate descent over leaf weights (see module docstring).

    Args:
      program: the tree; data: chunked data; basis: its basis.
      sweeps: static number of passes over the leaves.
      max_leaves: static upper bound on the number of leaves.

    Returns:
      ``(program, loss)``: the program with adjusted weights and intercept, and its
      weighted mean squared error (from the last update's moments: no extra pass).
    """
    slots = prog.leaf_slots(program, max_leaves)
    data = coarse(data)
    cache = leaf_cache(program, data, basis)

    def update(p, d):
        def body(acc, ch):
            return scoring.merge(acc, coordinate_moments(p, d, *ch[:3], basis, ch[3])), None

        z = jnp.zeros((), data.x.dtype)
        mo, _ = scoring.scan_live(body, scoring.Moments(z, z, z, z, z, z),
                                  (data.x, data.y, data.w, cache), data.w)
        return coordinate_update(p, d, mo)

    def step(i, carry):
        d = slots[i % max_leaves]
        updated = lambda: update(carry[0], jnp.maximum(d, 0)) + (jnp.asarray(True),)
        return jax.lax.cond(d >= 0, updated, lambda: carry)

    init = (program, jnp.zeros((), program.weight.dtype), jnp.asarray(False))
    out, loss, updated = jax.lax.fori_loop(0, sweeps * max_leaves, step, init)
    # Without any update (no sweeps, or no leaves) the loss needs its own pass.
    return out, jax.lax.cond(updated, lambda: loss, lambda: mse(program, data, basis))


def coordinate_newton(program: prog.Program, data: scoring.Data, basis, *, sweeps: int,
                      max_leaves: int, loss: str):
    """The paper's coordinate descent for a classification loss (iteratively reweighted).

    Each sweep builds the Newton working data at the current tree
    (:func:`jaxtree.losses.working_data`), runs one :func:`coordinate` pass over the leaves on
    it (each update the exact clipped 1-D minimiser of the quadratic model), and keeps the
    result only if the true loss fell, so the loss never increases.

    Args:
      program: the current tree.
      data: chunked training data (:func:`jaxtree.scoring.chunk`).
      basis: the :class:`jaxtree.basis.Basis` the program indexes.
      sweeps: number of Newton sweeps.
      max_leaves: static number of leaf rows (>= number of leaves).
      loss: the loss's name (:data:`jaxtree.losses.LOSSES`).

    Returns:
      ``(program, loss)``: the adjusted program and its weighted mean loss.
    """
    cur = losses.mean_loss(program, data, basis, loss)

    def sweep(_, carry):
        p, val = carry
        work = losses.working_data(p, data, basis, loss)
        cand, _ = coordinate(p, work, basis, sweeps=1, max_leaves=max_leaves)
        cand_val = losses.mean_loss(cand, data, basis, loss)
        better = cand_val < val
        p = prog.where_tree(better, cand, p)
        return p, jnp.where(better, cand_val, val)

    return jax.lax.fori_loop(0, sweeps, sweep, (program, cur))


def chunk_value_and_grad(params, program: prog.Program, xb, yb, wb, basis, zb=None,
                         loss: str = "squared", ob=None):
    """Weighted SSE of one chunk and its gradient w.r.t. ``params = (weight, intercept)``.

    ``zb``: optional cached :func:`jaxtree.program.leaf_basis` of the chunk ``(L, m)``.
    ``loss``: another :data:`jaxtree.losses.LOSSES` entry gives the weighted sum of that
    loss (:func:`jaxtree.losses.pointwise`) and its gradient instead.

    Args:
      params: ``(weight, intercept)``: weights ``(S,)`` and intercept.
      program: the tree (its structure; the weights come from ``params``).
      xb: float ``(m, p)`` the chunk's features.
      yb: float ``(m,)`` its targets.
      wb: float ``(m,)`` its sample weights (0 on padding rows).
      basis: the :class:`jaxtree.basis.Basis` the program indexes.
      ob: optional float ``(m,)``, a classification loss's per-row offset
        (:attr:`jaxtree.scoring.Data.offset`: the loss of ``ob + w0 + T(x)``); the squared
        loss does not read it.
    """
    zb = prog.leaf_basis(program, xb, basis) if zb is None else zb
    w, a = params
    pg = program._replace(weight=w)
    v = prog.node_values(pg, prog.leaf_values_from_basis(pg, zb), live=True)
    if loss != "squared":
        return _chunk_loss_grad(params, pg, v, yb, wb, zb, loss, ob)
    res = yb - a - prog.tree_value(pg, v)
    wres = wb * res
    # dT/dw_s = k_s * phi_s (T is affine in each leaf value): the gradient from one
    # top-down pass, several times cheaper than reverse mode through the tree loop.
    # Only the leaves' rows are needed: (L, m) products, scattered into (S,) at the end.
    slots = prog.leaf_slots(program, zb.shape[0])
    kl = prog.leaf_multipliers(pg, v, live=True)[jnp.maximum(slots, 0)]
    gl = -2.0 * jnp.sum(kl * zb * wres[None, :], axis=1)
    gw = jnp.zeros_like(w).at[jnp.where(slots >= 0, slots, w.shape[0])].set(
        gl.astype(w.dtype), mode="drop")
    return jnp.sum(wres * res), (gw, (-2.0 * jnp.sum(wres)).astype(a.dtype))


def _chunk_loss_grad(params, pg, v, yb, wb, zb, loss, ob=None):
    """:func:`chunk_value_and_grad` for a classification loss: ``sum w l(y, f)`` and its
    gradient ``dL/dw_d = sum w l'(f) k_d phi_d``, ``dL/dw0 = sum w l'(f)`` (``f`` with the
    offset ``ob`` where there is one)."""
    w, a = params
    f = a + prog.tree_value(pg, v)
    if ob is not None:
        f = f + ob
    gf = wb * losses.grad_hess(loss, yb, f)[0]
    slots = prog.leaf_slots(pg, zb.shape[0])
    kl = prog.leaf_multipliers(pg, v, live=True)[jnp.maximum(slots, 0)]
    gl = jnp.sum(kl * zb * gf[None, :], axis=1)
    gw = jnp.zeros_like(w).at[jnp.where(slots >= 0, slots, w.shape[0])].set(
        gl.astype(w.dtype), mode="drop")
    return jnp.sum(wb * losses.pointwise(loss, yb, f)), (gw, jnp.sum(gf).astype(a.dtype))


def _chunked_loss(basis, kind: str = "squared"):
    """Weighted mean loss of (weights, intercept) with a chunk-by-chunk custom VJP."""

    def value_and_grad(params, program, data, cache):
        def body(acc, ch):
            val, g = chunk_value_and_grad(params, program, *ch[:3], basis, ch[3], loss=kind,
                                          ob=ch[4] if len(ch) > 4 else None)
            return jax.tree_util.tree_map(jnp.add, acc, (val, g)), None

        z = jnp.zeros((), data.x.dtype)
        init = (z, jax.tree_util.tree_map(jnp.zeros_like, params))
        rows = (data.x, data.y, data.w, cache)
        if data.offset is not None and kind != "squared":  # a classification loss's offset
            rows = rows + (data.offset,)
        (val, g), _ = scoring.scan_live(body, init, rows, data.w)
        n = jnp.sum(data.w)
        return val / n, jax.tree_util.tree_map(lambda t: t / n, g)

    @jax.custom_vjp
    def loss(params, program, data, cache):
        return value_and_grad(params, program, data, cache)[0]

    def fwd(params, program, data, cache):
        val, g = value_and_grad(params, program, data, cache)
        return val, (g, program, data, cache)

    def bwd(res, ct):
        g, program, data, cache = res
        zeros = jax.tree_util.tree_map(jnp.zeros_like, (program, data, cache))
        return (jax.tree_util.tree_map(lambda t: ct * t, g),) + zeros

    loss.defvjp(fwd, bwd)
    return loss


def joint(program: prog.Program, data: scoring.Data, basis, *, steps: int,
          loss: str = "squared"):
    """Joint projected L-BFGS refinement of all leaf weights and the intercept.

    Args:
      program: the tree; data: chunked data; basis: its basis.
      steps: static number of L-BFGS iterations (each one or a few passes over data).
      loss: static, one of :data:`jaxtree.losses.LOSSES`: the loss minimised (the true
        logistic loss, or the margin loss's squared-hinge surrogate; data ``y = +-1``).

    Returns:
      ``(program, loss)``: the program with the best weights seen (never worse than the
      input) and its weighted mean loss (mean squared error for ``"squared"``).
    """
    fn = _chunked_loss(basis, loss)
    data = coarse(data)
    cache = leaf_cache(program, data, basis)
    if cache is not None:  # the passes read the cache: a cached Phi need not travel with them
        data = data._replace(phi=None)
    return lbfgs_box(program, lambda params: fn(params, program, data, cache), steps=steps)


def lbfgs_rtol(dtype) -> float:
    """Relative loss decrease below which joint refinement stops early.

    Args:
      dtype: float dtype of the loss (float64 gets the tighter tolerance).
    """
    return 1e-12 if jnp.dtype(dtype) == jnp.float64 else 1e-7


MAX_FAILS = 2
"""Non-improving L-BFGS iterations in a row after which :func:`lbfgs_box` stops (each one
before that restarts from the best point with a fresh memory)."""


MEMORY = 10
"""Pairs of differences the L-BFGS inverse-Hessian model keeps (optax.lbfgs's default)."""

LINESEARCH_STEPS = 20
"""Trial steps per line search at most (optax.lbfgs's zoom line search uses 20 too)."""

SLOPE_RTOL, CURV_RTOL = 1e-4, 0.9
"""The strong Wolfe conditions' constants: sufficient decrease ``phi(t) <= phi(0) + c1 t
phi'(0)`` and curvature ``|phi'(t)| <= c2 |phi'(0)|`` (Nocedal & Wright's usual values)."""

APPROX_DEC_RTOL = 1e-6
"""Near a minimum the sufficient decrease may fail by rounding alone; Hager & Zhang's
approximate condition (slope ``phi'(t) <= (2 c1 - 1) phi'(0)`` and ``phi(t) <= phi(0) +
eps |phi(0)|``) is accepted instead, with this ``eps``."""

STEP_PRECISION = 1e-5
"""A zoom whose interval is narrower than this ends on its best safe trial, if it has one."""

POINT, BRACKET, ZOOM = 0, 1, 2
"""What :func:`lbfgs_box`'s next evaluation is: the iterate itself, a trial step while
bracketing an acceptable step, or a trial inside the bracket."""


class _Trial(NamedTuple):
    """A point on the search line: its step, the loss there and the slope along the line."""

    step: jax.Array
    value: jax.Array
    slope: jax.Array


class _State(NamedTuple):
    """:func:`lbfgs_box`'s loop state (one loss evaluation per loop iteration)."""

    i: jax.Array          # iterates evaluated so far
    params: tuple         # the iterate (weight, intercept)
    memory: Any           # optax.scale_by_lbfgs's state at the iterate
    best: tuple           # (params, loss) of the best iterate
    at_best: tuple        # (loss, gradient) there, for a restart
    fails: jax.Array      # non-improving iterates in a row
    go: jax.Array
    phase: jax.Array      # POINT, BRACKET or ZOOM
    u: tuple              # the search direction from the iterate
    init: _Trial          # step 0: the iterate's loss and slope along u
    step: jax.Array       # the next trial step
    count: jax.Array      # trials of this line search so far
    prev: _Trial          # bracketing: the last trial
    lo: _Trial            # zooming: the end with sufficient decrease and the lower loss
    hi: _Trial            # zooming: the other end
    ref: _Trial           # zooming: the third point of the cubic fit (the end replaced last)
    safe: _Trial          # the trial with sufficient decrease and the lowest loss (step 0: none)
    safe_grad: tuple


def _vdot(a, b):
    return sum(jnp.vdot(x, y) for x, y in zip(jax.tree_util.tree_leaves(a),
                                              jax.tree_util.tree_leaves(b)))


def _inf_if_nan(err):
    return jnp.where(jnp.isnan(err), jnp.inf, err)


def _decrease_error(t: _Trial, init: _Trial):
    """How far ``t`` is from sufficient decrease (0 where it holds): Armijo's condition, or
    near a minimum Hager & Zhang's approximate one (:data:`APPROX_DEC_RTOL`)."""
    armijo = t.value - init.value - SLOPE_RTOL * t.step * init.slope
    approx = jnp.maximum(t.slope - (2 * SLOPE_RTOL - 1) * init.slope,
                         t.value - init.value - APPROX_DEC_RTOL * jnp.abs(init.value))
    return _inf_if_nan(jnp.maximum(jnp.minimum(armijo, approx), 0))


def _cubic_min(a: _Trial, b: _Trial, c: _Trial):
    """The stationary point of the cubic through ``a`` (value and slope), ``b`` and ``c``
    (values), or NaN where there is none (the caller then falls back)."""
    db, dc = b.step - a.step, c.step - a.step
    rb = b.value - a.value - a.slope * db
    rc = c.value - a.value - a.slope * dc
    det = (db * dc) ** 2 * (db - dc)
    ca = (dc * dc * rb - db * db * rc) / det
    cb = (db ** 3 * rc - dc ** 3 * rb) / det
    return a.step + (-cb + jnp.sqrt(cb * cb - 3 * ca * a.slope)) / (3 * ca)


def _quad_min(a: _Trial, b: _Trial):
    """The minimiser of the parabola through ``a`` (value and slope) and ``b`` (value)."""
    db = b.step - a.step
    curv = (b.value - a.value - a.slope * db) / (db * db)
    return a.step - a.slope / (2 * curv)


def _zoom_step(lo: _Trial, hi: _Trial, ref: _Trial):
    """The next trial inside ``[lo, hi]`` (Nocedal & Wright, Algorithm 3.6): the cubic's
    minimiser if it lies well inside (20% margins), else the parabola's (10%), else the
    middle."""
    left, right = jnp.minimum(lo.step, hi.step), jnp.maximum(lo.step, hi.step)
    delta = right - left
    cubic = _cubic_min(lo, hi, ref)
    quad = _quad_min(lo, hi)
    use_cubic = (cubic > left + 0.2 * delta) & (cubic < right - 0.2 * delta)
    use_quad = (quad > left + 0.1 * delta) & (quad < right - 0.1 * delta)
    return jnp.where(use_cubic, cubic, jnp.where(use_quad, quad, (lo.step + hi.step) / 2))


def lbfgs_box(program: prog.Program, loss_fn, *, steps: int):
    """Projected L-BFGS over ``(weight, intercept)`` of ``program`` with ``|w| <= 1``.

    Stops after ``steps`` iterations, or earlier once ``MAX_FAILS`` iterations in a row lower
    the loss by less than ``lbfgs_rtol(dtype)`` relative (rounding level: further steps
    cannot be told apart from noise in that dtype); after each such iteration it restarts
    from the best point with a fresh memory. Weights on a bound whose gradient points outward are
    held there (active set: their gradient is masked), so the quasi-Newton model covers the
    free weights only. Without these two rules a step cut by the projection ended the search
    short of the optimum (issue 16's KKT oracle: up to 27% above L-BFGS-B).

    Each iteration: the direction from optax's L-BFGS memory (``optax.scale_by_lbfgs``), a
    line search along it for a step satisfying the strong Wolfe conditions (bracketing, then
    zooming by cubic and quadratic interpolation: Nocedal & Wright, Algorithms 3.5-3.6, the
    algorithm of optax's zoom line search), the step projected onto the box, and the new
    point evaluated unless the projection left the line search's last point as it was (its
    loss and gradient are reused). A line search that runs out of trials takes its best
    trial with sufficient decrease.

    Decision (twenty-sixth session): the whole refinement is ONE ``lax.while_loop`` whose body
    evaluates the loss and its gradient exactly once, at a point chosen by the loop's phase
    (the iterate, a bracketing trial or a zoom trial). optax's L-BFGS with its zoom line
    search traced the loss and gradient in three places (the iteration's own evaluation and
    the line search's two branches), and each copy is compiled into every search step: the
    refinement was about a quarter of the default step's kernels (issue 27). The steps the
    line search tries follow the same rules, so the refinement is as strong (the KKT and
    L-BFGS-B oracles of tests/test_oracles.py), not a bit-for-bit copy of optax's iterates.
    Where the L-BFGS direction is not a descent direction (a masked gradient, a stale
    memory) the search goes down the gradient instead.

    Args:
      program: the tree whose weights start the search.
      loss_fn: ``loss_fn((weight, intercept)) -> scalar``, differentiable (reverse mode),
        computed in the program's dtype.
      steps: maximum number of L-BFGS iterations (may be traced).

    Returns:
      ``(program, loss)``: the program with the best iterate seen (never worse than the
      input) and ``loss_fn`` there.
    """
    is_leaf = program.op == prog.LEAF
    dt = program.weight.dtype
    tree = jax.tree_util.tree_map
    value_and_grad = jax.value_and_grad(lambda params: loss_fn(tree(lambda t: t.astype(dt),
                                                                    params)))

    def project(params):
        w, a = params
        w = optax.projections.projection_box(w, -1.0, 1.0)
        return jnp.where(is_leaf, w, 0).astype(dt), a.astype(dt)

    lbfgs = optax.scale_by_lbfgs(memory_size=MEMORY)
    params0 = (program.weight, program.intercept)
    memory0 = lbfgs.init(params0)
    rtol = lbfgs_rtol(dt)
    scalar = lambda v: jnp.asarray(v, dt)
    zero_trial = _Trial(scalar(0), scalar(jnp.inf), scalar(0))
    zeros = tree(jnp.zeros_like, params0)

    def body(c: _State) -> _State:
        at_point = c.phase == POINT
        trial = prog.where_tree(at_point, c.params,
                                tree(lambda x, d: (x + c.step * d).astype(dt), c.params, c.u))
        value, grad = value_and_grad(trial)  # the one place the loss is traced
        value = value.astype(dt)
        new = _Trial(c.step, value, _vdot(grad, c.u).astype(dt))

        # ---- the line search's bookkeeping (its results count where not at_point)
        dec = _decrease_error(new, c.init)
        curv = _inf_if_nan(jnp.maximum(jnp.abs(new.slope) - CURV_RTOL * jnp.abs(c.init.slope), 0))
        done = jnp.maximum(dec, curv) <= 0
        take_safe = (dec <= 0) & (value < c.safe.value)
        safe, safe_grad = prog.where_tree(take_safe, (new, grad), (c.safe, c.safe_grad))
        bracketing = c.phase == BRACKET
        # Bracketing (Algorithm 3.5): the interval is found once a trial fails the decrease
        # (or rises above the last one), or its slope turns up.
        b_hi = (dec > 0) | ((value >= c.prev.value) & (c.count > 0))
        b_lo = (new.slope >= 0) & ~b_hi
        found = b_hi | b_lo
        b_ends = prog.where_tree(b_lo, (new, c.prev), (c.prev, new))
        # Zooming (Algorithm 3.6): the trial replaces the end it belongs to.
        z_hi = (dec > 0) | (value >= c.lo.value)
        z_flip = (new.slope * (c.hi.step - c.lo.step) >= 0) & ~z_hi
        z_ends = prog.where_tree(z_hi, (c.lo, new), (new, prog.where_tree(z_flip, c.lo, c.hi)))
        z_ref = prog.where_tree(z_hi | z_flip, c.hi, c.lo)
        lo, hi = prog.where_tree(bracketing, b_ends, z_ends)
        ref = prog.where_tree(bracketing, b_ends[0], z_ref)
        count = c.count + 1
        narrow = ~bracketing & (jnp.abs(c.hi.step - c.lo.step) <= STEP_PRECISION)
        failed = ~done & ((count >= LINESEARCH_STEPS) | (narrow & (safe.step > 0)))
        ended = ~at_point & (done | failed)
        use_safe = failed & ((safe.step > 0) | jnp.isinf(dec))
        acc_step, acc_value, acc_grad = prog.where_tree(
            use_safe, (safe.step, safe.value, safe_grad), (new.step, value, grad))
        stepped = tree(lambda x, d: (x + acc_step * d).astype(dt), c.params, c.u)
        landed = project(stepped)
        moved = ~jnp.all(landed[0] == stepped[0])
        iterate = prog.where_tree(ended, landed, c.params)

        # ---- a new iterate with its loss and gradient: keep the best, restart or stop
        point = at_point | (ended & ~moved & jnp.isfinite(acc_value))
        p_value, p_grad = prog.where_tree(at_point, (value, grad), (acc_value, acc_grad))
        prev_best = c.best[1]
        better = point & (p_value < prev_best)
        best = prog.where_tree(better, (iterate, p_value), c.best)
        at_best = prog.where_tree(better | (point & (c.i == 0)), (p_value, p_grad), c.at_best)
        improved = (c.i == 0) | (prev_best - best[1] > rtol * jnp.abs(prev_best))
        fails = jnp.where(point, jnp.where(improved, 0, c.fails + 1), c.fails)
        go = jnp.where(point, (fails < MAX_FAILS) & (c.i < steps), c.go)
        restart = point & (fails > 0)
        start = prog.where_tree(restart, best[0], iterate)
        s_value, s_grad = prog.where_tree(restart, at_best, (p_value, p_grad))
        begin = point & go  # a new line search from `start`

        def direction(_):
            memory = prog.where_tree(restart, memory0, c.memory)
            # Active set: a weight on its bound whose gradient pushes it outward is held
            # there (its gradient masked), so L-BFGS models only the free weights instead of
            # proposing steps the projection would cut.
            w, gw = start[0], s_grad[0]
            held = is_leaf & (jnp.abs(w) >= 1) & (jnp.sign(w) * gw < 0)
            g = (jnp.where(held, 0, gw).astype(gw.dtype), s_grad[1])
            d, memory = lbfgs.update(g, memory, start)
            u = tree(lambda t: (-t).astype(dt), d)
            slope0 = _vdot(g, u).astype(dt)
            descent = slope0 < 0
            u = prog.where_tree(descent, u, tree(lambda t: (-t).astype(dt), g))
            slope0 = jnp.where(descent, slope0, -_vdot(g, g).astype(dt))
            return u, memory, _Trial(scalar(0), s_value, slope0)

        # Only where a line search begins (a trial's iteration skips the L-BFGS update).
        u, memory, init = jax.lax.cond(begin, direction, lambda _: (c.u, c.memory, c.init),
                                       None)
        phase = jnp.where(begin, BRACKET,
                          jnp.where(ended, POINT, jnp.where(bracketing & found, ZOOM, c.phase)))
        step = jnp.where(bracketing & ~found, 2 * c.step, _zoom_step(lo, hi, ref))
        keep = lambda fresh, old: prog.where_tree(begin, fresh, old)
        return _State(
            i=c.i + point, params=prog.where_tree(point, start, iterate),
            memory=memory, best=best, at_best=at_best, fails=fails, go=go,
            phase=phase, u=u, init=init,
            step=jnp.where(begin, scalar(1), step.astype(dt)),
            count=jnp.where(begin, 0, count), prev=keep(init, new),
            lo=keep(init, lo), hi=keep(init, hi), ref=keep(init, ref),
            safe=keep(init, safe), safe_grad=keep(s_grad, safe_grad))

    state = _State(
        i=jnp.asarray(0), params=params0, memory=memory0,
        best=(params0, scalar(jnp.inf)), at_best=(scalar(jnp.inf), zeros),
        fails=jnp.asarray(0), go=jnp.asarray(True), phase=jnp.asarray(POINT),
        u=zeros, init=zero_trial, step=scalar(0), count=jnp.asarray(0), prev=zero_trial,
        lo=zero_trial, hi=zero_trial, ref=zero_trial, safe=zero_trial, safe_grad=zeros)
    out = jax.lax.while_loop(lambda c: c.go, body, state)
    (bw, ba), bv = out.best
    return program._replace(weight=bw, intercept=ba), bv
