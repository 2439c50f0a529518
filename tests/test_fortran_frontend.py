"""Front end: reading, parsing and the IR of each construct (asserts on the IR)."""
from __future__ import annotations

import textwrap

import pytest

from port_fortran.fortran import discover, ir, parse_file


def parse(tmp_path, text, name="k.f90", **kw):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text).lstrip("\n") if name.endswith(("90", "95")) else text.lstrip("\n"))
    return parse_file(p, use_cache=False, **kw)


def one(sf, name=None):
    assert not sf.errors, sf.errors
    ks = [k for k in sf.kernels if name is None or k.name == name]
    assert len(ks) == 1, [k.name for k in sf.kernels]
    return ks[0]


def stmts(k, cls):
    return [s for s in ir.walk(k.body) if isinstance(s, cls)]


# --------------------------------------------------------------------------- types and arguments


def test_free_form_arguments_types_dims_intents(tmp_path):
    sf = parse(tmp_path, """
        module m
          implicit none
          integer, parameter :: dp = selected_real_kind(15)
          integer, parameter :: nmax = 2*4
        contains
          subroutine s(n, a, b, x, flag, c, z)
            integer, intent(in) :: n
            real(dp), intent(inout) :: a(0:n, *)
            real(kind=8) :: b(:)
            real(dp) :: x(nmax)
            character(len=1) :: flag
            complex(dp) :: c
            double complex :: z
            integer :: i
            do i = 1, n
              a(i, 1) = b(i) + x(1)
            end do
          end subroutine s
        end module m
    """)
    k = one(sf)
    assert sf.form == "free" and sf.modules == ["m"] and k.module == "m"
    assert [a.name for a in k.args] == ["n", "a", "b", "x", "flag", "c", "z"]
    n, a, b, x, flag, c, z = k.args
    assert n.ftype == ir.INTEGER and n.intent == "in" and n.intent_declared
    assert a.ftype == ir.REAL8 and a.rank == 2
    assert a.dims[0].lower.value == 0 and a.dims[0].upper.name == "n"
    assert a.dims[1].upper is None and not a.dims[1].assumed_shape  # assumed size
    assert b.ftype == ir.REAL8 and b.dims[0].assumed_shape
    assert x.dims[0].upper.name == "nmax" and k.locals["nmax"].parameter == 8
    assert flag.ftype == ir.FType("character", 1, 1)
    assert c.ftype == ir.COMPLEX8 and z.ftype == ir.COMPLEX8
    assert k.implicit_none
    # inferred intents
    assert a.intent == "inout" and b.intent == "in" and x.intent == "in"
    assert not b.intent_declared


def test_fixed_form_labelled_do_common_implicit(tmp_path):
    src = """
      SUBROUTINE SUB(N, A, B)
      IMPLICIT DOUBLE PRECISION (A-H,O-Z)
      DIMENSION A(N), B(N)
      COMMON /BLK/ ALPHA, ICOUNT
      REAL*8 W
      CHARACTER*(*) NAME
      INTEGER*8 K8
      COMPLEX*16 ZZ
      DO 10 I = 1, N
         T = ALPHA*B(I)
         A(I) = T
   10 CONTINUE
      DO 20 J = 1, N
      DO 20 L = 1, N
         W = A(L)
   20 CONTINUE
      RETURN
      END
"""
    k = one(parse(tmp_path, src, name="sub.f"))
    assert k.args[1].ftype == ir.REAL8 and k.args[0].ftype == ir.INTEGER  # implicit rules
    assert k.commons == [ir.CommonBlock("blk", ["alpha", "icount"], k.commons[0].line)]
    assert k.locals["alpha"].common == "blk" and k.locals["alpha"].ftype == ir.REAL8
    assert k.locals["icount"].ftype == ir.INTEGER
    assert k.locals["t"].ftype == ir.REAL8 and k.locals["w"].ftype == ir.REAL8
    assert k.locals["name"].ftype.char_len is None
    assert k.locals["k8"].ftype == ir.INTEGER8 and k.locals["zz"].ftype == ir.COMPLEX8
    loops = k.loops()
    assert [lp.var for lp in loops] == ["i", "j", "l"]
    assert loops[0].end_label == 10 and loops[0].line == 9
    # shared termination: L nested inside J, both end at label 20
    outer, inner = loops[1], loops[2]
    assert inner in outer.body and outer.end_label == inner.end_label == 20
    assert any(isinstance(s, ir.Continue) and s.label == 20 for s in inner.body)
    assert k.args[1].intent == "inout" and k.args[2].intent == "in"  # A is read by the second nest


