"""Build and install Kokkos into the cache (``port-fortran kokkos install``).

Without ``--source`` the Kokkos 3.4.01 tree shipped inside the PyPI sdist
``pykokkos-base==0.0.7`` is used: pip downloads the sdist (checked against a pinned
sha256), and the sdist is kept under ``<cache>/kokkos/src/`` so later installs need no
network. ``--source`` takes a Kokkos source tree or a release tarball (.tar.gz, .tgz,
.tar.xz, .tar.bz2, .zip).

An install is identified by (source, version, backends, arch, extra C++ flags); the
parameters are written to ``<prefix>/share/port-fortran/install.json`` once the install is
complete, so asking again for the same install returns at once.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional, Sequence

from ..errors import ToolMissing, UserError
from .kokkos import (
    DEVICE_BACKENDS,
    HOST_BACKENDS,
    KokkosInstall,
    kokkos_cache_dir,
    min_cxx_standard,
    read_install,
    read_registry,
    record_install,
)
from .sandbox import Limits, run_limited

DEFAULT_SDIST = "pykokkos-base==0.0.7"
DEFAULT_SDIST_FILE = "pykokkos-base-0.0.7.tar.gz"
DEFAULT_SDIST_SHA256 = "6339daced1e81a2748f381847d8717cd77d824407da3c263b9491b5630c642b0"
DEFAULT_VERSION = "3.4.01"
_MARKER = Path("share") / "port-fortran" / "install.json"
_ARCHIVES = (".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2", ".tar", ".zip")

# `nvidia-smi --query-gpu=compute_cap` -> Kokkos architecture name
CUDA_ARCH_BY_CC = {
    "7.0": "VOLTA70", "7.2": "VOLTA72", "7.5": "TURING75", "8.0": "AMPERE80", "8.6": "AMPERE86",
    "8.7": "AMPERE87", "8.9": "ADA89", "9.0": "HOPPER90", "10.0": "BLACKWELL100", "12.0": "BLACKWELL120",
}

Progress = Callable[[str], None]


def _say(msg: str) -> None:
    print(msg, flush=True)


@dataclass
class InstallResult:
    install: KokkosInstall
    already: bool  # True: the same install was there, nothing was built
    seconds: float


# ------------------------------------------------------------------------- request


def parse_backends(spec) -> tuple[str, ...]:
    """'serial,openmp' -> ('serial', 'openmp'); device installs get Serial as their host
    space. Rejects unknown names and two device backends (Kokkos allows one)."""
    names = [s.strip().lower() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    if not names:
        raise UserError("--backends is empty; use e.g. --backends serial,openmp")
    bad = [n for n in names if n not in HOST_BACKENDS + DEVICE_BACKENDS]
    if bad:
        raise UserError(f"unknown backend {bad[0]!r} in --backends; choose from serial, openmp, cuda, hip")
    devices = sorted({n for n in names if n in DEVICE_BACKENDS})
    if len(devices) > 1:
        raise UserError("Kokkos allows one device backend per install: run `port-fortran kokkos install` "
                        f"once per backend ({' and '.join(devices)} cannot share an install)")
    if devices and not any(n in HOST_BACKENDS for n in names):
        names.append("serial")
    order = HOST_BACKENDS + DEVICE_BACKENDS
    return tuple(b for b in order if b in names)


def detect_cuda_arch() -> Optional[str]:
    """The Kokkos arch name of the first visible NVIDIA GPU, or None."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--query-gpu=compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    return CUDA_ARCH_BY_CC.get(out[0].strip()) if out else None


def default_prefix(version: str, backends: Sequence[str], arch: Optional[str], cxx_flags: str = "") -> Path:
    name = f"{version}-{'+'.join(backends)}-{(arch or 'host').lower()}"
    if cxx_flags:
        name += "-f" + hashlib.sha256(cxx_flags.encode()).hexdigest()[:8]
    return kokkos_cache_dir() / name


# ------------------------------------------------------------------------- sources


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify_sha256(path: Path, expected: str) -> None:
    got = sha256_of(path)
    if got != expected:
        raise UserError(f"{path}: sha256 {got} does not match the pinned {expected}; "
                        "the download is corrupt or not the expected release (delete it and retry)")


