"""TreeClassifier with a deviance stop: tol = tau / (2 n L0), L0 the intercept-only log-loss
of the training rows. python deviance_stop.py SEED TAUS TABLES (tau 0 = the default)"""
import sys, time, json, numpy as np, warnings
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
    res = {k: [] for k in taus}; tms = {k: [] for k in taus}; ks = {k: [] for k in taus}
    for f, (tr, te) in enumerate(cv.split(X, yv)):
        Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
        p = yv[tr].mean(); n = len(tr)
        L0 = -(p * np.log(p) + (1 - p) * np.log(1 - p))
        for tau in taus:
            kw = {} if tau == 0 else dict(tol=tau / (2 * n * L0))
            t = time.perf_counter(); est = jaxtree.TreeClassifier(**kw).fit(Xtr, yv[tr]); tms[tau].append(time.perf_counter() - t)
            res[tau].append(roc_auc_score(yv[te], est.predict_proba(Xte)[:, 1]))
            ks[tau].append(len(getattr(est, "history_", [])) if not isinstance(getattr(est, "history_", None), list) else -1)
    print(name, {k: round(float(np.mean(v)), 5) for k, v in res.items()},
          {k: round(float(np.median(v)), 2) for k, v in tms.items()}, ks, flush=True)
