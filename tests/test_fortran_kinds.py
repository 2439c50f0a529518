"""Kinds as a compiler resolves them (intrinsic modules, kind inquiries, modules of other
files) and names from modules told apart: arrays, constants, statement functions. A kind
that cannot be known is a refusal with its line, never a default (asserts on the IR)."""
from __future__ import annotations

import textwrap

import pytest

from port_fortran.fortran import ftypes, ir, parse_file
from port_fortran.fortran.render import expr_str


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text).lstrip("\n"))
    return p


def parse(tmp_path, text, name="k.f90", **kw):
    return parse_file(write(tmp_path, name, text), use_cache=False, **kw)


def types(k):
    return {a.name: (a.ftype.base, a.ftype.kind) for a in k.args}


def test_iso_fortran_env_and_iso_c_binding_kinds(tmp_path):
    sf = parse(tmp_path, """
        subroutine s(n, a, b, c, d, e, f, g)
          use, intrinsic :: iso_fortran_env, only: int32, int64, wp => real64, real32
          use iso_c_binding
          implicit none
          integer(kind=int32), intent(in) :: n
          real(kind=wp), intent(inout) :: a(n)
          real(real32), intent(in) :: b(n)
          integer(int64), intent(out) :: c
          real(c_double), intent(in) :: d
          integer(c_long), intent(in) :: e
          real(c_float), intent(in) :: f
          integer(kind=c_int), intent(in) :: g
          a = a * 2.0_wp + b + d + f
          c = e + g + 1_int64
        end subroutine
    """)
    (k,) = sf.kernels
    assert not k.unsupported, k.unsupported
    assert types(k) == {"n": ("integer", 4), "a": ("real", 8), "b": ("real", 4), "c": ("integer", 8),
                        "d": ("real", 8), "e": ("integer", 8), "f": ("real", 4), "g": ("integer", 4)}
    lits = [x for s in ir.walk(k.body) for e in ir.stmt_exprs(s) for x in ir.walk_expr(e)
            if isinstance(x, ir.Literal)]
    assert {(x.text, x.ftype.kind) for x in lits} >= {("2.0_wp", 8), ("1_int64", 8)}


def test_kind_inquiries_and_legacy_spellings(tmp_path):
    sf = parse(tmp_path, """
        subroutine s(a, b, c, d, e, f, g, h, z, w)
          integer, parameter :: dp = kind(1.d0), sp = kind(1.0), qp = selected_real_kind(30)
          integer, parameter :: rk = selected_real_kind(p=6, r=300), ik = selected_int_kind(18)
          real(dp) :: a
          real(sp) :: b
          real(rk) :: c
          integer(ik) :: d
          real*8 :: e
          double precision :: f
          integer*8 :: g
          complex*16 :: h
          double complex :: z
          real(qp) :: w
          a = 1.5d0 * f
        end subroutine
    """)
    (k,) = sf.kernels
    assert not k.unsupported, k.unsupported
    assert types(k) == {"a": ("real", 8), "b": ("real", 4), "c": ("real", 8), "d": ("integer", 8),
                        "e": ("real", 8), "f": ("real", 8), "g": ("integer", 8), "h": ("complex", 8),
                        "z": ("complex", 8), "w": ("real", 16)}


def test_selected_kinds_follow_gfortran():
    assert [ftypes.selected_real_kind(p) for p in (1, 6, 7, 15, 16, 18, 19, 33)] == [4, 4, 8, 8, 10, 10, 16, 16]
    assert ftypes.selected_real_kind(6, 38) == 8 and ftypes.selected_real_kind(r=400) == 10
    assert ftypes.selected_real_kind(40) == -1 and ftypes.selected_real_kind(6, 5000) == -2
    assert ftypes.selected_real_kind(40, 5000) == -3
    assert [ftypes.selected_int_kind(r) for r in (2, 3, 9, 10, 18, 19, 39)] == [1, 2, 4, 8, 8, 16, -1]


