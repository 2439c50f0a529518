"""The validator's pattern checks (pure) and one real host-compiler syntax check."""
import os
from pathlib import Path

import pytest

from port_fortran.agents.validator import check_patterns, strip_comments_and_strings, validate

GOOD = '''#include "axpy.kokkos.hpp"
#include <cstdio>
// a comment mentioning fopen( and axpy_( is fine
extern "C" void axpy_kokkos(const int* n, const double* a, const double* x, double* y) {
  const char* msg = "system(rm)";  // strings are fine too
  Kokkos::parallel_for(*n, KOKKOS_LAMBDA(int i) { y[i] += *a * x[i]; });
}
'''


def codes(code, k="axpy"):
    return [d.code for d in check_patterns(code, k)]


def test_good_port_passes():
    assert codes(GOOD) == []


@pytest.mark.parametrize("snippet", ['FILE* f = fopen("ref.bin", "rb");', "std::ifstream in(\"y.txt\");",
                                     "std::ofstream o(\"out\");", 'system("cat ref");', 'popen("ls", "r");',
                                     "std::fstream f;"])
def test_file_io_is_rejected_with_its_line(snippet):
    code = GOOD.replace("  const char*", f"  {snippet}\n  const char*")
    diags = check_patterns(code, "axpy")
    assert [d.code for d in diags] == ["file-io"]
    assert diags[0].line == 5


def test_calling_the_original_routine_is_rejected():
    assert codes(GOOD.replace("Kokkos::parallel_for", "axpy_(n, a, x, y); Kokkos::parallel_for")) == ["calls-original"]
    decl = 'extern "C" void axpy(const int*, const double*, const double*, double*);\n'
    assert codes(decl + GOOD) == ["calls-original"]
    # the entry itself and other names containing the kernel's name are fine
    assert codes(GOOD.replace("y[i] +=", "y[i] = axpy_helper(i) +")) == []


def test_missing_entry_point():
    assert codes(GOOD.replace("axpy_kokkos(", "axpy_kokos(")) == ["missing-entry"]
    # a declaration is not a definition
    assert "missing-entry" in codes('extern "C" void axpy_kokkos(int* n);\n')


def test_hard_coded_outputs():
    lits = ", ".join(f"{0.123456789012 + i:.12f}" for i in range(30))
    code = GOOD.replace("  const char*", f"  static const double ref[30] = {{{lits}}};\n  const char*")
    cs = codes(code)
    assert "hard-coded-output" in cs
    table = ", ".join(str(i) for i in range(40))
    assert "hard-coded-output" in codes(GOOD.replace("  const char*", f"  int t[] = {{{table}}};\n  const char*"))
    # a few precise constants are fine
    assert codes(GOOD.replace("*a * x[i]", "3.14159265358979 * x[i]")) == []


def test_strip_keeps_lines():
    code = 'a; /* x\ny */ b; // c\n"s\\"t" d;'
    s = strip_comments_and_strings(code)
    assert s.count("\n") == code.count("\n") and "x" not in s and "s\\" not in s and "d;" in s


def test_answer_with_prose_is_cleaned(tmp_path):
    clean, diags = validate(f"Here you go:\n```cpp\n{GOOD}```\nEnjoy.", "axpy", tmp_path, compile_check=False)
    assert diags == [] and clean.startswith('#include "axpy.kokkos.hpp"') and "Enjoy" not in clean
    clean, diags = validate("Sorry, I can't.", "axpy", tmp_path, compile_check=False)
    assert [d.code for d in diags] in (["no-code"], ["missing-entry"])


def _kokkos():
    from port_fortran.build_runner.kokkos import find_install

    return find_install("serial")


@pytest.mark.integration
def test_syntax_check_with_the_host_compiler(tmp_path):
    if _kokkos() is None:
        pytest.skip("no Kokkos install (set Kokkos_ROOT)")
    (tmp_path / "axpy.kokkos.hpp").write_text(
        '#pragma once\n#include <Kokkos_Core.hpp>\n'
        'extern "C" void axpy_kokkos(const int* n, const double* a, const double* x, double* y);\n')
    clean, diags = validate(GOOD, "axpy", tmp_path)
    assert diags == [], diags
    bad = GOOD.replace("y[i] += *a * x[i];", "y[i] += *a * x[i]\n")
    _, diags = validate(bad, "axpy", tmp_path)
    assert diags and diags[0].code == "syntax-error" and diags[0].file == "axpy.kokkos.cpp"
    assert diags[0].line in (6, 7)
    assert not list(tmp_path.glob(".pf_validate_*"))  # the scratch copy is gone


# --------------------------------------------------------------------------- the original's own constants

STENCIL = """\
subroutine star3(n, a, b)
  integer, intent(in) :: n
  double precision, intent(in) :: a(n, n)
  double precision, intent(inout) :: b(n, n)
  double precision, parameter :: sixth = 1.0d0 / 6.
  integer :: i, j
  do j = 4, n - 3
    do i = 4, n - 3
      b(i, j) = b(i, j) + a(i, j-3) * (-0.05555555555555555d0) + a(i, j-2) * (-0.08333333333333333D0) &
              + a(i, j-1) * (-0.16666666666666666d0) + a(i-3, j) * (-0.05555555555555555d0) &
              + a(i-2, j) * (-0.08333333333333333d0) + a(i-1, j) * (-0.166666666666666667d0) &
              + a(i+1, j) * 0.16666666666666666d0 + a(i+2, j) * 0.08333333333333333d0 &
              + a(i+3, j) * 0.05555555555555555d0 + a(i, j+1) * 0.16666666666666666_8 &
              + a(i, j+2) * 0.08333333333333333d0 + a(i, j+3) * 0.05555555555555555d0 &
              + a(i, j) * sixth * 0.1234567891234d0
    end do
  end do
end subroutine star3
"""


def test_stencil_weights_of_the_original_are_not_hard_coded_output(tmp_path):
    """A stencil with 13 many-digit weights: the rules port prints them all; they are the
    original's, so no hard-coded-output; the same literals without the original are."""
    from port_fortran.agents.validator import source_constants
    from port_fortran.fortran import parse_file
    from port_fortran.translate import translate_kernel

    p = tmp_path / "star.f90"
    p.write_text(STENCIL)
    sf = parse_file(p, use_cache=False)
    (k,) = sf.kernels
    code = translate_kernel(k, sf).files["star3.kokkos.cpp"]
    consts = source_constants(k)
    assert 1.0 / 6.0 in consts and 0.1234567891234 in consts and 6.0 in consts
    assert "hard-coded-output" not in [d.code for d in check_patterns(code, "star3", constants=consts)]
    assert "hard-coded-output" in [d.code for d in check_patterns(code, "star3")]
    # a literal the original does not have still counts
    pasted = code.replace("{", "{ double r[] = {" + ", ".join(f"{0.1 + i / 7:.15f}" for i in range(30)) + "};", 1)
    assert "hard-coded-output" in [d.code for d in check_patterns(pasted, "star3", constants=consts)]
