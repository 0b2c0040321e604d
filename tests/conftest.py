"""Shared fixtures. The suite runs with x64 enabled so float64 references are exact;
float32 paths are exercised by passing float32 arrays (the library follows input dtypes)."""

import os

import jax
import numpy as np
import pytest

import golden_cases  # tests/ is on the path (pytest's rootdir conftest)

# The suite's settings (golden_cases.configure): x64 on, jaxtree's compilation cache off, and
# three XLA flags that make compiling cheaper.
#
# Most of the suite's time is XLA compiling small programs once each (hundreds of them, on
# CI's two cores). Three flags cut it; they change rounding, not what a fit chooses:
# * --xla_backend_optimization_level=0 (LLVM's optimisation level 0): about a fifth faster
#   (measured on tests/test_stream_moves.py: 48 -> 39 s);
# * --xla_cpu_use_fusion_emitters=false (XLA's older elemental emitters for fusions instead
#   of its MLIR fusion emitters): tests/test_stream_moves.py and tests/test_columns.py
#   together 68.8 -> 37.4 s, XLA's compile time in them 46.0 -> 18.5 s (152 programs);
# * --xla_cpu_parallel_codegen_split_count=1 (one LLVM module per program instead of parts
#   compiled on a thread pool): the suite's two workers already keep both cores busy, so the
#   split's parallelism buys nothing there and its overhead stays. Two test processes side by
#   side on two cores, with and without it, four pairs on two sets of files: 6-11% less CPU
#   time each, and the whole suite twice side by side 1,701 -> 1,488 s of CPU time (forty-ninth
#   session, BENCHMARKS.md "The suite's XLA flags: one codegen part").
#   A user's fit keeps the split: a lone first fit compiles 0.1-0.6 s slower without it.
# Every comparison in the suite is between paths compiled under the same flags or against
# float64 references with tolerances, so the flags change no assertion of the default suite.
# They change the last bits of some float64 results (rounding order in the generated code):
# the golden file pins the suite's arithmetic, so it was remade at an unchanged commit when
# the second flag came and again with the third (tests/data/golden_predictions.npz), and the
# one test that compared two programs bitwise compares to 1e-14 since the third
# (tests/test_laws.py). One slow check is exact to the
# default flags: scikit-learn's sample-weight check on the classifier sees a 3e-7 relative
# difference under them, so tests/test_classifier.py::test_sklearn_check_estimator runs in a
# process without them, and a slow check that compares differently shaped compilations
# (a padded capacity) below that rounding runs at XLA's defaults (_shared.at_xla_defaults).
# Benchmarks and users keep XLA's defaults. The flags must be set before the backend starts
# (they are read then, not at import); a user's own XLA_FLAGS are kept and win.
#
# The suite never reads or writes the user's persistent compilation cache: a shared cache
# would couple test runs to each other (and to entries other processes left behind). The
# cache's own tests run in subprocesses with private directories (test_compilation_cache.py).
golden_cases.configure()


def pytest_xdist_auto_num_workers(config):
    """``-n auto`` (pyproject's addopts): one worker per core, at most 4. Most of the suite's
    time is compiling (one core per compilation), so two workers on CI's two cores nearly
    halve it; more than 4 workers would each hold a JAX runtime for little gain. ``-n 0``
    runs in one process (e.g. to debug)."""
    return max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else (os.cpu_count() or 1)))


@pytest.fixture(autouse=True)
def _classifier_additive_choice(request, monkeypatch):
    """The binary classifier's cross-validated additive choice
    (``jaxtree._fit.classify.ADDITIVE_CV``, on for users since the seventy-first session) is
    off in the suite's processes except in tests marked ``additive_choice``: its own tests
    (tests/test_additive_choice.py) and the documentation's snippets (tests/test_readme.py)
    run with it as a user's fit does. It has no gate: every two-class fit of 100-1,999 rows
    and at most ``max_terms`` covariates would pay fifteen fold fits and could keep an
    additive fit in place of the tree, so a test of another stage (the Newton round, the
    kept basis values, a batch member against its separate fit) would pay for it and might
    no longer see the stage it checks. Processes a test starts (tests/test_compilation_cache.py's
    children, ``jaxtree warmup`` in tests/test_columns.py) keep the library's default."""
    if request.node.get_closest_marker("additive_choice") is None:
        from jaxtree._fit import classify

        monkeypatch.setattr(classify, "ADDITIVE_CV", False)


def _memory_maps() -> int:
    try:
        with open("/proc/self/maps") as f:
            return sum(1 for _ in f)
    except OSError:  # not Linux
        return 0


@pytest.fixture(autouse=True, scope="module")
def _bounded_jax_caches():
    """Drops JAX's compiled programs after a test module once the process holds many memory
    mappings. Every compiled CPU program keeps about three; a process that keeps all the
    suite's programs approaches Linux's default ``vm.max_map_count`` (65,530), and XLA aborts
    the process when a mapping fails (seen twice in full runs). Below the threshold, modules
    keep sharing their compilations."""
    yield
    if _memory_maps() > 20_000:
        jax.clear_caches()


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def paper_g(x):
    """The paper's synthetic truth (DESIGN.md section 7)."""
    return (0.3 * np.sin(3 * np.pi * x[:, 0]) * np.cos(2 * np.pi * x[:, 1])
            + 0.4 * x[:, 2] ** 2 - 0.3 * x[:, 3])


@pytest.fixture
def x64():
    """x64 on for the test (the suite's default, restored if a test had switched it off)."""
    old = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", old)
