"""First fit of a 20,000 x 10 table in a fresh process, cache off; argv[2] = cat|num:
cat makes column 0 a pandas categorical of 5 levels."""
import collections, os, sys, time, warnings
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import jax, numpy as np, pandas as pd
import jaxtree
warnings.simplefilter("ignore")
ev = collections.defaultdict(float); xla = collections.defaultdict(float); cnt = collections.Counter()
def listen(event, duration, **kw):
    ev[event.rsplit("/", 1)[-1]] += duration
    if event.endswith("backend_compile_duration"):
        xla[kw.get("fun_name")] += duration; cnt[kw.get("fun_name")] += 1
jax.monitoring.register_event_duration_secs_listener(listen)
n, p = 20000, 10
rng = np.random.default_rng(0)
X = rng.uniform(size=(n, p)); codes = rng.integers(0, 5, n)
y = np.sin(3 * X[:, 1]) + X[:, 2] * X[:, p - 1] + 0.3 * codes + 0.05 * rng.normal(size=n)
df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
if sys.argv[2] == "cat":
    df["x0"] = pd.Categorical(np.array(list("abcde"))[codes])
else:
    df["x0"] = codes.astype(float)
t = time.perf_counter(); est = jaxtree.TreeRegressor(k=10).fit(df, y); first = time.perf_counter() - t
t = time.perf_counter(); jaxtree.TreeRegressor(k=10).fit(df, y); warm = time.perf_counter() - t
print(sys.argv[2], f"first fit {first:.2f} s; warm {warm:.2f} s; terms {est.formula()[:80]}")
for k, v in sorted(ev.items(), key=lambda kv: -kv[1]): print(f"  {k:45s} {v:6.2f}")
for k, v in sorted(xla.items(), key=lambda kv: -kv[1])[:14]: print(f"  {str(k):45s} {v:6.2f} s  x{cnt[k]}")
print(" total XLA", round(sum(xla.values()), 2), "programs", sum(cnt.values()))