def test_implicit_none_and_implicit_statements(tmp_path):
    k = one(parse(tmp_path, """
        subroutine s(x, i, y)
          implicit real(8) (x), integer (y)
          x = i
          y = 1
        end subroutine
    """))
    assert k.arg("x").ftype == ir.REAL8 and k.arg("i").ftype == ir.INTEGER
    assert k.arg("y").ftype == ir.INTEGER
    assert k.arg("x").intent == "out" and k.arg("i").intent == "in"


def test_expression_types_and_intrinsics(tmp_path):
    k = one(parse(tmp_path, """
        subroutine s(n, x, r, i2, c)
          integer n, i2
          real(8) x(n), r
          real(4) f4
          complex(8) c
          r = sqrt(x(1)) + max(1.0, f4, 2.0) + n / 2 + abs(c) + dble(n)**2
          i2 = mod(n, 3) + nint(r) + size(x) + floor(r)
          f4 = real(c) + aimag(c)
          c = conjg(c) * 2
        end subroutine
    """))
    assigns = stmts(k, ir.Assign)
    rhs = assigns[0].value
    assert rhs.ftype == ir.REAL8
    calls = {e.name: e for s in assigns for e in ir.walk_expr(s.value) if isinstance(e, ir.FuncCall)}
    assert all(c.intrinsic for c in calls.values())
    assert calls["sqrt"].ftype == ir.REAL8 and calls["max"].ftype == ir.REAL4 and len(calls["max"].args) == 3
    assert calls["abs"].ftype == ir.REAL8  # abs of complex(8) is real(8)
    assert calls["mod"].ftype == ir.INTEGER and calls["nint"].ftype == ir.INTEGER
    assert calls["aimag"].ftype == ir.REAL8 and calls["conjg"].ftype == ir.COMPLEX8
    div = [e for e in ir.walk_expr(rhs) if isinstance(e, ir.BinOp) and e.op == "/"][0]
    assert div.ftype == ir.INTEGER
    power = [e for e in ir.walk_expr(rhs) if isinstance(e, ir.BinOp) and e.op == "**"][0]
    assert power.ftype == ir.REAL8
    assert isinstance(assigns[0].value, ir.BinOp)
    refs = [e for e in ir.walk_expr(rhs) if isinstance(e, ir.ArrayRef)]
    assert refs and refs[0].name == "x"


def test_function_reference_vs_array(tmp_path):
    sf = parse(tmp_path, """
        real function g(y)
          real y
          g = 2*y
        end function
        subroutine s(n, a, trans)
          integer n
          real a(n)
          character trans
          logical lsame
          external lsame
          if (lsame(trans, 'N') .or. trans == 't') a(1) = g(a(2)) + f(3.0)
        end subroutine
    """)
    k = one(sf, "s")
    g = one(sf, "g")
    assert g.kind == "function" and g.result.ftype == ir.REAL4
    fcs = [e for s in ir.walk(k.body) for c in ([s.branches[0][0]] if isinstance(s, ir.If) else []) +
           ([s.value] if isinstance(s, ir.Assign) else []) for e in ir.walk_expr(c) if isinstance(e, ir.FuncCall)]
    names = {f.name: f for f in fcs}
    assert not names["lsame"].intrinsic and not names["g"].intrinsic and not names["f"].intrinsic
    assert set(k.calls) >= {"lsame", "g", "f"}
    assert k.arg("trans").compared_with == ["N", "t"]


