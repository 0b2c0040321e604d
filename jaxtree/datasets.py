"""Built-in data: the paper's synthetic regression problem."""

from __future__ import annotations

import numpy as np

__all__ = [
    "paper_function",
    "paper_synthetic",
]



def paper_function(X) -> np.ndarray:
    """The paper's truth ``g(x) = 0.3 sin(3πx1) cos(2πx2) + 0.4 x3² - 0.3 x4``.

    Args:
      X: float ``(n, p)`` with ``p >= 4``.

    Returns:
      float64 ``(n,)``.
    """
    X = np.asarray(X, np.float64)
    if X.ndim != 2 or X.shape[1] < 4:
        raise ValueError(f"X must be 2-D with at least 4 columns; got shape {X.shape}.")
    return (0.3 * np.sin(3 * np.pi * X[:, 0]) * np.cos(2 * np.pi * X[:, 1])
            + 0.4 * X[:, 2] ** 2 - 0.3 * X[:, 3])


def paper_synthetic(n: int, p: int = 10, noise: float = 0.05, seed: int = 0):
    """Samples the paper's experiment: ``x ~ U[0,1]^p``, ``y = g(x) + N(0, noise²)``.

    Args:
      n: number of samples (>= 1).
      p: number of covariates (>= 4; only the first four matter).
      noise: noise standard deviation (>= 0); the paper uses 0.05.
      seed: seed of numpy's default generator.

    Returns:
      ``(X, y)``: float64 ``(n, p)`` and ``(n,)``.

    Examples:
      >>> X, y = paper_synthetic(5, p=4)
      >>> X.shape, y.shape
      ((5, 4), (5,))
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1; got {n!r}.")
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 4:
        raise ValueError(f"p must be an integer >= 4 (g uses x1..x4); got {p!r}.")
    if not noise >= 0:
        raise ValueError(f"noise must be >= 0; got {noise!r}.")
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p))
    y = paper_function(X) + noise * rng.standard_normal(n)
    return X, y
