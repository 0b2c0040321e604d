"""The table encoder: raw tables (missing values, categories) -> the numeric matrix the search sees.

Why one long file (over 800 lines): the encoder's fit, its transform (in memory, and block by
block for a memmap: :class:`EncodedRows`, :func:`streamed_rows`), the spec and its file form
all follow the column rules written once below; apart, each part would restate them.

One encoder at the boundary, fitted on the training table into a small frozen
:class:`EncodingSpec` (JSON-serialisable, saved with the model) and applied to every table
the model sees afterwards (``fit``, ``predict``, ``score``, ``jaxtree predict``). The core
never sees a NaN or a string: it sees covariates, some of them 0/1 indicators, with names.

Rules (decisions, and why):

* **Numeric columns** pass through unchanged. A numeric column that holds missing values
  (NaN, None, ``pd.NA``) in the training table gets

  - a *fill value*, the column's **training minimum**, moved with the range's low end
    when the scaling rounds the range out (:func:`refill`) (so the basis sees an in-range
    value; after scaling a filled row sits at 0, where the powers, sines and truncated
    cubics of the default basis vanish, so the column's leaves say nothing about the row),
  - plus a *missing indicator* covariate named ``"<col> missing"`` (1 where the value was
    missing, else 0), placed right after the column. The search can put a leaf on it like on
    any covariate, so a formula reads, e.g., ``0.2·(year missing)``.

  **Missing values at predict time, one rule** (the estimators' ``predict`` and
  :func:`jaxtree.predict` apply it alike; the HistGradientBoosting convention of sending
  them where the model has a documented place for them): a missing value in a column
  that had none in training takes the same kind of fill, the low end of the column's range
  (a model's ``x_min``: its training minimum, or the round number below it), with one
  warning per call (``MissingValueWarning``, naming the columns and the count) since the
  model never learned what missing means there; a column that had missing values in
  training takes the fill and sets its indicator, silently (that is what the model
  learned). With ``missing="error"`` any missing value is refused
  at fit and at predict with a ``ValueError`` naming the count, the first row and the
  column (and so is ``jaxtree.predict`` of such a model: its ``missing`` rule is
  ``"error"``). ``inf`` is not "missing": it is refused by the usual finiteness check in
  both policies, with a message about infinite values only (under ``"indicator"`` checked
  on the table itself, so it names the table's column, not an encoded one).

  **What is missing, one rule for every container** (decision, fifty-eighth session): NaN in
  a float column or array, ``pd.NA`` in a nullable column (``Int64``, ``boolean``,
  ``Float64``), and ``None`` (or ``pd.NA``, ``NaN``) among the numbers of an object column
  or array, a list of lists included. An object numpy array with ``None`` was refused
  ("Impute or drop them") while the same column in a DataFrame, and ``jaxtree.predict`` of
  the same array, read it as missing; it now reads as the NaN it stands for
  (:func:`jaxtree._inputs.validation.as_float_array` with ``allow_nan``, the conversion
  ``jaxtree.predict`` already used). Safe because the conversion happens before the
  encoder looks for NaN, so such a column gets its fill and indicator like a float column
  with NaN, at fit and at predict; under ``missing="error"`` the usual checks still refuse
  it. Targets and weights have no missing values: ``None`` there is still refused.
* **Categorical columns**: by default (``categorical_features="from_dtype"``) the pandas
  ``category``, string and object columns of a DataFrame (an object column holding only
  numbers stays numeric); or those named by ``categorical_features`` (indices, names or a
  boolean mask, as scikit-learn's ``HistGradientBoostingRegressor``), which also works for
  numpy arrays and numeric-coded columns (zip codes); ``None`` makes every column numeric
  (a string column is then a ``TypeError``). Each kept level becomes a 0/1 covariate named
  ``"<col>=<level>"`` (e.g. ``carrier=UA``). Min-max scaling maps a 0/1 column to itself, and
  on ``{0, 1}`` every basis function is affine in the indicator (the basis's ``x`` is the
  indicator itself), so the tree combines them with ``+`` and ``*`` like any leaf.

  - Level names: strings as they are; integral numbers without a decimal point (``3``, not
    ``3.0``); other values as ``str``. Values with the same name are one level.
  - **Order**: levels are sorted by value when all are numbers, else by name (Python string
    order): the same table always gives the same covariates in the same order.
  - **Rare levels**: a level seen in fewer than ``min_frequency`` training rows, and the
    least frequent levels beyond ``max_categories - 1`` when there are more than
    ``max_categories`` levels (ties broken by the sort order), are grouped into one covariate
    ``"<col>=other"``. There is no ``other`` column when nothing was grouped.
  - **Unseen levels** at predict time map to ``"<col>=other"`` when the column has one (they
    are, like the grouped levels, "some other level"), else to all zeros (the baseline of
    the column's indicators), with one :class:`jaxtree.UnseenLevelWarning` per call naming
    the columns, the count and a few of the levels: every training row set one of its
    column's covariates, so the model's reading of a row that sets none is an
    extrapolation.
  - **Missing values** in a categorical column: with ``missing="indicator"`` and missing
    values in the training table, an indicator ``"<col> missing"``; a missing value at
    predict time in a column without one gives all zeros (the baseline of its indicators),
    with the warning above. With ``missing="error"``: refused.
  - Pandas ``bool`` columns are numeric 0/1 covariates already (one column, named as is);
    a nullable ``boolean`` column with ``pd.NA`` is numeric with missing values.

* Names that collide (``"a missing"`` given as a column and made as an indicator) get a
  suffix ``#2``, ``#3``, ... so encoded names are unique.
* A table of numeric columns without missing values gives the *identity* spec: the table
  goes to the usual checks untouched (no copy), and model files are byte-identical to those
  written before the encoder existed (the spec is saved only when it is not the identity).

Functions here are pure NumPy over host data (pandas is used when the input is a DataFrame,
never imported otherwise); the core never imports this module.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Optional, Sequence

import numpy as np

from jaxtree import _threads
from jaxtree._inputs import validation as V

__all__ = [
    "CATEGORICAL_MODES",
    "check_categorical_features",
    "check_missing",
    "ColumnSpec",
    "DEFAULT_MAX_CATEGORIES",
    "DEFAULT_MIN_FREQUENCY",
    "default_names",
    "EncodedRows",
    "EncodingSpec",
    "fit",
    "fit_streamed",
    "from_dict",
    "identity",
    "MISSING_POLICIES",
    "names_out",
    "numeric",
    "rename",
    "transform",
]

MISSING_POLICIES = ("indicator", "error")
"""``missing=``: learn from missing values (fill + indicator) or refuse them."""

CATEGORICAL_MODES = ("from_dtype", None)
"""The non-list values of ``categorical_features=``."""

DEFAULT_MAX_CATEGORIES = 16
"""Most indicator covariates per categorical column, ``other`` included."""

DEFAULT_MIN_FREQUENCY = 5
"""Levels seen in fewer training rows are grouped into ``other``."""

SPEC_VERSION = 1


@dataclasses.dataclass(frozen=True)
class ColumnSpec:
    """How one raw column is encoded.

    Attributes:
      name: the raw column's name (``"x3"`` when the table had no string names).
      kind: ``"numeric"`` or ``"categorical"``.
      fill: the value that replaces a missing one: the training minimum when the encoder
        is fitted, the low end of the model's range after the fit (:func:`with_range_fills`;
        the filled training rows are moved there, :func:`refill`).
      indicator: whether a ``"<name> missing"`` covariate follows the column's covariates.
      levels: categorical columns: the kept level names, in covariate order.
      other: categorical columns: whether a ``"<name>=other"`` covariate groups rare levels.
      two_valued: numeric columns: whether the column took exactly two values on the
        training rows of positive weight (set after the fit, :func:`with_two_valued`): its
        formulas read a function of it as the line between them (``1.5·am``).
    """

    name: str
    kind: str = "numeric"
    fill: float = 0.0
    indicator: bool = False
    levels: tuple = ()
    other: bool = False
    two_valued: bool = False

    def out_names(self) -> list:
        if self.kind == "numeric":
            names = [self.name]
        else:
            names = [f"{self.name}={lv}" for lv in self.levels]
            names += [f"{self.name}=other"] if self.other else []
        return names + ([f"{self.name} missing"] if self.indicator else [])


@dataclasses.dataclass(frozen=True)
class EncodingSpec:
    """A fitted encoding: one :class:`ColumnSpec` per raw column (frozen, JSON-serialisable).

    Attributes:
      columns: the raw columns' specs, in the table's order.
      named: whether the training table had string column names (else names are ``x1..``).
    """

    columns: tuple
    named: bool = False

    @property
    def n_features_in(self) -> int:
        """Number of raw columns."""
        return len(self.columns)

    @property
    def feature_names_out(self) -> tuple:
        """Names of the encoded covariates (unique), in the matrix's column order."""
        return _unique([n for c in self.columns for n in c.out_names()])

    @property
    def is_identity(self) -> bool:
        """True when every column is numeric without an indicator (the matrix is the table)."""
        return all(c.kind == "numeric" and not c.indicator for c in self.columns)

    def source_columns(self) -> tuple:
        """For each encoded covariate, the index of the raw column it comes from."""
        return tuple(j for j, c in enumerate(self.columns) for _ in c.out_names())

    def starts(self) -> tuple:
        """``((column, j), ...)``: each raw column with the position of its first encoded
        covariate in the matrix (a column gives ``len(column.out_names())`` covariates)."""
        sizes = [len(c.out_names()) for c in self.columns]
        return tuple(zip(self.columns, np.cumsum([0] + sizes[:-1]).tolist()))

    def filled_covariates(self) -> tuple:
        """The encoded covariates that hold a fill value where the training table had a
        missing one (the numeric columns with an indicator), in the matrix's order."""
        return tuple(j for c, j in self.starts() if c.kind == "numeric" and c.indicator)

    def categorical_covariates(self) -> dict:
        """``{column name: (j_1, ..., j_L)}``: each categorical column's encoded covariates
        (its levels, ``other``, its missing indicator) in the matrix's column order."""
        return {str(c.name): tuple(range(j, j + len(c.out_names())))
                for c, j in self.starts() if c.kind == "categorical"}

    def to_dict(self) -> dict:
        """The JSON entry (exact floats)."""
        cols = []
        for c in self.columns:
            d = {"name": c.name, "kind": c.kind}
            if c.kind == "numeric":
                d["fill"] = float(c.fill)
                d["indicator"] = bool(c.indicator)
                if c.two_valued:  # written only where set: other files stay as they were
                    d["two_valued"] = True
            else:
                d.update(levels=list(c.levels), other=bool(c.other), indicator=bool(c.indicator))
            cols.append(d)
        return {"version": SPEC_VERSION, "named": bool(self.named), "columns": cols}


