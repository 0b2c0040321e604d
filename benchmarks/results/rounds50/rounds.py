"""More than one backfitting round after the shape stage (issue 29: "cyclic refitting of all
terms until the held-out loss stops falling"; measured outside the library's code by patching
the in-memory source's ``backfit``).

Today's round (``jaxtree._fit.source.InMemory.backfit``): the shapes refitted given the tree
(one sweep), then the tree's weights refined given the shapes. ``ROUNDS=R SWEEPS=S``: that
alternation R times, each shape refit S sweeps (the terms and the tree's structure fixed,
so the formula's terms are the default's; only their coefficients move toward the joint
least-squares fit). bench_accuracy.py's tables and five folds.

    ROUNDS=3 SWEEPS=3 python benchmarks/results/rounds50/rounds.py diamonds,weather,flights
"""
import json
import os
import pathlib
import sys
import time
import warnings

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
import bench_accuracy as acc  # noqa: E402
from jaxtree import shapes as shapes_  # noqa: E402
from jaxtree._fit import select, source  # noqa: E402

R = int(os.environ.get("ROUNDS", "1"))
S = int(os.environ.get("SWEEPS", "1"))
real = source.InMemory.backfit


def backfit(self, program, terms, sspec, fit=None):
    if R == 1 and S == 1:
        return real(self, program, terms, sspec, fit)
    data = self.data(shard=False)
    gr = fit.grams if fit is not None else None
    for r in range(R):
        rdata = data._replace(y=select.minus(data.y, self._tree_fit(program)))
        if gr is None:
            gr = shapes_.grams_jit(rdata, sspec)
        if fit is not None and r == 0:
            state = shapes_.finish_jit(fit.state, rdata, gr, sspec, S)
        else:
            state = shapes_.refit(terms, rdata, sspec, S, gr=gr)
        terms = state.shapes
        resid = data._replace(y=select.minus(data.y, state.fit))
        program, mse = self._refine(program, resid)
    return terms, program, float(mse)


source.InMemory.backfit = backfit


def main(names):
    from sklearn.model_selection import KFold, StratifiedKFold
    out = {}
    for name in names:
        task, X, y, _ = acc.load_table(name, None)
        yv = y.to_numpy()
        cv = (KFold(5, shuffle=True, random_state=acc.SEED) if task == "regression"
              else StratifiedKFold(5, shuffle=True, random_state=acc.SEED))
        scores, secs = [], []
        for tr, te in cv.split(X, yv):
            Xtr, Xte = X.iloc[tr].reset_index(drop=True), X.iloc[te].reset_index(drop=True)
            est = acc.jaxtree_model(task)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = time.perf_counter()
                est.fit(Xtr, yv[tr])
                secs.append(time.perf_counter() - t)
                scores.append(acc.score(task, est, Xte, yv[te]))
            print(f"  {name} fold {len(scores) - 1}: {scores[-1]:.5f} ({secs[-1]:.1f} s)", flush=True)
        out[name] = {"rounds": R, "sweeps": S, "per_fold": scores, "mean": float(np.mean(scores)),
                     "fit_s": secs}
        print(f"{name} R={R} S={S}: {np.mean(scores):.5f}", flush=True)
    (HERE / f"rounds_R{R}_S{S}_{'_'.join(names)}.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main(sys.argv[1].split(","))
