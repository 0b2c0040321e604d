"""Experiment 1: the paper's demo, baseline vs nice bounds (SLACK 0.01, 0.05)."""
import sys, time, pathlib
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import numpy as np
import nice
import jaxtree
from jaxtree.datasets import paper_synthetic, paper_function

SEEDS = range(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
res = {}
for n in (1000, 200):
    for slack in (None, 0.01, 0.05, "j0.01", "j0.05"):
        nice.install(slack)
        nice.LOG.clear()
        rmses, terms, times = [], [], []
        for s in SEEDS:
            X, y = paper_synthetic(n=n, p=10, seed=s)
            Xt, _ = paper_synthetic(n=2000, p=10, seed=100 + s)
            g = paper_function(Xt)
            est = jaxtree.TreeRegressor(k=10)
            t0 = time.perf_counter()
            est.fit(X, y)
            dt = time.perf_counter() - t0
            r = float(np.sqrt(np.mean((np.asarray(est.predict(Xt), np.float64) - g) ** 2)))
            rmses.append(r); times.append(dt)
            if s == 0 and len(SEEDS) == 5:
                print(f"\n--- n={n} slack={slack} seed 0 formula:\n{est.formula()}", flush=True)
                m = est.model_
                print("x_min", np.round(np.asarray(m.x_min).ravel(), 5),
                      "\nrange", np.round(1 / np.asarray(m.x_scale).ravel(), 5), flush=True)
            print(f"n={n} slack={slack} seed={s} rmse_vs_g={r:.5f} fit={dt:.1f}s", flush=True)
        if slack is not None:
            print("widened per from_extremes call (changed, p, max rel widening):",
                  nice.widened_summary(nice.LOG))
        res[(n, slack)] = rmses
        print(f"== n={n} slack={slack}: mean RMSE vs g {np.mean(rmses):.5f} "
              f"per-seed {np.round(rmses, 5).tolist()}", flush=True)
nice.install(None)
print("\nSUMMARY (mean RMSE vs noiseless g over seeds 0..4)")
for (n, slack), r in res.items():
    b = np.array(res[(n, None)])
    print(f"n={n:5d} slack={str(slack):5s} mean {np.mean(r):.5f}  "
          f"diff vs base {np.mean(np.array(r) - b):+.5f}  wins {int(np.sum(np.array(r) < b))}/{len(b)}")