def default_names(p: int) -> tuple:
    """``("x1", ..., "xp")``: the names of ``p`` unnamed covariates."""
    return tuple(f"x{j + 1}" for j in range(p))


def names_out(enc, p: int) -> tuple:
    """The covariates' names after ``enc`` (an :class:`EncodingSpec`, or None for ``p``
    unencoded, unnamed columns: a streamed table without missing values)."""
    return default_names(p) if enc is None else enc.feature_names_out


def identity(n_features: int, names=None, fills=None) -> EncodingSpec:
    """The spec of ``n_features`` numeric columns without indicators (``fills``: the values a
    missing value takes at predict time, e.g. the training minima; 0 by default)."""
    named = names is not None
    names = tuple(names) if named else default_names(n_features)
    fills = [0.0] * n_features if fills is None else [float(v) for v in fills]
    return EncodingSpec(tuple(ColumnSpec(str(n), fill=f) for n, f in zip(names, fills)), named)


def with_two_valued(spec: EncodingSpec, covariates) -> EncodingSpec:
    """``spec`` with the numeric columns at the encoded ``covariates`` (increasing positions
    in the matrix, :func:`jaxtree._scaling.two_valued`) marked ``two_valued``; the
    others as they were (a loaded file's marks are kept)."""
    marked = {int(j) for j in covariates}
    if not marked:
        return spec
    return dataclasses.replace(spec, columns=tuple(
        dataclasses.replace(c, two_valued=True)
        if c.kind == "numeric" and j in marked and not c.two_valued else c
        for c, j in spec.starts()))


