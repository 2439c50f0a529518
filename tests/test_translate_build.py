"""Generated code compiles warning-free (-Wall -Wextra) against the Kokkos install found by
build_runner, for the Serial and OpenMP backends, and its CMake project configures and
builds the library with the Fortran interface module.

One translation unit includes every port (one compile per backend keeps this fast)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from port_fortran.fortran import parse_file
from port_fortran.translate import translate_kernel, write_port

DATA = Path(__file__).parent / "data" / "translate"
SAMPLES = Path(__file__).parent.parent / "fortran_kernels"

pytestmark = pytest.mark.integration

FILES = [DATA / "basics.f90", DATA / "arrays.f90", DATA / "control.f", DATA / "types.f90",
         SAMPLES / "stencil2d.f90", SAMPLES / "transpose.f", SAMPLES / "lcg.f", SAMPLES / "reduce.f",
         SAMPLES / "sparse.f90", SAMPLES / "cblas.f90"]


def _kokkos(backend):
    from port_fortran.build_runner.kokkos import find_install

    inst = find_install(backend)
    if inst is None and Path("/tmp/kokkos-dev/include/Kokkos_Core.hpp").is_file():
        return "/tmp/kokkos-dev"
    if inst is None:
        pytest.skip(f"no Kokkos install with {backend}")
    return inst.prefix


def _ports(tmp_path: Path) -> list[Path]:
    cpps = []
    for f in FILES:
        if not f.is_file():
            continue
        sf = parse_file(str(f), include_dirs=(str(SAMPLES / "include"),))
        for k in sf.kernels:
            try:
                port = translate_kernel(k, sf)
            except Exception:  # refusals are covered elsewhere
                continue
            d = tmp_path / k.name
            write_port(port, d)
            cpps.append(d / f"{k.name}.kokkos.cpp")
    return cpps


@pytest.mark.parametrize("backend", ["serial", "openmp"])
def test_generated_code_compiles_without_warnings(tmp_path, backend):
    prefix = _kokkos(backend)
    cpps = _ports(tmp_path)
    assert len(cpps) >= 15
    unity = tmp_path / "all_ports.cpp"
    unity.write_text("".join(f'#include "{c}"\n' for c in cpps))
    cmd = [os.environ.get("CXX", "g++"), "-std=c++17", "-O1", "-Wall", "-Wextra", "-c", str(unity),
           "-o", str(tmp_path / "all.o"), "-isystem", f"{prefix}/include", f"-DPF_BACKEND_{backend.upper()}"]
    cmd.append("-fopenmp")  # the installs here enable OpenMP, whose headers need it even for Serial
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-4000:]
    ours = [ln for ln in res.stderr.splitlines() if "warning" in ln and str(tmp_path) in ln]
    assert not ours, "\n".join(ours[:20])


def test_cmake_project_builds_library_and_fortran_module(tmp_path):
    prefix = _kokkos("serial")
    if not shutil.which("cmake") or not shutil.which("gfortran"):
        pytest.skip("cmake and gfortran needed")
    sf = parse_file(str(DATA / "basics.f90"))
    k = next(k for k in sf.kernels if k.name == "axpy")
    write_port(translate_kernel(k, sf), tmp_path / "axpy")
    # a user project: Fortran + C++, add_subdirectory(port), a program using the module
    (tmp_path / "main.f90").write_text(
        "program p\n  use axpy_kokkos_mod\n  implicit none\n  double precision :: x(5), y(5)\n"
        "  x = 1.0d0\n  y = 2.0d0\n  call axpy_kokkos(5, 3.0d0, x, y)\n"
        "  if (any(y /= 5.0d0)) stop 1\n  print *, 'OK'\nend program p\n")
    # and a C++ program on the views-level function (what the harness times)
    (tmp_path / "views.cpp").write_text(
        '#include "axpy.kokkos.hpp"\n#include <cstdio>\n'
        "int main() {\n  Kokkos::initialize();\n  int bad = 0;\n  {\n"
        '    pf::View<double*> x("x", 7), y("y", 7);\n'
        "    Kokkos::deep_copy(x, 1.0);\n    Kokkos::deep_copy(y, 2.0);\n"
        "    axpy_kokkos_views(7, 3.0, x, y);\n"
        "    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);\n"
        "    for (int i = 0; i < 7; ++i) bad += h(i) != 5.0;\n  }\n"
        '  Kokkos::finalize();\n  std::printf(bad ? "BAD\\n" : "OK\\n");\n  return bad;\n}\n')
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(user LANGUAGES Fortran CXX)\n"
        "add_subdirectory(axpy)\nadd_executable(p main.f90)\n"
        "target_link_libraries(p PRIVATE axpy_kokkos)\nset_target_properties(p PROPERTIES LINKER_LANGUAGE CXX)\n"
        "if(CMAKE_Fortran_COMPILER_ID STREQUAL GNU)\n  target_link_libraries(p PRIVATE gfortran)\nendif()\n"
        "add_executable(v views.cpp)\ntarget_link_libraries(v PRIVATE axpy_kokkos)\n")
    b = tmp_path / "build"
    res = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(b), f"-DKokkos_ROOT={prefix}",
                          "-DPF_BACKEND=serial", "-DCMAKE_BUILD_TYPE=Release"],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    res = subprocess.run(["cmake", "--build", str(b), "-j2"], capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    run = subprocess.run([str(b / "p")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "OK" in run.stdout, run.stdout + run.stderr
    run = subprocess.run([str(b / "v")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "OK" in run.stdout, run.stdout + run.stderr
    assert re.search(r"-DPF_BACKEND_SERIAL", (b / "axpy" / "CMakeFiles" / "axpy_kokkos.dir" / "flags.make").read_text())
