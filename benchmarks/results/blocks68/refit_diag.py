"""The refit (all rows, k chosen on held-out rows) against the selection run's tree of the same
size, both as whole models (shapes=0) on all training rows and on test rows: python benchmarks/results/blocks68/refit_diag.py"""
import sys, warnings, dataclasses
warnings.simplefilter("ignore")
sys.path.insert(0, "/work/main/benchmarks")
import numpy as np, jax, jaxtree
from jaxtree import model as model_
from jaxtree._fit import source
cap = {}
plain_sel = source.InMemory.selection_run
def sel_spy(self, cfg, rep):
    out = plain_sel(self, cfg, rep); cap["sel"] = out[0]; return out
source.InMemory.selection_run = sel_spy
def ops(p):
    n = int(np.asarray(p.n_slots)); return (n - 1) // 2 if n else -1
def one(name, X, y, Xt=None, yt=None, **kw):
    cap.clear()
    e = jaxtree.TreeRegressor(shapes=0, **kw).fit(X, y)
    if "sel" not in cap:
        print(f"{name}: no held-out size"); return
    k = ops(e.model_.program)
    cands = [p for p in cap["sel"].programs if ops(p) == k]
    if not cands:
        print(f"{name}: k {k}: no selection tree"); return
    m2 = dataclasses.replace(e.model_, program=jax.device_put(cands[-1]))
    Xa, ya = np.asarray(X, float) if not hasattr(X, "iloc") else X, np.asarray(y, float)
    f1, f2 = e.predict(X), np.asarray(model_.predict(m2, e.encoding_.transform(X) if hasattr(e, "encoding_") and e.encoding_ is not None and hasattr(e.encoding_, "transform") else np.asarray(X, np.float32)))
    a, b = np.mean((ya - f1) ** 2), np.mean((ya - f2) ** 2)
    s = f"{name}: {e.search_} k {k}: train MSE refit {a:.4g} selection tree {b:.4g}"
    if Xt is not None:
        t1 = np.mean((yt - e.predict(Xt)) ** 2); t2 = np.mean((yt - np.asarray(model_.predict(m2, np.asarray(Xt, np.float32)))) ** 2)
        s += f" | test MSE refit {t1:.4g} selection tree {t2:.4g}"
    print(s + ("  <-- refit worse" if a > 1.05 * b else ""), flush=True)
for p in (100, 128):
    for seed in (0, 1, 2):
        rng = np.random.default_rng(seed)
        X = rng.uniform(size=(5000, p))
        y = (np.sin(3*np.pi*X[:,0])*np.cos(2*np.pi*X[:,1]) + 0.5*np.sin(4*np.pi*X[:,2])*X[:,3] + X[:,4] + 0.1*rng.standard_normal(5000))
        one(f"synthetic 1000x{p} seed {seed}", X[:1000], y[:1000], X[1000:], y[1000:])
for p in (5, 10):
    for seed in (0, 1, 2):
        rng = np.random.default_rng(seed)
        X = rng.uniform(size=(5000, p))
        from jaxtree.datasets import paper_function
        y = paper_function(X) + 0.2 * rng.standard_normal(5000)
        one(f"paper 500x{p} seed {seed}", X[:500], y[:500], X[500:], y[500:])
