"""Input checks for every public entry point, run before anything is traced.

Each message says what was expected, what was received, and how to fix it. Policy:

* Accepted: numpy arrays, nested lists, pandas DataFrames/Series with numeric columns
  (nullable integer/boolean columns included when they hold no missing value), any real
  dtype. Integer, boolean and low-precision floats (float16, bfloat16, ...) are accepted
  and computed in float32; float64 stays float64 when x64 is enabled. Read-only and
  non-contiguous arrays are accepted. The user's arrays are never modified (at most they
  are read through a view).
* Rejected with ``TypeError``: complex numbers, strings, dates, object arrays, other
  non-numeric data. Rejected with ``ValueError``: wrong rank or shape, mismatched
  lengths, empty arrays, too few samples, NaN/inf (with the count and the first offending
  position), missing values in pandas inputs, ranges too wide to represent.
* Constant columns and a constant ``y`` are allowed: a constant column never wins a
  candidate (its regressor is degenerate) and a constant ``y`` gives the constant model.
"""

from __future__ import annotations

import numbers

import numpy as np


class NotFittedError(ValueError, AttributeError):
    """Raised when a model is used before ``fit`` (like scikit-learn's)."""


def _is_pandas(a) -> bool:
    return (hasattr(a, "to_numpy") and hasattr(a, "isna") and hasattr(a, "dtypes")
            and not isinstance(a, np.ndarray))


def _pandas_to_numpy(a, name: str) -> np.ndarray:
    """Numeric pandas DataFrame/Series -> numpy, with clear errors for missing values."""
    dtypes = list(a.dtypes) if hasattr(a, "columns") else [a.dtype]
    columns = list(a.columns) if hasattr(a, "columns") else [getattr(a, "name", 0)]
    bad = [str(c) for c, dt in zip(columns, dtypes) if getattr(dt, "kind", "O") not in "biuf"]
    if bad:
        raise TypeError(
            f"{name} must hold numbers; column(s) {bad} are not numeric. Convert them "
            "(e.g. one-hot encode categories) or drop them before fitting."
        )
    missing = np.asarray(a.isna().to_numpy(), bool)
    if missing.any():
        first = np.argwhere(missing)[0]
        where = f"row {first[0]}" + (f", column {first[1]}" if missing.ndim == 2 else "")
        raise ValueError(
            f"{name} contains {int(missing.sum())} missing value(s) (NaN/None/pd.NA), the first "
            f"at {where}. Impute them (e.g. {name}.fillna(...)) or drop those rows "
            f"({name}.dropna()) first."
        )
    return a.to_numpy(dtype=np.float64) if any(
        not isinstance(dt, np.dtype) for dt in dtypes) else a.to_numpy()


def _is_low_float(dtype: np.dtype) -> bool:
    """float16, bfloat16, float8 variants: floating types numpy does not know natively."""
    if dtype.kind == "f":
        return dtype.itemsize < 4
    if dtype.kind == "V":  # ml_dtypes (bfloat16, float8_*) register as void-kind dtypes
        try:
            import jax.numpy as jnp  # noqa: PLC0415 - only for the dtype lattice
            return bool(jnp.issubdtype(dtype, jnp.floating))
        except Exception:  # pragma: no cover - not a JAX dtype
            return False
    return False


