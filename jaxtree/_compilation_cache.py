"""JAX's persistent compilation cache, on by default, so a second process fits fast.

A first fit compiles the search step, the scorer, the refinement and prediction: several
seconds on a 2-core CPU, for every new process, although the programs are the same each
time. JAX can keep compiled programs on disk (its *persistent compilation cache*); a later
process with the same shapes, dtypes and settings then loads them instead of compiling.
``benchmarks/bench_first_fit.py`` measures the effect on the demo's fit.

What this module does, at the first fit (never at import):

* If the user has configured a cache (``jax.config.jax_compilation_cache_dir`` set, or the
  ``JAX_COMPILATION_CACHE_DIR`` environment variable) or disabled JAX's cache
  (``jax_enable_compilation_cache=False``), nothing is changed.
* If jaxtree's cache is turned off (``JAXTREE_COMPILATION_CACHE=0``, or ``false``/``no``/
  ``off``, in the environment, or :func:`disable` called), nothing is changed.
* Otherwise it uses ``$XDG_CACHE_HOME/jaxtree/jax`` (``~/.cache/jaxtree/jax`` when
  ``XDG_CACHE_HOME`` is unset or not absolute, as the XDG spec says), created with mode
  ``0o700``. It sets ``jax_compilation_cache_dir`` to it and, only when the user left it at
  JAX's default, ``jax_persistent_cache_min_compile_time_secs`` to
  :data:`MIN_COMPILE_TIME_SECS`.

Known hazard (JAX 0.10, seen once in development). JAX writes a cache entry with a plain
``write_bytes``, not atomically: a process killed while writing, or two processes writing the
same entry at once, can leave a truncated file, and a later process that reads it can abort
inside XLA's deserialiser (a crash, not an exception). The remedy is to delete the directory
(``rm -rf ~/.cache/jaxtree/jax``; it only holds compiled programs) or to turn the cache off
with ``JAXTREE_COMPILATION_CACHE=0``. The test suite runs with the cache off.

Security. JAX treats the cache as trusted code: whoever can write to the directory can make
this process run arbitrary code. So the directory (and its parent ``jaxtree``) must be
owned by the current user and not writable by group or others. An existing directory that
fails this check is refused, with one warning per process, and the fit runs without the
cache. A directory jaxtree creates gets mode ``0o700``.

Why a library turns on a global JAX option (README-ready text). jaxtree's rule is that the
library never changes global JAX configuration (x64, devices, precision): those are the
user's. The persistent cache is the one exception, asked for in issue 12 ("a fast first
fit"): the compilation of a fit costs seconds in every new process, which is most of the
time of a small fit, and scripts, notebooks and the command line start new processes all
the time. The exception is acceptable because (1) it changes no numerical result (a cached
program is the program XLA would compile); (2) it is set lazily at the first fit, never at
import; (3) it is set only when the user has not configured a cache, and a
user's choice always wins; (4) it is off with ``JAXTREE_COMPILATION_CACHE=0`` or
``jaxtree.disable_compilation_cache()``; (5) it uses a private per-user directory, refused
when others could write to it. A side effect to know: other JAX programs in the same
process compile into the same cache after jaxtree's first fit (JAX's cache is
process-global); call ``jaxtree.disable_compilation_cache()`` before the first fit if that
is unwanted.

Decision on ``MIN_COMPILE_TIME_SECS``: JAX's default (1 s) stores only programs whose
compilation took longer than a second. Measured on the 2-core CPU (jax 0.10.2), the demo's
fit (n=1000, p=10, k=10) compiles 13 programs: the search step (19.5 s) and 12 small ones
(reshapes, pads, broadcasts, dtype conversions: 0.01-0.10 s each, 0.6 s together). 0.05 s
stores the step and the five slowest small ones and skips the tiniest, whose lookup would
cost about what compiling them does, so that other JAX code in the process does not fill the
directory with entries of a few kB. The cache has no size limit (JAX's default; a limit
needs the optional ``filelock`` package): the demo's entries take 0.3 MB. Delete the
directory to clear it. ``jax_persistent_cache_min_entry_size_bytes`` stays at JAX's
default (0: JAX picks the filesystem's minimum, 0 for a local disk), so small programs are
not excluded by size.

(Since issue 12's capacity buckets and host-side chunking the demo's fit compiles only
the search step and one small loss program, so the small programs above are no longer
part of a fit; the threshold still keeps other code's tiny programs out.)

What the cache cannot remove: JAX still traces and lowers every function in a new process
(the cache key is computed from the lowered program), and loading a cached executable is
not free: it grows with the executable (0.3-0.4 s for the greedy step, 0.6-0.9 s for the
backfit step at the demo's shape). So a fit keeps its distinct jitted programs few: the
held-out size selection and the refit share one compiled step (the step's traced
``max_ops`` in a rounded-up capacity, :func:`jaxtree.program.capacity_for`), and the data
are chunked and the empty program built in numpy, so no small eager programs are compiled
(``benchmarks/bench_first_fit.py``; BENCHMARKS.md, "First fit in a fresh process"). The
rest is tracing (about 1 s for the backfit step, 0.5 s for the greedy one), lowering
(0.5 s / 0.35 s) and loading. ``jax.export`` (a serialised step, no tracing or lowering)
was measured and not adopted: it needs the optional ``flatbuffers`` package and cache keys
of our own, saved 0.7 s on the greedy fit and none on the backfit fit. What removes the
tracing and lowering instead: :mod:`jaxtree._executables` keeps the compiled search step
and held-out loss themselves, under keys of its own, in ``executables`` beside this
directory (same rules: private, on exactly when this cache is on, off with it).
"""

