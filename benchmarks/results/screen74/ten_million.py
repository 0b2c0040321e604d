"""Issue 27's scale target at the session's code: the default TreeRegressor() against the
paper's search (TreeRegressor.paper(k=10)) on 10^7 airline-like rows x 8 in memory (the array
path above 2**24 values), one fit each (its first: compiling included), peak RSS after each.
python benchmarks/results/screen74/ten_million.py [N]"""
import pathlib, resource, sys, time, warnings
ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
warnings.simplefilter("ignore")
import numpy as np
import bench_scale, jaxtree
n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
X, y = bench_scale.airline_like(n, seed=0)
X = np.ascontiguousarray(X, np.float32); y = np.asarray(y, np.float32)
mib = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"n={n} bytes(X, y) {(X.nbytes + y.nbytes) / 2**20:.0f} MiB, peak so far {mib():.0f} MiB", flush=True)
for name, make in (("default", lambda: jaxtree.TreeRegressor()), ("paper", lambda: jaxtree.TreeRegressor.paper(k=10))):
    t = time.perf_counter(); e = make().fit(X, y); dt = time.perf_counter() - t
    print(f"{name}: {dt:.1f} s, k_ {e.k_}, screen_rows {e.get_params().get('screen_rows')}, peak RSS {mib():.0f} MiB", flush=True)
