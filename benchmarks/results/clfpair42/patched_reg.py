import sys, os, time, warnings
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
mode = sys.argv[2]
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import numpy as np
warnings.simplefilter("ignore")
import jaxtree
from jaxtree import search
import bench_accuracy as B
from sklearn.model_selection import KFold
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _patch
_patch.apply(mode)
for name in sys.argv[3].split(","):
    task, X, y, _ = B.load_table(name, None)
    r, times, pairs = [], [], 0
    for tr, te in KFold(5, shuffle=True, random_state=B.SEED).split(X):
        est = jaxtree.TreeRegressor()
        t = time.perf_counter(); est.fit(X.iloc[tr], y.iloc[tr]); times.append(time.perf_counter() - t)
        r.append(B.score(task, est, X.iloc[te], y.iloc[te].to_numpy()))
        pairs += sum(c.get("move") == search.MOVE_PAIR for c in est.choices_)
    print(mode, name, round(float(np.mean(r)), 4), [round(a, 3) for a in r], "pairs", pairs, "fit s", [round(t, 2) for t in times], est.search_, flush=True)