def _as_float_array(a, name: str) -> np.ndarray:
    """``a`` as a real numeric numpy array (no copy when it already is one).

    Low-precision floats become float32; integers and booleans stay as they are (callers
    choose the compute dtype with :func:`float_dtype_for`).
    """
    if hasattr(a, "toarray") and hasattr(a, "nnz"):  # scipy.sparse, without importing scipy
        raise TypeError(
            f"{name} is a sparse {type(a).__name__}; sparse input is not supported (the search "
            f"needs dense data). Convert it with {name}.toarray() if it fits in memory."
        )
    if _is_pandas(a):
        a = _pandas_to_numpy(a, name)
    try:
        arr = np.asarray(a)
    except ValueError as exc:  # ragged nested lists
        raise ValueError(
            f"{name} must be a rectangular array of numbers; got a ragged sequence ({exc}). "
            "Make every row the same length."
        ) from None
    except Exception as exc:  # pragma: no cover - exotic containers
        raise TypeError(f"{name} must be array-like of numbers; got {type(a).__name__}.") from exc
    if arr.dtype == object:
        flat = arr.ravel()
        if any(v is None for v in flat) or any(
                type(v).__name__ in ("NAType", "NaTType") for v in flat):
            raise ValueError(
                f"{name} contains missing values (None/pd.NA). Impute or drop them first."
            )
        for pos, v in enumerate(flat):
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                idx = np.unravel_index(pos, arr.shape) if arr.ndim else ()
                raise TypeError(
                    f"{name} must hold numbers; got an object array with the non-numeric value "
                    f"{v!r} ({type(v).__name__}) at index {tuple(int(i) for i in idx)}. "
                    "Convert or drop non-numeric columns first."
                )
        raise TypeError(
            f"{name} has dtype object; pass a numeric array instead, e.g. "
            f"np.asarray({name}, dtype=np.float64)."
        )
    if np.iscomplexobj(arr):
        raise TypeError(
            f"{name} must be real; got complex dtype {arr.dtype}. Pass the real part "
            f"(np.real({name})) or split real and imaginary parts into separate columns."
        )
    if _is_low_float(arr.dtype):
        return arr.astype(np.float32)
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


def _check_finite(arr: np.ndarray, name: str, axes=("row", "column")) -> None:
    """Raises a ValueError naming the count and the first NaN/inf (``axes`` name the axes)."""
    bad = ~np.isfinite(arr)
    if bad.any():
        count = int(bad.sum())
        first = np.argwhere(bad)[0]
        where = ", ".join(f"{axis} {int(i)}" for axis, i in zip(axes, first))
        raise ValueError(
            f"{name} contains {count} NaN or infinite value(s), the first at {where}. "
            "Remove or impute them first."
        )


def check_X(X, *, n_features: int | None = None, name: str = "X", min_samples: int = 1,
            allow_1d: bool = False) -> np.ndarray:
    """Validates a covariate matrix; returns a numpy array, a view of ``X`` where possible.

    Args:
      X: ``(n_samples, n_features)`` array-like (``(n_features,)`` when ``allow_1d``).
      n_features: the feature count the model was fitted with, if any.
      name: the argument's name in messages.
      min_samples: the fewest rows accepted.
      allow_1d: accept a single row ``(n_features,)`` (functional predict).

    Raises:
      TypeError: for non-numeric, object or complex data.
      ValueError: for a wrong shape, empty or too small input, NaN/inf or missing values.
    """
    arr = _as_float_array(X, name)
    if allow_1d and arr.ndim == 1:
        if arr.shape[0] == 0:
            raise ValueError(f"{name} is empty (shape {arr.shape}); it needs at least one value.")
        _check_finite(arr, name)
        if n_features is not None and arr.shape[0] != n_features:
            raise ValueError(
                f"{name} is one row of {arr.shape[0]} features, but the model was fitted with "
                f"{n_features}. Pass the same columns, in the same order, as in fit."
            )
        return arr
    if arr.ndim != 2:
        hint = (" Reshape your data: for one feature use X.reshape(-1, 1), for one sample "
                "X.reshape(1, -1)." if arr.ndim == 1 else "")
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got shape {arr.shape}.{hint}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        found = (f" (found 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required)"
                 if arr.shape[1] == 0 else "")
        raise ValueError(f"{name} is empty (shape {arr.shape}); it needs at least one row and "
                         f"one column{found}.")
    if arr.shape[0] < min_samples:
        raise ValueError(
            f"fit needs at least {min_samples} samples; got {arr.shape[0]} "
            f"(n_samples={arr.shape[0]}). A regression cannot be estimated from a single row: "
            "pass more data."
        )
    _check_finite(arr, name)
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(
            f"{name} has {arr.shape[1]} features, but the model was fitted with {n_features} "
            f"({name} has {arr.shape[1]} features, but predict is expecting {n_features} "
            "features as input). Pass the same columns, in the same order, as in fit."
        )
    return arr


