"""The warm fit's time with 1 backfitting round of 1 sweep against R rounds of S sweeps, alternating in one process
(the same compiled programs), on bench_accuracy.py's first fold of a table; and the
backfitting's own time. ``python benchmarks/results/rounds50/cost.py weather 5 [R,S]``
(the other setting, default 3,3)."""
import os, sys, time, warnings, pathlib
import numpy as np, jax
HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
os.environ.setdefault("ROUNDS", "1")
import rounds  # noqa: E402  (patches InMemory.backfit, reads rounds.R / rounds.S)
import bench_accuracy as acc  # noqa: E402
from jaxtree._fit import source  # noqa: E402

name, reps = sys.argv[1], int(sys.argv[2])
B = tuple(int(v) for v in (sys.argv[3] if len(sys.argv) > 3 else "3,3").split(","))  # the other setting
task, X, y, _ = acc.load_table(name, None)
tr = np.random.default_rng(0).permutation(len(y))[: int(0.8 * len(y))]
Xtr, ytr = X.iloc[tr].reset_index(drop=True), y.to_numpy()[tr]
patched = source.InMemory.backfit
spent = []
def timed(self, *a, **k):
    t = time.perf_counter(); out = patched(self, *a, **k); jax.block_until_ready(out[1])
    spent.append(time.perf_counter() - t); return out
source.InMemory.backfit = timed
res = {}
for r in range(reps):
    for R, S in ((1, 1), B, (1, 1), B) if r == 0 else ((1, 1), B):
        rounds.R, rounds.S = R, S
        spent.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter(); est = acc.jaxtree_model(task).fit(Xtr, ytr)
            wall = time.perf_counter() - t
        if r > 0:
            res.setdefault((R, S), []).append((wall, sum(spent)))
for (R, S), v in res.items():
    w = np.median([a for a, _ in v]); b = np.median([b for _, b in v])
    print(f"{name} R={R} S={S}: warm fit median {w:.3f} s, backfit {b:.3f} s ({len(v)} fits)")
