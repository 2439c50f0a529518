"""Kokkos installs: find the ones a user already has, and build new ones into the cache.

An install is found through, in this order: ``Kokkos_ROOT``, ``CMAKE_PREFIX_PATH``, the
registry ``<cache>/kokkos/installs.json`` (written by :func:`install`), and the
directories under ``<cache>/kokkos/``, where ``<cache>`` is ``$PORT_FORTRAN_CACHE`` or
``~/.cache/port-fortran``. What an install provides (version, backends, architecture,
compiler, C++ standard) is read from the install itself: ``lib*/cmake/Kokkos/
KokkosConfigVersion.cmake``, ``KokkosConfigCommon.cmake`` and ``include/KokkosCore_config.h``.

Kokkos allows one device backend (CUDA or HIP) per install; Serial and OpenMP are host
backends and go together in one install.
"""
from __future__ import annotations

import fcntl
import json
import os
import re
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator, Optional

from ..cache import cache_root

HOST_BACKENDS = ("serial", "openmp")
DEVICE_BACKENDS = ("cuda", "hip")
_CONFIG_BACKENDS = {  # KokkosCore_config.h macro -> backend name
    "KOKKOS_ENABLE_SERIAL": "serial",
    "KOKKOS_ENABLE_OPENMP": "openmp",
    "KOKKOS_ENABLE_THREADS": "threads",
    "KOKKOS_ENABLE_CUDA": "cuda",
    "KOKKOS_ENABLE_HIP": "hip",
    "KOKKOS_ENABLE_SYCL": "sycl",
}


@dataclass
class KokkosInstall:
    prefix: str
    version: str
    backends: tuple[str, ...]
    arch: tuple[str, ...] = ()  # Kokkos_ARCH names as configured, e.g. ('HOPPER90',)
    cxx_compiler: str = ""  # the compiler Kokkos was built with (nvcc_wrapper for CUDA)
    cmake_dir: str = ""  # <prefix>/lib*/cmake/Kokkos
    cxx_standard: int = 17
    cxx_flags: str = ""  # extra flags the install was built with; consumers need them too
    found_via: str = ""  # 'Kokkos_ROOT', 'CMAKE_PREFIX_PATH', 'registry', 'cache'

    @property
    def version_tuple(self) -> tuple[int, ...]:
        return version_tuple(self.version)

    @property
    def device_backend(self) -> Optional[str]:
        return next((b for b in self.backends if b in DEVICE_BACKENDS), None)

    def has(self, backend: str) -> bool:
        return backend in self.backends

    def nvcc_wrapper(self) -> Optional[str]:
        for cand in (Path(self.prefix) / "bin" / "nvcc_wrapper", Path(self.cxx_compiler or "/nonexistent")):
            if cand.name == "nvcc_wrapper" and cand.is_file():
                return str(cand)
        return None

    def describe(self) -> str:
        arch = ",".join(self.arch) or "host"
        return f"Kokkos {self.version} [{','.join(self.backends)}] arch={arch} at {self.prefix}"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["backends"] = list(self.backends)
        d["arch"] = list(self.arch)
        return d


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


def min_cxx_standard(version: str) -> int:
    """The C++ standard an install of this version needs at least (Kokkos 5: C++20)."""
    v = version_tuple(version)
    return 20 if v and v[0] >= 5 else 17


# ------------------------------------------------------------------------- locations


def kokkos_cache_dir() -> Path:
    return cache_root() / "kokkos"


def registry_path() -> Path:
    return kokkos_cache_dir() / "installs.json"


# ------------------------------------------------------------------------- reading an install


def _cmake_dir(prefix: Path) -> Optional[Path]:
    """``<prefix>/lib*/cmake/Kokkos``; ``prefix`` may also be that directory itself."""
    if (prefix / "KokkosConfig.cmake").is_file():
        return prefix
    for lib in ("lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu", "lib32"):
        d = prefix / lib / "cmake" / "Kokkos"
        if (d / "KokkosConfig.cmake").is_file():
            return d
    return None


def _prefix_of(cmake_dir: Path, given: Path) -> Path:
    if cmake_dir != given:
        return given
    # given <prefix>/lib*/cmake/Kokkos: the nearest ancestor with an include/ directory
    for anc in list(cmake_dir.parents)[1:5]:
        if (anc / "include").is_dir():
            return anc
    return cmake_dir.parents[2]


def _config_header(prefix: Path) -> Optional[Path]:
    for cand in (prefix / "include" / "KokkosCore_config.h", prefix / "include" / "kokkos" / "KokkosCore_config.h"):
        if cand.is_file():
            return cand
    return None


