"""Input checks for every public entry point, run before anything is traced.

Each message says what was expected, what was received, and how to fix it. Policy:

* Accepted: numpy arrays, nested lists, pandas DataFrames/Series with numeric columns
  (nullable integer/boolean columns included when they hold no missing value), any real
  dtype. Integer, boolean and low-precision floats (float16, bfloat16, ...) are accepted
  and computed in float32; float64 stays float64 when x64 is enabled. Read-only and
  non-contiguous arrays are accepted. The user's arrays are never modified (at most they
  are read through a view).
* Object arrays whose elements are all real numbers (Python or numpy ints, floats, bools)
  are converted to float64, as scikit-learn's ``check_array`` does (a copy: the user's
  array is not touched); with ``allow_nan``, ``None`` and ``pd.NA`` among them become NaN.
* Missing values in ``X`` (NaN; ``None``/``pd.NA`` in object or nullable columns) are the
  table encoder's (:mod:`jaxtree._inputs.encoding`, "What is missing"): accepted by
  default. The checks here refuse them where none is allowed (``y``, ``sample_weight``,
  ``missing="error"``); ``inf`` is never a missing value, and its message says so.
* Rejected with ``TypeError``: strings, dates, object arrays holding anything but real
  numbers, other non-numeric data. Complex data is rejected with
  :class:`ComplexDataError`, both a ``TypeError`` (jaxtree's rule: a bad dtype) and a
  ``ValueError`` (scikit-learn's rule, which its ``check_estimator`` asserts). Rejected
  with ``ValueError``: wrong rank or shape, mismatched lengths, empty arrays, too few
  samples, NaN/inf (with the count and the first offending position), missing values in
  pandas inputs, ranges too wide to represent.
* Messages name a column by its index and, when the names are known (a DataFrame, or the
  names seen in fit), by its name: ``row 4, column 2 ('dose')``.
* Column names (scikit-learn's rule, :func:`check_feature_names`): a model fitted on a
  DataFrame with string column names checks that ``predict``'s DataFrame has the same
  names in the same order, and warns when names are present on one side only.
* Constant columns and a constant ``y`` are allowed: a constant column never wins a
  candidate (its regressor is degenerate) and a constant ``y`` gives the constant model.

Why one file over 800 lines: the policy above is one contract, and each check's message
follows it (a column named by index and name, the count and first offender, the fix); kept
together, two entry points cannot word the same refusal two ways.
"""

from __future__ import annotations

import functools
import numbers
import sys
import warnings
from typing import Optional

import numpy as np

from jaxtree import _threads


class NotFittedError(ValueError, AttributeError):
    """Raised when a model is used before ``fit``: a ``ValueError`` and an
    ``AttributeError``, as scikit-learn's ``NotFittedError`` is, but not that class (jaxtree
    does not import scikit-learn: it would add about a second to ``import jaxtree``). Catch
    ``jaxtree.NotFittedError``, or ``(ValueError, AttributeError)`` for both libraries."""


class ComplexDataError(TypeError, ValueError):
    """Raised for complex input: a ``TypeError`` (a bad dtype, jaxtree's rule) that is also a
    ``ValueError`` (scikit-learn's ``check_complex_data`` expects one), so ``except`` clauses
    written for either rule catch it."""


class DataSizeWarning(UserWarning):
    """The data are too few for the fit as asked: fewer rows than
    :data:`jaxtree._fit.limits.MIN_ROWS` (the model interpolates), or a ``k`` above what the
    rows support (the fit uses the bound). See :mod:`jaxtree._fit.limits`."""


class MissingValueWarning(UserWarning):
    """Missing values at predict time in columns that had none in training took the
    documented fill (:mod:`jaxtree._inputs.encoding`, "Missing values at predict time")."""


class UnseenLevelWarning(UserWarning):
    """Levels at predict time that no training row had, in a categorical column without an
    ``"<col>=other"`` covariate: such a row sets none of its column's covariates, which every
    training row did (:mod:`jaxtree._inputs.encoding`, "Unseen levels")."""


def warn_user(message: str, category=UserWarning) -> None:
    """``warnings.warn`` pointing at the first caller outside the jaxtree package (the user's
    ``fit`` or ``predict`` line), however deep the library's own call stack is."""
    import os

    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # jaxtree/
    frame, level = sys._getframe(1), 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(pkg):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


