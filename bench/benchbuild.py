"""Configure and build a small benchmark driver against a Kokkos install (shared by the
benchmark scripts that time ports outside the harness: ``scatter_copies.py``,
``regblock.py``)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def cmake_build(d: Path, kokkos, flags: str, what: str) -> Path:
    """Build ``d`` (a CMakeLists.txt with an executable ``bench``) against ``kokkos`` with
    the C++ ``flags``; returns the executable. Exits with the build's output on failure."""
    cmake = os.environ.get("CMAKE", "cmake")
    steps = ([cmake, "-S", str(d), "-B", str(d / "build"), "-DCMAKE_BUILD_TYPE=Release",
              f"-DKokkos_ROOT={kokkos.prefix}", f"-DCMAKE_CXX_COMPILER={kokkos.cxx_compiler or 'g++'}",
              f"-DCMAKE_CXX_FLAGS={flags}"],
             [cmake, "--build", str(d / "build"), "-j", "8"])
    for cmd in steps:
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode:
            sys.exit(f"{' '.join(cmd[:2])} failed for {what}:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
    return d / "build" / "bench"
