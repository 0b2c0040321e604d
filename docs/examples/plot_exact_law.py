"""
Recovering a physical law exactly
=================================

With the ``"physics"`` basis (powers, logarithms and exponentials of each covariate in
its own units) and a logarithmic target, a product of powers such as Coulomb's law
``F = 8.99·q1·q2/r²`` is a sum of three leaves, and :meth:`~jaxtree.TreeRegressor.law`
prints it back as a sympy expression.
"""

# %%
# Noise-free samples of Coulomb's law
# -----------------------------------
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import jaxtree

rng = np.random.default_rng(0)
X = pd.DataFrame({"q1": rng.uniform(1, 5, 500), "q2": rng.uniform(1, 3, 500),
                  "r": rng.uniform(1, 2, 500)})
F = (8.99 * X.q1 * X.q2 / X.r ** 2).rename("F")

# %%
# The fit
# -------
# The options of :doc:`/laws`: the physics basis,
# ``target_transform="log"`` (``log F`` is a sum), the backfitting search and pruning of
# negligible leaves. ``TreeRegressor.for_laws()`` bundles these and also chooses the
# transform and the size from the data, at the cost of several searches.
est = jaxtree.TreeRegressor(k=3, basis="physics", target_transform="log",
                            search="backfit", prune_tol=1e-6).fit(X, F)
print(est.formula())
law = est.law()
print("law:", law)

# %%
# How exact is it?
# ----------------
# On new rows, inside the training ranges, the fitted model and the printed law agree
# with the true law to float32 rounding.
X_new = pd.DataFrame({"q1": rng.uniform(1, 5, 200), "q2": rng.uniform(1, 3, 200),
                      "r": rng.uniform(1, 2, 200)})
F_new = 8.99 * X_new.q1 * X_new.q2 / X_new.r ** 2
rel = np.abs(est.predict(X_new) / F_new - 1)
print(f"largest relative error of predict on new rows: {rel.max():.2e}")

# %%
# The fit against the law
# -----------------------
# ``F`` against ``r`` at three charges, the true curve drawn as a line and the model's
# predictions as points.
fig, axes = plt.subplots(1, 2, figsize=(9, 4))
r = np.linspace(1, 2, 40)
for q in (1.5, 3.0, 4.5):
    table = pd.DataFrame({"q1": np.full_like(r, q), "q2": np.full_like(r, 2.0), "r": r})
    line, = axes[0].plot(r, 8.99 * q * 2.0 / r ** 2, lw=1)
    axes[0].plot(r, est.predict(table), "o", ms=3, color=line.get_color(),
                 label=f"q1 = {q}, q2 = 2")
axes[0].set_xlabel("r")
axes[0].set_ylabel("F")
axes[0].set_title("lines: the law; points: the model")
axes[0].legend()
axes[1].loglog(F_new, est.predict(X_new), ".", ms=4)
axes[1].plot([F_new.min(), F_new.max()], [F_new.min(), F_new.max()], "k--", lw=1)
axes[1].set_xlabel("true F")
axes[1].set_ylabel("predicted F")
axes[1].set_title(f"law: {law}")
fig.tight_layout()
plt.show()
