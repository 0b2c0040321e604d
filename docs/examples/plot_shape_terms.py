"""
Shape terms: whole one- and two-covariate functions
===================================================

Tables often hold smooth effects of one covariate, or of two together, that a tree
builds only slowly from single basis functions. With ``shapes=S`` the fit first chooses
``S`` *shape terms*, each a whole function ``f(x_j)`` or ``f(x_i, x_l)`` (hats on knots,
a tensor product of hats for a pair), then searches the tree on their residual.
:meth:`~jaxtree.TreeRegressor.plot_shapes` draws them.
"""

# %%
# A sine of one covariate and a bump of two
# -----------------------------------------
import matplotlib.pyplot as plt
import numpy as np

import jaxtree

rng = np.random.default_rng(0)
X = rng.uniform(size=(1500, 4))
bump = np.exp(-((X[:, 1] - .5) ** 2 + (X[:, 2] - .5) ** 2) / .05)
y = np.sin(6 * X[:, 0]) + bump + 0.1 * rng.standard_normal(1500)

# %%
# The fit
# -------
# Four shape terms (10 knots for one covariate, a 6 × 6 grid for a pair), then a tree of
# at most two operations. The formula names the shapes ``f(x1)``, ``f(x2, x3)``.
est = jaxtree.TreeRegressor(k=2, shapes=4, shape_knots=(10, 6)).fit(X, y)
print(est.formula())

X_test = rng.uniform(size=(500, 4))
truth = np.sin(6 * X_test[:, 0]) + np.exp(-((X_test[:, 1] - .5) ** 2
                                            + (X_test[:, 2] - .5) ** 2) / .05)
rmse = np.sqrt(np.mean((est.predict(X_test) - truth) ** 2))
print(f"test RMSE vs the noiseless function: {rmse:.4f} (noise 0.1)")

# %%
# The terms as numbers
# --------------------
# :meth:`~jaxtree.TreeRegressor.shape_terms` gives each shape's knots and values in
# ``X``'s and ``y``'s units.
for term in est.shape_terms():
    values = np.asarray(term["values"])
    print(f"f{term['features']}: values on a {' x '.join(map(str, values.shape))} grid "
          f"of knots, from {values.min():+.3f} to {values.max():+.3f}")

# %%
# The shapes drawn
# ----------------
# A curve for each one-covariate shape, a heat map for the pair: the bump in
# ``(x2, x3)`` shows as the pair term on top of the two main shapes of ``x2`` and ``x3``.
est.plot_shapes()
plt.show()
