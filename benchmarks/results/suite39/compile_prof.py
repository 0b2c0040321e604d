"""pytest plugin: per-test sums of JAX compile events (trace, lower, XLA) -> $PROF_DIR/<worker>.json"""
import json, os, time, collections
import pytest

_cur = {"id": None}
_tot = collections.defaultdict(lambda: collections.defaultdict(float))
_wall = {}

def _listener(event, duration, **kw):
    if "compile" in event or "trace" in event or "lower" in event or "mlir" in event:
        _tot[_cur["id"]][event.rsplit("/", 1)[-1]] += duration

def pytest_configure(config):
    import jax
    jax.monitoring.register_event_duration_secs_listener(_listener)

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _cur["id"] = item.nodeid
    t = time.perf_counter()
    yield
    _wall[item.nodeid] = time.perf_counter() - t

def pytest_sessionfinish(session):
    d = os.environ.get("PROF_DIR")
    if not d:
        return
    w = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(d, w + ".json"), "w") as f:
        json.dump({"wall": _wall, "events": {k: dict(v) for k, v in _tot.items()}}, f)
