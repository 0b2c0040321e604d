"""TreeClassifier()'s first fit on scikit-learn's breast cancer table (569 x 30: its shape
pairs are screened) in a fresh process, jaxtree's cache off: wall and CPU seconds.

    python clf_first_fit.py CHECKOUT LABEL"""
import os, sys, time, warnings
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import jaxtree
from sklearn.datasets import load_breast_cancer
warnings.simplefilter("ignore")
X, y = load_breast_cancer(return_X_y=True)
t = time.perf_counter(); c = os.times()
est = jaxtree.TreeClassifier().fit(X, y)
w = time.perf_counter() - t; c2 = os.times()
cpu = (c2.user - c.user) + (c2.system - c.system)
print(sys.argv[2], f"wall {w:.2f} cpu {cpu:.2f} cores {cpu / w:.2f} decision[0:3] {est.decision_function(X[:3]).round(6).tolist()}")