def test_control_flow_statements(tmp_path):
    src = """
      SUBROUTINE CF(N, X, K)
      INTEGER N, K
      REAL X(N)
      IF (X(1)) 10, 20, 30
   10 CONTINUE
      GO TO (20, 30) K
   20 X(1) = 0
      IF (N .GT. 1) THEN
         X(2) = 1
      ELSE IF (N .EQ. 1) THEN
         X(1) = 2
      ELSE
         RETURN
      END IF
   30 CONTINUE
      DO WHILE (K .GT. 0)
         K = K - 1
      END DO
      STOP
      END
"""
    k = one(parse(tmp_path, src, name="cf.f"))
    aif = stmts(k, ir.ArithmeticIf)[0]
    assert aif.labels == (10, 20, 30) and aif.line == 4
    cg = stmts(k, ir.ComputedGoto)[0]
    assert cg.targets == [20, 30] and isinstance(cg.expr, ir.Name)
    iff = [s for s in stmts(k, ir.If) if len(s.branches) == 2][0]
    assert iff.line == 8 and len(iff.else_body) == 1 and isinstance(iff.else_body[0], ir.Return)
    labelled = {s.label: s for s in ir.walk(k.body) if s.label is not None}
    assert isinstance(labelled[20], ir.Assign) and isinstance(labelled[30], ir.Continue)
    assert stmts(k, ir.DoWhile) and stmts(k, ir.Stop)
    assert k.arg("k").intent == "inout" and k.arg("x").intent == "inout"


def test_select_case_where_cycle_exit(tmp_path):
    k = one(parse(tmp_path, """
        subroutine s(n, x, t)
          integer n, i
          real x(n), t
          select case (n)
          case (1, 2)
            t = 1
          case (3:5)
            t = 2
          case default
            t = 3
          end select
          where (x > 0)
            x = 1
          elsewhere
            x = 2
          end where
          outer: do i = 1, n
            if (x(i) > 1) cycle
            if (x(i) < 0) exit outer
          end do outer
        end subroutine
    """))
    sc = stmts(k, ir.SelectCase)[0]
    assert len(sc.cases) == 3 and sc.cases[2].values == []
    assert isinstance(sc.cases[1].values[0], ir.Slice)
    w = stmts(k, ir.Where)[0]
    assert len(w.body) == 1 and len(w.elsewhere) == 1
    do = k.loops()[0]
    assert do.construct_name == "outer"
    assert stmts(k, ir.Cycle)[0].construct_name is None
    assert stmts(k, ir.Exit)[0].construct_name == "outer"
    assert k.arg("n").compared_with == [1, 2] and k.arg("t").intent == "out"


def test_call_intents_follow_callee_in_same_file(tmp_path):
    sf = parse(tmp_path, """
        subroutine callee(a, b)
          real a, b
          b = a
        end subroutine
        subroutine caller(x, y, z)
          real x, y, z
          call callee(x, y)
          call unknown(z)
        end subroutine
    """)
    k = one(sf, "caller")
    assert one(sf, "callee").arg("a").intent == "in"
    assert k.arg("x").intent == "in" and k.arg("y").intent == "out" and k.arg("z").intent == "inout"
    assert k.calls == ["callee", "unknown"]


def test_unsupported_constructs_are_kept(tmp_path):
    src = """
      SUBROUTINE U(N, A, B)
      REAL A(N), B(N)
      POINTER (P, BUF)
      EQUIVALENCE (A1, B1)
      ASSIGN 10 TO K
      WRITE(*,*) N
      ENTRY U2(N)
   10 CONTINUE
      END
"""
    k = one(parse(tmp_path, src, name="u.f"))
    got = {(u.construct, u.line) for u in k.unsupported}
    assert ("cray-pointer", 3) in got and ("equivalence", 4) in got
    assert ("unsupported-construct", 5) in got and ("io-in-kernel", 6) in got and ("entry", 7) in got
    tree = [s for s in ir.walk(k.body) if isinstance(s, ir.Unsupported)]
    assert {s.construct for s in tree} >= {"io-in-kernel", "entry", "unsupported-construct"}
    assert all(u.text for u in k.unsupported)