@functools.lru_cache(maxsize=None)
def _combined(name: str, ours: type, theirs: type) -> type:
    return type(name, (ours, theirs), {"__module__": ours.__module__, "__doc__": ours.__doc__})


def interop_class(name: str, ours: type) -> type:
    """``ours``, or a subclass of ``ours`` and scikit-learn's class ``name`` if scikit-learn is
    already loaded, so ``except sklearn.exceptions.NotFittedError`` and scikit-learn's checks
    see their own class. Never imports scikit-learn (the core stays free of it)."""
    theirs = getattr(sys.modules.get("sklearn.exceptions"), name, None)
    if not isinstance(theirs, type) or issubclass(ours, theirs):
        return ours
    if issubclass(theirs, ours):
        return theirs
    return _combined(name, ours, theirs)


def _column(j: int, names) -> str:
    """``"column 2"``, or ``"column 2 ('dose')"`` when the column names are known."""
    if names is not None and 0 <= j < len(names):
        return f"column {j} ({str(names[j])!r})"
    return f"column {j}"


def frame_feature_names(X):
    """The column names of a DataFrame-like ``X`` when all are strings, else None.

    As scikit-learn's ``_get_feature_names``, except that mixed or non-string column names
    give None rather than an error (``fit`` records names only when all are strings).
    """
    columns = getattr(X, "columns", None)
    if columns is None or isinstance(X, np.ndarray):
        return None
    columns = list(columns)
    if columns and all(isinstance(c, str) for c in columns):
        return tuple(columns)
    return None


def is_pandas(a) -> bool:
    return (hasattr(a, "to_numpy") and hasattr(a, "isna") and hasattr(a, "dtypes")
            and not isinstance(a, np.ndarray))


def is_missing_value(v) -> bool:
    """A missing value of an object column: None, NaN, ``pd.NA`` or ``pd.NaT``."""
    if v is None:
        return True
    if isinstance(v, (float, np.floating)):
        return bool(np.isnan(v))
    return type(v).__name__ in ("NAType", "NaTType")


def is_real_value(v) -> bool:
    """A number or a bool (a bool is a 0/1 number in a numeric column)."""
    return isinstance(v, (numbers.Real, np.bool_))


def numbers_as_objects(column) -> bool:
    """An object column (pandas) whose every value is a number, a bool or missing: numbers
    stored as objects (e.g. after ``pd.concat`` with ``None``), read as numbers (here and by
    the table encoding's ``"from_dtype"`` rule, :func:`jaxtree._inputs.encoding.fit`)."""
    return getattr(column.dtype, "kind", "") == "O" and all(
        is_missing_value(v) or is_real_value(v) for v in column.to_numpy(dtype=object))


def _pandas_to_numpy(a, name: str, allow_nan: bool = False) -> np.ndarray:
    """Numeric pandas DataFrame/Series -> numpy, with clear errors for missing values (with
    ``allow_nan``: missing values become NaN, float64). Object columns of numbers count as
    numeric (the table encoding reads them so too, :func:`jaxtree._inputs.encoding.fit`)."""
    dtypes = list(a.dtypes) if hasattr(a, "columns") else [a.dtype]
    columns = list(a.columns) if hasattr(a, "columns") else [getattr(a, "name", 0)]
    column = (lambda j: a.iloc[:, j]) if hasattr(a, "columns") else (lambda j: a)  # noqa: E731
    bad = [str(c) for j, (c, dt) in enumerate(zip(columns, dtypes))
           if getattr(dt, "kind", "O") not in "biuf" and not numbers_as_objects(column(j))]
    if bad:
        raise TypeError(
            f"{name} must hold numbers; column(s) {bad} are not numeric. Convert them "
            "(e.g. one-hot encode categories) or drop them before fitting."
        )
    missing = np.asarray(a.isna().to_numpy(), bool)
    if missing.any() and allow_nan:
        return a.to_numpy(dtype=np.float64, na_value=np.nan)
    if missing.any():
        first = np.argwhere(missing)[0]
        where = f"row {first[0]}" + (f", {_column(int(first[1]), columns)}"
                                     if missing.ndim == 2 else "")
        raise ValueError(
            f"{name} contains {int(missing.sum())} missing value(s) (NaN/None/pd.NA), the first "
            f"at {where}. Impute them (e.g. {name}.fillna(...)) or drop those rows "
            f"({name}.dropna()) first."
        )
    return a.to_numpy(dtype=np.float64) if any(
        not isinstance(dt, np.dtype) or dt.kind == "O" for dt in dtypes) else a.to_numpy()


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


