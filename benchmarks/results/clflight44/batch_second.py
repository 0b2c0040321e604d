"""fit_batch(X, y, k=5) on 8 data sets of 500 x 5 in a new process (jaxtree's cache on): its
time and compilations; run it three times on one XDG_CACHE_HOME (the first fills the cache).

    XDG_CACHE_HOME=DIR PYTHONPATH=CHECKOUT python batch_second.py
"""
import time, numpy as np, jax, jaxtree
from jaxtree.debug import count_compilations
rng = np.random.default_rng(0)
X = rng.uniform(size=(8, 500, 5)); y = np.sin(3 * X[..., 0]) + X[..., 1] * X[..., 2] + 0.1 * rng.normal(size=(8, 500))
names = []
jax.monitoring.register_event_duration_secs_listener(lambda e, d, **k: names.append((k.get('fun_name'), round(d, 2))) if 'backend_compile' in e else None)
t = time.perf_counter()
with count_compilations() as c:
    res = jaxtree.fit_batch(X, y, k=5)
print("fit_batch", round(time.perf_counter() - t, 2), "s", c.compiles, "compilations", sorted(names, key=lambda x: -x[1])[:6])
