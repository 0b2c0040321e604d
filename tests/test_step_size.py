"""The size of the compiled search step: the refinement is traced once.

XLA inlines every call, so each traced copy of the refinement (L-BFGS with its line search:
more than half of the default step) is one more copy in the compiled executable. The step
refines the inserted tree and every replacement candidate in one loop
(``search.refine_and_replace``), and :func:`jaxtree.refine.lbfgs_box` evaluates the loss
at one place of its own (the line search's evaluations are optax's).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.extend import core as jcore

from jaxtree import basis as B
from jaxtree import moves
from jaxtree import program as prog
from jaxtree import refine as refine_
from jaxtree import scoring, search

SMALL = B.make_basis(hats=3, sines=2, cosines=2, powers=2)
MAX_K = 3


def _data(seed=1, n=64, p=2, chunk_size=32):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, p))
    y = (0.5 * np.sin(3 * np.pi * x[:, 0]) * np.cos(2 * np.pi * x[:, 1]) + 0.3 * x[:, 1] ** 2
         + 0.2 * x[:, 0] + 0.02 * rng.standard_normal(n))
    return scoring.chunk(jnp.asarray(x), jnp.asarray(y), jnp.ones(n), chunk_size=chunk_size)


def _config(**kw):
    return search.search_config("backfit", MAX_K)._replace(**kw)


def _count(jaxpr, name):
    """Occurrences of primitive ``name`` in ``jaxpr`` and all its sub-jaxprs, except inside
    the tree's slot loops over its used slots (``jaxtree.program._unless_batched``, a
    ``custom_vmap_call``: a loop of ``n_slots`` steps is a while loop, not a copy of the
    refinement)."""
    n = 0
    for eqn in jaxpr.eqns:
        n += eqn.primitive.name == name
        if eqn.primitive.name == "custom_vmap_call":
            continue
        for v in eqn.params.values():
            for sub in v if isinstance(v, (list, tuple)) else (v,):
                if isinstance(sub, jcore.ClosedJaxpr):
                    n += _count(sub.jaxpr, name)
                elif isinstance(sub, jcore.Jaxpr):
                    n += _count(sub, name)
    return n


def _whiles(config, program):
    """The step's while loops on one chunk of rows (its passes are then scans; over several
    chunks each pass is a while loop of its own, :func:`jaxtree.scoring.scan_live`)."""
    jaxpr = jax.make_jaxpr(lambda p, d: search.step(p, d, SMALL, config))(
        program, _data(chunk_size=64))
    return _count(jaxpr.jaxpr, "while")


def test_refinement_traced_once():
    program = prog.empty_program(MAX_K, jnp.float64)
    # L-BFGS with its line search is one while loop (refine.lbfgs_box): one copy, whether or
    # not replacement moves follow the insertion.
    assert _config().replace_moves > 0
    assert _whiles(_config(), program) == 1
    assert _whiles(_config(replace_moves=0), program) == 1
    assert _whiles(_config(refine=None), program) == 0


def test_lbfgs_evaluates_loss_once_per_iteration_site():
    program = prog.empty_program(MAX_K, jnp.float64)
    calls = []

    def loss_fn(params):
        calls.append(1)
        return jnp.sum((params[0] - 0.5) ** 2) + (params[1] - 0.1) ** 2

    jax.make_jaxpr(lambda p: refine_.lbfgs_box(p, loss_fn, steps=5))(program)
    # One site: the loop's body evaluates the iterate or a line-search trial (a restart
    # reuses the best point's value). optax's L-BFGS traced it three times (the iteration's
    # own evaluation and its zoom line search's two branches), each copy compiled into
    # every search step.
    assert len(calls) == 1


def _explicit(config):
    """The backfit step composed by hand: the insertion step without replacements, then the
    replacement moves one by one on the host, each refined and kept only if it lowers the
    loss, stopping at the first one not kept. Returns ``(program, data) -> (p, loss, kept)``."""
    first = jax.jit(lambda p, d: search.step(p, d, SMALL, config._replace(replace_moves=0)))

    @jax.jit
    def move(p, d):
        rc = moves.select_replace(moves.score_replace(p, d, SMALL, max_leaves=MAX_K + 1,
                                                      precision=config.precision), SMALL.q)
        return search._adjust(d, SMALL, config)(moves.apply_replace(p, rc))

    def run(program, data):
        new, info = first(program, data)
        loss, kept = info.loss, 0
        if int(info.status) == search.STATUS_OK and int(new.n_slots) > 1:
            for _ in range(config.replace_moves):
                cand, cand_loss = move(new, data)
                if not bool(search.replacement_kept(cand_loss, loss, cand_loss.dtype)):
                    break
                new, loss, kept = cand, cand_loss, kept + 1
        return new, loss, kept

    return run


# The loop is the same for every refinement; the coordinate one compiles fastest (the
# default suite's case), the L-BFGS one (the default estimator's) is the slow case.
@pytest.mark.parametrize("refine", ["coordinate", pytest.param("optax", marks=pytest.mark.slow)])
def test_step_equals_insertion_then_replacements(refine):
    data = _data()
    config = _config(refine=refine, coordinate_sweeps=1)
    step = jax.jit(lambda p, d: search.step(p, d, SMALL, config))
    explicit = _explicit(config)
    program = prog.empty_program(MAX_K, jnp.float64)
    total_kept = 0
    for _ in range(MAX_K + 1):
        ref, ref_loss, ref_kept = explicit(program, data)
        program, info = step(program, data)
        if int(info.status) != search.STATUS_OK:
            break
        for field in ("op", "left", "right", "feature", "basis", "n_slots"):
            np.testing.assert_array_equal(getattr(program, field), getattr(ref, field), field)
        np.testing.assert_allclose(program.weight, ref.weight, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(program.intercept, ref.intercept, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(info.loss, ref_loss, rtol=1e-9)
        assert int(info.choice.replaced) == ref_kept
        total_kept += ref_kept
        program = jax.tree_util.tree_map(jnp.asarray, ref)  # the next step from the same tree
    assert total_kept > 0  # the data exercise a kept replacement
