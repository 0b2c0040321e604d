"""Command line: ``jaxtree demo | fit | predict | show`` (``jaxtree COMMAND --help``).

* ``jaxtree fit data.csv --target y --out model.json``: fits a :class:`jaxtree.TreeRegressor`
  with a progress bar (loss and chosen insertion per iteration), prints the formula and the
  training R², and saves the model as JSON. ``--task classify`` (or ``auto``, the default,
  for a non-numeric or two-valued target) fits a :class:`jaxtree.TreeClassifier` instead and
  prints the decision function and the training accuracy; ``predict`` then writes the class
  and one ``proba_<class>`` column per class.
* ``jaxtree predict model.json data.csv [--out predictions.csv]``: predictions as CSV
  (column ``prediction``); the model's feature columns are selected by name (for a
  regressor, columns its formula does not use may be absent).
* ``jaxtree show model.json``: formula (original units, indicators as ``[carrier = EV]``;
  :meth:`jaxtree.TreeRegressor.formula`), sizes, feature names and training history. A model
  with custom basis functions (saved by name only) shows its raw scaled tree with them named.

Feature columns are taken as they are: empty cells and text columns are encoded by the
estimator (:mod:`jaxtree._inputs.encoding`: a fill value plus a ``"<column> missing"`` covariate;
one 0/1 covariate ``"<column>=<level>"`` per level), as in the Python API; ``--missing error``
refuses empty cells and ``--categorical`` picks the category columns. Rows with an empty target
are dropped (said on stderr).

Tables are CSV (read with pandas when installed, else with the standard ``csv`` module, so
the command works with the core dependencies only) or Parquet (``.parquet``/``.pq``; needs
pyarrow). Every expected failure (missing file, unknown column, non-numeric data, a
corrupt model file) prints one line ``jaxtree: error: ...`` on stderr and exits with 2.

Why one file over 800 lines: the commands share one reader of tables, one rule for what is
a target and its task, one printer of warnings and errors, and the help they print; apart,
``fit`` and ``predict`` could read the same CSV two ways.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import os
import sys
import time
import warnings

import numpy as np

PARQUET_SUFFIXES = (".parquet", ".pq")


class CLIError(Exception):
    """An expected user error: printed as one line, exit code 2."""


# ------------------------------------------------------------------------------ tables


def _chunk_size(text: str):
    """``--chunk-size``: ``auto`` or a positive integer."""
    if text == "auto":
        return text
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 'auto' or a positive integer; got {text!r}")
    return value


def _read_csv_plain(path: str):
    """Reads a CSV with the standard library: ``(names, [column arrays])``."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise CLIError(f"{path}: the file is empty (expected a header row of column names).")
    names, body = [s.strip() for s in rows[0]], [r for r in rows[1:] if r]
    for i, r in enumerate(body):
        if len(r) != len(names):
            raise CLIError(f"{path}: row {i + 2} has {len(r)} fields but the header has {len(names)}.")
    cols = []
    for j in range(len(names)):
        raw = [r[j].strip() for r in body]
        try:
            cols.append(np.array([float(v) if v != "" else np.nan for v in raw], np.float64))
        except ValueError:
            cols.append(np.array(raw, dtype=object))
    return names, cols


def _read_table(path: str):
    """Reads CSV or Parquet into ``(column names, list of 1-D arrays)``.

    Numeric columns come back as float64 arrays, others as object arrays (so the caller
    can name them).
    """
    if not os.path.exists(path):
        raise CLIError(f"{path}: no such file.")
    if os.path.isdir(path):
        raise CLIError(f"{path}: is a directory, expected a CSV or Parquet file.")
    if path.lower().endswith(PARQUET_SUFFIXES):
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise CLIError(f"{path}: reading Parquet needs pyarrow, which is not installed "
                           "(pip install pyarrow), or convert the file to CSV.") from None
        table = pq.read_table(path)
        names = [str(c) for c in table.column_names]
        cols = []
        for name in names:
            a = np.asarray(table.column(name).to_numpy())
            cols.append(a.astype(np.float64) if a.dtype.kind in "biuf" else a.astype(object))
        return names, cols
    try:
        import pandas as pd
    except ImportError:
        return _read_csv_plain(path)
    try:
        df = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise CLIError(f"{path}: the file is empty (expected a header row of column names).") from None
    except pd.errors.ParserError as exc:
        raise CLIError(f"{path}: not a readable CSV file ({exc}).") from None
    names = [str(c) for c in df.columns]
    cols = []
    for c in df.columns:
        s = df[c]
        if pd.api.types.is_bool_dtype(s) or pd.api.types.is_numeric_dtype(s):
            cols.append(s.to_numpy(dtype=np.float64, na_value=np.nan))
        else:
            cols.append(s.to_numpy(dtype=object))
    return names, cols


def _available(names, missing) -> str:
    """The end of a column-not-found message: the table's columns, a close name for each
    missing one (``did you mean 'delay'?``, a case or a letter off), and a hint when the
    header is one column holding ``;`` or a tab (a file separated by another character)."""
    import difflib

    text = f"available columns: {', '.join(names)}."
    by_case = {str(n).lower(): n for n in names}
    close = [by_case.get(str(m).lower()) or next(iter(difflib.get_close_matches(
        str(m), [str(n) for n in names], n=1)), None) for m in missing]
    close = [c for c in close if c is not None]
    if close:
        text += f" Did you mean {', '.join(map(repr, close))}?"
    if len(names) == 1 and any(sep in str(names[0]) for sep in (";", "\t")):
        sep = "';'" if ";" in str(names[0]) else "tabs"
        text += (f" The header is one column: the file looks separated by {sep}, and jaxtree "
                 "reads comma-separated files (convert it first).")
    return text


