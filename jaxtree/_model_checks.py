"""The checks of a model file's entries (:mod:`jaxtree.model`'s :func:`~jaxtree.model.from_dict`
and :func:`~jaxtree.model.read_task`): each takes a parsed JSON value and the file's path
and raises ValueError naming the file and what is wrong (:func:`fail`), so that a truncated,
corrupted or foreign file never gives a silently wrong model. Nothing here builds a model;
:func:`shapes_from_dict` builds the shape terms of a checked entry.

Why a module of its own (thirty-sixth session, issue 26): ``model.py`` held the model, its
predictions and every file check in 849 lines. Now the model module reads as the pytree and
its file's top level, and this one as the rules a file's values obey.
"""

from __future__ import annotations

import math
from typing import Mapping, Optional, Sequence

import jax.numpy as jnp
import numpy as np

from jaxtree import program as prog
from jaxtree import shapes as shapes_

MAX_FAMILY_SIZE = 10_000
"""Largest family size a file may ask for (a corrupted count must not exhaust memory)."""

MAX_SLOTS = 2 * 100_000 + 1
"""Largest program capacity a file may hold."""

TOP_KEYS = ("format", "version", "dtype", "basis", "feature_names", "scaling", "program")
OPTIONAL_KEYS = ("extra", "checksum", "target", "shapes", "task", "encoding", "missing",
                 "y_bound", "clip_y")
_SHAPE_KEYS = ("n1", "n2", "pairs", "main", "main_on", "pair", "pair_on", "intercept", "order",
               "n_terms")
SCALING_KEYS = ("x_min", "x_scale", "y_center", "y_scale")
_INT_ARRAYS = ("op", "left", "right", "feature", "basis")
_PROGRAM_KEYS = _INT_ARRAYS + ("weight", "intercept", "n_slots")


def fail(path, why: str):
    """Raises the ValueError of a bad file: ``"<path>: not a valid jaxtree model file: <why>"``."""
    raise ValueError(f"{path}: not a valid jaxtree model file: {why}")


def is_int(v) -> bool:
    """Whether ``v`` is a JSON integer."""
    return type(v) is int  # JSON ints only: no bools, no floats such as 1.0


