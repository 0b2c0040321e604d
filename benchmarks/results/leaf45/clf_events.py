"""TreeClassifier()'s first fit in a fresh process, jaxtree's cache off: wall time, the sum
of a decision function (to compare checkouts), and XLA's compile seconds per program.

    python clf_events.py CHECKOUT breast|N

breast: scikit-learn's breast cancer, first 455 rows; N: N x 8 uniform rows, y = [sin(3 x1)
+ x2 x3 - 0.9 + noise > 0]."""
import collections, os, sys, time, warnings
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
sys.path.insert(0, sys.argv[1])
import jax, numpy as np
import jaxtree
warnings.simplefilter("ignore")
xla = collections.defaultdict(float); cnt = collections.Counter()
def listen(event, duration, **kw):
    if event.endswith("backend_compile_duration"):
        xla[kw.get("fun_name")] += duration; cnt[kw.get("fun_name")] += 1
jax.monitoring.register_event_duration_secs_listener(listen)
which = sys.argv[2]
if which == "breast":
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True); X, y = X[:455], y[:455]
else:
    n = int(which); rng = np.random.default_rng(0); X = rng.uniform(size=(n, 8))
    y = (np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] - 0.9 + 0.3 * rng.normal(size=n) > 0).astype(int)
t = time.perf_counter(); est = jaxtree.TreeClassifier().fit(X, y); print(which, "fit", round(time.perf_counter() - t, 2), "dec", repr(float(np.asarray(est.decision_function(X[:50]), np.float64).sum())))
for k, v in sorted(xla.items(), key=lambda kv: -kv[1]): print(f"  {k:40s} {v:.3f} x{cnt[k]}")
print(" total", round(sum(xla.values()), 2), sum(cnt.values()))
