"""C preprocessing is gfortran's (issue 12, class 5), with ``gfortran -E -cpp`` as the oracle.

Every case compares the text the front end parses with what ``gfortran -E -cpp`` prints
for the same file, flags and include dirs (linemarkers dropped), and checks the line map:
each line of the sources carries a tag ``! @<file>:<line>`` and must come back with that
origin, so diagnostics name the user's file and line. Covered: C comments in an
``#include``d header (a syntax error with the preprocessor used before), function-like
macros, ``#if defined(...)`` / ``#elif``, include search order (the including file's
directory first, then ``-I`` in order), ``-DX`` / ``-DX=`` / ``-DX=V``, ``__FILE__`` and
``__LINE__``, fixed form with cpp (apostrophes in comment lines), a missing header (an
error on the ``#include`` line; the rest of the file is still read), ``#error``.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from port_fortran.fortran import ir, parse_file
from port_fortran.fortran.cpp import define_flags
from port_fortran.fortran.reader import read_source

GFORTRAN = shutil.which("gfortran")
pytestmark = pytest.mark.skipif(GFORTRAN is None, reason="gfortran not installed")

TAG = re.compile(r"! @(\S+):(\d+)")


def oracle(path: Path, include_dirs=(), defines=None, form="free") -> list[str]:
    """``gfortran -E -cpp`` as a user would run it, linemarkers dropped."""
    lang = "f77-cpp-input" if form == "fixed" else "f95-cpp-input"
    cmd = [GFORTRAN, "-E", "-cpp", *[f"-I{d}" for d in include_dirs], *define_flags(defines), "-x", lang, str(path)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    return [ln for ln in res.stdout.split("\n") if not re.match(r'^# \d+ "', ln)]


def tagged(lines: list[str], name: str) -> str:
    """Each non-directive line gets ``! @name:N`` (its own line number)."""
    out = []
    for i, ln in enumerate(lines, 1):
        out.append(ln if ln.startswith("#") or not ln.strip() else f"{ln}  ! @{name}:{i}")
    return "\n".join(out) + "\n"


def check_against_oracle(path: Path, include_dirs=(), defines=None, form="free"):
    src = read_source(path, include_dirs, defines)
    ours = src.text.split("\n")
    want = oracle(path, include_dirs, defines, form)
    strip = lambda xs: [x.rstrip() for x in xs if x.strip()]  # noqa: E731
    assert strip(ours) == strip(want)
    for ln, org in zip(ours, src.origins):  # every tagged line maps back to its own file and line
        m = TAG.search(ln)
        if m:
            assert (Path(org.file).name, org.line) == (m.group(1), int(m.group(2))), ln
    return src


HEADER = """\
/* physical constants of the model:
   a C comment over several lines, as real codes put in headers */
#define NX 16   /* cells */
#define IDX(i, j) ((i) + NX * ((j) - 1))
#define TWICE(x) (2 * (x))
"""


def test_c_comments_in_header_and_function_like_macros(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "model.h").write_text(HEADER)
    body = ["#include \"model.h\"",
            "subroutine k(a, n)",
            "  integer, intent(in) :: n",
            "  real(8), intent(inout) :: a(NX * NX)",
            "  integer :: i, j",
            "  do j = 1, n",
            "    do i = 1, n",
            "      a(IDX(i, j)) = TWICE(a(IDX(i, j))) /* scaled */ + 1",
            "    end do",
            "  end do",
            "  print *, 'it''s // not a comment', __LINE__",
            "end subroutine k"]
    p = tmp_path / "k.F90"
    p.write_text(tagged(body, "k.F90"))
    src = check_against_oracle(p, [inc])
    assert str(inc / "model.h") in src.includes  # #include'd headers are dependencies too
    assert "__LINE__" not in src.text and ", 11" in src.text
    sf = parse_file(p, include_dirs=[str(inc)], use_cache=False)
    assert not sf.errors, sf.errors
    k = sf.kernels[0]
    assert k.arg("a").dims[0].upper is not None
    assign = next(s for s in ir.walk(k.body) if isinstance(s, ir.Assign))
    assert assign.line == 8  # the user's line, not the line of the expanded text
    assert k.line_start == 2


def test_if_defined_elif_and_define_forms(tmp_path):
    body = ["#if defined(FAST) && FAST > 1",
            "#define MODE 2",
            "#elif defined(SLOW)",
            "#define MODE 1",
            "#else",
            "#define MODE 0",
            "#endif",
            "subroutine m(x)",
            "  integer x",
            "#ifdef EMPTY",
            "  x = MODE EMPTY + 10",
            "#else",
            "  x = MODE",
            "#endif",
            "end subroutine m"]
    p = tmp_path / "m.F90"
    p.write_text(tagged(body, "m.F90"))
    for defines, want in (({}, "x = 0"), ({"SLOW": "1"}, "x = 1"), ({"FAST": "2"}, "x = 2"),
                          ({"FAST": "1"}, "x = 0"), ({"FAST": "2", "EMPTY": ""}, "x = 2  + 10")):
        src = check_against_oracle(p, defines=defines)
        assert want in src.text, (defines, src.text)
    assert define_flags({"A": "1", "B": "", "C": None, "D": "x y"}) == ["-DA=1", "-DB=", "-DC", "-DD=x y"]


def test_include_search_order(tmp_path):
    """``#include "x"``: the directory of the file that includes it first, then -I in order."""
    main_dir, hdr, i1, i2 = (tmp_path / d for d in ("src", "hdr", "i1", "i2"))
    for d in (main_dir, hdr, i1, i2):
        d.mkdir()
    (main_dir / "local.h").write_text("#define LOCAL 1\n")
    (i1 / "local.h").write_text("#define LOCAL 2\n")
    (i1 / "order.h").write_text("#define ORDER 1\n")
    (i2 / "order.h").write_text("#define ORDER 2\n")
    (hdr / "outer.h").write_text('#include "nested.h"\n')
    (hdr / "nested.h").write_text("#define NESTED 1\n")  # next to outer.h: found first
    (main_dir / "nested.h").write_text("#define NESTED 2\n")
    (i1 / "nested.h").write_text("#define NESTED 3\n")
    body = ['#include "local.h"', '#include "order.h"', '#include "outer.h"',
            "subroutine o(x)", "  integer x(3)", "  x(1) = LOCAL", "  x(2) = ORDER", "  x(3) = NESTED",
            "end subroutine o"]
    p = main_dir / "o.F90"
    p.write_text(tagged(body, "o.F90"))
    src = check_against_oracle(p, [hdr, i1, i2])
    assert "x(1) = 1" in src.text and "x(2) = 1" in src.text and "x(3) = 1" in src.text
    src = check_against_oracle(p, [i2, i1, hdr])
    assert "x(2) = 2" in src.text and "x(3) = 1" in src.text


