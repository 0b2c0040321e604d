"""The paper's function at 4e4 and 1e5 rows (seeds 0-2): the default with refine_steps 20 against 10:
test RMSE against the noiseless g on 20,000 draws."""
import os, sys, time, warnings
sys.path.insert(0, os.environ.get("ROOT", "/work/main"))
warnings.simplefilter("ignore")
import numpy as np, jaxtree
from jaxtree.datasets import paper_synthetic, paper_function
Xt, _ = paper_synthetic(n=20000, p=10, seed=99)
for n in (40_000, 100_000):
    for seed in (0, 1, 2):
        X, y = paper_synthetic(n=n, p=10, seed=seed)
        out = []
        for s in (20, 10):
            e = jaxtree.TreeRegressor(refine_steps=s).fit(X, y)
            r = np.sqrt(np.mean((e.predict(Xt) - paper_function(Xt)) ** 2))
            out.append((s, round(r, 5), len(e.choices_)))
        print(n, seed, out, flush=True)
