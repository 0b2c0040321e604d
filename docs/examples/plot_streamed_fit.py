"""
A streamed fit from a memory-mapped file
========================================

A :class:`numpy.memmap` of covariates is never loaded whole: every pass over the rows
reads it ``chunk_size`` rows at a time, so a table larger than memory can be fitted. The
search makes the same choices as on the same array in memory, and the two models agree
to float32 rounding.
"""

# %%
# Write the covariates to disk
# ----------------------------
# A float32 file in a temporary directory, opened again read-only as a memmap (the
# labels stay in memory).
import os
import tempfile

import matplotlib.pyplot as plt
import numpy as np

import jaxtree

X, y = jaxtree.datasets.paper_synthetic(n=4000, p=4, seed=0)
X, y = X.astype(np.float32), y.astype(np.float32)

tmp = tempfile.mkdtemp()
path = os.path.join(tmp, "X.f32")
out = np.memmap(path, dtype=np.float32, mode="w+", shape=X.shape)
out[:] = X
out.flush()
del out
X_disk = np.memmap(path, dtype=np.float32, mode="r", shape=X.shape)
print(type(X_disk).__name__, X_disk.shape, f"{os.path.getsize(path) / 1e3:.0f} kB on disk")

# %%
# The same estimator on disk and in memory
# ----------------------------------------
# Streamed fits run the paper's greedy search grown to ``k`` (no held-out rows), so the
# in-memory fit is asked for the same; ``chunk_size=1024`` makes four reads per pass.
params = dict(k=4, search="greedy", validation_fraction=None, refine="coordinate",
              chunk_size=1024)
streamed = jaxtree.TreeRegressor(**params).fit(X_disk, y)
in_memory = jaxtree.TreeRegressor(**params).fit(X, y)
print("streamed: ", streamed.formula())
print("in memory:", in_memory.formula())

same_choices = [(c["op"], c["feature"], c["basis"]) for c in streamed.choices_] == \
    [(c["op"], c["feature"], c["basis"]) for c in in_memory.choices_]
diff = np.abs(streamed.predict(X) - in_memory.predict(X)).max()
print(f"same insertions: {same_choices}; largest prediction difference: {diff:.2e}")

# %%
# Training loss per iteration, and the predictions
# ------------------------------------------------
fig, axes = plt.subplots(1, 2, figsize=(9, 4))
axes[0].plot(in_memory.history_, "o-", label="in memory")
axes[0].plot(streamed.history_, "x--", ms=9, label="streamed from the memmap")
axes[0].set_yscale("log")
axes[0].set_xlabel("iteration")
axes[0].set_ylabel("training MSE")
axes[0].legend()
axes[1].scatter(in_memory.predict(X[:500]), streamed.predict(X_disk[:500]), s=6)
axes[1].set_xlabel("in-memory prediction")
axes[1].set_ylabel("streamed prediction")
axes[1].set_title(f"largest difference {diff:.1e}")
fig.tight_layout()

del X_disk
os.remove(path)
os.rmdir(tmp)
plt.show()
