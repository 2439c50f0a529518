"""Loop dependence verdicts and argument facts, asserted on the IR."""
from __future__ import annotations

import textwrap
from pathlib import Path

from port_fortran.fortran import ir, parse_file
from port_fortran.fortran.render import expr_str


def kernel(tmp_path, body, decls="", args="n, a, b, c", name="k.f90"):
    src = textwrap.dedent(f"""
        subroutine k({args})
          integer n
          real(8) a(n), b(n), c(n)
          {decls}
          integer i, j
    """).lstrip("\n") + textwrap.dedent(body) + "end subroutine\n"
    p = tmp_path / name
    p.write_text(src)
    sf = parse_file(p, use_cache=False)
    assert not sf.errors, sf.errors
    return sf.kernels[0]


def loop(k, line=None, var=None):
    for d in k.loops():
        if (line is None or d.line == line) and (var is None or d.var == var):
            return d
    raise AssertionError(f"no loop {line} {var}")


def codes(d):
    return [r.code for r in d.info.reasons]


def test_independent(tmp_path):
    k = kernel(tmp_path, """
        do i = 1, n
          a(i) = b(i) + c(i)
        end do
    """)
    d = loop(k)
    assert d.info.parallel and d.info.reasons == [] and expr_str(d.info.trip) == "n"
    assert d.info.tightly_nested_parallel == 1


def test_carried(tmp_path):
    k = kernel(tmp_path, """
        do i = 2, n
          a(i) = a(i-1) + 1
        end do
    """)
    d = loop(k)
    assert not d.info.parallel and codes(d) == ["loop-carried-dependence"]
    r = d.info.reasons[0]
    assert r.line == 8 and "a(i) written" in r.message and "a(i-1) read" in r.message


def test_distance_not_multiple_of_stride_is_independent(tmp_path):
    k = kernel(tmp_path, """
        do i = 1, n, 2
          a(2*i) = a(2*i+1) + 1
        end do
    """)
    assert loop(k).info.parallel


def test_scalar_reduction(tmp_path):
    k = kernel(tmp_path, """
        s = 0
        do i = 1, n
          s = s + a(i)*b(i)
        end do
        m = a(1)
        do i = 1, n
          m = max(m, a(i))
        end do
        do i = 1, n
          if (a(i) < p) p = a(i)
        end do
    """, decls="real(8) s, m, p", args="n, a, b, c, s, m, p")
    l1, l2, l3 = k.loops()
    assert l1.info.parallel and [(r.var, r.op) for r in l1.info.reductions] == [("s", "sum")]
    assert l2.info.parallel and [(r.var, r.op) for r in l2.info.reductions] == [("m", "max")]
    assert l3.info.parallel and [(r.var, r.op) for r in l3.info.reductions] == [("p", "min")]
    assert k.arg("s").intent == "out"


def test_maxloc_is_not_a_plain_reduction(tmp_path):
    k = kernel(tmp_path, """
        do i = 1, n
          if (a(i) > m) then
            m = a(i)
            im = i
          end if
        end do
    """, decls="real(8) m\n  integer im", args="n, a, b, c, m, im")
    d = loop(k)
    assert not d.info.parallel and codes(d) == ["loc-reduction"]
    assert d.info.reductions == []


def test_array_accumulation_across_outer_loop(tmp_path):
    k = kernel(tmp_path, """
        do j = 1, n
          do i = 1, n
            y(j) = y(j) + amat(j, i)*t(i)
          end do
        end do
    """, decls="real(8) y(n), amat(n, n), t(n)", args="n, a, b, c, y, amat, t")
    outer, inner = loop(k, var="j"), loop(k, var="i")
    assert inner.info.parallel
    red = inner.info.reductions[0]
    assert red.var == "y" and red.op == "sum" and isinstance(red.target, ir.ArrayRef)
    assert expr_str(red.target) == "y(j)"
    assert outer.info.parallel and "i" in outer.info.private
    assert outer.info.tightly_nested_parallel == 1  # the inner loop reduces into y(j): no MDRange


def test_column_update_outer_loop_carries_y(tmp_path):
    # a statement after the inner loop keeps the nest as written: j carries y
    k = kernel(tmp_path, """
        do j = 1, n
          do i = 1, n
            y(i) = y(i) + amat(i, j)*t(j)
          end do
          t(j) = 0
        end do
    """, decls="real(8) y(n), amat(n, n), t(n)", args="n, a, b, c, y, amat, t")
    assert not loop(k, var="j").info.parallel
    assert codes(loop(k, var="j")) == ["loop-carried-dependence"]
    assert loop(k, var="i").info.parallel


def test_column_update_is_turned_inside_out(tmp_path):
    # as written, j carries y; interchanged, i is parallel and j runs inside it in order
    k = kernel(tmp_path, """
        do j = 1, n
          do i = 1, n
            y(i) = y(i) + amat(i, j)*t(j)
          end do
        end do
    """, decls="real(8) y(n), amat(n, n), t(n)", args="n, a, b, c, y, amat, t")
    outer = next(s for s in k.body if isinstance(s, ir.Do))
    assert outer.var == "i" and outer.info.parallel and outer.info.interchanged == outer.line + 1  # the line of the i loop
    inner = loop(k, var="j")
    assert inner in outer.body and not any(isinstance(s, ir.Do) for s in inner.body)


def test_scattered_update(tmp_path):
    k = kernel(tmp_path, """
        do i = 1, n
          h(idx(i)) = h(idx(i)) + 1
        end do
    """, decls="integer idx(n), h(n)", args="n, a, b, c, idx, h")
    d = loop(k)
    assert not d.info.parallel and codes(d) == ["scattered-update"]
    assert d.info.scattered == ["h"] and "h" in d.info.indirect
    assert k.arg("idx").used_as_index and not k.arg("h").used_as_index


