"""Which bench_accuracy regression tables reach the pair pre-screen (p*q > 2048)?"""
import sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, "/work/main/benchmarks")
import numpy as np
import bench_accuracy as ba
import jaxtree
from jaxtree import search
seen = []
plain = search.search_config
class Stop(Exception): pass
def spy(s, k, n_candidates=0, **kw):
    seen.append((s, n_candidates)); raise Stop
search.search_config = spy
for name in ba.TABLES:
    task, X, y, _ = ba.load_table(name, None)
    seen.clear()
    est = jaxtree.TreeRegressor() if task == "regression" else jaxtree.TreeClassifier()
    try:
        est.fit(X, y)
    except Stop:
        pass
    print(name, task, X.shape, seen, "blocks" if seen and seen[0][1] > 2048 else "", flush=True)
