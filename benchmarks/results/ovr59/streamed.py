"""Shape terms of a streamed classifier (fifty-ninth session): a memmap of n rows, the
default TreeClassifier with its shape terms and with shapes=0 (the streamed trees alone, as
before), beside the same fit in memory; test AUC on 100,000 fresh rows and the fit's time
(first fit of each setting in this process: it includes compiling).

    python benchmarks/results/ovr59/streamed.py [n] > benchmarks/results/ovr59/streamed.log
"""
import json, os, sys, tempfile, time

import numpy as np
from sklearn.metrics import roc_auc_score

import jaxtree

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
p = 8


def data(m, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(m, p)).astype(np.float32)
    logit = (5 * np.exp(-((X[:, 0] - 0.5) / 0.1) ** 2) - 2
             + 3 * np.sign((X[:, 1] - 0.5) * (X[:, 2] - 0.5)) + np.sin(6 * X[:, 3]))
    return X, rng.uniform(size=m) < 1 / (1 + np.exp(-logit))


X, y = data(n, 0)
Xt, yt = data(100_000, 1)
path = os.path.join(tempfile.mkdtemp(), "x.dat")
mm = np.memmap(path, dtype=np.float32, mode="w+", shape=X.shape)
mm[:] = X
mm.flush()
mm = np.memmap(path, dtype=np.float32, mode="r", shape=X.shape)
out = {}
for name, rows, kw in (("streamed, shapes", mm, {}), ("streamed, trees alone", mm, dict(shapes=0)),
                       ("in memory, shapes", X, {})):
    t = time.perf_counter()
    est = jaxtree.TreeClassifier(k=10, **kw).fit(rows, y)
    dt = time.perf_counter() - t
    auc = roc_auc_score(yt, est.decision_function(Xt))
    terms = 0 if est.model_.shapes is None else int(est.model_.shapes.n_terms)
    out[name] = dict(n=n, auc=auc, fit_s=dt, shape_terms=terms, search=est.search_)
    print(f"n={n:,} {name:22s} AUC {auc:.4f}  fit {dt:6.1f} s  shape terms {terms}  "
          f"search {est.search_}", flush=True)
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "streamed.json"), "w") as f:
    json.dump(out, f, indent=1)
