"""Prototype (thirteenth session, not in the library; BENCHMARKS.md, "Small tables"): a host-side gate that predicts whether
the coarse shape stage (shapes="auto" below 2,000 rows, knots (3, 2)) would accept a term,
so that the stage (and its +3 s of compilation) runs only where it helps.

Gate: the default fit's residual on its training rows; a seeded 80/20 split of them; per
covariate a least-squares fit of the residual on 3 hats over the covariate's training range
(the coarse main shape; no box, no penalty); the candidate with the lowest training MSE
(as the stage picks) passes when it beats the intercept-only model by more than half a paired standard error
(the library's held-out rule, select.choose_size). Reported per table: how often the gate
agrees with the stage's own acceptance, and the test score of the gated rule (coarse where
the gate passes, default elsewhere), and the gate on the paper's data (no shape term helps
there) for six sizes and seeds. ``--by held`` picks the candidate by its held-out error
instead (the first version, which passes on noise).

    python benchmarks/bench_small_tables_gate.py [--by train|held]

Writes ``small_tables_gate_<by>.json`` in ``benchmarks/results``."""
import argparse, json, pathlib, sys, warnings
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
import numpy as np, bench_accuracy as B, bench_small_tables as T, jaxtree as J
from jaxtree._inputs import encoding as E
from sklearn.model_selection import RepeatedKFold, RepeatedStratifiedKFold
warnings.simplefilter("ignore")


def hats3(u):
    u = np.clip(u, 0, 1)
    return np.stack([np.maximum(0, 1 - 2 * u), 1 - np.abs(2 * u - 1), np.maximum(0, 2 * u - 1)], -1)


def gate(xe, r, by="train", seed=0):
    n = len(r)
    rng = np.random.default_rng(seed)
    held = np.zeros(n, bool); held[rng.choice(n, max(1, n // 5), replace=False)] = True
    lo, hi = np.nanmin(xe[~held], 0), np.nanmax(xe[~held], 0)
    base = (r[held] - r[~held].mean()) ** 2
    best = None
    for j in range(xe.shape[1]):
        if not hi[j] > lo[j]:
            continue
        u = (np.nan_to_num(xe[:, j], nan=lo[j]) - lo[j]) / (hi[j] - lo[j])
        H = hats3(u)
        coef, *_ = np.linalg.lstsq(H[~held], r[~held], rcond=None)
        e = (r[held] - H[held] @ coef) ** 2
        key = np.mean((r[~held] - H[~held] @ coef) ** 2) if by == "train" else e.mean()
        if best is None or key < best[0]:
            best = (key, e)
    if best is None:
        return False
    d = base - best[1]
    return bool(d.mean() > 0.5 * d.std(ddof=1) / np.sqrt(len(d)))


parser = argparse.ArgumentParser()
parser.add_argument("--by", choices=("train", "held"), default="train")
parser.add_argument("--tables", default=",".join(T.TABLES))
args = parser.parse_args()
out = {"by": args.by, "tables": {}, "paper_data": []}
from jaxtree.datasets import paper_synthetic  # noqa: E402
for n, p, seed in [(1000, 10, 0), (1000, 10, 1), (500, 4, 0), (300, 5, 2), (1500, 8, 3),
                   (200, 4, 4)]:
    X, y = paper_synthetic(n, p=p, seed=seed)
    r = y - np.asarray(J.TreeRegressor().fit(X, y).predict(X), np.float64)
    out["paper_data"].append({"n": n, "p": p, "seed": seed,
                              "gate": gate(X.astype(np.float64), r, args.by)})
print("gate on the paper's data (should not pass):",
      [g["gate"] for g in out["paper_data"]], flush=True)
for name in args.tables.split(","):
    task, X, y, _ = B.load_table(name, None)
    y = np.asarray(y)
    cv = (RepeatedKFold if task == "regression" else RepeatedStratifiedKFold)(
        n_splits=5, n_repeats=1, random_state=0)
    rec = {"agree": 0, "gate": 0, "stage": 0, "folds": 0, "default": [], "coarse": [], "gated": []}
    for tr, te in cv.split(X, y):
        Xtr, Xte, ytr = X.iloc[tr], X.iloc[te], y[tr]
        cls = J.TreeRegressor if task == "regression" else J.TreeClassifier
        T._patched(False)
        d = cls().fit(Xtr, ytr)
        T._patched(True)
        c = cls().fit(Xtr, ytr)
        T._patched(False)
        xe = np.asarray(E.transform(d.encoding_, Xtr, missing=d.missing), np.float64)
        if task == "regression":
            r = ytr - np.asarray(d.predict(Xtr), np.float64)
        else:  # the working residual of the log-loss at the fitted logit
            p1 = np.asarray(d.predict_proba(Xtr))[:, 1]
            r = (ytr == d.classes_[1]).astype(float) - p1
        g = gate(xe, r, args.by)
        s = c.model_.shapes is not None
        rec["folds"] += 1; rec["gate"] += g; rec["stage"] += s; rec["agree"] += (g == s)
        sd, sc = B.score(task, d, Xte, y[te]), B.score(task, c, Xte, y[te])
        rec["default"].append(sd); rec["coarse"].append(sc); rec["gated"].append(sc if g else sd)
    out["tables"][name] = rec
    print(f"{name:14s} gate {rec['gate']}/{rec['folds']} stage {rec['stage']}/{rec['folds']} "
          f"agree {rec['agree']}/{rec['folds']}  default {np.mean(rec['default']):.4f} "
          f"coarse {np.mean(rec['coarse']):.4f} gated {np.mean(rec['gated']):.4f}", flush=True)
(ROOT / "benchmarks" / "results" / f"small_tables_gate_{args.by}.json").write_text(
    json.dumps(out, indent=1))