def is_number(v) -> bool:
    """Whether ``v`` is a finite JSON number (no booleans)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


def entry(v, what: str, path, keys: Sequence[str], optional: Sequence[str] = ()) -> dict:
    """``v``, a JSON object with every key of ``keys`` and no others but ``optional``."""
    if not isinstance(v, dict):
        fail(path, f"{what} must be a JSON object; got {type(v).__name__}")
    missing = [k for k in keys if k not in v]
    unknown = sorted(str(k) for k in v if k not in keys and k not in optional)
    if missing or unknown:
        fail(path, f"{what} must have the keys {list(keys)}; missing {missing}, "
                   f"unexpected {unknown}")
    return v


def number_list(v, what: str, path, length: Optional[int] = None) -> list:
    """``v``, a list of finite numbers (of ``length`` entries when given)."""
    if not isinstance(v, list) or not all(is_number(e) for e in v):
        fail(path, f"{what} must be a list of finite numbers")
    if length is not None and len(v) != length:
        fail(path, f"{what} has {len(v)} entries; expected {length}")
    return v


def basis_config(cfg, path) -> None:
    """Bounds the family sizes before any basis is built (memory safety)."""
    fams = cfg.get("families") if isinstance(cfg, dict) else None
    if not isinstance(fams, list) or not fams:
        fail(path, "basis must be {'families': [...]} with at least one family")
    for pos, fam in enumerate(fams):
        if not isinstance(fam, dict):
            fail(path, f"basis family {pos} must be a JSON object")
        for key, val in fam.items():
            if isinstance(val, (int, float)) and not isinstance(val, bool) and not (
                    is_int(val) and 0 < val <= MAX_FAMILY_SIZE):
                fail(path, f"basis family {pos} has {key}={val!r}; expected an integer in "
                           f"[1, {MAX_FAMILY_SIZE}]")


def program(d: Mapping, p: int, q: int, path) -> None:
    """Checks a program's structure so a corrupted file cannot produce a silent wrong model.

    The program must be exactly what a search writes: one odd capacity ``S``; slots
    ``0 .. n_slots-1`` form one tree rooted at slot 0 whose children follow their
    parent; leaves have ``left = right = -1``, a valid feature and basis index and a
    finite weight in ``[-1, 1]``; op nodes have ``feature = basis = -1`` and weight 0;
    slots past ``n_slots`` are empty (op 0, indices -1, weight 0).
    """
    entry(d, "program", path, _PROGRAM_KEYS)
    for key in _INT_ARRAYS:
        if not isinstance(d[key], list) or not all(is_int(e) for e in d[key]):
            fail(path, f"program {key} must be a list of integers")
    s = len(d["op"])
    if not (1 <= s <= MAX_SLOTS) or s % 2 == 0 or any(len(d[k]) != s for k in _INT_ARRAYS):
        fail(path, "program arrays must share one odd length 2*max_k+1")
    number_list(d["weight"], "program weight", path, s)
    if not is_number(d["intercept"]):
        fail(path, "program intercept must be a finite number")
    n = d["n_slots"]
    if not is_int(n) or not (0 <= n <= s) or (n and n % 2 == 0):
        fail(path, f"bad n_slots {n!r}; expected 0 or an odd integer <= {s}")
    op, left, right, feat, bas, w = (d[k] for k in _INT_ARRAYS + ("weight",))
    seen = set()
    stack = [0] if n else []
    while stack:  # iterative: a deep (or cyclic) corrupted tree cannot overflow the stack
        slot = stack.pop()
        if not (0 <= slot < n) or slot in seen:
            fail(path, "program is not a tree (a child is out of range or shared)")
        seen.add(slot)
        if op[slot] == prog.LEAF:
            if left[slot] != -1 or right[slot] != -1:
                fail(path, f"leaf {slot} has children")
            if not (0 <= feat[slot] < p and 0 <= bas[slot] < q):
                fail(path, f"leaf {slot} indexes a feature/basis function that does not exist "
                           f"(feature {feat[slot]} of {p}, basis {bas[slot]} of {q})")
            if not abs(w[slot]) <= 1 + 1e-6:
                fail(path, f"leaf {slot} weight {w[slot]!r} is not in [-1, 1]")
        elif op[slot] in (prog.ADD, prog.MUL):
            if not (slot < left[slot] and slot < right[slot] and left[slot] != right[slot]):
                fail(path, "children must follow their parent")
            if feat[slot] != -1 or bas[slot] != -1 or w[slot] != 0:
                fail(path, f"op node {slot} carries leaf data")
            stack += [right[slot], left[slot]]
        else:
            fail(path, f"slot {slot} has unknown op {op[slot]!r}")
    if len(seen) != n:
        fail(path, "program has unreachable slots")
    for i in range(n, s):
        if (op[i], left[i], right[i], feat[i], bas[i], w[i]) != (prog.EMPTY, -1, -1, -1, -1, 0):
            fail(path, "slots past n_slots must be empty")


def _groups_from_dict(groups, p: int, n1: int, n2: int, pairs: list, main_on: list,
                      path) -> tuple:
    """The validated categorical groups of a file's ``shapes`` entry as
    :class:`jaxtree.shapes.ShapeSpec`'s ``groups`` (tuples): each ``{"name": str,
    "covariates": [j_1, ..., j_L]}`` with distinct covariates in range, ``2 <= L <= n1 - 1``,
    the groups disjoint; and the terms consistent with them (what a fit writes, so that no
    prediction is NaN): a group's other covariates are in no term of their own nor any pair,
    and a pair's group axis fits the pair's hats (``L <= n2 - 1``)."""
    if not isinstance(groups, list):
        fail(path, "shapes groups must be a list of {'name': str, 'covariates': [ints]}")
    out, seen = [], set()
    for pos, g in enumerate(groups):
        g = entry(g, f"shapes groups[{pos}]", path, ("name", "covariates"))
        name, cov = g["name"], g["covariates"]
        if not (isinstance(name, str) and name):
            fail(path, f"shapes groups[{pos}] name must be a non-empty string")
        if not (isinstance(cov, list) and all(is_int(j) and 0 <= j < p for j in cov)):
            fail(path, f"shapes groups[{pos}] ({name!r}) covariates must be a list of integers "
                       f"in [0, {p})")
        if len(set(cov)) != len(cov):
            fail(path, f"shapes groups[{pos}] ({name!r}) covariates must be distinct")
        if not 2 <= len(cov) <= n1 - 1:
            fail(path, f"shapes groups[{pos}] ({name!r}) has {len(cov)} covariates; a group "
                       f"holds 2 to n1 - 1 = {n1 - 1}")
        if seen & set(cov):
            fail(path, f"shapes groups[{pos}] ({name!r}) shares covariate(s) "
                       f"{sorted(seen & set(cov))} with another group; groups are disjoint")
        seen |= set(cov)
        if any(main_on[j] for j in cov[1:]):
            fail(path, f"shapes groups[{pos}] ({name!r}): only its first covariate "
                       f"({cov[0]}) may hold a main shape; its others are no term of their own")
        for pr in pairs:
            if set(pr) & set(cov[1:]):
                fail(path, f"shapes pair {pr} uses a covariate of group {name!r} other than "
                           f"its first ({cov[0]})")
            if cov[0] in pr and len(cov) > n2 - 1:
                fail(path, f"shapes pair {pr} has group {name!r} ({len(cov)} levels) as an "
                           f"axis; a pair's axis holds at most n2 - 1 = {n2 - 1} levels")
        out.append((name, tuple(cov)))
    return tuple(out)


def shapes_from_dict(s, p: int, dtype, path):
    """Validated :class:`jaxtree.shapes.Shapes` and spec from a file's ``shapes`` entry."""
    s = entry(s, "shapes", path, _SHAPE_KEYS, ("groups",))
    n1, n2 = s["n1"], s["n2"]
    if not (is_int(n1) and is_int(n2) and 2 <= n1 <= MAX_FAMILY_SIZE and 2 <= n2 <= 1000):
        fail(path, "shapes n1 and n2 must be integers >= 2")
    pairs = s["pairs"]
    if not isinstance(pairs, list) or not all(
            isinstance(pr, list) and len(pr) == 2 and all(is_int(v) for v in pr)
            and 0 <= pr[0] < pr[1] < p for pr in pairs):
        fail(path, f"shapes pairs must be a list of [i, l] with 0 <= i < l < {p}")
    bools = lambda v, n: isinstance(v, list) and len(v) == n and all(isinstance(b, bool) for b in v)
    if not (bools(s["main_on"], p) and bools(s["pair_on"], len(pairs))):
        fail(path, "shapes main_on / pair_on must be lists of booleans, one per covariate / pair")
    if not (isinstance(s["main"], list) and len(s["main"]) == p):
        fail(path, f"shapes main must hold {p} rows")
    main = [number_list(r, "shapes main", path, n1) for r in s["main"]]
    if not (isinstance(s["pair"], list) and len(s["pair"]) == len(pairs)):
        fail(path, f"shapes pair must hold {len(pairs)} rows")
    pair = [number_list(r, "shapes pair", path, n2 * n2) for r in s["pair"]]
    order, n_terms = s["order"], s["n_terms"]
    n_cand = p + len(pairs)
    if not (isinstance(order, list) and order and all(is_int(v) and -1 <= v < n_cand for v in order)
            and is_int(n_terms) and 0 <= n_terms <= len(order)):
        fail(path, "shapes order / n_terms are malformed")
    on = list(s["main_on"]) + list(s["pair_on"])
    if sorted(order[:n_terms]) != [t for t in range(n_cand) if on[t]]:
        fail(path, "shapes order does not list exactly the terms marked on")
    if not is_number(s["intercept"]):
        fail(path, "shapes intercept must be a finite number")
    groups = (_groups_from_dict(s["groups"], p, n1, n2, pairs, s["main_on"], path)
              if "groups" in s else ())
    spec = shapes_.ShapeSpec(n1=n1, n2=n2, max_terms=len(order), pairs=tuple(map(tuple, pairs)),
                             groups=groups)
    arr = lambda v, shape: prog.as_device(np.asarray(v, np.float64).reshape(shape), dtype)
    sh = shapes_.Shapes(arr(main, (p, n1)), prog.as_device(s["main_on"], bool),
                        arr(pair, (len(pairs), n2 * n2)), prog.as_device(s["pair_on"], bool),
                        prog.as_device(float(s["intercept"]), dtype),
                        prog.as_device(order, jnp.int32), prog.as_device(n_terms, jnp.int32))
    return sh, spec
