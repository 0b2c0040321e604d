"""A binary classifier's first fit in a fresh process, compilation cache off: the paper's
function thresholded at its median (1,000 rows, 10 covariates), the default TreeClassifier.
Run with PYTHONPATH at a checkout; prints the fit's seconds and a checksum of its
probabilities."""
import os, time, warnings
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
warnings.simplefilter("ignore")
import numpy as np
import jaxtree
from jaxtree.datasets import paper_synthetic
X, y = paper_synthetic(1333, p=10, seed=0)
X, y = X[:1000], (y[:1000] > np.median(y[:1000])).astype(int)
t0 = time.perf_counter()
est = jaxtree.TreeClassifier().fit(X, y)
t = time.perf_counter() - t0
pr = est.predict_proba(X)[:, 1]
terms = 0 if est.model_.shapes is None else int(est.model_.shapes.n_terms)
print(f"{jaxtree.__file__.split('/jaxtree/')[0]}: first fit {t:.3f} s, shape terms {terms}, "
      f"mean p {pr.mean():.6f}")
