"""One first fit in this fresh process (cache off): the demo or the 20,000 x 10 table
with a category; prints the fit's seconds, whether the backfitting round's programs were
named while the shape count compiled, and a checksum of the predictions.

    python first.py demo|cat

It imports the jaxtree of the checkout it lies in (before the seventy-seventh session it
imported the installed one, so running it "from each checkout" timed one code twice).
"""
import os, pathlib, sys, time
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3]))
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import numpy as np, pandas as pd, warnings
import jaxtree
from jaxtree.datasets import paper_synthetic
warnings.simplefilter("ignore")
which = sys.argv[1]
if which == "demo":
    X, y = paper_synthetic(1333, p=10, seed=0)
    X, y = X[:1000], y[:1000]
else:
    n, p = 20000, 10
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(n, p)); codes = rng.integers(0, 5, n)
    y = np.sin(3 * x[:, 1]) + x[:, 2] * x[:, p - 1] + 0.3 * codes + 0.05 * rng.normal(size=n)
    X = pd.DataFrame(x, columns=[f"x{j}" for j in range(p)])
    X["x0"] = pd.Categorical(np.array(list("abcde"))[codes])
t0 = time.perf_counter()
est = jaxtree.TreeRegressor(k=10).fit(X, y)
t = time.perf_counter() - t0
pred = est.predict(X[:500])
print(f"{which} {os.environ.get('NO_ROUND_AHEAD', '0')} fit {t:.3f} sum {float(np.sum(pred)):.9g} "
      f"terms {est.model_.shapes is not None}")
