"""A tree whose leaves fall on a 0/1 column (x1) and a column of the values 2.5 and 4 (x3): the estimator's
formula (the columns read as lines) and the model's own (its leaves' functions).
python benchmarks/results/two57/formula.py (from the repository root)."""
import pathlib, sys; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3]))
import numpy as np, jaxtree, warnings, time
warnings.simplefilter("ignore")
rng = np.random.default_rng(1); n = 300
X = np.column_stack([rng.integers(0, 2, n).astype(float), rng.uniform(0, 2, n), rng.choice([2.5, 4.0], n)])
y = 1.5 * X[:, 0] + 0.8 * (X[:, 2] == 4.0) + np.sin(3 * X[:, 1]) + 0.05 * rng.standard_normal(n)
t = time.perf_counter()
est = jaxtree.TreeRegressor(k=4, shapes=0, engine="reference", refine=None, validation_fraction=None, search="greedy").fit(X, y)
print(time.perf_counter() - t, est.formula())
print(est.model_.formula())
