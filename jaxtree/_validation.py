"""Input checks for every public entry point, run before anything is traced.

Each message says what was expected, what was received, and how to fix it.
"""

from __future__ import annotations

import numbers

import numpy as np


class NotFittedError(ValueError, AttributeError):
    """Raised when a model is used before ``fit`` (like scikit-learn's)."""


def _as_float_array(a, name: str) -> np.ndarray:
    if hasattr(a, "to_numpy") and not isinstance(a, np.ndarray):  # pandas
        a = a.to_numpy()
    try:
        arr = np.asarray(a)
    except Exception as exc:  # pragma: no cover - exotic containers
        raise TypeError(f"{name} must be array-like of numbers; got {type(a).__name__}.") from exc
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"{name} must hold numbers; got an object array with non-numeric values. "
                "Convert or drop non-numeric columns first."
            ) from exc
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real; got complex dtype {arr.dtype}.")
    if arr.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must hold numbers; got dtype {arr.dtype}. Convert or drop non-numeric "
            "columns first."
        )
    return arr


def float_dtype_for(arr: np.ndarray, x64: bool) -> np.dtype:
    """float64 input stays float64 when x64 is enabled; everything else is float32."""
    if arr.dtype == np.float64 and x64:
        return np.dtype(np.float64)
    return np.dtype(np.float32)


def _check_finite(arr: np.ndarray, name: str) -> None:
    bad = ~np.isfinite(arr)
    if bad.any():
        count = int(bad.sum())
        first = np.argwhere(bad)[0]
        where = f"row {first[0]}" + (f", column {first[1]}" if arr.ndim == 2 else "")
        raise ValueError(
            f"{name} contains {count} NaN or infinite value(s), the first at {where}. "
            "Remove or impute them before fitting."
        )


def check_X(X, *, n_features: int | None = None, name: str = "X") -> np.ndarray:
    """Validates a covariate matrix; returns a float64 numpy copy-free view where possible."""
    arr = _as_float_array(X, name)
    if arr.ndim != 2:
        hint = " For one feature use X.reshape(-1, 1)." if arr.ndim == 1 else ""
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got shape {arr.shape}.{hint}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); it needs at least one row and one column.")
    _check_finite(arr, name)
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(
            f"{name} has {arr.shape[1]} features, but the model was fitted with {n_features}. "
            "Pass the same columns, in the same order, as in fit."
        )
    return arr


def check_y(y, n_samples: int) -> np.ndarray:
    arr = _as_float_array(y, "y")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"y must be 1-D (n_samples,); got shape {arr.shape}. jaxtree fits one target.")
    if arr.shape[0] != n_samples:
        raise ValueError(f"X has {n_samples} rows but y has {arr.shape[0]}; they must match.")
    _check_finite(arr, "y")
    return arr


def check_sample_weight(sample_weight, n_samples: int) -> np.ndarray | None:
    if sample_weight is None:
        return None
    arr = _as_float_array(sample_weight, "sample_weight")
    if arr.ndim == 0:
        arr = np.full(n_samples, float(arr))
    if arr.shape != (n_samples,):
        raise ValueError(f"sample_weight must have shape ({n_samples},); got {arr.shape}.")
    _check_finite(arr, "sample_weight")
    if (arr < 0).any():
        raise ValueError("sample_weight must be non-negative.")
    if not arr.sum() > 0:
        raise ValueError("sample_weight must have a positive sum.")
    return arr


def check_int(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}; got {value!r} ({type(value).__name__}).")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value}.")
    return int(value)


def check_choice(value, name: str, valid) -> object:
    if value not in valid:
        raise ValueError(f"Unknown {name} {value!r}; valid values are {list(valid)}.")
    return value
