"""
Many small fits in one call: ``fit_batch``
==========================================

:func:`jaxtree.fit_batch` fits ``B`` data sets of the same shape (one per station, per
product, bootstrap resamples) with one batched compiled step per iteration, each data set
scaled and searched on its own. Each member is the fit
``TreeRegressor(search="greedy", validation_fraction=None, shapes=0)`` would make on it
alone.
"""

# %%
# Four data sets of one covariate
# -------------------------------
# Four data sets of 200 rows each, four different curves of ``x1`` on ``[0, 10]``: a
# sine, a parabola, a step-like logistic and a product of a sine and a line, each with a
# little noise.
import jax
import matplotlib.pyplot as plt
import numpy as np

import jaxtree

rng = np.random.default_rng(0)
B, n = 4, 200
X = rng.uniform(0, 10, size=(B, n, 1))
x = X[..., 0]
truths = [lambda t: 2 * np.sin(np.pi * t / 5),
          lambda t: 0.05 * t ** 2 + 1,
          lambda t: 3 / (1 + np.exp(-2 * (t - 5))),
          lambda t: 0.2 * t * np.sin(np.pi * t / 5)]
y = np.stack([f(x[b]) for b, f in enumerate(truths)]) + 0.05 * rng.standard_normal((B, n))
print(X.shape, y.shape)

# %%
# One call, four fits
# -------------------
# ``fits[b]`` is a fitted :class:`jaxtree.TreeRegressor`; ``fits.models`` is the
# batched :class:`jaxtree.TreeModel` behind them. With ``validation_fraction`` each
# member chooses its own size (``k_``, at most ``k``) on the same held-out fifth of the
# rows, and all are refitted in one batched run.
fits = jaxtree.fit_batch(X, y, k=4, validation_fraction=0.2)
for b, est in enumerate(fits):
    rmse = np.sqrt(np.mean((est.predict(X[b]) - truths[b](x[b])) ** 2))
    print(f"data set {b}: k_ = {est.k_}, RMSE vs truth {rmse:.3f}   {est.formula()}")

# %%
# All members at once
# -------------------
# The batched model is a pytree with a leading axis of size ``B``, so
# ``jax.vmap(jaxtree.predict)`` predicts every data set in one call.
batched = np.asarray(jax.vmap(jaxtree.predict)(fits.models, X.astype(np.float32)))
separate = np.stack([est.predict(X[b]) for b, est in enumerate(fits)])
print(batched.shape, f"largest difference to the members' predict: "
      f"{np.abs(batched - separate).max():.1e}")

# %%
# Each member's fit
# -----------------
t = np.linspace(0, 10, 300)
fig, axes = plt.subplots(1, B, figsize=(12, 3), sharex=True)
for b, (ax, est) in enumerate(zip(axes, fits)):
    ax.plot(x[b], y[b], ".", ms=3, color="0.6", label="data")
    ax.plot(t, truths[b](t), "k--", lw=1, label="truth")
    ax.plot(t, est.predict(t[:, None]), lw=2, label="fit")
    ax.set_title(f"data set {b}")
    ax.set_xlabel("x1")
axes[0].legend()
fig.tight_layout()
plt.show()
