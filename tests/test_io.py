"""Model files: exact round trips, clear errors, and a fuzzer over corrupted files."""

import copy
import json
import math
import random

import numpy as np
import pytest

import jaxtree
from _shared import GREEDY, custom_basis_model
from jaxtree import model as model_
from jaxtree.debug import count_compilations

N, P, K = 64, 3, 2


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    rng = np.random.default_rng(3)
    X = rng.uniform(-1.0, 2.0, size=(N, P))
    y = 0.5 * X[:, 0] ** 2 + 0.3 * np.sin(X[:, 1]) * X[:, 2]
    # A tree of exactly K operations (the default would choose its size on held-out rows),
    # so the hand edits below each break a slot the tree uses.
    est = jaxtree.TreeRegressor(k=K, refine=None, **GREEDY).fit(X, y)
    assert est.k_ == K
    path = tmp_path_factory.mktemp("io") / "model.json"
    est.save(path)
    # Rows inside and far outside the training range (so `clip` matters too).
    Xq = np.r_[X[:30], X[:34] * 3.0]
    return est, path, Xq


def program_arrays(m):
    return {k: np.asarray(v) for k, v in m.program._asdict().items()}


def assert_same_model(a, b):
    pa, pb = program_arrays(a), program_arrays(b)
    for k in pa:
        assert pa[k].dtype == pb[k].dtype
        np.testing.assert_array_equal(pa[k], pb[k])
    for f in ("x_min", "x_scale", "y_center", "y_scale"):
        np.testing.assert_array_equal(np.asarray(getattr(a, f)), np.asarray(getattr(b, f)))
    assert a.basis == b.basis and a.feature_names == b.feature_names


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_round_trip_is_exact(tmp_path, dtype):
    rng = np.random.default_rng(4)
    X = rng.uniform(size=(N, P)).astype(dtype)
    y = np.cos(3 * X[:, 0]) + X[:, 1] * X[:, 2]
    # the `saved` fixture's search and shapes (one compilation for float64): the file does not
    # depend on the search, and the greedy step compiles in half the time of the backfit one
    est = jaxtree.TreeRegressor(k=K, refine=None, clip=False, **GREEDY).fit(X, y)
    est.save(tmp_path / "m.json")
    with count_compilations() as compiled:  # the arrays are cast on the host, not compiled
        back = jaxtree.load(tmp_path / "m.json")
    assert compiled.compiles == 0
    assert_same_model(est.model_, back.model_)
    assert back.get_params()["clip"] is False and back.k == K
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    np.testing.assert_array_equal(back.history_, est.history_)
    assert back.formula() == est.formula()
    assert model_.to_dict(back.model_) == model_.to_dict(est.model_)
    d = json.loads((tmp_path / "m.json").read_text())
    assert d["format"] == "jaxtree-model" and d["version"] == model_.VERSION
    assert d["checksum"].startswith("sha256:") and set(d["scaling"]) == {"x_min", "x_scale", "y_center", "y_scale"}


def write(tmp_path, obj, name="bad.json"):
    p = tmp_path / name
    p.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return p


