"""The paper's function at 10^5 rows (seeds 0-2): the default and the greedy k=10 tree, screen_rows
"auto" against 0: test RMSE against the noiseless g on 20,000 draws, a warm fit's seconds, the
choices. python benchmarks/results/screen74/paper_function.py"""
import pathlib, sys, time, warnings
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3]))
warnings.simplefilter("ignore")
import numpy as np, jaxtree
from jaxtree.datasets import paper_synthetic, paper_function
Xt, _ = paper_synthetic(n=20000, p=10, seed=99)
for seed in (0, 1, 2):
    X, y = paper_synthetic(n=100_000, p=10, seed=seed)
    out = []
    for s in ("auto", 0):
        for make in (lambda s: jaxtree.TreeRegressor(screen_rows=s), lambda s: jaxtree.TreeRegressor(k=10, search="greedy", shapes=0, screen_rows=s)):
            e = make(s).fit(X, y)
            t = time.perf_counter(); e = make(s).fit(X, y); dt = time.perf_counter() - t
            r = np.sqrt(np.mean((e.predict(Xt) - paper_function(Xt)) ** 2))
            out.append((s, round(r, 5), round(dt, 2), len(e.choices_)))
    print(seed, out, flush=True)
