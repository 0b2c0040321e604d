import sys, os, time, warnings
sys.path.insert(0, sys.argv[1]); mode = sys.argv[2]
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import numpy as np
warnings.simplefilter("ignore")
import jaxtree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _patch
_patch.apply(mode)
import inspect
print(inspect.signature(jaxtree.datasets.paper_synthetic))
for n in (100, 150, 250, 1000):
    rmses = []
    for seed in range(5):
        X, y = jaxtree.datasets.paper_synthetic(n=n, seed=seed)
        Xt, _ = jaxtree.datasets.paper_synthetic(n=2000, seed=100 + seed); yt = jaxtree.datasets.paper_function(Xt)
        t = time.perf_counter()
        est = jaxtree.TreeRegressor().fit(X, y)
        rmses.append(float(np.sqrt(np.mean((np.asarray(est.predict(Xt)) - yt) ** 2))))
    print(mode, n, "test RMSE median", round(float(np.median(rmses)), 4), [round(r, 3) for r in rmses], flush=True)
