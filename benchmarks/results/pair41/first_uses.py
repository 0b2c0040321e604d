"""The first calls after a fit in a fresh process (jaxtree's cache off): seconds and programs.

    python first_uses.py CHECKOUT terms   # diabetes' default regressor: export.term_values
    python first_uses.py CHECKOUT wine    # a 3-class TreeClassifier on wine: formula, predict_proba
"""
import os
import sys
import time

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else "/work/main")
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import jax  # noqa: E402
from sklearn.datasets import load_diabetes, load_wine  # noqa: E402

import jaxtree  # noqa: E402
from jaxtree import export  # noqa: E402
from jaxtree.debug import count_compilations  # noqa: E402

names = []
jax.monitoring.register_event_duration_secs_listener(
    lambda ev, d, **kw: names.append(kw.get("fun_name")) if "backend_compile" in ev else None)
if (sys.argv[2] if len(sys.argv) > 2 else "terms") == "terms":
    X, y = load_diabetes(return_X_y=True)
    est = jaxtree.TreeRegressor().fit(X, y)
    calls = [("term_values", lambda: export.term_values(est.model_, X)),
             ("again", lambda: export.term_values(est.model_, X)),
             ("predict", lambda: est.predict(X))]
else:
    X, y = load_wine(return_X_y=True)
    est = jaxtree.TreeClassifier().fit(X, y)
    calls = [("formula", lambda: est.formula()), ("formula again", lambda: est.formula()),
             ("predict_proba", lambda: est.predict_proba(X[:50]))]
for label, f in calls:
    names.clear()
    t = time.perf_counter()
    with count_compilations() as c:
        f()
    print(f"{label:15s} {time.perf_counter() - t:6.3f} s compiles {c.compiles} "
          f"{sorted(set(names))[:10]}")
