"""fit_batch's warm time at several chunks of rows, in the checkout CO (env), jaxtree's cache
off: B members of n rows (paper_synthetic, p = 8), one first call, then N timed (median).
Under vmap the passes' loop (scoring.scan_live) runs every member to the batch's last live
chunk and selects the carries, so this checks it costs the batch nothing.

    CO=/path/to/checkout python batch_ab.py B N_ROWS [N]"""
import os, statistics, sys, time, warnings
sys.path.insert(0, os.environ.get("CO", "/work/main"))
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
warnings.simplefilter("ignore")
import numpy as np
import jaxtree
from jaxtree.datasets import paper_synthetic
B, n = int(sys.argv[1]), int(sys.argv[2]); reps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
xs, ys = zip(*(paper_synthetic(n, p=8, seed=s) for s in range(B)))
X, Y = np.stack(xs).astype(np.float32), np.stack(ys).astype(np.float32)
jaxtree.fit_batch(X, Y)
ts = []
for _ in range(reps):
    t0 = time.perf_counter(); res = jaxtree.fit_batch(X, Y); ts.append(time.perf_counter() - t0)
print(jaxtree.__file__.split("/jaxtree/")[0], f"B={B} n={n} median {statistics.median(ts):.3f} s min {min(ts):.3f}")
