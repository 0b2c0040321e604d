import numpy as np, jaxtree
rng = np.random.default_rng(0)
X = rng.uniform(size=(1000, 10)); y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=1000)
jaxtree.TreeRegressor().fit(X, y)
