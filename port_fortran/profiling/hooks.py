"""Build port-fortran's Kokkos Tools library and the environment that makes Kokkos load it.

The library (``kokkosp_timer.cpp`` next to this file) is plain C++ with no Kokkos header, so
one build serves every Kokkos version and backend on the machine. It is compiled once with
the host C++ compiler into ``<cache>/profiling/<key>/libpf_kokkosp.so``, ``<cache>`` being
``$PORT_FORTRAN_CACHE`` or ``~/.cache/port-fortran`` and ``<key>`` a hash of the source,
the compiler and the flags: an edited source gets a fresh build, an unchanged one costs a
hash and a ``stat``. Builds go to a temporary name and are renamed into place, so
concurrent workers never load a half-written library.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import threading
from pathlib import Path
from typing import Optional, Union

from ..cache import cache_root
from ..build_runner.sandbox import Limits, run_limited

SOURCE = Path(__file__).with_name("kokkosp_timer.cpp")
LIB_NAME = "libpf_kokkosp.so"
CXX_FLAGS = ("-O2", "-shared", "-fPIC", "-std=c++17")
OUTPUT_ENV = "PF_KOKKOSP_OUTPUT"
WARMUP_ENV = "PF_KOKKOSP_WARMUP"
# Kokkos 3.x reads KOKKOS_PROFILE_LIBRARY; 4.x+ reads KOKKOS_TOOLS_LIBS (and still reads the
# old name, aborting if both are set to different libraries).
LIBRARY_ENVS = ("KOKKOS_TOOLS_LIBS", "KOKKOS_PROFILE_LIBRARY")
BUILD_LIMITS = Limits(wall_s=180.0, mem_mb=None, output_bytes=200_000)

_build_lock = threading.Lock()


class ProfilingError(RuntimeError):
    """Profiling is unavailable or its output unreadable. Timings still stand without it:
    callers treat this as "no per-kernel times", never as a failed port."""


class ProfileMissing(ProfilingError):
    """The program left no profile (see :func:`port_fortran.profiling.read_profile`)."""


def hooks_cache_dir() -> Path:
    return cache_root() / "profiling"


def find_host_cxx() -> Optional[str]:
    """The host C++ compiler. ``$CXX`` is not used on purpose: it may be a device compiler
    wrapper (nvcc_wrapper, hipcc) that the ports are built with."""
    for name in ("c++", "g++", "clang++"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _key(source: bytes, cxx: str) -> str:
    h = hashlib.sha256()
    h.update(source)
    h.update(b"\0" + os.path.realpath(cxx).encode() + b"\0" + " ".join(CXX_FLAGS).encode())
    return h.hexdigest()[:16]


def build_hooks(cache_dir: Union[str, Path, None] = None, *, compiler: Optional[str] = None) -> Path:
    """Path of the built profiling library, compiling it when the source changed.

    ``cache_dir`` defaults to :func:`hooks_cache_dir`; ``compiler`` to :func:`find_host_cxx`.
    Raises :class:`ProfilingError` when no C++ compiler is found or the build fails."""
    cxx = compiler or find_host_cxx()
    if not cxx:
        raise ProfilingError("no host C++ compiler (c++, g++ or clang++) on PATH to build the "
                             "Kokkos profiling hooks; per-kernel times are unavailable")
    source = SOURCE.read_bytes()
    out_dir = Path(cache_dir) if cache_dir is not None else hooks_cache_dir()
    out_dir = out_dir / _key(source, cxx)
    lib = out_dir / LIB_NAME
    if lib.is_file():
        return lib
    with _build_lock:
        if lib.is_file():
            return lib
        out_dir.mkdir(parents=True, exist_ok=True)
        tmp = out_dir / f".{LIB_NAME}.{os.getpid()}.{threading.get_ident()}.tmp"
        cmd = [cxx, *CXX_FLAGS, "-o", str(tmp), str(SOURCE)]
        res = run_limited(cmd, out_dir, BUILD_LIMITS)
        if not res.ok or not tmp.is_file():
            tmp.unlink(missing_ok=True)
            tail = " | ".join((res.stderr or res.stdout or "").strip().splitlines()[-5:])
            why = res.killed_reason or f"exit code {res.returncode}"
            raise ProfilingError(f"building the Kokkos profiling hooks failed ({why}): "
                                 f"{' '.join(cmd)}{': ' + tail if tail else ''}")
        os.replace(tmp, lib)
    return lib


def profiling_env(lib: Union[str, Path], output_path: Union[str, Path], warmup: int = 0) -> dict[str, str]:
    """Environment variables that make a Kokkos program load ``lib`` and write its profile
    to ``output_path`` (made absolute, as the program may run elsewhere). ``warmup``: the
    first that many completions of each kernel label (and each deep-copy direction, region,
    fence) are left out of the times and counted as ``skipped``. Merge them on top
    of the run's environment, e.g. ``run_limited(cmd, cwd, limits, env_extra={**env,
    **profiling_env(lib, out)})``. Both library variables get the same value: Kokkos 3.x
    reads only KOKKOS_PROFILE_LIBRARY, 4.x+ prefers KOKKOS_TOOLS_LIBS (and prints a
    deprecation warning about the other on stderr) and aborts when they differ, so setting
    both also overrides a stale one inherited from the user's shell."""
    lib_s = str(Path(lib).resolve())
    env = {name: lib_s for name in LIBRARY_ENVS}
    env[OUTPUT_ENV] = str(Path(output_path).absolute())
    if warmup < 0:
        raise ValueError("warmup must be >= 0")
    env[WARMUP_ENV] = str(int(warmup))
    return env
