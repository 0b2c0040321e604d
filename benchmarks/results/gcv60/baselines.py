"""Ridge and HistGradientBoosting(100) (bench_accuracy.py's) on the small regression tables'
five folds at other split seeds, beside gcv.py's runs at those seeds.

    python baselines.py mtcars,airquality,mpg,diabetes,boston 0,1,2
"""
import os, sys, warnings
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..")); sys.path.insert(0, os.path.join(HERE, "..", "..", ".."))
import numpy as np
import bench_accuracy as ba
from sklearn.model_selection import KFold
warnings.simplefilter("ignore")
for name in sys.argv[1].split(","):
    task, X, y, _ = ba.load_table(name, None)
    yv = np.asarray(y, float)
    for seed in map(int, sys.argv[2].split(",")):
        r = {"ridge": [], "hgb100": []}
        for tr, te in KFold(5, shuffle=True, random_state=seed).split(X):
            for k, m in (("ridge", ba.linear(task, X)), ("hgb100", ba.hgb(task, 100))):
                p = m.fit(X.iloc[tr], yv[tr]).predict(X.iloc[te])
                r[k].append(float(np.sqrt(np.mean((p - yv[te]) ** 2))))
        print(f"{name:10s} split_seed={seed} " + "  ".join(f"{k} {np.mean(v):.4g}" for k, v in r.items()), flush=True)