def _columns(path, names, cols, wanted, role="feature"):
    """Selects ``wanted`` columns as a float64 ``(n, len(wanted))`` matrix, checking them."""
    index = {n: i for i, n in enumerate(names)}
    missing = [w for w in wanted if w not in index]
    if missing:
        raise CLIError(f"{path}: {role} column(s) {', '.join(map(repr, missing))} not found; "
                       + _available(names, missing))
    non_numeric = [w for w in wanted if cols[index[w]].dtype == object]
    if non_numeric:
        raise CLIError(f"{path}: non-numeric column(s) {', '.join(map(repr, non_numeric))}; jaxtree "
                       "needs numbers: encode them, or choose the columns with --features.")
    out = np.stack([cols[index[w]] for w in wanted], axis=1) if wanted else np.zeros((0, 0))
    bad = ~np.isfinite(out)
    if bad.any():
        per_col = bad.sum(0)
        which = [f"{w!r} ({int(c)})" for w, c in zip(wanted, per_col) if c]
        raise CLIError(f"{path}: missing or non-finite values in column(s) {', '.join(which)}; "
                       "remove or impute those rows first.")
    return out


def _table(path, names, cols, wanted):
    """The ``wanted`` columns as they are (numbers with NaN for empty cells, text): a pandas
    DataFrame when pandas is installed, else a float (or, with text, object) numpy array.
    The estimator's encoder (:mod:`jaxtree._inputs.encoding`) turns them into covariates."""
    index = {n: i for i, n in enumerate(names)}
    missing = [w for w in wanted if w not in index]
    if missing:
        raise CLIError(f"{path}: feature column(s) {', '.join(map(repr, missing))} not found; "
                       + _available(names, missing))
    picked = [cols[index[w]] for w in wanted]
    try:
        import pandas as pd
    except ImportError:
        text = any(c.dtype == object for c in picked)
        return np.stack([c.astype(object) if text else c for c in picked], axis=1)
    return pd.DataFrame({w: c for w, c in zip(wanted, picked)}, columns=list(wanted))


def _categorical(args, features, picked) -> list:
    """``--categorical``: indices into ``features`` (auto: the non-numeric columns)."""
    if args.categorical == "auto":
        return [j for j, c in enumerate(picked) if c.dtype == object]
    if args.categorical == "none":
        return None
    wanted = [s.strip() for s in args.categorical.split(",") if s.strip()]
    unknown = [w for w in wanted if w not in features]
    if unknown:
        raise CLIError(f"--categorical names column(s) {', '.join(map(repr, unknown))} that are not "
                       f"features; the features are: {', '.join(features)}.")
    return [features.index(w) for w in wanted]


def _additive_cv_arg(text: str):
    """``--additive-cv``: ``auto`` or a number of folds (0, or at least 2)."""
    try:
        value = text if text == "auto" else int(text)
    except ValueError:
        value = None
    if value is None or (value != "auto" and value != 0 and value < 2):
        raise argparse.ArgumentTypeError(
            f"expected auto, 0 (no choice) or a number of folds of at least 2; got {text!r}")
    return value


def _shapes_arg(text: str):
    """``--shapes``: ``auto``, ``additive`` or an integer; anything else is a usage error
    naming them."""
    try:
        return text if text in ("auto", "additive") else int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected auto, additive or a number of shape terms (0 for none); got {text!r}"
        ) from None


