"""TreeClassifier sized by a penalised path: fit k=10, m* = argmin_m 2 n H[m] + tau m over the
search's training log-loss path H, refit k=m*. python deviance_path.py SEED TAUS TABLES"""
import sys, time, numpy as np, warnings
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[3])); sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
import bench_accuracy as B
from sklearn.model_selection import StratifiedKFold
from sklearn.metrics import roc_auc_score
import jaxtree
warnings.simplefilter("ignore")
seed = int(sys.argv[1]); taus = [float(k) for k in sys.argv[2].split(",")]; tables = sys.argv[3].split(",")
for name in tables:
    task, X, y, desc = B.load_table(name, B.TABLES[name][2])
    yv = y.to_numpy()
    cv = StratifiedKFold(5, shuffle=True, random_state=seed)
    res = {k: [] for k in [0] + taus}; ms = {k: [] for k in taus}
    for f, (tr, te) in enumerate(cv.split(X, yv)):
        Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
        n = len(tr)
        est = jaxtree.TreeClassifier().fit(Xtr, yv[tr])
        res[0].append(roc_auc_score(yv[te], est.predict_proba(Xte)[:, 1]))
        H = np.asarray(est.history_, np.float64)[: est.k_ + 1]
        for tau in taus:
            m = int(np.argmin(2 * n * H + tau * np.arange(len(H))))
            ms[tau].append(m)
            e2 = est if m == est.k_ else jaxtree.TreeClassifier(k=max(m, 1)).fit(Xtr, yv[tr])
            res[tau].append(roc_auc_score(yv[te], e2.predict_proba(Xte)[:, 1]))
    print(name, {k: round(float(np.mean(v)), 5) for k, v in res.items()}, ms, flush=True)
