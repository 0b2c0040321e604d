import sys, os, traceback, collections, tempfile, warnings
sys.path.insert(0, "/work/main")
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
warnings.simplefilter("ignore")
import numpy as np, jax, jaxtree
sites = collections.Counter(); tot = collections.defaultdict(float); on = [True]
def lis(ev, d, **kw):
    if on[0] and "backend_compile" in ev:
        fr = [f for f in traceback.extract_stack() if "/jaxtree/" in f.filename]
        k = (kw.get("fun_name"), fr[-1].filename.split("/jaxtree/")[-1] + ":" + str(fr[-1].lineno) if fr else "?")
        sites[k] += 1; tot[k] += d
jax.monitoring.register_event_duration_secs_listener(lis)
from sklearn.datasets import load_breast_cancer, load_wine
rng = np.random.default_rng(0)
cases = {
  "clf binary": lambda: jaxtree.TreeClassifier().fit(*load_breast_cancer(return_X_y=True)),
  "clf 3-class": lambda: jaxtree.TreeClassifier().fit(*load_wine(return_X_y=True)),
  "reg 20k cat": None,
  "fit_batch": lambda: jaxtree.fit_batch(rng.uniform(size=(4, 300, 5)), rng.normal(size=(4, 300)), k=4) if hasattr(jaxtree, "fit_batch") else None,
}
n, p = 20000, 10
X = rng.uniform(size=(n, p)); X[:, 0] = rng.integers(0, 5, n)
y = np.sin(3 * X[:, 1]) + X[:, 2] * X[:, p - 1] + 0.1 * X[:, 0] + 0.05 * rng.normal(size=n)
cases["reg 20k cat"] = lambda: jaxtree.TreeRegressor().fit(X, y)
d = tempfile.mkdtemp(); np.save(d + "/x.npy", X.astype(np.float32)); np.save(d + "/y.npy", y.astype(np.float32))
cases["reg memmap"] = lambda: jaxtree.TreeRegressor(k=3).fit(np.load(d + "/x.npy", mmap_mode="r"), np.load(d + "/y.npy"))
for name, f in cases.items():
    sites.clear(); tot.clear()
    try:
        f()
    except Exception as e:
        print(name, "ERR", type(e).__name__, str(e)[:100]); continue
    small = [(k, v, tot[k]) for k, v in sites.items() if tot[k] / v < 0.03]
    print(name, "small programs", sum(v for _, v, _ in small), "xla s", round(sum(t for *_, t in small), 3), sorted(small, key=lambda x: -x[1])[:6], flush=True)
