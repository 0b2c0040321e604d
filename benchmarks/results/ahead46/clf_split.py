"""The binary classifier's one-program search step (breast cancer, TreeClassifier()) compiled
as it is (one) or as two programs, the Newton-data insertion and the rest, the second traced
while the first compiles on a thread and both compiled side by side (two): a fresh process
each, the fit's own arguments and options.

    python clf_split.py one|two"""
import os, sys, time, warnings, threading
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import jax, numpy as np
import jaxtree
from jaxtree import _executables as E, search, losses as losses_, program as prog
from sklearn.datasets import load_breast_cancer
warnings.simplefilter("ignore")
seen = {}
orig = E.cached._get
def _get(self, d, key, args, dynamic, tier):
    seen.setdefault(self.name, (self, args, tier))
    return orig(self, d, key, args, dynamic, tier)
E.cached._get = _get
X, y = load_breast_cancer(return_X_y=True)
jaxtree.TreeClassifier().fit(X, y)
self, args, tier = seen["jaxtree._fit.classify.binary_step"]
opts = {**E._MARK, **E._RETRY, **E._light_options(self.light)}
program, data, basis, config, max_ops = args
def ins(program, data, basis, config, max_ops):
    work = losses_.working_data(program, data, basis, config.loss)
    greedy = config._replace(loss="squared", refine=None, pair_leaves=0, replace_moves=0)
    return search.step(program, work, basis, greedy, max_ops)
def fin(program, new, info, data, basis, config, max_ops):
    adjust = search._adjust(data, basis, config)
    return search._loss_backfit(program, new, info, None, data, basis, config, adjust, max_ops)
mode = sys.argv[1]
t0 = time.perf_counter()
if mode == "one":
    f = jax.jit(lambda *a: search.step(*a), static_argnums=(2, 3))
    f.lower(*args).compile(compiler_options=opts)
else:
    fi = jax.jit(lambda *a: ins(*a), static_argnums=(2, 3))
    ff = jax.jit(lambda *a: fin(*a), static_argnums=(4, 5))
    ti = fi.trace(program, data, basis, config, max_ops); li = ti.lower()
    res = {}
    th = threading.Thread(target=lambda: res.setdefault("i", li.compile(compiler_options=opts))); th.start()
    new, info = ti.out_info
    lf = ff.trace(program, new, info, data, basis, config, max_ops).lower()
    lf.compile(compiler_options=opts); th.join()
print(mode, config.pair_leaves, config.replace_moves, round(time.perf_counter() - t0, 2))
