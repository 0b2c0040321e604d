"""TreeRegressor(target_transform="auto") on bench_accuracy's 5 folds: per fold, the
held-out MSE of each transform (target_transform_scores_, on the fit's own 25% split), the
choice, and the test RMSE of the identity and of each candidate refitted on the whole
training fold -- to judge a margin rule without refitting per rule.

    python scores.py CHECKOUT TABLE[,TABLE...]"""
import json, os, sys, warnings
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import numpy as np
warnings.simplefilter("ignore")
import jaxtree
import bench_accuracy as B
from sklearn.model_selection import KFold

for name in sys.argv[2].split(","):
    task, X, y, _ = B.load_table(name, None)
    for i, (tr, te) in enumerate(KFold(5, shuffle=True, random_state=B.SEED).split(X)):
        auto = jaxtree.TreeRegressor(target_transform="auto").fit(X.iloc[tr], y.iloc[tr])
        sc = {k: float(v) for k, v in auto.target_transform_scores_.items()}
        test = {}
        for t in [k for k, v in sc.items() if np.isfinite(v)]:
            est = jaxtree.TreeRegressor(target_transform=None if t == "identity" else t)
            est.fit(X.iloc[tr], y.iloc[tr])
            test[t] = round(B.score(task, est, X.iloc[te], y.iloc[te].to_numpy()), 4)
        print(json.dumps({"table": name, "fold": i, "choice": auto.target_transform_,
                          "heldout_mse": sc, "test_rmse": test}), flush=True)
