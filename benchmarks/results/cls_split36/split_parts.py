"""What a split of the classifier's backfit step into two programs would compile (thirty-sixth
session, issue 27; measured only, nothing in jaxtree uses it): ``A`` = the Newton working data,
the greedy insertion scored on them and the pair lookahead (no L-BFGS), ``B`` = the moves
loop of ``search._loss_backfit`` (the refinements and the replacements) and the reported
loss. Each lowered from the demo's first iteration (1,000 rows, labels ``y > median``) and
compiled under XLA's defaults, ``LIGHT`` and ``LIGHT_LLVM1``; the one-program step beside
them. From the repository root::

    python benchmarks/results/cls_split36/split_parts.py [--rounds 2]
"""
import argparse
import functools
import os
import sys
import time

os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, ".")
sys.path.insert(0, "benchmarks")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from bench_step_parts import demo  # noqa: E402
from jaxtree import _executables as E  # noqa: E402
from jaxtree import losses as losses_  # noqa: E402
from jaxtree import moves  # noqa: E402
from jaxtree import program as prog  # noqa: E402
from jaxtree import refine as refine_  # noqa: E402
from jaxtree import search  # noqa: E402
from jaxtree.search import STATUS_OK, Choice  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--rounds", type=int, default=2)
args = ap.parse_args()

data, basis = demo("logistic")
data = data._replace(y=2 * data.y - 1)
config = search.search_config("backfit", 10, 10 * basis.q, loss="logistic")
program = prog.empty_program(config.max_k, np.float32)
max_ops = np.int32(10)


def part_a(program, data, basis, config, max_ops):
    dt = data.x.dtype
    work = losses_.working_data(program, data, basis, config.loss)
    greedy = config._replace(loss="squared", refine=None, pair_leaves=0, replace_moves=0)
    new, info = search.step(program, work, basis, greedy, max_ops)
    ok = info.status == STATUS_OK
    n_work = jnp.sum(work.w)
    rss = (refine_.mse(program, work, basis) * n_work).astype(dt)
    max_slots = program.capacity if max_ops is None else 2 * max_ops + 1
    pair, pair_sse, pc, has_pair = search.pair_lookahead(program, work, basis, config, rss, rss,
                                                         n_work, max_slots)
    has_pair = has_pair & ok
    before = jax.lax.cond(has_pair,
                          lambda: losses_.mean_loss(program, data, basis, config.loss).astype(dt),
                          lambda: jnp.asarray(jnp.inf, dt))
    return new, info, pair, pair_sse, pc, has_pair, before


def part_b(program, inserted, info, pair, pair_sse, pc, has_pair, before, data, basis, config):
    dt = data.x.dtype
    inf = jnp.asarray(jnp.inf, dt)
    refine = search._adjust(data, basis, config)
    ok = info.status == STATUS_OK
    record = Choice(*info.choice)

    def replace(q):
        w = losses_.working_data(q, data, basis, config.loss)
        rs = moves.score_replace(q, w, basis, max_leaves=config.max_k + 1,
                                 precision=config.precision)
        return moves.apply_replace(q, moves.select_replace(rs, basis.q))

    def candidate(i, q):
        return jax.lax.switch(jnp.minimum(i, 2), [lambda _: inserted, lambda _: pair, replace], q)

    def move(i, carry):
        p, cur, ins_loss, kept, go, took_pair = carry
        cand, cand_loss = refine(candidate(i, p))
        cand_loss = cand_loss.astype(dt)
        first = i == 0
        is_pair = i == 1
        is_replace = i >= 2
        take = (first | (is_pair & search.loss_pair_kept(before, ins_loss, cand_loss))
                | (is_replace & search.replacement_kept(cand_loss, cur, dt)))
        p = prog.where_tree(take, cand, p)
        return (p, jnp.where(take, cand_loss, cur), jnp.where(first, cand_loss, ins_loss),
                kept + (is_replace & take).astype(jnp.int32),
                jnp.where(is_replace, take, go), took_pair | (is_pair & take))

    def body(i, carry):
        active = jnp.where(i == 1, has_pair, carry[4])
        return jax.lax.cond(active, functools.partial(move, i), lambda c: c, carry)

    init = (inserted, inf, inf, jnp.zeros((), jnp.int32), ok, jnp.asarray(False))
    new, _, _, kept, _, took_pair = jax.lax.fori_loop(0, 2 + config.replace_moves, body, init)
    record = search._with_pair_record(took_pair, pc, pair, program, pair_sse, record)
    record = record._replace(replaced=kept)
    loss = losses_.mean_loss(new, data, basis, config.loss, report=True)
    return new, info._replace(loss=loss.astype(dt), choice=record)


ja = jax.jit(part_a, static_argnames=("basis", "config"))
jb = jax.jit(part_b, static_argnames=("basis", "config"))
js = jax.jit(search.step, static_argnames=("basis", "config"))
outs = ja(program, data, basis, config, max_ops)
# the split's answer is the one-program step's
one = js(program, data, basis, config, max_ops)
two = jb(program, *outs, data, basis, config)
print("split = one program:", all(bool(jnp.allclose(a, b, rtol=1e-5, atol=1e-6))
                                  for a, b in zip(jax.tree_util.tree_leaves(one),
                                                  jax.tree_util.tree_leaves(two))), flush=True)
lowered = {"one program": js.lower(program, data, basis, config, max_ops),
           "A": ja.lower(program, data, basis, config, max_ops),
           "B": jb.lower(program, *outs, data, basis, config)}
sets = {"default": {}, "light": E.LIGHT, "light_o1": E.LIGHT_LLVM1}
for r in range(args.rounds):
    for name, low in lowered.items():
        row = []
        for s, opts in sets.items():
            t = time.perf_counter()
            low.compile(compiler_options=dict(opts, xla_dump_max_hlo_modules=-1 - r))
            row.append(f"{s} {time.perf_counter() - t:.2f} s")
        print(f"round {r} {name:12s} " + ", ".join(row), flush=True)
