"""The gallery's example scripts (``docs/examples/plot_*.py``, sphinx-gallery's format).

The slow test runs each script in its own process, as sphinx-gallery would in a docs build
(non-interactive matplotlib backend, a scratch working directory), and checks that it exits
cleanly and leaves at least one matplotlib figure for the gallery to capture. The fast test
checks only the format the gallery needs: a module docstring whose first line is an RST title
underlined with ``=``, and code cells separated by ``# %%``.
"""

import ast
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"
SCRIPTS = sorted(EXAMPLES.glob("plot_*.py"))

# Runs the script as __main__ and reports the figures still open at its end: sphinx-gallery
# collects exactly those (plt.show() under Agg closes nothing).
WRAPPER = """
import runpy, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
runpy.run_path(sys.argv[1], run_name="__main__")
print("GALLERY_FIGURES", len(plt.get_fignums()))
"""


def test_gallery_has_scripts_and_header():
    assert len(SCRIPTS) >= 9, [p.name for p in SCRIPTS]
    header = (EXAMPLES / "README.rst").read_text(encoding="utf-8").splitlines()
    assert header[0].strip() and set(header[1].strip()) == {"="}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_script_format(script):
    source = script.read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(source), clean=False)
    assert doc, f"{script.name}: no module docstring"
    lines = doc.strip("\n").splitlines()
    assert len(lines) >= 3 and lines[0].strip(), f"{script.name}: no title line"
    assert set(lines[1].strip()) == {"="} and len(lines[1].strip()) >= len(lines[0].strip()), \
        f"{script.name}: the title must be underlined with '=' at least as long as it"
    assert "\n# %%\n" in source, f"{script.name}: no '# %%' cell separators"


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_script_runs_and_draws(script, tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg")
    res = subprocess.run([sys.executable, "-c", WRAPPER, str(script)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, f"{script.name} failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    counts = [line.split()[1] for line in res.stdout.splitlines()
              if line.startswith("GALLERY_FIGURES ")]
    assert counts and int(counts[-1]) >= 1, f"{script.name} made no figure:\n{res.stdout[-2000:]}"
    assert not list(tmp_path.iterdir()), f"{script.name} left files in its working directory"