def read_install(path, found_via: str = "") -> Optional[KokkosInstall]:
    """The install at ``path`` (a prefix or its ``lib/cmake/Kokkos``), or None if it is not one."""
    given = Path(path).expanduser()
    cdir = _cmake_dir(given)
    if cdir is None:
        return None
    prefix = _prefix_of(cdir, given)
    version = ""
    vfile = cdir / "KokkosConfigVersion.cmake"
    if vfile.is_file():
        m = re.search(r'set\(PACKAGE_VERSION\s+"([^"]+)"', vfile.read_text(errors="replace"))
        if m:
            version = m.group(1)
    common = cdir / "KokkosConfigCommon.cmake"
    common_text = common.read_text(errors="replace") if common.is_file() else ""
    backends: list[str] = []
    arch: list[str] = []
    std = 0
    header = _config_header(prefix)
    if header is not None:
        htext = header.read_text(errors="replace")
        defined = set(re.findall(r"^\s*#\s*define\s+(KOKKOS_\w+)", htext, re.M))
        backends = [name for macro, name in _CONFIG_BACKENDS.items() if macro in defined]
        arch = sorted(m[len("KOKKOS_ARCH_"):] for m in defined if m.startswith("KOKKOS_ARCH_"))
        stds = [int(m[len("KOKKOS_ENABLE_CXX"):]) for m in defined if re.fullmatch(r"KOKKOS_ENABLE_CXX\d\d", m)]
        std = max(stds) if stds else 0
    if not backends:
        m = re.search(r"SET\(Kokkos_DEVICES\s+([^)]*)\)", common_text, re.I)
        if m:
            backends = [b.lower() for b in m.group(1).split(";") if b.strip()]
            backends = [b for b in ("serial", "openmp", "threads", "cuda", "hip", "sycl") if b in backends]
    m = re.search(r"SET\(Kokkos_ARCH\s+([^)]*)\)", common_text, re.I)
    if m and m.group(1).strip():
        arch = [a.strip() for a in m.group(1).split(";") if a.strip()]  # the names the user configured
    m = re.search(r'SET\(Kokkos_CXX_COMPILER\s+"?([^")]*)"?\)', common_text, re.I)
    cxx = m.group(1).strip() if m else ""
    if not version:
        return None
    return KokkosInstall(
        prefix=str(prefix),
        version=version,
        backends=tuple(backends),
        arch=tuple(arch),
        cxx_compiler=cxx,
        cmake_dir=str(cdir),
        cxx_standard=max(std, min_cxx_standard(version)),
        found_via=found_via,
    )


# ------------------------------------------------------------------------- registry


@contextmanager
def _registry_lock() -> Iterator[None]:
    d = kokkos_cache_dir()
    d.mkdir(parents=True, exist_ok=True)
    with open(d / ".installs.lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def read_registry() -> list[dict]:
    p = registry_path()
    try:
        data = json.loads(p.read_text())
    except (OSError, ValueError):
        return []
    entries = data.get("installs", []) if isinstance(data, dict) else data
    return [e for e in entries if isinstance(e, dict) and e.get("prefix")]


def record_install(inst: KokkosInstall, **extra) -> None:
    """Add (or replace, by prefix) ``inst`` in the registry."""
    with _registry_lock():
        entries = [e for e in read_registry() if os.path.realpath(e["prefix"]) != os.path.realpath(inst.prefix)]
        entry = inst.to_dict()
        entry.pop("found_via", None)
        entry.update(extra)
        entry.setdefault("recorded", time.strftime("%Y-%m-%dT%H:%M:%S"))
        entries.append(entry)
        p = registry_path()
        tmp = p.with_suffix(".json.tmp")
        tmp.write_text(json.dumps({"installs": entries}, indent=2) + "\n")
        os.replace(tmp, p)


# ------------------------------------------------------------------------- finding


def _env_prefixes() -> list[tuple[str, str]]:
    out = []
    for var in ("Kokkos_ROOT", "KOKKOS_ROOT", "Kokkos_DIR"):
        v = os.environ.get(var)
        if v:
            out.append((v, "Kokkos_ROOT" if var != "Kokkos_DIR" else "Kokkos_DIR"))
    for v in os.environ.get("CMAKE_PREFIX_PATH", "").split(os.pathsep):
        if v:
            out.append((v, "CMAKE_PREFIX_PATH"))
    return out


def find_installs() -> list[KokkosInstall]:
    """Every Kokkos install found, the user's own (``Kokkos_ROOT``, ``CMAKE_PREFIX_PATH``)
    first, then the ones in the registry and the cache. Each prefix appears once."""
    seen: set[str] = set()
    found: list[KokkosInstall] = []

    def add(path: str, via: str, flags: str = "") -> None:
        inst = read_install(path, via)
        if inst is None:
            return
        key = os.path.realpath(inst.prefix)
        if key in seen:
            return
        seen.add(key)
        inst.cxx_flags = flags
        found.append(inst)

    reg = read_registry()
    flags_of = {os.path.realpath(e["prefix"]): e.get("cxx_flags", "") or "" for e in reg}
    for path, via in _env_prefixes():
        add(path, via, flags_of.get(os.path.realpath(os.path.expanduser(path)), ""))
    for e in reg:
        add(e["prefix"], "registry", e.get("cxx_flags", "") or "")
    cdir = kokkos_cache_dir()
    if cdir.is_dir():
        for sub in sorted(cdir.iterdir()):
            if sub.is_dir() and not sub.name.startswith("."):
                add(str(sub), "cache", flags_of.get(os.path.realpath(sub), ""))
    return found


def find_install(backend: str, installs: Optional[list[KokkosInstall]] = None) -> Optional[KokkosInstall]:
    """The install to build ``backend`` with, or None. Host backends (serial, openmp) use
    an install without a device backend: a CUDA/HIP-enabled Kokkos must be compiled with
    the device compiler wrapper, so it serves only its device backend."""
    installs = find_installs() if installs is None else installs
    cands = [i for i in installs if i.has(backend)]
    if backend not in DEVICE_BACKENDS:
        cands = [i for i in cands if i.device_backend is None]
    return cands[0] if cands else None