def test_indirect_read_is_parallel(tmp_path):
    k = kernel(tmp_path, """
        do i = 1, n
          a(i) = b(idx(i))
        end do
    """, decls="integer idx(n)", args="n, a, b, c, idx")
    d = loop(k)
    assert d.info.parallel and d.info.indirect == ["b"]


def test_privatisable_temporary(tmp_path):
    k = kernel(tmp_path, """
        do i = 1, n
          t = b(i)*2
          a(i) = t + t**2
        end do
    """, decls="real(8) t")
    d = loop(k)
    assert d.info.parallel and d.info.private == ["t"]


def test_temporaries_set_on_one_line_are_private_in_name_order(tmp_path):
    # in the order of their lines, names breaking ties: before, the set's order (a new
    # order of the generated locals at each run, PYTHONHASHSEED; Nekbone's dgjd)
    k = kernel(tmp_path, """
        do i = 1, n
          zq = b(i); ya = zq*2; mb = ya + zq
          a(i) = zq + ya + mb
        end do
    """, decls="real(8) zq, ya, mb")
    d = loop(k)
    assert d.info.parallel and d.info.private == ["mb", "ya", "zq"]


def test_temporary_live_after_loop_is_last_private(tmp_path):
    # every iteration assigns t before reading it: each has its own copy, the last one
    # hands its value on (what c(1) reads after the loop)
    k = kernel(tmp_path, """
        do i = 1, n
          t = b(i)*2
          a(i) = t
        end do
        c(1) = t
    """, decls="real(8) t")
    d = loop(k)
    assert d.info.parallel and d.info.private == ["t"] and d.info.last_private == ["t"]


def test_temporary_assigned_on_some_iterations_keeps_loop_serial(tmp_path):
    # the last iteration may not assign t: the value after the loop is another's
    k = kernel(tmp_path, """
        do i = 1, n
          if (b(i) > 0) t = b(i)*2
          a(i) = b(i)
        end do
        c(1) = t
    """, decls="real(8) t")
    d = loop(k)
    assert not d.info.parallel and codes(d) == ["last-value"]


def test_temporary_assigned_in_loop_whose_trip_count_varies_keeps_loop_serial(tmp_path):
    # the inner loop runs i times: the first iteration may assign t while a later one
    # does not, so no copy can start from the value before the loop
    k = kernel(tmp_path, """
        do i = 1, n
          do j = 1, i - 3
            t = b(j)
          end do
          a(i) = t
        end do
    """, decls="real(8) t")
    d = loop(k)
    assert not d.info.parallel


def test_scalar_recurrence(tmp_path):
    k = kernel(tmp_path, """
        t = 0
        do i = 1, n
          t = 0.5*t + b(i)
          a(i) = t
        end do
    """, decls="real(8) t")
    d = loop(k)
    assert not d.info.parallel and codes(d) == ["scalar-dependence"]


def test_triangular_nest(tmp_path):
    k = kernel(tmp_path, """
        do j = 1, n
          do i = j, n
            amat(i, j) = amat(i, j)*2
          end do
        end do
    """, decls="real(8) amat(n, n)", args="n, a, b, c, amat")
    outer, inner = loop(k, var="j"), loop(k, var="i")
    assert outer.info.parallel and inner.info.parallel
    assert outer.info.tightly_nested_parallel == 1  # inner bounds depend on j: no MDRange
    assert expr_str(inner.info.trip) == "n-j+1" and ir.evaluate(inner.info.trip, {"n": 10, "j": 3}) == 8


def test_rectangular_nest_is_a_band(tmp_path):
    k = kernel(tmp_path, """
        do j = 1, n
          do i = 1, n
            amat(i, j) = b(i)*c(j)
          end do
        end do
    """, decls="real(8) amat(n, n)", args="n, a, b, c, amat")
    assert loop(k, var="j").info.tightly_nested_parallel == 2


def test_goto_out_of_loop(tmp_path):
    k = kernel(tmp_path, """
        do i = 1, n
          if (a(i) < 0) goto 100
          b(i) = sqrt(a(i))
        end do
    100 continue
    """)
    d = loop(k)
    assert not d.info.parallel and d.info.early_exit and codes(d) == ["early-exit"]
    assert d.info.reasons[0].line == 8


def test_exit_and_return_are_early_exits_cycle_is_not(tmp_path):
    k = kernel(tmp_path, """
        do i = 1, n
          if (a(i) < 0) cycle
          b(i) = 1
        end do
        do i = 1, n
          if (a(i) < 0) exit
        end do
        do i = 1, n
          if (a(i) < 0) return
        end do
    """)
    l1, l2, l3 = k.loops()
    assert l1.info.parallel
    assert codes(l2) == ["early-exit"] and codes(l3) == ["early-exit"]


def test_call_and_io_in_loop(tmp_path):
    k = kernel(tmp_path, """
        do i = 1, n
          call work(a(i))
        end do
        do i = 1, n
          write(*,*) a(i)
        end do
    """)
    l1, l2 = k.loops()
    assert "call-in-loop" in codes(l1) and l1.info.calls == ["work"]
    assert "io-in-loop" in codes(l2)


def test_fixed_form_shared_termination_nest(tmp_path):
    src = """
      SUBROUTINE T(M, N, A, LDA, B, LDB)
      INTEGER M, N, LDA, LDB, I, J
      DOUBLE PRECISION A(LDA,*), B(LDB,*)
      DO 10 J = 1, N
      DO 10 I = 1, M
         B(J,I) = A(I,J)
   10 CONTINUE
      END
"""
    p = tmp_path / "t.f"
    p.write_text(src.lstrip("\n"))
    k = parse_file(p, use_cache=False).kernels[0]
    j, i = k.loops()
    assert j.info.parallel and i.info.parallel and j.info.tightly_nested_parallel == 2
    assert k.arg("b").intent == "out" and k.arg("a").intent == "in"
    assert k.arg("m").used_as_size and k.arg("n").used_as_size and k.arg("lda").used_as_size
    lo, hi = k.arg("a").access_bounds[1]
    assert expr_str(lo) == "1" and expr_str(hi) == "n"


