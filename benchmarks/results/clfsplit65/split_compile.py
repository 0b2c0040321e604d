"""The small binary classifier's step as one program and as its two parts
(search.loss_insert_step, loss_finish_step), each lowered once from the demo's first iteration
(1,000 rows, labels y > median, the default backfit search without pairs) and compiled at
LIGHT_LLVM1: the one program, each part alone, and the two side by side on two threads
(sixty-fifth session). From the repository root:
python benchmarks/results/clfsplit65/split_compile.py"""
import os, sys, time
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
import jax, jax.numpy as jnp, numpy as np
import concurrent.futures as cf
from bench_step_parts import demo
from jaxtree import _executables as E, program as prog, search
data, basis = demo("logistic")
data = data._replace(y=2 * data.y - 1)
config = search.search_config("backfit", 10, 10 * basis.q, loss="logistic")._replace(pair_leaves=0, max_k=12)
program = prog.empty_program(config.max_k, np.float32)
max_ops = np.int32(10)

ja = jax.jit(search.loss_insert_step, static_argnames=("basis", "config"))
jb = jax.jit(search.loss_finish_step, static_argnames=("basis", "config"))
js = jax.jit(search.step, static_argnames=("basis", "config"))
new, info, pair = ja(program, data, basis, config, max_ops)
one = js(program, data, basis, config, max_ops)
two = jb(program, new, info, pair, data, basis, config, max_ops)
print("split = one:", all(bool(jnp.allclose(a, b, rtol=1e-5, atol=1e-6)) for a, b in zip(jax.tree_util.tree_leaves(one), jax.tree_util.tree_leaves(two))))
L = {"one": js.lower(program, data, basis, config, max_ops), "A": ja.lower(program, data, basis, config, max_ops),
     "B": jb.lower(program, new, info, pair, data, basis, config, max_ops)}
pool = cf.ThreadPoolExecutor(2)
for r in range(3):
    o = lambda k: dict(E.LIGHT_LLVM1, xla_dump_max_hlo_modules=-1 - r - 10 * k)
    t = time.perf_counter(); L["one"].compile(compiler_options=o(0)); t1 = time.perf_counter() - t
    t = time.perf_counter(); L["A"].compile(compiler_options=o(1)); ta = time.perf_counter() - t
    t = time.perf_counter(); L["B"].compile(compiler_options=o(2)); tb = time.perf_counter() - t
    t = time.perf_counter()
    fa = pool.submit(L["A"].compile, compiler_options=o(3)); fb = pool.submit(L["B"].compile, compiler_options=o(4))
    fa.result(); fb.result()
    print(f"round {r}: one {t1:.2f} s; A {ta:.2f} s, B {tb:.2f} s alone; side by side {time.perf_counter() - t:.2f} s", flush=True)
