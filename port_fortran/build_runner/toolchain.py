"""What this machine has for porting (compilers, CMake, GPUs, Kokkos installs, Python
packages), and what is missing for a set of backends, each gap with the command that
fills it. ``port-fortran doctor`` prints this."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from importlib import metadata
from typing import Optional, Sequence

from .kokkos import KokkosInstall, find_install, find_installs, version_tuple

# (distribution, import name, required)
PYTHON_PACKAGES = (
    ("fparser", "fparser", True),
    ("langgraph", "langgraph", True),
    ("langgraph-checkpoint-sqlite", "langgraph.checkpoint.sqlite", True),
    ("langchain-core", "langchain_core", True),
    ("langchain-openai", "langchain_openai", True),
    ("jinja2", "jinja2", True),
    ("pyyaml", "yaml", True),
    ("genai-prices", "genai_prices", True),
    ("rich", "rich", True),
    ("numpy", "numpy", True),
    ("matplotlib", "matplotlib", True),
    ("jsonschema", "jsonschema", True),
    ("pygments", "pygments", True),
    ("cmake", "cmake", True),
    ("pybind11", "pybind11", True),
    ("parsl", "parsl", False),
)

from .cmake import MIN_CMAKE  # noqa: E402


@dataclass
class Tool:
    name: str  # role: gfortran, cmake, c++, nvcc, hipcc, nvidia-smi
    path: Optional[str] = None
    version: str = ""
    source: str = ""  # how it was chosen, when not simply the first on PATH (cmake: 'python-package')

    @property
    def found(self) -> bool:
        return self.path is not None


@dataclass
class Gpu:
    name: str
    memory: str = ""
    driver: str = ""
    compute_cap: str = ""


@dataclass
class PyPackage:
    name: str
    version: Optional[str]
    required: bool = True


@dataclass
class Missing:
    what: str
    why: str
    fix: str
    required: bool = True


@dataclass
class Toolchain:
    python: str
    packages: list[PyPackage] = field(default_factory=list)
    tools: dict[str, Tool] = field(default_factory=dict)
    gpus: list[Gpu] = field(default_factory=list)
    kokkos: list[KokkosInstall] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "python": self.python,
            "packages": [asdict(p) for p in self.packages],
            "tools": {k: asdict(t) | {"found": t.found} for k, t in self.tools.items()},
            "gpus": [asdict(g) for g in self.gpus],
            "kokkos": [k.to_dict() for k in self.kokkos],
        }


def _version_of(exe: str, args: Sequence[str] = ("--version",)) -> str:
    try:
        out = subprocess.run([exe, *args], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return ""
    text = out.stdout + out.stderr
    m = re.search(r"release (\d+\.\d+)", text)  # nvcc
    if m:
        return m.group(1)
    m = re.search(r"(\d+\.\d+(?:\.\d+)?)", text.splitlines()[0] if text.strip() else "")
    return m.group(1) if m else (text.splitlines()[0].strip() if text.strip() else "")


def _which(*names: str) -> Optional[str]:
    for n in names:
        if n and (p := shutil.which(n)):
            return p
    return None


def uses_openmp(flags) -> bool:
    """Do these compiler flags turn OpenMP on?"""
    return any(f == "-fopenmp" or f.startswith("-fopenmp=") for f in flags)


def generated_source_flags(flags) -> list[str]:
    """``flags`` for the free-form sources the tool generates (drivers, interface modules):
    without ``-ffixed-form``, which a user's fixed-form tree may be built with and which
    would make gfortran read them as fixed form."""
    return [f for f in flags if f != "-ffixed-form"]


def host_openmp(flags) -> list[str]:
    """``flags`` with ``-foffload=disable`` added when they turn OpenMP on and say nothing of
    offloading: originals and ports both run ``!$omp target`` regions on the host, as any
    OpenMP implementation may. (An offload-defaulted gfortran, Ubuntu's gfortran-13, still
    writes offload LTO sections that a C++ linker of another GCC cannot link: "could not
    run lto-wrapper"; :func:`strip_offload` removes them from the objects.)"""
    flags = list(flags)
    if uses_openmp(flags) and not any(f.startswith("-foffload") for f in flags):
        flags.append("-foffload=disable")
    return flags


def strip_offload(obj, flags=("-fopenmp",)) -> None:
    """Remove the offload LTO sections (``.gnu.offload_lto_*``) gfortran wrote into ``obj``
    when ``flags`` turn OpenMP on: the host code of every target region stays, and the
    object links with any linker (see :func:`host_openmp`)."""
    if not uses_openmp(flags):
        return
    objcopy = shutil.which("objcopy")
    if objcopy is None:
        return
    import subprocess
    subprocess.run([objcopy, "--wildcard", "--remove-section=.gnu.offload_lto_*", str(obj)],
                   capture_output=True, check=False)


def gfortran_path() -> Optional[str]:
    """The Fortran compiler that builds the originals: ``$FC`` when it names a gfortran,
    else ``gfortran``, else a versioned ``gfortran-NN`` (some images ship only those)."""
    fc = os.environ.get("FC", "")
    if fc and "gfortran" in os.path.basename(fc) and (p := shutil.which(fc)):
        return p
    if p := shutil.which("gfortran"):
        return p
    for ver in range(20, 8, -1):
        if p := shutil.which(f"gfortran-{ver}"):
            return p
    return None


def find_tool(role: str) -> Tool:
    if role == "cmake":
        from .cmake import cmake_info

        info = cmake_info(required=False)
        if info is not None:
            return Tool(role, info.path, info.version, info.source)
        path = _which("cmake")  # too old to use: reported with its version
        return Tool(role, path, _version_of(path)) if path else Tool(role)
    if role == "gfortran":
        path = gfortran_path()
    elif role == "c++":
        env = os.environ.get("CXX")
        path = _which(env) if env else _which("g++", "c++", "clang++")
    elif role == "nvcc":
        path = _which("nvcc") or next((p for p in ("/usr/local/cuda/bin/nvcc",) if os.access(p, os.X_OK)), None)
    else:
        path = _which(role)
    if path is None:
        return Tool(role)
    if role == "nvidia-smi":
        return Tool(role, path, "")
    return Tool(role, path, _version_of(path))


def can_apt() -> bool:
    """apt-get would work here: root (or sudo) on a Debian-like system."""
    apt = shutil.which("apt-get") or os.path.exists("/usr/bin/apt-get")
    return bool(apt) and (os.geteuid() == 0 or bool(shutil.which("sudo") or os.path.exists("/usr/bin/sudo")))


def compiler_fix(exe: str, env: str, package: str) -> str:
    """How to get a compiler: apt where that works; otherwise the cluster way (an
    environment module, or the variable naming the compiler)."""
    if can_apt():
        return f"apt-get install {package}"
    return (f"no root: load a compiler (e.g. `module load gcc`) so {exe} is on PATH, or set "
            f"{env}=/path/to/{exe}")


def python_include() -> str:
    import sysconfig

    return sysconfig.get_paths()["include"]


def find_gpus() -> list[Gpu]:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return []
    try:
        out = subprocess.run([exe, "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        caps = subprocess.run([exe, "--query-gpu=compute_cap", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return []
    if out.returncode != 0:
        return []
    gpus = []
    for i, line in enumerate(ln for ln in out.stdout.splitlines() if ln.strip()):
        parts = [p.strip() for p in line.split(",")]
        parts += [""] * (3 - len(parts))
        gpus.append(Gpu(parts[0], parts[1], parts[2], caps[i] if i < len(caps) else ""))
    return gpus


def python_packages() -> list[PyPackage]:
    out = []
    for dist, _imp, required in PYTHON_PACKAGES:
        try:
            v = metadata.version(dist)
        except metadata.PackageNotFoundError:
            v = None
        out.append(PyPackage(dist, v, required))
    return out


def find_tools(gpus: bool = True) -> Toolchain:
    """Everything :func:`missing_for` needs to judge a machine."""
    tc = Toolchain(python=f"{sys.version.split()[0]} ({sys.executable})")
    tc.packages = python_packages()
    for role in ("gfortran", "cmake", "c++", "nvcc", "hipcc", "nvidia-smi"):
        tc.tools[role] = find_tool(role)
    tc.gpus = find_gpus() if gpus else []
    tc.kokkos = find_installs()
    return tc


def _cuda_arch_hint(tc: Toolchain) -> str:
    from .kokkos_install import CUDA_ARCH_BY_CC

    for g in tc.gpus:
        if g.compute_cap in CUDA_ARCH_BY_CC:
            return CUDA_ARCH_BY_CC[g.compute_cap]
    return "HOPPER90"


def missing_for(tc: Toolchain, backends: Sequence[str]) -> list[Missing]:
    """What keeps ``backends`` from being built and verified here, with fixes."""
    miss: list[Missing] = []
    pip = f"{sys.executable} -m pip install"
    for p in tc.packages:
        if p.version is None:
            miss.append(Missing(f"python package {p.name}", "needed by port-fortran" if p.required
                                else "optional: cluster execution through Parsl",
                                f"{pip} '{p.name}'" if not p.required else f"{pip} -e '.[test]'  (or {pip} {p.name})",
                                p.required))
    t = tc.tools
    if not t["gfortran"].found:
        miss.append(Missing("gfortran", "compiles the original Fortran that every port is checked against",
                            compiler_fix("gfortran", "FC", "gfortran")))
    if not t["cmake"].found:
        miss.append(Missing("cmake", "builds Kokkos and the ports", f"{pip} 'cmake>=3.21'  (no root needed)"))
    elif not t["cmake"].version or version_tuple(t["cmake"].version) < MIN_CMAKE:
        miss.append(Missing("cmake >= 3.16", f"found cmake {t['cmake'].version or '(unknown version)'} at "
                            f"{t['cmake'].path}; Kokkos needs 3.16 or newer",
                            f"{pip} 'cmake>=3.21'  (used before the one on PATH; no root needed)"))
    if not t["c++"].found:
        miss.append(Missing("C++ compiler", "compiles Kokkos and the ports", compiler_fix("g++", "CXX", "g++")))
    inc = python_include()
    if not os.path.isfile(os.path.join(inc, "Python.h")):
        miss.append(Missing("Python headers", f"`port-fortran bindings` compiles Python modules of ports (no "
                            f"Python.h in {inc})", "apt-get install python3-dev, or use a Python (module, "
                            "conda, pyenv) that ships its headers", required=False))
    wanted = [b.strip() for b in backends if b.strip()]
    host = [b for b in wanted if b in ("serial", "openmp")]
    if host:
        ok = [b for b in host if find_install(b, tc.kokkos) is not None]
        if len(ok) < len(host):
            miss.append(Missing(f"Kokkos install with {','.join(host)}",
                                "no Kokkos install found through Kokkos_ROOT, CMAKE_PREFIX_PATH or the cache",
                                "port-fortran kokkos install --backends serial,openmp"))
    if "cuda" in wanted:
        arch = _cuda_arch_hint(tc)
        if not t["nvcc"].found:
            miss.append(Missing("nvcc", "compiles CUDA ports",
                                "install the CUDA toolkit (apt-get install nvidia-cuda-toolkit, or put "
                                "/usr/local/cuda/bin on PATH)"))
        if find_install("cuda", tc.kokkos) is None:
            nvcc_major = version_tuple(t["nvcc"].version)[:1]
            fix = f"port-fortran kokkos install --backends cuda --arch {arch} --source <kokkos-4.x source dir or tarball>"
            if nvcc_major and nvcc_major[0] >= 13:
                fix += "  (CUDA 13 needs Kokkos >= 4.7, or --cxx-flags '-include <cuda13_shim.h>' for older ones)"
            miss.append(Missing("Kokkos install with cuda", "no CUDA-enabled Kokkos install found", fix))
        if not tc.gpus:
            miss.append(Missing("NVIDIA GPU", "cuda ports are built here but can only be verified and timed on a GPU "
                                "(nvidia-smi lists none)", "run on a machine with an NVIDIA GPU and its driver"))
    if "hip" in wanted:
        if not t["hipcc"].found:
            miss.append(Missing("hipcc", "compiles HIP ports", "install ROCm (https://rocm.docs.amd.com) and put "
                                "/opt/rocm/bin on PATH"))
        if find_install("hip", tc.kokkos) is None:
            miss.append(Missing("Kokkos install with hip", "no HIP-enabled Kokkos install found",
                                "port-fortran kokkos install --backends hip --arch AMD_GFX90A "
                                "--source <kokkos-4.x source dir or tarball>"))
    return miss