def test_derived_types_and_pointers_unsupported(tmp_path):
    k = one(parse(tmp_path, """
        subroutine s(p, q)
          type point
            real :: x
          end type
          type(point) :: p
          real, pointer :: q(:)
          p%x = 1
        end subroutine
    """))
    codes = {u.construct for u in k.unsupported}
    assert "derived-type" in codes and "pointer" in codes


def test_openmp_and_source_text(tmp_path):
    k = one(parse(tmp_path, """
        subroutine s(n, x)
          integer n, i
          real x(n)
          !$omp parallel do
          do i = 1, n
            x(i) = 0
          end do
        end subroutine
    """))
    assert k.has_openmp and k.source_text.startswith("subroutine s") and k.line_start == 1 and k.line_end == 8


def test_module_variables_and_uses(tmp_path):
    sf = parse(tmp_path, """
        module fld
          integer, parameter :: wp = kind(1.0d0)
          real(wp) :: g(100), scale
        end module
        subroutine s(n, x)
          use fld
          integer n
          real(wp) x(n)
          x(1) = g(1) * scale
        end subroutine
    """)
    k = one(sf, "s")
    assert k.uses == ["fld"] and k.arg("x").ftype == ir.REAL8
    assert set(k.module_vars) == {"g", "scale"} and k.module_vars["g"].module == "fld"
    assert k.module_vars["g"].rank == 1


# --------------------------------------------------------------------------- reading


def test_include_is_followed_with_line_map(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "p.inc").write_text("      INTEGER NMAX\n      PARAMETER (NMAX = 64)\n")
    src = """
      SUBROUTINE S(X)
      INCLUDE 'p.inc'
      REAL X(NMAX)
      X(1) = NMAX
      END
"""
    p = tmp_path / "s.f"
    p.write_text(src.lstrip("\n"))
    bad = parse_file(p, use_cache=False)
    assert bad.errors and bad.errors[0].code == "include-not-found" and bad.errors[0].line == 2
    sf = parse_file(p, include_dirs=[inc], use_cache=False)
    k = one(sf)
    assert k.locals["nmax"].parameter == 64
    assert stmts(k, ir.Assign)[0].line == 4  # line in the original file, not the expanded text
    assert sf.includes == [str(inc / "p.inc")]


def test_preprocessing_with_defines(tmp_path):
    src = """
#ifdef SINGLE
#define RK 4
#else
#define RK 8
#endif
subroutine s(n, x)
  integer n
  real(RK) x(n)
  x(1) = 1
end subroutine
"""
    p = tmp_path / "s.F90"
    p.write_text(src.lstrip("\n"))
    k = one(parse_file(p, use_cache=False))
    assert k.arg("x").ftype == ir.REAL8 and k.line_start == 6
    assert stmts(k, ir.Assign)[0].line == 9
    k4 = one(parse_file(p, defines={"SINGLE": "1"}, use_cache=False))
    assert k4.arg("x").ftype == ir.REAL4


def test_syntax_error_reports_file_line_text(tmp_path):
    sf = parse(tmp_path, """
        subroutine s(x)
          real x
          x = = 1
        end subroutine
    """)
    assert not sf.kernels
    e = sf.errors[0]
    assert e.code == "syntax-error" and e.line == 3 and "x = = 1" in e.message and e.file.endswith("k.f90")


def test_unreadable_file_is_an_error_not_an_exception(tmp_path):
    sf = parse_file(tmp_path / "missing.f90")
    assert sf.errors and sf.errors[0].code == "unreadable"


def test_discover_finds_fortran_files(tmp_path):
    (tmp_path / "a.f").write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.F90").write_text("")
    (tmp_path / "c.txt").write_text("")
    found = {p.name for p in discover([tmp_path])}
    assert found == {"a.f", "b.F90"}


def test_form_sniffing_for_unknown_extension(tmp_path):
    src = "C     comment\n      SUBROUTINE S(X)\n      X = 1\n      END\n"
    sf = parse(tmp_path, src, name="s.inc")
    assert sf.form == "fixed" and one(sf).name == "s"