@pytest.mark.parametrize("decl, words", [
    ("real(kind=wp) :: x", ["wp is not defined"]),
    ("real(3) :: x", ["real kind 3 does not exist"]),
    ("real(selected_real_kind(40)) :: x", ["SELECTED_*_KIND found no real kind"]),
    ("integer :: m; real(kind=m) :: x", ["m is not a named constant"]),
])
def test_unknown_or_wrong_kinds_are_refused_with_their_line(tmp_path, decl, words):
    sf = parse(tmp_path, f"""
        subroutine s(x)
          implicit none
          {decl}
          x = 1
        end subroutine
    """)
    (k,) = sf.kernels
    us = [u for u in k.unsupported if u.construct == "unknown-kind"]
    assert us and us[0].line == 3, k.unsupported
    for w in words:
        assert w in us[0].reason, us[0].reason


def test_a_literal_of_unknown_kind_is_refused(tmp_path):
    sf = parse(tmp_path, """
        subroutine s(x)
          real(8) :: x
          x = 2.5_rk
        end subroutine
    """)
    (k,) = sf.kernels
    (u,) = k.unsupported
    assert u.construct == "unknown-kind" and u.line == 3 and "rk is not defined" in u.reason


CONSTS = """
    module consts
      implicit none
      integer, parameter :: rk = selected_real_kind(12)
      integer, parameter :: nmax = 10
      real(rk), parameter :: half = 0.5_rk
      real(rk) :: table(nmax)
    end module consts
"""

KERN = """
    subroutine fill(n, x)
      use consts, only: rk, half, table
      implicit none
      integer, intent(in) :: n
      real(rk), intent(inout) :: x(n)
      integer :: i
      table(i) = half
      do i = 1, n
        x(i) = x(i) * half
      end do
    end subroutine
"""


def test_kinds_constants_and_arrays_from_a_module_of_another_file(tmp_path):
    write(tmp_path, "consts.f90", CONSTS)
    sf = parse(tmp_path, KERN, name="kern.f90")  # found in the same directory
    (k,) = sf.kernels
    assert types(k) == {"n": ("integer", 4), "x": ("real", 8)}
    assert k.locals["half"].parameter == 0.5 and k.locals["half"].ftype == ir.REAL8
    # table(i) = ... first among the statements: an array of the module, not a statement function
    first = k.body[0]
    assert isinstance(first, ir.Assign) and isinstance(first.target, ir.ArrayRef) and first.line == 7
    assert "table" in k.module_vars and k.module_vars["table"].rank == 1
    assert [u.construct for u in k.unsupported] == []
    assert not sf.missing_modules


def test_module_interfaces_can_be_given_by_the_caller(tmp_path):
    cdir = tmp_path / "lib"
    cdir.mkdir()
    mod = parse_file(write(cdir, "consts.f90", CONSTS), use_cache=False)
    iface = mod.interfaces["consts"]
    assert iface.variables["rk"].parameter == 8 and "half" in iface.constants and iface.variables["table"].rank == 1
    kern = write(tmp_path, "kern.f90", KERN)
    sf = parse_file(kern, use_cache=False, modules={"consts": iface})
    assert types(sf.kernels[0])["x"] == ("real", 8)
    # or searched for in the trees given
    sf = parse_file(kern, use_cache=False, module_search=[str(cdir)])
    assert types(sf.kernels[0])["x"] == ("real", 8)


def test_names_from_a_missing_module_are_refused_not_guessed(tmp_path):
    sf = parse(tmp_path, KERN, name="kern.f90")  # consts.f90 is nowhere
    (k,) = sf.kernels
    assert sf.missing_modules == {"consts": 2}
    got = {(u.construct, u.line) for u in k.unsupported}
    assert got == {("unknown-kind", 5), ("unknown-module", 7), ("unknown-module", 9)}  # x's kind, table, half
    assert all("module consts" in u.reason and "not found" in u.reason for u in k.unsupported)
    # a USE without ONLY: any undeclared name may come from it
    sf = parse(tmp_path, """
        subroutine s(n, x)
          use somewhere
          integer n
          real x(n)
          x(1) = alpha
        end subroutine
    """, name="w.f90")
    (k,) = sf.kernels
    (u,) = k.unsupported
    assert u.construct == "unknown-module" and u.line == 5 and "alpha" in u.reason


