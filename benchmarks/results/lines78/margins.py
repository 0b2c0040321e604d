"""The choice's 5-fold CV scores on each outer fold's training rows: the lines setting against the best
other setting, the kept setting and its test RMSE. ROOT=<checkout> python margins.py"""
import os, sys, warnings; warnings.simplefilter("ignore")
ROOT = os.environ.get("ROOT", "."); sys.path.insert(0, ROOT); sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import numpy as np, jaxtree, bench_accuracy as ba
from sklearn.model_selection import KFold
for name, seed in [("airquality", 2), ("mtcars", 0), ("mtcars", 2), ("diabetes", 0), ("mpg", 2), ("diabetes", 2)]:
    _, X, y, _ = ba.load_table(name, ba.TABLES[name][2]); y = np.asarray(y, float)
    for f, (tr, te) in enumerate(KFold(5, shuffle=True, random_state=seed).split(X, y)):
        e = jaxtree.TreeRegressor().fit(X.iloc[tr], y[tr])
        sc = {k[3:]: v for k, v in (e.shape_order_scores_ or {}).items() if k.startswith("cv")}
        if not sc: print(name, seed, f, "no choice"); continue
        lines = sc.pop("additive k=0 lines"); best = min(sc, key=sc.get)
        rm = float(np.sqrt(np.mean((e.predict(X.iloc[te]) - y[te]) ** 2)))
        print(name, seed, f, e.shape_order_, f"lines/best-other {lines / sc[best]:.4f} ({best})", f"test {rm:.4g}")
