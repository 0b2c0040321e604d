"""The fitted model as a pytree, its pure predict function, and versioned JSON files.

A :class:`TreeModel` holds the program and the scaling that maps user units to the
space the search works in: each covariate ``x_j`` is mapped to ``[0, 1]`` with the
training minimum and range, and ``y`` to ``[-1, 1]`` with the training midpoint and
half-range (the paper assumes ``Y = [-1, 1]`` and ``|phi| <= 1`` on ``[0, 1]``).
Predictions are mapped back: ``yhat = y_center + y_scale * (w0 + T(x_scaled))``.

Arrays are pytree leaves; the basis and feature names are static metadata, so a model
can be passed through ``jax.jit``, ``jax.grad`` (with respect to inputs or weights)
and ``jax.vmap``.

Files (decision: JSON, never pickle, so loading never executes code) carry
``format = "jaxtree-model"`` and ``version``; floats are written with ``repr`` so a
save/load round trip is exact.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any, Mapping, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxtree import basis as basis_
from jaxtree import program as prog

FORMAT = "jaxtree-model"
VERSION = 1


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class TreeModel:
    """A fitted tree with its input/output scaling (a pytree).

    Attributes:
      program: the :class:`jaxtree.program.Program` in the scaled space.
      x_min: float ``(p,)`` training minimum of each covariate.
      x_scale: float ``(p,)`` ``1 / (max - min)`` of each covariate (1 for constants).
      y_center: float ``()`` midpoint of the training targets.
      y_scale: float ``()`` half-range of the training targets (1 if constant).
      basis: the :class:`jaxtree.basis.Basis` (static).
      feature_names: names of the covariates (static tuple).
    """

    program: prog.Program
    x_min: jax.Array
    x_scale: jax.Array
    y_center: jax.Array
    y_scale: jax.Array
    basis: basis_.Basis = dataclasses.field(metadata=dict(static=True))
    feature_names: tuple = dataclasses.field(metadata=dict(static=True))

    @property
    def n_features(self) -> int:
        return int(self.x_min.shape[-1])

    def formula(self, digits: int = 3) -> str:
        """The readable formula in user units (covariates min-max scaled to [0, 1])."""
        inner = prog.render(self.program, self.basis, self.feature_names, digits)
        c, s = float(self.y_center), float(self.y_scale)
        if c == 0.0 and s == 1.0:
            return f"y = {inner}"
        return f"y = {c:.{digits}g} + {s:.{digits}g}·[{inner}]"


def scale_x(model: TreeModel, x, clip: bool = True):
    """Maps covariates to the scaled space ``[0, 1]`` (clipped to it when ``clip``)."""
    xs = (x - model.x_min) * model.x_scale
    return jnp.clip(xs, 0.0, 1.0) if clip else xs


def predict(model: TreeModel, X, *, clip: bool = True) -> jax.Array:
    """Predictions of a fitted model; pure, works under ``jit``, ``vmap`` and ``grad``.

    Args:
      model: a :class:`TreeModel` (e.g. ``TreeRegressor().fit(X, y).model_``).
      X: float ``(n, p)`` covariates in user units (or ``(p,)`` for one row).
      clip: clip covariates to the training range first (the basis functions are only
        bounded on ``[0, 1]``; extrapolating a cubic or a Fourier term is rarely wise).

    Returns:
      float ``(n,)`` (or ``()``) predictions in the units of ``y``.

    Examples:
      >>> import jax, numpy as np, jaxtree
      >>> X = np.random.default_rng(0).uniform(size=(200, 2))
      >>> m = jaxtree.TreeRegressor(k=1, refine=None).fit(X, X[:, 0] ** 2).model_
      >>> yhat = jax.jit(jaxtree.predict)(m, X)
      >>> yhat.shape
      (200,)
    """
    x = jnp.asarray(X, model.x_min.dtype)
    single = x.ndim == 1
    x2 = x[None, :] if single else x
    out = model.y_center + model.y_scale * prog.evaluate(model.program, scale_x(model, x2, clip), model.basis)
    return out[0] if single else out


# ------------------------------------------------------------------------------ files


def _floats(a) -> list:
    return [float(v) for v in np.asarray(a, np.float64).ravel()]


def to_dict(model: TreeModel, extra: Optional[Mapping[str, Any]] = None) -> dict:
    """A JSON-serialisable description of ``model`` (exact floats)."""
    a = prog.to_numpy(model.program)
    return {
        "format": FORMAT,
        "version": VERSION,
        "dtype": str(np.asarray(model.program.weight).dtype),
        "basis": model.basis.to_config(),
        "feature_names": list(model.feature_names),
        "scaling": {
            "x_min": _floats(model.x_min),
            "x_scale": _floats(model.x_scale),
            "y_center": float(model.y_center),
            "y_scale": float(model.y_scale),
        },
        "program": {
            "op": a["op"].tolist(), "left": a["left"].tolist(), "right": a["right"].tolist(),
            "feature": a["feature"].tolist(), "basis": a["basis"].tolist(),
            "weight": _floats(a["weight"]), "intercept": float(a["intercept"]),
            "n_slots": int(a["n_slots"]),
        },
        "extra": dict(extra or {}),
    }


def _fail(path, why: str):
    raise ValueError(f"{path}: not a valid jaxtree model file: {why}")


def _validate_program(d: Mapping, p: int, q: int, path) -> None:
    """Checks a program's structure so a corrupted file cannot produce a silent wrong model."""
    keys = ("op", "left", "right", "feature", "basis", "weight")
    s = len(d["op"])
    if s < 1 or s % 2 == 0 or any(len(d[k]) != s for k in keys):
        _fail(path, "program arrays must share one odd length 2*max_k+1")
    n = d["n_slots"]
    if not isinstance(n, int) or not (0 <= n <= s) or (n and n % 2 == 0):
        _fail(path, f"bad n_slots {n!r}")
    op, left, right = d["op"], d["left"], d["right"]
    seen = set()

    def walk(slot, depth):
        if not (0 <= slot < n) or slot in seen or depth > s:
            _fail(path, "program is not a tree")
        seen.add(slot)
        if op[slot] == prog.LEAF:
            if not (0 <= d["feature"][slot] < p and 0 <= d["basis"][slot] < q):
                _fail(path, f"leaf {slot} indexes a feature/basis function that does not exist")
            w = d["weight"][slot]
            if not (isinstance(w, (int, float)) and math.isfinite(w) and abs(w) <= 1 + 1e-6):
                _fail(path, f"leaf {slot} weight {w!r} is not a finite number in [-1, 1]")
        elif op[slot] in (prog.ADD, prog.MUL):
            if not (slot < left[slot] and slot < right[slot]):
                _fail(path, "children must follow their parent")
            walk(left[slot], depth + 1)
            walk(right[slot], depth + 1)
        else:
            _fail(path, f"slot {slot} has unknown op {op[slot]!r}")

    if n:
        walk(0, 0)
        if len(seen) != n:
            _fail(path, "program has unreachable slots")
    if any(op[i] != prog.EMPTY for i in range(n, s)):
        _fail(path, "slots past n_slots must be empty")


