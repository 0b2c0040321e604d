import sys, os, time, tempfile, warnings
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else "/work/main")
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
warnings.simplefilter("ignore")
import matplotlib; matplotlib.use("Agg")
import jax, jaxtree
from jaxtree.debug import count_compilations
names = []
jax.monitoring.register_event_duration_secs_listener(
    lambda ev, d, **kw: names.append(kw.get("fun_name")) if "backend_compile" in ev else None)
from sklearn.datasets import load_diabetes, load_breast_cancer
def step(label, f):
    names.clear(); t = time.perf_counter()
    with count_compilations() as c:
        f()
    dt = time.perf_counter() - t
    if c.compiles > 1 or dt > 0.3:
        print(f"{label:28s} {dt:6.3f} s compiles {c.compiles:3d} {sorted(set(names))[:8]}", flush=True)
X, y = load_diabetes(return_X_y=True, as_frame=True)
est = jaxtree.TreeRegressor().fit(X, y)
d = tempfile.mkdtemp()
for label, f in [("formula", lambda: est.formula()), ("law", lambda: est.law()), ("explain", lambda: est.explain(X.iloc[:50])),
                 ("shape_terms", lambda: est.shape_terms()), ("plot_terms", lambda: est.plot_terms(X)), ("plot_shapes", lambda: est.plot_shapes()),
                 ("plot_tree", lambda: est.plot_tree()), ("plot_history", lambda: est.plot_history()), ("to_dot", lambda: est.to_dot()),
                 ("to_sympy", lambda: est.to_sympy()), ("to_latex", lambda: est.to_latex()), ("save", lambda: est.save(d + "/m.json")),
                 ("load", lambda: jaxtree.load(d + "/m.json")), ("load+predict", lambda: jaxtree.load(d + "/m.json").predict(X.iloc[:10])),
                 ("predict", lambda: est.predict(X)), ("score", lambda: est.score(X, y)), ("path_", lambda: est.path_)]:
    try:
        step("reg " + label, f)
    except Exception as e:
        print("reg", label, "ERR", type(e).__name__, str(e)[:80])
Xc, yc = load_breast_cancer(return_X_y=True, as_frame=True)
clf = jaxtree.TreeClassifier().fit(Xc, yc)
for label, f in [("formula", lambda: clf.formula()), ("explain", lambda: clf.explain(Xc.iloc[:50])), ("plot_terms", lambda: clf.plot_terms(Xc)),
                 ("predict_proba", lambda: clf.predict_proba(Xc)), ("predict", lambda: clf.predict(Xc)), ("decision_function", lambda: clf.decision_function(Xc)),
                 ("score", lambda: clf.score(Xc, yc)), ("to_sympy", lambda: clf.to_sympy()), ("save", lambda: clf.save(d + "/c.json")),
                 ("load+predict", lambda: jaxtree.load(d + "/c.json").predict(Xc.iloc[:10]))]:
    try:
        step("clf " + label, f)
    except Exception as e:
        print("clf", label, "ERR", type(e).__name__, str(e)[:80])