def test_access_bounds_blas_stride(tmp_path):
    src = """
      SUBROUTINE S(N, X, INCX, Y)
      INTEGER N, INCX, I
      DOUBLE PRECISION X(*), Y(*)
      DO 10 I = 1, N
         Y(I) = X(1+(I-1)*INCX)
   10 CONTINUE
      END
"""
    p = tmp_path / "s.f"
    p.write_text(src.lstrip("\n"))
    k = parse_file(p, use_cache=False).kernels[0]
    lo, hi = k.arg("x").access_bounds[0]
    assert ir.evaluate(lo, {"n": 7, "incx": 3}) == 1
    assert ir.evaluate(hi, {"n": 7, "incx": 3}) == 1 + 6 * 3
    lo, hi = k.arg("y").access_bounds[0]
    assert expr_str(lo) == "1" and expr_str(hi) == "n"
    assert k.loops()[0].info.parallel


def test_flags_compared_with(tmp_path):
    k = kernel(tmp_path, """
        if (lsame(trans, 'N')) then
          a(1) = 0
        else if (trans == 't' .or. trans .eq. 'T') then
          a(1) = 1
        end if
    """, decls="character trans\n  logical lsame", args="n, a, b, c, trans")
    assert k.arg("trans").compared_with == ["N", "t", "T"]


def test_induction_variables_blas_strided_loop(tmp_path):
    src = """
      SUBROUTINE AXPY(N, DA, DX, INCX, DY, INCY)
      INTEGER N, INCX, INCY, I, IX, IY
      DOUBLE PRECISION DA, DX(*), DY(*)
      IX = 1
      IY = 1
      DO 20 I = 1, N
         DY(IY) = DY(IY) + DA*DX(IX)
         IX = IX + INCX
         IY = IY + INCY
   20 CONTINUE
      END
"""
    from port_fortran.fortran.inductions import closed_form

    p = tmp_path / "axpy.f"
    p.write_text(src.lstrip("\n"))
    k = parse_file(p, use_cache=False).kernels[0]
    d = k.loops()[0]
    # rewrite ix, iy from i; then independent only if incy /= 0 (incy = 0: every iteration
    # updates dy(1))
    assert codes(d) == ["induction-variable", "conditional-independence"]
    assert expr_str(d.info.condition) == "incy /= 0" and d.info.condition_args == ["incy"]
    assert [(i.var, expr_str(i.step), i.line) for i in d.info.inductions] == [("ix", "incx", 8), ("iy", "incy", 9)]
    assert not d.info.inductions[0].live_after
    e = closed_form(d, d.info.inductions[1])
    assert ir.evaluate(e, {"i": 4, "iy": 1, "incy": 3}) == 1 + 3 * 3


def test_induction_with_carried_array_dependence_stays_carried(tmp_path):
    k = kernel(tmp_path, """
        k = 2
        do i = 1, n
          a(k) = a(k-1) + 1
          k = k + 1
        end do
    """, decls="integer k")
    d = loop(k)
    assert set(codes(d)) == {"induction-variable", "loop-carried-dependence"}


def test_goto_inside_loop_can_skip_the_write(tmp_path):
    k = kernel(tmp_path, """
        t = 0
        do i = 1, n
          if (b(i) > 0) goto 5
          t = b(i)
    5     a(i) = t
        end do
    """, decls="real(8) t")
    d = loop(k)
    assert not d.info.parallel and codes(d) == ["scalar-dependence"]


def test_loop_variable_used_after_the_loop(tmp_path):
    k = kernel(tmp_path, """
        do i = 1, n
          a(i) = 0
        end do
        b(1) = i
        do j = 1, n
          a(j) = 1
        end do
        do j = 1, n
          b(j) = 2
        end do
    """)
    l1, l2, l3 = k.loops()
    assert codes(l1) == ["last-value"] and l2.info.parallel and l3.info.parallel


def test_access_bounds_through_locals_steps_and_inductions(tmp_path):
    src = """
      SUBROUTINE B(N, DX, INCX, DY, INCY, TRANS, M)
      INTEGER N, INCX, INCY, M, I, IX, IY, NINCX, LEN, MP
      DOUBLE PRECISION DX(*), DY(*)
      CHARACTER TRANS
      NINCX = N*INCX
      DO 10 I = 1, NINCX, INCX
         DX(I) = 0
   10 CONTINUE
      IY = 1
      IF (INCY .LT. 0) IY = (-N+1)*INCY + 1
      DO 20 I = 1, N
         DY(IY) = 1
         IY = IY + INCY
   20 CONTINUE
      END
"""
    p = tmp_path / "b.f"
    p.write_text(src.lstrip("\n"))
    k = parse_file(p, use_cache=False).kernels[0]
    lo, hi = k.arg("dx").access_bounds[0]
    for n, incx in ((7, 3), (5, 1), (1, 4)):
        env = {"n": n, "incx": incx}
        assert ir.evaluate(lo, env) == 1 and ir.evaluate(hi, env) == 1 + (n - 1) * incx  # exact last index
    lo, hi = k.arg("dy").access_bounds[0]
    for n, incy in ((6, 2), (6, -2), (3, 1)):
        env = {"n": n, "incy": incy}
        assert ir.evaluate(hi, env) == 1 + (n - 1) * abs(incy)  # BLAS: 1+(n-1)*|incy| either sign
        assert ir.evaluate(lo, env) <= 1


def test_access_bounds_union_over_branches(tmp_path):
    k = kernel(tmp_path, """
        if (trans == 'N') then
          len = n
        else
          len = m
        end if
        do i = 1, len
          y(i) = 0
        end do
    """, decls="character trans\n  integer m, len\n  real(8) y(*)", args="n, a, b, c, trans, m, y")
    lo, hi = k.arg("y").access_bounds[0]
    assert ir.evaluate(hi, {"n": 4, "m": 9}) == 9 and ir.evaluate(lo, {"n": 4, "m": 9}) == 1


