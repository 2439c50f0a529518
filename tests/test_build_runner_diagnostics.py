"""Compiler/linker/CMake logs become diagnostics with file and line; condense keeps 20 lines."""
from __future__ import annotations

from port_fortran.build_runner.diagnostics import condense, parse_diagnostics
from port_fortran.fortran.ir import Diagnostic

GCC = """\
[ 50%] Building CXX object CMakeFiles/axpy.dir/axpy.kokkos.cpp.o
/src/port/axpy.kokkos.cpp: In function 'void axpy_kokkos(int*, double*)':
/src/port/axpy.kokkos.cpp:12:5: error: 'yy' was not declared in this scope; did you mean 'y'?
   12 |     yy(i) = a * x(i);
      |     ^~
/src/port/axpy.kokkos.cpp:3:10: warning: unused variable 'k' [-Wunused-variable]
make[2]: *** [CMakeFiles/axpy.dir/build.make:76: CMakeFiles/axpy.dir/axpy.kokkos.cpp.o] Error 1
"""

GFORTRAN = """\
/src/port/ref.f90:7:14:

    7 |   y(i) = a * x(i
      |              1
Error: Syntax error in argument list at (1)
/src/port/ref.f90:9:3:

    9 |   real :: q
      |   1
Warning: Unused variable 'q' declared at (1) [-Wunused-variable]
"""

NVCC = """\
/src/port/k.kokkos.cpp(41): error: identifier "undefined_thing" is undefined
          undefined_thing(i) = 0;
          ^
/src/port/k.kokkos.cpp(50): warning #177-D: variable "z" was declared but never referenced
1 error detected in the compilation of "/src/port/k.kokkos.cpp".
"""

CMAKE = """\
-- The CXX compiler identification is GNU 12.2.0
CMake Error at CMakeLists.txt:4 (find_package):
  By not providing "FindKokkos.cmake" in CMAKE_MODULE_PATH this project has
  asked CMake to find a package configuration file provided by "Kokkos", but
  CMake did not find one.

-- Configuring incomplete, errors occurred!
"""

LD = """\
/usr/bin/ld: CMakeFiles/drv.dir/driver.f90.o: in function `MAIN__':
driver.f90:(.text+0x1d): undefined reference to `axpy_kokkos'
/usr/bin/ld: libfoo.a(x.o):(.bss+0x0): multiple definition of `counter'; y.o:(.bss+0x0): first defined here
collect2: error: ld returned 1 exit status
"""

HEADER_INSTANTIATION = """\
/opt/kokkos/include/impl/Kokkos_Functor.hpp: In instantiation of 'void f(...) [with F = main()::<lambda(int)>]':
/src/port/k.kokkos.cpp:22:23:   required from here
/opt/kokkos/include/impl/Kokkos_Functor.hpp:88:9: error: no match for call to '(const main()::<lambda(int)>) (int, int)'
"""


def test_gcc_errors_and_warnings():
    ds = parse_diagnostics(GCC, root="/src/port")
    assert [(d.code, d.file, d.line) for d in ds] == [
        ("compile-error", "axpy.kokkos.cpp", 12),
        ("compile-warning", "axpy.kokkos.cpp", 3),
    ]
    assert "'yy' was not declared" in ds[0].message


def test_gfortran_multiline_messages():
    ds = parse_diagnostics(GFORTRAN, root="/src/port")
    assert [(d.code, d.file, d.line) for d in ds] == [
        ("compile-error", "ref.f90", 7),
        ("compile-warning", "ref.f90", 9),
    ]
    assert ds[0].message.startswith("Syntax error in argument list")


def test_nvcc_format():
    ds = parse_diagnostics(NVCC, root="/src/port")
    assert [(d.code, d.file, d.line) for d in ds] == [
        ("compile-error", "k.kokkos.cpp", 41),
        ("compile-warning", "k.kokkos.cpp", 50),
    ]
    assert "undefined_thing" in ds[0].message


def test_cmake_error_with_its_message_block():
    ds = parse_diagnostics(CMAKE)
    assert len(ds) == 1
    d = ds[0]
    assert (d.code, d.file, d.line) == ("cmake-error", "CMakeLists.txt", 4)
    assert "Kokkos" in d.message and "did not find one" in d.message


def test_linker_errors():
    ds = parse_diagnostics(LD)
    codes = [d.code for d in ds]
    assert codes == ["link-error", "link-error"]
    assert "axpy_kokkos" in ds[0].message and "undefined reference" in ds[0].message
    assert "driver" in ds[0].file
    assert "multiple definition of `counter`" in ds[1].message


def test_header_error_is_pinned_to_the_port_line_that_instantiated_it():
    ds = parse_diagnostics(HEADER_INSTANTIATION, root="/src/port")
    assert len(ds) == 1
    assert (ds[0].file, ds[0].line) == ("k.kokkos.cpp", 22)
    assert "Kokkos_Functor.hpp:88" in ds[0].message


def test_condense_orders_errors_first_dedups_and_caps():
    ds = [Diagnostic("compile-warning", f"unused w{i}", i, "a.cpp") for i in range(30)]
    ds += [Diagnostic("compile-error", "boom", 7, "a.cpp")] * 3
    ds += [Diagnostic("link-error", "undefined reference to `f`", 0, "")]
    out = condense(ds, "")
    lines = out.splitlines()
    assert len(lines) == 20
    assert lines[0] == "a.cpp:7: error: boom"
    assert sum("boom" in ln for ln in lines) == 1
    assert "link error" in lines[1]
    assert lines[-1].startswith("... and ")


def test_condense_without_diagnostics_falls_back_to_the_log():
    log = "\n".join(f"line {i}" for i in range(100)) + "\nsomething failed badly\n"
    out = condense([], log)
    assert "something failed badly" in out
    assert len(out.splitlines()) <= 20


def test_a_link_failure_of_another_form_says_what_the_linker_said():
    """ParRes' openmp-target programs failed to link on the GPU host as 'the linker failed'
    and nothing more: the report must carry the linker's own line."""
    from port_fortran.build_runner.diagnostics import parse_diagnostics

    log = ("[100%] Linking CXX executable program\n"
           "/usr/bin/ld: 01_x.o: relocation R_X86_64_32 against `.rodata' can not be used when making a PIE object\n"
           "collect2: error: ld returned 1 exit status\n")
    (d,) = parse_diagnostics(log)
    assert d.code == "link-error" and "relocation R_X86_64_32" in d.message


def test_openmp_flags_keep_target_regions_on_the_host():
    from port_fortran.build_runner.toolchain import host_openmp

    assert host_openmp(["-O2", "-fopenmp"]) == ["-O2", "-fopenmp", "-foffload=disable"]
    assert host_openmp(["-fopenmp", "-foffload=nvptx-none"]) == ["-fopenmp", "-foffload=nvptx-none"]
    assert host_openmp(["-O2"]) == ["-O2"]
