import sys, time, json, numpy as np, warnings
sys.path.insert(0, "/work/main/benchmarks")
import bench_accuracy as B
from sklearn.model_selection import StratifiedKFold
from sklearn.metrics import roc_auc_score
import jaxtree
warnings.simplefilter("ignore")
seed = int(sys.argv[1]); ks = [int(k) for k in sys.argv[2].split(",")]; tables = sys.argv[3].split(",")
out = {}
for name in tables:
    task, X, y, desc = B.load_table(name, None)
    yv = y.to_numpy()
    cv = StratifiedKFold(5, shuffle=True, random_state=seed)
    res = {k: [] for k in ks}; tms = {k: [] for k in ks}
    for f,(tr,te) in enumerate(cv.split(X,yv)):
        Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
        for k in ks:
            t = time.perf_counter(); est = jaxtree.TreeClassifier(k=k).fit(Xtr, yv[tr]); tms[k].append(time.perf_counter() - t)
            res[k].append(roc_auc_score(yv[te], est.predict_proba(Xte)[:,1]))
    out[name] = {k: float(np.mean(v)) for k, v in res.items()}
    print(name, {k: round(v, 5) for k, v in out[name].items()}, {k: round(float(np.median(v)),2) for k, v in tms.items()}, flush=True)
json.dump(out, open(f"/work/main/benchmarks/results/lines79/classifier_k_seed{seed}.json", "w"), indent=1)