def test_loop_variable_reassigned_before_its_next_use_is_not_live(tmp_path):
    # issue 12, class 6: `i = 1` after the loop kills the loop's last value of i
    k = kernel(tmp_path, """
        do i = 1, n
          a(i) = 0
        end do
        i = 1
        b(i) = a(i)
        t = 0
        do j = 1, n
          t = t + c(j)
          a(j) = t
        end do
        t = 1
        c(1) = t
    """, decls="real(8) t")
    l1, l2 = k.loops()
    assert l1.info.parallel, codes(l1)
    assert "last-value" not in codes(l2)  # t is a recurrence (scalar-dependence), not a live last value


def test_last_value_reason_names_the_use(tmp_path):
    k = kernel(tmp_path, """
        do i = 1, n
          a(i) = 0
        end do
        if (n > 3) go to 10
        i = 1
   10   b(1) = i
    """)
    d = loop(k)
    assert codes(d) == ["last-value"]
    read = next(s for s in ir.walk(k.body) if isinstance(s, ir.Assign) and s.label == 10)
    # the read at label 10, reached by the GOTO around `i = 1`
    assert d.info.reasons[0].line == read.line and f"line {read.line}" in d.info.reasons[0].message


# --------------------------------------------------------------------------- symbolic subscripts


def _sub(tmp_path, src, name="s.f90"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(src).lstrip("\n"))
    sf = parse_file(p, use_cache=False)
    assert not sf.errors, sf.errors
    return sf.kernels[0]


def _verdict(d):
    """(parallel, condition text or None, reason codes)"""
    c = d.info.condition
    return d.info.parallel, (expr_str(c) if c is not None else None), codes(d)


def test_symbolic_coefficient_is_never_assumed_nonzero(tmp_path):
    k = _sub(tmp_path, """
        subroutine s(n, k, a)
          integer n, k, i
          real(8) a(*)
          do i = 1, n
            a(1 + (i-1)*k) = a(1 + (i-1)*k) + 1.0d0
          end do
        end subroutine
    """)
    d = loop(k)
    assert _verdict(d) == (False, "k /= 0", ["conditional-independence"])
    assert d.info.condition_args == ["k"]
    assert ir.evaluate(d.info.condition, {"k": 0}) is False and ir.evaluate(d.info.condition, {"k": -3}) is True
    assert "only if k /= 0" in d.info.reasons[0].message and d.info.reasons[0].line == 5


def test_unknown_offset_is_independent_when_zero_or_past_the_trip_count(tmp_path):
    k = _sub(tmp_path, """
        subroutine s(n, k, a)
          integer n, k, i
          real(8) a(*)
          do i = 1, n
            a(i + k) = a(i) + 1.0d0
          end do
          do i = 2, n
            a(i) = a(i + k) * 2
          end do
        end subroutine
    """)
    l1, l2 = k.loops()
    assert _verdict(l1) == (False, "k == 0 .or. abs(k) >= n", ["conditional-independence"])
    for kk, n, ok in ((0, 10, True), (1, 10, False), (-9, 10, False), (10, 10, True), (-10, 10, True)):
        assert ir.evaluate(l1.info.condition, {"k": kk, "n": n}) is ok  # |k| < n: iterations meet
    assert _verdict(l2)[1] == "k == 0 .or. abs(k) >= n-1"  # trip count n-1


def test_offsets_proven_apart_need_no_condition(tmp_path):
    k = _sub(tmp_path, """
        subroutine s(n, a, b)
          integer n, i
          real(8) a(*), b(*)
          do i = 1, n
            a(i + n) = a(i) + 1.0d0
          end do
          do i = 1, 10
            b(i + 100) = b(i) + 1.0d0
          end do
          do i = 1, n
            b(i + 1) = b(i) + 1.0d0
          end do
        end subroutine
    """)
    l1, l2, l3 = k.loops()
    assert l1.info.parallel and l2.info.parallel  # the two halves never meet
    assert codes(l3) == ["loop-carried-dependence"] and l3.info.condition is None


def test_guards_that_dominate_the_loop_make_the_condition_unnecessary(tmp_path):
    k = _sub(tmp_path, """
        subroutine s(n, k, incx, incy, m, a, x, y)
          integer n, k, incx, incy, m, i
          integer, parameter :: kp = 3
          real(8) a(*), x(*), y(*)
          if (n .le. 0 .or. k .le. 0) return
          do i = 1, n
            a(1 + (i-1)*k) = a(1 + (i-1)*k) + 1.0d0
          end do
          if (incx .eq. 1 .and. incy .eq. 1) then
            do i = 1, n
              y(1 + (i-1)*incy) = y(1 + (i-1)*incy) + x(i)
            end do
          else if (incy .ne. 0) then
            do i = 1, n
              y(1 + (i-1)*incy) = y(1 + (i-1)*incy) + x(i)
            end do
          else
            do i = 1, n
              y(1 + (i-1)*incy) = y(1 + (i-1)*incy) + x(i)
            end do
          end if
          do i = 1, n
            a(1 + (i-1)*kp) = 0
          end do
          if (m .gt. 0) then
            m = 0
            do i = 1, n
              a(1 + (i-1)*m) = 1
            end do
          end if
        end subroutine
    """)
    ls = k.loops()
    # k >= 1 after the RETURN; incy == 1 in the IF branch; incy /= 0 in the ELSE IF branch; in
    # the ELSE branch incy == 0: the condition could never hold, the loop stays serial
    assert [_verdict(d)[:2] for d in ls[:5]] == [(True, None), (True, None), (True, None), (False, None),
                                                (True, None)]
    assert codes(ls[3]) == ["possible-dependence"]
    assert _verdict(ls[5])[1] == "m /= 0"  # m is assigned: its guard says nothing where the loop starts


