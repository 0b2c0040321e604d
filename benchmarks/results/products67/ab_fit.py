"""A first fit (fresh process, jaxtree's executable cache off) and warm fits of the default
estimator on one table, in the checkout ``argv[1]`` (a ``git worktree`` of the old commit, or
this one), with its test score on a fixed split.

    python benchmarks/results/products67/ab_fit.py CHECKOUT digits|demo|wine|bc ROUNDS

Cases: scikit-learn's digits (1,797 x 64, ten classes), wine (178 x 13, three classes),
breast cancer (569 x 30), each split 80/20 stratified (seed 0) for `TreeClassifier()`; the
demo (`paper_synthetic`, 1,000 training rows x 10, `TreeRegressor(k=10)`). The label says
"old" where the checkout's path holds "old67"."""
import os, sys, time, warnings, statistics
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
root = sys.argv[1]; sys.path.insert(0, root)
warnings.simplefilter("ignore")
import numpy as np, jaxtree
assert jaxtree.__file__.startswith(root)
case = sys.argv[2]
if case == "digits":
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    X, y = load_digits(return_X_y=True)
    X, Xt, y, yt = train_test_split(X, y, test_size=0.2, random_state=0, stratify=y)
    Est = jaxtree.TreeClassifier
elif case == "demo":
    from jaxtree.datasets import paper_synthetic
    X, y = paper_synthetic(1333, p=10, seed=0); Xt, yt = X[1000:], y[1000:]; X, y = X[:1000], y[:1000]
    Est = lambda: jaxtree.TreeRegressor(k=10)
elif case == "wine":
    from sklearn.datasets import load_wine
    from sklearn.model_selection import train_test_split
    X, y = load_wine(return_X_y=True)
    X, Xt, y, yt = train_test_split(X, y, test_size=0.2, random_state=0, stratify=y)
    Est = jaxtree.TreeClassifier
elif case == "bc":
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    X, y = load_breast_cancer(return_X_y=True)
    X, Xt, y, yt = train_test_split(X, y, test_size=0.2, random_state=0, stratify=y)
    Est = jaxtree.TreeClassifier
t = time.perf_counter(); e = Est().fit(X, y); first = time.perf_counter() - t
ws = []
for _ in range(int(sys.argv[3])):
    t = time.perf_counter(); e = Est().fit(X, y); ws.append(time.perf_counter() - t)
if hasattr(e, "predict_proba"):
    pr = e.predict_proba(Xt); score = f"acc {np.mean(e.predict(Xt) == yt):.4f} logloss {-np.mean(np.log(np.clip(pr[np.arange(len(yt)), np.searchsorted(e.classes_, yt)], 1e-15, 1))):.5f}"
else:
    pred = e.predict(Xt); score = f"rmse {np.sqrt(np.mean((pred - yt) ** 2)):.7f} pred[:3] {pred[:3]}"
print(f"{'old' if 'old67' in root else 'new'} {case}: first {first:.2f} s, warm {statistics.median(ws):.3f} s (min {min(ws):.3f}), {score}", flush=True)
