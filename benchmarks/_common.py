"""Helpers shared by the benchmark scripts (run as ``python benchmarks/NAME.py``)."""

from __future__ import annotations

import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[1]


def git_commit() -> str:
    """``git rev-parse HEAD`` of the checkout; ``"unknown"`` if that fails."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, timeout=10)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except Exception:  # noqa: BLE001 - git missing, not a repository, ...
        pass
    return "unknown"


def environment() -> dict:
    """What every benchmark record carries: date, commit, versions, device, cores, x64."""
    import datetime
    import os
    import platform

    import jax
    import numpy as np

    import jaxtree

    dev = jax.devices()[0]
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": git_commit(),
        "jaxtree": jaxtree.__version__,
        "jax": jax.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "device": f"{dev.platform}:{getattr(dev, 'device_kind', '')}",
        "n_devices": jax.device_count(),
        "cpu_count": os.cpu_count(),
        "jax_enable_x64": bool(jax.config.jax_enable_x64),
    }
