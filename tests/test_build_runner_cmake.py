"""Real CMake builds of a tiny Kokkos project against the Kokkos install the tool finds."""
from __future__ import annotations

import os
import textwrap

import pytest

from port_fortran.build_runner.cmake import build_many, configure_and_build, configure_args
from port_fortran.build_runner.kokkos import KokkosInstall, find_install
from port_fortran.build_runner.sandbox import Limits, run_limited

CMAKELISTS = """\
cmake_minimum_required(VERSION 3.16)
project(pftiny CXX)
find_package(Kokkos REQUIRED)
add_executable(tiny tiny.cpp)
target_link_libraries(tiny Kokkos::kokkos)
string(TOUPPER "${PF_BACKEND}" PF_B)
target_compile_definitions(tiny PRIVATE PF_BACKEND_${PF_B})
"""

TINY = """\
#include <Kokkos_Core.hpp>
#include <cstdio>
#if defined(PF_BACKEND_OPENMP)
using Exec = Kokkos::OpenMP;
#else
using Exec = Kokkos::Serial;
#endif
int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    const int n = 1000;
    Kokkos::View<double*, Kokkos::LayoutLeft, Exec::memory_space> x("x", n);
    Kokkos::parallel_for(Kokkos::RangePolicy<Exec>(0, n), KOKKOS_LAMBDA(const int i) { x(i) = 2.0 * i; });
    Kokkos::fence();
    double s = 0;
    Kokkos::parallel_reduce(Kokkos::RangePolicy<Exec>(0, n),
        KOKKOS_LAMBDA(const int i, double& acc) { acc += x(i); }, s);
    std::printf("%s %.1f\\n", Exec::name(), s);
  }
  Kokkos::finalize();
  return 0;
}
"""


def _project(root, body=TINY):
    root.mkdir(parents=True, exist_ok=True)
    (root / "CMakeLists.txt").write_text(CMAKELISTS)
    (root / "tiny.cpp").write_text(body)
    return root


def test_configure_args_for_cuda_use_nvcc_wrapper_and_install_flags(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "nvcc_wrapper").write_text("#!/bin/sh\n")
    inst = KokkosInstall(prefix=str(tmp_path), version="4.7.01", backends=("serial", "cuda"),
                         arch=("HOPPER90",), cxx_standard=17, cxx_flags="-include /x/shim.h")
    args = configure_args("src", "b", "cuda", inst)
    assert f"-DCMAKE_CXX_COMPILER={tmp_path}/bin/nvcc_wrapper" in args
    assert "-DCMAKE_CXX_FLAGS=-include /x/shim.h" in args
    assert f"-DKokkos_ROOT={tmp_path}" in args and "-DPF_BACKEND=cuda" in args
    five = KokkosInstall(prefix="/k5", version="5.0.0", backends=("serial",), cxx_standard=20)
    assert "-DCMAKE_CXX_STANDARD=20" in configure_args("s", "b", "serial", five)
    assert not any("CMAKE_CXX_COMPILER" in a for a in configure_args("s", "b", "serial", five))


@pytest.mark.integration
def test_build_serial_and_openmp_in_parallel_and_run(tmp_path):
    kk = find_install("openmp")
    if kk is None or not kk.has("serial"):
        pytest.skip("no Kokkos serial+openmp install (make kokkos)")
    src = _project(tmp_path / "src")
    results = build_many([
        dict(source_dir=src, build_dir=tmp_path / "build" / b, backend=b, kokkos=kk) for b in ("serial", "openmp")
    ])
    for b, res in zip(("serial", "openmp"), results):
        assert res.ok, res.condensed + "\n" + res.log[-3000:]
        assert res.backend == b
        exe = res.artifacts["tiny"]
        run = run_limited([exe], tmp_path, Limits(wall_s=60).for_backend(b), env_extra={"OMP_NUM_THREADS": "2"})
        assert run.ok, run.stderr
        name, total = run.stdout.strip().splitlines()[-1].split()
        assert name.lower() == b
        assert float(total) == pytest.approx(2.0 * 999 * 1000 / 2)


@pytest.mark.integration
def test_broken_source_gives_a_condensed_diagnostic_with_file_and_line(tmp_path):
    kk = find_install("serial")
    if kk is None:
        pytest.skip("no Kokkos serial install (make kokkos)")
    broken = TINY.replace("x(i) = 2.0 * i;", "x(i) = 2.0 * undefined_var;")
    bad_line = next(n for n, ln in enumerate(broken.splitlines(), 1) if "undefined_var" in ln)
    src = _project(tmp_path / "src", broken)
    res = configure_and_build(src, tmp_path / "build", "serial", kk, jobs=1)
    assert not res.ok
    assert res.artifacts == {}
    errs = [d for d in res.diagnostics if d.code == "compile-error"]
    assert errs and errs[0].file == "tiny.cpp" and errs[0].line == bad_line
    lines = res.condensed.splitlines()
    assert 1 <= len(lines) <= 20
    assert lines[0].startswith(f"tiny.cpp:{bad_line}: error:") and "undefined_var" in lines[0]


@pytest.mark.integration
def test_missing_kokkos_is_a_cmake_error(tmp_path):
    src = _project(tmp_path / "src")
    res = configure_and_build(src, tmp_path / "build", "serial", None,
                              cmake_args=["-DKokkos_ROOT=/nonexistent", "-DCMAKE_PREFIX_PATH=/nonexistent"],
                              env_extra={"Kokkos_ROOT": "", "CMAKE_PREFIX_PATH": ""})
    assert not res.ok
    assert any(d.code == "cmake-error" and d.file == "CMakeLists.txt" and d.line == 3 for d in res.diagnostics)
    assert "cmake error" in res.condensed


PLAIN = """\
cmake_minimum_required(VERSION 3.16)
project(pfplain CXX)
add_executable(plain plain.cpp)
"""


@pytest.mark.integration
def test_a_build_tree_copied_elsewhere_configures_again(tmp_path):
    """A port directory copied to another place (to run ``verify`` on it there) keeps
    CMake caches naming the old place; cmake refuses those, so the build starts afresh."""
    import shutil

    old = tmp_path / "old"
    (old / "src").mkdir(parents=True)
    (old / "src" / "CMakeLists.txt").write_text(PLAIN)
    (old / "src" / "plain.cpp").write_text("#include <cstdio>\nint main() { std::puts(\"plain ok\"); }\n")
    first = configure_and_build(old / "src", old / "build", "serial", None, jobs=1)
    assert first.ok, first.log[-2000:]
    new = tmp_path / "new"
    shutil.copytree(old, new)
    shutil.rmtree(old)
    again = configure_and_build(new / "src", new / "build", "serial", None, jobs=1)
    assert again.ok, again.log[-2000:]
    assert str(old) not in (new / "build" / "CMakeCache.txt").read_text()
    run = run_limited([again.artifacts["plain"]], new, Limits(wall_s=30))
    assert run.ok and "plain ok" in run.stdout
