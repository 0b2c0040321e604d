"""Plain helpers shared by several test modules (pytest puts tests/ on sys.path)."""

import contextlib

import jax
import numpy as np

import jaxtree
from jaxtree import program as prog
from jaxtree import refine, scoring

N, P, K = 64, 3, 2  # a small problem whose shapes many tests share (one compilation)

# The library's kernels jitted once for every test module (called eagerly, each compiles its
# scans again on every call); the same functions.
evaluate_jit = jax.jit(prog.evaluate, static_argnames="basis")
score_jit = jax.jit(scoring.score, static_argnames=("basis", "max_leaves"))
mse_jit = jax.jit(refine.mse, static_argnames="basis")

GREEDY = {"search": "greedy", "validation_fraction": None, "shapes": 0}
"""The paper's search grown to ``k``, a tree alone (the defaults are ``"backfit"`` with a
held-out size below 10,000 rows, and shape terms from 20 rows): for tests of engines, paths
and properties that compare fixed-``k`` greedy fits (``TreeRegressor(**GREEDY, ...)``)."""


def smooth_data(seed=0, n=N):
    """A smooth target of three covariates on [-1, 2], with noise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 2.0, size=(n, P))
    y = 0.5 * X[:, 0] ** 2 + 0.3 * np.sin(X[:, 1]) * X[:, 2] + 0.05 * rng.normal(size=n)
    return X, y


def fitted_values(est, X) -> np.ndarray:
    """A regressor's fitted function on the rows ``X`` (float64): ``predict`` without its clip
    to the training targets' range (jaxtree.model.predict), so that a training MSE computed
    from it is the one the fit's history reports."""
    return np.asarray(jaxtree.predict(est.model_, est.encode(X), clip=False), np.float64)


def choice_key(choices):
    """The structural part of an estimator's ``choices_`` (op, slot, feature, basis)."""
    return [(c["op"], c["slot"], c["feature"], c["basis"]) for c in choices]


def custom_basis_model(tmp_path):
    """A model whose leaves use a custom basis function (saved by name only)."""
    import jax.numpy as jnp

    fn = lambda x: jnp.tanh(2 * x)  # noqa: E731
    basis = jaxtree.make_basis(hats=0, sines=0, cosines=0, powers=1, truncated_cubics=0,
                               functions=[("tanh(2{x})", fn)])
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(60, 2))
    est = jaxtree.TreeRegressor(k=1, basis=basis, engine="reference", refine=None).fit(
        X, np.tanh(2 * X[:, 0]) + 0.2 * X[:, 1])
    path = tmp_path / "custom.json"
    est.save(path)
    return est, path, fn, X


def lambdify(expr, names):
    """``sympy.lambdify(symbols, expr, "numpy")`` over the covariates ``names`` in order (each
    ``Symbol(name, real=True)``, as the exports name them), quick where the names are no
    Python identifiers (``c=P``, ``d missing``): lambdify swaps each such symbol for a dummy
    in an ``xreplace`` pass of its own, which rebuilds and re-simplifies every ``Max``/``Min``
    of the expression (13 s for a model with group shape terms); here all are renamed in one
    pass without re-evaluating, which changes no value."""
    import sympy as sp

    syms = [sp.Symbol(n, real=True) for n in names]
    safe = [sp.Symbol(f"_x{j}", real=True) for j in range(len(names))]
    with sp.evaluate(False):
        expr = expr.xreplace(dict(zip(syms, safe)))
    return sp.lambdify(safe, expr, "numpy")


XLA_DEFAULTS = ("--xla_backend_optimization_level=3", "--xla_cpu_use_fusion_emitters=true",
                "--xla_cpu_parallel_codegen_split_count=32")
"""XLA's own defaults for the three flags of ``golden_cases.SUITE_XLA_FLAGS`` (LLVM's level 3,
the MLIR fusion emitters, codegen in 32 parts): what users' and benchmarks' programs compile
under."""


def at_xla_defaults(request) -> bool:
    """Whether a test's body runs in this process. For a ``slow`` test that compares two
    differently shaped compilations of one fit at a tolerance below the suite's rounding
    (a vmapped batch against separate fits, a padded capacity against the exact one): the
    suite compiles at LLVM's level 0 with XLA's older elemental emitters
    (``golden_cases.SUITE_XLA_FLAGS``), under which such programs round differently
    (measured: 4e-8 relative in float64 after L-BFGS), so the test runs in a subprocess
    compiled at XLA's defaults (:data:`XLA_DEFAULTS`), as users' programs are, and asserts it
    passed there (False: nothing more to do here). A test that is not ``slow`` runs here.

    Where the optimiser stops short of its optimum no flags make two such compilations
    agree: a batched backfit member was 1.7e-5 from its separate fit under the suite's flags
    and 6e-7 at the defaults after 20 L-BFGS steps, < 1e-9 under both after 200
    (``tests/test_batch_shapes.py`` compares at 200 steps in this process)."""
    import os
    import pathlib
    import subprocess
    import sys

    flags = os.environ.get("XLA_FLAGS", "").split()
    if request.node.get_closest_marker("slow") is None or all(f in flags for f in XLA_DEFAULTS):
        return True
    named = tuple(f.split("=")[0] for f in XLA_DEFAULTS)
    kept = [f for f in flags if not f.startswith(named)]
    env = dict(os.environ, XLA_FLAGS=" ".join(kept + list(XLA_DEFAULTS)))
    root = pathlib.Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
                          "-m", "slow", request.node.nodeid], cwd=root, env=env,
                         capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    return False


@contextlib.contextmanager
def jax_events(suffix: str):
    """The ``fun_name`` of every ``jax.monitoring`` duration event whose name ends with
    ``suffix`` (``"backend_compile_duration"``, ``"jaxpr_trace_duration"``) in the block,
    all threads, as a list filled while the block runs."""
    names = []

    def listen(event, duration, **kw):
        if event.endswith(suffix):
            names.append(kw.get("fun_name"))

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        yield names
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)


def additive_term_spreads(fit, xs) -> np.ndarray:
    """The standard deviation over the rows ``xs`` of each covariate's main shape in the
    additive fit ``fit`` (:class:`jaxtree._fit.additive.Additive` keeping every covariate's
    term, in covariate order): how much each term moves the prediction or the logit."""
    from jaxtree._fit import additive as A

    p, n1 = xs.shape[1], fit.spec.n1
    main = np.asarray(fit.terms.main, np.float64)
    X = A.design(xs, fit.spec, [(j, True) for j in range(p)])
    return np.array([np.std(X[:, 1 + j * (n1 - 1):1 + (j + 1) * (n1 - 1)] @ main[j, 1:])
                     for j in range(p)])


def assert_lines_keep_largest(fit, xs, y, kept: list) -> None:
    """``fit`` (:func:`jaxtree._fit.additive.fit` or ``fit_logistic``) with ``terms="lines"``
    and ``max_terms=len(kept)`` keeps the lines of the covariates ``kept`` (those of largest
    variance), and its fit is the lines fit of those covariates alone: refitted, its
    penalty chosen again (the same values and ``lam``)."""
    got = fit(xs, y, None, max_terms=len(kept), terms="lines", dtype=np.float64)
    assert sorted(np.asarray(got.terms.order).tolist()) == kept
    alone = fit(xs[:, kept], y, None, terms="lines", dtype=np.float64)
    np.testing.assert_allclose(got.values, alone.values, rtol=1e-9, atol=1e-9)
    assert got.lam == alone.lam
