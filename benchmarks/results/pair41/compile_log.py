"""pytest plugin: every XLA compilation (module name, text hash, seconds, test) -> $PROF_DIR/<worker>.log.json"""
import hashlib, json, os, time
import pytest

_cur = {"id": None}
_rows = []
_clears = []

def pytest_configure(config):
    import jax
    from jax._src import compiler
    from jax._src.interpreters import pxla
    orig = compiler.compile_or_get_cached
    def wrapped(backend, computation, *a, **k):
        from jax._src.lib.mlir import ir
        name = ir.StringAttr(computation.operation.attributes['sym_name']).value
        txt = computation.operation.get_asm(enable_debug_info=False)
        h = hashlib.sha1(txt.encode()).hexdigest()[:12]
        t = time.perf_counter()
        out = orig(backend, computation, *a, **k)
        _rows.append((_cur["id"], name, h, time.perf_counter() - t, len(txt)))
        return out
    compiler.compile_or_get_cached = wrapped
    pxla.compiler.compile_or_get_cached = wrapped
    orig_clear = jax.clear_caches
    def clear():
        _clears.append(_cur["id"])
        return orig_clear()
    jax.clear_caches = clear

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _cur["id"] = item.nodeid
    yield

def pytest_sessionfinish(session):
    d = os.environ.get("PROF_DIR")
    if not d:
        return
    w = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(d, w + ".log.json"), "w") as f:
        json.dump({"rows": _rows, "clears": _clears}, f)
