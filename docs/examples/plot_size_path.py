"""
Choosing the size: held-out error against the number of operations
===================================================================

With ``validation_fraction`` the fit holds out a share of the rows, records the held-out
error after every insertion, keeps the smallest size whose held-out error is within half
a paired standard error of the best (``k_``) and refits on all rows. ``path_`` lists every
size with its training and held-out errors and its formula.
"""

# %%
# Few, noisy rows
# ---------------
# 200 rows of the paper's function, with extra noise so that large trees overfit.
import matplotlib.pyplot as plt
import numpy as np

import jaxtree
from jaxtree.datasets import paper_function, paper_synthetic

X, y = paper_synthetic(n=200, p=5, seed=2)
rng = np.random.default_rng(2)
y = y + 0.1 * rng.standard_normal(len(y))

# %%
# The fit and its path
# --------------------
# ``k=8`` is an upper bound; a fifth of the rows is held out (the default on fewer than
# 10,000 rows, written out here).
est = jaxtree.TreeRegressor(k=8, validation_fraction=0.2, random_state=0).fit(X, y)
print(f"chosen size k_ = {est.k_} (upper bound 8)")
for record in est.path_:
    print(f"{record['n_ops']:2d} ops  train MSE {record['train_mse']:.4f}  "
          f"held-out MSE {record['val_mse']:.4f}")
print(est.formula())

# %%
# Test error of every size
# ------------------------
# Each record of ``path_`` also holds that size's model (fitted on the training part of
# the split), so its error against the noiseless function can be measured on new rows
# with :func:`jaxtree.predict`.
X_test, _ = paper_synthetic(n=1000, p=5, seed=3)
g_test = paper_function(X_test)
test_mse = [float(np.mean((np.asarray(jaxtree.predict(r["model"], X_test)) - g_test) ** 2))
            for r in est.path_]

# %%
# The size-versus-error path
# --------------------------
n_ops = [r["n_ops"] for r in est.path_]
fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(n_ops, [r["train_mse"] for r in est.path_], "o-", label="training MSE")
ax.plot(n_ops, [r["val_mse"] for r in est.path_], "s-", label="held-out MSE")
ax.plot(n_ops, test_mse, "^-", label="test MSE vs noiseless g")
ax.axvline(est.k_, color="k", ls="--", lw=1, label=f"chosen k_ = {est.k_}")
ax.set_yscale("log")
ax.set_xlabel("number of operations")
ax.set_ylabel("mean squared error")
ax.legend()
fig.tight_layout()
plt.show()
