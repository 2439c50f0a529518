"""Build a Python module of ports (side effects: files, CMake, the compiler).

The module is a CMake project (``codegen.module_cmake``) configured and built by
``build_runner.cmake.configure_and_build`` against the same Kokkos install and backend the
harness builds the port with, and with the same host flags, so the module computes what
the verified port computes. The finished ``<module><EXT_SUFFIX>`` is copied into the output
directory beside ``<module>.build.json``, which records what built it (backend, Kokkos
install, CMake, compiler, Python, pybind11, the ports and their directories).
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import sysconfig
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from ..errors import ToolMissing, UserError
from ..fortran import ir
from . import codegen
from .plan import FunctionBinding, check_module_name, merge_commons, plan_function

SUPPORT_DIR = Path(__file__).resolve().parent / "support"
RESERVED = {"kokkos_info", "common"}  # module attributes the bindings define themselves
# the order in which a default backend is picked among those a port verified on
BACKEND_PREFERENCE = ("cuda", "hip", "openmp", "serial")


@dataclass
class PortRef:
    """A port directory and the routine it ports (parsed again from the original source)."""

    kernel: ir.Kernel
    source: Optional[ir.SourceFile]
    port_dir: Path

    @property
    def verified_on(self) -> list[str]:
        """The backends ``verdict.json`` says the port passed on."""
        p = self.port_dir / "verdict.json"
        try:
            data = json.loads(p.read_text())
        except (OSError, ValueError):
            return []
        return [b for b, v in data.items() if isinstance(v, dict) and v.get("passed")]


@dataclass
class ModuleBuild:
    module: str
    backend: str
    ok: bool
    path: str = ""  # the built module (in the output directory)
    functions: list[str] = field(default_factory=list)
    seconds: float = 0.0
    cmake: str = ""
    message: str = ""  # why it failed (condensed diagnostics)
    log_path: str = ""
    record_path: str = ""


def load_port(port_dir) -> PortRef:
    """The routine behind a port directory written by a run (``port.json`` names the
    original source, include dirs and defines)."""
    from ..harness.commands import load_port_meta

    kernel, sf, _meta, _program = load_port_meta(port_dir)
    return PortRef(kernel, sf, Path(port_dir).resolve())


def default_backend(ports: Sequence[PortRef]) -> str:
    """The most parallel backend every port verified on (cuda, hip, openmp, serial)."""
    common = None
    for p in ports:
        v = set(p.verified_on)
        common = v if common is None else common & v
    for b in BACKEND_PREFERENCE:
        if common and b in common:
            return b
    raise UserError("no backend every port verified on (verdict.json): pass --backend serial|openmp|cuda|hip "
                    "(or verify the ports first: port-fortran verify DIR)")


def python_headers() -> Path:
    inc = Path(sysconfig.get_paths()["include"])
    if not (inc / "Python.h").is_file():
        raise ToolMissing(f"Python.h not found in {inc}: the Python development headers are needed to build a "
                          "module (apt-get install python3-dev, or load a Python environment module that "
                          "includes them)")
    return inc


def pybind11_cmake_dir() -> str:
    try:
        import pybind11
    except ImportError:
        raise ToolMissing(f"pybind11 is not installed in this Python ({sys.executable}): "
                          f"{sys.executable} -m pip install pybind11") from None
    return pybind11.get_cmake_dir()


def _write_if_changed(path: Path, text: str) -> None:
    if path.is_file() and path.read_text() == text:
        return  # unchanged sources: CMake rebuilds nothing
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def plan_module(module: str, ports: Sequence[PortRef]) -> list[FunctionBinding]:
    check_module_name(module)
    functions: list[FunctionBinding] = []
    where: dict[str, Path] = {}
    for p in ports:
        f = plan_function(p.kernel, p.source)
        if f.name in where:
            raise UserError(f"{p.port_dir}: routine {f.name} is also ported in {where[f.name]}: one module cannot "
                            "hold two functions of one name; build them as separate modules")
        if f.name in RESERVED:
            raise UserError(f"{p.port_dir}: a routine named {f.name} would hide the module's own {f.name}")
        where[f.name] = p.port_dir
        functions.append(f)
    merge_commons(functions)
    return functions


def build_module(module: str, ports: Sequence[PortRef], backend: str, out_dir, *, jobs: Optional[int] = None,
                 kokkos=None) -> ModuleBuild:
    """Plan, write, configure and build ``module`` from ``ports`` for ``backend``; copy it
    into ``out_dir``. Raises UserError/ToolMissing for what must be fixed before a build
    (bad ports, no Kokkos, no pybind11, no Python headers); a failed build is returned
    (``ok`` False, ``message`` says why, the log is kept)."""
    from ..build_runner.cmake import cmake_info, configure_and_build
    from ..build_runner.kokkos import find_install
    from ..harness.core import HOST_BACKENDS, HOST_CXXFLAGS

    t0 = time.monotonic()
    if not ports:
        raise UserError("no port directories given")
    functions = plan_module(module, ports)
    commons = merge_commons(functions)
    kokkos = kokkos or find_install(backend)
    if kokkos is None:
        raise ToolMissing(f"no Kokkos install with the {backend} backend: run `port-fortran kokkos install "
                          f"--backends {backend}` or set Kokkos_ROOT")
    python_headers()
    cmake_args = [f"-Dpybind11_DIR={pybind11_cmake_dir()}", f"-DPython_EXECUTABLE={sys.executable}",
                  "-DPYBIND11_FINDPYTHON=ON"]
    if backend in HOST_BACKENDS:  # the flags the harness verified the port with
        flags = " ".join(x for x in (kokkos.cxx_flags, *HOST_CXXFLAGS) if x)
        cmake_args.append(f"-DCMAKE_CXX_FLAGS={flags}")
    out_dir = Path(out_dir).resolve()
    root = out_dir / "build" / module
    src, bdir = root / "src", root / backend
    port_dirs = {p.kernel.name: str(p.port_dir) for p in ports}
    _write_if_changed(src / f"{module}.cpp", codegen.module_source(module, functions, commons, backend, port_dirs))
    _write_if_changed(src / "CMakeLists.txt", codegen.module_cmake(module, port_dirs, str(SUPPORT_DIR)))
    res = configure_and_build(src, bdir, backend, kokkos, cmake_args=cmake_args, jobs=jobs)
    log = root / f"build-{backend}.log"
    log.write_text(res.log)
    cm = cmake_info()
    out = ModuleBuild(module, backend, res.ok, functions=[f.name for f in functions], cmake=cm.describe(),
                      log_path=str(log))
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    built = bdir / f"{module}{suffix}"
    if not res.ok or not built.is_file():
        out.ok = False
        msg = res.condensed or (f"{built.name} was not built" if res.ok else "the build failed")
        if "recompile with -fPIC" in res.log:
            msg += (f"\nthe Kokkos install at {kokkos.prefix} was built without position-independent code: "
                    "rebuild it with `port-fortran kokkos install` (which builds it with -fPIC) or with "
                    "-DCMAKE_POSITION_INDEPENDENT_CODE=ON")
        out.message = msg
        out.seconds = time.monotonic() - t0
        return out
    target = out_dir / built.name
    tmp = out_dir / f".{built.name}.{os.getpid()}"
    shutil.copy2(built, tmp)
    os.replace(tmp, target)  # a new file: a Python process that loaded the old one keeps it
    out.path = str(target)
    out.seconds = time.monotonic() - t0
    record = {
        "module": module, "path": str(target), "backend": backend,
        "functions": {f.name: {"port_dir": port_dirs[f.name], "returns": f.returns,
                               "arguments": [a.name for a in f.python_args]} for f in functions},
        "kokkos": {"prefix": kokkos.prefix, "version": kokkos.version, "backends": list(kokkos.backends),
                   "arch": list(kokkos.arch)},
        "cmake": asdict(cm), "cxx_compiler": _cached(bdir, "CMAKE_CXX_COMPILER"),
        "cxx_flags": _cached(bdir, "CMAKE_CXX_FLAGS"),
        "python": sys.version.split()[0], "python_executable": sys.executable,
        "pybind11": _pybind11_version(), "built": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "seconds": round(out.seconds, 1),
    }
    rec = out_dir / f"{module}.build.json"
    rec.write_text(json.dumps(record, indent=2) + "\n")
    out.record_path = str(rec)
    return out


def _cached(build_dir: Path, var: str) -> str:
    """A variable of the build's CMakeCache.txt ('' if absent)."""
    try:
        for line in (build_dir / "CMakeCache.txt").read_text(errors="replace").splitlines():
            if line.startswith(var + ":"):
                return line.split("=", 1)[1]
    except OSError:
        pass
    return ""


def _pybind11_version() -> str:
    try:
        import pybind11
        return pybind11.__version__
    except ImportError:
        return ""
