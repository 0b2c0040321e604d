"""refine_steps 20 vs 10 on bench_cost's cases: alternating warm fits (median of REP), test score.
    python steps_cost.py CASE[,CASE...]"""
import os, sys, statistics, time, warnings
ROOT = os.environ.get("ROOT", "/work/main")
sys.path.insert(0, ROOT); sys.path.insert(0, ROOT + "/benchmarks")
import numpy as np
import bench_cost as C, bench_accuracy as acc
import jaxtree
warnings.simplefilter("ignore")
REP = int(os.environ.get("REP", "3"))
settings = eval(os.environ.get("SETTINGS", "[{}, {'refine_steps': 10}]"))
for case in sys.argv[1].split(","):
    task, Xtr, ytr, Xte, yte = C.split(case)
    E = jaxtree.TreeRegressor if task == "regression" else jaxtree.TreeClassifier
    scores, times = {}, {i: [] for i in range(len(settings))}
    for i, kw in enumerate(settings):
        est = E(**kw).fit(Xtr, ytr)
        scores[i] = acc.score(task, est, Xte, yte)
    for _ in range(REP):
        for i, kw in enumerate(settings):
            t = time.perf_counter(); E(**kw).fit(Xtr, ytr); times[i].append(time.perf_counter() - t)
    for i, kw in enumerate(settings):
        print(case, kw, "score %.5g" % scores[i], "median %.3f" % statistics.median(times[i]),
              [round(t, 3) for t in times[i]], flush=True)