def test_a_statement_function_is_inlined_with_its_dummies_bound(tmp_path):
    sf = parse(tmp_path, """
        subroutine s(n, x)
          integer n, i, k
          real x(n), f, g, t
          f(t) = t * t + 1.0
          g(k) = k + 1
          do i = 1, n
            x(i) = f(x(i) - 2.0) * g(i)
          end do
        end subroutine
    """)
    (k,) = sf.kernels
    assert not k.unsupported
    (loop,) = k.body  # the definitions are not statements
    text = expr_str(loop.body[0].value)
    # f's dummy bound to the whole actual (x(i) - 2.0, parenthesised by precedence); g's
    # integer value converted to g's REAL type as an assignment would
    assert text == "((x(i)-2.0)*(x(i)-2.0)+1.0)*real(i+1)", text
    assert "f(" not in text and "g(" not in text


def test_an_unreferenced_statement_function_calls_nothing(tmp_path):
    sf = parse(tmp_path, """
        subroutine s(n, x)
          integer n, i
          real x(n), f, t, ext
          f(t) = ext(t) + 1.0
          do i = 1, n
            x(i) = 2.0 * x(i)
          end do
        end subroutine
    """)
    (k,) = sf.kernels
    assert not k.unsupported and "ext" not in k.calls, k.calls


def test_a_statement_function_that_cannot_be_inlined_is_refused_at_its_line(tmp_path):
    sf = parse(tmp_path, """
        subroutine s(n, x, c)
          integer n, i
          real x(n), h, t
          character*4 c, cf, u
          h(t) = t * 2.0
          cf(u) = u
          do i = 1, n
            x(i) = h(x(i), 1.0)
          end do
        end subroutine
    """)
    (k,) = sf.kernels
    found = {u.line: u for u in k.unsupported if u.construct == "statement-function"}
    assert sorted(found) == [6, 8], k.unsupported  # the character one at its definition, the bad reference at its line
    assert "character" in found[6].reason and "takes 1 arguments, referenced with 2" in found[8].reason


def test_the_nearest_definition_of_a_module_is_taken(tmp_path):
    for d, kind in (("a", 8), ("b", 4)):
        (tmp_path / d).mkdir()
        write(tmp_path / d, "prec.f90", f"module prec\n  integer, parameter :: wp = {kind}\nend module prec\n")
    kern = write(tmp_path / "a", "k.f90", "subroutine s(x)\n  use prec\n  real(wp) :: x\n  x = 1\nend subroutine\n")
    sf = parse_file(kern, use_cache=False, module_search=[str(tmp_path)])
    assert types(sf.kernels[0]) == {"x": ("real", 8)}
    (tmp_path / "c").mkdir()
    kern2 = write(tmp_path / "c", "k.f90", "subroutine s(x)\n  use prec\n  real(wp) :: x\n  x = 1\nend subroutine\n")
    sf = parse_file(kern2, use_cache=False, module_search=[str(tmp_path)])
    (u,) = [u for u in sf.kernels[0].unsupported if u.construct == "unknown-kind"]
    assert "several files" in u.reason


