import numpy as np, pandas as pd
R = 5.0
def heavy(v):
    v = np.asarray(v, float); v = v[np.isfinite(v)]
    if len(np.unique(v)) <= 2 or v.min() < 0: return False
    q0, q50, q99 = np.quantile(v, [0, 0.5, 0.99])
    return (q99 - q50) > R * (q50 - q0)
