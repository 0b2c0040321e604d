import sys, time, statistics, warnings, os
root = sys.argv[1]; sys.path.insert(0, root)
warnings.simplefilter("ignore")
import numpy as np, jaxtree
from jaxtree.datasets import paper_synthetic, paper_function
tag = os.environ.get("TAG", root)
Xte, _ = paper_synthetic(2000, p=10, seed=99)
for name, mk in (("default", lambda: jaxtree.TreeRegressor(k=10)), ("paper", lambda: jaxtree.TreeRegressor.paper())):
    for n, seed in ((1000, 0), (1000, 1), (1000, 2), (5000, 0), (20000, 0)):
        X, y = paper_synthetic(n, p=10, seed=seed)
        e = mk().fit(X, y)
        ts = []
        for _ in range(5 if n == 1000 else 2):
            t = time.perf_counter(); mk().fit(X, y); ts.append(time.perf_counter() - t)
        rmse = np.sqrt(np.mean((e.predict(Xte) - paper_function(Xte)) ** 2))
        print(f"{tag} {name} n={n} seed={seed}: RMSE {rmse:.5f} warm {statistics.median(ts):.3f} s ops {e.k_}", flush=True)
