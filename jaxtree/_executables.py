"""Compiled search steps kept on disk, so that a new process neither traces nor compiles them.

Why: JAX's persistent compilation cache (:mod:`jaxtree._compilation_cache`) removes XLA's
compilation from a second process, not JAX's own work before it: the cache key is computed
from the lowered program, so every new process still *traces* the search step to a jaxpr
and *lowers* it to MLIR before it can look the executable up. For the default search
(``search="backfit"`` below 10,000 rows) that is 1.3 s of a 2.3 s first fit at the demo's
shape (issue 12 item 6; ``benchmarks/bench_first_fit.py``). This module keeps the compiled
executable itself (``jax.experimental.serialize_executable``), filed under a key that jaxtree
computes *without tracing*: the function, its static arguments, the shapes and dtypes of its
array arguments and everything else the compiled program could depend on. A second process
that finds the key loads the executable and calls it: no tracing, no lowering, no compiling.

Why one file over 800 lines: the key, the loads, the read-ahead, the compilations ahead and
the stores share one lock and the module's tables of keys, executables in memory and
executables in flight; split, each part would reach into the others' private state.

Decisions (and why):

* **Where**: ``<cache root>/executables``, beside JAX's cache directory (``.../jaxtree/jax``),
  made and checked like it (owned by the user, mode ``0o700``, not a symlink): a serialised
  executable is machine code and its file is a pickle, so, as JAX's cache, it is trusted code
  and must not be writable by anyone else. It is on exactly when jaxtree's own compilation
  cache is on (:func:`jaxtree._compilation_cache.enable` calls :func:`enable`): not when the
  user configured JAX's cache or turned jaxtree's off (``JAXTREE_COMPILATION_CACHE=0``,
  :func:`jaxtree.disable_compilation_cache`), so a process that opted out never loads code
  from disk.
* **What is cached**: the programs a default fit compiles: the search step (the backfit
  step, and in a fit with shape terms the greedy step refined by L-BFGS, as two programs,
  insertion and the rest, :func:`jaxtree.search.step_function`) and the held-out loss of
  :class:`jaxtree.TreeRegressor`, the step of :class:`jaxtree.TreeClassifier` (one tree, or
  the one-versus-rest batch), the shape stage's programs (:func:`jaxtree.shapes.spec_jit`)
  and the tree's values on the training rows (:func:`jaxtree._fit.select.tree_values`);
  :func:`cached` wraps them at their call sites. Every other program (``fit_batch``, most
  of the streamed fits' passes, ``predict``) goes through JAX's own cache as before.
* **The key** (SHA-256 of): the function's module and name; ``repr`` of the static arguments
  (a basis holding a custom Python function is not cached at all, whether it is a static
  argument or inside a model's static data: its identity cannot be written down); the tree
  structure, shapes, dtypes and weak types of the other arguments; the versions of Python,
  jax, jaxlib, optax and numpy; a hash of jaxtree's own source files (subpackages
  included); all of JAX's configuration values; ``XLA_FLAGS``; the device's platform, kind
  and platform version; and the host CPU's model and feature flags (machine code compiled
  for one CPU can crash another that shares a home directory). Anything not in the key that
  could change the program would make a stale hit, so the key errs on the side of misses.
  JAX's compiled call checks the arguments' shapes and dtypes again on every call.
* **Only one device**: the cache is used when the process sees a single device (one CPU,
  one GPU); with several, placements and shardings enter the program and the plain jitted
  call is used.
* **Size**: files are zlib-compressed (level 1: the demo's backfit step, 4.4 MB serialised,
  takes 0.7 MB) and the directory keeps the :data:`MAX_FILES` most recently used
  files, the oldest deleted when a new one is written.
* **Quick programs** (:func:`quick`): a small table's shape stage compiles its programs
  with LLVM's optimisation off (another key, so they never stand in for the default ones),
  through this class also when the on-disk cache is off (then kept in memory only).
* **Light programs** (:func:`light`): where compiling dominates a fit (a small table) its
  programs compile without XLA's MLIR fusion emitters (:data:`LIGHT`), kept apart like the
  quick ones.
* **Read-ahead** (:func:`_follow`): loading is most of a second process's fit (the demo's
  backfit step alone 0.5-0.8 s of 1.1-1.4 s, XLA rebuilding its HLO module; the load time
  follows the program's size, not its debug metadata: stripped, 30% fewer bytes loaded as
  slowly). A process notes the programs it uses in order of first use; the first program's
  ``<key>.trail`` file lists those that followed it (at most :data:`MAX_TRAIL`), and a later
  process that loads that first program loads the listed ones on :data:`READ_AHEAD_THREADS`
  background threads meanwhile, in the listed order (XLA's load runs outside the GIL: two
  loads take about the time of the larger; so the backfit step is stored as its two halves,
  which load side by side). A program is taken from there only as a loaded file is (its
  first call checked); a trail that names other programs costs only their loads. The same
  executables, so the same results.
* **Compiling ahead** (:meth:`cached.ahead`): a fit that knows its next program traces and
  lowers it while the current one compiles, and compiles it on one of
  :data:`COMPILE_THREADS` background threads (XLA's compilation runs outside the GIL); the
  call takes the executable, so it is compiled once, with its own options and key.
* **Failures are never errors**: an unreadable, corrupt or incompatible file is deleted and
  the program compiled as without the cache; a program that cannot be serialised is
  compiled and used in memory. Results are those of the jitted function: the same program,
  compiled once, the same executable.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import hashlib
import importlib.metadata
import json
import os
import pickle
import platform
import re
import sys
import tempfile
import threading
import zlib

import jax
import numpy as np

from jaxtree import _threads

MAX_FILES = 256
"""The most executables kept on disk (least recently used deleted first). A fit with shape
terms stores about ten (the tree's step in two programs, the tree's values, the shape
stage's Grams, start, step, held-out errors and refit); ``jaxtree warmup``'s default sizes
store 24 files, 5.9 MB (measured): 64 would let a few tables of the user's evict them."""

MAX_IN_MEMORY = 32
"""The most loaded executables a process keeps (least recently used dropped first)."""

MAX_QUICK_IN_MEMORY = 512
"""The most :func:`quick` executables a process keeps (least recently used dropped first):
with the on-disk cache off they exist nowhere else, as a jitted function's programs exist
only in its own cache, and a small table's shape stage compiles about eight (small ones)."""

_MARK = {"xla_embed_ir_in_executable": False}
"""A compile option at its default value (no effect on the program), so that JAX's cache
files these compilations under keys of their own."""

_RETRY = {"xla_llvm_disable_expensive_passes": False}
"""Another compile option at its default value, under which a program is compiled afresh
where JAX's cache held it from an older jaxtree (:func:`_unshared`): no entry has it."""

QUICK = {"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False}
"""The compile options of :func:`quick`: LLVM's optimisation off and XLA's older elemental
emitters for fusions. Measured on the demo's search step (BENCHMARKS.md, "The test suite under
8 minutes" and issue 27): about 40% less compile time for a 4-5x slower program; on a small
table's shape stage, whose run time is a few milliseconds, the compile time alone counts."""

LIGHT = {"xla_cpu_use_fusion_emitters": False}
"""The compile options of :func:`light`: XLA's elemental emitters for fusions instead of its
MLIR fusion emitters, LLVM's optimisation as always (thirty-fourth session, BENCHMARKS.md,
"Small tables compile without the fusion emitters"). Each program lowered once and
compiled both ways, on the demo's last iteration: the backfit step's insert 2.83-3.07 ->
2.40-2.62 s of compiling and finish 2.87-3.30 -> 1.71-2.30 s, running as fast (insert
1.69-1.72 -> 1.28-1.40 ms, finish 1.97-2.14 -> 1.99-2.52 ms). Whole fits, fresh caches,
old and new alternating: the demo's first fit 9.5-9.9 -> 8.6-8.8 s with its warm fit
0.18-0.21 -> 0.20-0.21 s; a 20,000 x 10 table 10.2-10.9 -> 6.2-8.4 s, warm 0.78-0.85 ->
0.80-0.88 s. The one-program
greedy step ran about 10% slower (the paper setting's warm speed), so it keeps XLA's
defaults (``cached(light=False)``). Where the search's run time counts (not
``compiling_dominates``) programs compile as always."""

LIGHT_LLVM1 = {**LIGHT, "xla_backend_optimization_level": 1}
""":data:`LIGHT` and LLVM's optimisation level 1 (XLA's default is 3: a dump of XLA's debug
options lists level 2 as a change from the default and not 3; this said 2 until the
forty-fifth session), for a program measured to run as fast at level 1: the search's
insertion (:data:`jaxtree.search.insert_cached`), at 1,000 rows 2.18-2.39 -> 1.50-1.94 s
of compiling against :data:`LIGHT` alone, running 1.46-1.55 against 1.44-1.75 ms; at 8,000
rows 1.95-2.46 -> 1.38-1.40 s, 8.9-11.2 against 9.2-11.0 ms. Not for the refinement: its
L-BFGS loop ran 30-100% slower at level 1 (BENCHMARKS.md, "Small tables compile without the
fusion emitters"), except the backfit search's (:data:`jaxtree.search.finish_backfit_cached`,
sixty-fifth session), whose compilation ends a small table's first fit.

Since the thirty-sixth session also every other light program without an L-BFGS loop:
the kept basis values (:data:`jaxtree._fit.source.designs_cached`), the held-out errors
and the tree's values (:mod:`jaxtree._fit.select`) and the shape stage's programs
(:func:`jaxtree.shapes.spec_jit`, where it is not :func:`quick`). Each program of a
default fit lowered once and compiled three times each way
(``benchmarks/results/options36/``): at 1,000 rows the basis values 0.56-0.67 -> 0.32-0.35 s,
the held-out errors 0.43-0.53 -> 0.33-0.35 s, the tree's values 0.35-0.45 -> 0.23-0.28 s;
at 20,000 rows the shape step 1.48-1.60 -> 1.08-1.29 s, its finish 0.84-0.98 -> 0.58-0.73
s, its factor table 0.32-0.34 -> 0.19-0.22 s; each running as fast within the noise (the
tree's values 1.4-1.7 -> 1.6-2.3 ms on 20,000 rows, twice a fit). The backfitting round
(:data:`jaxtree._fit.select.joint_cached`) keeps :data:`LIGHT`: an L-BFGS loop.

The shape stage's search programs (its step, Grams, factor table, start and finish) and the
tree's values compile with these options on every CPU fit, light or not
(``cached(light_anywhere=True)``): at 50,000 and 200,000 rows, where a fit is not light,
they ran as fast or faster with them (the step 63-70 -> 61-62 ms and 195-229 -> 205-221 ms
a call, the Grams 477-536 against 552-635 ms at 200,000 rows) and compiled in half the time
(the step 2.1-2.7 -> 1.0-1.5 s, the finish 1.3-1.5 -> 0.65-0.8 s;
``benchmarks/results/options36/n50000_shapes.log``, ``n200000_shapes.log``). Not the shape
terms' held-out errors nor their evaluation on chunks: without the fusion emitters they ran
2-4 times slower at 50,000 rows (0.8-0.9 -> 3.7-4.3 ms, 3.3-4.4 -> 7.4-12 ms)."""

MAX_TRAIL = 16
"""The most programs a trail file lists after its first one (:func:`_follow`)."""

READ_AHEAD_THREADS = 2
"""Threads loading a trail's programs (:func:`_read_ahead`). Two since the thirtieth
session: with the kept basis values (``cache_basis="auto"``) the first program of a small
table's fit is small, the main thread loads it, and one read-ahead thread then loaded the
step's two halves one after the other while the main thread waited. The demo's second
process (median fit of 5 rounds, alternating): one thread 1.03 s, two 0.94 s; the commit
before the kept basis (one thread) 1.03 s, this one with two 0.85 s (BENCHMARKS.md, "The
basis kept on small tables"). An earlier session measured no gain from a second thread
when one program was most of the load."""

_lock = threading.Lock()
_directory: str | None = None
_memory: collections.OrderedDict = collections.OrderedDict()
_quick_memory: collections.OrderedDict = collections.OrderedDict()  # quick(), light(): apart
_environment: str | None = None
_broken: set = set()  # keys whose program could not be serialised (compiled in memory only)
_local = threading.local()  # this thread's count of JAX persistent-cache hits
_trail: list = []  # this process's programs, [key, quick], in order of first use (_follow)
_trail_read: list = []  # what the first program's trail file listed when it was read
_pending: dict = {}  # key -> Future of a read-ahead load
_compiling: dict = {}  # key -> Future of an ahead compilation (cached.ahead)
COMPILE_THREADS = 2
"""Threads that compile programs started by :meth:`cached.ahead` (XLA's compilation runs
outside the GIL, so it proceeds while the calling thread traces the next program)."""
_HEX = re.compile(r"[0-9a-f]{64}")
read_ahead_used = 0  # programs this process took from read-ahead loads (for tests, benchmarks)


def _forget_threads() -> None:
    """In a forked child: the parent's read-ahead loads and ahead compilations ran on threads
    the child does not have (waiting for one would never end), and the lock may have been
    held by one of them. The child starts without them; its programs load or compile at
    their calls (its pools are new: :func:`jaxtree._threads.pool`)."""
    global _lock
    _lock = threading.Lock()
    _pending.clear()
    _compiling.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_threads)


@contextlib.contextmanager
def quick():
    """In this block (this thread), the programs of :class:`cached` functions made with
    ``quick=True`` are compiled with the :data:`QUICK` options: for compile time over run
    time, where the run time is negligible (a small table's shape stage,
    :attr:`jaxtree._fit.spec.FitSpec.quick_shapes`). Their executables are kept apart from
    the default ones (another key), in memory when the on-disk cache is off; other programs
    are compiled as always. Whether a program runs in a quick block is decided by the fit's
    size, so one table's fit always runs the same executables (the results do not depend on
    what the process compiled before)."""
    with _thread_flag("quick"):
        yield


@contextlib.contextmanager
def light():
    """In this block (this thread), the programs of every :class:`cached` function are
    compiled with their light options (:data:`LIGHT`, or the program's own, e.g.
    :data:`LIGHT_LLVM1`; none for ``light=False``; a :func:`quick` program in a quick block
    with the :data:`QUICK` ones): for a fit where compiling dominates
    (:attr:`jaxtree._fit.spec.FitSpec.light`). Kept apart from the default executables
    (another key), in memory when the on-disk cache is off. An option the process's own
    ``XLA_FLAGS`` sets is left to them."""
    with _thread_flag("light"):
        yield


@contextlib.contextmanager
def _thread_flag(name: str):
    """This thread's flag ``name`` set in the block, restored after it (blocks nest)."""
    old = getattr(_local, name, False)
    setattr(_local, name, True)
    try:
        yield
    finally:
        setattr(_local, name, old)


@contextlib.contextmanager
def while_waiting(task):
    """In this block, ``task()`` runs once on this thread the first time the thread would
    wait for a program compiling ahead (:meth:`cached.ahead`) while a core is free
    (:func:`_core_free`); the programs the task names ahead compile after the compilations
    then in flight (:func:`_compile_after`). At the block's end the task is dropped if it
    never ran. For a fit's next stage, whose programs the task traces and lowers while the
    thread would otherwise sit idle (:func:`jaxtree._fit.stages.search_model`). A task's
    failure is no error of the fit: its programs then compile at their calls.

    Why both conditions (fifty-second session, issue 27). The forty-seventh session ran
    such a task at the thread's first wait, on the 2-core CPU: the shape stage's tracing
    then ran beside the search step's two compilations, and their own compilations beside
    those, and the demo's first fit stayed level. Here the task waits until one of the
    step's two programs is compiled (the thread then waits for the other, which leaves a
    core idle), and its compilations queue behind the step's: the demo's first fit 5.25 ->
    4.84 s (means of ten fresh processes, ABBA), the 20,000 x 10 table with a category
    7.92 -> 7.47 s (four each), the same predictions (BENCHMARKS.md, "The shape stage
    traced while the step's last program compiles")."""
    tasks = _local.__dict__.setdefault("waiting", [])
    tasks.append(task)
    try:
        yield
    finally:
        if task in tasks:
            tasks.remove(task)


def _cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _core_free() -> bool:
    """Whether fewer programs compile ahead than the process has cores, counting the one
    this thread is about to wait for: then this thread's tracing takes a core no
    compilation uses."""
    with _lock:
        busy = 1 + sum(not f.done() for f in _compiling.values())
    return busy < _cores()


def _run_waiting(awaited) -> None:
    """Runs (and forgets) this thread's :func:`while_waiting` tasks, while the thread waits
    for the ahead compilation ``awaited`` (a future): what they compile ahead queues behind
    it (:meth:`cached.ahead`)."""
    tasks = getattr(_local, "waiting", None)
    while tasks:
        task = tasks.pop(0)
        _local.deferred = awaited
        try:
            task()
        except Exception:  # noqa: BLE001 - only compiling ahead: the calls compile instead
            pass
        finally:
            _local.deferred = None


def light_if(flag: bool):
    """:func:`light` where ``flag`` holds, else a block that changes nothing."""
    return light() if flag else contextlib.nullcontext()


def _light_options(options: dict = LIGHT) -> dict:
    """``options`` (a program's light options, :data:`LIGHT` by default) without those the
    process's ``XLA_FLAGS`` names (the user's, or the test suite's, win)."""
    flags = os.environ.get("XLA_FLAGS", "")
    return {k: v for k, v in options.items() if f"--{k}=" not in flags}


def _tier(options: dict | None, anywhere: bool = False) -> str:
    """``"light"`` in a :func:`light` block (``anywhere``: on a CPU backend, in a block or
    not) for a program with light ``options`` (None: it has none) that the process's
    ``XLA_FLAGS`` leave something to set, else ``""``."""
    on = getattr(_local, "light", False) or (anywhere and _cpu_backend())
    return "light" if options and on and _light_options(options) else ""


def _cpu_backend() -> bool:
    """Whether JAX's default backend is the CPU (the light options are XLA's CPU ones)."""
    try:
        return jax.default_backend() == "cpu"
    except Exception:  # noqa: BLE001 - no backend: nothing is compiled light
        return False


def _count_hits(event: str, **_) -> None:
    if event == "/jax/compilation_cache/cache_hits":
        _local.hits = getattr(_local, "hits", 0) + 1


jax.monitoring.register_event_listener(_count_hits)


def enable(path: str | None) -> None:
    """Turns the executable cache on in ``path`` (a private directory), or off with None.

    Called by :func:`jaxtree._compilation_cache.enable` and ``disable``; not public."""
    global _directory, _trail_read
    with _lock:
        _directory = path
        _memory.clear()
        _quick_memory.clear()
        _trail.clear()
        _trail_read = []
        for fut in _pending.values():
            fut.cancel()
        _pending.clear()


def directory() -> str | None:
    """The directory in use, or None when the cache is off."""
    return _directory


def _source_hash(here: str | None = None) -> str:
    """A hash of every ``.py`` file of the package (or of the folder ``here``), its
    subpackages' too (``_fit``, ``_inputs``: :mod:`jaxtree._fit.select`'s programs are cached
    ones), each with its relative path. Until the fifty-third session only the top folder's
    files were hashed, so a change in a subpackage left stored executables of the older code
    in use."""
    here = here or os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256()
    for root, dirs, files in os.walk(here):  # top-down: dirs pruned and ordered in place
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                rel = os.path.relpath(os.path.join(root, name), here)
                with open(os.path.join(root, name), "rb") as f:
                    h.update(rel.encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()


def _cpu() -> str:
    """The host CPU's model and feature flags (Linux), else what ``platform`` knows."""
    parts = [platform.machine(), platform.processor()]
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key = line.split(":", 1)[0].strip()
                if key in ("model name", "flags", "Features", "CPU part"):
                    parts.append(line.strip())
                if line.strip() == "":
                    break  # the first processor's block describes them all
    except OSError:
        pass
    return "\n".join(parts)


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def environment() -> str:
    """Everything outside the arguments that the compiled programs depend on: the fixed part
    computed once per process, JAX's configuration (which a process may change between
    fits, e.g. ``jax_default_matmul_precision``) read on every call."""
    global _environment
    if _environment is None:
        dev = jax.devices()[0]
        _environment = repr((
            sys.version, jax.__version__, _version("jaxlib"), _version("optax"), np.__version__,
            _source_hash(), os.environ.get("XLA_FLAGS", ""),
            dev.platform, dev.device_kind, dev.client.platform_version, _cpu()))
    return _environment + repr(sorted(jax.config.values.items()))


def _is_custom(value) -> bool:
    from jaxtree import basis as basis_  # noqa: PLC0415 - basis imports jax-heavy modules

    return isinstance(value, basis_.Basis) and value.has_custom_functions


def _holds_custom(tree) -> bool:
    """Whether a pytree structure's static data holds a basis with a custom function (a
    :class:`jaxtree.model.TreeModel` passed as an array argument carries its basis there)."""
    data = tree.node_data()
    if data is not None and isinstance(data[1], tuple) and any(map(_is_custom, data[1])):
        return True
    return any(map(_holds_custom, tree.children()))


def _key(name: str, static: tuple, dynamic: tuple) -> str | None:
    """The file name (without suffix) of program ``name`` at these arguments, or None when
    it is not cached (a custom basis function, static or in a model's static data; an array
    on several devices; a tracer). The callers need not check for a custom basis."""
    if any(_is_custom(s) for s in static):
        return None
    leaves, tree = jax.tree_util.tree_flatten(dynamic)
    avals = []
    for leaf in leaves:
        if isinstance(leaf, jax.core.Tracer):  # called inside a trace (vmap, jit): not here
            return None
        if isinstance(leaf, jax.Array) and len(leaf.sharding.device_set) != 1:
            return None
        a = leaf.aval if isinstance(leaf, jax.Array) else jax.typeof(leaf)
        avals.append((a.shape, a.dtype, bool(getattr(a, "weak_type", False))))
    # A fit calls its programs once an iteration: the key of equal arguments is remembered
    # (the text and its hash took ~1 ms a call, 17% of the demo's warm fit; str(dtype) alone
    # 7 us a leaf, so the dtypes enter the text only when it is written). Equal static
    # arguments (== and hash, as jax.jit's own cache compares them, and of one type: 2 and
    # 2.0 write different texts) and equal configuration values give the same key.
    try:
        memo = (name, static, tuple(map(type, static)), tree, tuple(avals),
                tuple(jax.config.values.values()))
        key = _keys.get(memo)
    except TypeError:  # an unhashable value: the key is computed every time
        memo = key = None
    if key is None:
        if _holds_custom(tree):  # a model's custom basis function: remembered as no key
            key = _CUSTOM
        else:
            avals = [(shape, str(dtype), weak) for shape, dtype, weak in avals]
            text = repr((name, repr(static), str(tree), avals, environment()))
            key = hashlib.sha256(text.encode()).hexdigest()
        if memo is not None:
            with _lock:
                if len(_keys) >= MAX_KEYS:
                    _keys.clear()
                _keys[memo] = key
    return None if key is _CUSTOM else key


_keys: dict = {}
_CUSTOM = object()
"""Remembered in :data:`_keys` for a structure that holds a custom basis function (no key)."""
MAX_KEYS = 1024
"""The most remembered keys (:func:`_key`); all are forgotten at once beyond it."""


_lapack_ready = False


def _ensure_lapack() -> None:
    """Makes the LAPACK kernels callable before a program that calls them is loaded or
    lowered. Once a process; :class:`cached` calls it before its first program.

    Why: XLA's CPU programs call LAPACK (``jnp.linalg``: the shape stage's ridge solves)
    through jaxlib's kernels, whose function pointers jaxlib sets up when it *lowers* such a
    call. A process that only loads a stored executable lowers nothing, and its first LAPACK
    call then crashed the process (measured with jaxlib 0.10.2: a segmentation fault in the
    shape step of a second process). jaxlib's own set-up function is called (what its
    lowering calls; nothing traced); where a jaxlib lacks it, lowering one small solve does
    the same (public API, ~10 ms, once a process).

    jaxlib's set-up reads the kernels from ``scipy.linalg.cython_blas`` and
    ``cython_lapack``, and importing those runs ``scipy.linalg``'s ``__init__``: 0.25-0.45 s
    of a second process's fit (twenty-fifth session, cProfile), for two modules that take
    0.03 s alone. So they are loaded first on their own (:func:`_kernel_modules`); the
    set-up then finds them, and a first process lowering its first solve afterwards finds
    the kernels set up."""
    global _lapack_ready
    if _lapack_ready:
        return
    try:
        from jaxlib import lapack  # noqa: PLC0415

        with _kernel_modules():
            lapack._lapack.initialize()
    except Exception:  # noqa: BLE001 - another jaxlib: the lowering path below
        import jax.numpy as jnp  # noqa: PLC0415

        a = jax.ShapeDtypeStruct((2, 2), np.float32)
        try:
            jax.jit(jnp.linalg.solve).lower(a, jax.ShapeDtypeStruct((2,), np.float32))
        except Exception:  # noqa: BLE001 - never an error here: a program that needs
            pass  # LAPACK raises its own when it is lowered
    _lapack_ready = True


@contextlib.contextmanager
def _kernel_modules():
    """Within the block, ``scipy.linalg.cython_blas`` and ``cython_lapack`` are importable
    without ``scipy.linalg``'s ``__init__`` (its ~40 submodules): each extension module is
    loaded from its file under its own name. They leave ``sys.modules`` afterwards, so a
    later ``import scipy.linalg`` runs as always and binds its submodules (a Cython module
    loaded a second time in one process is the same module object: measured with scipy
    1.16, ``qr_update`` working after it). Where anything differs (scipy absent, another
    layout, ``scipy.linalg`` already imported) nothing is loaded and the set-up imports as
    it would."""
    added = []
    try:
        if "scipy.linalg" not in sys.modules:
            import importlib.machinery  # noqa: PLC0415
            import importlib.util  # noqa: PLC0415

            found = importlib.util.find_spec("scipy")
            folder = os.path.join(os.path.dirname(found.origin), "linalg")
            for name in ("cython_blas", "cython_lapack"):
                full = "scipy.linalg." + name
                paths = [os.path.join(folder, name + suffix)
                         for suffix in importlib.machinery.EXTENSION_SUFFIXES]
                paths = [f for f in paths if os.path.exists(f)]
                if full in sys.modules or not paths:
                    continue
                spec = importlib.util.spec_from_file_location(full, paths[0])
                module = importlib.util.module_from_spec(spec)
                sys.modules[full] = module
                added.append(full)
                spec.loader.exec_module(module)
    except Exception:  # noqa: BLE001 - the set-up's own import does the work
        for full in added:
            sys.modules.pop(full, None)
        added = []
    try:
        yield
    finally:
        for full in added:
            sys.modules.pop(full, None)


def _load(path: str, in_tree=None):
    """The executable stored at ``path``; ``in_tree``: its arguments' tree structure (None:
    the one stored with it, for a read-ahead load that has no arguments yet)."""
    from jax.experimental import serialize_executable as se  # noqa: PLC0415

    with open(path, "rb") as f:
        payload, stored_in, out_tree = pickle.loads(zlib.decompress(f.read()))
    # LAPACK is set up already: cached.__call__ does it before any program is loaded here
    # or read ahead
    exe = se.deserialize_and_load(payload, stored_in if in_tree is None else in_tree, out_tree)
    os.utime(path)  # recently used
    return exe


def _write_atomic(directory: str, name: str, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, os.path.join(directory, name))  # atomic: readers see all or nothing
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _unshared():
    """A context in which this thread's compilations are not written to JAX's persistent
    cache (JAX writes no entry that took less than infinitely long to compile); a no-op
    where JAX has no such thread-local setting.

    Why (thirty-second session, issue 27): what this module compiles it stores itself. In
    JAX's cache the same compilation was an entry under a key of the program alone, and
    after a change of jaxtree's source (an upgrade, or a developer's edit) this module's
    keys were new while an unchanged program was found there: an executable JAX loaded
    cannot be stored here (:meth:`cached._get`), so it was traced and lowered again in
    every later process (a second process's 10,000-row fit of the diamonds table: 5.3-5.8 s
    against 2.4-2.8 s, 12 programs traced each time). Now nothing of this module's goes
    there; an entry an older jaxtree wrote is compiled afresh once (:data:`_RETRY`) and
    stored. The price: a program that cannot be serialised is compiled again by the next
    process, where JAX's cache gave it before (none is known)."""
    try:
        from jax._src import config as jax_config  # noqa: PLC0415 - no public thread-local form

        return jax_config.persistent_cache_min_compile_time_secs(float("inf"))
    except Exception:  # noqa: BLE001 - another JAX: its cache keeps them, as before
        return contextlib.nullcontext()


def _store(directory: str, name: str, compiled) -> None:
    from jax.experimental import serialize_executable as se  # noqa: PLC0415

    payload, in_tree, out_tree = se.serialize(compiled)
    _write_atomic(directory, name, zlib.compress(
        pickle.dumps((payload, in_tree, out_tree), protocol=pickle.HIGHEST_PROTOCOL), 1))
    files = [os.path.join(directory, f) for f in os.listdir(directory) if f.endswith(".exe")]
    if len(files) > MAX_FILES:
        files.sort(key=lambda f: os.stat(f).st_mtime)
        for f in files[: len(files) - MAX_FILES]:
            for old in (f, f[:-4] + ".trail"):
                try:
                    os.unlink(old)
                except OSError:
                    pass


def _follow(d: str, key: str, fast: bool) -> None:
    """Notes program ``key``'s first use in this process (module docstring, read-ahead).
    The process's first program reads its trail file and loads the programs listed there on
    the read-ahead threads; each later new program extends the first one's trail file, where
    it differs from what the file said (a process that repeats the last one writes nothing).
    Never raises: a trail is an optimisation."""
    global _trail_read
    entry = [key, bool(fast)]
    with _lock:
        if entry in _trail or len(_trail) > MAX_TRAIL:
            return
        _trail.append(entry)
        head, later = _trail[0][0], [list(e) for e in _trail[1:]]
    try:
        if not later:
            with open(os.path.join(d, key + ".trail"), encoding="utf-8") as f:
                listed = json.load(f)
            listed = [[k, bool(q)] for k, q in listed if isinstance(k, str) and _HEX.fullmatch(k)]
            with _lock:
                _trail_read = listed[:MAX_TRAIL]
            for k, q in _trail_read:
                _read_ahead(d, k, q)
        elif _trail_read[:len(later)] != later:
            _write_atomic(d, head + ".trail", json.dumps(later).encode())
    except Exception:  # noqa: BLE001 - no trail file, a malformed one, a full disk
        pass


def _read_ahead(d: str, key: str, fast: bool) -> None:
    """Starts loading stored program ``key`` on the read-ahead threads, unless it is in
    memory, pending or not on disk."""
    path = os.path.join(d, key + ".exe")
    with _lock:
        if key in (_quick_memory if fast else _memory) or key in _pending:
            return
        if not os.path.exists(path):
            return
        _pending[key] = _threads.pool("read-ahead", READ_AHEAD_THREADS).submit(
            _load_quietly, path)


def _load_quietly(path: str):
    try:
        return _load(path)
    except Exception:  # noqa: BLE001 - the caller's own load then deletes a bad file
        return None


def _take_read_ahead(key: str):
    """The executable a read-ahead load of ``key`` gave, waiting for it if it is running;
    None where there was none, it failed, or it had not started (then cancelled: the caller
    loads it itself rather than wait behind others)."""
    global read_ahead_used
    with _lock:
        fut = _pending.pop(key, None)
    if fut is None or fut.cancel():
        return None
    exe = fut.result()
    if exe is not None:
        read_ahead_used += 1
    return exe


class cached:  # noqa: N801 - used like a decorator-made function
    """``fn`` (a ``jax.jit`` function with static positional ``static_argnums``), called
    through the on-disk executable cache when it is on (module docstring), else directly.

    Only positional arguments; the result is ``fn(*args)``'s. ``quick``: inside a
    :func:`quick` block the program is compiled with the :data:`QUICK` options (whether the
    on-disk cache is on or not). ``light``: the options of a :func:`light` block (True:
    :data:`LIGHT`; a dict: those, e.g. :data:`LIGHT_LLVM1`); False keeps XLA's defaults
    there (a program measured to run slower without the fusion emitters).
    ``light_anywhere``: those options on every CPU fit, in a :func:`light` block or not,
    for a program measured to run as fast with them at every size (:data:`LIGHT_LLVM1`).
    ``name``: the program's name in its keys (default: ``fn``'s module and name), for a
    second ``cached`` of one ``fn`` with other options (the classifier's search step)."""

    def __init__(self, fn, static_argnums: tuple, quick: bool = False, light=True,
                 light_anywhere: bool = False, name: str | None = None):
        self.fn = fn
        self.static_argnums = tuple(static_argnums)
        self.name = name or f"{fn.__module__}.{fn.__qualname__}"
        self.quick = quick
        self.light = LIGHT if light is True else (dict(light) if light else None)
        self.light_anywhere = bool(light_anywhere)
        self.__wrapped__ = fn

    def _resolved(self, args: tuple):
        """``(directory, tier, dynamic arguments, key)`` of a call with ``args``, or None
        where it goes to the jitted function itself (no cache and no light or quick
        options, several devices, or no key)."""
        d = _directory
        tier = ("quick" if self.quick and getattr(_local, "quick", False)
                else _tier(self.light, self.light_anywhere))
        if (d is None and not tier) or jax.device_count() != 1:
            return None
        static = tuple(args[i] for i in self.static_argnums)
        dynamic = tuple(a for i, a in enumerate(args) if i not in self.static_argnums)
        key = _key(self.name + (f" {tier}" if tier else ""), static, dynamic)
        return None if key is None else (d, tier, dynamic, key)

    def ahead(self, *args):
        r"""Starts compiling the program of a later call with arguments like ``args`` (the
        array arguments may be :class:`jax.ShapeDtypeStruct`\ s) on a background thread,
        and returns the program's outputs as :class:`jax.ShapeDtypeStruct`\ s; None (and
        nothing started) where that call would not compile here: the executable is in
        memory, on disk, being loaded or compiled already, or the call goes to the jitted
        function itself. The program is traced and lowered in the calling thread; the
        call that follows takes the executable (waiting for it if need be), so it is
        compiled once, with the options and under the key that call would use.

        Why (forty-sixth session, issue 27): XLA's compilation runs outside the GIL, so a
        fit that names its next program before it waits for the current one's compilation
        traces and lowers the next one meanwhile, and the two compilations share the
        cores (:func:`jaxtree.search.step_function`'s two programs and the held-out
        errors: the demo's first fit about 1 s shorter, BENCHMARKS.md, "Compiling a fit's
        next programs ahead"). Worth it for programs that take a while to compile: chains
        of small ones (a small table's shape stage, the pair screen's) left whole fits
        level, their tracing competing with the compilations for the cores."""
        _ensure_lapack()
        r = self._resolved(args)
        if r is None or not _would_compile(r):
            return None
        d, tier, _, key = r
        try:
            traced = self.fn.trace(*args)
            lowered = traced.lower()
        except Exception:  # noqa: BLE001 - the call itself will raise its own error
            return None
        with _lock:
            if key in _compiling:
                return None
            awaited = getattr(_local, "deferred", None)
            # in a while_waiting task: after the compilations then in flight, not beside them
            before = [] if awaited is None else [
                f for f in (*_compiling.values(), awaited)
                if not f.done() and not getattr(f, "deferred", False)]
            fut = _threads.pool("compile", COMPILE_THREADS).submit(
                _compile_after, before, lowered, self._options(tier), d is not None)
            fut.deferred = awaited is not None
            _compiling[key] = fut
        return traced.out_info

    def compiles(self, *args) -> bool:
        """Whether :meth:`ahead` with ``args`` would start a compilation: the program is
        neither in memory, nor on disk, nor being loaded or compiled, and the call does not
        go to the jitted function itself. Nothing is traced (a caller that must trace
        something else first to name the program, as
        :func:`jaxtree._fit.classify.binary_step` does, asks this before)."""
        r = self._resolved(args)
        return r is not None and _would_compile(r)

    def _options(self, tier: str) -> dict:
        """The compile options of a program of this tier."""
        return {**_MARK, **(QUICK if tier == "quick" else
                            _light_options(self.light) if tier == "light" else {})}

    def __call__(self, *args):
        _ensure_lapack()  # before any program is loaded or lowered: 0.03 s, once
        r = self._resolved(args)
        if r is None:
            return self.fn(*args)
        d, tier, dynamic, key = r
        fast = bool(tier)  # kept apart from the default executables
        with _lock:
            memory = _quick_memory if fast else _memory
            exe = memory.get(key)
            if exe is not None:
                memory.move_to_end(key)
        if exe is None:
            if d is not None:
                _follow(d, key, fast)
            exe, path = self._get(d, key, args, dynamic, tier)
            if exe is None:
                return self.fn(*args)
            if path is not None:  # loaded from disk: its first call is checked
                try:
                    return jax.block_until_ready(exe(*dynamic))
                except Exception:  # noqa: BLE001 - a file that does not run is a miss
                    _discard(path)
                    with _lock:
                        memory.pop(key, None)
                    return self.fn(*args)
        return exe(*dynamic)

    def _get(self, d, key: str, args: tuple, dynamic: tuple, tier: str):
        """``(executable, path)``: loaded from ``path``, or compiled (path None; stored
        when possible), or ``(None, None)`` when it cannot be compiled here. ``d`` None:
        compiled and kept in memory only (a :func:`quick` or :func:`light` program with the
        cache off); ``tier``: ``"quick"`` with the :data:`QUICK` options, ``"light"`` with
        the program's light ones (:func:`_light_options`), ``""`` as always."""
        fast = bool(tier)
        name = key + ".exe"
        path = None if d is None else os.path.join(d, name)
        exe = None if path is None else _take_read_ahead(key)
        if exe is None and path is not None and os.path.exists(path):
            try:
                exe = _load(path, jax.tree_util.tree_structure((dynamic, {})))
            except Exception:  # noqa: BLE001 - a bad file is a miss, never an error
                _discard(path)
        with _lock:
            ahead = _compiling.pop(key, None)  # a loaded file leaves it unused
        if exe is not None:
            loaded = path
        else:
            loaded = None
            if (ahead is not None and getattr(_local, "waiting", None) and not ahead.done()
                    and _core_free()):
                _run_waiting(ahead)  # this thread's next programs, traced while this one compiles
            try:
                exe, hit = ahead.result() if ahead is not None else (None, False)
            except Exception:  # noqa: BLE001 - compiled here instead
                exe, hit = None, False
            if exe is None:
                try:
                    exe, hit = _compile(self.fn.lower(*args), self._options(tier), d is not None)
                except Exception:  # noqa: BLE001 - let the plain call raise its own error
                    return None, None
            if hit:
                _broken.add(key)
            if d is not None and key not in _broken:
                try:
                    _store(d, name, exe)
                except Exception:  # noqa: BLE001 - e.g. not serialisable: use it in memory
                    _broken.add(key)
        with _lock:
            memory = _quick_memory if fast else _memory
            memory[key] = exe
            while len(memory) > (MAX_QUICK_IN_MEMORY if fast else MAX_IN_MEMORY):
                memory.popitem(last=False)
        return exe, loaded


def _would_compile(resolved) -> bool:
    """Whether the program of a :meth:`cached._resolved` call is to be compiled: not in
    memory, not being loaded or compiled, not on disk."""
    d, tier, _, key = resolved
    with _lock:
        if (key in (_quick_memory if tier else _memory) or key in _pending
                or key in _compiling):
            return False
    return not (d is not None and os.path.exists(os.path.join(d, key + ".exe")))


def _compile_after(before: list, lowered, options: dict, stored: bool):
    """:func:`_compile` once the futures ``before`` (compilations submitted earlier) are done.
    No deadlock: the pool runs its jobs in the order submitted, so each of ``before`` runs
    or has run when this one starts."""
    if before:
        concurrent.futures.wait(before)
    return _compile(lowered, options, stored)


def _compile(lowered, options: dict, stored: bool):
    """``(executable, hit)``: ``lowered`` compiled with ``options`` (``stored``: for the
    on-disk cache); ``hit``: JAX's persistent cache served it even so (not to be stored).

    An executable JAX loaded from its persistent cache is not stored: XLA's CPU client
    cannot serialise a loaded executable again (measured with jaxlib 0.10.2: the copy
    loads, then fails at run time with "Function ... not found"). Only fresh compilations
    are written. :data:`_MARK` keeps the plain jitted programs' entries in JAX's cache
    (other code paths) from being such hits here; an older jaxtree's entry of the same
    program is compiled afresh under :data:`_RETRY` (:func:`_unshared`). The hits are
    counted on the compiling thread (:func:`_count_hits`)."""
    hits = getattr(_local, "hits", 0)
    with _unshared() if stored else contextlib.nullcontext():
        exe = lowered.compile(compiler_options=options)
        if getattr(_local, "hits", 0) != hits and stored:
            hits = getattr(_local, "hits", 0)
            exe = lowered.compile(compiler_options={**options, **_RETRY})
    return exe, getattr(_local, "hits", 0) != hits


def _discard(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
