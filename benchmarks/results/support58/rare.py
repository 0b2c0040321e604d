"""A two-valued column's candidates need min_support rows at its rarer value (measured, not built).

    python rare.py TABLE[,TABLE...] [patched|none|both]

bench_accuracy.py's five folds and default estimator; "patched" wraps
jaxtree._fit.source.with_support so that every candidate on a column of only 0 and 1 (an
indicator, a level, a 0/1 column) is refused when fewer than min_support rows of positive
weight take its rarer value (today such a column's candidates count the rows where the basis
function is nonzero, every row for most functions, so a leaf can fit one row's flag)."""
import sys, warnings, pathlib
import numpy as np, jax
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3]))
warnings.simplefilter("ignore")
import bench_accuracy as acc
from jaxtree._fit import source
from sklearn.model_selection import KFold, StratifiedKFold

orig = source.with_support
refused = []


def patched(data, spec, xs, sw):
    out = orig(data, spec, xs, sw)
    least = source.support_rows(spec, len(xs), sw)
    if least <= 1:
        return out
    x = np.asarray(xs) if sw is None else np.asarray(xs)[np.asarray(sw) > 0]
    q = spec.basis.q
    bad = [j for j in range(x.shape[1]) if np.all((x[:, j] == 0) | (x[:, j] == 1))
           and min(int((x[:, j] == 1).sum()), int((x[:, j] == 0).sum())) < least]
    refused.append(len(bad))
    if not bad:
        return out
    width = out.x.shape[-1] * q
    allowed = np.ones(width, bool) if out.allowed is None else np.array(out.allowed)
    for j in bad:
        allowed[j * q:(j + 1) * q] = False
    return out._replace(allowed=jax.device_put(allowed))


tables, mode = sys.argv[1].split(","), (sys.argv[2] if len(sys.argv) > 2 else "both")
modes = ["none", "patched"] if mode == "both" else [mode]
for name in tables:
    task, X, y, desc = acc.load_table(name, None)
    yv = y.to_numpy()
    cv = (KFold(5, shuffle=True, random_state=0) if task == "regression"
          else StratifiedKFold(5, shuffle=True, random_state=0))
    res = {m: [] for m in modes}
    for f, (tr, te) in enumerate(cv.split(X, yv)):
        Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
        for m in modes:
            source.with_support = patched if m == "patched" else orig
            refused.clear()
            est = acc.jaxtree_model(task).fit(Xtr, yv[tr])
            res[m].append(acc.score(task, est, Xte, yv[te]))
            if m == "patched":
                print(f"  {name} fold {f}: columns refused per search {refused}", flush=True)
    print("MEAN", name, len(yv), task, {m: round(float(np.mean(v)), 5) for m, v in res.items()},
          {m: [round(float(s), 4) for s in v] for m, v in res.items()}, flush=True)