def as_float_array(a, name: str, allow_nan: bool = False) -> np.ndarray:
    """``a`` as a real numeric numpy array (no copy when it already is one).

    Low-precision floats become float32; integers and booleans stay as they are (callers
    choose the compute dtype with :func:`float_dtype_for`). ``allow_nan``: missing values of a
    DataFrame or an object array (None, ``pd.NA``) become NaN instead of an error.
    """
    if hasattr(a, "toarray") and hasattr(a, "nnz"):  # scipy.sparse, without importing scipy
        raise TypeError(
            f"{name} is a sparse {type(a).__name__}; sparse input is not supported (the search "
            f"needs dense data). Convert it with {name}.toarray() if it fits in memory."
        )
    if is_pandas(a):
        a = _pandas_to_numpy(a, name, allow_nan)
    try:
        arr = np.asarray(a)
    except ValueError as exc:  # ragged nested lists
        raise ValueError(
            f"{name} must be a rectangular array of numbers; got a ragged sequence ({exc}). "
            "Make every row the same length."
        ) from None
    except Exception as exc:  # pragma: no cover - exotic containers
        raise TypeError(f"{name} must be array-like of numbers; got {type(a).__name__}.") from exc
    if arr.dtype == object and allow_nan:
        arr = np.where(np.vectorize(lambda v: v is None or type(v).__name__ in (
            "NAType", "NaTType"), otypes=[bool])(arr), np.nan, arr) if arr.size else arr
    if arr.dtype == object:
        flat = arr.ravel()
        if any(v is None for v in flat) or any(
                type(v).__name__ in ("NAType", "NaTType") for v in flat):
            raise ValueError(
                f"{name} contains missing values (None/pd.NA). Impute or drop them first."
            )
        for pos, v in enumerate(flat):
            if not isinstance(v, numbers.Real):
                idx = np.unravel_index(pos, arr.shape) if arr.ndim else ()
                try:  # Python's own wording, e.g. "float() argument must be a string or a
                    float(v)  # real number, not 'dict'" (scikit-learn's check matches it)
                    why = "only numbers are converted"
                except (TypeError, ValueError) as exc:
                    why = str(exc)
                if isinstance(v, complex):
                    raise ComplexDataError(
                        f"{name} must be real; got the complex value {v!r} at index "
                        f"{tuple(int(i) for i in idx)} (Complex data not supported). Pass the "
                        "real part or split real and imaginary parts into separate columns."
                    )
                raise TypeError(
                    f"{name} must hold numbers; got an object array with the non-numeric value "
                    f"{v!r} ({type(v).__name__}) at index {tuple(int(i) for i in idx)} ({why}). "
                    "Convert or drop non-numeric columns first."
                )
        # Every element is a real number: convert, as scikit-learn does (a copy).
        arr = arr.astype(np.float64)
    if np.iscomplexobj(arr):
        raise ComplexDataError(
            f"{name} must be real; got complex dtype {arr.dtype} (Complex data not supported). "
            f"Pass the real part (np.real({name})) or split real and imaginary parts into "
            "separate columns."
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


_FINITE_BLOCK_ROWS = 1 << 16


def _all_finite(arr: np.ndarray, allow_nan: bool = False) -> bool:
    """``np.isfinite(arr).all()`` (with ``allow_nan``: no ``inf``) over blocks of
    ``_FINITE_BLOCK_ROWS`` rows."""
    if arr.dtype.kind in "biu":
        return True
    ok = (lambda b: not np.isinf(b).any()) if allow_nan else (lambda b: np.isfinite(b).all())
    if arr.ndim == 0 or arr.shape[0] <= _FINITE_BLOCK_ROWS:
        return bool(ok(arr))
    return all(bool(ok(arr[s:s + _FINITE_BLOCK_ROWS]))
               for s in range(0, arr.shape[0], _FINITE_BLOCK_ROWS))


def is_all_finite(arr: np.ndarray) -> bool:
    """Whether ``arr`` holds no NaN or inf (checked in blocks of rows: no whole-array
    temporary)."""
    return _all_finite(arr)


def check_finite(arr: np.ndarray, name: str, axes=("row", "column"), column_names=None,
                 allow_nan: bool = False) -> None:
    """Raises a ValueError naming the count and the first NaN/inf (``axes`` name the axes;
    ``column_names``, when known, name the ``"column"`` axis' entries too); ``allow_nan``:
    only ``inf`` is refused (a missing value is NaN, see :func:`fill_missing`).

    An ``arr`` whose only non-finite values are infinite gets a message about infinite
    values only, saying that ``inf`` is not a missing value (with ``allow_nan``, that NaN
    is): "Remove or impute" and "NaN or infinite" read as if imputing an ``inf`` were the
    fix, where NaN is accepted as missing (``missing="indicator"``, the default).

    Finite data (the usual case) is checked in blocks of rows, so a large ``arr`` makes no
    whole-array temporary (issue 12 item 7).
    """
    if _all_finite(arr, allow_nan):
        return
    bad = np.isinf(arr) if allow_nan else ~np.isfinite(arr)
    if bad.any():
        count = int(bad.sum())
        first = np.argwhere(bad)[0]
        where = ", ".join(_column(int(i), column_names) if axis == "column" else f"{axis} {int(i)}"
                          for axis, i in zip(axes, first))
        if allow_nan or not np.isnan(arr).any():  # only infinite values are refused
            raise ValueError(
                f"{name} contains {count} infinite value(s), the first at {where}. inf is not "
                f"a missing value{' (NaN is)' if allow_nan else ''}: drop those rows or "
                "replace the values first.")
        raise ValueError(
            f"{name} contains {count} NaN or infinite value(s), the first at {where}. "
            "Remove or impute them first."
        )


def check_X(X, *, n_features: int | None = None, name: str = "X", min_samples: int = 1,
            allow_1d: bool = False, feature_names=None, allow_nan: bool = False) -> np.ndarray:
    """Validates a covariate matrix; returns a numpy array, a view of ``X`` where possible.

    Args:
      X: ``(n_samples, n_features)`` array-like (``(n_features,)`` when ``allow_1d``).
      n_features: the feature count the model was fitted with, if any.
      name: the argument's name in messages.
      min_samples: the fewest rows accepted.
      allow_1d: accept a single row ``(n_features,)`` (functional predict).
      feature_names: the column names, to name a column in messages; by default those of a
        DataFrame ``X`` with string column names.
      allow_nan: let missing values through as NaN (``inf`` is still refused): the caller
        applies the missing-value rule (:func:`fill_missing`).

    Raises:
      TypeError: for non-numeric, object or complex data.
      ValueError: for a wrong shape, empty or too small input, NaN/inf or missing values.
    """
    if not allow_1d and is_pandas(X) and not hasattr(X, "columns"):  # before its dtype
        raise ValueError(
            f"{name} must be 2-D (n_samples, n_features); got a pandas Series of {len(X)} "
            "values. For one row of a DataFrame pass a one-row DataFrame (df.iloc[[i]], not "
            "df.iloc[i]); for one feature, series.to_frame().")
    names = frame_feature_names(X) if feature_names is None else tuple(feature_names)
    arr = as_float_array(X, name, allow_nan)
    if allow_1d and arr.ndim == 1:
        if arr.shape[0] == 0:
            raise ValueError(f"{name} is empty (shape {arr.shape}); it needs at least one value.")
        check_finite(arr, name, allow_nan=allow_nan)
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
    if n_features is not None and arr.shape[1] != n_features:
        # One sentence, in scikit-learn's words (its check_n_features_in_after_fitting
        # matches "X has 1 features, but \w+ is expecting 3 features as input").
        raise ValueError(
            f"{name} has {arr.shape[1]} features, but predict is expecting {n_features} "
            "features as input, the number of columns in fit. Pass the same columns, in the "
            "same order, as in fit."
        )
    check_finite(arr, name, column_names=names, allow_nan=allow_nan)
    return arr


MISSING_AT_PREDICT = (
    "each took the low end of its covariate's range (the training minimum, or the round "
    "number below it where the model's range starts; jaxtree's rule for a missing value at "
    "predict time in a column that had none in training, the same in est.predict and "
    "jaxtree.predict; docs/quickstart.md, 'Raw tables: categories and missing values')")


def warn_missing_filled(columns, count: int) -> None:
    """The one warning of a predict call whose missing values took the low end of the range
    of columns that had none in training (:func:`fill_missing`,
    :func:`jaxtree._inputs.encoding.transform`)."""
    warn_user(f"X has {count} missing value(s) (NaN) in column(s) {list(columns)} that had "
              f"none in training: {MISSING_AT_PREDICT}. Impute them before predicting to "
              "silence this, or fit on data with missing values so that the model learns from "
              "them (missing='indicator' adds a '<column> missing' covariate).",
              MissingValueWarning)


def warn_unseen_levels(columns, count: int, examples) -> None:
    """The one warning of a predict call whose categorical values include levels that no
    training row had, in columns without an ``"<col>=other"`` covariate
    (:func:`jaxtree._inputs.encoding.transform`)."""
    shown = ", ".join(repr(v) for v in examples)
    warn_user(f"X has {count} value(s) in categorical column(s) {list(columns)} that no "
              f"training row had (e.g. {shown}): each such row sets none of its column's level "
              "covariates (all 0), a combination no training row had, so the model's reading "
              "of it is an extrapolation. Map them to a level seen in training to silence "
              "this. (A column whose rare training levels were grouped into '<column>=other' "
              "takes unseen levels there, without this warning.)", UnseenLevelWarning)


def fill_missing(arr: np.ndarray, fills, *, refuse: bool = False, names=None,
                 name: str = "X") -> np.ndarray:
    """The missing-value rule at predict time of a model's covariates (``jaxtree.predict``;
    the estimators apply the same rule to their raw columns in :mod:`jaxtree._inputs.encoding`).

    A NaN in covariate ``j`` takes ``fills[j]``, the low end of its range (the model's
    ``x_min``), with one :class:`MissingValueWarning` naming the columns and the count;
    with ``refuse`` (a model fitted with ``missing="error"``) it is a ``ValueError`` naming
    the count, the first row and the column.

    Args:
      arr: float ``(n, p)`` or ``(p,)`` (checked by :func:`check_X` with ``allow_nan``).
      fills: float ``(p,)`` the value each covariate's missing value takes.
      refuse: refuse missing values instead. names: the covariates' names, for messages.

    Returns:
      ``arr`` itself when it holds no NaN, else a filled copy of the same dtype.
    """
    if arr.dtype.kind != "f" or _all_finite(arr):
        return arr
    nan = np.isnan(arr)
    if not nan.any():
        return arr
    rows = nan if nan.ndim == 2 else nan[None, :]
    cols = np.flatnonzero(rows.any(0))
    shown = [names[j] if names is not None and j < len(names) else f"x{j + 1}" for j in cols]
    if refuse:
        j = int(cols[0])
        raise ValueError(
            f"{name} contains {int(nan.sum())} NaN (missing) value(s), the first at row "
            f"{int(np.argmax(rows[:, j]))}, {_column(j, names)}, and the model was fitted "
            "with missing='error', which refuses them. Impute or drop them, or refit with "
            "missing='indicator' (the default) to learn from them.")
    warn_missing_filled(shown, int(nan.sum()))
    fills = np.asarray(fills, arr.dtype).reshape(-1)
    return np.where(nan, fills if nan.ndim == 1 else fills[None, :], arr).astype(arr.dtype)


def _name_list(names, limit: int = 5) -> str:
    """scikit-learn's layout: one ``- name`` line per name, at most ``limit``, then ``- ...``."""
    lines = [f"- {n}\n" for n in names[:limit]]
    return "".join(lines) + ("- ...\n" if len(names) > limit else "")


def check_feature_names(X, fitted_names, estimator_name: str = "TreeRegressor",
                        stacklevel: int = 3) -> None:
    """Checks ``X``'s column names against the names seen in ``fit`` (scikit-learn's rule).

    A model fitted on a DataFrame with string column names (``feature_names_in_``) and
    given a DataFrame with other names, or the same names in another order, would silently
    predict from the wrong columns; that raises. Names present on one side only warn, in
    scikit-learn's words (an array has no names to check, so it is trusted).

    Args:
      X: the input of ``predict``/``score``: a DataFrame, array or list.
      fitted_names: ``feature_names_in_`` of the fitted model (a sequence of strings), or
        None when it was fitted without names.
      estimator_name: the class name used in the warnings.

    Raises:
      ValueError: when both have names and they differ in names, count or order. The
        message starts as scikit-learn's ("The feature names should match those that were
        passed during fit.", then the unseen / missing names, or "Feature names must be in
        the same order as they were in fit.") and ends with the fix.

    Warns:
      UserWarning: "X does not have valid feature names, but TreeRegressor was fitted with
        feature names" (fitted on a DataFrame, given an array or a DataFrame without string
        column names), or "X has feature names, but TreeRegressor was fitted without
        feature names" (the reverse).
    """
    names = frame_feature_names(X)
    fitted = None if fitted_names is None else tuple(str(n) for n in fitted_names)
    if names is None and fitted is None:
        return
    if fitted is None:
        warnings.warn(f"X has feature names, but {estimator_name} was fitted without feature "
                      "names", UserWarning, stacklevel=stacklevel)
        return
    if names is None:
        warnings.warn(f"X does not have valid feature names, but {estimator_name} was fitted "
                      "with feature names", UserWarning, stacklevel=stacklevel)
        return
    if names == fitted:
        return
    unexpected = sorted(set(names) - set(fitted))
    missing = sorted(set(fitted) - set(names))
    message = "The feature names should match those that were passed during fit.\n"
    if unexpected:
        message += "Feature names unseen at fit time:\n" + _name_list(unexpected)
    if missing:
        message += "Feature names seen at fit time, yet now missing:\n" + _name_list(missing)
    if not unexpected and not missing:
        message += "Feature names must be in the same order as they were in fit.\n"
        if len(names) == len(fitted):
            moved = [n for n, f in zip(names, fitted) if n != f]
            message += f"Reordered columns: {moved}.\n"
        else:
            message += "Some columns are repeated.\n"
    message += (f"Fitted with columns {list(fitted)}; got {list(names)}. Select and order the "
                f"columns as in fit: X[{list(fitted)}].")
    raise ValueError(message)


def check_y(y, n_samples: int) -> np.ndarray:
    """Validates targets ``(n_samples,)`` (or ``(n_samples, 1)``); returns numpy."""
    if y is None:
        raise ValueError("fit requires y to be passed, but the target y is None. jaxtree is "
                         "supervised: call fit(X, y).")
    text = _text_value(y)
    if text is not None:
        raise TypeError(
            f"The target y must hold numbers for a regression; got text such as {text!r}. "
            "For class labels use jaxtree.TreeClassifier; for numbers stored as text convert "
            "y first (pd.to_numeric(y) or np.asarray(y, dtype=float)).")
    arr = as_float_array(y, "y")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"y must be 1-D (n_samples,); got shape {arr.shape}. jaxtree fits one target.")
    if arr.shape[0] != n_samples:
        raise ValueError(f"X has {n_samples} rows but y has {arr.shape[0]}; they must match "
                         "(one target per row of X).")
    check_finite(arr, "y")
    return arr


