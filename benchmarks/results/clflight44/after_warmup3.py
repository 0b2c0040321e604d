"""Three classes: the default TreeClassifier()'s first fit of a 900 x 9 table (the 1,000 x 10
bucket) in a new process, after ``jaxtree warmup --classifier --classes 3 --sizes 1000x10``
into XDG_CACHE_HOME, or with an empty cache.

    XDG_CACHE_HOME=DIR python after_warmup3.py LABEL"""
import sys
import time
import warnings

import numpy as np

import jaxtree
from jaxtree.debug import count_compilations

warnings.simplefilter("ignore")
rng = np.random.default_rng(5)
X = rng.uniform(size=(900, 9))
y = np.cos(4 * X[:, 1]) + X[:, 0] * X[:, 2] + 0.2 * rng.normal(size=900)
labels = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
t = time.perf_counter()
with count_compilations() as c:
    jaxtree.TreeClassifier().fit(X, labels)
print(sys.argv[1], "900x9, 3 classes: first fit", round(time.perf_counter() - t, 2),
      "s, compilations", c.compiles, flush=True)
