import sys, numpy as np, warnings, json
sys.path.insert(0, "/work/main/benchmarks")
import bench_accuracy as B
from sklearn.model_selection import StratifiedKFold
from sklearn.metrics import roc_auc_score
warnings.simplefilter("ignore")
out = {}
for seed in (1, 2):
    for name in sys.argv[1].split(","):
        task, X, y, desc = B.load_table(name, None)
        yv = y.to_numpy()
        cv = StratifiedKFold(5, shuffle=True, random_state=seed)
        s = {"HGB(100)": [], "logistic": []}
        for f,(tr,te) in enumerate(cv.split(X,yv)):
            Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
            for m, est in (("HGB(100)", B.hgb(task, 100)), ("logistic", B.linear(task, X))):
                est.fit(Xtr, yv[tr]); s[m].append(roc_auc_score(yv[te], est.predict_proba(Xte)[:,1]))
        out[f"{name} seed{seed}"] = {m: float(np.mean(v)) for m, v in s.items()}
        print(name, seed, {m: round(v, 5) for m, v in out[f"{name} seed{seed}"].items()}, flush=True)
json.dump(out, open("/work/main/benchmarks/results/lines79/classifier_peers_seeds12.json", "w"), indent=1)
