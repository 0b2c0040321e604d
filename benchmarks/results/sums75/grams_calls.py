"""Seconds per compiled program of one warm default fit, one line per call (each call
blocked upon): python benchmarks/results/sums75/grams_calls.py CASE"""
import pathlib, sys, time, warnings, os
ROOT = pathlib.Path(os.environ.get("ROOT", pathlib.Path(__file__).resolve().parents[3]))
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
warnings.simplefilter("ignore")
import jax, numpy as np
import bench_cost as bc, bench_accuracy as acc
from jaxtree import shapes as S, _executables as ex
case = sys.argv[1] if len(sys.argv) > 1 else "flights_1e5"
task, Xtr, ytr, Xte, yte = bc.split(case)
make = lambda: acc.jaxtree_model(task)
make().fit(Xtr, ytr)
cls = [c for c in vars(ex).values() if isinstance(c, type) and "__call__" in vars(c) and hasattr(c, "compiles")][0]
orig = cls.__call__
log = []
def timed(self, *a):
    t = time.perf_counter(); out = jax.block_until_ready(orig(self, *a)); dt = time.perf_counter() - t
    name = getattr(self.fn, "__name__", None) or getattr(getattr(self.fn, "__wrapped__", None), "__name__", str(self.fn))
    shp = [getattr(x, "shape", None) for x in jax.tree_util.tree_leaves(a[:1])][:1]
    log.append((name, dt, shp, type(a[1]).__name__ if len(a) > 1 else ""))
    return out
cls.__call__ = timed
make().fit(Xtr, ytr); log.clear()
make().fit(Xtr, ytr)
for name, dt, shp, s in log:
    print(f"{dt*1e3:7.1f} ms {name} {shp} {s}")