def test_cache_returns_equal_ir(tmp_path, monkeypatch):
    monkeypatch.setenv("PORT_FORTRAN_CACHE", str(tmp_path / "cache"))
    p = tmp_path / "s.f90"
    p.write_text("subroutine s(x)\n  real x\n  x = 1\nend subroutine\n")
    a = parse_file(p)
    b = parse_file(p)
    assert ir.to_dict(a) == ir.to_dict(b) and a is not b
    assert list((tmp_path / "cache" / "parse").glob("*.pickle"))  # under the one cache root


def test_syntax_error_in_one_routine_keeps_the_others(tmp_path):
    src = """
      SUBROUTINE GOOD1(X)
      X = 1
      END
      SUBROUTINE BAD(Y)
      Y = (2 +
      END
      REAL FUNCTION GOOD2(Z)
      GOOD2 = Z
      END
"""
    sf = parse(tmp_path, src, name="mix.f")
    assert [k.name for k in sf.kernels] == ["good1", "good2"]
    assert len(sf.errors) == 1 and sf.errors[0].code == "syntax-error" and sf.errors[0].line == 5
    assert sf.kernels[1].line_start == 7


def test_program_internal_procedures_are_kernels_with_their_host(tmp_path):
    sf = parse(tmp_path, """
        program drv
          real x(10)
          integer, parameter :: m = 4
          n = 3
          call fill(x)
        contains
          subroutine fill(y)
            real y(:)
            y = 1
          end subroutine
          subroutine scale(y)
            real y(10)
            do i = 1, n
              y(i) = y(i) * x(i) + m
            end do
          end subroutine
        end program
        subroutine ext(a, p)
          real a, p(3)
          integer, parameter :: tab(3) = (/ 1, 2, 3 /)
          a = tab(2)
        end subroutine
    """)
    assert sf.programs == ["drv"] and sf.internal_procedures == ["drv:fill", "drv:scale"]
    ks = {k.name: k for k in sf.kernels}
    assert sorted(ks) == ["ext", "fill", "scale"]
    assert ks["fill"].host == "drv" and not ks["fill"].host_vars and not ks["fill"].unsupported
    # x (declared) and n (typed implicitly by the program's use of it) are the host's; i is
    # the procedure's own; the host's constant m is a constant here
    assert sorted(ks["scale"].host_vars) == ["n", "x"] and "i" in ks["scale"].locals
    assert ks["scale"].locals["m"].parameter == 4
    (u,) = ks["scale"].unsupported
    assert u.construct == "host-association" and "drv" in u.reason and u.line == 13  # the DO reading n
    assert ks["ext"].host is None and ks["ext"].locals["tab"].parameter == [1, 2, 3]


def test_function_prefix_type_and_result(tmp_path):
    src = """
      DOUBLE PRECISION FUNCTION DSUM(N, X)
      INTEGER N
      DOUBLE PRECISION X(*)
      DSUM = 0
      DO 10 I = 1, N
         DSUM = DSUM + X(I)
   10 CONTINUE
      END
"""
    k = one(parse(tmp_path, src, name="f.f"))
    assert k.kind == "function" and k.result.name == "dsum" and k.result.ftype == ir.REAL8
    assert [(r.var, r.op) for r in k.loops()[0].info.reductions] == [("dsum", "sum")]


def test_parse_time_limit(tmp_path):
    body = "".join(f"  x({i}) = x({i}) + {i}.0*sqrt(x({i}+1))\n" for i in range(1, 120))
    p = tmp_path / "big.f90"
    p.write_text(f"subroutine big(x)\n  real x(1000)\n{body}end subroutine\n")
    sf = parse_file(p, use_cache=False, timeout=0.05)
    assert [e.code for e in sf.errors] == ["parse-timeout"] and not sf.kernels
    ok = parse_file(p, use_cache=False)  # fparser state is usable again afterwards
    assert not ok.errors and ok.kernels[0].name == "big"