from __future__ import annotations

import os
import stat
import sys
import threading
import warnings

ENV_VAR = "JAXTREE_COMPILATION_CACHE"
"""Environment variable; ``0``, ``false``, ``no`` or ``off`` turns jaxtree's cache off."""

MIN_COMPILE_TIME_SECS = 0.05
"""Programs that took at least this long to compile are stored (JAX's default is 1 s)."""

_JAX_DEFAULT_MIN_COMPILE_TIME_SECS = 1.0
_OFF_VALUES = ("0", "false", "no", "off")

_lock = threading.Lock()
_decided = False  # enable() ran its checks once in this process (the outcome is final)
_disabled = False  # disable() was called
_ours: dict = {}  # the options enable() set, to undo in disable(): {option: previous value}


def default_cache_dir() -> str:
    """The directory jaxtree uses: ``$XDG_CACHE_HOME/jaxtree/jax`` or ``~/.cache/jaxtree/jax``.

    Returns:
      An absolute path (it may not exist yet).
    """
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG spec: a relative path is invalid, ignore it
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jaxtree", "jax")


def env_off() -> bool:
    """Whether ``JAXTREE_COMPILATION_CACHE`` turns the cache off in this environment."""
    return os.environ.get(ENV_VAR, "").strip().lower() in _OFF_VALUES


def _insecure_reason(path: str) -> str | None:
    """Why ``path`` must not hold trusted code, or None when it is safe.

    Safe: a real directory (not a symlink), owned by the current user, not writable by
    group or others. Where the platform has no user ids (Windows) only the type is checked.
    """
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"cannot be inspected ({exc})"
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if hasattr(os, "getuid"):
        if st.st_uid != os.getuid():
            return f"is owned by user id {st.st_uid}, not by the current user ({os.getuid()})"
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return (f"is writable by group or others (mode {stat.S_IMODE(st.st_mode):#o}); "
                    f"fix it with: chmod 700 {path}")
    return None


def _make_private_dir(path: str) -> None:
    """Creates ``path`` and missing parents with mode 0o700 (existing ones are left as they are)."""
    parent = os.path.dirname(path)
    if parent and not os.path.isdir(parent):
        _make_private_dir(parent)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        return
    os.chmod(path, 0o700)  # mkdir's mode is filtered by the umask; make it exact


def enable() -> str | None:
    """Turns on JAX's persistent compilation cache in jaxtree's private directory, if allowed.

    Called at the start of :meth:`jaxtree.TreeRegressor.fit` and :func:`jaxtree.fit_batch`.
    Idempotent and thread-safe: the checks run once per process and their outcome is kept
    (a refused directory warns once). It does nothing when the user configured JAX's cache
    (``jax_compilation_cache_dir``, ``JAX_COMPILATION_CACHE_DIR``,
    ``jax_enable_compilation_cache=False``), when ``JAXTREE_COMPILATION_CACHE=0``, or after
    :func:`disable`.

    Returns:
      The cache directory this call or an earlier one set, or None when jaxtree did not set
      one (off, configured by the user, or refused).

    Warns:
      UserWarning: once, when the directory exists with an unsafe owner or permissions, or
        cannot be created; the fit then runs without the cache.
    """
    global _decided
    with _lock:
        if _decided or _disabled:
            return _ours.get("jax_compilation_cache_dir", (None, None))[1]
        _decided = True
        if env_off():
            return None
        import jax  # noqa: PLC0415 - jaxtree imports jax anyway; keeps this module light

        if (jax.config.jax_compilation_cache_dir or os.environ.get("JAX_COMPILATION_CACHE_DIR")
                or not jax.config.jax_enable_compilation_cache):
            return None  # the user's choice wins
        path = default_cache_dir()
        try:
            _make_private_dir(path)
        except OSError as exc:
            warnings.warn(f"jaxtree: could not create the compilation cache directory {path} "
                          f"({exc}); fitting without a persistent compilation cache. Set "
                          f"{ENV_VAR}=0 to silence this.", UserWarning, stacklevel=3)
            return None
        for d in (os.path.dirname(path), path):
            reason = _insecure_reason(d)
            if reason is not None:
                warnings.warn(
                    f"jaxtree: not using {path} as JAX's compilation cache: {d} {reason}. JAX "
                    "runs the cached programs as trusted code, so the directory must be private "
                    "(owned by you, mode 0o700). Fitting without a persistent compilation "
                    f"cache. Fix the permissions, or set {ENV_VAR}=0 to silence this.",
                    UserWarning, stacklevel=3)
                return None
        # The compiled search steps themselves (no tracing in a new process) beside it,
        # under the same rules: jaxtree._executables.
        exe_path = os.path.join(os.path.dirname(path), "executables")
        try:
            _make_private_dir(exe_path)
            exe_ok = _insecure_reason(exe_path) is None
        except OSError:
            exe_ok = False
        if exe_ok:
            from jaxtree import _executables  # noqa: PLC0415 - imports jax

            _executables.enable(exe_path)
        _ours["jax_compilation_cache_dir"] = (None, path)
        jax.config.update("jax_compilation_cache_dir", path)
        min_time = jax.config.jax_persistent_cache_min_compile_time_secs
        if min_time == _JAX_DEFAULT_MIN_COMPILE_TIME_SECS:  # not chosen by the user
            _ours["jax_persistent_cache_min_compile_time_secs"] = (min_time, MIN_COMPILE_TIME_SECS)
            jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_TIME_SECS)
        return path


