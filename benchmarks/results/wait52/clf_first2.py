import os, sys, time, tempfile
if sys.argv[3] == "off":
    os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
else:
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp()
sys.path.insert(0, sys.argv[1])
import numpy as np, jaxtree, warnings
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
n = int(sys.argv[2])
Xb = rng.uniform(size=(n, 8)); yb = (np.sin(4 * Xb[:, 0]) + Xb[:, 1] * Xb[:, 2] + 0.3 * rng.normal(size=n) > 0.6).astype(int)
t = time.perf_counter(); est = jaxtree.TreeClassifier().fit(Xb, yb); t1 = time.perf_counter() - t
print(f"clf n={n} cache={sys.argv[3]} first fit {t1:.2f} s shapes={est.model_.shapes is not None}")
