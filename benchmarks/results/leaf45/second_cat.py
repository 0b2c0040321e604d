"""Issue 27's second table with a category: in one fresh process (jaxtree's cache off), the
default TreeRegressor on 20,000 x 10 then on 22,000 x 11, each with a five-level pandas
categorical column; each first fit's wall time and XLA's compile seconds in it.

    python second_cat.py CHECKOUT"""
import os, sys, time, warnings
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import jax, numpy as np, pandas as pd
import jaxtree
warnings.simplefilter("ignore")
xla = [0.0]
jax.monitoring.register_event_duration_secs_listener(
    lambda e, d, **kw: xla.__setitem__(0, xla[0] + d) if e.endswith("backend_compile_duration") else None)
for i, (n, p) in enumerate([(20000, 10), (22000, 11)]):
    rng = np.random.default_rng(i)
    X = rng.uniform(size=(n, p)); codes = rng.integers(0, 5, n)
    y = np.sin(3 * X[:, 1]) + X[:, 2] * X[:, p - 1] + 0.3 * codes + 0.05 * rng.normal(size=n)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    df["x0"] = pd.Categorical(np.array(list("abcde"))[codes])
    xla[0] = 0.0
    t = time.perf_counter(); jaxtree.TreeRegressor(k=10).fit(df, y)
    print(f"{n} x {p}: first fit {time.perf_counter() - t:.2f} s, XLA {xla[0]:.2f} s", flush=True)
