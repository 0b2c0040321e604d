"""Per-program wall time inside a warm flights fit (block after each call)."""
import sys, os, time, numpy as np, warnings, collections
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[3])); sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
import jax, jaxtree, bench_accuracy as B
from jaxtree import search
from sklearn.model_selection import KFold, StratifiedKFold
warnings.simplefilter("ignore")
name = sys.argv[1]
task, X, y, desc = B.load_table(name, B.TABLES[name][2])
yv = y.to_numpy()
cv = (StratifiedKFold if task == "classification" else KFold)(5, shuffle=True, random_state=B.SEED)
tr, te = next(cv.split(X, yv)); Xtr = X.iloc[tr].reset_index(drop=True)
E = jaxtree.TreeClassifier if task == "classification" else jaxtree.TreeRegressor
E().fit(Xtr, yv[tr])
T = collections.defaultdict(list)
def wrap(name, f):
    def g(*a, **k):
        t = time.perf_counter(); out = f(*a, **k); jax.block_until_ready(out); T[name].append(time.perf_counter() - t); return out
    for attr in ("ahead",):
        if hasattr(f, attr): setattr(g, attr, getattr(f, attr))
    return g
import jaxtree._fit.select as S
search.insert_cached = wrap("insert", search.insert_cached)
search.finish_backfit_cached = wrap("finish_backfit", search.finish_backfit_cached)
search.finish_cached = wrap("finish", search.finish_cached)
search.step_cached = wrap("step", search.step_cached)
t = time.perf_counter(); m = E().fit(Xtr, yv[tr]); tot = time.perf_counter() - t
print("total", round(tot, 3), "refine_steps", getattr(m, "refine_steps_", None))
for k, v in T.items(): print(k, len(v), "sum", round(sum(v), 3), "each", [round(x*1000, 1) for x in v])
