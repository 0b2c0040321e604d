import sys; sys.path.insert(0, "/work/main/benchmarks"); sys.path.insert(0, "/work/main")
import numpy as np, pandas as pd, bench_accuracy as acc, warnings; warnings.simplefilter("ignore")
from sklearn.model_selection import KFold, StratifiedKFold
from jaxtree import _scaling as S
for name in acc.TABLES:
    task, X, y, d = acc.load_table(name, None); yv = y.to_numpy()
    cv = (KFold(5, shuffle=True, random_state=0) if task == "regression" else StratifiedKFold(5, shuffle=True, random_state=0))
    num = [c for c in X.columns if not isinstance(X[c].dtype, pd.CategoricalDtype)]
    out = []
    for f, (tr, te) in enumerate(cv.split(X, yv)):
        x = X[num].to_numpy(float)[tr]
        x = np.where(np.isnan(x), np.nanmin(x, 0), x)
        lo, hi = x.min(0), x.max(0)
        two = S.two_valued(x, None, lo, hi)
        a, b = S.far_tails(*S.tail_sample(x), lo, hi, two)
        out.append([c for j, c in enumerate(num) if a[j] != lo[j] or b[j] != hi[j]])
    print(name, out)
