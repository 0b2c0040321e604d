"""The ``jaxtree`` command line, run in-process (``jaxtree.cli.main``) with capsys."""

import argparse
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import jaxtree
from jaxtree import cli
from jaxtree.datasets import paper_synthetic

N, P, K = 120, 4, 2
FIT_ARGS = ["--k", str(K), "--refine", "coordinate", "--chunk-size", "64"]


def _write_csv(path, X, y, extra=None):
    names = [f"f{j}" for j in range(X.shape[1])]
    cols = names + ["target"] + ([extra[0]] if extra else [])
    with open(path, "w") as f:
        f.write(",".join(cols) + "\n")
        for i, (row, t) in enumerate(zip(X, y)):
            vals = [repr(float(v)) for v in row] + [repr(float(t))] + ([extra[1][i]] if extra else [])
            f.write(",".join(vals) + "\n")
    return names


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A CSV and the model ``jaxtree fit`` wrote for it (fitted once per module)."""
    d = tmp_path_factory.mktemp("cli")
    X, y = paper_synthetic(N, p=P, seed=3)
    data = d / "train.csv"
    _write_csv(data, X, y)
    model = d / "model.json"
    rc = cli.main(["fit", str(data), "--target", "target", "--out", str(model), *FIT_ARGS])
    assert rc == 0
    return X, y, data, model


def test_help_subprocess():
    out = subprocess.run([sys.executable, "-m", "jaxtree", "--help"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0
    for cmd in ("demo", "fit", "predict", "show", "warmup"):
        assert cmd in out.stdout


def test_the_command_asks_jax_not_to_reserve_the_gpu_in_time():
    """The ``jaxtree`` command (cli.run, python -m jaxtree) sets
    XLA_PYTHON_CLIENT_PREALLOCATE=false unless the user set it; it takes effect only if no
    JAX backend has started when it is set, i.e. importing jaxtree starts none."""
    code = ("import os, sys; os.environ.pop('XLA_PYTHON_CLIENT_PREALLOCATE', None)\n"
            "import jaxtree.cli as c\n"
            "from jax._src import xla_bridge as xb\n"
            "assert not xb._backends, 'importing jaxtree started a JAX backend'\n"
            "try:\n    c.run(['--version'])\nexcept SystemExit:\n    pass\n"
            "print(os.environ['XLA_PYTHON_CLIENT_PREALLOCATE'])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "false"
    mine = subprocess.run([sys.executable, "-c", code.replace(
        "os.environ.pop('XLA_PYTHON_CLIENT_PREALLOCATE', None)",
        "os.environ['XLA_PYTHON_CLIENT_PREALLOCATE'] = 'true'")],
        capture_output=True, text=True, timeout=120)
    assert mine.stdout.strip().splitlines()[-1] == "true"  # the user's value wins


def test_main_leaves_the_environment_alone(monkeypatch):
    """cli.main (a Python program's call) does not change the caller's environment."""
    monkeypatch.delenv("XLA_PYTHON_CLIENT_PREALLOCATE", raising=False)
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert "XLA_PYTHON_CLIENT_PREALLOCATE" not in os.environ


@pytest.mark.parametrize("cmd", ["fit", "predict", "show", "demo", "warmup", "cache"])
def test_help_of_each_command(cmd, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main([cmd, "--help"])
    assert e.value.code == 0
    assert "usage: jaxtree " + cmd in capsys.readouterr().out


def test_fit_prints_formula_r2_progress_and_matches_estimator(tmp_path, capsys):
    X, y = paper_synthetic(N, p=P, seed=3)
    data = tmp_path / "d.csv"
    names = _write_csv(data, X, y)
    model = tmp_path / "m.json"
    assert cli.main(["fit", str(data), "--target", "target", "--out", str(model), *FIT_ARGS]) == 0
    out, err = capsys.readouterr()
    est = jaxtree.TreeRegressor(k=K, refine="coordinate", chunk_size=64).fit(X, y)
    assert est.search_ == "backfit" and est.validation_fraction_ == 0.2  # the default on 120 rows
    assert "training R²" in out and f"{est.score(X, y):.4f}" in out
    assert f"{est.k_} operations of at most {K})" in out  # the size chosen on held-out rows
    assert "f0" in out.splitlines()[0] or "f2" in out.splitlines()[0]  # formula with column names
    assert "mse" in err and "leaf" in err and "at slot" in err  # the progress bar
    loaded = jaxtree.load(model)
    assert loaded.model_.feature_names == tuple(names)
    np.testing.assert_allclose(loaded.predict(X), est.predict(X), rtol=1e-9, atol=1e-12)
    # One entry per iteration of the refit (a pair move inserts two operations at once).
    np.testing.assert_allclose(json.loads(model.read_text())["extra"]["history"], est.history_,
                               rtol=1e-9)


def test_predict_round_trip_stdout_and_file(fitted, tmp_path, capsys):
    X, y, data, model = fitted
    capsys.readouterr()
    assert cli.main(["predict", str(model), str(data)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "prediction"
    pred = np.array([float(v) for v in lines[1:]])
    est = jaxtree.TreeRegressor(k=K, refine="coordinate", chunk_size=64).fit(X, y)
    np.testing.assert_allclose(pred, est.predict(X), rtol=1e-9, atol=1e-12)
    out = tmp_path / "p.csv"
    assert cli.main(["predict", str(model), str(data), "--out", str(out)]) == 0
    np.testing.assert_allclose(np.loadtxt(out, skiprows=1), pred, rtol=0, atol=0)


def test_predict_selects_feature_columns_by_name(fitted, tmp_path, capsys):
    X, y, data, model = fitted
    # columns reordered, target dropped, an extra text column: only the names matter
    p = tmp_path / "shuffled.csv"
    with open(p, "w") as f:
        f.write("note,f3,f1,f0,f2\n")
        for row in X:
            f.write("x," + ",".join(repr(float(row[j])) for j in (3, 1, 0, 2)) + "\n")
    capsys.readouterr()
    assert cli.main(["predict", str(model), str(p)]) == 0
    pred = np.array([float(v) for v in capsys.readouterr().out.splitlines()[1:]])
    np.testing.assert_allclose(pred, jaxtree.load(model).predict(X), rtol=1e-12)


def test_show(fitted, capsys):
    _, _, _, model = fitted
    capsys.readouterr()
    assert cli.main(["show", str(model)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("target = ")  # the target by its column's name (--target target)
    assert f"k (operations): {K}" in out and f"leaves: {K + 1}" in out
    assert f"p (features): {P}" in out and "q (basis functions): 40" in out
    assert "features: f0, f1, f2, f3" in out
    hist = jaxtree.load(model).history_
    assert len(hist) >= 2 and "training history" in out
    rows = out.split("training history", 1)[1].splitlines()[1:]
    assert [r.split()[0] for r in rows] == [str(i) for i in range(len(hist))]


def test_fit_with_features_subset(fitted, tmp_path, capsys):
    _, _, data, _ = fitted
    model = tmp_path / "m.json"
    # three of the four covariates: the column bucket of four (scoring.columns_for) and the
    # fixture's settings, so the fit reuses the fixture's compiled step
    assert cli.main(["fit", str(data), "--target", "target", "--features", "f0,f2,f3",
                     "--out", str(model), "--quiet", *FIT_ARGS]) == 0
    assert jaxtree.load(model).model_.feature_names == ("f0", "f2", "f3")
    assert capsys.readouterr().err == ""  # --quiet: no progress bar
    # a row with an empty target is dropped, and said so even with --quiet (not progress)
    holed = tmp_path / "holed.csv"
    lines = data.read_text().splitlines()
    holed.write_text("\n".join(lines + [lines[1].rsplit(",", 1)[0] + ","]) + "\n")
    assert cli.main(["fit", str(holed), "--target", "target", "--features", "f0,f2,f3",
                     "--quiet", *FIT_ARGS]) == 0
    assert capsys.readouterr().err == "jaxtree: dropped 1 row(s) whose target 'target' is missing\n"


def test_csv_reader_without_pandas_matches_pandas(tmp_path, monkeypatch):
    X, y = paper_synthetic(10, p=4, seed=0)
    p = tmp_path / "d.csv"
    _write_csv(p, X, y, extra=("tag", [f"t{i}" for i in range(10)]))
    names, cols = cli._read_table(str(p))
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas -> ImportError
    names2, cols2 = cli._read_table(str(p))
    assert names == names2 == ["f0", "f1", "f2", "f3", "target", "tag"]
    for a, b in zip(cols[:5], cols2[:5]):
        np.testing.assert_array_equal(a, b)
    assert cols2[5].dtype == object and cols[5].dtype == object


def _bad_inputs(tmp_path, data):
    text = tmp_path / "text.csv"
    text.write_text("a,city,target\n1,paris,2\n2,rome,3\n3,oslo,1\n")
    nan = tmp_path / "nan.csv"
    nan.write_text("a,b,target\n1,,2\n2,3,3\n3,4,1\n")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{ not json")
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps({"format": "something-else"}))
    lacking = tmp_path / "lacking.csv"
    lacking.write_text("f0,f1\n0.1,0.2\n")
    return {
        "missing data": (["fit", str(tmp_path / "nope.csv"), "--target", "y"], "no such file"),
        "missing target": (["fit", str(data), "--target", "nope"], "available columns: f0, f1, f2, f3, target"),
        "non-numeric": (["fit", str(text), "--target", "target", "--task", "regress",
                         "--categorical", "none"], "'city'"),
        "missing values": (["fit", str(nan), "--target", "target", "--task", "regress",
                            "--missing", "error"],
                           "column 1 ('b')"),
        "empty csv": (["fit", str(empty), "--target", "target"], "empty"),
        "unknown feature": (["fit", str(data), "--target", "target", "--features", "f0,zz"], "'zz'"),
        "missing model": (["predict", str(tmp_path / "nope.json"), str(data)], "no such model file"),
        "corrupt model": (["predict", str(garbage), str(data)], "not a valid jaxtree model file"),
        "foreign model": (["show", str(foreign)], "not a valid jaxtree model file"),
        "csv as model": (["show", str(data)], "not a valid jaxtree model file"),
        "features missing at predict": (["predict", "MODEL", str(lacking)],
                                        "'f2', 'f3' not found (the formula uses them); "
                                        "available columns: f0, f1."),
    }


@pytest.mark.parametrize("case", [
    "missing data", "missing target", "non-numeric", "missing values", "empty csv", "unknown feature",
    "missing model", "corrupt model", "foreign model", "csv as model", "features missing at predict"])
def test_bad_input_one_line_error(case, fitted, tmp_path, capsys):
    _, _, data, model = fitted
    argv, needle = _bad_inputs(tmp_path, data)[case]
    argv = [str(model) if a == "MODEL" else a for a in argv]
    capsys.readouterr()
    rc = cli.main(argv)
    err = capsys.readouterr().err
    assert rc != 0
    assert "Traceback" not in err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    assert lines[0].startswith("jaxtree: error: ")
    assert needle in lines[0]


def test_parquet_without_pyarrow_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    p = tmp_path / "d.parquet"
    p.write_bytes(b"PAR1")
    assert cli.main(["fit", str(p), "--target", "y"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs pyarrow" in err


def test_warmup_passes_its_sizes_and_refuses_bad_ones(monkeypatch, capsys):
    from jaxtree import _warmup

    seen = {}
    monkeypatch.setattr(_warmup, "warmup", lambda sizes, k, classifier, classes: seen.update(
        sizes=sizes, k=k, classifier=classifier, classes=classes))
    assert cli.main(["warmup", "--sizes", "1000x8,5000X12", "--k", "6"]) == 0
    assert seen == {"sizes": [(1000, 8), (5000, 12)], "k": 6, "classifier": False,
                    "classes": 2}
    assert "done" in capsys.readouterr().out
    assert cli.main(["warmup", "--classifier", "--classes", "3"]) == 0
    assert seen == {"sizes": None, "k": 10, "classifier": True, "classes": 3}
    seen.clear()
    assert cli.main(["warmup", "--classes", "3"]) == 2 and not seen
    assert "add --classifier" in capsys.readouterr().err
    monkeypatch.undo()  # jaxtree.warmup's own check, before anything is compiled
    assert cli.main(["warmup", "--classifier", "--classes", "1"]) == 2
    assert "classes must be an integer >= 2" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        cli.main(["warmup", "--sizes", "1000by8"])
    assert e.value.code == 2 and "ROWSxCOVARIATES" in capsys.readouterr().err


def test_cache_shows_and_clears_only_jaxtrees_own_files(tmp_path, monkeypatch, capsys):
    """``jaxtree cache`` counts the files of the two parts of jaxtree's cache directory;
    ``--clear`` deletes them (subfolders too) and keeps the directories, and nothing beside
    them; a part that is a symbolic link is refused with a one-line error and its target
    kept. Planted bugs caught: a clear that deletes nothing, one that empties the whole
    ``jaxtree`` folder or follows a link out of it."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    root = tmp_path / "jaxtree"
    (root / "jax" / "sub").mkdir(parents=True)
    (root / "executables").mkdir()
    (root / "jax" / "a").write_bytes(b"x" * 1000)
    (root / "jax" / "sub" / "b").write_bytes(b"x" * 24)
    (root / "executables" / "k.exe").write_bytes(b"x" * 2**20)
    (root / "notes.txt").write_text("not a cache part")
    assert cli.main(["cache"]) == 0
    out = capsys.readouterr().out
    assert f"{root / 'jax'}: 2 file(s), 0.0 MiB" in out
    assert f"{root / 'executables'}: 1 file(s), 1.0 MiB" in out and "deleted" not in out
    assert cli.main(["cache", "--clear"]) == 0
    assert "1 file(s), 1.0 MiB deleted" in capsys.readouterr().out
    assert sorted(p.name for p in root.rglob("*")) == ["executables", "jax", "notes.txt"]
    assert cli.main(["cache"]) == 0 and "0 file(s)" in capsys.readouterr().out
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep").write_text("mine")
    (root / "executables").rmdir()
    (root / "executables").symlink_to(elsewhere)
    assert cli.main(["cache", "--clear"]) == 2
    assert "not a directory jaxtree made" in capsys.readouterr().err
    assert (elsewhere / "keep").read_text() == "mine"


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.startswith(f"jaxtree {jaxtree.__version__} (jax ")


@pytest.mark.slow  # suite time (~25 s); the estimator's shapes and search options have their own tests
def test_fit_with_shapes_and_a_search_round_trips(tmp_path, capsys):
    # Below 10,000 rows --shapes S is an upper bound chosen on held-out rows: an additive
    # target whose two one-covariate terms those rows support.
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(N, P))
    y = (np.sin(2 * np.pi * X[:, 0]) + 4 * (X[:, 1] - 0.5) ** 2 + 0.5 * X[:, 2]
         + 0.01 * rng.normal(size=N))
    data = tmp_path / "additive.csv"
    _write_csv(data, X, y)
    model = tmp_path / "shapes.json"
    assert cli.main(["fit", str(data), "--target", "target", "--out", str(model), "--k", "1",
                     "--shapes", "2", "--search", "greedy", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "f(f0)" in out and "f(f1)" in out  # shape terms printed by name
    assert "operations of at most 1)" in out
    est = jaxtree.load(model)
    assert int(est.model_.shapes.n_terms) == 2 and est.search == "greedy"
    assert cli.main(["predict", str(model), str(data), "--out", str(tmp_path / "p.csv")]) == 0
    pred = np.loadtxt(tmp_path / "p.csv", delimiter=",", skiprows=1)
    np.testing.assert_allclose(pred.reshape(-1), est.predict(X), rtol=1e-5, atol=1e-5)


def test_show_lists_terms_and_plots_them(fitted, tmp_path, capsys):
    _, _, data, model = fitted
    png = tmp_path / "terms.png"
    assert cli.main(["show", str(model), "--data", str(data), "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "share of the explained variance" in out and "%" in out
    assert png.stat().st_size > 1000
    assert cli.main(["show", str(model), "--plot", str(png)]) == 2  # --plot needs --data
    assert "--data" in capsys.readouterr().err


def test_show_a_model_with_a_custom_basis_function(tmp_path, capsys):
    """The file holds the function's name only: show prints the raw tree with it named and
    says how to load it; --data (which evaluates the model) is a one-line error."""
    from _shared import custom_basis_model

    est, path, _, X = custom_basis_model(tmp_path)
    capsys.readouterr()
    assert cli.main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("y = ") and "tanh(2x1)" in out
    assert out.splitlines()[0] == est.formula(scaled=True)
    assert "custom_functions=" in out and "leaves: 2" in out
    assert cli.main(["show", str(path), "--data", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("jaxtree: error:") and "custom basis function" in err


def test_show_prints_indicators_in_original_units(tmp_path, capsys):
    """A text column: show prints its level as an indicator, the number covariate in its units."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"c": rng.choice(["a", "b"], 80), "x": rng.uniform(10, 20, 80)})
    y = 2.0 * (df.c == "b") + 0.2 * df.x
    basis = jaxtree.make_basis(hats=0, sines=1, cosines=0, powers=1, truncated_cubics=0)
    est = jaxtree.TreeRegressor(k=1, basis=basis, engine="reference", refine="coordinate",
                                y_bound=0.25).fit(df, y)
    model = tmp_path / "m.json"
    est.save(model)
    capsys.readouterr()
    assert cli.main(["show", str(model)]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    # the width as fit says it: 2 columns, 3 covariates (c's two levels and x)
    assert "p (columns): 2, 3 covariates after encoding" in out
    # two levels: [c = a] and [c = b] are the same covariate up to sign
    assert ("2·[c = b]" in first or "- 2·[c = a]" in first) and "c=" not in first, first
    assert "0.2·x" in first
    assert first == est.formula() == jaxtree.load(model).formula()


@pytest.mark.parametrize("task, given, want", [("regress", None, 0.02), ("regress", "10", 10),
                                               ("classify", "0.05", 0.05)])
def test_min_support_and_max_terms_reach_the_estimator(task, given, want, tmp_path, monkeypatch):
    import jaxtree

    seen = {}

    class Stop(Exception):
        pass

    def fake(kind):
        def make(**kw):
            seen.update(kind=kind, **kw)
            raise Stop
        return make

    monkeypatch.setattr(jaxtree, "TreeRegressor", fake("regressor"))
    monkeypatch.setattr(jaxtree, "TreeClassifier", fake("classifier"))
    data = tmp_path / "d.csv"
    data.write_text("a,y\n" + "".join(f"{i},{i % 2}\n" for i in range(30)))
    argv = ["fit", str(data), "--target", "y", "--task", task, "--quiet"]
    assert cli.main(argv + ([] if given is None else ["--min-support", given])) != 0  # Stop
    assert seen["min_support"] == want and type(seen["min_support"]) is type(want)
    assert seen["kind"] == ("classifier" if task == "classify" else "regressor")
    assert seen["max_terms"] == 20  # --max-terms reaches it too
    assert cli.main(argv + ["--max-terms", "35"]) != 0 and seen["max_terms"] == 35
    assert seen["additive_cv"] == "auto"  # --additive-cv too
    assert cli.main(argv + ["--additive-cv", "0"]) != 0 and seen["additive_cv"] == 0
    assert cli._additive_cv_arg("3") == 3 and cli._additive_cv_arg("auto") == "auto"
    for bad in ("1", "-2", "five"):
        with pytest.raises(argparse.ArgumentTypeError, match="at least 2; got"):
            cli._additive_cv_arg(bad)
    assert seen["shape_knots"] == "auto"  # --shape-knots too
    assert cli.main(argv + ["--shape-knots", "64,16"]) != 0 and seen["shape_knots"] == (64, 16)
    assert cli._shape_knots_arg("auto") == "auto"
    for bad in ("64", "64,16,8", "a,b"):
        with pytest.raises(argparse.ArgumentTypeError, match="N1,N2"):
            cli._shape_knots_arg(bad)
    assert cli._min_support_arg("3") == 3 and cli._min_support_arg("0.5") == 0.5
    with pytest.raises(ValueError):
        cli._min_support_arg("2%")


def test_shapes_option_takes_auto_or_a_count():
    assert cli._shapes_arg("auto") == "auto" and cli._shapes_arg("3") == 3
    assert cli._shapes_arg("additive") == "additive"
    with pytest.raises(argparse.ArgumentTypeError, match="expected auto, additive or a number"):
        cli._shapes_arg("many")


def test_predict_shows_the_tables_warnings_as_the_commands_lines(fitted, tmp_path, capsys,
                                                                  monkeypatch):
    """``jaxtree predict`` of rows with a missing value in a column that had none in training
    says so on stderr (it silenced every UserWarning, this one too), as one line of the
    command, ``jaxtree: warning (MissingValueWarning): ...``, not Python's form naming the
    script's line; the feature-names warnings stay silent."""
    X, y, data, model = fitted
    monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # cli.run sets it otherwise
    rows = tmp_path / "new.csv"
    with open(rows, "w") as f:
        f.write(",".join(f"f{j}" for j in range(X.shape[1])) + "\n")
        f.write(",".join([""] + [repr(float(v)) for v in X[0, 1:]]) + "\n")
        f.write(",".join(repr(float(v)) for v in X[1]) + "\n")
    capsys.readouterr()
    assert cli.run(["predict", str(model), str(rows)]) == 0
    err = capsys.readouterr().err
    assert err.startswith("jaxtree: warning (MissingValueWarning): "), err
    assert len(err.strip().splitlines()) == 1 and "feature names" not in err, err


def test_training_score_silences_only_the_feature_names_warning():
    """The summary's training score is computed on the table as an array, so the estimator's
    feature-names warning is silenced there; any other warning of the score reaches the
    user (the summary silenced every UserWarning)."""
    import warnings

    class Est:
        encoded_feature_names_ = np.array(["a", "b"], dtype=object)

        def score(self, X, y):
            warnings.warn("X does not have valid feature names, but TreeRegressor was fitted "
                          "with feature names", UserWarning)
            warnings.warn("predictions clipped to the training range", UserWarning)
            return 0.5

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        cli._print_training_score(Est(), np.zeros((3, 2)), np.zeros(3), "R²", "tail")
    assert [str(w.message) for w in seen] == ["predictions clipped to the training range"]


def test_fit_refuses_a_numeric_target_made_text_by_a_stray_cell(tmp_path, capsys):
    """A target of numbers but for one ``?`` is refused by ``--task auto``, naming the cell
    (it was fitted as a classification of one class per value, "training accuracy: 1.0000");
    a text target of few classes still classifies."""
    data = tmp_path / "dirty.csv"
    rng = np.random.default_rng(0)
    with open(data, "w") as f:
        f.write("a,y\n")
        for i in range(40):
            f.write(f"{rng.uniform():.4f},{'?' if i == 5 else f'{rng.normal():.4f}'}\n")
    capsys.readouterr()
    assert cli.main(["fit", str(data), "--target", "y", "--out", str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err
    assert "holds numbers but for 1 of 40 cell(s) (the first, data row 6: '?')" in err, err
    assert "--task classify" in err


def test_show_data_reads_a_classifiers_terms_class_by_class(tmp_path, capsys):
    """``jaxtree show --data`` on a classifier: the terms of its decision function (two
    classes), one block and one plot per class for three (it printed nothing and wrote no
    plot for three classes, and failed after printing the model for two)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(120, 2))
    data = tmp_path / "rows.csv"
    np.savetxt(data, X, delimiter=",", header="x1,x2", comments="")  # the model's names
    for labels, blocks in ((X[:, 0] > 0.5, 1), (np.digitize(X[:, 0] + X[:, 1], [0.7, 1.3]), 3)):
        model = tmp_path / f"c{blocks}.json"
        jaxtree.TreeClassifier(k=2, search="greedy", shapes=0).fit(X, labels).save(model)
        capsys.readouterr()
        plot = tmp_path / f"t{blocks}.png"
        assert cli.main(["show", str(model), "--data", str(data), "--plot", str(plot)]) == 0
        out = capsys.readouterr().out
        assert out.count(" rows of ") == blocks, out
        if blocks == 1:
            assert plot.exists()
        else:
            assert out.count("against the rest over the 120 rows") == 3, out
            assert sorted(p.name for p in tmp_path.glob("t3_*.png")) == ["t3_0.png", "t3_1.png",
                                                                         "t3_2.png"]


def test_a_column_not_found_names_a_close_one_and_a_wrong_separator(tmp_path, capsys):
    """A misspelled target gets "Did you mean 'delay'?" (a case or a letter off); a header of
    one column holding ';' says the file looks separated by ';'."""
    data = tmp_path / "t.csv"
    data.write_text("a,delay\n1,2\n3,4\n5,7\n")
    capsys.readouterr()
    assert cli.main(["fit", str(data), "--target", "Delay"]) == 2
    assert "available columns: a, delay. Did you mean 'delay'?" in capsys.readouterr().err
    semi = tmp_path / "s.csv"
    semi.write_text("a;y\n1;2\n3;4\n")
    assert cli.main(["fit", str(semi), "--target", "y"]) == 2
    assert "looks separated by ';'" in capsys.readouterr().err


def test_the_summary_reports_the_k_the_rows_allowed():
    # `--k 200` on 200 rows fits k = 40 (one operation per 5 rows, with a DataSizeWarning);
    # the summary line said "of at most 200"
    assert cli._k_bound(200, 200) == 40 == jaxtree._fit.limits.max_k_for_rows(200)
    assert cli._k_bound(10, 1000) == 10
