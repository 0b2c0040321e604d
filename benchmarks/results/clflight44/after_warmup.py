"""The default TreeClassifier()'s first fit in a new process, of tables in the buckets of
``jaxtree warmup --classifier``'s default sizes: run once with XDG_CACHE_HOME at a cache the
warm-up filled, once at an empty one.

    XDG_CACHE_HOME=DIR python after_warmup.py LABEL

Tables (uniform covariates, labels: the target above its median plus noise): 700 x 5
(the 1,000 x 6 bucket), 900 x 9 (1,000 x 10), 4,500 x 7 (5,000 x 8); each a tree-form target
and then one of bends in every covariate (which takes shape terms)."""
import sys
import time
import warnings

import numpy as np

import jaxtree
from jaxtree.debug import count_compilations

warnings.simplefilter("ignore")
rng = np.random.default_rng(5)
for n, p in ((700, 5), (900, 9), (4500, 7)):
    X = rng.uniform(size=(n, p))
    for name, y in (("tree", np.cos(4 * X[:, 1]) + X[:, 0] * X[:, 2]),
                    ("bends", np.abs(X - 0.4) @ np.linspace(1, 2, p))):
        labels = (y + 0.2 * rng.normal(size=n) > np.median(y)).astype(int)
        t = time.perf_counter()
        with count_compilations() as c:
            est = jaxtree.TreeClassifier().fit(X, labels)
        print(sys.argv[1], f"{n}x{p}", name, "first fit", round(time.perf_counter() - t, 2),
              "s, compilations", c.compiles, "shape terms", est.model_.shapes is not None,
              flush=True)
