"""The default TreeRegressor on an airline-like table of N rows (8 covariates; above 2**24
values a fit reads the array block by block, the streamed path), a first and a warm fit, and
the test RMSE on 100,000 other rows: python benchmarks/results/screen74/streamed.py N
(run from a checkout: the checkout's jaxtree is imported)."""
import pathlib, sys, time, warnings
ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
warnings.simplefilter("ignore")
import numpy as np
import bench_scale, jaxtree
n = int(sys.argv[1])
X, y = bench_scale.airline_like(n + 100_000, seed=0)
Xt, yt, X, y = X[n:], y[n:], X[:n], y[:n]
out = []
for _ in range(2):
    t = time.perf_counter(); e = jaxtree.TreeRegressor().fit(X, y); out.append(time.perf_counter() - t)
rmse = float(np.sqrt(np.mean((e.predict(Xt) - yt) ** 2)))
print(f"{ROOT.name} n={n} first {out[0]:.1f} s warm {out[1]:.1f} s test RMSE {rmse:.4f} "
      f"screen_rows {e.get_params().get('screen_rows')} k_ {e.k_}", flush=True)
