"""Would a classifier size chosen by cross-validation on the training rows beat k = 10?
For each of bench_accuracy's 5 stratified outer folds: an inner 5-fold cross-validation of
TreeClassifier(k=K) on the outer training rows for each K in KS, the K with the best pooled
inner log-loss (and, separately, the best mean inner AUC) refitted on the outer training
rows and scored on the outer test rows (AUC). jaxtree's cache off, one process.

    python cvk.py CHECKOUT TABLE[,TABLE...]"""
import json, os, sys, warnings
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import numpy as np
warnings.simplefilter("ignore")
import jaxtree
import bench_accuracy as B
from sklearn.metrics import log_loss, roc_auc_score
from sklearn.model_selection import StratifiedKFold

KS = (2, 4, 6, 8, 10, 14, 20)
for name in sys.argv[2].split(","):
    task, X, y, _ = B.load_table(name, None)
    res = {"logloss": [], "auc": [], "k10": [], "k_ll": [], "k_auc": []}
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=B.SEED).split(X, y):
        Xtr, ytr = X.iloc[tr], y.iloc[tr]
        ll = {k: 0.0 for k in KS}; auc = {k: [] for k in KS}
        for itr, ite in StratifiedKFold(5, shuffle=True, random_state=1).split(Xtr, ytr):
            yi = ytr.iloc[ite].to_numpy()
            for k in KS:
                est = jaxtree.TreeClassifier(k=k).fit(Xtr.iloc[itr], ytr.iloc[itr])
                pr = np.asarray(est.predict_proba(Xtr.iloc[ite]))
                ll[k] += log_loss(yi, pr, labels=est.classes_) * len(ite)
                auc[k].append(roc_auc_score(yi == est.classes_[1], pr[:, 1]))
        k_ll = min(KS, key=lambda k: ll[k]); k_auc = max(KS, key=lambda k: np.mean(auc[k]))
        score = {}
        for k in {k_ll, k_auc, 10}:
            est = jaxtree.TreeClassifier(k=k).fit(Xtr, ytr)
            score[k] = B.score(task, est, X.iloc[te], y.iloc[te].to_numpy())
        res["logloss"].append(score[k_ll]); res["auc"].append(score[k_auc]); res["k10"].append(score[10])
        res["k_ll"].append(k_ll); res["k_auc"].append(k_auc)
        print(name, "fold", len(res["k10"]) - 1, "k by log-loss", k_ll, "k by AUC", k_auc,
              {k: round(v, 4) for k, v in score.items()}, flush=True)
    print(json.dumps({"table": name, **{k: (float(np.mean(v)) if k in ("logloss", "auc", "k10") else v)
                                        for k, v in res.items()}}), flush=True)
