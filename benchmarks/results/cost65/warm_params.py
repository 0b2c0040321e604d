"""Warm fits of a bench_cost case under several values of one estimator parameter
(sixty-fifth session), alternating, with each value's test score. From the repository root::

    python benchmarks/results/cost65/warm_params.py chunk_size diamonds_1e4 1024,auto,4096 3
    python benchmarks/results/cost65/warm_params.py cache_basis airline_1e5 auto,T 3

Values: integers, ``auto``, ``T`` / ``F`` (True / False)."""
import statistics
import sys
import time
import warnings

sys.path.insert(0, "benchmarks")
sys.path.insert(0, ".")
warnings.simplefilter("ignore")
import numpy as np  # noqa: E402

import bench_cost  # noqa: E402
import jaxtree  # noqa: E402

param, case = sys.argv[1], sys.argv[2]
named = {"auto": "auto", "T": True, "F": False}
values = [named[v] if v in named else int(v) for v in sys.argv[3].split(",")]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
task, Xtr, ytr, Xte, yte = bench_cost.split(case)
Est = jaxtree.TreeRegressor if task == "regression" else jaxtree.TreeClassifier
for v in values:  # first fits: compile
    Est(**{param: v}).fit(Xtr, ytr)
times = {v: [] for v in values}
for _ in range(rounds):
    for v in values:
        t = time.perf_counter()
        Est(**{param: v}).fit(Xtr, ytr)
        times[v].append(time.perf_counter() - t)
for v in values:
    e = Est(**{param: v}).fit(Xtr, ytr)
    if task == "regression":
        score = float(np.sqrt(np.mean((e.predict(Xte) - yte) ** 2)))
    else:
        from sklearn.metrics import roc_auc_score
        score = roc_auc_score(yte, e.predict_proba(Xte)[:, 1])
    print(case, v, f"median {statistics.median(times[v]):.3f} s",
          [f"{t:.3f}" for t in times[v]], f"score {score:.5f}", flush=True)
