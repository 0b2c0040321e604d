import sys, os, time, warnings
sys.path.insert(0, sys.argv[1]); mode = sys.argv[2]
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import numpy as np
warnings.simplefilter("ignore")
import jaxtree
from jaxtree import search
if mode.startswith("factor"):
    c = float(mode[6:])
    import jax.numpy as jnp
    search.pair_taken = lambda rss, single_sse, pair_sse: jnp.isfinite(pair_sse) & ((rss - pair_sse) > c * (rss - single_sse))
if mode.startswith("rel"):
    fr = float(mode[3:]) / 100
    import jax.numpy as jnp
    search.pair_taken = lambda rss, single_sse, pair_sse: jnp.isfinite(pair_sse) & ((rss - pair_sse) > 2 * (rss - single_sse)) & ((rss - pair_sse) > fr * rss)
if mode == "nopair":
    orig = search.search_config
    def patched(s, max_k, n_candidates=0, **kw):
        return orig(s, max_k, n_candidates, **kw)._replace(pair_leaves=0)
    search.search_config = patched
import inspect
print(inspect.signature(jaxtree.datasets.paper_synthetic))
for n in (100, 150, 250, 1000):
    rmses, found = [], 0
    for seed in range(5):
        X, y = jaxtree.datasets.paper_synthetic(n=n, seed=seed)
        Xt, _ = jaxtree.datasets.paper_synthetic(n=2000, seed=100 + seed); yt = jaxtree.datasets.paper_function(Xt)
        t = time.perf_counter()
        est = jaxtree.TreeRegressor().fit(X, y)
        rmses.append(float(np.sqrt(np.mean((np.asarray(est.predict(Xt)) - yt) ** 2))))
    print(mode, n, "test RMSE median", round(float(np.median(rmses)), 4), [round(r, 3) for r in rmses], flush=True)
