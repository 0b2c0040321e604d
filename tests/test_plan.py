"""The row plan (``jaxtree.plan``, issue 25): one rule cuts every pass over the rows into
sequential steps per device; the accelerator plan is forced on the CPU here, so its shapes
and its results are checked without a GPU."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtree
from jaxtree import estimator as estimator_
from jaxtree import plan as plan_
from jaxtree import program as prog
from jaxtree import refine as refine_
from jaxtree import scoring
from jaxtree._fit import spec as spec_

from _shared import GREEDY


def _row_scans(jaxpr, rows: int, p: int) -> list:
    """The ``length`` of every ``scan`` over row chunks in a closed jaxpr (nested ones
    included), or the chunk count of a ``while`` loop over them (:func:`jaxtree.scoring.
    scan_live`: at most as many steps): the loops that consume all ``rows`` covariates as
    ``(length, m, p)`` chunks
    (the refinement regroups the scorer's chunks: its ``m`` may be larger). Other scans
    (over the tree's slots, the optimiser's steps) are not passes over the rows."""
    out = []

    def walk(j):
        for eqn in j.eqns:
            if eqn.primitive.name in ("scan", "while"):  # while: scoring.scan_live's loop
                shapes = [getattr(v.aval, "shape", ()) for v in eqn.invars]
                n = [s[0] for s in shapes if len(s) == 3 and s[0] * s[1] == rows and s[2] == p
                     and (eqn.primitive.name == "while" or s[0] == eqn.params["length"])]
                out.extend(n[:1])
            for v in eqn.params.values():
                for sub in (v if isinstance(v, (list, tuple)) else [v]):
                    if hasattr(sub, "eqns"):  # a Jaxpr
                        walk(sub)
                    elif hasattr(getattr(sub, "jaxpr", None), "eqns"):  # a ClosedJaxpr
                        walk(sub.jaxpr)

    walk(jaxpr.jaxpr)
    return out


def _abstract_data(n, p, chunk, dtype=jnp.float32):
    nc, m = scoring.chunk_shape(n, chunk)
    s = lambda *shape: jax.ShapeDtypeStruct(shape, dtype)  # noqa: E731
    return scoring.Data(s(nc, m, p), s(nc, m), s(nc, m))


@pytest.mark.parametrize("n", [10**6, 10**7])
def test_accelerator_pass_is_a_few_large_steps(n):
    """Under the accelerator plan a scoring pass and a refinement pass over 1e6 rows are at
    most 8 sequential steps (1e7: at most 16); the CPU plan's are hundreds. Traced with
    abstract shapes, so no row is allocated."""
    p, basis = 8, jaxtree.basis.default_basis()
    gpu = plan_.row_plan(n, p, basis.q, np.float32, platform="gpu")
    cpu = plan_.row_plan(n, p, basis.q, np.float32, platform="cpu")
    assert gpu.rule == "accelerator" and cpu.rule == "cpu" and cpu.chunk == 2048
    program = prog.empty_program(10, dtype=jnp.float32)
    for plan, bound in ((gpu, 8 if n == 10**6 else 16), (cpu, None)):
        data = _abstract_data(n, p, plan.chunk)
        score = jax.make_jaxpr(lambda d: scoring.score(program, d, basis, max_leaves=11))(data)
        loss = jax.make_jaxpr(lambda d: refine_.mse(program, d, basis))(data)
        rows = plan.rows_per_step * plan.n_chunks
        steps = _row_scans(score, rows, p), _row_scans(loss, rows, p)
        assert steps[0] and steps[1]  # found: each pass is a scan over the chunks
        steps = max(steps[0]), max(steps[1])
        assert steps[0] == plan.n_chunks
        if bound is None:
            assert steps[0] > 400  # the CPU plan: cache-sized chunks
        else:
            assert max(steps) <= bound, (plan, steps)


def test_plan_rule():
    q = 40
    # CPU: 2,048 rows; small n rounded up to a power of two (one compiled program nearby)
    assert plan_.row_plan(10**6, 8, q, platform="cpu").chunk == 2048
    assert plan_.row_plan(300, 8, q, platform="cpu").rows_per_step == 512
    # accelerator: Phi within the budget, a power of two, equal chunks on the grain
    g = plan_.row_plan(10**6, 8, q, np.float32, platform="gpu")
    assert g.chunk * 8 * q * 4 <= plan_.ACCEL_PHI_BYTES and g.n_chunks == 1
    assert plan_.row_plan(10**6, 8, q, np.float64, platform="gpu").n_chunks == 2  # twice the bytes
    air = plan_.row_plan(700_000, 8, q, np.float32, platform="gpu")
    assert air.n_chunks == 1 and air.rows_per_step == 720_896  # not 2^20: less padding
    big = plan_.row_plan(10**7, 8, q, np.float32, platform="gpu")
    assert big.n_chunks == 10 and big.n_chunks * big.chunk >= 10**7
    assert big.chunk % plan_.ACCEL_GRAIN == 0 and big.chunk <= g.chunk
    # a batch of 32 data sets shares the budget
    b = plan_.row_plan(10**4, 8, q, np.float32, platform="gpu", batch=32)
    assert b.chunk * 32 * 8 * q * 4 <= plan_.ACCEL_PHI_BYTES
    # an explicit chunk wins on every platform
    for platform in ("cpu", "gpu"):
        e = plan_.row_plan(10**6, 8, q, platform=platform, chunk_size=4096)
        assert (e.chunk, e.rule) == (4096, "explicit")
    # streamed blocks: one accelerator chunk a block; 16 chunks on a CPU
    assert g.chunks_per_block == 1
    assert plan_.row_plan(10**6, 8, q, platform="cpu").chunks_per_block == 16
    assert plan_.row_plan(10**6, 8, q, np.float32, platform="gpu",
                          chunk_size=2048).chunks_per_block == g.chunk // 2048
    # the in-memory bound: host copies on a CPU, the device copy on an accelerator
    assert not plan_.row_plan(3 * 10**6, 8, q, platform="cpu", cpu_chunked_values=1 << 24).in_memory
    assert plan_.row_plan(3 * 10**6, 8, q, np.float32, platform="gpu").in_memory
    assert not plan_.row_plan(10**8, 8, q, np.float32, platform="gpu").in_memory
    # ... an eighth of the device's memory where that is more than 1 GiB: 10^8 rows of 8
    # float32 columns (3.2 GB) stay on a card whose allocator holds 105 GB (an H200), not
    # on one of 16 GiB (2 GiB), and the CPU's rule ignores it
    h200, small = 105 * 10**9, 16 * 2**30
    assert plan_.row_plan(10**8, 8, q, np.float32, platform="gpu", device_bytes=h200).in_memory
    assert not plan_.row_plan(10**8, 8, q, np.float32, platform="gpu",
                              device_bytes=small).in_memory
    assert not plan_.row_plan(5 * 10**8, 8, q, np.float32, platform="gpu",
                              device_bytes=h200).in_memory
    assert plan_.row_plan(3 * 10**7, 8, q, np.float32, platform="gpu", device_bytes=1).in_memory
    assert not plan_.row_plan(3 * 10**6, 8, q, platform="cpu", cpu_chunked_values=1 << 24,
                              device_bytes=h200).in_memory
    if jax.default_backend() == "cpu":
        assert plan_.device_memory() is None  # a CPU reports no allocator limit


def test_a_fit_plans_with_the_devices_memory(monkeypatch):
    """The estimators' plan (spec.planned) asks the device for its memory on an accelerator
    only, and a table larger than 1 GiB of covariates stays on a large card's memory."""
    asked = []

    def memory(devices=None):
        asked.append(devices)
        return 105 * 10**9

    monkeypatch.setattr(plan_, "device_memory", memory)
    monkeypatch.setattr(plan_, "platform_of", lambda devices=None: "gpu")
    params = spec_.check_params({"k": 3})
    _, gpu = spec_.planned(params, 10**8, 8, np.float32)
    assert gpu.in_memory and asked == [None]
    monkeypatch.setattr(plan_, "platform_of", lambda devices=None: "cpu")
    _, cpu = spec_.planned(params, 10**5, 8, np.float32)
    assert cpu.rule == "cpu" and asked == [None]


@pytest.mark.parametrize("bad, err", [(0, ValueError), ("big", ValueError), (True, TypeError),
                                      (2.5, TypeError)])
def test_chunk_size_is_checked(bad, err):
    X = np.random.default_rng(0).uniform(size=(50, 2))
    with pytest.raises(err, match="chunk_size must be 'auto' or an integer"):
        jaxtree.TreeRegressor(k=1, chunk_size=bad).fit(X, X[:, 0])


def test_accelerator_plan_gives_the_cpu_plans_fit(monkeypatch):
    """Float64: the accelerator plan (one chunk of 8,192 rows) and the CPU plan (3 chunks of
    2,048) make the same choices and the same predictions to 1e-10; each estimator records
    the plan it ran. A plan that dropped or double-counted rows (a wrong padding or
    chunk count) changes the weights far beyond this tolerance."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 2, size=(5000, 3))
    y = 0.5 * X[:, 0] ** 2 + 0.3 * np.sin(X[:, 1]) * X[:, 2] + 0.05 * rng.normal(size=5000)
    kw = dict(GREEDY, k=4)
    cpu = jaxtree.TreeRegressor(**kw).fit(X, y)
    monkeypatch.setattr(plan_, "platform_of", lambda devices=None: "gpu")
    gpu = jaxtree.TreeRegressor(**kw).fit(X, y)
    assert cpu.row_plan_.rule == "cpu" and cpu.row_plan_.n_chunks == 3
    assert gpu.row_plan_.rule == "accelerator" and gpu.row_plan_.n_chunks == 1
    assert gpu.row_plan_.rows_per_step == 8192
    assert [c["flat_index"] for c in cpu.choices_] == [c["flat_index"] for c in gpu.choices_]
    np.testing.assert_allclose(gpu.predict(X), cpu.predict(X), rtol=0, atol=1e-10)
    np.testing.assert_allclose(gpu.history_, cpu.history_, rtol=1e-10)


@pytest.mark.slow  # ~15 s: test_accelerator_plan_gives_the_cpu_plans_fit's oracle on a memmap
def test_streamed_fit_follows_the_plan(monkeypatch, tmp_path):
    """A memmap streamed under the accelerator plan reads blocks of one large chunk
    (``chunks_per_block`` 1) and gives the CPU plan's model (float64, 1e-10)."""
    rng = np.random.default_rng(4)
    n = 5000
    xm = np.memmap(tmp_path / "x", np.float64, "w+", shape=(n, 2))
    xm[:] = rng.uniform(size=(n, 2))
    y = np.sin(3 * xm[:, 0]) + xm[:, 1] ** 2
    kw = dict(GREEDY, k=3)
    cpu = jaxtree.TreeRegressor(**kw).fit(xm, y)
    monkeypatch.setattr(plan_, "platform_of", lambda devices=None: "gpu")
    gpu = jaxtree.TreeRegressor(**kw).fit(xm, y)
    assert (cpu.row_plan_.chunk, cpu.row_plan_.chunks_per_block) == (2048, 16)
    assert gpu.row_plan_.chunks_per_block == 1 and gpu.row_plan_.n_chunks == 1
    np.testing.assert_allclose(gpu.predict(xm), cpu.predict(xm), rtol=0, atol=1e-10)


def test_explicit_chunk_wins_and_is_recorded():
    X = np.random.default_rng(1).uniform(size=(300, 2))
    est = jaxtree.TreeRegressor(**GREEDY, k=1, chunk_size=64).fit(X, X[:, 0])
    assert est.row_plan_.rule == "explicit" and est.row_plan_.n_chunks == 5
    assert estimator_.check_params({"chunk_size": "auto"}).chunk is None


def _weighted_pass(carry, ch):
    """A pass's body: weighted sums and a per-row output."""
    x, y, w = ch
    r = w * (y - x @ jnp.arange(1.0, x.shape[-1] + 1, dtype=x.dtype))
    return (carry[0] + jnp.sum(r * r), carry[1] + x.T @ r), r + 1.0


@pytest.mark.parametrize("live", [[1, 1, 1, 0, 0], [1, 0, 1, 1, 0], [0, 0, 0, 0, 0],
                                  [1, 1, 1, 1, 1], [1]])
def test_a_pass_skips_the_padding_chunks_and_equals_the_full_scan(live, x64):
    """``scoring.scan_live`` (every pass over the rows' chunks, issue 29's cost) runs up to
    the last chunk with a nonzero weight: its sums equal a float64 scan over all chunks (a
    zero-weight chunk adds zero), a zero-weight chunk between live ones is still read, and
    the chunks after the last live one output ``skipped``'s values; the same under ``jit``
    and ``vmap`` (a batch of weight patterns)."""
    rng = np.random.default_rng(len(live) + sum(live))
    nc, m, p = len(live), 16, 3
    x = rng.normal(size=(nc, m, p))
    y = rng.normal(size=(nc, m))
    w = rng.uniform(0.5, 2.0, size=(nc, m)) * np.asarray(live, float)[:, None]
    w[0, :3] = 0.0  # a partly padded chunk stays live
    init = (np.zeros(()), np.zeros(p))
    skipped = lambda ch: -jnp.ones_like(ch[1])  # noqa: E731
    data = tuple(map(jnp.asarray, (x, y, w)))
    (want_s, want_g), want_r = jax.lax.scan(_weighted_pass, init, data)
    run = jax.jit(lambda d: scoring.scan_live(_weighted_pass, init, d, d[2], skipped))
    (s, g), r = run(data)
    last = max([i + 1 for i, v in enumerate(live) if v], default=0) if nc > 1 else nc
    np.testing.assert_allclose(s, want_s, rtol=1e-12)
    np.testing.assert_allclose(g, want_g, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r[:last], want_r[:last], rtol=1e-12)
    np.testing.assert_array_equal(r[last:], -1.0)
    batch = tuple(jnp.stack([a, a]) for a in data[:2]) + (jnp.stack([data[2], 0 * data[2]]),)
    (bs, bg), br = jax.vmap(lambda d: scoring.scan_live(_weighted_pass, init, d, d[2],
                                                        skipped))(batch)
    np.testing.assert_allclose(bs, [want_s, 0.0], rtol=1e-12)
    np.testing.assert_allclose(br[0, :last], want_r[:last], rtol=1e-12)
    np.testing.assert_array_equal(br[1], -1.0 if nc > 1 else 1.0)  # one chunk: a plain scan


def test_a_pass_with_outputs_needs_their_skipped_values():
    data = (jnp.ones((2, 4, 3)), jnp.ones((2, 4)), jnp.ones((2, 4)))
    with pytest.raises(ValueError, match="skipped="):
        scoring.scan_live(_weighted_pass, (jnp.zeros(()), jnp.zeros(3)), data, data[2])
