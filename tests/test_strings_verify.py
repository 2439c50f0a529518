"""CHARACTER strings ported and proven (fortran/strings.py, translate/cstrings.py): the rules
port of each routine reproduces gfortran's build of the original on random printable strings
(both cases, digits, blanks, signs; len=* lengths drawn per case), on Serial and OpenMP.

  casemod.f90  upcase  len=* dummy, s(i:i) read and assigned, ICHAR/CHAR case arithmetic
               match   a substring str(i:i+n-1) compared in a loop, LEN_TRIM, INDEX, a local
                       CHARACTER*12 (padding, truncation), ordering comparisons
  chutil.f     ltrim8  F77 CHARACTER*(*) and CHARACTER*8 dummies, a backward scan, .GE.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from port_fortran.fortran import parse_file
from port_fortran.translate import translate_kernel, write_port

DATA = Path(__file__).parent / "data" / "strings"

CASES = [("casemod.f90", "upcase"), ("casemod.f90", "match"), ("chutil.f", "ltrim8")]


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
