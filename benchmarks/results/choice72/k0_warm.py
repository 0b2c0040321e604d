"""Warm fits of the default regressor on whole small tables (the cross-validated additive
choice past its gate), three fits after a first, and a digest of the predictions, for old
commit against new: PYTHONPATH=CHECKOUT python k0_warm.py TABLE..."""
import sys, time, warnings, hashlib, json; warnings.simplefilter("ignore"); sys.path.insert(0, "benchmarks")
import numpy as np, jaxtree, bench_accuracy as ba
for name in sys.argv[1:]:
    _, X, y, _ = ba.load_table(name, ba.TABLES[name][2]); y = np.asarray(y, float)
    times = []
    for r in range(4):
        t0 = time.perf_counter(); e = jaxtree.TreeRegressor().fit(X, y); times.append(time.perf_counter() - t0)
    p = np.asarray(e.predict(X), np.float64)
    print(json.dumps(dict(table=name, kept=e.shape_order_, first=round(times[0], 2),
                          warm=[round(t, 3) for t in times[1:]],
                          digest=hashlib.sha256(p.tobytes()).hexdigest()[:12])), flush=True)
