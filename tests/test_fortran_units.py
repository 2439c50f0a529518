"""Front end on whole files as compilers take them: program units parsed one by one,
main programs without a PROGRAM statement, long operator chains, comments fparser chokes
on, and analysis that does one pass per kernel instead of one per loop (asserts on the IR)."""
from __future__ import annotations

import textwrap

import pytest

from port_fortran.fortran import ir, parse_file
from port_fortran.fortran import parse as P


def parse(tmp_path, text, name="k.f90", **kw):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text).lstrip("\n") if name.endswith(("90", "95")) else text.lstrip("\n"))
    return parse_file(p, use_cache=False, **kw)


# --------------------------------------------------------------------------- program units

UNNAMED_MAIN = """\
C     an F77 main program without a PROGRAM statement, routines after it
      DIMENSION X(100), Y(100)
      N = 100
      DO 10 I = 1, N
         X(I) = I
   10 CONTINUE
      CALL SAXPY2(N, 2.0, X, Y)
      PRINT *, Y(N)
      END
C
      SUBROUTINE SAXPY2(N, A, X, Y)
      DIMENSION X(N), Y(N)
      DO 20 I = 1, N
         Y(I) = Y(I) + A*X(I)
   20 CONTINUE
      END
      BLOCK DATA
      COMMON /C/ Z
      DATA Z /1.0/
      END
      FUNCTION DOT2(N, X, Y)
      DIMENSION X(N), Y(N)
      DOT2 = 0
      DO 30 I = 1, N
         DOT2 = DOT2 + X(I)*Y(I)
   30 CONTINUE
      END
"""


def test_unnamed_main_program_keeps_the_routines_after_it(tmp_path):
    # fparser reads a main program without PROGRAM statement only as a file's last unit
    # and silently drops everything after it: the Livermore loops lost every routine
    sf = parse(tmp_path, UNNAMED_MAIN, name="lfk.f")
    assert not sf.errors, sf.errors
    assert sf.programs == ["main"]
    ks = {k.name: k for k in sf.kernels}
    assert sorted(ks) == ["dot2", "saxpy2"]
    assert (ks["saxpy2"].line_start, ks["saxpy2"].line_end) == (11, 16)
    assert ks["dot2"].line_start == 21 and ks["dot2"].loops()[0].line == 24
    assert ks["dot2"].loops()[0].info.parallel


def test_split_units_finds_the_unnamed_main_and_refuses_odd_nesting():
    text = P.read_source("x.f", text=UNNAMED_MAIN).text
    assert P.split_units(text, "fixed") == [(2, 9), (11, 16), (17, 20), (21, 27)]
    # an END with no unit open: the scan gives up (the file is then parsed whole)
    assert P.split_units("      X = 1\n      END\n      END\n", "fixed") is None
    assert P.split_units("subroutine a\nx = 1\n", "free") is None
    # free form: continuation lines, trailing comments and quotes do not fool it
    free = ("subroutine a(x)\n  x = 1 + &\n     end_value ! end\n  print *, 'end'\nend subroutine a\n"
            "module m\ncontains\n  subroutine b\n  end subroutine\nend module m\n")
    assert P.split_units(free, "free") == [(1, 5), (6, 10)]


def test_comment_between_dos_sharing_a_terminal_statement(tmp_path):
    # fparser rejects a comment line here when comments are kept (the Livermore KERNEL routine)
    sf = parse(tmp_path, """\
      SUBROUTINE K6(N, W, B)
      DOUBLE PRECISION W(N), B(N,N)
      DO  6  I= 2,N
          W(I)= 0.01D0
CDIR$ NOVECTOR
      DO  6  K= 1,I-1
          W(I)= W(I) + B(I,K) * W(I-K)
    6 CONTINUE
      END
""", name="k6.f")
    assert not sf.errors, sf.errors
    (k,) = sf.kernels
    outer = k.loops()[0]
    assert outer.var == "i" and [s.var for s in outer.body if isinstance(s, ir.Do)] == ["k"]


def test_a_unit_over_its_time_limit_is_skipped_alone(tmp_path, monkeypatch):
    real = P._fparse

    def slow(src):
        if "slow_one" in src.text:
            raise P._Timeout()
        return real(src)

    monkeypatch.setattr(P, "_fparse", slow)
    sf = parse(tmp_path, """
        subroutine fast_one(x)
          real x
          x = 1
        end subroutine
        subroutine slow_one(x)
          real x
          x = 2
        end subroutine
        subroutine fast_two(x)
          real x
          x = 3
        end subroutine
    """)
    assert [k.name for k in sf.kernels] == ["fast_one", "fast_two"]
    (e,) = sf.errors
    assert e.code == "parse-timeout" and e.line == 5


def test_a_syntax_error_costs_only_its_unit(tmp_path):
    sf = parse(tmp_path, """
        subroutine good1(x)
          real x
          x = 1
        end subroutine
        subroutine bad(x)
          real x
          x = = 2
        end subroutine
        subroutine good2(x)
          real x
          x = 3
        end subroutine
    """)
    assert [k.name for k in sf.kernels] == ["good1", "good2"]
    (e,) = sf.errors
    assert e.code == "syntax-error" and e.line == 7


# --------------------------------------------------------------------------- operator chains


