"""Configure and build a CMake project against a Kokkos install, for one backend.

Each backend builds in its own build directory, so builds for several backends can run at
the same time (:func:`build_many`). Configure and build run in the sandbox with limits;
their messages become :class:`ir.Diagnostic` records and a condensed summary.

What the configure passes: ``-DKokkos_ROOT=<prefix>``, ``-DCMAKE_BUILD_TYPE=Release``,
``-DPF_BACKEND=<backend>``, ``-DCMAKE_CXX_STANDARD=<n>`` (at least what the install needs:
17, or 20 for Kokkos 5), the install's own extra flags as ``CMAKE_CXX_FLAGS`` (e.g. a CUDA
13 shim header), and for CUDA ``CMAKE_CXX_COMPILER=<prefix>/bin/nvcc_wrapper``.
"""
from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

from ..errors import ToolMissing
from ..records import BuildResult
from .diagnostics import condense, parse_diagnostics
from .kokkos import KokkosInstall
from .sandbox import BUILD_LIMITS, Limits, run_limited

__all__ = ["configure_and_build", "build_many", "parse_diagnostics", "condense", "default_jobs", "cmake_exe",
           "cmake_info", "CMakeInfo", "MIN_CMAKE"]

MIN_CMAKE = (3, 16)  # what Kokkos 3.4 and 4.x need; the cmake wheel brings a newer one


def default_jobs() -> int:
    env = os.environ.get("PORT_FORTRAN_BUILD_JOBS")
    if env and env.isdigit() and int(env) > 0:
        return int(env)
    return max(1, min(os.cpu_count() or 1, 8))


@dataclass(frozen=True)
class CMakeInfo:
    """The CMake every build uses, and where it comes from."""

    path: str
    version: str
    source: str  # 'PORT_FORTRAN_CMAKE' | 'python-package' (the `cmake` wheel) | 'PATH'

    def describe(self) -> str:
        where = {"python-package": "the cmake Python package", "PATH": "PATH",
                 "PORT_FORTRAN_CMAKE": "PORT_FORTRAN_CMAKE"}.get(self.source, self.source)
        return f"cmake {self.version} ({self.path}, from {where})"


def _cmake_version(exe: str) -> str:
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    m = re.search(r"cmake version (\S+)", out)
    return m.group(1) if m else ""


def _version_ok(version: str) -> bool:
    from .kokkos import version_tuple

    return bool(version) and version_tuple(version) >= MIN_CMAKE


@lru_cache(maxsize=8)
def _find_cmake(override: str, path_env: str) -> Optional[CMakeInfo]:
    if override:
        exe = shutil.which(override)
        if exe is None:
            raise ToolMissing(f"PORT_FORTRAN_CMAKE={override}: no such executable")
        return CMakeInfo(exe, _cmake_version(exe), "PORT_FORTRAN_CMAKE")
    try:  # the `cmake` wheel of this Python's environment: current, and needs no root
        import cmake as _cmake_pkg

        exe = os.path.join(getattr(_cmake_pkg, "CMAKE_BIN_DIR", "") or "/nonexistent", "cmake")
        if os.access(exe, os.X_OK):
            v = _cmake_version(exe)
            if _version_ok(v):
                return CMakeInfo(exe, v, "python-package")
    except ImportError:
        pass
    exe = shutil.which("cmake", path=path_env or None)
    if exe:
        v = _cmake_version(exe)
        if _version_ok(v):
            return CMakeInfo(exe, v, "PATH")
    return None


def cmake_info(required: bool = True) -> Optional[CMakeInfo]:
    """The CMake to build with: ``$PORT_FORTRAN_CMAKE`` if set; else the ``cmake`` Python
    package installed with port-fortran (a current CMake, no root needed); else the first
    ``cmake`` on PATH if it is at least 3.16. Raises ToolMissing (or returns None when not
    ``required``) when there is none."""
    info = _find_cmake(os.environ.get("PORT_FORTRAN_CMAKE", ""), os.environ.get("PATH", ""))
    if info is None and required:
        old = shutil.which("cmake")
        have = f" (the cmake on PATH, {old}, is {_cmake_version(old) or 'of unknown version'})" if old else ""
        raise ToolMissing(f"no CMake >= {'.'.join(map(str, MIN_CMAKE))} found{have}: "
                          f"{sys.executable} -m pip install 'cmake>=3.21' (no root needed)")
    return info


def cmake_exe() -> str:
    return cmake_info().path


def configure_args(source_dir, build_dir, backend: str, kokkos: Optional[KokkosInstall],
                   cmake_args: Sequence[str] = ()) -> list[str]:
    """The cmake configure command line (pure; exposed for tests and for users' logs)."""
    args = [cmake_exe(), "-S", str(source_dir), "-B", str(build_dir),
            "-DCMAKE_BUILD_TYPE=Release", f"-DPF_BACKEND={backend}"]
    user = " ".join(cmake_args)
    if kokkos is not None:
        args.append(f"-DKokkos_ROOT={kokkos.prefix}")
        if "CMAKE_CXX_STANDARD" not in user:
            args.append(f"-DCMAKE_CXX_STANDARD={kokkos.cxx_standard}")
        if kokkos.cxx_flags and "CMAKE_CXX_FLAGS" not in user:
            args.append(f"-DCMAKE_CXX_FLAGS={kokkos.cxx_flags}")
        if backend == "cuda" and "CMAKE_CXX_COMPILER" not in user:
            wrapper = kokkos.nvcc_wrapper()
            if wrapper:
                args.append(f"-DCMAKE_CXX_COMPILER={wrapper}")
    args.extend(cmake_args)
    return args