def _shape_knots_arg(text: str):
    """``--shape-knots``: ``auto`` or ``N1,N2`` (hats per main shape, per axis of a pair);
    argparse reports a text of another form, the estimator a number out of range."""
    if text == "auto":
        return text
    try:
        n1, n2 = (int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected auto or N1,N2 (hats per one-covariate shape, per axis of a "
            f"two-covariate shape, e.g. 64,16); got {text!r}") from None
    return (n1, n2)


def _min_support_arg(text: str):
    """``--min-support``: a share of the training rows (``0.02``) or a row count (``10``);
    argparse reports a text that is neither, the estimator a value out of range."""
    try:
        return int(text)
    except ValueError:
        return float(text)


def _drop_missing_target(args, keep, X):
    """``X`` without the rows whose target is missing (``keep`` False), said on stderr (also
    with ``--quiet``, which silences progress: rows left out of a fit are not progress)."""
    if keep.all():
        return X
    print(f"jaxtree: dropped {int((~keep).sum())} row(s) whose target {args.target!r} is "
          "missing", file=sys.stderr)
    return X[keep] if not hasattr(X, "iloc") else X.loc[keep].reset_index(drop=True)


def _regression_target(args, names, cols, X):
    """``(y, X)``: the numeric target, rows whose target is missing dropped (said on stderr)."""
    col = cols[names.index(args.target)]
    if col.dtype == object:
        _columns(args.data, names, cols, [args.target], role="target")  # the usual message
    keep = ~np.isnan(col)
    X = _drop_missing_target(args, keep, X)
    return _columns(args.data, names, [c[keep] for c in cols], [args.target], role="target")[:, 0], X


def _used_columns(est) -> set:
    """Indices of the raw columns whose covariates the fitted formula reads (its leaves with a
    nonzero weight and its shape terms)."""
    from jaxtree import program as prog

    m = est.model_
    a = prog.to_numpy(m.program)
    used = {int(j) for j in np.ravel(a["feature"][(a["op"] == prog.LEAF) & (a["weight"] != 0)])}
    if m.shapes is not None:
        used |= {int(j) for j in np.flatnonzero(np.ravel(np.asarray(m.shapes.main_on)))}
        for (i, l), on in zip(m.shape_spec.pairs, np.ravel(np.asarray(m.shapes.pair_on))):
            used |= {int(i), int(l)} if on else set()
    src = est.encoding_.source_columns()
    return {src[j] for j in used}


def _unused_columns_filled(path, est, raw, names, cols):
    """``jaxtree predict`` needs only the columns the formula uses: an absent unused column is
    filled with a placeholder (its fill value, or its first level), which changes no
    prediction. An absent used column is an error naming every absent used column."""
    absent = [w for w in raw if w not in names]
    if not absent:
        return names, cols
    used = _used_columns(est)
    needed = [w for k, w in enumerate(raw) if w in absent and k in used]
    if needed:
        raise CLIError(f"{path}: feature column(s) {', '.join(map(repr, needed))} not found (the "
                       f"formula uses them); " + _available(names, needed))
    n = len(cols[0]) if cols else 0
    extra = []
    for w in absent:
        c = est.encoding_.columns[raw.index(w)]
        extra.append(np.full(n, c.fill, np.float64) if c.kind == "numeric" else
                     np.full(n, c.levels[0] if c.levels else "", dtype=object))
    return list(names) + absent, list(cols) + extra


def _k_bound(k: int, n: int) -> int:
    """The ``k`` a fit of ``n`` rows used for ``--k k``: at most one operation per 5 rows
    (:func:`jaxtree._fit.limits.max_k_for_rows`; its warning says so), so that the summary
    line does not report a bound the fit did not have."""
    from jaxtree._fit import limits

    return min(int(k), limits.max_k_for_rows(n))


def _print_training_score(est, X, y, name: str, tail: str) -> None:
    """``training <name>: ...   (n=..., p=..., [covariates after encoding, ]<tail>)``."""
    with warnings.catch_warnings():  # an array (no pandas) has no column names to check;
        # only that warning is silenced, any other (the score's own) still reaches the user
        warnings.filterwarnings("ignore", message="X does not have valid feature names",
                                category=UserWarning)
        score = est.score(X, y)
    print(f"training {name}: {score:.4f}   (n={X.shape[0]}, p={X.shape[1]}"
          + _encoded(X.shape[1], len(est.encoded_feature_names_)) + f", {tail})")


def _encoded(columns: int, covariates: int) -> str:
    """``", 6 covariates after encoding"`` where a table's ``columns`` became another number
    of covariates (categories, missing-value indicators), else nothing: one wording for
    ``fit``'s summary and ``show``."""
    return f", {covariates} covariates after encoding" if covariates != columns else ""


def _name_columns(est, features, target=None) -> None:
    """Names the fitted estimator's raw columns ``features`` (a table passed as an array) and
    its target (``--target``: ``target_name_``, clear of every covariate's name,
    :func:`jaxtree._target.display_name`)."""
    from jaxtree import _target
    from jaxtree._inputs import encoding as _encoding

    enc = _encoding.rename(est.encoding_, features)
    est.encoding_ = enc
    est.model_ = dataclasses.replace(est.model_, feature_names=enc.feature_names_out)
    est.encoded_feature_names_ = np.asarray(enc.feature_names_out, dtype=object)
    est.feature_names_in_ = np.asarray(features, dtype=object)
    est.target_name_ = _target.display_name(target, [*features, *enc.feature_names_out])


# ------------------------------------------------------------------------------ commands


def _demo(args) -> int:
    import jaxtree
    from jaxtree.datasets import paper_function, paper_synthetic

    n_test = args.n // 3
    X, y = paper_synthetic(args.n + n_test, p=args.p, seed=args.seed)
    Xtr, ytr, Xte = X[: args.n], y[: args.n], X[args.n:]
    print(f"Fitting the paper's g(x) = 0.3 sin(3πx1) cos(2πx2) + 0.4 x3² - 0.3 x4 + noise "
          f"(n={args.n}, p={args.p}, k={args.k}) ...")
    t0 = time.perf_counter()
    est = jaxtree.TreeRegressor(k=args.k).fit(Xtr, ytr)
    dt = time.perf_counter() - t0
    rmse = float(np.sqrt(np.mean((est.predict(Xte) - paper_function(Xte)) ** 2)))
    print(est.formula())
    print(f"test RMSE against the noiseless g: {rmse:.4f}   ({est.k_} operations of at most "
          f"{args.k}, search {est.search_!r}; fit {dt:.1f} s, incl. compilation)")
    return 0


def _sizes_arg(text: str) -> list:
    try:
        out = [tuple(int(v) for v in part.lower().split("x")) for part in text.split(",") if part]
    except ValueError:
        out = None
    if not out or any(len(s) != 2 for s in out):
        raise argparse.ArgumentTypeError(f"expected ROWSxCOVARIATES[,ROWSxCOVARIATES...], e.g. "
                                         f"1000x8,5000x12; got {text!r}")
    return out


def _warmup(args) -> int:
    from jaxtree._warmup import warmup  # noqa: PLC0415

    t0 = time.perf_counter()
    if args.classes is not None and not args.classifier:
        raise CLIError("--classes is the classifier's number of classes; add --classifier.")
    warmup(args.sizes, k=args.k, classifier=args.classifier,
           classes=2 if args.classes is None else args.classes)
    print(f"jaxtree warmup: done in {time.perf_counter() - t0:.1f} s")
    return 0


def _cache(args) -> int:
    from jaxtree import _compilation_cache as cc  # noqa: PLC0415

    root = os.path.dirname(cc.default_cache_dir())
    parts = cc.clear() if args.clear else cc.usage()
    for part, (files, size) in parts.items():
        print(f"{os.path.join(root, part)}: {files} file(s), {size / 2**20:.1f} MiB"
              + (" deleted" if args.clear and files else ""))
    if cc.env_off():
        print(f"(the cache is off in this environment: {cc.ENV_VAR}="
              f"{os.environ[cc.ENV_VAR]})")
    if os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        print("(JAX_COMPILATION_CACHE_DIR is set: JAX's cache is yours there, not listed "
              "or cleared here)")
    return 0


def _fit(args) -> int:
    import jaxtree

    names, cols = _read_table(args.data)
    if args.target not in names:
        raise CLIError(f"{args.data}: target column {args.target!r} not found; "
                       + _available(names, [args.target]))
    if args.features:
        features = [s.strip() for s in args.features.split(",") if s.strip()]
        if args.target in features:
            raise CLIError(f"--features must not include the target column {args.target!r}.")
    else:
        features = [n for n in names if n != args.target]
    if not features:
        raise CLIError(f"{args.data}: no feature columns besides the target {args.target!r}.")
    absent = [f for f in features if f not in names]
    if absent:
        raise CLIError(f"{args.data}: feature column(s) {', '.join(map(repr, absent))} not found; "
                       + _available(names, absent))
    task = _choose_task(args, names, cols)
    # The raw columns: missing values and text are encoded by the estimator (both tasks).
    X = _table(args.data, names, cols, features)
    categorical = _categorical(args, features, [cols[names.index(f)] for f in features])
    if task == "classify":
        y, X = _class_target(args, names, cols, X)
    else:
        y, X = _regression_target(args, names, cols, X)
    if X.shape[0] < 2:
        raise CLIError(f"{args.data}: fit needs at least 2 rows; got {X.shape[0]}.")
    if args.out is not None and os.path.isdir(args.out):
        raise CLIError(f"--out {args.out}: is a directory, expected a file name like model.json.")
    refine = None if args.refine == "none" else args.refine
    if task == "classify":
        if args.shapes not in (0, "auto", "additive") or args.search == "beam":
            raise CLIError("--search beam and --shapes S (S > 0) are for regression; a "
                           "classification takes --search auto, greedy or backfit and --shapes "
                           "auto, additive or 0 (use --task regress, or leave them out).")
        return _fit_classifier(args, X, y, features, refine, categorical)
    # The estimator's own progress bar (MSE in the target's units, the chosen insertion).
    est = jaxtree.TreeRegressor(k=args.k, basis=args.basis, refine=refine, chunk_size=args.chunk_size,
                                verbose=0 if args.quiet else 1, missing=args.missing,
                                categorical_features=categorical, search=args.search,
                                shapes=args.shapes, shape_knots=args.shape_knots,
                                min_support=args.min_support,
                                max_terms=args.max_terms, additive_cv=args.additive_cv)
    est.fit(X, y)
    _name_columns(est, features, args.target)
    print(est.formula())
    _print_training_score(est, X, y, "R²",
                          f"{est.k_} operations of at most {_k_bound(args.k, len(y))}")
    if args.out is not None:
        est.save(args.out)
        print(f"saved {args.out}")
    return 0


def _choose_task(args, names, cols) -> str:
    """``--task``; ``auto`` classifies a non-numeric target or one with exactly two distinct
    values, and says what it chose on stderr (unless ``--quiet``)."""
    if args.task != "auto":
        return args.task
    col = cols[names.index(args.target)]
    if col.dtype == object:
        _refuse_mostly_numbers(args.target, col)
    values = col[np.isfinite(col)] if col.dtype != object else col
    n_distinct = len(np.unique(values.astype(str) if col.dtype == object else values))
    task = "classify" if col.dtype == object or n_distinct == 2 else "regress"
    if not args.quiet:
        why = ("non-numeric" if col.dtype == object else f"{n_distinct} distinct values")
        print(f"jaxtree: --task auto chose {task!r} (target {args.target!r}: {why}); pass --task "
              f"{'regress' if task == 'classify' else 'classify'} to override", file=sys.stderr)
    return task


def _refuse_mostly_numbers(target: str, col) -> None:
    """Refuses ``--task auto`` a text target whose cells are numbers but for a few (at most a
    tenth), naming the first other cell: a stray ``?`` or ``n/a`` made a numeric target text,
    and auto would classify it, one class per value (a new user's check: 198 classes,
    "training accuracy: 1.0000")."""
    def number(v) -> bool:
        try:
            float(v)
            return True
        except (TypeError, ValueError):
            return False

    def empty(v) -> bool:  # an empty cell, however the reader gave it (dropped later)
        return v is None or (isinstance(v, float) and v != v) or str(v).strip() == ""

    filled = [(i, v) for i, v in enumerate(col) if not empty(v)]
    others = [(i, v) for i, v in filled if not number(v)]
    if filled and 0 < len(others) <= 0.1 * len(filled):
        row, cell = others[0]
        raise CLIError(
            f"target {target!r} holds numbers but for {len(others)} of {len(filled)} cell(s) (the "
            f"first, data row {row + 1}: {cell!r}): fix or drop those rows to fit a regression, "
            "or pass --task classify to treat every value as a class.")


def _class_target(args, names, cols, X):
    """``(labels, X)``: the class labels (text as ``str``, integral numbers as ints), rows whose
    label is missing (an empty cell) dropped and said on stderr, as for a regression target."""
    col = cols[names.index(args.target)]
    if col.dtype == object:
        keep = np.array([not (v is None or v != v or str(v).strip() == "") for v in col], bool)
    else:
        keep = ~np.isnan(col)
    X = _drop_missing_target(args, keep, X)
    y = col[keep]
    if y.dtype == object:
        y = y.astype(str)
    elif np.all(y == np.round(y)):
        y = y.astype(np.int64)
    return y, X


def _fit_classifier(args, X, y, features, refine, categorical) -> int:
    """``jaxtree fit --task classify``: a :class:`jaxtree.TreeClassifier` on the raw columns
    (encoded as for regression)."""
    import jaxtree

    est = jaxtree.TreeClassifier(k=args.k, basis=args.basis, refine=refine, loss=args.loss,
                                 chunk_size=args.chunk_size, verbose=0 if args.quiet else 1,
                                 missing=args.missing, categorical_features=categorical,
                                 search=args.search, shapes=args.shapes,
                                 shape_knots=args.shape_knots,
                                 min_support=args.min_support, max_terms=args.max_terms,
                                 additive_cv=args.additive_cv)
    est.fit(X, y)
    _name_columns(est, features, args.target)
    formula = est.formula()  # labelled: logit P(target = class) = ...
    print("\n".join(formula) if isinstance(formula, list) else formula)
    _print_training_score(est, X, y, "accuracy", f"k={_k_bound(args.k, len(y))}, classes: "
                                                 f"{', '.join(map(str, est.classes_))}")
    if args.out is not None:
        est.save(args.out)
        print(f"saved {args.out}")
    return 0


def _load(path):
    import jaxtree

    if not os.path.exists(path):
        raise CLIError(f"{path}: no such model file.")
    return jaxtree.load(path)


def _number(v, dtype) -> str:
    """A prediction as the shortest text that reads back to it in the model's precision
    ``dtype``: a float32 model's ``8.154316``, not ``8.154315948486328`` (float32 noise)."""
    v = np.dtype(dtype).type(v)  # a numpy scalar: formatted in its own precision
    return np.format_float_positional(v, unique=True, trim="-") if abs(float(v)) < 1e16 else (
        np.format_float_scientific(v, unique=True, trim="-"))


def _quiet_names() -> None:
    """Silences only the feature-names warnings of an array read without pandas (its columns
    were matched by name already). The table's own warnings stay on stderr: a level no
    training row had (``UnseenLevelWarning``), a missing value the model never learned
    (``MissingValueWarning``); they were all silenced before (a new user's check)."""
    warnings.filterwarnings("ignore", message=r"X (does not have valid|has) feature names",
                            category=UserWarning)


def _predict(args) -> int:
    import jaxtree

    est = _load(args.model)
    names, cols = _read_table(args.data)
    # The raw columns seen in fit, by name; the estimator encodes them as in fit (missing
    # values, categories; see jaxtree._inputs.encoding).
    named = hasattr(est, "feature_names_in_")
    raw = list(est.feature_names_in_) if named else list(est.model_.feature_names)
    names, cols = _unused_columns_filled(args.data, est, raw, names, cols)
    table = _table(args.data, names, cols, raw)
    X = table if named else np.asarray(table)
    buf = io.StringIO()
    dt = np.asarray(est.model_.x_min).dtype  # the model's precision: printed to it
    if isinstance(est, jaxtree.TreeClassifier):  # class labels, then one probability per class
        with warnings.catch_warnings():  # an array (no pandas) has no column names to check
            _quiet_names()
            f = est.decision_function(X)
            proba = est.predict_proba(X)
        pred = est.classes_[(f > 0).astype(np.int64) if f.ndim == 1 else np.argmax(f, 1)]
        buf.write(",".join(["prediction"] + [f"proba_{c}" for c in est.classes_]) + "\n")
        buf.writelines(",".join([str(c)] + [_number(v, dt) for v in row]) + "\n"
                       for c, row in zip(pred.tolist(), proba))
    else:
        with warnings.catch_warnings():  # an array (no pandas) has no column names to check
            _quiet_names()
            pred = est.predict(X)
        buf.write("prediction\n")
        buf.writelines(f"{_number(v, dt)}\n" for v in np.asarray(pred))
    if args.out is None:
        sys.stdout.write(buf.getvalue())
    else:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(buf.getvalue())
        print(f"wrote {len(pred)} predictions to {args.out}")
    return 0


def _show_terms(args, est) -> None:
    """``show --data``: each top-level term's share of the explained variance over the rows
    of a CSV (and ``--plot``: one panel per term), as ``explain``: a classifier's of its
    decision function, one block (and one plot, ``<plot>_<class>.png``) per class for one
    versus the rest."""
    named = hasattr(est, "feature_names_in_")
    raw = list(est.feature_names_in_) if named else list(est.model_.feature_names)
    names, cols = _read_table(args.data)
    names, cols = _unused_columns_filled(args.data, est, raw, names, cols)
    table = _table(args.data, names, cols, raw)
    X = table if named else np.asarray(table)
    with warnings.catch_warnings():
        _quiet_names()
        tables = est.explain(X)  # named as the formula names them
        figs = est.plot_terms(X) if args.plot is not None else None
    per_class = isinstance(tables, list)
    tables = tables if per_class else [tables]
    for c, terms in enumerate(tables):
        rows = terms.to_dict("records") if hasattr(terms, "to_dict") else terms
        whose = f" for class {est.classes_[c]!s} against the rest" if per_class else ""
        print(f"terms{whose} over the {len(rows[-1]['values'])} rows of {args.data} "
              f"(share of the explained variance, mean |contribution|):")
        for t in rows[:-1]:
            print(f"  {100 * t['share']:5.1f}%  {t['mean_abs']:.4g}  {t['term']}")
    if figs is not None:
        root, ext = os.path.splitext(args.plot)
        paths = ([f"{root}_{c}{ext or '.png'}" for c in est.classes_] if per_class
                 else [args.plot])
        for fig, path in zip(figs if per_class else [figs], paths):
            fig.savefig(path, dpi=110)
            print(f"wrote {path}")


def _placeholder(x):
    """Stands for a custom basis function that ``jaxtree show`` cannot run (never evaluated
    for what is printed: the scaled formula needs the functions' names only)."""
    return x * 0.0


def _p_text(est) -> str:
    """The model's width as ``fit`` says it (:func:`_encoded`): ``p (features): 3``, or for a
    table whose categories and missing values were encoded ``p (columns): 3, 6 covariates
    after encoding`` (the model's features are the covariates)."""
    p = est.model_.n_features
    enc = getattr(est, "encoding_", None)
    extra = "" if enc is None else _encoded(enc.n_features_in, p)
    return f"p (columns): {enc.n_features_in}{extra}" if extra else f"p (features): {p}"


def _show(args) -> int:
    import jaxtree
    from jaxtree import model as model_
    from jaxtree import program as prog
    from jaxtree._fit import classify

    if not os.path.exists(args.model):
        raise CLIError(f"{args.model}: no such model file.")
    custom = model_.custom_function_names(model_.load_dict(args.model))
    if custom:  # saved by name only: show the structure with the functions named
        if args.data is not None or args.plot is not None:
            raise CLIError(f"{args.model}: --data and --plot evaluate the model, which needs its "
                           f"custom basis function(s) {custom}; the command line cannot run "
                           "them. In Python: jaxtree.load(path, custom_functions={...}).explain(X).")
        est = jaxtree.load(args.model, custom_functions={n: _placeholder for n in custom})
    else:
        est = _load(args.model)
    m = est.model_
    if classify.n_ovr(m):  # a one-versus-rest classifier: describe class by class
        print(f"classifier ({est.loss} loss), one tree per class against the rest")
        for text in est.formula():  # labelled: logit P(y = class) = ...
            print(f"  {text}")
        print(f"{_p_text(est)}   q (basis functions): {m.basis.q}")
        print(f"features: {', '.join(m.feature_names)}")
        if args.data is not None:
            _show_terms(args, est)
        elif args.plot is not None:
            raise CLIError("--plot draws the terms over the rows of --data: pass --data DATA.csv.")
        return 0
    if hasattr(est, "classes_"):
        print(f"classifier ({est.loss} loss), classes: {', '.join(map(str, est.classes_))}; "
              f"predicts {est.classes_[1]!s} where the decision function is > 0")
    n_slots = int(m.program.n_slots)
    if custom:
        print(est.formula(scaled=True))
        print(f"(custom basis function(s) {', '.join(custom)} are saved by name only, so the "
              "formula is the raw tree on the covariates scaled to [0, 1]; for predictions and "
              "the formula in original units load it in Python with "
              "jaxtree.load(path, custom_functions={name: fn}))")
    else:
        print(est.formula())
    print(f"k (operations): {max(n_slots - 1, 0) // 2}   (capacity {m.program.max_k})")
    print(f"leaves: {int(prog.n_leaves(m.program))}")
    print(_p_text(est))
    print(f"q (basis functions): {m.basis.q}")
    print(f"features: {', '.join(m.feature_names)}")
    enc = getattr(est, "encoding_", None)
    if enc is not None and not enc.is_identity:  # the raw columns behind the covariates
        desc = [c.name + (f" (categorical: {len(c.levels)} levels" + (" + other" if c.other else "")
                          + ")" if c.kind == "categorical" else "")
                + (" (missing indicator)" if c.indicator else "") for c in enc.columns]
        print(f"raw columns: {', '.join(desc)}")
    if args.data is not None:
        _show_terms(args, est)
    elif args.plot is not None:
        raise CLIError("--plot draws the terms over the rows of --data: pass --data DATA.csv.")
    hist = np.asarray(est.history_, np.float64)
    if hist.size:
        what = ("MSE" if not hasattr(est, "classes_") else
                "log-loss" if est.loss == "logistic" else "ramp loss")
        print(f"training history ({what} after the first leaf and each iteration):")
        for i, h in enumerate(hist):
            print(f"  {i:3d}  {h:.6g}")
    else:
        print("training history: not recorded in this file")
    return 0


# ------------------------------------------------------------------------------ parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jaxtree", description="Compositional regression trees: compact formulas found by a "
        "jitted greedy search.")
    import jax  # noqa: PLC0415 - already loaded by the jaxtree package, which runs this module

    import jaxtree  # noqa: PLC0415
    parser.add_argument("--version", action="version",
                        version=f"%(prog)s {jaxtree.__version__} (jax {jax.__version__})")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    d = sub.add_parser("demo", help="fit the paper's synthetic function; print formula and test error",
                       description="Fit the paper's synthetic function; print formula and test error.")
    d.add_argument("--n", type=int, default=1000, help="training samples (default 1000)")
    d.add_argument("--p", type=int, default=10, help="covariates (default 10)")
    d.add_argument("--k", type=int, default=10, help="operations (default 10)")
    d.add_argument("--seed", type=int, default=0)
    d.set_defaults(func=_demo)

    w = sub.add_parser("warmup", help="compile the default fit for common table sizes into the cache",
                       description="Compile the default estimator's programs for common table "
                       "sizes into jaxtree's compilation cache, so that a later process's first "
                       "fit of a table in those size buckets loads them instead of compiling "
                       "(see jaxtree.warmup).")
    w.add_argument("--sizes", type=_sizes_arg, default=None, metavar="ROWSxCOLS[,...]",
                   help="table sizes, e.g. 1000x8,5000x12 (default: 500x4,1000x6,1000x8,1000x10,"
                   "5000x8,5000x10)")
    w.add_argument("--k", type=int, default=10, help="operations (default 10)")
    w.add_argument("--classifier", action="store_true",
                   help="TreeClassifier's programs instead of TreeRegressor's")
    w.add_argument("--classes", type=int, default=None, metavar="K",
                   help="the classifier's number of classes (default 2)")
    w.set_defaults(func=_warmup)

    c = sub.add_parser("cache", help="show the size of jaxtree's compilation cache, or clear it",
                       description="Show where jaxtree keeps compiled programs (JAX's persistent "
                       "cache and jaxtree's executables) and how much they hold; entries are "
                       "never removed by jaxtree, so the directory grows with each new version "
                       "and table size. --clear deletes them; later fits compile again.")
    c.add_argument("--clear", action="store_true", help="delete the cached programs")
    c.set_defaults(func=_cache)

    f = sub.add_parser("fit", help="fit a tree to a CSV/Parquet table and save it as JSON",
                       description="Fit a tree to a CSV or Parquet table; print the formula and "
                       "training R², and save the model as JSON.")
    f.add_argument("data", help="CSV file with a header row (or .parquet/.pq with pyarrow)")
    f.add_argument("--target", required=True, metavar="COLUMN", help="name of the column to predict")
    f.add_argument("--k", type=int, default=10,
                   help="number of operations (default 10; an upper bound where the size is "
                   "chosen on held-out rows, see --search)")
    f.add_argument("--refine", choices=("optax", "coordinate", "none"), default="optax",
                   help="weight adjustment after each insertion (default optax)")
    f.add_argument("--basis", choices=("default", "fourier", "splines", "polynomial"), default="default",
                   help="basis function set (default: the paper's q=40 set)")
    f.add_argument("--features", metavar="A,B,C",
                   help="comma-separated feature columns (default: every column but the target)")
    f.add_argument("--chunk-size", type=_chunk_size, default="auto", metavar="N",
                   help="rows per sequential step of every pass over the rows: 'auto' "
                        "(default; the row plan of jaxtree.plan: 2048 on a CPU, up to about "
                        "a million on a GPU) or a number")
    f.add_argument("--search", choices=("auto", "greedy", "backfit", "beam"), default="auto",
                   help="structure search (default auto: backfit with the size chosen on "
                   "held-out rows below 10,000 rows, greedy above; greedy is the paper's; "
                   "beam: regression only)")
    f.add_argument("--shapes", type=_shapes_arg, default="auto", metavar="S",
                   help="'auto' (default): after the tree, as many one- and two-covariate shape "
                        "terms as held-out rows support (from 100 rows; a classification: two "
                        "classes, logistic loss); 0: none, the paper's model; an integer S "
                        "(regression): S before the tree, at most S below 10,000 rows where "
                        "held-out rows choose the count; additive: every covariate's main "
                        "shape first, penalised and chosen by GCV (a two-class "
                        "classification: UBRE), then the tree; see docs/model.md, 'Shape "
                        "terms'")
    f.add_argument("--shape-knots", type=_shape_knots_arg, default="auto", metavar="N1,N2",
                   help="hats per one-covariate shape and per axis of a two-covariate shape "
                        "(integers in [2, 64]); 'auto' (default): 3,2 below 2,000 rows, 32,16 "
                        "from them (24,12 for --shapes S, 16,2 for additive); finer main "
                        "shapes resolve a column whose values act as identifiers")
    f.add_argument("--min-support", type=_min_support_arg, default=0.02, metavar="SHARE|ROWS",
                   help="a basis function enters the tree only where it is nonzero on this "
                        "share of the training rows (default 0.02) or this many rows (an "
                        "integer); 0: every candidate, as the paper")
    f.add_argument("--max-terms", type=int, default=20, metavar="N",
                   help="--shapes auto adds shape terms after the tree until the formula has N "
                        "terms (default 20); a larger N trades readability for accuracy")
    f.add_argument("--additive-cv", type=_additive_cv_arg, default="auto", metavar="FOLDS",
                   help="'auto' (default): on small tables (20-1,999 rows) a regression weighs "
                        "--shapes additive against its own fit by 5-fold cross-validation where "
                        "its gate opens, a two-class classification (100-1,999 rows, at most "
                        "--max-terms columns) --shapes additive with k=0; an integer of at "
                        "least 2: that many folds; 0: no such choice (a faster fit)")
    f.add_argument("--out", metavar="MODEL.json", help="where to save the model (omit to only print)")
    f.add_argument("--quiet", action="store_true", help="no progress bar")
    f.add_argument("--missing", choices=("indicator", "error"), default="indicator",
                   help="empty cells in a feature column: indicator (default: a fill value plus a "
                   "'<column> missing' covariate) or error. Rows with an empty target are dropped")
    f.add_argument("--categorical", default="auto", metavar="auto|none|A,B",
                   help="columns whose values are categories, each level a 0/1 covariate "
                   "'<column>=<level>': auto (default: the non-numeric columns), none, or names")
    f.add_argument("--task", choices=("auto", "regress", "classify"), default="auto",
                   help="regress (TreeRegressor) or classify (TreeClassifier); auto (default) "
                   "classifies a non-numeric target or one with two distinct values and says so")
    f.add_argument("--loss", choices=("logistic", "margin"), default="logistic",
                   help="classification loss (default logistic)")
    f.set_defaults(func=_fit)

    p = sub.add_parser("predict", help="predict with a saved model",
                       description="Predict with a saved model; the model's feature columns are "
                       "selected from the table by name (other columns, e.g. the target, are ignored; "
                       "columns the formula does not use may be absent).")
    p.add_argument("model", help="model file written by 'jaxtree fit'")
    p.add_argument("data", help="CSV file with a header row (or .parquet/.pq with pyarrow)")
    p.add_argument("--out", metavar="PREDICTIONS.csv",
                   help="write the predictions here (default: CSV on stdout)")
    p.set_defaults(func=_predict)

    s = sub.add_parser("show", help="describe a saved model",
                       description="Print a saved model's formula, sizes, feature names and "
                       "training history.")
    s.add_argument("model", help="model file written by 'jaxtree fit'")
    s.add_argument("--data", metavar="DATA.csv",
                   help="also list each top-level term's share of the explained variance over "
                        "these rows (regression models)")
    s.add_argument("--plot", metavar="TERMS.png",
                   help="with --data: draw one panel per term over its covariates")
    s.set_defaults(func=_show)
    return parser


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        msg = f"{exc.filename}: {exc.strerror}"
    else:
        msg = str(exc) or type(exc).__name__
    return " ".join(msg.split())