def with_range_fills(spec: Optional[EncodingSpec], x_min) -> Optional[EncodingSpec]:
    """``spec`` with each numeric column's fill the low end of its covariate's range
    ``x_min`` (the fitted model's, ``(m,)`` over the encoded covariates; any leading batch
    shape, the first member's read): a column with an indicator was fitted with its filled
    rows there (:func:`refill`), and a NaN in a column without one takes the value
    :func:`jaxtree.predict` gives it, so both paths agree. The range starts at the
    training minimum or, on round bounds, a little below it
    (:func:`jaxtree._scaling.round_bounds`). None stays None."""
    if spec is None:
        return None
    x_min = np.asarray(x_min, np.float64).reshape(-1)
    return dataclasses.replace(spec, columns=tuple(
        dataclasses.replace(c, fill=float(x_min[j]))
        if c.kind == "numeric" and float(c.fill) != float(x_min[j]) else c
        for c, j in spec.starts()))


def refill(x, filled: tuple, x_min):
    """The encoded rows ``x`` with each filled covariate's missing rows at the low end of its
    range ``x_min[j]`` (the scaling's, over the encoded covariates), where they scale to 0.

    Decision (fifty-fourth session): the encoder fills a missing value with the column's
    training minimum, the low end of the range before round bounds
    (:func:`jaxtree._scaling.round_bounds`). Once the range is rounded out, the filled rows
    move with it, so they still scale to 0, where the default basis's powers, sines and
    truncated cubics vanish and the indicator alone says what missing means; left at the
    training minimum they scaled to about 0.002 (Titanic's ``age`` lost 0.0035 AUC in 5 of
    5 folds, BENCHMARKS.md, "Round covariate bounds"), and keeping such a column's observed
    range instead printed ``cos(π·(age - 0.17)/79.83)`` for ``cos(π·age/80)``. The encoder's
    fill becomes the same low end after the fit (:func:`with_range_fills`).

    Args:
      x: the encoded matrix (changed in place: the encoder made it, so it is no user's
        array) or :class:`EncodedRows` (a new one, encoding with the moved fills).
      filled: the filled covariates' positions, each followed by its indicator
        (:meth:`EncodingSpec.filled_covariates`).
      x_min: float ``(m,)`` the low ends of the covariates' ranges.

    Returns:
      ``x`` (in memory) or the new :class:`EncodedRows`.
    """
    if not filled:
        return x
    if isinstance(x, EncodedRows):
        return EncodedRows(x.x, with_range_fills(x.spec, x_min))
    for j in filled:
        x[x[:, j + 1] == 1, j] = x_min[j]
    return x


def from_dict(d, path="<dict>") -> EncodingSpec:
    """Rebuilds a spec from :meth:`EncodingSpec.to_dict`, validating every field.

    Raises:
      ValueError: naming ``path`` for a malformed entry.
    """
    def fail(why):
        raise ValueError(f"{path}: not a valid jaxtree model file: encoding {why}")

    if not isinstance(d, dict) or set(d) != {"version", "named", "columns"}:
        fail("must be an object with the keys ['version', 'named', 'columns']")
    if d["version"] != SPEC_VERSION or type(d["version"]) is not int:
        fail(f"version {d['version']!r} is not supported (this jaxtree reads {SPEC_VERSION})")
    if not isinstance(d["named"], bool) or not isinstance(d["columns"], list) or not d["columns"]:
        fail("named must be a boolean and columns a non-empty list")
    cols = []
    for pos, c in enumerate(d["columns"]):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str) or not c["name"]:
            fail(f"column {pos} must be an object with a non-empty string name")
        if c.get("kind") == "numeric" and set(c) - {"two_valued"} == {"name", "kind", "fill",
                                                                  "indicator"}:
            fill = c["fill"]
            if isinstance(fill, bool) or not isinstance(fill, (int, float)) or not math.isfinite(fill):
                fail(f"column {pos} fill must be a finite number")
            if not isinstance(c["indicator"], bool):
                fail(f"column {pos} indicator must be a boolean")
            if c.get("two_valued", True) is not True:
                fail(f"column {pos} two_valued must be true where present")
            cols.append(ColumnSpec(c["name"], "numeric", float(fill), c["indicator"],
                                   two_valued="two_valued" in c))
        elif c.get("kind") == "categorical" and set(c) == {"name", "kind", "levels", "other",
                                                          "indicator"}:
            lv = c["levels"]
            if not (isinstance(lv, list) and all(isinstance(v, str) for v in lv)
                    and len(set(lv)) == len(lv)):
                fail(f"column {pos} levels must be a list of distinct strings")
            if not (isinstance(c["other"], bool) and isinstance(c["indicator"], bool)):
                fail(f"column {pos} other and indicator must be booleans")
            if not lv and not c["other"] and not c["indicator"]:
                fail(f"column {pos} encodes to no covariate")
            cols.append(ColumnSpec(c["name"], "categorical", 0.0, c["indicator"], tuple(lv),
                                   c["other"]))
        else:
            fail(f"column {pos} must be numeric {{name, kind, fill, indicator[, two_valued]}} or "
                 "categorical {name, kind, levels, other, indicator}")
    return EncodingSpec(tuple(cols), d["named"])


