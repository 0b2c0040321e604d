"""Experiments 2/3: jaxtree default estimator on bench_accuracy's tables and 5 folds,
baseline vs nice bounds. Usage: tables.py --tables a,b --slacks none,0.01,0.05"""
import argparse, json, pathlib, sys, time, warnings
HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE)); sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
import numpy as np
import pandas as pd
import nice
import bench_accuracy as ba
from sklearn.model_selection import KFold, StratifiedKFold

ap = argparse.ArgumentParser()
ap.add_argument("--tables", required=True)
ap.add_argument("--slacks", default="none,0.01")
ap.add_argument("--folds", type=int, default=5)
ap.add_argument("--out", required=True)
ap.add_argument("--cv-seeds", default="0", help="comma list of KFold random_state (0: the benchmark's)")
a = ap.parse_args()
slacks = [None if s == "none" else (s if s.startswith("j") else float(s)) for s in a.slacks.split(",")]
out = json.loads(pathlib.Path(a.out).read_text()) if pathlib.Path(a.out).exists() else {}

for name in a.tables.split(","):
    task, X, y, desc = ba.load_table(name, None)
    yv = y.to_numpy()
    nan_cols = {c: int(v) for c, v in X.isna().sum().items() if v}
    num = [c for c in X.columns if not isinstance(X[c].dtype, pd.CategoricalDtype)]
    print(f"\n== {name}: {len(y)} rows, p={X.shape[1]} ({X.shape[1]-len(num)} categorical), "
          f"{task}; NaN cells per column: {nan_cols or 'none'}", flush=True)
    splits = []
    for cs in [int(v) for v in a.cv_seeds.split(",")]:
        cv = (KFold(a.folds, shuffle=True, random_state=cs) if task == "regression"
              else StratifiedKFold(a.folds, shuffle=True, random_state=cs))
        splits += list(cv.split(X, yv))
    rec = {str(s): {"scores": [], "terms": [], "fit_s": [], "widen": []} for s in slacks}
    for f, (tr, te) in enumerate(splits):
        Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
        ytr, yte = yv[tr], yv[te]
        if f == 0:  # the rule on the raw numeric columns of fold 0's training rows
            lo0 = Xtr[num].min().to_numpy(np.float64); hi0 = Xtr[num].max().to_numpy(np.float64)
            for sl in slacks:
                if sl is None or isinstance(sl, str):
                    continue
                lo, hi = nice.nice_bounds(lo0, hi0, sl)
                print(f"  rule slack {sl} on fold-0 numeric columns:", flush=True)
                for j, c in enumerate(num):
                    sp = hi0[j] - lo0[j]
                    if lo[j] != lo0[j] or hi[j] != hi0[j]:
                        two = Xtr[c].dropna().nunique() == 2
                        print(f"    {c}: [{lo0[j]:.6g}, {hi0[j]:.6g}] -> [{lo[j]:.6g}, {hi[j]:.6g}]"
                              f" (+{((hi[j]-lo[j])-sp)/sp*100:.2f}% span)"
                              + ("  ** two-valued column **" if two else ""), flush=True)
                nch = int(np.sum((lo != lo0) | (hi != hi0)))
                print(f"    -> {nch} of {len(num)} numeric columns widened", flush=True)
        line = []
        for sl in slacks:
            nice.install(sl); nice.LOG.clear()
            est = ba.jaxtree_model(task)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter(); est.fit(Xtr, ytr); dt = time.perf_counter() - t0
                sc = ba.score(task, est, Xte, yte)
            r = rec[str(sl)]
            r["scores"].append(sc); r["fit_s"].append(dt); r["terms"].append(ba.n_terms(est))
            r["widen"].append(nice.widened_summary(nice.LOG))
            if f == 0:
                try:
                    r["formula0"] = est.formula()
                except Exception as e:  # noqa: BLE001
                    r["formula0"] = f"<formula failed: {e!r}>"
            line.append(f"{sl}: {sc:.4f} ({dt:.1f}s, {r['terms'][-1]} terms)")
        nice.install(None)
        print(f"  fold {f}: " + "; ".join(line), flush=True)
    print(f"  internal from_extremes calls (changed, p, max rel widening), fold 0: "
          + "; ".join(f"{k}: {v['widen'][0]}" for k, v in rec.items() if k != 'None'), flush=True)
    for k, v in rec.items():
        print(f"  formula fold 0, slack {k}:\n    {v.get('formula0')}", flush=True)
    base = np.array(rec["None"]["scores"]) if "None" in rec else None
    print(f"  MEAN ({'RMSE' if task == 'regression' else 'AUC'}):", flush=True)
    for k, v in rec.items():
        s = np.array(v["scores"])
        extra = ""
        if base is not None and k != "None":
            d = s - base
            better = int(np.sum(d < 0) if task == "regression" else np.sum(d > 0))
            extra = f"  diff {np.mean(d):+.4f} ({np.mean(d)/np.mean(base)*100:+.2f}%), better in {better}/{len(s)} folds"
        print(f"    slack {k:5s}: {np.mean(s):.4f} (sd {np.std(s):.4f}), terms {np.mean(v['terms']):.1f}{extra}", flush=True)
    out[name] = {"task": task, "rows": int(len(y)), "nan_cells": nan_cols, **rec}
    pathlib.Path(a.out).write_text(json.dumps(out, indent=1, default=str))