def check_targets(y, n_samples: int, dtype) -> np.ndarray:
    """The checked regression targets ``(n_samples,)`` of a training table
    (:func:`check_y`), representable in the compute ``dtype`` (:func:`check_representable`).
    A column vector is accepted, with a warning, as scikit-learn does."""
    arr = check_y(y, n_samples)
    check_representable(None, arr, dtype)
    if np.asarray(y).ndim == 2:  # check_y accepted a column vector
        warn_user("A column-vector y was passed when a 1d array was expected; it was used as "
                  "y.ravel(). Pass y with shape (n_samples,) to silence this.",
                  interop_class("DataConversionWarning", UserWarning))
    return arr


def _text_value(y):
    """The first text value (str, bytes, a pandas category or string entry) of a target, or
    None when ``y`` holds none (numbers, NaN, ...: the usual checks then decide)."""
    try:
        if is_pandas(y):
            if getattr(getattr(y, "dtype", None), "kind", "O") in "biufc":
                return None
            a = y.to_numpy(dtype=object)
        else:
            a = np.asarray(y)
    except (TypeError, ValueError):  # ragged input: the usual checks say so
        return None
    if a.dtype.kind in "US":
        return a.ravel()[0] if a.size else None
    if a.dtype.kind != "O":
        return None
    for v in a.ravel():
        if isinstance(v, (str, bytes, np.str_, np.bytes_)):
            return v
    return None