# ------------------------------------------------------------------------------ checks


def check_missing(value, name="missing"):
    """``value`` must be one of :data:`MISSING_POLICIES`."""
    return V.check_choice(value, name, MISSING_POLICIES)


def check_categorical_features(value, name="categorical_features"):
    """``"from_dtype"``, None, or a sequence of column indices, names or booleans."""
    if value is None or (isinstance(value, str) and value == "from_dtype"):
        return value
    if isinstance(value, str):
        raise ValueError(f"Unknown {name} {value!r}; valid values are 'from_dtype', None, or a "
                         "list of column indices, column names or a boolean mask.")
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"{name} must be 'from_dtype', None, or a list of column indices, names "
                        f"or a boolean mask; got {value!r} ({type(value).__name__}).") from None
    kinds = {("bool" if isinstance(v, (bool, np.bool_)) else "int" if isinstance(v, numbers.Integral)
              else "str" if isinstance(v, str) else "bad") for v in items}
    if "bad" in kinds or len(kinds) > 1:
        raise TypeError(f"{name} must hold only column indices (int), only column names (str) or "
                        f"only booleans (a mask); got {items!r}.")
    return value


# ------------------------------------------------------------------------------ helpers


def _unique(names) -> tuple:
    seen, out = {}, []
    for n in names:
        if n in seen:
            seen[n] += 1
            cand = f"{n}#{seen[n]}"
            while cand in seen:
                seen[n] += 1
                cand = f"{n}#{seen[n]}"
            seen[cand] = 1
            out.append(cand)
        else:
            seen[n] = 1
            out.append(n)
    return tuple(out)


def _level_name(v) -> str:
    """``"UA"``; ``3`` and ``3.0`` -> ``"3"``; ``2.5`` -> ``"2.5"``; ``True`` -> ``"True"``."""
    if isinstance(v, str):
        return v
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        f = float(v)
        return str(int(f)) if f.is_integer() and abs(f) < 2 ** 53 else repr(f)
    return str(v)


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def _factorize(values: np.ndarray):
    """``(codes, uniques)`` of a 1-D object array; missing values get code -1."""
    try:
        import pandas as pd  # noqa: PLC0415 - fast path only
    except ImportError:
        pd = None
    if pd is not None:
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
        return np.asarray(codes, np.int64), list(np.asarray(uniques, dtype=object))
    index, uniques = {}, []
    codes = np.empty(len(values), np.int64)
    for i, v in enumerate(values):
        if V.is_missing_value(v):
            codes[i] = -1
            continue
        key = (type(v), v)
        if key not in index:
            index[key] = len(uniques)
            uniques.append(v)
        codes[i] = index[key]
    return codes, uniques


def _is_frame(X) -> bool:
    return V.is_pandas(X) and hasattr(X, "columns")


def _frame_kind(s) -> str:
    """``"numeric"``, ``"categorical"`` or ``"unsupported"`` for a DataFrame column under
    ``"from_dtype"``."""
    dt = s.dtype
    kind = getattr(dt, "kind", "O")
    name = str(dt)
    if name == "category" or name.startswith("string") or name == "str":
        return "categorical"
    if isinstance(dt, np.dtype) and kind in "biuf":
        return "numeric"
    if kind in "biuf":  # nullable Int64 / Float64 / boolean
        return "numeric"
    if kind == "O":
        return "numeric" if V.numbers_as_objects(s) else "categorical"
    return "unsupported"


def _column_name(j, names) -> str:
    return f"column {j} ({names[j]!r})" if names is not None else f"column {j}"


def _split_columns(X, categorical_features):
    """``(raw columns, categorical mask, names)`` of a table, or None when ``X`` is no 2-D
    table (the usual checks then raise their message).

    A non-DataFrame ``X`` without explicit categorical columns goes through
    :func:`jaxtree._inputs.validation.as_float_array` (its messages for strings, complex numbers,
    sparse matrices and ragged lists), ``None`` and ``pd.NA`` read as NaN.
    """
    frame = _is_frame(X)
    if frame:
        names = V.frame_feature_names(X)
        cols = [X.iloc[:, j] for j in range(X.shape[1])]
    elif V.is_pandas(X):  # a Series: no table (check_X says so, with the pandas fix)
        return None
    else:
        names = None
        explicit = categorical_features is not None and not isinstance(categorical_features, str)
        if explicit:
            try:
                arr = np.asarray(X)
            except Exception:  # noqa: BLE001 - ragged lists etc.: check_X names the problem
                return None
        else:
            arr = V.as_float_array(X, "X", allow_nan=True)  # None/pd.NA: NaN, a missing value
        if arr.ndim != 2:
            return None
        cols = [arr[:, j] for j in range(arr.shape[1])]
    return cols, _categorical_mask(categorical_features, len(cols), names, frame, cols), names


