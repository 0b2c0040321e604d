"""First fit, fresh process, cache off; prints time and XLA compiles per program."""
import os, sys, time, warnings, threading
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import jax, numpy as np, pandas as pd
import jaxtree
from jaxtree.datasets import paper_synthetic
warnings.simplefilter("ignore")
comp = []
def listen(event, duration, **kw):
    if event.endswith("backend_compile_duration"):
        comp.append((str(kw.get("fun_name")), round(duration, 2), threading.current_thread().name[:14]))
jax.monitoring.register_event_duration_secs_listener(listen)
which = sys.argv[2] if len(sys.argv) > 2 else "demo"
if which == "demo":
    X, y = paper_synthetic(n=1000, p=10, seed=0)
else:
    n, p = 20000, 10
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(n, p)); codes = rng.integers(0, 5, n)
    y = np.sin(3 * x[:, 1]) + x[:, 2] * x[:, p - 1] + 0.3 * codes + 0.05 * rng.normal(size=n)
    X = pd.DataFrame(x, columns=[f"x{j}" for j in range(p)])
    X["x0"] = pd.Categorical(np.array(list("abcde"))[codes])
t0 = time.perf_counter(); est = jaxtree.TreeRegressor(k=10).fit(X, y); t = time.perf_counter() - t0
big = [c for c in comp if c[1] >= 0.05]
names = [c[0] for c in comp]
dup = sorted({n for n in names if names.count(n) > 1 and n != "None"})
print(f"{which} fit {t:.2f} s  compiles {len(comp)}  dup {dup}  pred0 {float(est.predict(X[:1] if which=='demo' else X.iloc[:1])[0]):.6f}")
if len(sys.argv) > 3: print(big)