def disable() -> None:
    """Turns jaxtree's persistent compilation cache off for the rest of the process.

    Call it before the first fit to keep jaxtree from touching JAX's configuration (or set
    the environment variable ``JAXTREE_COMPILATION_CACHE=0``). Called after a fit that
    turned the cache on, it restores the options jaxtree set (``jax_compilation_cache_dir``
    and ``jax_persistent_cache_min_compile_time_secs``, when they still hold jaxtree's
    values) and resets JAX's cache, so later compilations are not stored. A cache the user
    configured is never touched.

    Examples:
      >>> import jaxtree
      >>> jaxtree.disable_compilation_cache()  # doctest: +SKIP
    """
    global _disabled
    with _lock:
        _disabled = True
        if "jaxtree._executables" in sys.modules:
            sys.modules["jaxtree._executables"].enable(None)
        if not _ours:
            return
        import jax  # noqa: PLC0415
        from jax.experimental.compilation_cache import compilation_cache  # noqa: PLC0415

        for option, (previous, ours) in _ours.items():
            if getattr(jax.config, option) == ours:  # the user has not changed it since
                jax.config.update(option, previous)
        _ours.clear()
        compilation_cache.reset_cache()


# ------------------------------------------------------------------ inspecting and clearing

PARTS = ("jax", "executables")
"""jaxtree's cache directory's parts: JAX's persistent cache and the executables
(:mod:`jaxtree._executables`)."""


def usage() -> dict:
    """``{part: (files, bytes)}`` for each of :data:`PARTS` under jaxtree's cache directory
    (the parent of :func:`default_cache_dir`), ``(0, 0)`` for a part that does not exist.
    Nothing is created.

    Why (fifty-third session): entries are never removed by jaxtree, and every new version
    of jaxtree, JAX or the table's size bucket adds some (the executables' keys hold the
    source and the versions), so the directory only grows; ``jaxtree cache`` shows it and
    ``jaxtree cache --clear`` empties it."""
    root = os.path.dirname(default_cache_dir())
    out = {}
    for part in PARTS:
        files = size = 0
        for here, _, names in os.walk(os.path.join(root, part)):
            for name in names:
                try:
                    size += os.lstat(os.path.join(here, name)).st_size
                    files += 1
                except OSError:  # removed meanwhile by another process
                    pass
        out[part] = (files, size)
    return out


def clear() -> dict:
    """Deletes the files of :data:`PARTS` under jaxtree's cache directory and returns what
    it deleted, counted as :func:`usage` counts. The directories stay (private, as they were);
    a part that is a symbolic link or not a directory is left alone, with a ``ValueError``
    naming it, so nothing outside jaxtree's own directory is removed. A cache the user
    configured for JAX (``jax_compilation_cache_dir``, ``JAX_COMPILATION_CACHE_DIR``) is not
    jaxtree's and is never touched. A process fitting meanwhile loses nothing but speed: an
    entry removed under it is a miss, compiled again."""
    root = os.path.dirname(default_cache_dir())
    for part in PARTS:
        path = os.path.join(root, part)
        if os.path.lexists(path) and (os.path.islink(path) or not os.path.isdir(path)):
            raise ValueError(f"{path} is not a directory jaxtree made (a symbolic link or a "
                             "file); not clearing it. Remove it yourself if it is yours.")
    out = {}
    for part in PARTS:
        files = size = 0
        for here, dirs, names in os.walk(os.path.join(root, part), topdown=False):
            for name in names:
                path = os.path.join(here, name)
                try:
                    bytes_ = os.lstat(path).st_size
                    os.unlink(path)
                except FileNotFoundError:  # removed meanwhile by another process
                    continue
                files, size = files + 1, size + bytes_
            for name in dirs:
                try:
                    os.rmdir(os.path.join(here, name))
                except OSError:  # not empty: another process wrote into it meanwhile
                    pass
        out[part] = (files, size)
    return out
