"""Measured outside the library: penalised main effects with their smoothness chosen by
generalised cross-validation (GCV) on the training rows, beside the default, on the small
regression tables (bench_accuracy.py's five folds).

Each numeric covariate of more than two values gets K hats on its training range (the
shape terms' piecewise-linear basis) with a second-difference penalty (a P-spline: lines
are not penalised); the one-hot levels and 0/1 columns get one coefficient each with a
small ridge. All together one penalised least-squares fit, lambda from a grid by GCV,
n * RSS / (n - tr H)^2: no held-out rows.

Variants (RMSE on the test fold, mean of five):
  default        TreeRegressor()
  gam            the GCV additive model alone
  gam+tree       TreeRegressor(shapes=0) on the additive model's residual
  tree+gam       the additive model on the residual of TreeRegressor(shapes=0)
  tree           TreeRegressor(shapes=0)
  additive       TreeRegressor(shapes="additive"), the library's build (LIB_ONLY=1; "lambdas"
                 then lists each fold's tree size k_)
  order          TreeRegressor() with jaxtree._fit.spec.ADDITIVE_ORDER on: the small tables'
                 order choice between the tree first and the GCV fit first (ORDER=1;
                 "lambdas" then lists each fold's shape_order_)

    python gcv.py mtcars,airquality,mpg,diabetes,boston [K]
"""
import os, sys, warnings
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..")); sys.path.insert(0, os.path.join(HERE, "..", "..", ".."))
import numpy as np, pandas as pd
import bench_accuracy as ba
from sklearn.model_selection import KFold
warnings.simplefilter("ignore")
import jaxtree

LAMS = 10.0 ** np.arange(-4, 4.5, 0.5)
GAMMA = float(os.environ.get("GAMMA", "1"))  # GCV's n * RSS / (n - GAMMA tr H)^2 (mgcv's gamma)
DELTAS = [float(d) for d in os.environ.get("DELTAS", "0").split(",")]  # a ridge on every
# coefficient, DELTA times the difference penalty's lambda (shrinks the lines too)
ONLY_GAM = os.environ.get("ONLY_GAM") == "1"


def hats(z, K):
    t = np.clip(z, 0, 1) * (K - 1)
    i = np.clip(np.floor(t).astype(int), 0, K - 2)
    f = t - i
    H = np.zeros((len(z), K))
    H[np.arange(len(z)), i] = 1 - f
    H[np.arange(len(z)), i + 1] += f
    return H


class GAM:
    def __init__(self, K):
        self.K = K

    def _design(self, A):
        cols = []
        for j in range(A.shape[1]):
            if self.smooth[j]:
                z = (A[:, j] - self.lo[j]) / (self.hi[j] - self.lo[j])
                cols.append(hats(z, self.K)[:, 1:])  # the intercept is its own column
            else:
                cols.append(A[:, j:j + 1] - self.mean[j])
        return np.hstack([np.ones((len(A), 1))] + cols)

    def fit(self, A, y):
        n, p = A.shape
        self.lo, self.hi = A.min(0), A.max(0)
        self.mean = A.mean(0)
        self.smooth = np.array([len(np.unique(A[:, j])) > 2 and self.hi[j] > self.lo[j] for j in range(p)])
        X = self._design(A)
        # the penalty: second differences of each smooth block (its first hat dropped: the
        # block's own value at its start is 0, so pad the difference matrix with that 0)
        m = X.shape[1]
        P = np.zeros((m, m)); R = np.zeros((m, m))
        c = 1
        K = self.K
        for j in range(p):
            if self.smooth[j]:
                D = np.diff(np.eye(K), 2, axis=0)[:, 1:]
                P[c:c + K - 1, c:c + K - 1] = D.T @ D
                R[c:c + K - 1, c:c + K - 1] = 1e-6 * np.eye(K - 1)
                c += K - 1
            else:
                R[c, c] = 1e-3
                c += 1
        G = X.T @ X; b = X.T @ y
        scale = np.trace(G) / m
        best = None
        I = np.eye(m); I[0, 0] = 0
        for delta in DELTAS:
            for lam in LAMS:
                A_ = G + scale * (lam * (P + delta * I) + R)
                coef = np.linalg.solve(A_, b)
                tr = np.trace(np.linalg.solve(A_, G))
                rss = np.sum((y - X @ coef) ** 2)
                gcv = n * rss / max(n - GAMMA * tr, 1e-9) ** 2
                if best is None or gcv < best[0]:
                    best = (gcv, (lam, delta), coef, tr)
        self.gcv, self.lam, self.coef, self.edf = best
        return self

    def predict(self, A):
        return self._design(A) @ self.coef


