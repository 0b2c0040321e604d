"""Warm default fits of bench_cost cases in this checkout: python warm.py ROOT CASES REPEATS"""
import sys, time, warnings, pathlib, statistics, json
ROOT = pathlib.Path(sys.argv[1])
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
warnings.simplefilter("ignore")
import numpy as np
import bench_cost as bc, bench_accuracy as acc
import jaxtree; assert str(pathlib.Path(jaxtree.__file__).resolve()).startswith(str(ROOT.resolve())), jaxtree.__file__
out = {}
for case in sys.argv[2].split(","):
    task, Xtr, ytr, Xte, yte = bc.split(case)
    est = acc.jaxtree_model(task).fit(Xtr, ytr); acc.jaxtree_model(task).fit(Xtr, ytr)
    ts = []
    for _ in range(int(sys.argv[3])):
        t = time.perf_counter(); est = acc.jaxtree_model(task).fit(Xtr, ytr); ts.append(time.perf_counter() - t)
    sc = acc.score(task, est, Xte, yte)
    out[case] = {"median": statistics.median(ts), "min": min(ts), "score": sc}
    print(f"{ROOT.name} {case:20s} median {statistics.median(ts):.3f} min {min(ts):.3f} score {sc:.6g}", flush=True)