def _categorical_mask(cf, p, names, is_frame, cols):
    if cf is None:
        return [False] * p
    if isinstance(cf, str):  # "from_dtype"
        if not is_frame:
            return [False] * p
        kinds = [_frame_kind(c) for c in cols]
        return [k == "categorical" for k in kinds]
    items = list(cf)
    if items and isinstance(items[0], (bool, np.bool_)):
        if len(items) != p:
            raise ValueError(f"categorical_features as a boolean mask must have one entry per "
                             f"column ({p}); got {len(items)}.")
        return [bool(v) for v in items]
    mask = [False] * p
    for v in items:
        if isinstance(v, str):
            if names is None or v not in names:
                raise ValueError(f"categorical_features names the column {v!r}, which X does not "
                                 f"have" + (f"; its columns are {list(names)}." if names else
                                            " (X has no column names: pass indices)."))
            mask[names.index(v)] = True
        else:
            if not -p <= int(v) < p:
                raise ValueError(f"categorical_features index {v} is out of range for X with {p} "
                                 "columns.")
            mask[int(v) % p] = True
    return mask


def _numeric_column(c, j, names) -> np.ndarray:
    """A raw column as a 1-D real array (NaN for missing values); TypeError otherwise."""
    where = _column_name(j, names)
    if V.is_pandas(c):
        dt = c.dtype
        if isinstance(dt, np.dtype) and dt.kind in "biuf":
            c = c.to_numpy()
        elif getattr(dt, "kind", "O") in "biuf":  # nullable extension dtypes
            c = c.to_numpy(dtype=np.float64, na_value=np.nan)
        elif getattr(dt, "kind", "O") == "O" and _frame_kind(c) == "numeric":
            c = c.to_numpy(dtype=object)
        else:
            shown = [names[j]] if names is not None else [j]
            raise TypeError(
                f"X must hold numbers; column(s) {shown} are not numeric (dtype {dt}). Declare "
                "a column of categories with categorical_features (the default 'from_dtype' "
                "takes pandas category, string and object columns), convert it (e.g. a date to "
                "a number of days) or drop it.")
    a = np.asarray(c)
    if a.dtype == object:
        bad = [v for v in a if not (V.is_missing_value(v) or V.is_real_value(v))]
        if bad:
            raise TypeError(
                f"X {where} must hold numbers; got the non-numeric value {bad[0]!r} "
                f"({type(bad[0]).__name__}). Declare it categorical (categorical_features=...), "
                "or convert or drop it.")
        a = np.array([np.nan if V.is_missing_value(v) else float(v) for v in a], np.float64)
    return V.as_float_array(a, f"X {where}")


def _codes(c, j: int, names, missing: str):
    """``(codes, levels, missing mask)`` of categorical column ``j`` (code -1: missing);
    refuses missing values under ``missing="error"``."""
    codes, uniques = _factorize(_categorical_values(c))
    miss = codes < 0
    if miss.any() and missing == "error":
        _missing_error(j, names, int(miss.sum()), int(np.argmax(miss)))
    return codes, uniques, miss


def _categorical_values(c) -> np.ndarray:
    if V.is_pandas(c):
        return c.to_numpy(dtype=object)
    return np.asarray(c, dtype=object)


def _missing_error(j, names, count, first_row, what="missing value(s)"):
    raise ValueError(
        f"X contains {count} {what} (NaN/None/pd.NA) in {_column_name(j, names)}, the first at "
        f"row {first_row}, and missing='error' refuses them. Impute or drop them, or use "
        "missing='indicator' (the default) to learn from them (a fill value plus a "
        "'<column> missing' indicator covariate).")


# ------------------------------------------------------------------------------ fit / transform


