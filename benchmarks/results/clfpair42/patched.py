"""AUC of TreeClassifier() on the small classification tables of bench_accuracy (5 folds),
with the backfit search as is, without its pair lookahead, or greedy. Usage: patched.py CHECKOUT backfit|nopair|greedy TABLES"""
import sys, os, time, json, warnings
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
mode = sys.argv[2]
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import numpy as np
warnings.simplefilter("ignore")
import jaxtree
import bench_accuracy as B
from sklearn.model_selection import StratifiedKFold
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _patch
_patch.apply(mode, classification_only=True)
kw = {"search": "greedy"} if mode == "greedy" else {}
out = {}
for name in sys.argv[3].split(","):
    task, X, y, _ = B.load_table(name, None)
    aucs, times = [], []
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
        est = jaxtree.TreeClassifier(**kw)
        t = time.perf_counter(); est.fit(X.iloc[tr], y.iloc[tr]); times.append(time.perf_counter() - t)
        aucs.append(B.score(task, est, X.iloc[te], y.iloc[te].to_numpy()))
    out[name] = {"auc": float(np.mean(aucs)), "folds": aucs, "times": times, "search": est.search_}
    print(mode, name, round(np.mean(aucs), 4), [round(a, 4) for a in aucs], "times", [round(t, 2) for t in times], est.search_, flush=True)
json.dump(out, open(f"/tmp/clfpair/{mode}.json", "w"), indent=1)