def test_clear_errors_for_bad_files(saved, tmp_path):
    _, path, _ = saved
    good = json.loads(path.read_text())
    text = path.read_text()
    cases = [
        (dict(good, version=2), r"version 2 is not supported.*reads version 1.*Re-fit or re-save"),
        (dict(good, version="1"), r"version '1' is not supported"),
        (text[: len(text) // 2], r"not a valid jaxtree model file: not JSON"),
        ("", r"not JSON"),
        ({"hello": "world"}, r"missing format marker 'jaxtree-model'"),
        ([1, 2, 3], r"missing format marker"),
        ("[" * 100_000 + "]" * 100_000, r"not JSON|format marker"),
        (dict(good, checksum="sha256:00"), r"checksum mismatch.*corrupted or edited"),
        ({k: v for k, v in good.items() if k != "program"}, r"missing \['program'\]"),
        (dict(good, surprise=1), r"unexpected \['surprise'\]"),
    ]
    for obj, match in cases:
        with pytest.raises(ValueError, match=match):
            jaxtree.load(write(tmp_path, obj))
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ValueError, match="not JSON"):
        jaxtree.load(tmp_path / "bin.json")


def unsigned(d):
    return {k: v for k, v in d.items() if k != "checksum"}


def test_hand_edited_files_are_validated_structurally(saved, tmp_path):
    est, path, Xq = saved
    good = json.loads(path.read_text())
    # Without a checksum a (deliberately) edited file is accepted when it is well formed.
    back = jaxtree.load(write(tmp_path, unsigned(good)))
    np.testing.assert_array_equal(back.predict(Xq), est.predict(Xq))

    def edit(fn):
        d = copy.deepcopy(unsigned(good))
        fn(d)
        return write(tmp_path, d)

    leaf = good["program"]["op"].index(1)
    cases = [
        (lambda d: d["program"]["weight"].__setitem__(leaf, 1.5), r"weight 1.5 is not in \[-1, 1\]"),
        (lambda d: d["program"]["feature"].__setitem__(leaf, P), r"feature/basis function that does not exist"),
        (lambda d: d["program"]["feature"].__setitem__(leaf, 0.0), r"list of integers"),
        (lambda d: d["program"]["op"].__setitem__(0, True), r"list of integers"),
        (lambda d: d["program"].__setitem__("n_slots", 3), r"n_slots|not a tree|unreachable|empty"),
        (lambda d: d["program"]["left"].__setitem__(0, 0), r"children must follow"),
        (lambda d: d["scaling"].__setitem__("x_scale", [1.0, -1.0, 1.0]), r"non-positive"),
        (lambda d: d["scaling"].__setitem__("y_center", "0.5"), r"finite numbers"),
        (lambda d: d["scaling"].__setitem__("x_min", [0.0, 0.0]), r"x_min has 2 entries; expected 3"),
        (lambda d: d.__setitem__("feature_names", "abc"), r"list of strings"),
        (lambda d: d.__setitem__("dtype", "float16"), r"unsupported dtype"),
        (lambda d: d["basis"]["families"][0].__setitem__("n", 10 ** 9), r"integer in \[1, 10000\]"),
        (lambda d: d["basis"]["families"][0].__setitem__("kind", "pickle"), r"bad basis.*unknown kind"),
        (lambda d: d["extra"]["params"].__setitem__("clip", "no"), r"clip must be True or False"),
        (lambda d: d["extra"]["params"].__setitem__("k", [1]), r"extra.params"),
        (lambda d: d["extra"].__setitem__("history", ["0.1"]), r"extra.history"),
    ]
    for fn, match in cases:
        with pytest.raises(ValueError, match=match):
            jaxtree.load(edit(fn))


# ------------------------------------------------------------------------------ fuzzer


def paths(obj, prefix=()):
    """Every path (tuple of keys/indices) into a JSON value, containers included."""
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += paths(v, prefix + (i,))
    return out


def get(obj, path):
    for k in path:
        obj = obj[k]
    return obj


def put(obj, path, value):
    get(obj, path[:-1])[path[-1]] = value


def mutate_value(v, r):
    if isinstance(v, bool):
        return r.choice([not v, 1, "true", None])
    if isinstance(v, (int, float)):
        return r.choice([v + 1, v - 1, -v, 0, 0.5, v * 1e300, float("nan"), float("inf"),
                         v + 1e-9, float(v), int(v) if math.isfinite(v) else 0, 10 ** 30, str(v), [v], None])
    return r.choice(["x", "", None, True, 0, -1, [], {}, [v], {"a": v}, 1e308])


def mutate(d, r):
    """One random structural mutation of a model dict (returns a new dict or text)."""
    d = copy.deepcopy(d)
    ps = [p for p in paths(d) if p]
    kind = r.choice(["alter", "alter", "alter", "delete", "swap", "add", "retype"])
    p = r.choice(ps)
    if kind == "alter":
        put(d, p, mutate_value(get(d, p), r))
    elif kind == "retype":
        put(d, p, r.choice(["1", None, True, [], {}, 1.25, -7]))
    elif kind == "delete":
        del get(d, p[:-1])[p[-1]]
    elif kind == "swap":
        q = r.choice(ps)
        a, b = copy.deepcopy(get(d, p)), copy.deepcopy(get(d, q))
        try:
            put(d, p, b)
            put(d, q, a)
        except (KeyError, IndexError, TypeError):  # one path went away: keep what we have
            pass
    else:
        c = get(d, p[:-1])
        if isinstance(c, list):
            c.insert(r.randrange(len(c) + 1), copy.deepcopy(r.choice(c) if c else 0))
        else:
            c["zz_" + str(r.randrange(9))] = 1
    return d


def mutate_text(text, r):
    i = r.randrange(len(text))
    kind = r.choice(["truncate", "flip", "delete_char", "insert_char"])
    ch = r.choice('0123456789.-eE"{}[],: nx\n')
    if kind == "truncate":
        return text[:i]
    if kind == "flip":
        return text[:i] + ch + text[i + 1:]
    if kind == "delete_char":
        return text[:i] + text[i + 1:]
    return text[:i] + ch + text[i:]


def semantics(est):
    """What determines predictions: the model content and the hyperparameters."""
    params = {k: v for k, v in est.get_params().items() if k != "basis"}
    return unsigned(model_.to_dict(est.model_)), params


def check_load(path, original, Xq, ref_pred):
    """Either a clean ValueError/TypeError, or a model with finite predictions that are
    identical to the original's when the loaded model is semantically the original."""
    try:
        est = jaxtree.load(path)
    except (ValueError, TypeError):
        return "rejected"
    pred = est.predict(Xq)
    assert np.isfinite(pred).all()
    if semantics(est) == semantics(original):
        np.testing.assert_array_equal(pred, ref_pred)
        return "neutral"
    return "changed"


def test_fuzz_corrupted_files(saved, tmp_path):
    est, path, Xq = saved
    text = path.read_text()
    good = json.loads(text)
    ref = est.predict(Xq)
    r = random.Random(20240607)
    outcomes = {"rejected": 0, "neutral": 0, "changed": 0}
    target = tmp_path / "fuzz.json"
    for i in range(450):
        mode = i % 3
        if mode == 0:  # raw corruption of the text: the checksum or the parser must catch it
            target.write_text(mutate_text(text, r))
        elif mode == 1:  # structural mutation, checksum kept: must be rejected unless neutral
            target.write_text(json.dumps(mutate(good, r), indent=1))
        else:  # structural mutation, re-signed (a plausible hand edit): only validation guards
            d = mutate(good, r)
            if isinstance(d, dict):
                d = unsigned(d)
                # Basis sizes are covered above; mutating them here would only compile
                # prediction for many new bases, which is slow and adds no coverage.
                if d.get("basis") != good["basis"]:
                    continue
                try:
                    d["checksum"] = model_.checksum(d)
                except (TypeError, ValueError):
                    pass
            target.write_text(json.dumps(d, indent=1))
        try:
            outcome = check_load(target, est, Xq, ref)
        except Exception as exc:  # noqa: BLE001 - the point of the test
            pytest.fail(f"mutation {i} (mode {mode}) raised {type(exc).__name__}: {exc}\n"
                        f"{target.read_text()[:3000]}")
        if mode == 1:
            assert outcome != "changed", f"mutation {i} changed the model but kept its checksum"
        outcomes[outcome] += 1
    assert outcomes["rejected"] > 100 and outcomes["neutral"] > 0, outcomes


def test_custom_basis_load_error_names_the_load_argument(tmp_path):
    est, path, fn, X = custom_basis_model(tmp_path)
    assert "tanh(2" in est.formula()
    for wrong in (None, {"tanh": fn}):
        with pytest.raises(ValueError) as info:
            jaxtree.load(path, custom_functions=wrong)
        msg = str(info.value)
        assert "jaxtree.load(path, custom_functions={'tanh(2{x})': fn})" in msg, msg
        assert "Basis.from_config" not in msg and "not a valid jaxtree model file" not in msg
    back = jaxtree.load(path, custom_functions={"tanh(2{x})": fn})
    np.testing.assert_array_equal(back.predict(X), est.predict(X))


def test_devices_are_not_saved_and_a_sharded_fits_file_loads_anywhere(saved, tmp_path):
    # A model fitted on 4 devices is loaded on machines with fewer: the file does not carry
    # `devices`, and a file that does (written before this rule) loads with the default.
    est, path, Xq = saved
    good = json.loads(path.read_text())
    assert "devices" not in good["extra"]["params"]
    d = unsigned(good)
    d["extra"]["params"]["devices"] = 64
    back = jaxtree.load(write(tmp_path, d))
    assert back.devices is None
    np.testing.assert_array_equal(back.predict(Xq), est.predict(Xq))
