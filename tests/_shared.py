"""Plain helpers shared by several test modules (pytest puts tests/ on sys.path)."""

import numpy as np

N, P, K = 64, 3, 2  # a small problem whose shapes many tests share (one compilation)


def smooth_data(seed=0, n=N):
    """A smooth target of three covariates on [-1, 2], with noise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 2.0, size=(n, P))
    y = 0.5 * X[:, 0] ** 2 + 0.3 * np.sin(X[:, 1]) * X[:, 2] + 0.05 * rng.normal(size=n)
    return X, y


def choice_key(choices):
    """The structural part of an estimator's ``choices_`` (op, slot, feature, basis)."""
    return [(c["op"], c["slot"], c["feature"], c["basis"]) for c in choices]
