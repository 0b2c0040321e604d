"""Adjusting all weights of a tree after an insertion.

Two modes:

* :func:`coordinate`, the paper's: holding the other weights, ``T`` is affine in each
  leaf weight ``w_d`` (``T = b_d + k_d w_d phi_d``), so each coordinate step is the exact
  clipped one-dimensional least squares of ``y - b_d ~ a + w k_d phi_d`` with the
  intercept ``a`` re-fitted. Leaves are visited in ascending slot order, ``sweeps``
  times. A degenerate coordinate (constant regressor) keeps its weight and only
  re-fits the intercept. This must match :func:`jaxtree.reference.refine_coordinate`.
* :func:`joint`, the default: all leaf weights and the intercept at once with optax's
  L-BFGS (zoom line search), each step followed by a projection onto the box
  ``|w| <= 1`` (``optax.projections.projection_box``). The loss is the weighted mean
  squared error, accumulated chunk by chunk with a hand-written VJP so that memory
  stays ``O(chunk)`` instead of keeping every chunk's intermediates for reverse mode;
  its gradient comes from the leaf multipliers (``dT/dw_d = k_d phi_d``), several times
  cheaper than reverse mode through the tree loop. The best iterate is kept, so the
  loss never increases.

Both modes evaluate the leaves' basis values once per refinement (:func:`leaf_cache`,
bounded memory) and pass over the data in chunks of up to ``REFINE_ROWS`` rows.
"""

