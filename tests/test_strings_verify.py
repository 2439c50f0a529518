"""CHARACTER strings ported and proven (fortran/strings.py, translate/cstrings.py): the rules
port of each routine reproduces gfortran's build of the original on random printable strings
(both cases, digits, blanks, signs; len=* lengths drawn per case), on Serial and OpenMP.

  casemod.f90  upcase  len=* dummy, s(i:i) read and assigned, ICHAR/CHAR case arithmetic
               match   a substring str(i:i+n-1) compared in a loop, LEN_TRIM, INDEX, a local
                       CHARACTER*12 (padding, truncation), ordering comparisons
  chutil.f     ltrim8  F77 CHARACTER*(*) and CHARACTER*8 dummies, a backward scan, .GE.
  strfun.f90   lcase   a CHARACTER function result of len=len(s) (gfortran's hidden leading
                       result buffer and length), set through SELECT CASE
               first8  a result of constant length 8, assigned whole, then one character
               framed  a result of len=n+2 (computed from an integer dummy)
  tag6.f       tag6    an F77 CHARACTER*6 FUNCTION (external: no module)
  chary.f      chrev   CHARACTER*1 A(1) arrays (the harness draws and compares their elements)
  namsrt.f     namsrt  arrays of CHARACTER*6 (Views of pf::Chars<6>): a gather through an index
                       array, comparisons of elements with each other and with a literal in a
                       parallel_reduce, a local CHARACTER*6 array
  kwmatch.f90  match_nocase  character(len=len_trim(s)) locals: host buffers sized at entry
  blanks.f     blanks  CHARACTER constants: a CHARACTER*1 set by SAVE+DATA, CHARACTER*1 and
                       CHARACTER*5 PARAMETERs (char and pf::Str of a literal)
"""
from __future__ import annotations

from pathlib import Path

import pytest

from port_fortran.fortran import parse_file
from port_fortran.translate import translate_kernel, write_port

DATA = Path(__file__).parent / "data" / "strings"

CASES = [("casemod.f90", "upcase"), ("casemod.f90", "match"), ("chutil.f", "ltrim8"),
         ("strfun.f90", "lcase"), ("strfun.f90", "first8"), ("strfun.f90", "framed"), ("tag6.f", "tag6"),
         ("chary.f", "chrev"), ("namsrt.f", "namsrt"),
         ("kwmatch.f90", "match_nocase"), ("blanks.f", "blanks")]


def _kernel(file, name):
    sf = parse_file(str(DATA / file))
    return sf, next(k for k in sf.kernels if k.name == name)


def test_entry_takes_hidden_lengths():
    sf, k = _kernel("casemod.f90", "match")
    port = translate_kernel(k, sf)
    src = port.cpp if hasattr(port, "cpp") else str(port)
    text = "\n".join(str(v) for v in vars(port).values()) if not isinstance(src, str) else src
    assert "std::size_t pat_len" in text and "std::size_t str_len" in text
    assert "pf::Chars<12>" in text  # the local buffer owns its bytes


@pytest.mark.integration
@pytest.mark.parametrize("file,name", CASES, ids=[c[1] for c in CASES])
def test_string_port_matches_original(tmp_path, file, name):
    from port_fortran.harness import Harness

    sf, k = _kernel(file, name)
    port = translate_kernel(k, sf)
    d = tmp_path / name
    write_port(port, d)
    h = Harness(k, sf, d)
    for backend in ("serial", "openmp"):
        b = h.build(backend)
        assert b.ok, f"{name} [{backend}] build failed:\n{b.condensed}"
        v = h.verify(backend)
        assert v.passed, f"{name} [{backend}]: {v.reason}"
        assert v.cases and all(c.outputs for c in v.cases)


def test_string_result_takes_leading_buffer():
    """A CHARACTER result: the entry returns void and takes the caller's buffer and its length
    first, as gfortran passes them; the bind(C) interface is a subroutine."""
    sf, k = _kernel("strfun.f90", "lcase")
    port = translate_kernel(k, sf)
    cpp, mod = port.files["lcase.kokkos.cpp"], port.files["lcase_kokkos_mod.f90"]
    assert 'extern "C" void lcase_kokkos(char* r_ptr,' in cpp and "std::size_t r_len," in cpp
    assert "subroutine lcase_kokkos(r, r_len, s, s_len)" in mod


def test_char_len_digit_of_an_expression_is_not_a_length():
    """``len=n+2`` is computed at run time, not a length of 2."""
    _, k = _kernel("strfun.f90", "framed")
    assert k.result.ftype.char_len is None and k.result.len_runtime == "n+2"
    _, k = _kernel("strfun.f90", "first8")
    assert k.result.ftype.char_len == 8