def _artifacts(build_dir: Path) -> dict[str, str]:
    """Executables and libraries the build produced (outside CMakeFiles/)."""
    found: dict[str, str] = {}
    for root, dirs, files in os.walk(build_dir):
        dirs[:] = [d for d in dirs if d != "CMakeFiles" and not d.startswith(".")]
        for f in files:
            p = Path(root) / f
            try:
                st = p.stat()
            except OSError:
                continue
            is_lib = f.endswith((".a", ".so")) or ".so." in f
            is_exe = bool(st.st_mode & stat.S_IXUSR) and "." not in f
            if is_lib or is_exe:
                found.setdefault(f, str(p))
    return found


def _drop_moved_cache(build_dir: Path) -> None:
    """A build tree copied or moved from elsewhere (a port directory copied to run
    ``verify`` again) keeps a CMakeCache.txt naming its old place, which cmake refuses to
    configure; its cache and CMakeFiles are removed so it configures afresh."""
    cache = build_dir / "CMakeCache.txt"
    try:
        text = cache.read_text(errors="replace")
    except OSError:
        return
    m = re.search(r"^CMAKE_CACHEFILE_DIR:INTERNAL=(.*)$", text, re.M)
    if m and Path(m.group(1).strip()).resolve() != build_dir.resolve():
        cache.unlink()
        shutil.rmtree(build_dir / "CMakeFiles", ignore_errors=True)


def configure_and_build(
    source_dir,
    build_dir,
    backend: str,
    kokkos: Optional[KokkosInstall],
    *,
    cmake_args: Sequence[str] = (),
    jobs: Optional[int] = None,
    limits: Optional[Limits] = None,
    target: Optional[str] = None,
    env_extra: Optional[Mapping[str, str]] = None,
) -> BuildResult:
    """Configure ``source_dir`` into ``build_dir`` for ``backend`` and build it.

    Never raises for a failed build: ``BuildResult.ok`` is False and ``diagnostics``/
    ``condensed`` say why. ``limits`` bound each of the two steps (default: 30 min wall,
    no memory limit)."""
    source_dir, build_dir = Path(source_dir), Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    _drop_moved_cache(build_dir)
    limits = limits or BUILD_LIMITS
    jobs = jobs or default_jobs()
    t0 = time.monotonic()
    log_parts: list[str] = []
    cfg = configure_args(source_dir, build_dir, backend, kokkos, cmake_args)
    env = {"CLICOLOR": "0", "CMAKE_COLOR_DIAGNOSTICS": "OFF", "LC_ALL": "C", "LANG": "C"}
    if env_extra:
        env.update(env_extra)
    res = run_limited(cfg, build_dir, limits, env_extra=env)
    log_parts.append("$ " + " ".join(cfg) + "\n" + res.stdout + res.stderr)
    ok = res.ok
    if ok:
        cmd = [cmake_exe(), "--build", str(build_dir), "-j", str(jobs)]
        if target:
            cmd += ["--target", target]
        res = run_limited(cmd, build_dir, limits, env_extra=env)
        log_parts.append("$ " + " ".join(cmd) + "\n" + res.stdout + res.stderr)
        ok = res.ok
    if not res.ok and res.killed_reason:
        log_parts.append(f"[port-fortran] build stopped: {res.killed_reason} "
                         f"(limit wall={limits.wall_s}s mem={limits.mem_mb}MiB)")
    log = "\n".join(log_parts)
    diags = parse_diagnostics(log, root=str(source_dir))
    summary = condense(diags, log if not ok else "", root=str(source_dir)) if (diags or not ok) else ""
    if not ok and res.killed_reason and res.killed_reason not in summary:
        summary = (summary + "\n" if summary else "") + f"build stopped: {res.killed_reason}"
    return BuildResult(
        backend=backend,
        ok=ok,
        cmake=cmake_info().describe(),
        build_dir=str(build_dir),
        seconds=time.monotonic() - t0,
        log=log,
        diagnostics=diags,
        condensed=summary,
        artifacts=_artifacts(build_dir) if ok else {},
    )


def build_many(jobs: Iterable[Mapping], max_parallel: Optional[int] = None) -> list[BuildResult]:
    """Run several :func:`configure_and_build` calls at once (threads; each is mostly a
    wait on a subprocess). Each job is a dict of its keyword arguments (``source_dir``,
    ``build_dir``, ``backend``, ``kokkos`` and optional ones). Results in job order. The
    make ``-j`` of each build defaults to the CPU count shared out between the builds."""
    jobs = [dict(j) for j in jobs]
    if not jobs:
        return []
    n = max_parallel or len(jobs)
    share = max(1, default_jobs() // min(n, len(jobs)))
    for j in jobs:
        j.setdefault("jobs", share)
    with ThreadPoolExecutor(max_workers=n) as pool:
        futures = [pool.submit(configure_and_build, **j) for j in jobs]
        return [f.result() for f in futures]