def _chain_source(name: str, nterms: int) -> str:
    lines = [f"subroutine {name}(n, a, b)", "  integer, intent(in) :: n",
             "  double precision, intent(in) :: a(n)", "  double precision, intent(inout) :: b(n)",
             "  integer :: i", "  do i = 8, n - 8", "    b(i) = b(i) &"]
    for t in range(nterms):
        sign = "-" if t % 3 == 1 else "+"
        lines.append(f"      {sign} a(i+{t % 7}) * (0.{t + 1:04d}123456789d0) &")
    lines += ["      + 1.0d-3", "  end do", f"end subroutine {name}", ""]
    return "\n".join(lines)


def _flatten(e):
    """Operands and operators of a left-deep +/- chain, left to right."""
    ops = []
    while isinstance(e, ir.BinOp) and e.op in "+-":
        ops.append((e.op, e.right))
        e = e.left
    return e, ops[::-1]


def test_a_1000_term_stencil_is_one_left_deep_expression(tmp_path):
    # 360 terms ran out of recursion before ("expression nesting too deep"); the order of
    # the operations must stay the source's (floating-point addition is not associative)
    sf = parse(tmp_path, _chain_source("wide", 1000))
    assert not sf.errors, sf.errors
    (k,) = sf.kernels
    (loop,) = k.loops()
    assert loop.info.parallel
    (asg,) = [s for s in loop.body if isinstance(s, ir.Assign)]
    first, ops = _flatten(asg.value)
    assert isinstance(first, ir.ArrayRef) and first.name == "b"
    assert len(ops) == 1001
    assert [o for o, _ in ops[:4]] == ["+", "-", "+", "+"]
    assert ops[1][1].right.value == pytest.approx(0.0002123456789)
    assert ops[-1][1].value == pytest.approx(1e-3)


def test_a_chain_longer_than_the_limit_is_refused_with_its_line(tmp_path, monkeypatch):
    from port_fortran.fortran import exprs
    monkeypatch.setattr(exprs, "MAX_CHAIN", 50)
    sf = parse(tmp_path, _chain_source("toolong", 60))
    (k,) = sf.kernels
    (u,) = k.unsupported
    assert "61 chained operations" in u.reason and u.line == 7


EXPRESSIONS = [
    "a + b - c + d", "-a + b - c", "a - -b + c", "+a - b", "a * b / c * d - e / f", "a ** b ** c * d",
    "(a + b) * (c - d) + e", "a .and. b .or. c .and. .not. d .or. e", "a .eqv. b .neqv. c .eqv. d",
    "s // 'x' // t // 'y+z'", "a < b .and. c >= d .and. e /= f", "1.0e-3 + 2.5d+2 - x + 1.e5",
    "f(a + b, c - d) + g(1) - h(2, 3) + x(i - 1, j + 1)", "a + b + ", "a * * b + c", "x + 'a' + y",
]


def test_chain_matcher_builds_the_tree_fparser_builds():
    """The one-pass matcher against fparser's own recursive one, on chains with unary
    signs, exponents, nested parentheses, logical and character operators and invalid
    text (where fparser's own path must decide)."""
    from fparser.two import Fortran2003 as F
    from fparser.two.utils import Base, BinaryOpBase, FortranSyntaxError, NoMatchError

    P._parser()  # installs the matcher
    fast = BinaryOpBase.match
    slow = fast.__wrapped__

    def dump(root):
        out, stack = [], [root]
        while stack:
            n = stack.pop()
            if isinstance(n, Base):
                out.append((type(n).__name__, getattr(n, "string", None)))
                stack.extend(reversed(list(getattr(n, "items", ()))))
            else:
                out.append(repr(n))
        return out

    def expr(text, match):
        BinaryOpBase.match = staticmethod(match)
        try:
            return dump(F.Expr(text))
        except (NoMatchError, FortranSyntaxError) as exc:
            return type(exc).__name__
        finally:
            BinaryOpBase.match = staticmethod(fast)

    for text in EXPRESSIONS:
        assert expr(text, fast) == expr(text, slow), text
    long = " + ".join(f"a({i}) * {i}.5d0" for i in range(200)) + " - b .and. c"
    assert expr(f"({long}) > 0", fast) == expr(f"({long}) > 0", slow)


# --------------------------------------------------------------------------- analysis in one pass


def test_an_undefined_macro_is_named_in_the_syntax_error(tmp_path):
    p = tmp_path / "mw.F90"
    p.write_text("program mw\n  integer, parameter :: nx = _NX\n  print *, nx\nend program mw\n")
    (e,) = parse_file(p, use_cache=False).errors
    assert e.code == "syntax-error" and e.line == 2 and "-D_NX=VALUE" in e.message
    sf = parse_file(p, defines={"_NX": "400"}, use_cache=False)
    assert not sf.errors and sf.programs == ["mw"]


def test_do_concurrent_locality_does_not_cost_the_unit(tmp_path):
    # fparser 0.2 rejects Fortran 2018 locality specs: the whole program (and the routines
    # it CONTAINs) used to be lost to a syntax error
    sf = parse(tmp_path, """
        program mw
          implicit none
          real :: a(10), t
          integer :: i
          do concurrent (i = 1:10) local(t) ! a comment
            t = i
            a(i) = t
          end do
        contains
          subroutine halo(n, q)
            integer, intent(in) :: n
            real, intent(inout) :: q(n)
            integer :: k
            do concurrent (k = 2:n) local(n) shared(q)
              q(k) = q(k - 1)
            end do
          end subroutine
        end program
    """)
    assert not sf.errors, sf.errors
    (k,) = sf.kernels
    assert k.name == "halo" and not k.unsupported  # DO CONCURRENT is read as a DO nest
    (do,) = [s for s in k.body if isinstance(s, ir.Do)]
    assert do.var == "k" and do.line == 14