def check_sample_weight(sample_weight, n_samples: int) -> np.ndarray | None:
    """Validates non-negative weights ``(n_samples,)`` with a positive sum (None passes)."""
    if sample_weight is None:
        return None
    arr = as_float_array(sample_weight, "sample_weight")
    if arr.ndim == 0:
        arr = np.full(n_samples, float(arr))
    if arr.shape != (n_samples,):
        raise ValueError(f"sample_weight must have shape ({n_samples},) (one weight per row); "
                         f"got {arr.shape}.")
    check_finite(arr, "sample_weight")
    if (arr < 0).any():
        raise ValueError("sample_weight must be non-negative; set the weight of rows to ignore to 0.")
    if not arr.sum() > 0:
        raise ValueError("sample_weight must have a positive sum; at least one row needs "
                         "weight > 0 (got all zero weights).")
    return arr


def rows_of_positive_weight(sample_weight) -> Optional[int]:
    """The rows a weighted fit learns from: how many of ``sample_weight`` ``(n,)`` are
    positive (a row of weight 0 is no row of the fit); None without weights."""
    if sample_weight is None:
        return None
    return int(np.count_nonzero(np.asarray(sample_weight) > 0))


def check_weighted_rows(sample_weight, n_samples: int) -> Optional[int]:
    """:func:`rows_of_positive_weight`, refused below 2 as a table of fewer than 2 rows is
    (``fit needs at least 2 samples``): the rules on a fit's rows count the rows of positive
    weight (:func:`jaxtree._fit.limits.check_size` warns on few of them).

    Raises:
      ValueError: fewer than 2 rows of positive weight, with the count and the fix.
    """
    m = rows_of_positive_weight(sample_weight)
    if m is not None and m < 2:
        raise ValueError(
            f"fit needs at least 2 samples with positive sample_weight; got {m} (of "
            f"{n_samples} rows). A row of weight 0 is left out of the fit: give more rows a "
            "positive weight, or fit more rows.")
    return m