def test_a_guard_bypassed_by_a_jump_is_not_a_fact(tmp_path):
    k = _sub(tmp_path, """
              SUBROUTINE S(N, K, A)
              INTEGER N, K, I
              DOUBLE PRECISION A(*)
              IF (N .GT. 100) GOTO 10
              IF (K .EQ. 0) RETURN
        10    CONTINUE
              DO 20 I = 1, N
                 A(1 + (I-1)*K) = 0
        20    CONTINUE
              END
    """, name="s.f")
    assert _verdict(loop(k))[1] == "k /= 0"


def test_flattened_subscripts_use_the_inner_bounds(tmp_path):
    k = _sub(tmp_path, """
        subroutine s(n, m, lda, a, e)
          integer n, m, lda, i, j
          real(8) a(*), e(*)
          do j = 1, m
            do i = 1, n
              a(i + (j-1)*n) = 2*a(i + (j-1)*n) + j
            end do
          end do
          do j = 1, m
            do i = 1, n
              e(i + (j-1)*lda) = 2*e(i + (j-1)*lda) + j
            end do
          end do
          do j = 1, m
            do i = 1, n + 1
              a(i + (j-1)*n) = 0
            end do
          end do
        end subroutine
    """)
    j1, i1, j2, i2, j3, i3 = k.loops()
    assert j1.info.parallel and i1.info.parallel and j1.info.tightly_nested_parallel == 2
    assert _verdict(j2) == (False, "abs(lda) >= n", ["conditional-independence"]) and i2.info.parallel
    assert not j3.info.parallel and j3.info.condition is None  # i runs past n: columns overlap


def test_flattened_with_a_known_sign_drops_abs(tmp_path):
    k = _sub(tmp_path, """
        subroutine s(n, m, lda, e)
          integer n, m, lda, i, j
          real(8) e(*)
          if (lda .lt. 1) return
          do j = 1, m
            do i = 1, n
              e(i + (j-1)*lda) = 0
            end do
          end do
          if (lda .lt. n) return
          do j = 1, m
            do i = 1, n
              e(i + (j-1)*lda) = 1
            end do
          end do
        end subroutine
    """)
    assert _verdict(k.loops()[0])[1] == "lda >= n" and k.loops()[2].info.parallel


def test_two_regions_of_one_array(tmp_path):
    k = _sub(tmp_path, """
        subroutine s(n, ka, kb, a)
          integer n, ka, kb, i
          real(8) a(*)
          do i = 1, n
            a(ka + i) = a(kb + 2*i) + 1.0d0
          end do
        end subroutine
    """)
    d = loop(k)
    assert _verdict(d)[1] == "ka+n < kb+2 .or. kb+2*n < ka+1" and d.info.condition_args == ["n", "ka", "kb"]
    assert ir.evaluate(d.info.condition, {"n": 5, "ka": 0, "kb": 10})
    assert not ir.evaluate(d.info.condition, {"n": 5, "ka": 0, "kb": 0})


def test_condition_args_follow_locals_and_closed_forms(tmp_path):
    k = _sub(tmp_path, """
        subroutine s(n, inc, a)
          integer n, inc, i, ia, step
          real(8) a(*)
          step = 2*inc
          ia = 1
          do i = 1, n
            a(ia) = 1.0d0
            ia = ia + step
          end do
        end subroutine
    """)
    d = loop(k)
    assert _verdict(d) == (False, "step /= 0", ["induction-variable", "conditional-independence"])
    assert d.info.condition_args == ["inc"]


def test_other_reasons_keep_the_loop_serial_without_a_condition(tmp_path):
    k = _sub(tmp_path, """
        subroutine s(n, k, a, b)
          integer n, k, i
          real(8) a(*), b(*)
          do i = 2, n
            a(1 + (i-1)*k) = 0
            b(i) = b(i-1) + 1
          end do
        end subroutine
    """)
    d = loop(k)
    assert codes(d) == ["loop-carried-dependence"] and d.info.condition is None


def test_fact_prover():
    from port_fortran.fortran import affine as A
    from port_fortran.fortran.facts import Facts, condition_facts

    n, lda = A.var("n"), A.var("lda")
    f = Facts([A.add(lda, n, -1), A.add(n, A.const(-1))])  # lda >= n, n >= 1
    assert f.pos(lda) and f.nonneg(A.add(lda, A.const(-1))) and not f.pos(A.add(lda, A.const(-1)))
    assert f.is_nonzero(lda) and not Facts().is_nonzero(n)
    assert Facts([A.add(A.mul(A.const(2), n), A.const(-1))]).pos(n)  # 2n - 1 >= 0 is n >= 1 for integers
    i, z = condition_facts(ir.BinOp("or", ir.BinOp("<=", ir.Name("n", ftype=ir.INTEGER), ir.Literal(0, "0")),
                                    ir.BinOp("==", ir.Name("k", ftype=ir.INTEGER), ir.Literal(0, "0"))), {}, negate=True)
    assert i == [A.add(n, A.const(-1))] and z == [A.var("k")]  # .not.(n <= 0 .or. k == 0): n >= 1, k /= 0


def test_index_array_within_a_slice_of_the_iteration_is_parallel(tmp_path):
    # SNAP's expxs_slgg: cs(mom:mom+lma(l)-1, i) in the loop over i touches column i only,
    # whatever the index array picks in the first dimension; without the column it stays serial
    k = kernel(tmp_path, """
        do i = 1, n
          p = 1
          do j = 1, m
            cs(p:p+lma(j)-1, i) = s(j)
            h(idx(j), i) = h(idx(j), i) + 1
            p = p + lma(j)
          end do
        end do
        do i = 1, n
          g(idx(i)) = b(i)
        end do
    """, decls="integer m, p, lma(m), idx(n)\n  real(8) s(m), cs(100, n), h(100, n), g(100)",
        args="n, m, lma, idx, s, cs, h, b, g")
    outer = loop(k, var="i")
    assert outer.info.parallel, codes(outer)
    assert "p" in outer.info.private
    second = [d for d in k.loops() if d.var == "i"][1]
    assert codes(second) == ["indirect-write"]


