"""The synthetic table where the default chose a pair of a covariate with its own missing
indicator, f(a, a missing): python benchmarks/results/two57/self_pairs/synthetic.py."""
import warnings, numpy as np, pandas as pd, jaxtree
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
n = 600
df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(size=n), "c": rng.choice(["x", "y", "z"], n),
                   "d": rng.integers(0, 5, n)})
df.loc[::17, "a"] = np.nan
y = 2 * df["b"] + np.where(df["c"] == "x", 1.0, 0.0) + np.nan_to_num(df["a"]) * 0.5 + rng.normal(0, 0.1, n)
y = pd.Series(y, name="target")
e = jaxtree.TreeRegressor().fit(df, y)
print(e.formula())
