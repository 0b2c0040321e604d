"""jaxtree's default persistent compilation cache (jaxtree._compilation_cache).

JAX's configuration is process-global, so every test that turns the cache on runs in a
subprocess with its own ``XDG_CACHE_HOME``/``HOME``; the test process's JAX config is never
changed by this file (the in-process tests only monkeypatch the module's own functions).
"""

import json
import os
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jaxtree
from jaxtree import _compilation_cache as cc

# The child prints one JSON line: what JAX's config holds and what enable() returned.
PRELUDE = textwrap.dedent("""
    import json, os, sys, warnings
    warnings.simplefilter("always")
    import jax
    import jaxtree
    from jaxtree import _compilation_cache as cc
    def report(**extra):
        print(json.dumps({"dir": jax.config.jax_compilation_cache_dir,
                          "min_time": jax.config.jax_persistent_cache_min_compile_time_secs,
                          **extra}))
""")


def run_child(code, tmp_path, **env_extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("JAX_COMPILATION_CACHE_DIR", cc.ENV_VAR, "XDG_CACHE_HOME")}
    env.update(HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "xdg"), **env_extra)
    out = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_first_fit_creates_a_private_dir_and_caches_compilations(tmp_path):
    res, _ = run_child("""
        import numpy as np
        before = jax.config.jax_compilation_cache_dir      # import changed nothing
        jax.jit(lambda x: x * 2)(1.0)                      # JAX compiled before the first fit
        os.umask(0)                                        # a permissive umask is not trusted
        X = np.random.default_rng(0).uniform(size=(20, 2))
        jaxtree.TreeRegressor(k=1, engine="reference", refine=None).fit(X, X[:, 0])
        after_fit = jax.config.jax_compilation_cache_dir
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.jit(lambda x: x * 3 + 1)(np.ones(7)).block_until_ready()   # written to the cache
        report(before=before, after_fit=after_fit)
    """, tmp_path)
    path = tmp_path / "xdg" / "jaxtree" / "jax"
    assert res["before"] is None
    assert res["after_fit"] == str(path)
    assert mode(path) == 0o700 and mode(path.parent) == 0o700
    assert any(f.name.startswith("jit_") for f in path.iterdir())  # the cache is in use


def test_min_compile_time_is_set_only_when_the_user_left_jaxs_default(tmp_path):
    res, _ = run_child("report(path=cc.enable(), again=cc.enable())", tmp_path)
    assert res["min_time"] == cc.MIN_COMPILE_TIME_SECS < 1.0
    assert res["path"] == res["again"] == res["dir"] == str(tmp_path / "xdg" / "jaxtree" / "jax")
    res, _ = run_child("""
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 3.0)
        cc.enable(); report()
    """, tmp_path)
    assert res["min_time"] == 3.0 and res["dir"]


@pytest.mark.parametrize("how", [
    "config",
    # slow: restates the [config] case (enable() returns None and leaves the user's
    # directory; JAX reads JAX_COMPILATION_CACHE_DIR into jax_compilation_cache_dir at
    # import, so enable() meets the same config branch) on a subprocess of its own
    pytest.param("env", marks=pytest.mark.slow)])
def test_a_cache_the_user_configured_is_left_alone(tmp_path, how):
    mine = str(tmp_path / "mine")
    code = f"jax.config.update('jax_compilation_cache_dir', {mine!r})\n" if how == "config" else ""
    res, _ = run_child(code + "report(path=cc.enable())", tmp_path,
                       **({"JAX_COMPILATION_CACHE_DIR": mine} if how == "env" else {}))
    assert res == {"dir": mine, "min_time": 1.0, "path": None}
    assert not (tmp_path / "xdg").exists()


def test_env_var_turns_it_off(tmp_path, monkeypatch):
    res, _ = run_child("report(path=cc.enable())", tmp_path, JAXTREE_COMPILATION_CACHE="0")
    assert res == {"dir": None, "min_time": 1.0, "path": None}
    assert not (tmp_path / "xdg").exists()
    for value, off in [("0", True), ("off", True), (" False ", True), ("no", True), ("1", False),
                       ("", False), ("on", False)]:
        monkeypatch.setenv(cc.ENV_VAR, value)
        assert cc.env_off() is off, value


def test_disable_before_and_after_the_first_fit(tmp_path):
    res, _ = run_child("jaxtree.disable_compilation_cache(); report(path=cc.enable())", tmp_path)
    assert res == {"dir": None, "min_time": 1.0, "path": None}
    assert not (tmp_path / "xdg").exists()
    res, _ = run_child("""
        import numpy as np
        on = cc.enable()
        jaxtree.disable_compilation_cache()
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.jit(lambda x: x * 5 - 2)(np.ones(3)).block_until_ready()   # not written any more
        report(on=on, again=cc.enable())
    """, tmp_path)
    assert res["on"] and res["dir"] is None and res["again"] is None
    assert list((tmp_path / "xdg" / "jaxtree" / "jax").iterdir()) == []


@pytest.mark.parametrize("bad", ["group_writable", "symlink"])
def test_an_insecure_directory_is_refused_with_one_warning(tmp_path, bad):
    path = tmp_path / "xdg" / "jaxtree" / "jax"
    if bad == "group_writable":
        path.mkdir(parents=True)
        path.chmod(0o770)
    else:
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        path.parent.mkdir(parents=True, mode=0o700)
        path.symlink_to(tmp_path / "elsewhere")
    res, err = run_child("""
        import numpy as np
        X = np.random.default_rng(0).uniform(size=(20, 2))
        for _ in range(2):
            jaxtree.TreeRegressor(k=1, engine="reference", refine=None).fit(X, X[:, 0])
        report(path=cc.enable())
    """, tmp_path)
    assert res == {"dir": None, "min_time": 1.0, "path": None}
    assert err.count("UserWarning: jaxtree: not using") == 1
    assert ("writable by group or others (mode 0o770)" if bad == "group_writable"
            else "is a symbolic link") in err
    if bad == "group_writable":
        assert mode(path) == 0o770  # never "fixed" behind the user's back


def test_a_directory_owned_by_someone_else_is_refused(tmp_path, monkeypatch):
    """In-process: only the module's own ownership check runs (no JAX config is touched)."""
    d = tmp_path / "d"
    d.mkdir(mode=0o700)
    assert cc._insecure_reason(str(d)) is None
    if not hasattr(os, "getuid"):
        pytest.skip("no user ids on this platform")
    monkeypatch.setattr(os, "getuid", lambda: os.stat(d).st_uid + 1)
    assert "is owned by user id" in cc._insecure_reason(str(d))


def test_default_dir_follows_xdg_and_ignores_a_relative_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cc.default_cache_dir() == str(tmp_path / "jaxtree" / "jax")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert cc.default_cache_dir() == str(tmp_path / "h" / ".cache" / "jaxtree" / "jax")


class _Called(Exception):
    pass


@pytest.mark.parametrize("entry", ["TreeRegressor.fit", "fit_batch"])
def test_every_fit_entry_point_enables_it_first(monkeypatch, entry):
    """``enable`` runs before anything else (even before the data are checked)."""
    def called():
        raise _Called

    monkeypatch.setattr(cc, "enable", called)
    with pytest.raises(_Called):
        if entry == "fit_batch":
            jaxtree.fit_batch(np.zeros((1, 4, 2)), None)
        else:
            jaxtree.TreeRegressor().fit(None, None)