def frame(X):
    Xd = pd.get_dummies(X).astype(float)
    return Xd


def run(name, K):
    if name == "paper":  # the paper's function (the demo's data): a tree's truth
        from jaxtree.datasets import paper_synthetic
        Xa, y = paper_synthetic(1333, p=10, seed=0)
        X = pd.DataFrame(Xa, columns=[f"x{j}" for j in range(Xa.shape[1])])
    else:
        task, X, y, _ = ba.load_table(name, None)
    yv = np.asarray(y, float)
    Xd = frame(X)
    res = {k: [] for k in ("default", "tree", "gam", "gam+tree", "tree+gam")}
    lams = []
    for tr, te in KFold(5, shuffle=True, random_state=int(os.environ.get('SPLIT_SEED', ba.SEED))).split(Xd):
        med = Xd.iloc[tr].median()
        A, At = Xd.iloc[tr].fillna(med).to_numpy(), Xd.iloc[te].fillna(med).to_numpy()
        Xtr, Xte = X.iloc[tr], X.iloc[te]
        rmse = lambda pr: float(np.sqrt(np.mean((pr - yv[te]) ** 2)))
        if os.environ.get("ORDER") == "1":  # the default with the GCV fit as its other order
            from jaxtree._fit import spec as spec_
            # ORDER_RULE=alone: the variant of order_alone.diff (applied to the library)
            spec_.ADDITIVE_ORDER = os.environ.get("ORDER_RULE", True)
            est = jaxtree.TreeRegressor().fit(Xtr, yv[tr])
            res.setdefault("order", []).append(rmse(est.predict(Xte)))
            res.setdefault("terms", []).append(ba.n_terms(est))
            lams.append(est.shape_order_)
            continue
        if os.environ.get("LIB_ONLY") == "1":  # the library's build of "gam + tree"
            est = jaxtree.TreeRegressor(shapes="additive").fit(Xtr, yv[tr])
            res.setdefault("additive", []).append(rmse(est.predict(Xte)))
            res.setdefault("terms", []).append(ba.n_terms(est))
            lams.append(est.k_)
            continue
        g = GAM(K).fit(A, yv[tr]); lams.append(g.lam)
        res["gam"].append(rmse(g.predict(At)))
        if ONLY_GAM:
            continue
        res["default"].append(rmse(jaxtree.TreeRegressor().fit(Xtr, yv[tr]).predict(Xte)))
        t = jaxtree.TreeRegressor(shapes=0).fit(Xtr, yv[tr])
        res["tree"].append(rmse(t.predict(Xte)))
        t2 = jaxtree.TreeRegressor(shapes=0).fit(Xtr, yv[tr] - g.predict(A))
        res["gam+tree"].append(rmse(g.predict(At) + t2.predict(Xte)))
        # the tree kept only where a GCV with D per tree leaf says so (MARS's rule: the
        # tree's terms are searched, so each costs more than its one weight)
        n = len(tr)
        rss_g = np.sum((yv[tr] - g.predict(A)) ** 2)
        rss_gt = np.sum((yv[tr] - g.predict(A) - t2.predict(Xtr)) ** 2)
        leaves = t2.k_ + 1 if t2.k_ > 0 else 0
        for d in (2, 3, 4):
            gcv_g = n * rss_g / (n - GAMMA * g.edf) ** 2
            den = n - GAMMA * (g.edf + d * leaves)
            gcv_gt = n * rss_gt / den ** 2 if den > 0 else np.inf
            pick = g.predict(At) + (t2.predict(Xte) if gcv_gt < gcv_g else 0)
            res.setdefault(f"rule{d}", []).append(rmse(pick))
            res.setdefault(f"rule{d}_tree", []).append(float(gcv_gt < gcv_g))
        if os.environ.get("TREE_GAM", "1") == "1":
            g2 = GAM(K).fit(A, yv[tr] - t.predict(Xtr))
            res["tree+gam"].append(rmse(t.predict(Xte) + g2.predict(At)))
    return {k: float(np.mean(v)) for k, v in res.items() if v}, res, lams


if __name__ == "__main__":
    K = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    for name in sys.argv[1].split(","):
        m, res, lams = run(name, K)
        print(f"{name:10s} split_seed={os.environ.get('SPLIT_SEED', ba.SEED)} K={K} gamma={GAMMA} deltas={DELTAS} " + "  ".join(f"{k} {v:.4g}" for k, v in m.items())
              + f"  lambdas {lams}", flush=True)