def fit(X, *, categorical_features="from_dtype", missing: str = "indicator",
        max_categories: int = DEFAULT_MAX_CATEGORIES,
        min_frequency: int = DEFAULT_MIN_FREQUENCY) -> Optional[EncodingSpec]:
    """Fits the encoding of a training table.

    Args:
      X: the training table: a DataFrame, an array or nested lists ``(n, p)``.
      categorical_features: ``"from_dtype"``, None, or indices / names / a boolean mask.
      missing: ``"indicator"`` or ``"error"`` (see the module docstring).
      max_categories: most covariates per categorical column, ``other`` included (>= 2).
      min_frequency: levels seen in fewer training rows are grouped into ``other`` (>= 1).

    Returns:
      The spec, or None when ``X`` is not a 2-D table (the usual checks then raise).

    Raises:
      ValueError / TypeError: a missing value under ``missing="error"`` (in a categorical
        column; numeric columns are left to the usual checks, with their message), a bad
        ``categorical_features``, a column that is neither numeric nor categorical.
    """
    if not _is_frame(X) and (categorical_features is None or isinstance(categorical_features, str)):
        spec = _fit_float_matrix(X, missing)  # every column numeric
        if spec is not None:
            return spec
    split = _split_columns(X, categorical_features)
    if split is None:
        return None
    cols, mask, names = split
    named = names is not None
    shown = names if named else default_names(len(cols))
    specs = []
    for j, (c, is_cat) in enumerate(zip(cols, mask)):
        if not is_cat:
            a = _numeric_column(c, j, names)
            if missing == "indicator":  # inf is no missing value: named in the table's column
                V.check_finite(a, f"X {_column_name(j, names)}", axes=("row",), allow_nan=True)
            miss = np.isnan(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool)
            low = (np.nan if a.size == 0 or miss.all() else
                   float(np.nanmin(a)) if a.dtype.kind == "f" else float(np.min(a)))
            specs.append(_numeric_spec(shown[j], low, bool(miss.any()), missing))
            continue
        codes, uniques, miss = _codes(c, j, names, missing)
        counts = np.bincount(codes[~miss], minlength=len(uniques))
        by_name, raw = {}, {}
        for u, cnt in zip(uniques, counts):
            key = _level_name(u)
            by_name[key] = by_name.get(key, 0) + int(cnt)
            raw.setdefault(key, u)
        numeric = all(_is_number(v) for v in raw.values())
        order = sorted(by_name, key=(lambda k: (float(raw[k]), k)) if numeric else (lambda k: k))
        eligible = [k for k in order if by_name[k] >= min_frequency]
        if len(eligible) == len(order) and len(order) <= max_categories:
            kept = order
        else:
            ranked = sorted(eligible, key=lambda k: (-by_name[k], order.index(k)))
            keep = set(ranked[: max_categories - 1])
            kept = [k for k in order if k in keep]
        other = len(kept) < len(order)
        specs.append(ColumnSpec(shown[j], "categorical", 0.0,
                                bool(miss.any()) and missing == "indicator", tuple(kept), other))
    return EncodingSpec(tuple(specs), named)


def fit_transform(X, hyper: dict):
    """``(xa, spec)``: the training table ``X`` encoded (:func:`fit`, then :func:`transform`:
    missing values and categories become numeric covariates) and validated by the usual
    checks (:func:`jaxtree._inputs.validation.check_X`), with the settings of ``hyper`` (an
    estimator's ``get_params()``: ``categorical_features``, ``missing``, ``max_categories``,
    ``min_frequency``). Both estimators."""
    missing = hyper.get("missing", "indicator")
    spec = fit(X, categorical_features=hyper.get("categorical_features", "from_dtype"),
               missing=missing, max_categories=hyper.get("max_categories", DEFAULT_MAX_CATEGORIES),
               min_frequency=hyper.get("min_frequency", DEFAULT_MIN_FREQUENCY))
    # An identity spec means that fit found no missing value (it would have given the
    # column an indicator) and no category: transform would return X unchanged after
    # scanning it for NaN again, so the training table skips it.
    # (fit refused an infinite value already, named by its column: not read again here)
    Xe = X if spec is None or spec.is_identity else transform(spec, X, missing=missing,
                                                               refuse_inf=False)
    xa = V.check_X(Xe, min_samples=2, feature_names=None if Xe is X else spec.feature_names_out)
    # (spec is None only for what is no 2-D table, which check_X has refused)
    return xa, spec


def _numeric_spec(name: str, low: float, has_missing: bool, missing: str) -> ColumnSpec:
    """A numeric column's spec from its minimum over the non-missing values (NaN when there
    are none: the fill is then 0) and whether it holds missing values."""
    fill = 0.0 if math.isnan(low) else float(low)
    return ColumnSpec(name, "numeric", fill, bool(has_missing) and missing == "indicator")


def _fit_float_matrix(X, missing: str) -> Optional[EncodingSpec]:
    """:func:`fit` of a table read as a float matrix (as :func:`_split_columns` reads it), or
    None when it is no non-empty 2-D float one; only columns with NaN are read twice. Under
    ``missing="indicator"`` an ``inf`` is refused here, naming the table's own column (the
    encoded matrix's indicators would shift the index)."""
    arr = V.as_float_array(X, "X", allow_nan=True)  # None/pd.NA: NaN, a missing value
    if arr.ndim != 2 or arr.dtype.kind != "f" or arr.shape[0] == 0:
        return None
    lo, hi = _threads.column_extremes(arr)  # NaN exactly in the columns holding one
    if missing == "indicator" and not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        V.check_finite(arr, "X", allow_nan=True)
    has, lows = np.isnan(lo), lo.astype(np.float64)
    for j in np.flatnonzero(has):  # their minimum over the other values (NaN: none)
        lows[j] = np.nan if np.isnan(arr[:, j]).all() else float(np.nanmin(arr[:, j]))
    return numeric(lows, has, missing=missing)


def numeric(lows, has_missing, *, missing: str = "indicator") -> EncodingSpec:
    """The spec :func:`fit` gives a float array without column names from per-column
    statistics gathered elsewhere (a streamed pass over a memmap,
    :func:`fit_streamed`), so both paths build the same spec by one rule.

    Args:
      lows: ``(p,)`` each column's minimum over its non-NaN values (``np.nanmin``), NaN for a
        column of NaN only (its fill is then 0, as in :func:`fit`).
      has_missing: ``(p,)`` booleans, whether the column holds a NaN.
      missing: ``"indicator"`` (a column with NaN gets an indicator) or ``"error"``.
    """
    lows = np.asarray(lows, np.float64).reshape(-1)
    has = np.asarray(has_missing, bool).reshape(-1)
    if lows.shape != has.shape:
        raise ValueError(f"lows and has_missing must have the same length; got {lows.shape} "
                         f"and {has.shape}.")
    return EncodingSpec(tuple(_numeric_spec(f"x{j + 1}", float(v), bool(h), missing)
                              for j, (v, h) in enumerate(zip(lows, has))), False)