def test_scratch_arrays_filled_before_use_are_private(tmp_path):
    # miniWeather's flux loops: stencil(1:4) and vals(1:nv) are filled by a nest over their
    # whole extent before any read in each iteration, so each iteration gets its own copy
    k = kernel(tmp_path, """
        do i = 1, n
          do l = 1, nv
            do j = 1, 4
              st(j) = a(i) * j * l
            end do
            v(l) = st(1) + st(4)
          end do
          b(i) = v(1) + v(nv)
        end do
        do i = 1, n
          do j = 1, 2
            t(j) = a(i) * j
          end do
          c(i) = t(1) + t(3)
        end do
        do i = 1, n
          if (a(i) > 0) then
            do j = 1, 3
              u(j) = a(i)
            end do
          end if
          c(i) = u(2)
        end do
    """, decls="integer, parameter :: nv = 3\n  integer l\n  real(8) st(4), v(nv), t(3), u(3)")
    first, second, third = [d for d in k.loops() if d.var == "i"]
    assert first.info.parallel and {"st", "v"} <= set(first.info.private), codes(first)
    assert not second.info.parallel and "t" not in second.info.private  # t(3) is read, never written
    assert not third.info.parallel and "u" not in third.info.private  # filled only when a(i) > 0


def test_scratch_written_element_by_element_at_constant_subscripts_is_private(tmp_path):
    # CCS-QCD's unrolled colour loops: `ic = 1; yt(ic, 3) = ...; ic = 2; yt(ic, 3) = ...`, each
    # element read after the iteration wrote it (also between writes), the subscript scalar
    # followed through its constant values in order (one array per loop: an array read
    # outside its loop is never private)
    k = kernel(tmp_path, """
        do i = 1, n
          ic = 1
          yt(ic, 1) = a(i)
          yt(ic, 2) = 2 * a(i)
          b(i) = yt(1, 1) + yt(ic, 2)
          ic = 2
          yt(ic, 1) = b(i)
          yt(ic, 2) = 3 * b(i)
          ic = 1
          c(i) = yt(ic, 2) * yt(2, 1) + yt(2, ic + 1)
        end do
        do i = 1, n
          ic = 1
          yu(ic, 1) = a(i)
          ic = 2
          c(i) = yu(ic, 1)
        end do
        do i = 1, n
          ic = 1
          if (a(i) > 0) ic = 2
          yv(ic, 1) = a(i)
          c(i) = yv(1, 1)
        end do
        do i = 1, n
          ic = 1
          do j = 1, 2
            c(i) = c(i) + yw(ic, 1)
            ic = 2
            yw(ic, 1) = a(i)
          end do
        end do
        do i = 1, n
          ic = 1
          yx(ic, 1) = a(i)
          if (a(i) > 0) goto 10
          ic = 2
   10     c(i) = yx(ic, 1)
        end do
    """, decls="integer ic\n  real(8) yt(2, 2), yu(2, 2), yv(2, 2), yw(2, 2), yx(2, 2)")
    good, stale, branch, inner, jump = [d for d in k.loops() if d.var == "i"][:5]
    assert good.info.parallel and {"yt", "ic"} <= set(good.info.private), codes(good)
    assert not stale.info.parallel  # yu(2, 1) is read, written by no statement of the iteration
    assert not branch.info.parallel  # after the IF, ic may be 1 or 2
    assert not inner.info.parallel  # the second pass of j reads yw(2, 1), written only after the first read
    assert not jump.info.parallel  # the GOTO may skip ic = 2
    # the same inside an inner loop and a branch (CCS-QCD writes and reads yt in a loop over
    # the time slices, inside the loops over x, y, z): each pass reads what it wrote
    k = kernel(tmp_path, """
        do i = 1, n
          do j = 1, 3
            ic = 2
            ys(ic, 1) = a(i) * j
            if (a(i) > 0) then
              ys(1, 1) = ys(ic, 1) + 1
              c(i) = c(i) + ys(1, 1)
            end if
            c(i) = c(i) + ys(2, 1)
          end do
        end do
        do i = 1, n
          do j = 1, 3
            c(i) = c(i) + yr(1, 1)
            yr(1, 1) = a(i)
          end do
        end do
    """, decls="integer ic\n  real(8) ys(2, 2), yr(2, 2)", name="k2.f90")
    nested, late = [d for d in k.loops() if d.var == "i"]
    assert nested.info.parallel and "ys" in nested.info.private, codes(nested)
    assert not late.info.parallel  # yr(1, 1) read before the pass writes it


def test_scratch_a_contained_procedure_names_hands_its_last_value_on(tmp_path):
    # `w` is filled before every read in the loop, but `inner`, CONTAINed in the routine and
    # called after the loop, reads it by host association: private copies alone would leave
    # it as it was before the loop; the last iteration writes through
    p = tmp_path / "host.f90"
    p.write_text(textwrap.dedent("""
        subroutine outer(n, a, c)
          integer n
          real(8) a(n), c(n)
          real(8) w(2)
          integer i
          do i = 1, n
            w(1) = a(i)
            w(2) = 2 * a(i)
            c(i) = w(1) + w(2)
          end do
          call inner()
        contains
          subroutine inner()
            c(1) = w(1)
          end subroutine
        end subroutine
    """).lstrip("\n"))
    sf = parse_file(p, use_cache=False)
    k = next(x for x in sf.kernels if x.name == "outer")
    d = loop(k)
    assert d.info.parallel and "w" in d.info.private and "w" in d.info.last_private


