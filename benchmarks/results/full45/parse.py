"""Mean scores per table and method from bench_accuracy.py's printed log (its per-fold
lines), for a run stopped before it wrote its JSON.

    python benchmarks/results/full45/parse.py LOG [LOG ...]

Prints a markdown table per task: the mean over the folds found (their count beside it)."""
import re
import sys
from collections import defaultdict

HEAD = re.compile(r"^== (\w+): .*; (\d+) rows, p = (\d+).*, (regression|classification)")
FOLD = re.compile(r"^  fold (\d+): (.*); jaxtree terms (\d+)")
PART = re.compile(r"([\w()]+) ([-\d.e]+) \(([\d.]+)s\)")
tables = {}
for path in sys.argv[1:]:
    name = None
    for line in open(path):
        if m := HEAD.match(line):
            name = m.group(1)
            tables[name] = {"rows": int(m.group(2)), "p": int(m.group(3)), "task": m.group(4),
                            "scores": defaultdict(list), "terms": []}
        elif (m := FOLD.match(line)) and name:
            for method, score, _ in PART.findall(m.group(2)):
                tables[name]["scores"][method].append(float(score))
            tables[name]["terms"].append(int(m.group(3)))
methods = ["jaxtree", "HGB(100)", "HGB(1000)", "ridge", "logistic", "EBM"]
for task in ("regression", "classification"):
    rows = [(n, t) for n, t in tables.items() if t["task"] == task and t["terms"]]
    if not rows:
        continue
    cols = [m for m in methods if any(m in t["scores"] for _, t in rows)]
    print(f"\n{task}: mean over folds (folds found)\n")
    print("| table | rows | p | " + " | ".join(cols) + " | jaxtree terms |")
    print("|---|---:|---:|" + "---:|" * len(cols) + "---:|")
    for n, t in rows:
        cells = []
        for m in cols:
            v = t["scores"].get(m)
            cells.append("–" if not v else f"{sum(v) / len(v):.4g} ({len(v)})")
        terms = sum(t["terms"]) / max(1, len(t["terms"]))
        print(f"| {n} | {t['rows']} | {t['p']} | " + " | ".join(cells) + f" | {terms:.1f} |")