def from_dict(d: Any, custom_functions: Optional[Mapping] = None, path="<dict>") -> TreeModel:
    """Rebuilds a :class:`TreeModel` from :func:`to_dict` output, validating everything."""
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        _fail(path, f"missing format marker {FORMAT!r} (is this a jaxtree model?)")
    if d.get("version") != VERSION:
        raise ValueError(
            f"{path}: model file version {d.get('version')!r} is not supported by this jaxtree "
            f"(which reads version {VERSION}). Re-fit or re-save the model with a matching version."
        )
    try:
        basis = basis_.Basis.from_config(d["basis"], custom_functions=custom_functions)
        sc, pg = d["scaling"], d["program"]
        names = tuple(str(n) for n in d["feature_names"])
        x_min = np.asarray(sc["x_min"], np.float64)
        x_scale = np.asarray(sc["x_scale"], np.float64)
        y_center, y_scale = float(sc["y_center"]), float(sc["y_scale"])
        dtype = np.dtype(d.get("dtype", "float32"))
    except ValueError as exc:
        if str(exc).startswith(str(path)):
            raise
        _fail(path, str(exc))
    except (KeyError, TypeError, AttributeError) as exc:
        _fail(path, f"missing or malformed field ({exc!r})")
    p = len(names)
    if dtype not in (np.float32, np.float64):
        _fail(path, f"unsupported dtype {dtype}")
    if x_min.shape != (p,) or x_scale.shape != (p,) or p == 0:
        _fail(path, "scaling does not match the feature names")
    if not (np.isfinite(x_min).all() and np.isfinite(x_scale).all() and (x_scale > 0).all()
            and math.isfinite(y_center) and math.isfinite(y_scale) and y_scale > 0):
        _fail(path, "scaling holds non-finite or non-positive values")
    try:
        _validate_program(pg, p, basis.q, path)
        intercept = float(pg["intercept"])
    except (KeyError, TypeError, IndexError) as exc:
        _fail(path, f"malformed program ({exc!r})")
    if not math.isfinite(intercept):
        _fail(path, "intercept is not finite")
    if not jax.config.jax_enable_x64:
        dtype = np.dtype(np.float32)
    program = prog.from_arrays(pg["op"], pg["left"], pg["right"], pg["feature"], pg["basis"],
                               np.asarray(pg["weight"], dtype), intercept, pg["n_slots"], dtype=dtype)
    return TreeModel(program, jnp.asarray(x_min, dtype), jnp.asarray(x_scale, dtype),
                     jnp.asarray(y_center, dtype), jnp.asarray(y_scale, dtype), basis, names)


def save(model: TreeModel, path, extra: Optional[Mapping[str, Any]] = None) -> None:
    """Writes ``model`` to ``path`` as versioned JSON."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(to_dict(model, extra), f, indent=1, allow_nan=False)


def load_dict(path) -> dict:
    """Reads and parses a model file (no validation of the contents)."""
    try:
        with open(path, "r", encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a valid jaxtree model file: not JSON ({exc}).") from None


def load(path, custom_functions: Optional[Mapping] = None) -> TreeModel:
    """Reads a model written by :func:`save`; raises ValueError for any bad file."""
    return from_dict(load_dict(path), custom_functions, path)