from __future__ import annotations

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
    nc, m = data.y.shape
    r = max([d for d in range(1, nc + 1) if nc % d == 0 and d * m <= max(max_rows, m)])
    if r == 1:
        return data
    phi = None if data.phi is None else data.phi.reshape(nc // r, r * m, -1)
    return scoring.Data(data.x.reshape(nc // r, r * m, -1), data.y.reshape(nc // r, r * m),
                        data.w.reshape(nc // r, r * m), phi)


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
    v = prog.node_values(p, c)
    t = prog.tree_value(p, v)
    kd = prog.leaf_multipliers(p, v)[d]
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
        mo, _ = jax.lax.scan(body, scoring.Moments(z, z, z, z, z, z),
                             (data.x, data.y, data.w, cache))
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
                         loss: str = "squared"):
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
    """
    zb = prog.leaf_basis(program, xb, basis) if zb is None else zb
    w, a = params
    pg = program._replace(weight=w)
    v = prog.node_values(pg, prog.leaf_values_from_basis(pg, zb))
    if loss != "squared":
        return _chunk_loss_grad(params, pg, v, yb, wb, zb, loss)
    res = yb - a - prog.tree_value(pg, v)
    wres = wb * res
    # dT/dw_s = k_s * phi_s (T is affine in each leaf value): the gradient from one
    # top-down pass, several times cheaper than reverse mode through the tree loop.
    # Only the leaves' rows are needed: (L, m) products, scattered into (S,) at the end.
    slots = prog.leaf_slots(program, zb.shape[0])
    kl = prog.leaf_multipliers(pg, v)[jnp.maximum(slots, 0)]
    gl = -2.0 * jnp.sum(kl * zb * wres[None, :], axis=1)
    gw = jnp.zeros_like(w).at[jnp.where(slots >= 0, slots, w.shape[0])].set(
        gl.astype(w.dtype), mode="drop")
    return jnp.sum(wres * res), (gw, (-2.0 * jnp.sum(wres)).astype(a.dtype))


def _chunk_loss_grad(params, pg, v, yb, wb, zb, loss):
    """:func:`chunk_value_and_grad` for a classification loss: ``sum w l(y, f)`` and its
    gradient ``dL/dw_d = sum w l'(f) k_d phi_d``, ``dL/dw0 = sum w l'(f)``."""
    w, a = params
    f = a + prog.tree_value(pg, v)
    gf = wb * losses.grad_hess(loss, yb, f)[0]
    slots = prog.leaf_slots(pg, zb.shape[0])
    kl = prog.leaf_multipliers(pg, v)[jnp.maximum(slots, 0)]
    gl = jnp.sum(kl * zb * gf[None, :], axis=1)
    gw = jnp.zeros_like(w).at[jnp.where(slots >= 0, slots, w.shape[0])].set(
        gl.astype(w.dtype), mode="drop")
    return jnp.sum(wb * losses.pointwise(loss, yb, f)), (gw, jnp.sum(gf).astype(a.dtype))


def _chunked_loss(basis, kind: str = "squared"):
    """Weighted mean loss of (weights, intercept) with a chunk-by-chunk custom VJP."""

    def value_and_grad(params, program, data, cache):
        def body(acc, ch):
            val, g = chunk_value_and_grad(params, program, *ch[:3], basis, ch[3], loss=kind)
            return jax.tree_util.tree_map(jnp.add, acc, (val, g)), None

        z = jnp.zeros((), data.x.dtype)
        init = (z, jax.tree_util.tree_map(jnp.zeros_like, params))
        (val, g), _ = jax.lax.scan(body, init, (data.x, data.y, data.w, cache))
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


def lbfgs_box(program: prog.Program, loss_fn, *, steps: int):
    """Projected L-BFGS over ``(weight, intercept)`` of ``program`` with ``|w| <= 1``.

    Stops after ``steps`` iterations, or earlier once ``MAX_FAILS`` iterations in a row lower
    the loss by less than ``lbfgs_rtol(dtype)`` relative (rounding level: further steps
    cannot be told apart from noise in that dtype); after each such iteration it restarts
    from the best point with a fresh memory. Weights on a bound whose gradient points outward are
    held there (active set: their gradient is masked), so the quasi-Newton model covers the
    free weights only. Without these two rules a step cut by the projection ended the search
    short of the optimum (issue 16's KKT oracle: up to 27% above L-BFGS-B). The test comes before the next update, so a
    run that stops early spends no line search on a point it would not use, and every
    point it produces is evaluated exactly once (the line search's value is reused; a restart
    reuses the value and gradient found at the best point). The loss is traced at one place
    here (besides the line search's own), so it is compiled once.

    Args:
      program: the tree whose weights start the search.
      loss_fn: ``loss_fn((weight, intercept)) -> scalar``, differentiable (reverse mode),
        computed in the program's dtype.
      steps: static maximum number of L-BFGS iterations.

    Returns:
      ``(program, loss)``: the program with the best iterate seen (never worse than the
      input) and ``loss_fn`` there.
    """
    is_leaf = program.op == prog.LEAF
    dt = program.weight.dtype

    def f(params):
        # optax's line search may promote to float64 under x64: compute in the data dtype.
        return loss_fn(jax.tree_util.tree_map(lambda t: t.astype(dt), params))

    def project(params):
        w, a = params
        w = optax.projections.projection_box(w, -1.0, 1.0)
        return jnp.where(is_leaf, w, 0).astype(dt), a.astype(dt)

    opt = optax.lbfgs()
    value_and_grad = jax.value_and_grad(f)
    params0 = (program.weight, program.intercept)
    state0 = opt.init(params0)
    best0 = (params0, jnp.asarray(jnp.inf, dt))  # iteration 0 evaluates params0
    rtol = lbfgs_rtol(dt)

    def body(carry):
        # Iteration i evaluates the point that iteration i-1 produced, then steps on.
        i, params, state, best, at_best, fresh, _, fails = carry
        prev = best[1]
        # The line search stored the value and gradient at its (unprojected) new point;
        # reuse them unless the projection moved the point or the value is not finite
        # (optax.value_and_grad_from_state's rule), then evaluate afresh. One cond, so that
        # the loss and its gradient are traced (and compiled) once here.
        stored_value = optax.tree.get(state, "value")
        stored = fresh & jnp.isfinite(stored_value)
        value, grad = jax.lax.cond(stored,
                                   lambda: (stored_value, optax.tree.get(state, "grad")),
                                   lambda: value_and_grad(params))
        better = value < best[1]
        best = prog.where_tree(better, (params, value), best)
        # The value and gradient at best[0] as evaluated there (iteration 0's even if it was
        # not finite: best[0] is then still params0), for a restart without evaluating again.
        at_best = prog.where_tree(better | (i == 0), (value, grad), at_best)
        improved = (i == 0) | (prev - best[1] > rtol * jnp.abs(prev))
        # A step that did not improve (typically one the projection clipped) restarts from
        # the best point with a fresh L-BFGS memory; MAX_FAILS of them in a row stop.
        fails = jnp.where(improved, 0, fails + 1)
        go = (fails < MAX_FAILS) & (i < steps)
        restart = fails > 0
        params = prog.where_tree(restart, best[0], params)
        state = prog.where_tree(restart, state0, state)
        value, grad = prog.where_tree(restart, at_best, (value, grad))

        def update(_):
            # Active set: a weight on its bound whose gradient pushes it outward is held
            # there (its gradient masked), so L-BFGS models only the free weights instead of
            # proposing steps the projection would cut.
            w, gw = params[0], grad[0]
            held = is_leaf & (jnp.abs(w) >= 1) & (jnp.sign(w) * gw < 0)
            g = (jnp.where(held, 0, gw).astype(gw.dtype), grad[1])
            updates, st = opt.update(g, state, params, value=value, grad=g, value_fn=f)
            stepped = optax.apply_updates(params, updates)
            new = project(stepped)
            return new, st, jnp.all(new[0] == stepped[0])

        params, state, fresh = jax.lax.cond(go, update, lambda _: (params, state, fresh), None)
        return i + 1, params, state, best, at_best, fresh, go, fails

    at_best0 = (best0[1], jax.tree_util.tree_map(jnp.zeros_like, params0))
    carry = (jnp.asarray(0), params0, state0, best0, at_best0, jnp.asarray(False),
             jnp.asarray(True), jnp.asarray(0))
    _, _, _, (bp, bv), _, _, _, _ = jax.lax.while_loop(lambda c: c[-2], body, carry)
    return program._replace(weight=bp[0], intercept=bp[1]), bv
