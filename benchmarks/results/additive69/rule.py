import json, glob, numpy as np
for f in sorted(glob.glob("cv_choice_*.json")):
    d = json.load(open(f))
    for name, t in d.items():
        rows = t["folds"]; reg = t["task"] == "regression"
        out = []
        for m in (0.0, 0.5, 1.0):
            pick = [r["test_additive"] if r["inner_additive"] < r["inner_default"] - m * r["diff_se"] else r["test_default"] for r in rows]
            out.append(f"m={m}: {np.mean(pick):.5g} ({sum(r['inner_additive'] < r['inner_default'] - m * r['diff_se'] for r in rows)})")
        if not reg:
            pick = [r["test_additive"] if r["inner_auc_additive"] > r["inner_auc_default"] else r["test_default"] for r in rows]
            out.append(f"auc: {np.mean(pick):.5g}")
        print(f, name, f"default {np.mean([r['test_default'] for r in rows]):.5g} additive {np.mean([r['test_additive'] for r in rows]):.5g}", " | ".join(out))
