"""Prototype: P-spline mains GAM (lambda on held-out) then jaxtree's tree on its residual; and a
held-out choice between that and the default. python gam_tree.py TABLES K"""
import os, sys, warnings
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")); sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np, pandas as pd
import bench_accuracy as ba
import jaxtree
from cyclic import design
from sklearn.model_selection import KFold
warnings.simplefilter("ignore")
LAMS = [1e-3, 1e-2, 1e-1, 1, 10, 100]

def pen(K, p, lam, n):
    D = np.diff(np.eye(K), 2, axis=0); P1 = D.T @ D
    return np.kron(np.eye(p), lam * n / K * P1 + 1e-6 * n / K * np.eye(K))

def joint(H, yc, lam, K, p):
    # centred joint penalised LS (intercept separate)
    Hm = H.mean(0); Hc = H - Hm
    A = Hc.T @ Hc + pen(K, p, lam, len(yc))
    c = np.linalg.solve(A, Hc.T @ yc)
    return c, Hm

class GAM:
    def __init__(self, K): self.K = K
    def fit(self, A, b, lam):
        self.lo, self.hi = A.min(0), A.max(0); self.mu = b.mean()
        H = np.hstack(design(A, self.lo, self.hi, self.K))
        self.c, self.Hm = joint(H, b - self.mu, lam, self.K, A.shape[1]); return self
    def predict(self, A):
        H = np.hstack(design(A, self.lo, self.hi, self.K))
        return self.mu + (H - self.Hm) @ self.c

def choose_lam(A, b, K):
    perm = np.random.default_rng(0).permutation(len(b)); nv = len(b) // 5
    va, fi = perm[:nv], perm[nv:]
    errs = [np.mean((GAM(K).fit(A[fi], b[fi], l).predict(A[va]) - b[va]) ** 2) for l in LAMS]
    return LAMS[int(np.argmin(errs))]

def run(name, K):
    task, X, y, _ = ba.load_table(name, None)
    Xd = pd.get_dummies(X).astype(float); Xd = Xd.fillna(Xd.median())
    A = Xd.to_numpy(); yv = y.to_numpy(float)
    res = {"default": [], "gam": [], "gam+tree": [], "chosen": []}
    for tr, te in KFold(5, shuffle=True, random_state=ba.SEED).split(A):
        a, b = A[tr], yv[tr]
        lam = choose_lam(a, b, K)
        g = GAM(K).fit(a, b, lam)
        r = b - g.predict(a)
        t = jaxtree.TreeRegressor(shapes=0).fit(X.iloc[tr], r)
        d = jaxtree.TreeRegressor().fit(X.iloc[tr], b)
        pg = g.predict(A[te]); pt = t.predict(X.iloc[te]); pd_ = d.predict(X.iloc[te])
        rm = lambda p: np.sqrt(np.mean((p - yv[te]) ** 2))
        res["default"].append(rm(pd_)); res["gam"].append(rm(pg)); res["gam+tree"].append(rm(pg + pt))
        # held-out choice: refit both on 80%, compare on 20% (same split as the lam choice)
        perm = np.random.default_rng(0).permutation(len(b)); nv = len(b) // 5
        va, fi = tr[perm[:nv]], tr[perm[nv:]]
        g2 = GAM(K).fit(A[fi], yv[fi], lam); t2 = jaxtree.TreeRegressor(shapes=0).fit(X.iloc[fi], yv[fi] - g2.predict(A[fi]))
        d2 = jaxtree.TreeRegressor().fit(X.iloc[fi], yv[fi])
        e_g = np.mean((g2.predict(A[va]) + t2.predict(X.iloc[va]) - yv[va]) ** 2)
        e_d = np.mean((d2.predict(X.iloc[va]) - yv[va]) ** 2)
        res["chosen"].append(rm(pg + pt) if e_g < e_d else rm(pd_))
        print(name, "lam", lam, {k: round(v[-1], 3) for k, v in res.items()}, flush=True)
    print(f"== {name} K={K}", {k: round(float(np.mean(v)), 4) for k, v in res.items()}, flush=True)

K = int(sys.argv[2])
for name in sys.argv[1].split(","):
    run(name, K)
