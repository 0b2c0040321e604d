"""The public API: explicit exports, each documented; no scikit-learn import in the core."""

import inspect
import subprocess
import sys

import pytest

import jaxtree


def test_every_public_name_has_a_docstring():
    missing = [n for n in jaxtree.__all__ if not inspect.getdoc(getattr(jaxtree, n))]
    assert not missing, missing


def test_public_functions_of_core_modules_are_documented():
    missing = []
    for mod in (jaxtree.program, jaxtree.scoring, jaxtree.search, jaxtree.refine, jaxtree.basis,
                jaxtree.model, jaxtree.theory, jaxtree.reference, jaxtree.export):
        for name, obj in vars(mod).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != mod.__name__:
                continue
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and not inspect.getdoc(obj):
                missing.append(f"{mod.__name__}.{name}")
    assert not missing, missing


@pytest.mark.slow  # ~1.5 s (a subprocess); its oracle runs by default in
# test_sklearn.py::test_core_does_not_import_sklearn (the same check, jaxtree.export too)
def test_core_does_not_import_sklearn():
    code = "import sys, jaxtree; jaxtree.TreeRegressor; print('sklearn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_public_module_declares_its_api():
    for mod in (jaxtree.batch, jaxtree.datasets, jaxtree.estimator, jaxtree.model, jaxtree.moves,
                jaxtree.program, jaxtree.refine, jaxtree.scoring, jaxtree.search, jaxtree.sharding,
                jaxtree.stream, jaxtree.debug):
        assert isinstance(mod.__all__, list) and mod.__all__, mod.__name__
        missing = [n for n in mod.__all__ if not hasattr(mod, n)]
        assert not missing, (mod.__name__, missing)
        undocumented = [n for n in mod.__all__ if (inspect.isfunction(getattr(mod, n))
                        or inspect.isclass(getattr(mod, n))) and not inspect.getdoc(getattr(mod, n))]
        assert not undocumented, (mod.__name__, undocumented)
