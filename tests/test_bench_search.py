"""Tests of ``benchmarks/bench_search.py`` (a subprocess smoke run) and of the symbolic-regression
problem set ``benchmarks/sr_problems.py`` (formulas against hand-written numpy)."""

import importlib.util
import json
import math
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "bench_search.py"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


sr = _load("sr_problems")


def _run(*args, timeout=300):
    return subprocess.run([sys.executable, str(BENCH), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def _strict_json(path):
    def no_constant(name):  # NaN / Infinity are not JSON
        raise ValueError(f"{path.name} holds {name}")
    return json.loads(path.read_text(), parse_constant=no_constant)


def _numbers(obj):
    if isinstance(obj, dict):
        for v in obj.values():
            yield from _numbers(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _numbers(v)
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield obj


# ------------------------------------------------------------------------- the script


@pytest.mark.slow  # ~30 s: the benchmark script's whole quick run (a subprocess that fits
# every problem); its pieces (command line, configs, problems, helpers) are checked below
def test_quick_sr_exp1_end_to_end(tmp_path):
    res = _run("--quick", "sr", "exp1", "--config", "default={}",
               "--config", 'bad={"no_such_option": 1}', "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr[-3000:]
    assert "## sr" in res.stdout and "## exp1" in res.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "search_exp1.json", "search_exp1.md", "search_sr.json", "search_sr.md"]

    srj = _strict_json(tmp_path / "search_sr.json")
    assert all(math.isfinite(v) for v in _numbers(srj))
    assert srj["configs"] == {"default": {}, "bad": {"no_such_option": 1}}
    # quick defaults sit under the config; the unknown key is passed through, not dropped
    assert srj["estimator_kwargs"]["bad"]["no_such_option"] == 1
    assert {"jax", "commit", "device"} <= set(srj["environment"])
    rows = {r["problem"]: r for r in srj["rows"]}
    assert list(rows) == ["Korns-1", "Korns-4", "Korns-12"]
    for r in rows.values():
        good, bad, hgb = r["models"]["default"], r["models"]["bad"], r["models"]["HGB"]
        assert "error" not in good and good["fit_s"] > 0 and good["n_ops"] <= 2
        assert isinstance(good["r2"], float) and isinstance(hgb["r2"], float)
        assert "no_such_option" in bad["error"]  # recorded per problem, run went on
    # Korns-1 is linear in x4 (x is in the basis): a misaligned prediction, a wrong test
    # target or a wrong R^2 formula would not give this.
    assert rows["Korns-1"]["models"]["default"]["r2"] > 0.99
    summary = srj["summary"]
    assert summary["bad"]["errors"] == 3 and summary["default"]["errors"] == 0
    assert summary["default"]["solved"] == sum(r["models"]["default"]["r2"] > 0.999
                                               for r in rows.values())

    e1 = _strict_json(tmp_path / "search_exp1.json")
    assert all(math.isfinite(v) for v in _numbers(e1))
    trials = [t for t in e1["trials"] if t["config"] == "default"]
    assert len(trials) == 2 and [t["seed"] for t in trials] == [1000, 1001]
    for t in trials:
        assert 0 < t["rmse_g"] < 1 and 0 < t["test_rmse"] < 1
        assert t["recovered"] == (t["rmse_g"] < 0.05)
    (s_good,) = [s for s in e1["summary"] if s["config"] == "default"]
    assert s_good["recovered"] == sum(t["recovered"] for t in trials)
    assert math.isclose(s_good["rmse_g_mean"], np.mean([t["rmse_g"] for t in trials]))
    (s_bad,) = [s for s in e1["summary"] if s["config"] == "bad"]
    assert s_bad["errors"] == 2 and "no_such_option" in s_bad["error"]
    assert "| n | config | recovered |" in (tmp_path / "search_exp1.md").read_text()


@pytest.fixture(scope="module")
def bench():
    return _load("bench_search")  # imports jax and jaxtree once for the in-process tests


@pytest.mark.parametrize("args, words", [
    (["sr", "--config", "x=notjson"], ["JSON", "x="]),
    (["sr", "--config", "x=[1, 2]"], ["JSON object", "list"]),
    (["sr", "--config", "x={}", "--config", "x={}"], ["'x' given twice"]),
    (["planets"], ["planets", "exp1", "paper_g", "airline", "weather", "sr"]),
    (["sr", "--problems", "Feynman-1"], ["Feynman-1", "Nguyen-1"]),
])
def test_bad_command_lines_are_usage_errors(bench, capsys, args, words):
    with pytest.raises(SystemExit) as exc:
        bench.parse_args(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    for w in words:
        assert w in err


def test_configs_pass_unknown_keys_through(bench):
    args = bench.parse_args(["--config", 'auto={"k": "auto", "search": "beam"}', "sr"])
    assert args.configs == {"auto": {"k": "auto", "search": "beam"}}
    assert bench.resolve(args.configs["auto"], quick=False) == {"k": "auto", "search": "beam"}
    # quick defaults go under a config, never over it
    assert bench.resolve({"k": 7}, quick=True)["k"] == 7
    assert bench.parse_args([]).configs == {"default": {}}
    assert bench.parse_args([]).suites == list(bench.SUITES)


def test_r2_and_json_helpers(bench):
    from sklearn.metrics import r2_score

    rng = np.random.default_rng(0)
    y, pred = rng.normal(size=50), rng.normal(size=50)
    assert math.isclose(bench.r2(bench.rmse(pred, y), y), r2_score(y, pred), rel_tol=1e-12)
    assert bench.jsonable({"a": np.float32(1.5), "b": [np.nan, np.int64(2)], "c": np.bool_(1)}) \
        == {"a": 1.5, "b": [None, 2], "c": True}


# ------------------------------------------------------------------------ the problems


def test_problem_set_is_public_suites_not_feynman():
    names = list(sr.PROBLEMS)
    assert len(names) >= 24 and len(set(names)) == len(names)
    suites = {p.suite for p in sr.PROBLEMS.values()}
    assert suites == {"Nguyen", "Keijzer", "Vladislavleva", "Korns"}
    for p in sr.PROBLEMS.values():
        assert p.citation and len(p.domain) == p.n_vars
        assert all(lo < hi for lo, hi in p.domain)
        used = {j for j in range(1, 6) if f"x{j}" in p.formula}
        assert used <= set(range(1, p.n_vars + 1)), p.name  # no variable beyond n_vars


@pytest.mark.parametrize("name", list(sr.PROBLEMS))
def test_every_formula_is_finite_on_its_domain(name):
    prob = sr.PROBLEMS[name]
    X, y = sr.make(name, 100, seed=1)
    assert X.shape == (100, prob.n_vars) and y.shape == (100,)
    lo, hi = np.asarray(prob.domain).T
    assert ((X >= lo) & (X <= hi)).all()
    assert np.isfinite(y).all()
    assert np.std(y) > 0  # not collapsed to a constant by a typo
    np.testing.assert_array_equal(sr.make(name, 100, seed=1)[0], X)  # seeded


def _hand_written():
    def keijzer4(x):
        return x ** 3 * np.exp(-x) * np.cos(x) * np.sin(x) * (np.sin(x) ** 2 * np.cos(x) - 1)

    return {
        "Keijzer-4": lambda X: keijzer4(X[:, 0]),
        # Keijzer's 30 x z / ((x - 10) y^2): x = x1, y = x2 (in [1, 2]), z = x3
        "Keijzer-5": lambda X: 30 * X[:, 0] * X[:, 2] / ((X[:, 0] - 10) * X[:, 1] ** 2),
        "Vladislavleva-4": lambda X: 10 / (5 + np.sum((X - 3) ** 2, axis=1)),
        "Vladislavleva-7": lambda X: ((X[:, 0] - 3) * (X[:, 1] - 3)
                                      + 2 * np.sin((X[:, 0] - 4) * (X[:, 1] - 4))),
        "Korns-8": lambda X: 6.87 + 11 * np.sqrt(7.23 * X[:, 0] * X[:, 3] * X[:, 4]),
    }


@pytest.mark.parametrize("name", list(_hand_written()))
def test_formula_matches_hand_written_numpy(name):
    X, y = sr.make(name, 200, seed=3)
    np.testing.assert_allclose(y, _hand_written()[name](X), rtol=1e-12, atol=1e-12)
    assert y.std() > 0


def test_domains_follow_the_publications():
    dom = {n: p.domain for n, p in sr.PROBLEMS.items()}
    assert dom["Nguyen-7"] == ((0, 2),) and dom["Nguyen-8"] == ((0, 4),)
    assert dom["Keijzer-5"] == ((-1, 1), (1, 2), (-1, 1))
    assert dom["Vladislavleva-5"] == ((0.05, 2), (1, 2), (0.05, 2))
    assert dom["Korns-1"] == ((-50, 50),) * 5
    # log / sqrt arguments: kept real by a non-negative domain, and the deviation is noted
    for name, j in (("Korns-5", 4), ("Korns-6", 0)):
        assert dom[name][j] == (0, 50) and "U[-50, 50]" in sr.PROBLEMS[name].note


def test_train_test_are_disjoint_draws_of_2000():
    Xtr, ytr, Xte, yte = sr.train_test("Nguyen-9")
    assert Xtr.shape == (2000, 2) and Xte.shape == (2000, 2)
    assert not np.isin(Xte[:, 0], Xtr[:, 0]).any()
    np.testing.assert_allclose(ytr, np.sin(Xtr[:, 0]) + np.sin(Xtr[:, 1] ** 2))


def test_evaluate_checks_shape_and_name():
    with pytest.raises(ValueError, match=r"Keijzer-5 needs X of shape \(n, 3\)"):
        sr.evaluate("Keijzer-5", np.zeros((4, 2)))
    with pytest.raises(ValueError, match="unknown problem 'Feynman-1'"):
        sr.make("Feynman-1", 10)


def test_problem_list_prints(capsys):
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "sr_problems.py")],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0
    for name in sr.PROBLEMS:
        assert f"| {name} |" in res.stdout