def check_y(y, n_samples: int) -> np.ndarray:
    """Validates targets ``(n_samples,)`` (or ``(n_samples, 1)``); returns numpy."""
    if y is None:
        raise ValueError("fit requires y to be passed, but the target y is None. jaxtree is "
                         "supervised: call fit(X, y).")
    arr = _as_float_array(y, "y")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"y must be 1-D (n_samples,); got shape {arr.shape}. jaxtree fits one target.")
    if arr.shape[0] != n_samples:
        raise ValueError(f"X has {n_samples} rows but y has {arr.shape[0]}; they must match "
                         "(one target per row of X).")
    _check_finite(arr, "y")
    return arr


def check_sample_weight(sample_weight, n_samples: int) -> np.ndarray | None:
    """Validates non-negative weights ``(n_samples,)`` with a positive sum (None passes)."""
    if sample_weight is None:
        return None
    arr = _as_float_array(sample_weight, "sample_weight")
    if arr.ndim == 0:
        arr = np.full(n_samples, float(arr))
    if arr.shape != (n_samples,):
        raise ValueError(f"sample_weight must have shape ({n_samples},) (one weight per row); "
                         f"got {arr.shape}.")
    _check_finite(arr, "sample_weight")
    if (arr < 0).any():
        raise ValueError("sample_weight must be non-negative; set the weight of rows to ignore to 0.")
    if not arr.sum() > 0:
        raise ValueError("sample_weight must have a positive sum; at least one row needs "
                         "weight > 0 (got all zero weights).")
    return arr


def check_representable(X: np.ndarray, y: np.ndarray, dtype) -> None:
    """Checks that the min-max scaling of ``X`` and ``y`` is representable in ``dtype``.

    Raises:
      ValueError: when a column's range (``max - min``) overflows, or a value does not fit
        the compute dtype (e.g. 1e40 in float32).
    """
    limit = float(np.finfo(dtype).max)
    with np.errstate(over="ignore", invalid="ignore"):
        for name, a in (("X", np.asarray(X, np.float64)), ("y", np.asarray(y, np.float64))):
            a2 = a.reshape(a.shape[0], -1)
            span = a2.max(0) - a2.min(0)
            big = ~(np.isfinite(span) & (np.abs(a2).max(0) <= limit) & (span <= limit))
            if big.any():
                col = int(np.argmax(big))
                where = f" column {col}" if name == "X" else ""
                raise ValueError(
                    f"{name}{where} holds values too large to compute with in {np.dtype(dtype).name} "
                    f"(max |value| {np.abs(a2[:, col]).max():.3g}, range {span[col]:.3g}). "
                    "Rescale it (e.g. divide by a constant or take logs) first."
                )


def check_int(value, name: str, minimum: int) -> int:
    """An integer ``>= minimum`` (bools rejected)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}; got {value!r} ({type(value).__name__}).")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value}.")
    return int(value)


def check_bool(value, name: str) -> bool:
    """A plain bool (numpy bools accepted)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {value!r} ({type(value).__name__}).")
    return bool(value)


def check_choice(value, name: str, valid) -> object:
    """``value`` must be one of ``valid`` (the message lists them)."""
    try:
        ok = value in valid
    except TypeError:  # unhashable
        ok = False
    if not ok:
        raise ValueError(f"Unknown {name} {value!r}; valid values are {list(valid)}.")
    return value


def is_host_array(X) -> bool:
    """True for concrete host inputs (numpy, lists, tuples, pandas), False for JAX values.

    Functional entry points validate only host inputs, so they never touch tracers under
    ``jit``/``vmap``/``grad`` and never force a device-to-host transfer.
    """
    return isinstance(X, (np.ndarray, list, tuple, np.generic)) or _is_pandas(X)