def test_parse_from_a_worker_thread(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    p = tmp_path / "s.f90"
    p.write_text("subroutine s(n, x)\n  integer n, i\n  real x(n)\n  do i = 1, n\n    x(i) = i\n  end do\nend subroutine\n")
    with ThreadPoolExecutor(2) as ex:
        results = list(ex.map(lambda _: parse_file(p, use_cache=False, timeout=30), range(2)))
    assert all(r.kernels and r.kernels[0].loops()[0].info.parallel for r in results)


def test_f90_features_unsupported_and_kinds(tmp_path):
    sf = parse(tmp_path, """
        module c
          integer, parameter :: wp = selected_real_kind(p=15, r=307)
          real(wp), parameter :: pi = 4.0_wp*atan(1.0_wp)
        contains
          subroutine s(n, b)
            integer, intent(in) :: n
            real(wp), intent(out) :: b(n)
            real(wp), allocatable :: work(:)
            integer :: i
            allocate(work(n))
            do concurrent (i = 1:n)
              b(i) = 0
            end do
            b(1) = pi + 1.0_wp
            deallocate(work)
          end subroutine
        end module
    """)
    k = one(sf)
    assert k.arg("b").ftype == ir.REAL8 and abs(k.locals["pi"].parameter - 3.141592653589793) < 1e-15
    lit = [e for s in stmts(k, ir.Assign) if s.line == 14 for e in ir.walk_expr(s.value) if isinstance(e, ir.Literal)]
    assert lit and lit[0].ftype == ir.REAL8
    got = [(u.construct, u.line) for u in k.unsupported]
    assert got == [("unsupported-construct", 10), ("unsupported-construct", 15)]  # DO CONCURRENT is a DO nest
    assert any(isinstance(s, ir.Do) and s.var == "i" and s.line == 11 for s in k.body)


def test_fparser_sys_exit_is_contained(tmp_path):
    sf = parse(tmp_path, """
        subroutine s(x)
          real x
          foo:
        end subroutine
    """)
    e = sf.errors[0]
    assert e.code == "syntax-error" and e.line == 3 and "foo:" in e.message


def test_preprocessor_errors_with_lines(tmp_path, monkeypatch):
    monkeypatch.setenv("PORT_FORTRAN_CACHE", str(tmp_path / "cache"))
    p = tmp_path / "e.F90"
    p.write_text('#include "missing.h"\n#if FOO\n#error need no FOO\n#endif\n'
                 "subroutine s(x)\n  real x\n  x = 1\nend subroutine\n")
    sf = parse_file(p)
    assert [(e.code, e.line) for e in sf.errors] == [("preprocessor-error", 1)]
    assert "missing.h" in sf.errors[0].message and sf.errors[0].file == str(p)
    assert sf.kernels[0].name == "s"
    sf2 = parse_file(p, defines={"FOO": "1"})  # same text after preprocessing: not a cache hit
    assert [(e.code, e.line) for e in sf2.errors] == [("preprocessor-error", 1), ("preprocessor-error", 3)]
    assert "need no FOO" in sf2.errors[1].message


def test_use_only_and_renames(tmp_path):
    sf = parse(tmp_path, """
        module m
          integer, parameter :: wp = 8
          real(8) :: b(10), c(10), e(10)
        end module
        subroutine s1(x)
          use m, a => b
          real(wp) x
          x = a(1) + c(1)
        end subroutine
        subroutine s2(x)
          use m, only: wp, d => e
          real(wp) x
          x = d(1)
        end subroutine
    """)
    s1, s2 = one(sf, "s1"), one(sf, "s2")
    assert s1.arg("x").ftype == ir.REAL8 and set(s1.module_vars) == {"a", "c"}
    assert s1.module_vars["a"].rank == 1
    assert set(s2.module_vars) == {"d"} and stmts(s2, ir.Assign)[0].value.name == "d"


def test_data_tables_become_constants_unless_assigned(tmp_path):
    src = """
      SUBROUTINE POLY(N, X, Y)
      INTEGER N, I
      DOUBLE PRECISION X(N), Y(N), C(4), H
      DATA C /1.0D0, 2*2.5D0, -3.0D0/, H /0.5D0/
      DO 10 I = 1, N
         Y(I) = C(1) + X(I)*C(4) + H
   10 CONTINUE
      END
      SUBROUTINE CNT(N)
      INTEGER N, ICALL
      DATA ICALL /0/
      ICALL = ICALL + N
      END
"""
    sf = parse(tmp_path, src, name="data.f")
    poly, cnt = one(sf, "poly"), one(sf, "cnt")
    assert poly.locals["c"].parameter == [1.0, 2.5, 2.5, -3.0] and poly.locals["h"].parameter == 0.5
    assert poly.unsupported == [] and poly.loops()[0].info.parallel
    assert [(u.construct, u.line) for u in cnt.unsupported] == [("save-variable", 11)]
    assert "SAVE" in cnt.unsupported[0].reason


def test_initialised_locals_never_assigned_are_constants(tmp_path):
    """An initialiser in the declaration is an implicit SAVE; a table the routine never
    assigns is really a constant (broadcast when a scalar initialises an array)."""
    src = """subroutine wts(n, x, y)
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y(n)
  double precision :: w(3) = (/ 0.25d0, 0.5d0, 0.25d0 /), z(2) = 1.5d0
  integer :: calls = 0, i
  calls = calls + 1
  do i = 1, n
    y(i) = w(2) * x(i) + z(1)
  end do
end subroutine
"""
    sf = parse(tmp_path, src, name="init.f90")
    k = one(sf, "wts")
    assert k.locals["w"].parameter == [0.25, 0.5, 0.25] and k.locals["z"].parameter == [1.5, 1.5]
    assert [(u.construct, u.line) for u in k.unsupported] == [("save-variable", 6)]


@pytest.mark.parametrize("visitor,method", [("stmts.StmtBuilder", "s_Assignment_Stmt"),
                                            ("decls.DeclBuilder", "s_Dimension_Stmt")])
def test_a_visitor_bug_is_an_internal_error_not_a_fortran_limit(tmp_path, monkeypatch, visitor, method):
    """A front-end visitor that fails is a bug of the tool: labelled ``internal-error`` and
    said to be one, never ``unsupported-construct`` (which reads as a limit of the code)."""
    import importlib

    mod, cls = visitor.split(".")
    owner = getattr(importlib.import_module(f"port_fortran.fortran.{mod}"), cls)

    def broken(self, n):
        raise RuntimeError("planted visitor bug")

    monkeypatch.setattr(owner, method, broken)
    src = tmp_path / "vb.f90"
    src.write_text("subroutine vb(n, x)\n  integer :: n\n  real(8) :: x\n  dimension x(n)\n  x(1) = 2.0d0\nend\n")
    k = parse_file(str(src), use_cache=False).kernels[0]
    codes = {u.construct: u.reason for u in k.unsupported}
    assert "internal-error" in codes and "unsupported-construct" not in codes, codes
    assert "planted visitor bug" in codes["internal-error"] and "port-fortran bug" in codes["internal-error"]


DATA_TABLES = """\
      SUBROUTINE FACT (N, IFAC)
      DIMENSION IFAC(*), NTRYH(4), A(2,3)
      DATA NTRYH(1),NTRYH(2),NTRYH(3),NTRYH(4) /4,2,3,5/
      DATA ((A(I,J),I=1,2),J=1,3) /1.,2.,3.,4.,5.,6./
      DO 10 K = 1, 4
         IFAC(K) = NTRYH(K) * N + INT(A(2, K - (K/4)*3))
   10 CONTINUE
      RETURN
      END
      SUBROUTINE HALF (X)
      DIMENSION B(3)
      DATA B(1), B(3) /1., 3./
      X = B(1)
      END
      SUBROUTINE STRIDE (X)
      DIMENSION B(4)
      DATA (B(I), I = 1, 3, 2), B(2), B(4) /1., 3., 2., 4./
      X = B(4)
      END
"""


def test_data_of_elements_and_implied_do_makes_constant_tables(tmp_path):
    """The F77 idiom ``DATA NTRYH(1),NTRYH(2),... /.../`` (fftpack's factor tables) and
    implied DO lists: a table set element by element is a constant in array element
    order; one left partly undefined is refused, naming how many elements were set."""
    sf = parse(tmp_path, DATA_TABLES, name="fact.f")
    ks = {k.name: k for k in sf.kernels}
    assert ks["fact"].locals["ntryh"].parameter == [4, 2, 3, 5]
    assert ks["fact"].locals["a"].parameter == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert not ks["fact"].unsupported
    assert ks["stride"].locals["b"].parameter == [1.0, 2.0, 3.0, 4.0]
    (u,) = ks["half"].unsupported
    assert u.line == 12 and "DATA sets 2 of the 3 elements of b" in u.reason


def test_compiler_includes_are_found_and_unused_type_definitions_refuse_nothing(tmp_path):
    """``include 'omp_lib.h'`` is found where gfortran finds it (its own include directory,
    after -I); the derived types that header defines are not used, so refuse nothing; a
    variable of a derived type still is refused with its line (SNAP's plib.F90)."""
    sf = parse(tmp_path, """
        subroutine twice(n, a)
          implicit none
          include 'omp_lib.h'
          integer, intent(in) :: n
          real(8), intent(inout) :: a(n)
          integer :: i
          do i = 1, n
            a(i) = 2*a(i)
          end do
        end subroutine
        subroutine typed(x)
          type pair
            real :: a, b
          end type
          type(pair) :: p
          real :: x
          p%a = x
          x = p%a
        end subroutine
        """)
    assert not sf.errors, sf.errors
    ks = {k.name: k for k in sf.kernels}
    assert not ks["twice"].unsupported and ks["twice"].loops()[0].info.parallel
    assert any(u.construct == "derived-type" and u.line == 15 for u in ks["typed"].unsupported)


def test_private_module_procedures_are_marked_and_not_driven(tmp_path):
    """A module procedure PRIVATE to its module (SNAP's mms_trigint): nothing outside the
    module, the reference driver included, can call it; the harness calls it through a
    copy of the file that makes it PUBLIC, or says why it cannot instead of failing to
    compile its driver."""
    from port_fortran.harness.drivers import unsupported_reason

    sf = parse(tmp_path, """
        module m
          implicit none
          private
          public :: outer
          private :: helper2
        contains
          subroutine outer(x)
            real(8), intent(inout) :: x
            call inner(x)
          end subroutine
          subroutine inner(x)
            real(8), intent(inout) :: x
            x = 2*x
          end subroutine
          subroutine helper2(x)
            real(8), intent(inout) :: x
            x = 3*x
          end subroutine
        end module
        module p
        contains
          subroutine open(x)
            real(8), intent(inout) :: x
            x = x + 1
          end subroutine
        end module
        """)
    ks = {k.name: k for k in sf.kernels}
    assert {n: k.private for n, k in ks.items()} == {"outer": False, "inner": True, "helper2": True, "open": False}
    # PRIVATE by default: the harness reaches it through a copy of the file making it PUBLIC
    # (harness/publish.py); PRIVATE by a statement naming it: the copy drops it from the statement
    assert unsupported_reason(ks["inner"]) == "" and unsupported_reason(ks["outer"]) == ""
    assert unsupported_reason(ks["helper2"]) == ""


def test_a_coarray_declaration_is_named_not_a_bare_syntax_error(tmp_path):
    """ParRes' *-coarray programs: the parser has no coarrays, so the file cannot be read;
    the error says so (code 'coarray', the line, the declaration), instead of 'syntax error'."""
    sf = parse(tmp_path, """
        program p
          implicit none
          integer :: n[*]
          real(8), allocatable :: a(:,:)[:]
          n = this_image()
        end program
        """)
    (e,) = sf.errors
    assert e.code == "coarray" and e.line == 3 and "n[*]" in e.message