def check_class_weights(classes, index, sample_weight) -> None:
    """Refuses weights that leave samples of only one class: a classifier's fit needs a
    positive total weight on at least 2 classes, as it needs 2 classes in ``y``
    (:func:`check_labels`). A class of ``y`` whose rows all have weight 0 among three or
    more is refused too: its one-versus-rest tree would learn "never" from no row (a logit
    of about -27), and ``classes_`` would still name it.

    Args:
      classes: ``(K,)`` the sorted classes; index: ``(n,)`` int, each row's class;
      sample_weight: ``(n,)`` checked weights (:func:`check_sample_weight`), or None.

    Raises:
      ValueError: naming the classes of zero total weight, the one left, and the fix.
    """
    if sample_weight is None:
        return
    totals = np.bincount(np.asarray(index).reshape(-1), minlength=len(classes),
                         weights=np.asarray(sample_weight, np.float64))
    kept = totals > 0
    if kept.all():
        return
    label = lambda c: c.item() if hasattr(c, "item") else c  # noqa: E731
    zero = [label(c) for c in np.asarray(classes)[~kept]]
    if kept.sum() >= 2:
        raise ValueError(
            f"every row of class(es) {zero} has sample_weight 0: the classifier would keep "
            "a class it has no row to learn from. Drop those rows (and the class) from X and "
            "y, or give some of them a positive weight.")
    one = label(np.asarray(classes)[kept][0])
    raise ValueError(
        f"TreeClassifier needs samples of at least 2 classes with positive sample_weight; "
        f"every row of class(es) {zero} has weight 0, which leaves only class {one!r}. Give "
        "some rows of another class a positive weight (a row of weight 0 is left out of the "
        "fit), or check the weights.")


