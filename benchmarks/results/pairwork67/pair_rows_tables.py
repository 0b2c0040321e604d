"""For each of bench_accuracy's tables (at most 3,000 rows read): the backfit search's basis
columns p*q, as a small fit hands them to search.pair_screen_rows, and the pair screen's rows
and GFLOP per pair iteration (two operations, 6 rows (pq)^2 each) at PAIR_WORK = 2^32 and 2^30.
The rows actually screened are also capped by the table's own (padded) rows.

    python benchmarks/results/pairwork67/pair_rows_tables.py
"""
import sys, warnings, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
warnings.simplefilter("ignore")
import numpy as np, jaxtree, bench_accuracy as ba
from jaxtree import search
seen = []
orig = search.pair_screen_rows
def spy(nc):
    seen.append(nc); return orig(nc)
search.pair_screen_rows = spy
for name in ba.TABLES:
    task, X, y, _ = ba.load_table(name, 3000)
    seen.clear()
    Est = jaxtree.TreeRegressor if task == "regression" else jaxtree.TreeClassifier
    try:
        Est(k=1, shapes=0).fit(X, y)
    except Exception as e:
        print(name, "error", e); continue
    nc = max(seen) if seen else None
    if nc:
        rows = lambda work: int(min(search.PAIR_ROWS, max(search.PAIR_MIN_ROWS, work // (nc * nc))))
        r_now, r_new = rows(1 << 32), rows(1 << 30)
        print(f"{name} ({len(y)} rows): pq {nc} (p {nc // 40}), pair rows {r_now} -> {r_new}, GFLOP/pair iter {12 * r_now * nc * nc / 1e9:.1f} -> {12 * r_new * nc * nc / 1e9:.1f}", flush=True)
    else:
        print(name, "no pair config seen")
