"""TreeClassifier(devices=...): the sample axis sharded over 4 forced host devices, in a
subprocess (the XLA flag must be set before JAX starts; see tests/test_sharding.py)."""

import textwrap

import numpy as np
import pytest

import jaxtree
from jaxtree import sharding
from test_sharding import _run_on_four_devices

SHARDED = {"binary": 4, "three": 2}
"""Each label set's sharded fit (the suite's time: one device count each)."""

SCRIPT = f"SHARDED = {SHARDED!r}\n" + textwrap.dedent("""
    import json, os, tempfile
    import jax, numpy as np
    import jaxtree
    from jaxtree import basis as B
    assert len(jax.devices()) == 4, jax.devices()
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(600, 3)).astype(np.float32)
    labels = {"binary": np.where(X[:, 0] + np.sin(3 * X[:, 1]) > 1, "yes", "no"),
              "three": np.digitize(X[:, 0] + 0.5 * X[:, 2], [0.5, 1.0])}
    b = B.make_basis(hats=3, sines=2, cosines=2, powers=2, truncated_cubics=0)
    kw = dict(k=3, refine="coordinate", chunk_size=150, basis=b,  # 150 % 4 != 0: padded
              search="greedy", validation_fraction=None,  # "auto" differs with devices=
              shapes=0)  # a tree alone: the checks below count its k + 1 steps
    flat = lambda c: ([x["flat_index"] for x in c] if isinstance(c[0], dict)
                      else [[x["flat_index"] for x in cc] for cc in c])
    rec = lambda e: [flat(e.choices_), e.predict_proba(X).tolist(), e.predict(X).tolist()]
    out, tmp = {}, tempfile.mkdtemp()
    for name, y in labels.items():
        for dev in (None, SHARDED[name]):
            est = jaxtree.TreeClassifier(devices=dev, **kw).fit(X, y)
            out[f"{name}/{dev}"] = rec(est)
        est.save(os.path.join(tmp, name + ".json"))  # fitted on 4 or 2 devices, loaded on one
        out[name + "/saved"] = os.path.join(tmp, name + ".json")
    # validation_fraction: the training part sharded, the held-out rows on one device
    for dev in (None, 4):
        est = jaxtree.TreeClassifier(devices=dev, **dict(kw, validation_fraction=0.3))
        out[f"val/{dev}"] = rec(est.fit(X, labels["binary"])) + [est.k_]
    # streamed (a memmap), 3 classes, blocks sharded over 4 devices
    path = os.path.join(tmp, "x")
    mx = np.memmap(path, np.float32, "w+", shape=X.shape); mx[:] = X; mx.flush()
    out["three/stream4"] = rec(jaxtree.TreeClassifier(devices=4, **kw).fit(mx, labels["three"]))
    try:
        jaxtree.TreeClassifier(devices=5, **kw).fit(X, labels["binary"])
        out["err"] = None
    except ValueError as e:
        out["err"] = str(e)
    print("RESULT" + json.dumps(out))
""")


# The 4-device subprocess (~37 s of compiling on CI's 2 cores) in the slow suite: it checks
# test_sharding.py's oracle (the sharded fit makes the one-device choices) on the classifier's
# step, which runs through the same sharding layer; the refusals below stay in the default.
SLOW = pytest.mark.slow


@pytest.fixture(scope="module")
def four():
    return _run_on_four_devices(SCRIPT)


def _same(got, ref, what):
    # Probabilities within float32 accuracy of this fit: the one-device float32 fit itself
    # differs from a float64 fit by 5e-5 (refine="coordinate" leaves the intercept a few
    # Newton updates short of converged, so summation order shows), as 4 devices do.
    choices, proba, pred = got[:3]
    assert choices == ref[0], what
    np.testing.assert_allclose(proba, ref[1], rtol=0, atol=2e-4, err_msg=what)
    assert pred == ref[2], what


@SLOW
@pytest.mark.parametrize("name", ["binary", "three"])
def test_sharded_fit_makes_the_one_device_choices(four, name):
    ref = four[f"{name}/None"]
    _same(four[f"{name}/{SHARDED[name]}"], ref, f"{name} on {SHARDED[name]} devices")
    if name == "three":
        assert len(ref[0]) == 3 and all(len(c) == 4 for c in ref[0])  # 3 trees, k + 1 steps
        _same(four["three/stream4"], ref, "streamed on 4 devices")
    else:
        assert len(ref[0]) == 4


@SLOW
def test_sharded_validation_fraction_chooses_the_same_size(four):
    one, sharded = four["val/None"], four["val/4"]
    _same(sharded, one, "validation_fraction on 4 devices")
    assert sharded[3] == one[3]


@SLOW
@pytest.mark.parametrize("name", ["binary", "three"])
def test_model_fitted_on_several_devices_loads_on_one(four, name):
    X = np.random.default_rng(0).uniform(size=(600, 3)).astype(np.float32)
    est = jaxtree.load(four[name + "/saved"])
    assert isinstance(est, jaxtree.TreeClassifier) and est.devices is None
    np.testing.assert_allclose(est.predict_proba(X), four[f"{name}/{SHARDED[name]}"][1],
                               rtol=0, atol=1e-6)


@SLOW
def test_too_many_devices(four):
    assert four["err"] is not None and "only 4 device(s)" in four["err"]
    X = np.random.default_rng(0).uniform(size=(40, 2))
    y = (X[:, 0] > 0.5).astype(int)
    n = len(sharding.resolve_devices("all"))
    with pytest.raises(ValueError, match="available"):
        jaxtree.TreeClassifier(k=1, devices=n + 1).fit(X, y)


def test_reference_engine_refuses_devices():
    X = np.random.default_rng(0).uniform(size=(40, 2))
    y = (X[:, 0] > 0.5).astype(int)
    with pytest.raises(ValueError, match="engine='jax'"):
        jaxtree.TreeClassifier(k=1, engine="reference", refine=None, devices=1).fit(X, y)
    with pytest.raises(TypeError, match="devices"):
        jaxtree.TreeClassifier(k=1, devices=1.5).fit(X, y)
