"""
Classification: two covariates of breast cancer
===============================================

:class:`jaxtree.TreeClassifier` searches the same trees as the regressor for a logit.
Here it separates malignant from benign tumours in scikit-learn's bundled breast cancer
data on two covariates, so that its decision boundary can be drawn.
"""

# %%
# The data
# --------
# Two of the 30 columns, kept as a pandas table so that the formula names them.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

import jaxtree

data = load_breast_cancer(as_frame=True)
columns = ["worst radius", "worst concave points"]
X = data.data[columns]
y = np.where(data.target == 1, "benign", "malignant")
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0,
                                                    stratify=y)
print(X_train.shape, np.unique(y_train, return_counts=True))

# %%
# The fit
# -------
# The formula is the logit of the second class, ``classes_[1]``; the size is chosen on
# held-out rows (``k_``).
clf = jaxtree.TreeClassifier(k=4).fit(X_train, y_train)
print(clf.classes_)
print(clf.formula())
print(f"operations chosen: {clf.k_}")

# %%
# Test accuracy and ROC AUC
# -------------------------
proba = clf.predict_proba(X_test)[:, 1]
auc = roc_auc_score(y_test == clf.classes_[1], proba)
print(f"test accuracy {clf.score(X_test, y_test):.3f}, ROC AUC {auc:.3f}")

# %%
# Probability map and decision boundary
# -------------------------------------
# ``predict_proba`` on a grid over the two covariates; the black line is
# ``P = 0.5``, where ``predict`` changes its answer. The formula is a sum of sines and
# cosines of each covariate, so where there are no tumours (large radius, few concave
# points: the lower right) it keeps oscillating instead of staying malignant: read the
# formula and the data's range before trusting a prediction far from the rows it was
# fitted on.
g1, g2 = np.meshgrid(np.linspace(X[columns[0]].min(), X[columns[0]].max(), 120),
                     np.linspace(X[columns[1]].min(), X[columns[1]].max(), 120))
grid = X.iloc[:0].reindex(range(g1.size))          # an empty table with X's columns
grid[columns[0]], grid[columns[1]] = g1.ravel(), g2.ravel()
p_grid = clf.predict_proba(grid)[:, 1].reshape(g1.shape)

fig, ax = plt.subplots(figsize=(6, 4.5))
cs = ax.contourf(g1, g2, p_grid, levels=np.linspace(0, 1, 11), cmap="RdBu_r", alpha=0.8)
ax.contour(g1, g2, p_grid, levels=[0.5], colors="k")
for label, marker in zip(clf.classes_, ["o", "^"]):
    mask = y_test == label
    ax.scatter(X_test.loc[mask, columns[0]], X_test.loc[mask, columns[1]], s=14,
               marker=marker, edgecolor="k", linewidth=0.4, label=f"{label} (test)")
fig.colorbar(cs, label=f"P(y = {clf.classes_[1]})")
ax.set_xlabel(columns[0])
ax.set_ylabel(columns[1])
ax.set_title(f"TreeClassifier, test AUC {auc:.3f}")
ax.legend(loc="upper left")
fig.tight_layout()
plt.show()