def check_representable(X: Optional[np.ndarray], y: Optional[np.ndarray], dtype,
                         feature_names=None) -> None:
    """Checks that the min-max scaling of ``X`` and ``y`` is representable in ``dtype``.

    ``feature_names`` (optional, ``n_features`` strings) name the offending column. Either
    array may be None (not checked): a classifier's labels are never scaled.

    Raises:
      ValueError: when a column's range (``max - min``) overflows, or a value does not fit
        the compute dtype (e.g. 1e40 in float32).
    """
    limit = float(np.finfo(dtype).max)
    with np.errstate(over="ignore", invalid="ignore"):
        for name, a in (("X", X), ("y", y)):
            if a is None:
                continue
            a = np.asarray(a)
            a2 = a.reshape(a.shape[0], -1)
            # Column extremes in the input's dtype, then float64: exact (rounding to float64
            # is monotone), and no float64 copy of the whole array (issue 12 item 7).
            lo, hi = _threads.column_extremes(a2)
            lo, hi = lo.astype(np.float64), hi.astype(np.float64)
            span = hi - lo
            amax = np.maximum(np.abs(lo), np.abs(hi))
            big = ~(np.isfinite(span) & (amax <= limit) & (span <= limit))
            if big.any():
                col = int(np.argmax(big))
                where = f" {_column(col, feature_names)}" if name == "X" else ""
                raise ValueError(
                    f"{name}{where} holds values too large to compute with in {np.dtype(dtype).name} "
                    f"(max |value| {amax[col]:.3g}, range {span[col]:.3g}). "
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
    return isinstance(X, (np.ndarray, list, tuple, np.generic)) or is_pandas(X)


def true_labels(y, shape: tuple) -> np.ndarray:
    """The true labels of a classifier's ``score``: ``(n,)`` (or ``(n, 1)``), one per row of
    the predictions (``shape``), none missing (a missing label is no class to score against:
    refused, as ``fit`` refuses it, instead of counted as a wrong prediction)."""
    ya = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y)
    ya = ya.reshape(-1) if ya.ndim == 2 and ya.shape[1] == 1 else ya
    if ya.shape != tuple(shape):
        raise ValueError(f"y must have shape {tuple(shape)} (one label per row of X); got "
                         f"{ya.shape}.")
    missing = (np.isnan(ya) if ya.dtype.kind == "f" else
               np.array([is_missing_value(v) for v in ya], bool) if ya.dtype.kind == "O" else
               np.zeros(ya.shape, bool))
    if missing.any():
        raise ValueError(f"y contains {int(missing.sum())} missing label(s) (None or NaN), the "
                         f"first at row {int(np.argmax(missing))}; score needs the true class "
                         "of every row. Drop those rows first.")
    return ya