def transform(spec: EncodingSpec, X, *, missing: str = "indicator", refuse_inf: bool = True):
    """Encodes a table with a fitted spec.

    Returns ``X`` itself when the spec is the identity and ``X`` has no missing value (the
    usual checks then see the user's data, unconverted); else a float ``(n, n_out)`` numpy
    matrix (float32 when every numeric column is float32 or narrower, else float64).
    ``refuse_inf``: an infinite value in a numeric column is refused here, named by the
    table's own column (the encoded matrix's checks would count the indicators before it);
    False for rows read block by block (:class:`EncodedRows`), whose readers name it by its
    row in the whole array.

    Raises:
      ValueError: a raw column count other than the spec's (except for the identity spec under
        ``missing="error"``, where the usual checks say it), a missing value under
        ``missing="error"``, an infinite value (``refuse_inf``).
      TypeError: a non-numeric value in a numeric column.
    """
    if spec.is_identity and missing == "error":
        _refuse_missing(X, spec)  # a clear error naming missing='error'; else check_X's checks
        return X
    p = spec.n_features_in
    cf = [j for j, c in enumerate(spec.columns) if c.kind == "categorical"]
    split = _split_columns(X, cf or None)
    if split is None:
        return X
    cols, _, names = split
    if len(cols) != p:  # check_X's sentence (scikit-learn's words)
        raise ValueError(
            f"X has {len(cols)} features, but predict is expecting {p} features as input, the "
            "number of columns in fit. Pass the same columns, in the same order, as in fit.")
    if names is None and spec.named:
        names = tuple(c.name for c in spec.columns)
    if spec.is_identity and not _has_missing(X):
        return X
    out, dtypes, unlearned = [], [], []  # unlearned: (column, count) filled without indicator
    unseen_rows = []  # (column, count, levels) of levels no training row had, without other
    for j, (c, cs) in enumerate(zip(cols, spec.columns)):
        if cs.kind == "numeric":
            a = _numeric_column(c, j, names)
            if refuse_inf:  # inf is no missing value: named in the table's column, as by fit
                V.check_finite(a, f"X {_column_name(j, names)}", axes=("row",), allow_nan=True)
            miss = np.isnan(a) if a.dtype.kind == "f" else None
            if miss is not None and miss.any():
                if missing == "error":
                    _missing_error(j, names, int(miss.sum()), int(np.argmax(miss)))
                a = np.where(miss, np.asarray(cs.fill, a.dtype), a)
                if not cs.indicator:
                    unlearned.append((cs.name, int(miss.sum())))
            dtypes.append(a.dtype)
            out.append(a)
            if cs.indicator:
                out.append(np.zeros(len(a)) if miss is None else miss.astype(np.float64))
            continue
        codes, uniques, miss = _codes(c, j, names, missing)
        if miss.any() and not cs.indicator:
            unlearned.append((cs.name, int(miss.sum())))
        slot = {lv: i for i, lv in enumerate(cs.levels)}
        n_cols = len(cs.levels) + int(cs.other)
        unseen = len(cs.levels) if cs.other else -1  # -1: all zeros
        target = np.array([slot.get(_level_name(u), unseen) for u in uniques] + [-1], np.int64)
        col_of_row = target[np.where(miss, len(uniques), codes)]
        if not cs.other and (target[:-1] < 0).any():
            new = ~miss & (col_of_row < 0)
            if new.any():
                levels = [_level_name(u) for u, t in zip(uniques, target[:-1]) if t < 0]
                unseen_rows.append((cs.name, int(new.sum()), levels))
        block = np.zeros((len(codes), n_cols))
        rows = np.flatnonzero(col_of_row >= 0)
        block[rows, col_of_row[rows]] = 1.0
        out.extend(block.T)
        if cs.indicator:
            out.append(miss.astype(np.float64))
    if unlearned:  # one warning per call (jaxtree._inputs.validation.fill_missing's words)
        V.warn_missing_filled([name for name, _ in unlearned], sum(c for _, c in unlearned))
    if unseen_rows:  # one warning per call
        V.warn_unseen_levels([name for name, _, _ in unseen_rows],
                             sum(c for _, c, _ in unseen_rows),
                             [lv for _, _, levels in unseen_rows for lv in levels][:3])
    dtype = (np.float32 if dtypes and all(d.kind == "f" and d.itemsize <= 4 for d in dtypes)
             else np.float64)
    n = len(cols[0]) if cols else 0
    return np.stack(out, axis=1).astype(dtype, copy=False) if out else np.zeros((n, 0), dtype)


# ------------------------------------------------------------------------------ streamed X


