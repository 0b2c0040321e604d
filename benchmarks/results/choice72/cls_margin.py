"""The binary classifier's choice scores per fold (bench_accuracy's stratified folds): how far
the additive settings' cross-validated log-loss is from the default's, to judge a gate.
PYTHONPATH=CHECKOUT python cls_margin.py TABLE..."""
import sys, warnings, json; warnings.simplefilter("ignore")
import jaxtree; sys.path.insert(0, "benchmarks")
import numpy as np, bench_accuracy as ba
from sklearn.model_selection import StratifiedKFold
for name in sys.argv[1:]:
    _, X, y, _ = ba.load_table(name, ba.TABLES[name][2]); y = np.asarray(y)
    for f, (tr, te) in enumerate(StratifiedKFold(5, shuffle=True, random_state=ba.SEED).split(X, y)):
        e = jaxtree.TreeClassifier().fit(X.iloc[tr], y[tr])
        print(json.dumps(dict(table=name, fold=f, kept=e.shape_order_,
                              scores={k: round(float(v), 4) for k, v in (e.shape_order_scores_ or {}).items()})), flush=True)
