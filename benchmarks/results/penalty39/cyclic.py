"""Prototype: EBM-style cyclic boosting of main-effect hat shapes (numpy), bench_accuracy folds."""
import os, sys, warnings
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import numpy as np, pandas as pd
import bench_accuracy as ba

from sklearn.model_selection import KFold
warnings.simplefilter("ignore")

def hats(z, K):
    g = np.clip(z, 0, 1) * (K - 1)
    return np.maximum(0, 1 - np.abs(g[:, None] - np.arange(K)[None, :]))

def design(X, lo, hi, K):
    Z = (X - lo) / np.where(hi > lo, hi - lo, 1)
    return [hats(Z[:, j], K) for j in range(X.shape[1])]

def boost(Hs, r0, lr, rounds, ridge, Hv=None, rv0=None, patience=50):
    n = len(r0); p = len(Hs)
    Gs = [np.linalg.inv(H.T @ H + ridge * n / H.shape[1] * np.eye(H.shape[1])) for H in Hs]
    C = [np.zeros(H.shape[1]) for H in Hs]
    r = r0.copy(); rv = None if Hv is None else rv0.copy()
    best, best_t, hist = np.inf, 0, []
    for t in range(rounds):
        for j in range(p):
            c = lr * (Gs[j] @ (Hs[j].T @ r))
            C[j] += c; r -= Hs[j] @ c
            if rv is not None: rv -= Hv[j] @ c
        if rv is not None:
            m = np.mean(rv ** 2); hist.append(m)
            if m < best - 1e-12: best, best_t = m, t + 1
            elif t + 1 - best_t >= patience: break
    return C, best_t

def run(name, K=16, lr=0.1, ridge=1e-3):
    task, X, y, _ = ba.load_table(name, None)
    # numeric matrix: one-hot categoricals via pandas
    Xd = pd.get_dummies(X, dummy_na=False).astype(float)
    Xd = Xd.fillna(Xd.median())
    A = Xd.to_numpy(); yv = y.to_numpy(float)
    cv = KFold(5, shuffle=True, random_state=ba.SEED)
    out = []
    for tr, te in cv.split(A):
        a, b = A[tr], yv[tr]
        rng = np.random.default_rng(0); perm = rng.permutation(len(tr)); nv = len(tr) // 5
        va, fi = perm[:nv], perm[nv:]
        lo, hi = a[fi].min(0), a[fi].max(0)
        mu = b[fi].mean()
        C, T = boost(design(a[fi], lo, hi, K), b[fi] - mu, lr, 5000, ridge, design(a[va], lo, hi, K), b[va] - mu)
        lo, hi = a.min(0), a.max(0); mu = b.mean()
        C, _ = boost(design(a, lo, hi, K), b - mu, lr, T, ridge)
        pred = mu + sum(H @ c for H, c in zip(design(A[te], lo, hi, K), C))
        out.append(np.sqrt(np.mean((pred - yv[te]) ** 2)))
    return np.mean(out), out

if __name__ == "__main__":
  for name in sys.argv[1].split(","):
    for K in (8, 16, 32):
        m, f = run(name, K=K)
        print(f"{name:10s} K={K:2d} mean {m:.4f} folds", " ".join(f"{v:.3f}" for v in f), flush=True)
