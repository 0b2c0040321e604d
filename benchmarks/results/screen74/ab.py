"""One process, screen_rows "auto" against 0 (scoring.screen_for patched), alternating warm fits
on a bench_cost case: python benchmarks/results/screen74/ab.py CASE REPEATS"""
import pathlib, sys, time, warnings, statistics
ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
warnings.simplefilter("ignore")
import numpy as np
import bench_cost as bc, bench_accuracy as acc
from jaxtree import scoring
orig = scoring.screen_for
case = sys.argv[1]; reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
task, Xtr, ytr, Xte, yte = bc.split(case)
modes = {"off": lambda n: 0, "on": orig}
res = {m: [] for m in modes}
for m, f in modes.items():
    scoring.screen_for = f
    e = acc.jaxtree_model(task).fit(Xtr, ytr)
    print(m, "score", acc.score(task, e, Xte, yte), "k", e.k_, flush=True)
for r in range(reps):
    for m, f in modes.items():
        scoring.screen_for = f
        t = time.perf_counter(); acc.jaxtree_model(task).fit(Xtr, ytr); res[m].append(time.perf_counter() - t)
for m, v in res.items(): print(m, [round(x, 3) for x in v], "median", round(statistics.median(v), 3))
