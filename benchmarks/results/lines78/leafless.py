"""The lines setting alone on every fold: with its one tree leaf, with the leaf's weight set to 0
(intercept refitted on the training rows), and bench_accuracy's ridge. ROOT=<checkout> python leafless.py"""
import os, sys, warnings, dataclasses; warnings.simplefilter("ignore")
ROOT = os.environ.get("ROOT", "."); sys.path.insert(0, ROOT); sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import numpy as np, jax.numpy as jnp, jaxtree, bench_accuracy as ba
from jaxtree._fit import additive as A, spec as spec_
from jaxtree import model as M
from sklearn.model_selection import KFold
spec_.ADDITIVE_CV_FOLDS = 0
orig = A.fit
for name, seed in (("airquality", 2), ("mtcars", 0), ("mtcars", 2), ("diabetes", 0)):
    _, X, y, _ = ba.load_table(name, ba.TABLES[name][2]); y = np.asarray(y, float)
    res = {"lines+leaf": [], "lines only": [], "ridge": []}
    for f, (tr, te) in enumerate(KFold(5, shuffle=True, random_state=seed).split(X, y)):
        rm = lambda p: float(np.sqrt(np.mean((p - y[te]) ** 2)))
        A.fit = lambda *a, **k: orig(*a, **{**k, "lines": True})
        e = jaxtree.TreeRegressor(shapes="additive", k=0, validation_fraction=None).fit(X.iloc[tr], y[tr])
        A.fit = orig
        res["lines+leaf"].append(rm(e.predict(X.iloc[te])))
        m = e.model_
        prog = m.program
        zero = prog._replace(weight=jnp.zeros_like(prog.weight)) if hasattr(prog, "_replace") else dataclasses.replace(prog, weight=jnp.zeros_like(prog.weight))
        m0 = dataclasses.replace(m, program=zero)
        e.model_ = m0
        shift = float(np.mean(y[tr] - e.predict(X.iloc[tr])))
        res["lines only"].append(rm(e.predict(X.iloc[te]) + shift))
        res["ridge"].append(rm(ba.linear("regression", X).fit(X.iloc[tr], y[tr]).predict(X.iloc[te])))
    print(name, seed, {k: round(float(np.mean(v)), 4) for k, v in res.items()}, [round(v, 2) for v in res["lines only"]], [round(v, 2) for v in res["lines+leaf"]])