def test_enumerators_are_constants_and_unreadable_declarations_keep_their_reason(tmp_path):
    sf = parse(tmp_path, """
        program p
          use iso_c_binding
          implicit none
          enum, bind(c)
            enumerator :: geometric, linear = 5, patch
          end enum
          type(c_ptr) :: handle
          integer :: mode
          mode = patch
        contains
          subroutine pick(m, k)
            integer, intent(in) :: m
            integer, intent(out) :: k
            k = 0
            if (m == linear) k = patch
          end subroutine
          subroutine keep(k)
            integer, intent(out) :: k
            k = 1
            call use_it(handle)
          end subroutine
        end program
    """)
    ks = {k.name: k for k in sf.kernels}
    assert not ks["pick"].unsupported and ks["pick"].locals["patch"].parameter == 6
    assert ks["pick"].locals["linear"].parameter == 5
    (u,) = ks["keep"].unsupported
    assert u.construct == "derived-type" and "handle" == u.text and "declared at line 7" in u.reason


def test_an_untyped_name_points_at_the_include_that_was_not_found(tmp_path):
    sf = parse(tmp_path, """
        subroutine a(x)
          implicit none
          real x
          x = 1
        end subroutine
        subroutine s(n, x)
          implicit none
          include 'mpif.h'
          integer n
          real x(n)
          x(1) = mpi_sum
        end subroutine
    """)
    k = next(k for k in sf.kernels if k.name == "s")
    (u,) = k.unsupported
    assert u.construct == "untyped" and u.line == 11 and "include file mpif.h, which was not found" in u.reason


PROMOTED = """\
      SUBROUTINE AXPB (N, A, X, Y, D, Z)
      REAL X(N), Y(N)
      DOUBLE PRECISION D
      REAL*4 Z
      COMPLEX C
      DO 10 I = 1, N
         Y(I) = A*X(I) + 1.0 + D*1.0D0 + DBLE(Z) + REAL(C)
   10 CONTINUE
      RETURN
      END
"""


def _kinds_of(sf):
    k = sf.kernels[0]
    lits = sorted({(x.text, x.ftype.kind) for s in ir.walk(k.body) for e in ir.stmt_exprs(s)
                   for x in ir.walk_expr(e) if isinstance(x, ir.Literal) and x.ftype.base == "real"})
    return types(k), k.locals["c"].ftype, lits


@pytest.mark.parametrize("fflags, real, double", [
    ((), 4, 8),
    (("-fdefault-real-8",), 8, 16),  # gfortran promotes DOUBLE PRECISION to 16 bytes too
    (("-fdefault-real-8", "-fdefault-double-8"), 8, 8),
    (("-O2", "-fdefault-double-8"), 4, 8),
])
def test_default_kind_flags_are_read_as_gfortran_reads_them(tmp_path, fflags, real, double):
    """-fdefault-real-8 (Nekbone builds with it): REAL, implicit reals, COMPLEX and 1.0 are
    8 bytes, DOUBLE PRECISION and 1.0D0 16 unless -fdefault-double-8; REAL*4 stays 4."""
    p = tmp_path / "axpb.f"
    p.write_text(PROMOTED)
    assert ftypes.kinds_of_fflags(fflags) == (real, double)
    sf = parse_file(p, use_cache=False, fflags=fflags)
    args, c, lits = _kinds_of(sf)
    assert args == {"n": ("integer", 4), "a": ("real", real), "x": ("real", real), "y": ("real", real),
                    "d": ("real", double), "z": ("real", 4)}
    assert c == ir.FType("complex", real)
    assert lits == [("1.0", real), ("1.0D0", double)]
    assert ftypes.current_kinds() == (4, 8)  # the flags hold for that file only


def test_the_parse_cache_keeps_files_read_with_other_default_kinds_apart(tmp_path, monkeypatch):
    monkeypatch.setenv("PORT_FORTRAN_CACHE", str(tmp_path / "cache"))
    p = tmp_path / "axpb.f"
    p.write_text(PROMOTED)
    assert types(parse_file(p).kernels[0])["x"] == ("real", 4)
    assert types(parse_file(p, fflags=["-fdefault-real-8"]).kernels[0])["x"] == ("real", 8)
    assert types(parse_file(p).kernels[0])["x"] == ("real", 4)
