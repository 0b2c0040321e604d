"""The default TreeRegressor(k=10)'s first fit on a 20,000 x 20 uniform table (more than 11
covariates: its shape pairs are screened) in a fresh process, jaxtree's cache off.

    python wide_first_fit.py CHECKOUT LABEL"""
import os, sys, time, warnings
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import numpy as np, jaxtree
warnings.simplefilter("ignore")
n, p = 20000, 20
rng = np.random.default_rng(0)
x = rng.uniform(size=(n, p))
y = np.sin(3 * x[:, 1]) + x[:, 2] * x[:, 7] + 0.5 * x[:, 4] + 0.05 * rng.normal(size=n)
t = time.perf_counter(); est = jaxtree.TreeRegressor(k=10).fit(x, y); f = time.perf_counter() - t
print(sys.argv[2], f"first fit {f:.2f} s", est.formula()[:60])
