import sys, os, time, numpy as np, warnings
import pathlib
_HERE = pathlib.Path(__file__).resolve().parents[3]  # the checkout this lies in
sys.path.insert(0, str(_HERE)); sys.path.insert(0, str(_HERE / "benchmarks"))
import jaxtree, bench_accuracy as B
from sklearn.model_selection import StratifiedKFold, KFold
from sklearn.metrics import roc_auc_score, mean_squared_error
warnings.simplefilter("ignore")
kw = eval(os.environ.get("KW", "{}"))
for name in sys.argv[1:]:
    task, X, y, desc = B.load_table(name, B.TABLES[name][2])
    yv = y.to_numpy(); res = []; ts = []
    cv = (StratifiedKFold if task == "classification" else KFold)(5, shuffle=True, random_state=B.SEED)
    for f, (tr, te) in enumerate(cv.split(X, yv)):
        Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
        E = jaxtree.TreeClassifier if task == "classification" else jaxtree.TreeRegressor
        t = time.time(); e = E(**kw).fit(Xtr, yv[tr]); ts.append(time.time() - t)
        if f == 0:  # a warm fit of fold 0
            t = time.time(); E(**kw).fit(Xtr, yv[tr]); warm = time.time() - t
        res.append(roc_auc_score(yv[te], e.predict_proba(Xte)[:, 1]) if task == "classification" else mean_squared_error(yv[te], e.predict(Xte)) ** 0.5)
    print(kw, name, round(float(np.mean(res)), 5), [round(r, 5) for r in res], "warm fold0", round(warm, 2), "fits", [round(t, 2) for t in ts[1:]], flush=True)
