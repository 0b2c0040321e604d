"""Debugging guards: count what JAX compiles while a block of code runs.

The hard requirement "no retracing as the tree grows" (DESIGN.md) is tested by counting
compilations across a whole fit. :func:`count_compilations` listens to JAX's own monitoring
events (``jax.monitoring``), so it needs no private counter of a particular jitted function
and sees every compilation, including those of small eager operations.

Example:
  >>> import jax, jax.numpy as jnp
  >>> from jaxtree.debug import count_compilations
  >>> f = jax.jit(lambda x: x * 2)
  >>> x = jnp.ones(3)
  >>> with count_compilations() as c:
  ...     _ = f(x); _ = f(x + 1)  # x + 1 compiles an eager addition too
  >>> c.lowerings
  2
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading

import jax

__all__ = ["CompilationCount", "count_compilations"]

# Event names JAX records (jax._src.dispatch): one lowering to MLIR per new trace of a jitted
# function, one backend compilation per executable built (not recorded when the persistent
# compilation cache supplies it).
_LOWER_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"
_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


@dataclasses.dataclass
class CompilationCount:
    """What was compiled inside a :func:`count_compilations` block.

    Attributes:
      lowerings: number of jitted programs traced and lowered (a retrace counts).
      compiles: number of backend compilations (0 for programs the persistent cache held).
    """

    lowerings: int = 0
    compiles: int = 0


_LOCK = threading.Lock()


@contextlib.contextmanager
def count_compilations():
    """Counts JAX lowerings and compilations in the block (all threads).

    Yields:
      A :class:`CompilationCount`, updated while the block runs.
    """
    count = CompilationCount()

    def listener(event: str, duration: float, **kwargs) -> None:
        if event == _LOWER_EVENT:
            with _LOCK:
                count.lowerings += 1
        elif event == _COMPILE_EVENT:
            with _LOCK:
                count.compiles += 1

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        yield count
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
