"""Sharding the sample axis over several devices.

Design decision: the data arrays of :class:`jaxtree.scoring.Data` (``x (nc, m, p)``,
``y, w (nc, m)``) are placed with ``NamedSharding(mesh, P(None, "data"))``: the rows
*within* each chunk are split over a one-axis ``"data"`` mesh, while the program and all
accumulators are replicated. The unchanged jitted :func:`jaxtree.search.step` then runs
SPMD: every chunk's statistics are row sums (matrix products over the row axis and
``jnp.sum``), which GSPMD lowers to per-device partial sums plus one all-reduce (the
``psum`` of DESIGN.md section 3) per chunk and statistic. Splitting rows within a chunk
(not the chunk axis) keeps ``lax.scan`` over chunks sequential and identical on every
device, and keeps each device's working set at ``chunk/n_devices`` rows.

We chose automatic SPMD over ``shard_map`` with explicit ``psum`` because it needs no
second code path: the same pure core serves one device, many devices and (with
``jax.make_array_from_process_local_data``) many hosts. The cost is one small
all-reduce per chunk; use large chunks (``chunk_size`` rows in total over all devices)
on many devices.

The chunk size must be divisible by the device count; :func:`shard_data` pads each chunk
with zero-weight rows up to the next multiple (zero-weight rows change no statistic).
"""

from __future__ import annotations

from typing import Sequence, Union

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from jaxtree import scoring

__all__ = [
    "AXIS",
    "block_putter",
    "data_mesh",
    "padded_chunk",
    "resolve_devices",
    "row_sharding",
    "shard_data",
]


AXIS = "data"


def resolve_devices(devices: Union[None, int, str, Sequence] = None) -> list:
    """The devices to use: None -> the default device; ``n`` -> the first ``n``;
    ``"all"`` -> every device; a list -> itself.

    Raises:
      ValueError: when more devices are requested than exist (naming how many do), or
        for an empty list / non-positive count.
      TypeError: for any other value.
    """
    avail = jax.devices()
    if devices is None:
        return avail[:1]
    if isinstance(devices, str):
        if devices != "all":
            raise ValueError(f"devices must be None, a positive int, 'all' or a list of devices; "
                             f"got {devices!r}.")
        return list(avail)
    if isinstance(devices, (int, np.integer)) and not isinstance(devices, bool):
        if devices < 1:
            raise ValueError(f"devices must be a positive number of devices; got {devices}.")
        if devices > len(avail):
            raise ValueError(f"devices={devices} requested but only {len(avail)} device(s) are "
                             f"available ({avail[0].platform}). Use devices<={len(avail)} or "
                             "'all'.")
        return list(avail[:devices])
    if isinstance(devices, (list, tuple)):
        if not devices:
            raise ValueError("devices must not be an empty list.")
        return list(devices)
    raise TypeError(f"devices must be None, an int, 'all' or a list of devices; got "
                    f"{type(devices).__name__}.")


def data_mesh(devices=None) -> Mesh:
    """A one-axis mesh named ``"data"`` over the resolved devices."""
    devs = resolve_devices(devices)
    return Mesh(np.asarray(devs), (AXIS,))


def padded_chunk(m: int, n_devices: int) -> int:
    """``m`` rounded up to a multiple of ``n_devices``."""
    return -(-m // n_devices) * n_devices


def row_sharding(mesh: Mesh) -> NamedSharding:
    """Sharding of a ``(n_chunks, m, ...)`` array: rows within a chunk over ``"data"``.

    Args:
      mesh: the one-axis ``"data"`` mesh (:func:`data_mesh`).
    """
    return NamedSharding(mesh, P(None, AXIS))


def _pad_rows(a, m2):
    pad = m2 - a.shape[1]
    if pad == 0:
        return a
    widths = [(0, 0), (0, pad)] + [(0, 0)] * (a.ndim - 2)
    return (np if isinstance(a, np.ndarray) else jnp).pad(a, widths)


def shard_data(data: scoring.Data, devices=None) -> scoring.Data:
    """Places ``data`` with its rows (within chunks) sharded over ``devices``.

    Args:
      data: chunked data ``x (nc, m, p)``, ``y, w (nc, m)``.
      devices: None | int | ``"all"`` | list (see :func:`resolve_devices`).

    Returns:
      :class:`jaxtree.scoring.Data` of global arrays with ``P(None, "data")`` sharding;
      ``m`` is padded up to a multiple of the device count with zero-weight rows.
    """
    mesh = data_mesh(devices)
    m2 = padded_chunk(data.x.shape[1], mesh.size)
    sh = row_sharding(mesh)
    # A kept basis ``phi (nc, m, p*q)`` is sharded as the rows; ``allowed`` and ``binary``
    # (columns) are replicated.
    out = scoring.map_rows(lambda a: jax.device_put(_pad_rows(a, m2), sh), data)
    every = NamedSharding(mesh, P())
    return out._replace(**{k: jax.device_put(getattr(data, k), every)
                           for k in ("allowed", "binary") if getattr(data, k) is not None})


def block_putter(devices, m: int, dtype):
    """A function putting host blocks ``(B, m, ...)`` on ``devices`` (for streaming).

    With one device (``devices=None``) it is a plain ``device_put``; otherwise rows are
    padded and sharded as in :func:`shard_data`.

    Args:
      devices: the devices (None: one device).
      m: rows per chunk.
      dtype: float dtype of the blocks.
    """
    if devices is None:
        return lambda arrs: tuple(jax.device_put(a) for a in arrs)
    mesh = data_mesh(devices)
    m2 = padded_chunk(m, mesh.size)
    sh = row_sharding(mesh)
    return lambda arrs: tuple(jax.device_put(_pad_rows(a, m2), sh) for a in arrs)