def check_labels(y, n_samples: int):
    """Validates class labels; returns ``(classes, index)``.

    Any label type numpy can sort (ints, strings, booleans, integral floats). ``classes`` is
    sorted (``numpy.unique``); ``index[i]`` is row ``i``'s position in it.

    Raises:
      ValueError: no y, wrong shape or length, NaN, continuous targets ("Unknown label
        type"), fewer than two classes.
      TypeError: labels of mixed, incomparable types.
    """
    if y is None:
        raise ValueError("fit requires y to be passed, but the target y is None. TreeClassifier "
                         "is supervised: call fit(X, y) with one class label per row.")
    arr = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        warn_user("A column-vector y was passed when a 1d array was expected; it was used "
                  "as y.ravel(). Pass y with shape (n_samples,) to silence this.",
                  interop_class("DataConversionWarning", UserWarning))
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"y must be 1-D (n_samples,) class labels; got shape {arr.shape}. "
                         "Multi-output and multilabel classification are not supported.")
    if arr.shape[0] != n_samples:
        raise ValueError(f"X has {n_samples} rows but y has {arr.shape[0]}; they must match "
                         "(one class label per row of X).")
    if arr.dtype.kind == "c":
        raise ComplexDataError("Complex data not supported: y holds complex numbers.")
    if arr.dtype.kind == "f" or (arr.dtype.kind == "O" and all(isinstance(v, (float, np.floating))
                                                              for v in arr[:50])):
        fl = arr.astype(np.float64)
        if not np.isfinite(fl).all():
            raise ValueError("Input y contains NaN or infinity; every row needs a class label.")
        if (fl != np.round(fl)).any():
            raise ValueError("Unknown label type: 'continuous'. TreeClassifier needs class labels "
                             "(ints, strings, booleans); for a real-valued target use "
                             "TreeRegressor.")
    if arr.dtype.kind == "O":
        if any(v is None or (isinstance(v, float) and np.isnan(v)) for v in arr):
            raise ValueError("y contains missing labels (None or NaN); every row needs a class.")
        try:
            classes, index = np.unique(arr, return_inverse=True)
        except TypeError:
            raise TypeError("y mixes label types that cannot be compared (e.g. strings and "
                            "numbers); use one type for all labels.") from None
    else:
        classes, index = np.unique(arr, return_inverse=True)
    if len(classes) < 2:
        one = classes[0].item() if hasattr(classes[0], "item") else classes[0]
        raise ValueError(f"TreeClassifier needs samples of at least 2 classes in y; got only one "
                         f"class: {one!r}. Check the labels (or the sample selection).")
    return classes, np.asarray(index, np.int64).reshape(-1)
