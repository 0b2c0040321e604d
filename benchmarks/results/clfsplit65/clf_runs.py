"""The default TreeClassifier in fresh processes (sixty-fifth session): the first fit with a
fresh executable cache, a second process's fit on that cache, then five warm fits in that
second process (their median), and a checksum of the probabilities. TABLE: ``demo`` (the
paper's function above its median, 1,000 x 10; default), ``wine`` (scikit-learn's, 3
classes, 178 x 13) or ``three20k`` (20,000 x 8 uniform rows, 3 classes cut at terciles).
``python clf_runs.py CHECKOUT [TABLE]``; run old and new checkouts alternately."""
import os
import subprocess
import sys
import tempfile

CODE = r"""
import sys, time, warnings, statistics
sys.path.insert(0, {checkout!r})
warnings.simplefilter("ignore")
import numpy as np
import jaxtree
from jaxtree.datasets import paper_synthetic
table = {table!r}
if table == "wine":
    from sklearn.datasets import load_wine
    X, y = load_wine(return_X_y=True)
elif table == "three20k":
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(20000, 8))
    s = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=20000)
    y = np.digitize(s, np.quantile(s, [1 / 3, 2 / 3]))
else:
    X, y = paper_synthetic(1333, p=10, seed=0)
    X, y = X[:1000], (y[:1000] > np.median(y[:1000])).astype(int)
t = time.perf_counter(); est = jaxtree.TreeClassifier().fit(X, y); first = time.perf_counter() - t
warm = []
if {warm}:
    for _ in range(5):
        t = time.perf_counter(); jaxtree.TreeClassifier().fit(X, y); warm.append(time.perf_counter() - t)
print(f"{{first:.3f}} {{statistics.median(warm) if warm else 0:.3f}} {{est.predict_proba(X)[:, -1].mean():.9f}}")
"""
checkout = sys.argv[1]
table = sys.argv[2] if len(sys.argv) > 2 else "demo"
env = dict(os.environ, XDG_CACHE_HOME=tempfile.mkdtemp())
out = []
for warm in (False, True):
    r = subprocess.run([sys.executable, "-c", CODE.format(checkout=checkout, warm=warm, table=table)],
                       capture_output=True, text=True, env=env, check=True)
    out.append(r.stdout.split())
print(f"{checkout} {table}: first process fit {out[0][0]} s, second process fit {out[1][0]} s, "
      f"warm (median of 5) {out[1][1]} s, mean probability {out[1][2]}")
