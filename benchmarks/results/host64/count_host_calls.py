"""How often a default fit of 1,000 x 10 evaluates its kept basis values on the host, and how long each takes
(run with the checkout first on PYTHONPATH)."""
import time, warnings, numpy as np
import jaxtree
from jaxtree._fit import source
from jaxtree import scoring
warnings.simplefilter("ignore")
calls = []
real = scoring.host_designs
def spy(x, basis):
    t = time.perf_counter(); r = real(x, basis); calls.append((x.shape, time.perf_counter() - t)); return r
scoring.host_designs = spy
rng = np.random.default_rng(0)
X = rng.uniform(size=(1000, 10)); y = np.sin(3*X[:,0]) + X[:,1]*X[:,2] + 0.1*rng.standard_normal(1000)
jaxtree.TreeRegressor(k=10).fit(X, y)
calls.clear()
t = time.perf_counter(); jaxtree.TreeRegressor(k=10).fit(X, y); print("fit", time.perf_counter() - t)
print(calls)
