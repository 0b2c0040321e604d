"""The public API: explicit exports, each documented; no scikit-learn import in the core."""

import inspect
import subprocess
import sys

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


def test_core_does_not_import_sklearn():
    code = "import sys, jaxtree; jaxtree.TreeRegressor; print('sklearn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