def fetch_default_sdist(dest_dir: Optional[Path] = None, pip_args: Sequence[str] = (),
                        progress: Progress = _say) -> Path:
    """The verified ``pykokkos-base-0.0.7.tar.gz``: from the cache if there, else through
    ``pip download`` (``pip_args`` e.g. ``--no-index --find-links DIR`` for offline use).
    The verified file is kept in ``dest_dir`` (default ``<cache>/kokkos/src``)."""
    dest_dir = Path(dest_dir) if dest_dir else kokkos_cache_dir() / "src"
    dest_dir.mkdir(parents=True, exist_ok=True)
    cached = dest_dir / DEFAULT_SDIST_FILE
    if cached.is_file():
        try:
            verify_sha256(cached, DEFAULT_SDIST_SHA256)
            return cached
        except UserError:
            cached.unlink()
    for d in _find_links():  # a wheelhouse (offline installs: docs/install.md)
        cand = Path(d) / DEFAULT_SDIST_FILE
        if cand.is_file():
            verify_sha256(cand, DEFAULT_SDIST_SHA256)
            progress(f"[kokkos] Kokkos {DEFAULT_VERSION} source from {cand}")
            tmp_dest = dest_dir / (DEFAULT_SDIST_FILE + ".part")
            shutil.copyfile(cand, tmp_dest)
            os.replace(tmp_dest, cached)
            return cached
    progress(f"[kokkos] downloading {DEFAULT_SDIST} (Kokkos {DEFAULT_VERSION} source) with pip")
    with tempfile.TemporaryDirectory(prefix="port-fortran-pip-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
               "--no-build-isolation", DEFAULT_SDIST, "-d", tmp, *pip_args]
        res = run_limited(cmd, tmp, Limits(wall_s=600, mem_mb=None))
        got = Path(tmp) / DEFAULT_SDIST_FILE
        if not res.ok or not got.is_file():
            tail = (res.stderr or res.stdout).strip().splitlines()[-1:] or ["(no output)"]
            raise ToolMissing(f"could not download {DEFAULT_SDIST} with pip: {tail[0]}; "
                              "without network, pass --source <kokkos source dir or tarball>")
        verify_sha256(got, DEFAULT_SDIST_SHA256)
        tmp_dest = dest_dir / (DEFAULT_SDIST_FILE + ".part")
        shutil.copyfile(got, tmp_dest)
        os.replace(tmp_dest, cached)
    return cached


def _find_links() -> list[str]:
    """The local directories of ``PIP_FIND_LINKS`` (how an offline machine points pip at a
    wheelhouse; docs/install.md): the sdist is taken from there without running pip."""
    dirs = os.environ.get("PIP_FIND_LINKS", "").split()
    return [d[len("file://"):] if d.startswith("file://") else d for d in dirs if not d.startswith(("http:", "https:"))]


def _safe_extract_tar(tf: tarfile.TarFile, dest: Path, members=None) -> None:
    if hasattr(tarfile, "data_filter"):
        tf.extractall(dest, members=members, filter="data")
    else:  # pragma: no cover - Python without extraction filters
        root = dest.resolve()
        for m in (members if members is not None else tf.getmembers()):
            if not (dest / m.name).resolve().is_relative_to(root) or m.issym() or m.islnk():
                raise UserError(f"refusing to extract {m.name!r}: it points outside the archive")
        tf.extractall(dest, members=members)


def extract_default_kokkos(sdist: Path, dest: Path) -> Path:
    """``external/kokkos`` of the pykokkos-base sdist, extracted under ``dest``."""
    with tarfile.open(sdist) as tf:
        members = [m for m in tf.getmembers() if m.name.split("/")[1:3] == ["external", "kokkos"]]
        if not members:
            raise UserError(f"{sdist}: no external/kokkos in the sdist")
        _safe_extract_tar(tf, dest, members)
    root = dest / members[0].name.split("/")[0] / "external" / "kokkos"
    return root


