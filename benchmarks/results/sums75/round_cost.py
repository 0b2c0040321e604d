"""Seconds of the pieces of InMemory.backfit rounds in a warm default fit: python round_cost.py CASE ROUNDS"""
import pathlib, sys, time, warnings, os
ROOT = pathlib.Path(os.environ.get("ROOT", pathlib.Path(__file__).resolve().parents[3]))
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
warnings.simplefilter("ignore")
import jax, numpy as np, collections
import bench_cost as bc, bench_accuracy as acc
from jaxtree._fit import source, select
case, R = sys.argv[1], int(sys.argv[2])
task, Xtr, ytr, Xte, yte = bc.split(case)
if len(sys.argv) > 3: Xtr, ytr = Xtr[:int(sys.argv[3])], ytr[:int(sys.argv[3])]
tot = collections.Counter()
def timed(obj, name):
    f = getattr(obj, name)
    def g(*a, **k):
        t = time.perf_counter(); out = f(*a, **k); jax.block_until_ready(out); tot[name] += time.perf_counter() - t; return out
    setattr(obj, name, g)
realB = source.InMemory.backfit
def many(self, program, terms, sspec, fit=None, grams=None):
    for _ in range(R):
        t = time.perf_counter()
        terms, program, mse = realB(self, program, terms, sspec, fit, grams)
        tot["round"] += time.perf_counter() - t
        print("mse", mse)
    return terms, program, mse
source.InMemory.backfit = many
SW = int(os.environ.get("SW", "1"))
if SW != 1:
    from jaxtree._fit import host_shapes
    from jaxtree import shapes as S
    rh = host_shapes.refit
    host_shapes.refit = lambda shapes, data, spec, sweeps=1: rh(shapes, data, spec, SW if sweeps == 1 else sweeps)
    rd = S.refit
    S.refit = lambda shapes, data, spec, sweeps=3, gr=None: rd(shapes, data, spec, SW if sweeps == 1 else sweeps, gr)
for n in ("_host_backfit", "_refine", "_tree_fit"):
    timed(source.InMemory, n)
timed(select, "host_tree_values")
m = acc.jaxtree_model(task); m.fit(Xtr, ytr)
tot.clear()
t = time.perf_counter(); m = acc.jaxtree_model(task); m.fit(Xtr, ytr); T = time.perf_counter() - t
pred = m.predict(Xte); print(f"fit {T:.3f} test rmse {np.sqrt(np.mean((pred - yte) ** 2)):.4f}")
for k, v in tot.most_common(): print(f"{v:.3f} {k}")
