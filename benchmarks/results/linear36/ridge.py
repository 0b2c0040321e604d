# Thirty-sixth session scratch experiment (issue 29), kept as run: JAXTREE_COMPILATION_CACHE=0 python benchmarks/results/linear36/ridge.py TABLES RIDGE
import sys, warnings, numpy as np
warnings.simplefilter("ignore")
sys.path.insert(0, "/work/main/benchmarks"); sys.path.insert(0, "/work/main")
import bench_accuracy as B
import jaxtree
from jaxtree import shapes
from sklearn.model_selection import KFold
R = float(sys.argv[2])
shapes.RIDGE = R
shapes._block_system.__defaults__ = (None, R)
for name in sys.argv[1].split(","):
    task, X, y, _ = B.load_table(name, None); y = np.asarray(y, float)
    r, t = [], []
    for tr, te in KFold(5, shuffle=True, random_state=0).split(X):
        est = jaxtree.TreeRegressor().fit(X.iloc[tr], y[tr])
        r.append(float(np.sqrt(np.mean((np.asarray(est.predict(X.iloc[te])) - y[te]) ** 2))))
        t.append(B.n_terms(est))
    print(name, "RIDGE", R, "rmse %.4g" % np.mean(r), ["%.3g" % v for v in r], "terms %.1f" % np.mean(t), flush=True)
