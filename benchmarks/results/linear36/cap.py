# Thirty-sixth session scratch experiment (issue 29), kept as run: python benchmarks/results/linear36/cap.py TABLES DIV (0: no cap)
import sys, warnings, numpy as np
warnings.simplefilter("ignore")
sys.path.insert(0, "/work/main/benchmarks"); sys.path.insert(0, "/work/main")
import bench_accuracy as B
import jaxtree
from jaxtree._fit import stages
from sklearn.model_selection import KFold
orig = stages.choose_shapes
DIV = int(sys.argv[2])
def capped(split, spec, rep, scale, max_terms, states=False, n_iter=None, p=None, kernels=stages.OneFit):
    n_train = int(np.sum(np.asarray(split[0].w) > 0))
    n_iter = max_terms if n_iter is None else n_iter
    if DIV > 0:
        n_iter = max(1, min(n_iter, n_train // DIV))
    return orig(split, spec, rep, scale, max_terms, states=states, n_iter=n_iter, p=p, kernels=kernels)
stages.choose_shapes = capped
for name in sys.argv[1].split(","):
    task, X, y, _ = B.load_table(name, None); y = np.asarray(y, float)
    r, t = [], []
    for tr, te in KFold(5, shuffle=True, random_state=0).split(X):
        est = jaxtree.TreeRegressor().fit(X.iloc[tr], y[tr])
        r.append(float(np.sqrt(np.mean((np.asarray(est.predict(X.iloc[te])) - y[te]) ** 2))))
        t.append(B.n_terms(est))
    print(name, "DIV", DIV, "rmse %.4g" % np.mean(r), ["%.3g" % v for v in r], "terms %.1f" % np.mean(t), flush=True)
