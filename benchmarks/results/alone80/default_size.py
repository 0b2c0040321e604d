import sys, numpy as np, warnings, time
import pathlib
_HERE = pathlib.Path(__file__).resolve().parents[3]  # the checkout this lies in
sys.path.insert(0, str(_HERE)); sys.path.insert(0, str(_HERE / "benchmarks"))
import jaxtree, bench_accuracy as B
from sklearn.model_selection import StratifiedKFold
from sklearn.metrics import roc_auc_score
warnings.simplefilter("ignore")
task, X, y, desc = B.load_table("default", None); yv = y.to_numpy()
for kw in [{}, {"validation_fraction": 0.2}, {"k": 4}, {"shapes": 0}]:
    res = []; info = []
    for f, (tr, te) in enumerate(StratifiedKFold(5, shuffle=True, random_state=B.SEED).split(X, yv)):
        e = jaxtree.TreeClassifier(**kw).fit(X.iloc[tr].reset_index(drop=True), yv[tr])
        res.append(roc_auc_score(yv[te], e.predict_proba(X.iloc[te].reset_index(drop=True))[:, 1]))
        info.append((e.k_, e.validation_fraction_, e.search_))
    print(kw, round(float(np.mean(res)), 5), [round(r, 5) for r in res], info[:2], flush=True)
