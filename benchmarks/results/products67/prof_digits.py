"""cProfile of TreeClassifier() on scikit-learn's digits (first, warm, then a profiled fit).

    python benchmarks/results/products67/prof_digits.py
"""
import cProfile, pstats, time, warnings, sys
warnings.simplefilter("ignore")
import numpy as np, jaxtree
from sklearn.datasets import load_digits
X, y = load_digits(return_X_y=True)
kw = eval(sys.argv[1]) if len(sys.argv) > 1 else {}
t = time.perf_counter(); jaxtree.TreeClassifier(**kw).fit(X, y); print("first", time.perf_counter() - t)
t = time.perf_counter(); e = jaxtree.TreeClassifier(**kw).fit(X, y); print("warm", time.perf_counter() - t)
pr = cProfile.Profile(); pr.enable(); jaxtree.TreeClassifier(**kw).fit(X, y); pr.disable()
st = pstats.Stats(pr); st.sort_stats("cumulative").print_stats(50)