def main(argv=None) -> int:
    """Runs the command line; returns the exit status.

    0 on success, 2 for a user error (one line ``jaxtree: error: ...`` on stderr), 1 for an
    unexpected internal error (also one line; set ``JAXTREE_DEBUG=1`` for the traceback),
    130 when interrupted. ``--help`` and argparse usage errors exit via ``SystemExit``.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (CLIError, ValueError, TypeError, KeyError, OSError) as exc:
        print(f"jaxtree: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("jaxtree: error: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: still one line; JAXTREE_DEBUG=1 shows the traceback
        if os.environ.get("JAXTREE_DEBUG"):
            raise
        print(f"jaxtree: error: internal error ({type(exc).__name__}: {_one_line(exc)}); rerun with "
              "JAXTREE_DEBUG=1 for the traceback and please report it", file=sys.stderr)
        return 1


def run(argv=None) -> int:
    """The ``jaxtree`` command (``[project.scripts]``, ``python -m jaxtree``): :func:`main` in
    a process of its own, where JAX's GPU allocator does not reserve 75% of the card first.

    That reservation took 1.8 s of a short process's first fit on one H200 (BENCHMARKS.md,
    "One H200, today's code"); ``XLA_PYTHON_CLIENT_PREALLOCATE=false`` makes the first use
    0.5 s. A value the user set wins. :func:`main` itself, called from a Python program,
    leaves that program's environment alone. Importing jaxtree starts no JAX backend, so
    the setting is in time (``tests/test_cli.py``)."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    with warnings.catch_warnings():  # warnings as the command's own lines on stderr
        warnings.showwarning = _show_warning
        return main(argv)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning as one line of the command, ``jaxtree: warning (UnseenLevelWarning): ...``:
    Python's form named the ``jaxtree`` script's line ``sys.exit(run())`` as its source."""
    print(f"jaxtree: warning ({category.__name__}): {_one_line(message)}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(run())
