"""Where flights' gap to HistGradientBoosting lies: the benchmark's five folds of flights
(regression, RMSE) and flights delay > 15 (AUC), HGB(100) and jaxtree's default with every
covariate, without `day`, and with `day` replaced by the day of the year (`month`, `day` ->
one date covariate). python flights_dates.py"""
import sys, pathlib, numpy as np, warnings
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3]))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
import bench_accuracy as B
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.metrics import roc_auc_score, mean_squared_error
import jaxtree
warnings.simplefilter("ignore")
for name in ("flights_class", "flights"):
    task, X, y, desc = B.load_table(name, B.TABLES[name][2])
    yv = y.to_numpy()
    doy = pd_doy = (np.array([0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334])[X["month"].to_numpy().astype(int) - 1]
                    + X["day"].to_numpy())
    views = {"all": X, "no day": X.drop(columns=["day"]),
             "date": X.drop(columns=["day"]).assign(date=doy)}
    cv = (StratifiedKFold if task == "classification" else KFold)(5, shuffle=True, random_state=B.SEED)
    for vname, V in views.items():
        s = {"jaxtree": [], "HGB(100)": []}
        for tr, te in cv.split(V, yv):
            Xtr, Xte = V.iloc[tr].reset_index(drop=True), V.iloc[te].reset_index(drop=True)
            for m, est in (("jaxtree", (jaxtree.TreeClassifier if task == "classification" else jaxtree.TreeRegressor)()),
                           ("HGB(100)", B.hgb(task, 100))):
                est.fit(Xtr, yv[tr])
                if task == "classification":
                    s[m].append(roc_auc_score(yv[te], est.predict_proba(Xte)[:, 1]))
                else:
                    s[m].append(mean_squared_error(yv[te], est.predict(Xte)) ** 0.5)
        print(name, vname, {k: round(float(np.mean(v)), 5) for k, v in s.items()}, flush=True)
