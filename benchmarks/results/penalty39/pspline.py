"""Prototype: main-effect P-splines (hats, 2nd-difference penalty) by backfitting, lambda chosen on held-out rows."""
import os, sys, warnings
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")); sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np, pandas as pd
import bench_accuracy as ba
from cyclic import design
from sklearn.model_selection import KFold
warnings.simplefilter("ignore")

def pen(K, lam, n):
    D = np.diff(np.eye(K), 2, axis=0)
    return lam * n / K * (D.T @ D) + 1e-6 * n / K * np.eye(K)

def backfit(Hs, r0, lam, sweeps=30):
    n = len(r0)
    inv = [np.linalg.inv(H.T @ H + pen(H.shape[1], lam, n)) for H in Hs]
    C = [np.zeros(H.shape[1]) for H in Hs]; r = r0.copy()
    for s in range(sweeps):
        for j, H in enumerate(Hs):
            r += H @ C[j]; C[j] = inv[j] @ (H.T @ r); C[j] -= 0; r -= H @ C[j]
    return C

def run(name, K, lams):
    task, X, y, _ = ba.load_table(name, None)
    Xd = pd.get_dummies(X).astype(float); Xd = Xd.fillna(Xd.median())
    A = Xd.to_numpy(); yv = y.to_numpy(float)
    out = []
    for tr, te in KFold(5, shuffle=True, random_state=ba.SEED).split(A):
        a, b = A[tr], yv[tr]
        perm = np.random.default_rng(0).permutation(len(tr)); nv = len(tr) // 5
        va, fi = perm[:nv], perm[nv:]
        lo, hi = a[fi].min(0), a[fi].max(0); mu = b[fi].mean()
        Hf, Hv = design(a[fi], lo, hi, K), design(a[va], lo, hi, K)
        errs = []
        for lam in lams:
            C = backfit(Hf, b[fi] - mu, lam)
            errs.append(np.mean((b[va] - mu - sum(H @ c for H, c in zip(Hv, C))) ** 2))
        lam = lams[int(np.argmin(errs))]
        lo, hi = a.min(0), a.max(0); mu = b.mean()
        C = backfit(design(a, lo, hi, K), b - mu, lam)
        pred = mu + sum(H @ c for H, c in zip(design(A[te], lo, hi, K), C))
        out.append((np.sqrt(np.mean((pred - yv[te]) ** 2)), lam))
    return np.mean([o[0] for o in out]), out

lams = [1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100]
for name in sys.argv[1].split(","):
    for K in (8, 16, 32):
        m, f = run(name, K, lams)
        print(f"{name:10s} K={K:2d} mean {m:.4f} folds", " ".join(f"{v:.3f}({l:g})" for v, l in f), flush=True)