def test_scratch_filled_at_several_depths_of_one_nest_is_private(tmp_path):
    # a block set up per iteration by one nest: its off-diagonal elements by the inner loop,
    # its diagonal beside that loop (w(l, l) = ...), then read whole. Every level of the nest
    # adds what it surely writes; a write in a branch adds nothing
    k = kernel(tmp_path, """
        do i = 1, n
          do l = 1, 3
            do j = 1, 3
              w(j, l) = a(i) * j
            end do
            w(l, l) = 2.0d0 + a(i)
          end do
          b(i) = w(1, 1) + w(3, 2)
        end do
        do i = 1, n
          do l = 1, 3
            do j = 1, 2
              v(j, l) = a(i) * j
            end do
            if (a(i) > 0) v(3, l) = 1.0d0
          end do
          c(i) = v(3, 1)
        end do
    """, decls="integer l\n  real(8) w(3, 3), v(3, 3)")
    first, second = [d for d in k.loops() if d.var == "i"]
    assert first.info.parallel and "w" in first.info.private, codes(first)
    assert not second.info.parallel and "v" not in second.info.private  # v(3, l) only when a(i) > 0


def test_a_reflection_across_a_boundary_is_independent(tmp_path):
    # halo rows mirrored from the interior: a(1 - k) written, a(k) read for k = 1, d -- the
    # rows written (<= 0) and read (>= 1) never meet; b(3 - j) does (j = 1 writes what j = 2 reads)
    k = kernel(tmp_path, """
        do j = 1, d
          a(1 - j) = a(j)
        end do
        do j = 1, d
          b(3 - j) = b(j)
        end do
    """, decls="integer d\n  real(8) a(-4:10)", args="n, a, b, c, d")
    first, second = [x for x in k.loops() if x.var == "j"]
    assert first.info.parallel, codes(first)
    assert not second.info.parallel


def test_array_assignments_fill_scratch_arrays(tmp_path):
    # BookLeaf's local force matrices (lfx = 0 at the top of every element's iteration) and
    # sections copied from a column: an array assignment writes its whole section; a section
    # short of what is read later, or one reading the array itself, fills nothing
    k = kernel(tmp_path, """
        do i = 1, n
          w = 0.0d0
          if (a(i) > 0.5d0) w(1) = 1.0d0
          v(:) = w(2:4) + a(i)
          z(0:2) = v
          b(i) = w(1) + v(3) + z(2)
        end do
        do i = 1, n
          v(1:2) = a(i)
          c(i) = v(3)
        end do
        do i = 1, n
          v(2:3) = a(i)
          v(1:3) = v(1:3) + 1.0d0
          c(i) = v(1)
        end do
    """, decls="real(8) w(4), v(3), z(0:2)")
    first, second, third = [d for d in k.loops() if d.var == "i"]
    assert first.info.parallel and {"w", "v", "z"} <= set(first.info.private), codes(first)
    assert not second.info.parallel and "v" not in second.info.private  # v(3) never written
    assert not third.info.parallel and "v" not in third.info.private  # v(1) read before written


def test_branches_named_constants_rule_out_are_not_paths(tmp_path):
    # miniWeather's init: `if (data_spec_int == DATA_SPEC_COLLISION) call collision(x, z, r, ...)`
    # for each case, data_spec_int a PARAMETER: only the taken branch assigns t each iteration
    k = kernel(tmp_path, """
        do i = 1, n
          if (mode == 1) t = a(i)
          if (mode == 2) t = b(i) * 2
          c(i) = t
        end do
        do i = 1, n
          if (n > 2) u = b(i)
          c(i) = u
        end do
    """, decls="integer, parameter :: mode = 2\n  real(8) t, u")
    first, second = [d for d in k.loops() if d.var == "i"]
    assert first.info.parallel and "t" in first.info.private, codes(first)
    assert "scalar-dependence" in codes(second)  # n is no constant: u may keep last iteration's value


def _pack(tmp_path, body):
    """TeaLeaf's halo-packing idiom (written here): the buffer index is a
    scalar the iteration computes first, then uses as the subscript."""
    src = textwrap.dedent("""
        subroutine pk(n, m, depth, off, field, buf, flag)
          integer n, m, depth, off, flag, j, k, idx
          real(8) field(n, m), buf(*)
    """).lstrip("\n") + textwrap.dedent(body) + "end subroutine\n"
    p = tmp_path / "pk.f90"
    p.write_text(src)
    sf = parse_file(p, use_cache=False)
    assert not sf.errors, sf.errors
    return sf.kernels[0]


def test_subscript_through_a_temporary_of_the_iteration(tmp_path):
    k = _pack(tmp_path, """
        do k = 1, m
          do j = 1, depth
            idx = off + j + (k - 1)*depth
            buf(idx) = field(j, k)
          end do
        end do
    """)
    outer, inner = k.loops()
    assert outer.info.parallel and inner.info.parallel, [r.message for r in outer.info.reasons]
    assert "idx" in outer.info.private
    lo, hi = k.arg("buf").access_bounds[0]
    env = {"m": 4, "depth": 3, "off": 5}
    assert ir.evaluate(lo, env) == 6 and ir.evaluate(hi, env) == 5 + 3 + 3 * 3


def test_temporary_not_surely_set_in_the_iteration_is_not_substituted(tmp_path):
    # assigned only on some paths: the value may be the previous iteration's
    k = _pack(tmp_path, """
        do k = 1, m
          if (flag > k) idx = off + k
          buf(idx) = field(1, k)
        end do
    """)
    assert not k.loops()[0].info.parallel
    assert k.arg("buf").access_bounds[0] is None
    # assigned after its use: the subscript is the previous iteration's value
    k = _pack(tmp_path, """
        idx = off
        do k = 1, m
          buf(idx) = field(1, k)
          idx = off + k
        end do
    """)
    assert not k.loops()[0].info.parallel
    # passed to a routine between: it may come back changed
    k = _pack(tmp_path, """
        do k = 1, m
          idx = off + k
          call shift(idx)
          buf(idx) = field(1, k)
        end do
    """)
    assert not k.loops()[0].info.parallel


