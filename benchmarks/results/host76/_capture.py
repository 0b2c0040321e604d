"""What the host76 scripts share: the checkout on sys.path (ROOT, default /work/main), the
arguments of one function's calls during a warm default fit of a bench_cost case, and a
median time. Import it before jaxtree."""
import inspect, os, pathlib, sys, time, warnings

ROOT = pathlib.Path(os.environ.get("ROOT", "/work/main"))
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
warnings.simplefilter("ignore")

import jax, numpy as np  # noqa: E402
import bench_cost as bc, bench_accuracy as acc  # noqa: E402


class _Spy:
    """Records each call's ``(args, kwargs)`` and calls the original (its other attributes,
    e.g. a compiled function's ``ahead``, are the original's)."""

    def __init__(self, orig):
        self.orig, self.calls = orig, []

    def __getattr__(self, k):
        return getattr(self.orig, k)

    def __call__(self, *a, **k):
        self.calls.append((a, k))
        return self.orig(*a, **k)


def calls(case: str, owner, attr: str) -> tuple:
    """``(task, [(args, kwargs), ...])``: ``owner.attr``'s calls during one default fit of
    ``case``'s training rows (``owner`` a module or a class; the attribute restored after)."""
    task, Xtr, ytr, _, _ = bc.split(case)
    static = inspect.getattr_static(owner, attr)
    spy = _Spy(getattr(owner, attr))
    setattr(owner, attr, staticmethod(spy) if isinstance(owner, type) else spy)
    try:
        acc.jaxtree_model(task).fit(Xtr, ytr)
    finally:
        setattr(owner, attr, static)
    return task, spy.calls


def median_ms(f, *args, reps: int = 15) -> float:
    """The median of ``reps`` calls of ``f(*args)`` (after one), in milliseconds."""
    jax.block_until_ready(f(*args))
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(f(*args))
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts) * 1e3)
