"""Outer 5 folds (bench_accuracy's split); on each training part, an inner 5-fold CV picks
between the default and shapes="additive"; test scores of default, additive and the CV pick:
python benchmarks/results/additive69/cv_choice.py TABLE... (from the repository root; SPLIT_SEED=s) (paper = the paper's function, 1000 rows)"""
import sys, warnings, json, os
warnings.simplefilter("ignore")
sys.path.insert(0, "benchmarks")
import numpy as np, pandas as pd
import bench_accuracy as ba, jaxtree
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.metrics import roc_auc_score, log_loss
SEED = int(os.environ.get("SPLIT_SEED", ba.SEED))
def load(name):
    if name == "paper":
        from jaxtree.datasets import paper_function
        rng = np.random.default_rng(SEED); X = rng.uniform(size=(1000, 10))
        y = paper_function(X) + 0.2 * rng.standard_normal(1000)
        return "regression", pd.DataFrame(X, columns=[f"x{i}" for i in range(10)]), pd.Series(y)
    task, X, y, _ = ba.load_table(name, ba.TABLES[name][2]); return task, X, y
def make(task, opt):
    cls = jaxtree.TreeRegressor if task == "regression" else jaxtree.TreeClassifier
    return cls(**({"shapes": "additive"} if opt else {}))
def loss(task, est, X, y):
    if task == "regression":
        return np.mean((np.asarray(est.predict(X), float) - y) ** 2)
    p = np.clip(np.asarray(est.predict_proba(X))[:, 1], 1e-6, 1 - 1e-6); return log_loss(y, p, labels=[0, 1])
def auc(est, X, y):
    return roc_auc_score(y, np.asarray(est.predict_proba(X))[:, 1])
def kf(task):
    return (KFold(5, shuffle=True, random_state=SEED) if task == "regression"
            else StratifiedKFold(5, shuffle=True, random_state=SEED))
out = {}
for name in sys.argv[1:]:
    task, X, y = load(name); yv = y.to_numpy()
    rows = []
    for f, (tr, te) in enumerate(kf(task).split(X, yv)):
        Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
        ytr, yte = yv[tr], yv[te]
        inner = {0: [], 1: []}; inner_auc = {0: [], 1: []}
        for itr, ite in kf(task).split(Xtr, ytr):
            A, B = Xtr.iloc[itr].reset_index(drop=True), Xtr.iloc[ite].reset_index(drop=True)
            for opt in (0, 1):
                e = make(task, opt).fit(A, ytr[itr])
                inner[opt].append(loss(task, e, B, ytr[ite]))
                if task != "regression": inner_auc[opt].append(auc(e, B, ytr[ite]))
        test = {}
        for opt in (0, 1):
            e = make(task, opt).fit(Xtr, ytr)
            test[opt] = (np.sqrt(loss(task, e, Xte, yte)) if task == "regression" else auc(e, Xte, yte))
        d = np.array(inner[1]) - np.array(inner[0])
        rec = dict(fold=f, inner_default=float(np.mean(inner[0])), inner_additive=float(np.mean(inner[1])),
                   diff_se=float(d.std(ddof=1) / np.sqrt(len(d))), test_default=float(test[0]),
                   test_additive=float(test[1]))
        if task != "regression":
            rec.update(inner_auc_default=float(np.mean(inner_auc[0])), inner_auc_additive=float(np.mean(inner_auc[1])))
        rows.append(rec)
        print(name, json.dumps(rec), flush=True)
    out[name] = dict(task=task, folds=rows)
    pick = lambda r: r["test_additive"] if r["inner_additive"] < r["inner_default"] else r["test_default"]
    m = lambda k: np.mean([r[k] for r in rows])
    print(f"== {name}: default {m('test_default'):.5g} additive {m('test_additive'):.5g} "
          f"cv pick {np.mean([pick(r) for r in rows]):.5g} (additive picked {sum(r['inner_additive'] < r['inner_default'] for r in rows)}/5)", flush=True)
json.dump(out, open(os.path.join(os.path.dirname(os.path.abspath(__file__)), f"cv_choice_{'_'.join(sys.argv[1:])[:60]}_{SEED}.json"), "w"), indent=1)
