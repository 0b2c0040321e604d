"""fit_batch_classifier(X, labels, k=4) on 6 data sets of 400 x 5, three classes then two, in
a new process (jaxtree's cache on): time and compilations of each; run it three times on
one XDG_CACHE_HOME (the first fills the cache).

    XDG_CACHE_HOME=DIR PYTHONPATH=CHECKOUT python batch_clf_second.py
"""
import time

import numpy as np

import jaxtree
from jaxtree.debug import count_compilations

rng = np.random.default_rng(0)
X = rng.uniform(size=(6, 400, 5))
y = np.sin(3 * X[..., 0]) + X[..., 1] * X[..., 2] + 0.3 * rng.normal(size=(6, 400))
out = []
for labels in (np.digitize(y, [-0.2, 0.4]), (y > 0.2).astype(int)):
    t = time.perf_counter()
    with count_compilations() as c:
        jaxtree.fit_batch_classifier(X, labels, k=4)
    out.append(f"{len(np.unique(labels))} classes {time.perf_counter() - t:.2f} s, "
               f"{c.compiles} compilations")
print("; ".join(out), flush=True)
