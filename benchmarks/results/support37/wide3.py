import numpy as np, jaxtree, sys
n, p = 500, 150
rng = np.random.default_rng(0)
X = rng.normal(size=(n, p)); y = X[:, 0] * 2 + np.sin(X[:, 1]) + X[:, 2] * X[:, 3] + rng.normal(scale=0.1, size=n)
Xt = rng.normal(size=(5000, p)); yt = Xt[:, 0] * 2 + np.sin(Xt[:, 1]) + Xt[:, 2] * Xt[:, 3]
est = jaxtree.TreeRegressor().fit(X, y)
print("k_", est.k_, "test RMSE", np.sqrt(np.mean((est.predict(Xt) - yt) ** 2)))
print(est.formula()[:300])
