import os, sys
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import numpy as np, pandas as pd, jaxtree, warnings
from jaxtree.datasets import paper_synthetic
warnings.simplefilter("ignore")
X, y = paper_synthetic(n=1000, p=10, seed=0)
a = jaxtree.TreeRegressor(k=10).fit(X, y).predict(X)
n, p = 20000, 10
rng = np.random.default_rng(0)
x = rng.uniform(size=(n, p)); codes = rng.integers(0, 5, n)
yc = np.sin(3 * x[:, 1]) + x[:, 2] * x[:, p - 1] + 0.3 * codes + 0.05 * rng.normal(size=n)
Xc = pd.DataFrame(x, columns=[f"x{j}" for j in range(p)]); Xc["x0"] = pd.Categorical(np.array(list("abcde"))[codes])
b = jaxtree.TreeRegressor(k=10).fit(Xc, yc).predict(Xc)
Xb = rng.uniform(size=(3000, 5)); yb = (np.sin(4 * Xb[:, 0]) + Xb[:, 1] * Xb[:, 2] > 0.6).astype(int)
c = jaxtree.TreeClassifier().fit(Xb, yb).predict_proba(Xb)
np.savez(sys.argv[2], a=a, b=b, c=c)