def kokkos_tree_version(tree: Path) -> Optional[str]:
    """The version of a Kokkos source tree (its top CMakeLists.txt), or None if ``tree`` is
    not one."""
    cml = tree / "CMakeLists.txt"
    if not cml.is_file():
        return None
    text = cml.read_text(errors="replace")
    if not re.search(r"^\s*project\s*\(\s*Kokkos\b", text, re.I | re.M) and "Kokkos_VERSION" not in text:
        return None
    parts = [re.search(rf"set\s*\(\s*Kokkos_VERSION_{p}\s+(\d+)\s*\)", text, re.I) for p in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        return None
    return ".".join(m.group(1) for m in parts)


def _find_tree(root: Path) -> Optional[Path]:
    """The Kokkos tree at ``root`` or one or two levels below (release tarballs nest it)."""
    cands = [root] + sorted(p for p in root.glob("*") if p.is_dir()) + sorted(root.glob("*/external/kokkos"))
    cands += sorted(p for p in root.glob("*/*") if p.is_dir())
    for c in cands:
        if kokkos_tree_version(c):
            return c
    return None


def _not_kokkos(path) -> UserError:
    return UserError(f"--source {path}: not a Kokkos source tree (no CMakeLists.txt with project(Kokkos) and "
                     "Kokkos_VERSION); pass the top directory or tarball of a Kokkos release, e.g. kokkos-4.7.01/")


def check_source(source) -> Path:
    """Validate a ``--source`` argument before any work: it exists and is a directory or a
    supported archive. Raises UserError (one line) otherwise."""
    p = Path(source).expanduser().resolve()  # the build runs in a temporary directory
    if not p.exists():
        raise UserError(f"--source {source}: no such file or directory")
    if p.is_dir():
        if _find_tree(p) is None:
            raise _not_kokkos(source)
        return p
    if not p.name.lower().endswith(_ARCHIVES):
        raise UserError(f"--source {source}: not a directory or a .tar.gz/.tgz/.tar.xz/.zip archive")
    return p


def unpack_source(source: Path, dest: Path) -> Path:
    """The Kokkos tree of ``source`` (a directory, used in place, or an archive extracted
    into ``dest``)."""
    if source.is_dir():
        tree = _find_tree(source)
        if tree is None:
            raise _not_kokkos(source)
        return tree
    try:
        if source.name.lower().endswith(".zip"):
            with zipfile.ZipFile(source) as zf:
                root = dest.resolve()
                for name in zf.namelist():
                    if not (dest / name).resolve().is_relative_to(root):
                        raise UserError(f"--source {source}: archive entry {name!r} points outside the archive")
                zf.extractall(dest)
        else:
            with tarfile.open(source) as tf:
                _safe_extract_tar(tf, dest)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(f"--source {source}: cannot read the archive ({first}); "
                        "pass a Kokkos release tarball or an unpacked source directory") from None
    tree = _find_tree(dest)
    if tree is None:
        raise _not_kokkos(source)
    return tree


def _source_key(source: Optional[Path]) -> str:
    if source is None:
        return DEFAULT_SDIST
    st = source.stat()
    return f"{source.resolve()}" if source.is_dir() else f"{source.resolve()}:{st.st_size}:{int(st.st_mtime)}"


# ------------------------------------------------------------------------- idempotency


def _marker(prefix: Path) -> Optional[dict]:
    try:
        return json.loads((prefix / _MARKER).read_text())
    except (OSError, ValueError):
        return None


def _same(marker: Optional[dict], want: dict) -> bool:
    return bool(marker) and all(marker.get(k) == v for k, v in want.items())


def find_existing(want: dict, prefix: Optional[Path]) -> Optional[KokkosInstall]:
    """A complete install with exactly these parameters: at ``prefix`` or in the registry."""
    places = [prefix] if prefix else []
    places += [Path(e["prefix"]) for e in read_registry()]
    for p in places:
        if p is None:
            continue
        m = _marker(p)
        if _same(m, want):
            inst = read_install(p, "registry")
            if inst is not None and set(want["backends"]) <= set(inst.backends):
                inst.cxx_flags = want["cxx_flags"]
                return inst
    return None


@contextmanager
def _prefix_lock(prefix: Path) -> Iterator[None]:
    lockdir = kokkos_cache_dir()
    lockdir.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(str(prefix.resolve()).encode()).hexdigest()[:16]
    with open(lockdir / f".lock-{name}", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# ------------------------------------------------------------------------- configure + build


def _enable_options_text(tree: Path) -> str:
    f = tree / "cmake" / "kokkos_enable_options.cmake"
    return f.read_text(errors="replace") if f.is_file() else ""


def kokkos_cmake_args(tree: Path, version: str, backends: Sequence[str], arch: Optional[str],
                      cxx_flags: str, prefix: Path) -> list[str]:
    """The configure options for Kokkos itself (pure apart from reading the tree)."""
    args = [
        "-DCMAKE_BUILD_TYPE=Release",
        f"-DCMAKE_INSTALL_PREFIX={prefix}",
        f"-DCMAKE_CXX_STANDARD={min_cxx_standard(version)}",
        "-DCMAKE_POSITION_INDEPENDENT_CODE=ON",  # ports may be shared libraries
        "-DBUILD_SHARED_LIBS=OFF",
        "-DKokkos_ENABLE_TESTS=OFF",
        "-DKokkos_ENABLE_EXAMPLES=OFF",
    ]
    for b in backends:
        args.append(f"-DKokkos_ENABLE_{b.upper()}=ON")
    if arch:
        args.append(f"-DKokkos_ARCH_{arch.upper()}=ON")
    if "cuda" in backends:
        if "CUDA_LAMBDA" in _enable_options_text(tree):  # an option up to 4.x; always on in 5
            args.append("-DKokkos_ENABLE_CUDA_LAMBDA=ON")
        args.append(f"-DCMAKE_CXX_COMPILER={tree / 'bin' / 'nvcc_wrapper'}")
    if "hip" in backends:
        hipcc = shutil.which("hipcc") or "hipcc"
        args.append(f"-DCMAKE_CXX_COMPILER={hipcc}")
    if cxx_flags:
        args.append(f"-DCMAKE_CXX_FLAGS={cxx_flags}")
    return args


class _BuildProgress:
    """Turns make's ``[ 42%]`` lines into a progress line every 10 percent."""

    def __init__(self, progress: Progress, start: float):
        self.progress, self.start, self.last = progress, start, -10

    def __call__(self, line: str) -> None:
        m = re.match(r"\[\s*(\d+)%\]", line)
        if m and int(m.group(1)) >= self.last + 10:
            self.last = int(m.group(1))
            self.progress(f"[kokkos] building {self.last:3d}%  ({time.monotonic() - self.start:.0f} s)")


def _fail(step: str, res, tree: Path) -> UserError:
    from .diagnostics import condense, parse_diagnostics

    log = res.stdout + res.stderr
    summary = condense(parse_diagnostics(log, root=str(tree)), log, max_lines=8)
    why = f" ({res.killed_reason})" if res.killed_reason else ""
    return UserError(f"Kokkos {step} failed{why}: " + " | ".join(summary.splitlines()))


def install(backends="serial,openmp", source=None, arch: Optional[str] = None, cxx_flags: Optional[str] = None,
            prefix=None, jobs: Optional[int] = None, progress: Progress = _say,
            pip_args: Sequence[str] = ()) -> InstallResult:
    """Build and install Kokkos for ``backends``; a no-op when the same install exists."""
    t0 = time.monotonic()
    bks = parse_backends(backends)
    cxx_flags = (cxx_flags or "").strip()
    src_path = check_source(source) if source else None
    if arch:
        arch = arch.strip().upper()
        if not re.fullmatch(r"[A-Z0-9_]+", arch):
            raise UserError(f"--arch {arch!r}: expected a Kokkos architecture name such as HOPPER90 or AMPERE80")
    elif "cuda" in bks:
        arch = detect_cuda_arch()
        if arch is None:
            raise UserError("--backends cuda needs --arch (no GPU visible to detect it), e.g. --arch HOPPER90 "
                            "for H100/H200, AMPERE80 for A100")
    elif "hip" in bks:
        raise UserError("--backends hip needs --arch, e.g. --arch AMD_GFX90A (MI200) or AMD_GFX942 (MI300)")
    key = _source_key(src_path)
    want = {"source": key, "backends": list(bks), "arch": arch or "", "cxx_flags": cxx_flags}
    if src_path is not None and src_path.is_dir():
        version = kokkos_tree_version(_find_tree(src_path))
    elif src_path is None:
        version = DEFAULT_VERSION
    else:
        version = None  # known once the archive is unpacked
    target = Path(prefix).expanduser().resolve() if prefix else (
        default_prefix(version, bks, arch, cxx_flags) if version else None)
    hit = find_existing(want, target)
    if hit is not None and (prefix is None or Path(hit.prefix).resolve() == target):
        return InstallResult(hit, True, time.monotonic() - t0)

    from .cmake import cmake_info

    cmake_info()  # raises ToolMissing naming the fix
    with tempfile.TemporaryDirectory(prefix="port-fortran-kokkos-") as tmp:
        tmpd = Path(tmp)
        if src_path is None:
            sdist = fetch_default_sdist(progress=progress, pip_args=pip_args)
            tree = extract_default_kokkos(sdist, tmpd / "src")
        else:
            if not src_path.is_dir():
                progress(f"[kokkos] unpacking {src_path}")
            tree = unpack_source(src_path, tmpd / "src")
        version = kokkos_tree_version(tree)
        if version is None:
            raise _not_kokkos(source)
        if target is None:
            target = default_prefix(version, bks, arch, cxx_flags)
            hit = find_existing(want, target)
            if hit is not None:
                return InstallResult(hit, True, time.monotonic() - t0)
        with _prefix_lock(target):
            if _same(_marker(target), want):  # another process finished it meanwhile
                inst = read_install(target, "registry")
                if inst is not None:
                    inst.cxx_flags = cxx_flags
                    return InstallResult(inst, True, time.monotonic() - t0)
            inst = _configure_build_install(tree, version, bks, arch, cxx_flags, target, jobs, progress, tmpd)
            from .cmake import cmake_info

            marker = dict(want, version=version, installed=time.strftime("%Y-%m-%dT%H:%M:%S"),
                          seconds=round(time.monotonic() - t0, 1), cmake=cmake_info().describe())
            (target / _MARKER).parent.mkdir(parents=True, exist_ok=True)
            (target / _MARKER).write_text(json.dumps(marker, indent=2) + "\n")
            record_install(inst, source=key)
    return InstallResult(inst, False, time.monotonic() - t0)


def _configure_build_install(tree: Path, version: str, bks, arch, cxx_flags, target: Path, jobs,
                             progress: Progress, tmpd: Path) -> KokkosInstall:
    from .cmake import cmake_exe, default_jobs

    build = tmpd / "build"
    jobs = jobs or default_jobs()
    limits = Limits(wall_s=3600, mem_mb=None, output_bytes=4_000_000)
    env = {"LC_ALL": "C", "CLICOLOR": "0"}
    t0 = time.monotonic()
    progress(f"[kokkos] configuring Kokkos {version} [{','.join(bks)}] arch={arch or 'host'}")
    cfg = [cmake_exe(), "-S", str(tree), "-B", str(build)] + kokkos_cmake_args(tree, version, bks, arch,
                                                                                 cxx_flags, target)
    res = run_limited(cfg, tmpd, limits, env_extra=env)
    if not res.ok:
        raise _fail("configure", res, tree)
    progress(f"[kokkos] building with {jobs} jobs")
    res = run_limited([cmake_exe(), "--build", str(build), "-j", str(jobs)], tmpd, limits, env_extra=env,
                      on_line=_BuildProgress(progress, t0))
    if not res.ok:
        raise _fail("build", res, tree)
    progress(f"[kokkos] installing into {target}")
    res = run_limited([cmake_exe(), "--install", str(build)], tmpd, limits, env_extra=env)
    if not res.ok:
        raise _fail("install", res, tree)
    inst = read_install(target, "registry")
    if inst is None or not set(bks) <= set(inst.backends):
        raise UserError(f"Kokkos installed into {target} but the install does not provide {','.join(bks)}")
    if "cuda" in bks and not (target / "bin" / "nvcc_wrapper").is_file():
        shutil.copy2(tree / "bin" / "nvcc_wrapper", target / "bin" / "nvcc_wrapper")
    inst.cxx_flags = cxx_flags
    return inst
