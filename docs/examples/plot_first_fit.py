"""
A first fit: the paper's function
=================================

Fit :class:`jaxtree.TreeRegressor` to noisy samples of the synthetic function of Xu,
Honorio and Wang, print the formula it found, and compare its predictions on new rows
with the noiseless function.
"""

# %%
# The data
# --------
# :func:`jaxtree.datasets.paper_synthetic` draws covariates uniformly on ``[0, 1]`` and
# returns the paper's ``g(x)`` plus noise; only the first four covariates matter, the
# other ones are distractors. :func:`jaxtree.datasets.paper_function` is the noiseless
# ``g``.
import matplotlib.pyplot as plt
import numpy as np

import jaxtree
from jaxtree.datasets import paper_function, paper_synthetic

X, y = paper_synthetic(n=500, p=5, seed=0)
X_test, _ = paper_synthetic(n=300, p=5, seed=1)
print(X.shape, y.shape)

# %%
# The fit
# -------
# ``k`` is an upper bound on the number of operations (``+`` and ``*`` nodes). On fewer
# than 10,000 rows the default holds out a fifth of the rows to choose the size
# (``k_``), then refits on all of them.
est = jaxtree.TreeRegressor(k=8).fit(X, y)
print(est.formula())
print(f"operations chosen: {est.k_} of at most 8 (search: {est.search_})")

# %%
# The error on new rows
# ---------------------
# The test error is measured against the noiseless ``g``, so it says how close the
# formula is to the truth, not to the noise.
g_test = paper_function(X_test)
pred = est.predict(X_test)
rmse = np.sqrt(np.mean((pred - g_test) ** 2))
print(f"test RMSE vs the noiseless g: {rmse:.4f} (noise standard deviation of y: "
      f"{np.std(y - paper_function(X)):.3f})")

# %%
# Predicted against true
# ----------------------
fig, ax = plt.subplots(figsize=(4.5, 4.5))
ax.scatter(g_test, pred, s=8, alpha=0.6)
lims = [min(g_test.min(), pred.min()), max(g_test.max(), pred.max())]
ax.plot(lims, lims, "k--", lw=1, label="y = x")
ax.set_xlabel("noiseless g(x)")
ax.set_ylabel("prediction")
ax.set_title(f"test RMSE {rmse:.4f}")
ax.legend()
fig.tight_layout()

# %%
# The tree itself
# ---------------
# :meth:`~jaxtree.TreeRegressor.plot_tree` draws the ``+``/``*`` nodes over the leaves,
# each leaf a weighted basis function of one covariate.
est.plot_tree()
plt.show()