class EncodedRows:
    """The rows of a float array ``x`` (e.g. a memmap) encoded by a spec of numeric columns,
    on demand: each read (``[slice]`` or ``[index array]``, what
    :class:`jaxtree.stream.ChunkReader` asks) reads those rows of ``x`` and encodes them
    (:func:`transform`: a missing value takes its column's fill, each ``"<col> missing"``
    indicator follows its column), so the encoded matrix never exists whole: a streamed fit
    of a memmap with NaN holds one block of encoded rows at a time. ``shape``, ``dtype``
    (float32 for a float32 or narrower ``x``, as :func:`transform` gives) and ``ndim`` are the
    encoded matrix's.
    """

    def __init__(self, x, spec):
        self.x, self.spec = x, spec
        self.shape = (int(x.shape[0]), len(spec.feature_names_out))
        self.ndim = 2
        small = np.dtype(x.dtype).kind == "f" and np.dtype(x.dtype).itemsize <= 4
        self.dtype = np.dtype(np.float32 if small else np.float64)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key):
        if isinstance(key, tuple):
            raise TypeError("EncodedRows reads whole rows: index it with a slice or an array of "
                            "row indices.")
        rows = np.asarray(self.x[key])
        one = rows.ndim == 1
        # an infinite value is named by its row in x by the reader (the streamed scaling
        # pass, predict's blocks), not by its row in this read
        out = transform(self.spec, rows[None] if one else rows, refuse_inf=False)
        return out[0] if one else out


def fit_streamed(x, chunk_size: int) -> EncodingSpec:
    """:func:`fit` (``missing="indicator"``) of a float array ``x (n, p)`` without column
    names (e.g. a memmap) in one pass reading ``chunk_size`` rows at a time: the same spec
    (:func:`numeric`, one rule for both). A column with NaN gets its minimum over the non-NaN
    values as the fill (``np.nanmin``, here ``np.fmin`` reduced chunk by chunk: the same
    value; 0 for a column of NaN only) and a ``"<col> missing"`` indicator; without NaN, the
    identity spec with the columns' minima as fills. Memory: one block of rows, the larger of
    ``chunk_size`` rows and ``2**22`` values (32 MiB as float64; few large reads rather than
    one per chunk on a 10^8-row memmap).

    Raises:
      ValueError: for an infinite value, naming its row and column (``inf`` is not a
        missing value, as in memory).
    """
    n, p = x.shape
    lows = np.full(p, np.nan)
    has = np.zeros(p, bool)
    step = max(int(chunk_size), (1 << 22) // max(p, 1))
    for s in range(0, n, step):
        a = np.asarray(x[s:s + step])
        finite = np.isfinite(a)
        if not finite.all():
            inf = np.isinf(a)
            if inf.any():
                row, col = (int(i) for i in np.argwhere(inf)[0])
                raise ValueError(
                    f"X contains an infinite value at row {s + row}, column {col} (the first). "
                    "Remove or replace infinite values before fitting (inf is not a missing "
                    "value; NaN is).")
            has |= ~finite.all(0)
        lows = np.fmin(lows, np.fmin.reduce(a, axis=0))  # NaN-ignoring, as np.nanmin
    return numeric(lows, has)


def streamed_rows(x, chunk_size, missing: str):
    """``(x, spec or None)``: a streamed ``x (n, p)`` (a memmap, a ChunkReader's ``x``) read
    encoded on demand (:class:`EncodedRows`) when ``missing="indicator"`` and one pass
    (:func:`fit_streamed`, reading at least ``chunk_size`` rows at a time; ``"auto"``: 2,048)
    finds NaN; else ``x`` itself and None. Both estimators' streamed fits (the classifier
    reads ``x`` once per class)."""
    if missing != "indicator":  # "error": the scaling pass refuses NaN, naming row and column
        return x, None
    spec = fit_streamed(x, 2048 if chunk_size == "auto" else chunk_size)
    if spec.is_identity:
        return x, None
    return EncodedRows(x, spec), spec


def _refuse_missing(X, spec: EncodingSpec) -> None:
    """Under ``missing="error"`` with the identity spec: a ``ValueError`` naming the count, the
    first row and the column of a missing value in a numeric array or DataFrame ``X`` (other
    inputs are left to the usual checks)."""
    names = tuple(c.name for c in spec.columns) if spec.named else None
    if _is_frame(X):
        if X.shape[1] != spec.n_features_in:
            return
        nan = np.asarray(X.isna().to_numpy(), bool)
    else:
        a = X if isinstance(X, np.ndarray) else None
        if a is None or a.dtype.kind != "f" or a.ndim != 2 or a.shape[1] != spec.n_features_in:
            return
        if V.is_all_finite(a):
            return
        nan = np.isnan(a)
    if nan.any():
        row, j = (int(i) for i in np.argwhere(nan)[0])
        raise ValueError(
            f"X contains {int(nan.sum())} NaN (missing) value(s), the first at row "
            f"{row}, {_column_name(j, names)}, and missing='error' refuses them. Impute or "
            "drop them, or use missing='indicator' (the default) to learn from them (a fill "
            "value plus a '<column> missing' indicator covariate).")


def _has_missing(X) -> bool:
    if _is_frame(X):
        return bool(np.asarray(X.isna().to_numpy(), bool).any())
    a = np.asarray(X)
    if a.dtype.kind == "f" and a.ndim == 2:  # column by column: no n*p temporary
        return any(bool(np.isnan(a[:, j]).any()) for j in range(a.shape[1]))
    if a.dtype.kind == "f":
        return bool(np.isnan(a).any())
    if a.dtype == object:
        return any(V.is_missing_value(v) for v in a.ravel())
    return False


def rename(spec: EncodingSpec, names: Sequence[str]) -> EncodingSpec:
    """The same encoding with the raw columns named ``names`` (e.g. the CLI's column names
    for a table passed as an array); the covariates' names follow."""
    if len(names) != spec.n_features_in:
        raise ValueError(f"rename needs {spec.n_features_in} names; got {len(names)}.")
    cols = tuple(dataclasses.replace(c, name=str(n)) for c, n in zip(spec.columns, names))
    return EncodingSpec(cols, True)