def test_temporary_of_a_value_the_iteration_changes_is_not_substituted(tmp_path):
    # idx is computed from j of the previous inner loop: not the j of the use
    k = _pack(tmp_path, """
        do k = 1, m
          do j = 1, depth
            idx = off + j
          end do
          do j = 1, depth
            buf(idx + (k - 1)*depth) = field(j, k)
          end do
        end do
    """)
    assert not k.loops()[0].info.parallel


def test_index_of_the_first_minimum_is_a_loc_reduction(tmp_path):
    """``if (x(k) < x(m)) m = k`` (Livermore kernel 24): the loop reads m before it assigns
    it, but as the location of the first minimum of an array it does not change it is a
    (value, index) reduction, not a scalar dependence; when the loop writes the array it is."""
    k = kernel(tmp_path, """
        j = 1
        do i = 2, n
          if (a(i) < a(j)) j = i
        end do
        c(1) = j
    """)
    d = loop(k)
    assert codes(d) == ["loc-reduction"] and "j is the index of the first minimum of a" in d.info.reasons[0].message
    k = kernel(tmp_path, """
        j = 1
        do i = 2, n
          if (a(i) < a(j)) j = i
          a(i) = 0
        end do
        c(1) = j
    """, name="k2.f90")
    assert "loc-reduction" not in codes(loop(k))


def test_a_temporary_of_a_common_value_a_call_may_change_is_not_substituted(tmp_path):
    """``idx = off + k`` with OFF in COMMON, then a CALL, then ``buf(idx)``: the call may
    change OFF, so idx is not spelled as ``off + k`` at the use (it is without the call)."""
    from port_fortran.fortran.dataflow import IterationValues

    src = textwrap.dedent("""
        subroutine pk(n, m, field, buf)
          integer n, m, k, idx, off
          common /shift/ off
          real(8) field(n, m), buf(*)
          do k = 1, m
            idx = off + k
            call bump()
            buf(idx) = field(1, k)
          end do
        end subroutine
    """).lstrip("\n")
    p = tmp_path / "pkc.f90"
    p.write_text(src)
    k = parse_file(p, use_cache=False).kernels[0]
    do = k.loops()[0]
    use = do.body[-1]
    assert expr_str(IterationValues(do.body).value(use, "idx")) == "off+k"
    assert IterationValues(do.body, {"off"}).value(use, "idx") is None


def test_implied_do_of_a_write_after_the_loop_reads_no_loop_variable(tmp_path):
    # the WRITE's implied DO sets j itself: the value j has after the loop is never read,
    # so the nest over i (and j) stays parallel; a j printed outside the implied DO is read
    body = """
        do i = 1, n
          do j = 1, n
            w(j, i) = b(i) + c(j)
          end do
        end do
        write(0, *) (w(j, 1), j = 1, n)
    """
    k = kernel(tmp_path, body, decls="real(8) w(n, n)")
    assert loop(k, var="i").info.parallel
    k = kernel(tmp_path, body.replace("write(0, *) (", "write(0, *) j, ("), decls="real(8) w(n, n)", name="k2.f90")
    assert "last-value" in codes(loop(k, var="i"))


def test_scratch_recurrences_filled_before_read_are_private(tmp_path):
    # TeaLeaf's block-Jacobi solve (tests/data/private/colsolve.f90): per column, d(0) is set,
    # then d(1..3) each from the one before (a recurrence), y(3) from d(3), y(2..0) backwards
    # from the one after; the subscripts k - lo with k = lo, k = hi after the scalars' own
    # assignments. Every element read was written earlier in the column's iteration, and the
    # second nest (the rows left over, lo and hi through MIN) fills them first too: each
    # column has its own d and y, and the column loop is parallel (outermost, turned outside
    # the blocks), where it ran as one serial kernel
    src = Path(__file__).parent / "data" / "private" / "colsolve.f90"
    sf = parse_file(src, use_cache=False)
    k = sf.kernels[0]
    cols = [d for d in k.loops() if d.var == "j"]
    assert len(cols) == 2
    for d in cols:
        assert d.info.parallel, codes(d)
        assert {"d", "y"} <= set(d.info.private) and {"d", "y"} <= set(d.info.dead_after)
        assert d.info.interchanged  # both turned nests keep the mark that picks their host form
    # the same sweeps without d(0) set for each column: d(0) then comes from the column
    # before (a value another iteration wrote), so d is not private and the loop stays serial
    text = src.read_text().replace("      d(k - lo) = r(j, k) / (2d0 + b(j, k))\n", "", 1)
    p = tmp_path / "carry.f90"
    p.write_text(text)
    kc = parse_file(p, use_cache=False).kernels[0]
    first = [d for d in kc.loops() if d.var == "j"][0]
    assert not first.info.parallel and "d" not in first.info.private
    assert any(" d(" in str(r) or " on d " in str(r) for r in first.info.reasons), [str(r) for r in first.info.reasons]
    # a backward sweep reading ahead of its writes (y(k - lo - 1) while going down) reads
    # elements no pass wrote yet: not private
    text = src.read_text().replace("c(j, k) * y(k - lo + 1)", "c(j, k) * y(k - lo - 1)", 1)
    p = tmp_path / "ahead.f90"
    p.write_text(text)
    ka = parse_file(p, use_cache=False).kernels[0]
    first = [d for d in ka.loops() if d.var == "j"][0]
    assert "y" not in first.info.private and not first.info.parallel
    # d(0) read after both nests (the last column's value): d is live after each, so neither
    # column loop may give each column its own d
    text = src.read_text().replace("end subroutine colsolve", "  x(1, 1) = d(0)\nend subroutine colsolve")
    p = tmp_path / "live.f90"
    p.write_text(text)
    kl = parse_file(p, use_cache=False).kernels[0]
    assert all("d" not in d.info.private and not d.info.parallel for d in kl.loops() if d.var == "j")
