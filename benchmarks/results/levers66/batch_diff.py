import sys, warnings; warnings.simplefilter("ignore")
import numpy as np, jaxtree
from jaxtree import batch
from jaxtree.datasets import paper_synthetic
B, n, p, k = 32, 10000, 8, 10
xs, ys = zip(*(paper_synthetic(n, p=p, seed=s) for s in range(B)))
X, y = np.stack(xs).astype(np.float32), np.stack(ys).astype(np.float32)
kw = dict(k=k, refine="optax", chunk_size="auto")
res = list(batch.fit_batch(X, y, **kw))
for b in range(B):
    s = jaxtree.TreeRegressor.paper(**kw).fit(X[b], y[b])
    r = res[b]
    cr = [c["flat_index"] for c in r.choices_]; cs = [c["flat_index"] for c in s.choices_]
    if cr != cs:
        i = next(j for j in range(min(len(cr), len(cs))) if cr[j] != cs[j]) if any(a != c for a, c in zip(cr, cs)) else min(len(cr), len(cs))
        hr, hs = np.asarray(r.history_ if hasattr(r, "history_") else r.loss_history_), np.asarray(s.history_ if hasattr(s, "history_") else s.loss_history_)
        print(f"member {b}: first differing iteration {i} of {len(cr)}/{len(cs)}")
        print("  batch choice", r.choices_[i] if i < len(cr) else None)
        print("  single choice", s.choices_[i] if i < len(cs) else None)
        print("  histories", hr[max(i-1,0):i+2], hs[max(i-1,0):i+2])
        print("  final", hr[-1], hs[-1])
