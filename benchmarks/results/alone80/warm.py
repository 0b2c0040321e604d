import os, sys, time, numpy as np, warnings
root = os.environ["ROOT"]; sys.path.insert(0, root); sys.path.insert(0, os.path.join(root, "benchmarks"))
import jaxtree
import bench_accuracy as B
from sklearn.model_selection import StratifiedKFold
from sklearn.metrics import roc_auc_score
warnings.simplefilter("ignore")
for name in sys.argv[1:]:
    task, X, y, desc = B.load_table(name, None)
    yv = y.to_numpy()
    tr, te = next(StratifiedKFold(5, shuffle=True, random_state=B.SEED).split(X, yv))
    Xtr = X.iloc[tr].reset_index(drop=True)
    t = time.perf_counter(); c = jaxtree.TreeClassifier().fit(Xtr, yv[tr]); first = time.perf_counter() - t
    ts = []
    for _ in range(int(os.environ.get("REP", 3))):
        t = time.perf_counter(); c = jaxtree.TreeClassifier().fit(Xtr, yv[tr]); ts.append(time.perf_counter() - t)
    print(root.split("/")[-1], name, "first", round(first, 2), "warm", [round(v, 2) for v in ts], "median", round(float(np.median(ts)), 2),
          "auc", round(roc_auc_score(yv[te], c.predict_proba(X.iloc[te].reset_index(drop=True))[:, 1]), 5), c.shape_order_, flush=True)
