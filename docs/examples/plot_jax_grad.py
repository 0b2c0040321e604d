"""
Gradients through a fitted model with JAX
=========================================

A fitted model is a pytree (``est.model_``, a :class:`jaxtree.TreeModel`) and
:func:`jaxtree.predict` is a pure function, so ``jax.grad``, ``jax.vmap`` and
``jax.jit`` go through it. Here the gradient of a fitted formula with respect to its
inputs is compared with central finite differences, and with the derivative of the true
function.
"""

# %%
# A fit of the paper's function
# -----------------------------
import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np

import jaxtree
from jaxtree.datasets import paper_synthetic

X, y = paper_synthetic(n=500, p=5, seed=0)
est = jaxtree.TreeRegressor(k=8).fit(X, y)
model = est.model_
print(est.formula())

# %%
# Gradients of every row at once
# -------------------------------
# ``jax.grad`` of the prediction of one row with respect to that row (``argnums=1``),
# mapped over rows with ``jax.vmap`` and compiled with ``jax.jit``: one call gives the
# ``(n, p)`` matrix of partial derivatives. Away from the edges of the training range
# clipping does not matter; ``clip=False`` keeps the gradient at the edges too.
def predict_row(model, row):
    return jaxtree.predict(model, row, clip=False)


grad_rows = jax.jit(jax.vmap(jax.grad(predict_row, argnums=1), in_axes=(None, 0)))

# %%
# Along a line in ``x4``
# ----------------------
# Every other covariate is held at 0.5; ``x4`` enters the paper's function linearly
# (``-0.3·x4`` in the formula above, so its partial derivative is a constant), and ``x3``
# as a square. The finite differences use a step of ``1e-2`` (float32).
t = np.linspace(0.02, 0.98, 60)
rows = np.full((t.size, 5), 0.5, np.float32)
h = 1e-2


def along(j):
    line = rows.copy()
    line[:, j] = t
    grads = np.asarray(grad_rows(model, jnp.asarray(line)))[:, j]
    up, down = line.copy(), line.copy()
    up[:, j] += h
    down[:, j] -= h
    fd = (np.asarray(jaxtree.predict(model, up, clip=False))
          - np.asarray(jaxtree.predict(model, down, clip=False))) / (2 * h)
    return grads, fd


grad_x3, fd_x3 = along(2)
grad_x4, fd_x4 = along(3)
print(f"largest |grad - finite difference|: x3 {np.abs(grad_x3 - fd_x3).max():.1e}, "
      f"x4 {np.abs(grad_x4 - fd_x4).max():.1e}")

# %%
# The derivatives drawn
# ---------------------
# The lines are ``jax.grad``, the markers the finite differences, and the dashed lines
# the derivative of the noiseless function's terms in ``x3`` and ``x4``, read from the
# formula (``0.4·x3²`` and ``-0.3·x4``).
fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(t, grad_x3, lw=2, label="∂ŷ/∂x3 (jax.grad)")
ax.plot(t, fd_x3, "o", ms=3, label="∂ŷ/∂x3 (finite differences)")
ax.plot(t, 0.8 * t, "k--", lw=1, label="d(0.4·x3²)/dx3")
ax.plot(t, grad_x4, lw=2, label="∂ŷ/∂x4 (jax.grad)")
ax.plot(t, fd_x4, "s", ms=3, label="∂ŷ/∂x4 (finite differences)")
ax.axhline(-0.3, color="k", ls=":", lw=1, label="d(-0.3·x4)/dx4")
ax.set_xlabel("x3 or x4 (the other covariates at 0.5)")
ax.set_ylabel("partial derivative")
ax.legend(fontsize=8)
fig.tight_layout()

# %%
# Gradients with respect to the weights
# -------------------------------------
# The model's weights are a leaf of the pytree, so a loss of your own can be
# differentiated with respect to them (and the weights tuned with an optax loop, see
# :doc:`/jax`).
def loss(weights):
    m = jaxtree.TreeModel(model.program._replace(weight=weights), model.x_min,
                          model.x_scale, model.y_center, model.y_scale, model.basis,
                          model.feature_names)
    return jnp.mean((jaxtree.predict(m, X) - y) ** 2)


g = jax.grad(loss)(model.program.weight)
print("training MSE", float(loss(model.program.weight)), "| gradient norm",
      float(jnp.linalg.norm(g)))
plt.show()