def test_file_and_line_macros(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # short names: fixed form drops what passes column 72, as gfortran does
    Path("inc").mkdir()
    Path("inc/where.h").write_text("      PRINT *, __FILE__, __LINE__\n")
    body = ["      SUBROUTINE W", '#include "where.h"', "      PRINT *, __FILE__, __LINE__", "      END"]
    p = Path("w.F")
    p.write_text("\n".join(body) + "\n")
    src = check_against_oracle(p, ["inc"], form="fixed")
    text = src.text.replace(" ", "")
    assert 'PRINT*,"w.F",3' in text and 'PRINT*,"inc/where.h",1' in text  # the file as given, the line in it
    i = next(i for i, ln in enumerate(src.text.split("\n")) if "where.h" in ln)
    assert src.origins[i].file == str(tmp_path / "inc" / "where.h") and src.origins[i].main_line == 2


def test_fixed_form_with_cpp(tmp_path):
    body = ["C     it's a comment with an apostrophe /* and C comment marks */",
            "      SUBROUTINE F(X, N)",
            "#define NB 4",
            "      INTEGER N, I",
            "      REAL X(NB)",
            "* don't stop here",
            "      DO 10 I = 1, N",
            "#ifdef TWICE",
            "         X(I) = 2.0 * X(I)",
            "#else",
            "         X(I) = X(I) +",
            "     &          1.0",
            "#endif",
            "   10 CONTINUE",
            "      END"]
    p = tmp_path / "f.F"
    p.write_text("\n".join(body) + "\n")
    for defines in ({}, {"TWICE": None}):
        check_against_oracle(p, defines=defines, form="fixed")
    sf = parse_file(p, use_cache=False)
    assert not sf.errors, sf.errors
    k = sf.kernels[0]
    assert k.arg("x").dims[0].upper.value == 4
    assign = next(s for s in ir.walk(k.body) if isinstance(s, ir.Assign))
    assert assign.line == 11
    sf2 = parse_file(p, defines={"TWICE": "1"}, use_cache=False)
    assert next(s for s in ir.walk(sf2.kernels[0].body) if isinstance(s, ir.Assign)).line == 9


def test_missing_header_reported_and_rest_read(tmp_path):
    (tmp_path / "outer.h").write_text("#define A 1\n\n#include <nowhere/gone.h>\n")
    body = ['#include "outer.h"', '#include "missing.h"', "subroutine s(x)", "  real x", "  x = A",
            "end subroutine s"]
    p = tmp_path / "s.F90"
    p.write_text("\n".join(body) + "\n")
    src = read_source(p)
    errs = sorted((Path(f).name, line, code) for f, line, code, _ in src.errors)
    assert errs == [("outer.h", 3, "preprocessor-error"), ("s.F90", 2, "preprocessor-error")]
    assert any("missing.h" in m and "-I" in m for *_, m in src.errors)
    assert "x = 1" in src.text
    sf = parse_file(p, use_cache=False)
    assert [k.name for k in sf.kernels] == ["s"]


def test_error_directive_line(tmp_path):
    p = tmp_path / "e.F90"
    p.write_text("#ifndef N\n#error define N\n#endif\nsubroutine e\nend subroutine e\n")
    src = read_source(p)
    assert [(line, m) for _, line, _, m in src.errors] == [(2, "#error define N")]
    assert read_source(p, defines={"N": "1"}).errors == []
