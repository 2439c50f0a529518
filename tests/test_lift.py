"""Internal procedures of a main program made callable (fortran/lift.py): the program becomes
a module in a copy of its file, line numbers kept, executable statements dropped, directives
kept; only procedures that use none of the program's variables are lifted."""
from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from port_fortran.fortran import lift, parse_file

DATA = Path(__file__).parent / "data" / "lifted"


def _unit(path, **kw):
    sf = parse_file(str(path), use_cache=False, **kw)
    assert not sf.errors, sf.errors
    return sf, sf.program_units[0]


def test_the_program_becomes_a_module_line_for_line():
    path = DATA / "lkern.F90"
    sf, unit = _unit(path, include_dirs=[str(DATA / "include")])
    names = lift.liftable(sf, unit)
    assert sorted(k.name for k in names) == ["kscale", "kstencil"]  # kuses reads the program's factor
    text = path.read_text()
    out = lift.lifted_text(text, sf.form, unit, names)
    src, got = text.split("\n"), out.split("\n")
    assert len(got) == len(src)
    assert got[unit.line_start - 1] == "module pf_host_lkern" and got[unit.line_end - 1] == "end module pf_host_lkern"
    assert got[5] == "  use ptimer" and got[7] == '#include "pbsizes.h"'  # specification part kept
    assert "call kscale" not in out and "allocate(a(nx, ny)" not in out  # executable part dropped
    for k in names:  # the procedures verbatim, at their own lines
        assert got[k.line_start - 1:k.line_end] == src[k.line_start - 1:k.line_end]


def test_procedures_reaching_host_variables_are_not_lifted(tmp_path):
    p = tmp_path / "h.f90"
    p.write_text(textwrap.dedent("""\
        program h
          implicit none
          real(8) :: w(10)
          w = 1.0d0
          call outer(10, w)
        contains
          subroutine outer(n, a)
            integer :: n, i
            real(8) :: a(n)
            do i = 1, n
              a(i) = a(i) + 1.0d0
            end do
            call inner(n, a)
          end subroutine outer
          subroutine inner(n, a)
            integer :: n, i
            real(8) :: a(n)
            do i = 1, n
              a(i) = a(i) * w(i)
            end do
          end subroutine inner
          subroutine alone(n, a)
            integer :: n, i
            real(8) :: a(n)
            do i = 1, n
              a(i) = 2.0d0 * a(i)
            end do
          end subroutine alone
        end program h
    """))
    sf, unit = _unit(p)
    assert [k.name for k in lift.liftable(sf, unit)] == ["alone"]  # outer calls inner, which reads w


def test_what_a_module_cannot_hold_stops_the_lift(tmp_path):
    p = tmp_path / "f.f90"
    p.write_text(textwrap.dedent("""\
        program f
          implicit none
          real(8) :: x(4)
        10 format(4f8.3)
          x = 1.0d0
          call k(4, x)
          write(*, 10) x
        contains
          subroutine k(n, a)
            integer :: n, i
            real(8) :: a(n)
            do i = 1, n
              a(i) = a(i) + i
            end do
          end subroutine k
        end program f
    """))
    sf, unit = _unit(p)
    assert lift.lifted_text(p.read_text(), sf.form, unit, lift.liftable(sf, unit)) is None


@pytest.mark.skipif(shutil.which("gfortran") is None, reason="no gfortran")
def test_the_copy_compiles_and_exports_the_procedures(tmp_path):
    sf, unit = _unit(DATA / "lkern.F90", include_dirs=[str(DATA / "include")])
    copy = tmp_path / "lkern.F90"
    copy.write_text(lift.lifted_text((DATA / "lkern.F90").read_text(), sf.form, unit, lift.liftable(sf, unit)))
    for src in (DATA / "ptimer.f90", copy):
        subprocess.run(["gfortran", "-c", "-cpp", f"-I{DATA / 'include'}", f"-J{tmp_path}", str(src), "-o",
                        str(tmp_path / (src.stem + ".o"))], check=True, cwd=tmp_path)
    syms = subprocess.run(["nm", str(tmp_path / "lkern.o")], capture_output=True, text=True).stdout
    assert "__pf_host_lkern_MOD_kscale" in syms and "__pf_host_lkern_MOD_kstencil" in syms
