"""Measured outside the library: the classifier twin of ``shapes="additive"``'s GAM, alone, on
the classification tables (bench_accuracy.py's five stratified folds, split seed 0).

Every numeric covariate of more than two values gets 16 hats on its training range with a
second-difference penalty plus ``delta`` times a ridge on every coefficient (the double
penalty); 0/1 and one-hot columns one coefficient each (centred, the same ridge). A penalised
logistic fit by iteratively reweighted least squares for every ``(lam, delta)`` of the grid,
the pair of least UBRE, ``deviance / n + 2 * GAMMA * edf / n`` (the binomial scale is known),
kept. Test AUC beside the benchmark's logistic regression and HGB(100), fitted on the same
folds here.

    python logistic_gam.py pima,breast_cancer,titanic,spam7,default
"""
import os, sys, warnings
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..")); sys.path.insert(0, os.path.join(HERE, "..", "..", ".."))
import numpy as np, pandas as pd
import bench_accuracy as ba
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold
warnings.simplefilter("ignore")
from gcv import hats

GAMMA = float(os.environ.get("GAMMA", "1.4"))
LAMS = 10.0 ** np.arange(-3, 4.5, 0.5)
DELTAS = tuple(float(d) for d in os.environ.get("DELTAS", "0,0.01,0.1,1").split(","))
K = 16


def design(A, lo, hi, smooth, mean):
    cols = [np.ones((len(A), 1))]
    for j in range(A.shape[1]):
        if smooth[j]:
            cols.append(hats((A[:, j] - lo[j]) / (hi[j] - lo[j]), K)[:, 1:])
        else:
            cols.append(A[:, j:j + 1] - mean[j])
    return np.hstack(cols)


def penalties(smooth):
    blocks = [K - 1 if s else 1 for s in smooth]
    m = 1 + sum(blocks)
    P, I = np.zeros((m, m)), np.eye(m)
    I[0, 0] = 0
    c = 1
    D = np.diff(np.eye(K), 2, axis=0)[:, 1:]
    for s, b in zip(smooth, blocks):
        if s:
            P[c:c + b, c:c + b] = D.T @ D
        c += b
    return P, I


def irls(X, y, Q, beta=None, iters=25):
    beta = np.zeros(X.shape[1]) if beta is None else beta.copy()
    for _ in range(iters):
        eta = np.clip(X @ beta, -30, 30)
        mu = 1 / (1 + np.exp(-eta))
        w = np.maximum(mu * (1 - mu), 1e-6)
        z = eta + (y - mu) / w
        G = X.T @ (X * w[:, None])
        new = np.linalg.solve(G + Q, X.T @ (w * z))
        done = np.max(np.abs(new - beta)) < 1e-6
        beta = new
        if done:
            break
    eta = np.clip(X @ beta, -30, 30)
    mu = 1 / (1 + np.exp(-eta))
    w = np.maximum(mu * (1 - mu), 1e-6)
    G = X.T @ (X * w[:, None])
    edf = float(np.trace(np.linalg.solve(G + Q, G)))
    dev = -2 * np.sum(y * np.log(np.maximum(mu, 1e-12)) + (1 - y) * np.log(np.maximum(1 - mu, 1e-12)))
    return beta, dev, edf


def fit(A, y):
    lo, hi, mean = A.min(0), A.max(0), A.mean(0)
    smooth = np.array([len(np.unique(A[:, j])) > 2 and hi[j] > lo[j] for j in range(A.shape[1])])
    X = design(A, lo, hi, smooth, mean)
    P, I = penalties(smooth)
    n = len(y)
    scale = np.trace(X.T @ X * 0.25) / X.shape[1]
    best, beta = None, None
    for delta in DELTAS:
        beta = None
        for lam in LAMS[::-1]:  # from smooth to rough, warm-started
            Q = scale * (lam * (P + delta * I) + 1e-6 * I)
            beta, dev, edf = irls(X, y, Q, beta)
            ubre = dev / n + 2 * GAMMA * edf / n
            if best is None or ubre < best[0]:
                best = (ubre, beta.copy(), lam, delta, edf)
    return (lambda B: design(B, lo, hi, smooth, mean) @ best[1]), best


def run(name):
    task, X, y, _ = ba.load_table(name, None)
    yv = np.asarray(y, float)
    Xd = pd.get_dummies(X).astype(float)
    out = {"gam": [], "logistic": [], "hgb100": []}
    chosen = []
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=ba.SEED).split(Xd, yv):
        med = Xd.iloc[tr].median()
        A, At = Xd.iloc[tr].fillna(med).to_numpy(), Xd.iloc[te].fillna(med).to_numpy()
        f, best = fit(A, yv[tr])
        chosen.append((best[2], best[3], round(best[4], 1)))
        out["gam"].append(roc_auc_score(yv[te], f(At)))
        for k, m in (("logistic", ba.linear(task, X)), ("hgb100", ba.hgb(task, 100))):
            m.fit(X.iloc[tr], yv[tr])
            out[k].append(roc_auc_score(yv[te], m.predict_proba(X.iloc[te])[:, 1]))
    print(f"{name:14s} gamma={GAMMA} deltas={DELTAS} " + "  ".join(f"{k} {np.mean(v):.4f}" for k, v in out.items())
          + f"  (lam, delta, edf) {chosen}", flush=True)


if __name__ == "__main__":
    for name in sys.argv[1].split(","):
        run(name)
