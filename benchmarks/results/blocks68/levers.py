"""first + warm fit with scoring.BUCKET_MIN_WORK from env BMW: python bmw.py NxP ..."""
import sys, time, warnings, os
warnings.simplefilter("ignore")
os.environ.setdefault("JAXTREE_COMPILATION_CACHE", "0")
import numpy as np, jaxtree
from jaxtree import scoring
if os.environ.get("BMW"): scoring.BUCKET_MIN_WORK = int(float(os.environ["BMW"]))
if os.environ.get("OLD_LEAF"):
    scoring.buckets_for = lambda n, p, q, k: () if n * p * q < 16_000_000 else scoring.default_buckets(k + 1)
if os.environ.get("NOLEAF_SMALL"):
    _bf = scoring.buckets_for
    scoring.buckets_for = lambda n, p, q, k: () if n < 10_000 else _bf(n, p, q, k)
if os.environ.get("NOLIGHT"):
    import contextlib
    from jaxtree import _executables
    _executables.light = contextlib.nullcontext
    _executables.light_if = lambda flag: contextlib.nullcontext()
if os.environ.get("SHARE"):
    from jaxtree._fit import select
    select.selection_rows = lambda n, p, q, rows=None: (n if rows is None else rows)
if os.environ.get("OLD_SELECT"):
    from jaxtree._fit import select
    plain_cd = scoring.compiling_dominates
    class _S:  # select's view: the old rule
        def __getattr__(self, a):
            return (lambda n, p, q: n * p * q < 16_000_000) if a == "compiling_dominates" else getattr(scoring, a)
    select.scoring = _S()
for case in sys.argv[1:]:
    n, p = map(int, case.split("x"))
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(n + 4000, p))
    y = (np.sin(3*np.pi*X[:,0])*np.cos(2*np.pi*X[:,1]) + 0.5*np.sin(4*np.pi*X[:,2])*X[:,3] + X[:,4]
         + 0.1*rng.standard_normal(n + 4000))
    X, Xt, y, yt = X[:n], X[n:], y[:n], y[n:]
    t = time.perf_counter(); e = jaxtree.TreeRegressor().fit(X, y); first = time.perf_counter() - t
    ws = []
    for _ in range(2):
        t = time.perf_counter(); e = jaxtree.TreeRegressor().fit(X, y); ws.append(time.perf_counter() - t)
    r = np.sqrt(np.mean((e.predict(Xt) - yt) ** 2))
    print(f"OLD_LEAF={os.environ.get('OLD_LEAF','')} OLD_SELECT={os.environ.get('OLD_SELECT','')} NOLIGHT={os.environ.get('NOLIGHT','')} SHARE={os.environ.get('SHARE','')} NOLEAF_SMALL={os.environ.get('NOLEAF_SMALL','')} BMW={scoring.BUCKET_MIN_WORK:.2g} {case}: first {first:.2f} warm {min(ws):.2f} rmse {r:.5f} k {e.k_}", flush=True)
