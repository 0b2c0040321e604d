"""Seconds per compiled program of one warm default fit of a bench_cost case (each call blocked
upon, so the total is above a plain warm fit's): python benchmarks/results/screen74/per_program.py CASE"""
import collections, pathlib, sys, time, warnings
ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
warnings.simplefilter("ignore")
import jax
import bench_cost as bc, bench_accuracy as acc
from jaxtree import _executables as ex
case = sys.argv[1]
task, Xtr, ytr, Xte, yte = bc.split(case)
make = lambda: acc.jaxtree_model(task)
make().fit(Xtr, ytr)
tot = collections.Counter(); cnt = collections.Counter()
orig = ex.Executable.__call__ if hasattr(ex, "Executable") else None
cls = [c for c in vars(ex).values() if isinstance(c, type) and "__call__" in vars(c) and hasattr(c, "compiles")][0]
orig = cls.__call__
def timed(self, *a):
    t = time.perf_counter(); out = jax.block_until_ready(orig(self, *a)); dt = time.perf_counter() - t
    name = getattr(self.fn, "__name__", None) or getattr(getattr(self.fn, "__wrapped__", None), "__name__", str(self.fn))
    tot[name] += dt; cnt[name] += 1; return out
cls.__call__ = timed
make().fit(Xtr, ytr)
tot.clear(); cnt.clear()
t = time.perf_counter(); make().fit(Xtr, ytr); T = time.perf_counter() - t
print(f"total {T:.3f}")
for k, v in tot.most_common(): print(f"{v:.3f} {cnt[k]:3d} {k}")
