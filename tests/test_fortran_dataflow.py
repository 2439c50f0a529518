"""Liveness, exposed reads and reaching definitions over the control flow (fortran/dataflow.py),
GOTOs included: asserted on small routines written for these tests."""
from __future__ import annotations


from port_fortran.fortran import ir, parse_file
from port_fortran.fortran.dataflow import FlowGraph, exposed_reads


def kernel(tmp_path, body, name="k.f"):
    """A fixed-form routine (labels and GOTOs welcome) with scalars i, j, k, m, t, x, y, c."""
    src = ("      SUBROUTINE K(N, A, B, C)\n"
           "      INTEGER N, I, J, M, KK\n"
           "      DOUBLE PRECISION A(N), B(N), T, X, Y\n"
           "      LOGICAL C\n" + body + "      END\n")
    p = tmp_path / name
    p.write_text(src)
    sf = parse_file(p, use_cache=False)
    assert not sf.errors, sf.errors
    return sf.kernels[0]


def first(k, cls, **attrs):
    for s in ir.walk(k.body):
        if isinstance(s, cls) and all(getattr(s, a) == v for a, v in attrs.items()):
            return s
    raise AssertionError(f"no {cls.__name__} {attrs}")


def graph(k):
    outs = {a.name for a in k.args if a.intent != "in"}
    return FlowGraph(k.body, live_at_end=outs)


def test_loop_variable_reassigned_after_loop_is_dead(tmp_path):
    k = kernel(tmp_path, """\
      DO 10 I = 1, N
         A(I) = B(I)
   10 CONTINUE
      I = 1
      A(I) = 0.0D0
""")
    g = graph(k)
    do = first(k, ir.Do)
    assert not g.is_live_after(do, "i")
    assert "i" not in g.live_after(do)


def test_loop_variable_read_after_loop_is_live(tmp_path):
    k = kernel(tmp_path, """\
      DO 10 I = 1, N
         A(I) = B(I)
   10 CONTINUE
      X = A(I - 1)
""")
    assert graph(k).is_live_after(first(k, ir.Do), "i")


def test_goto_around_the_reassignment_keeps_it_live(tmp_path):
    k = kernel(tmp_path, """\
      DO 10 I = 1, N
         A(I) = B(I)
   10 CONTINUE
      IF (C) GO TO 20
      I = 1
   20 A(I) = 0.0D0
""")
    assert graph(k).is_live_after(first(k, ir.Do), "i")


def test_exit_and_zero_trip_reach_the_read(tmp_path):
    k = kernel(tmp_path, """\
      DO I = 1, N
         IF (A(I) .GT. 0.0D0) EXIT
      END DO
      J = I
      B(1) = J
""")
    g = graph(k)
    assert g.is_live_after(first(k, ir.Do), "i")
    # j is assigned and then read: dead before its assignment
    assert "j" not in g.live_before(first(k, ir.Assign, line=first(k, ir.Assign).line))


def test_stop_ends_every_path(tmp_path):
    k = kernel(tmp_path, """\
      DO I = 1, N
         A(I) = B(I)
      END DO
      STOP
""")
    assert not graph(k).is_live_after(first(k, ir.Do), "i")


def test_unsupported_statement_reads_everything(tmp_path):
    # a statement function in the output list sees the routine's locals: what the
    # statement reads is unknown
    k = kernel(tmp_path, """\
      F(M) = M + I
      DO I = 1, N
         A(I) = B(I)
      END DO
      WRITE (*, *) 'done', F(N)
""")
    assert first(k, ir.Unsupported).reads is None
    assert graph(k).is_live_after(first(k, ir.Do), "i")


def test_external_function_in_io_reads_no_local(tmp_path):
    # an external function reads its arguments and shared state, never a local of the
    # caller: the loop variable is dead after the loop, N (its argument) is read
    k = kernel(tmp_path, """\
      DO I = 1, N
         A(I) = B(I)
      END DO
      WRITE (*, *) 'done', F(N)
""")
    assert "n" in first(k, ir.Unsupported).reads
    assert not graph(k).is_live_after(first(k, ir.Do), "i")


def test_io_statement_reads_the_names_it_mentions(tmp_path):
    # a diagnostic WRITE after a loop reads T, not the loop variable; an implied DO does not
    # read its own variable's old value
    k = kernel(tmp_path, """\
      T = 0.0D0
      DO I = 1, N
         A(I) = B(I)
      END DO
      WRITE (*, *) 'done', T, (A(J), J = 1, N)
""")
    g = graph(k)
    assert not g.is_live_after(first(k, ir.Do), "i")
    assert g.is_live_after(first(k, ir.Assign, line=5), "t")
    assert first(k, ir.Unsupported).writes == ["j"]


def test_io_end_label_is_a_jump(tmp_path):
    # READ (..., END=20) may jump to 20: X, read there, stays live across the assignment
    # the fall-through path makes
    k = kernel(tmp_path, """\
      X = 1.0D0
      READ (5, *, END=20) Y
      X = 2.0D0
   20 A(1) = X
""")
    g = graph(k)
    assert g.is_live_after(first(k, ir.Assign, line=5), "x")
    assert first(k, ir.Unsupported).targets == [20]


def test_call_does_not_kill(tmp_path):
    k = kernel(tmp_path, """\
      T = 1.0D0
      CALL FOO(T)
      A(1) = T
""")
    g = graph(k)
    assign = first(k, ir.Assign)
    assert g.is_live_after(assign, "t")
    # and the call itself reads the value it is passed
    assert "t" in g.live_before(first(k, ir.CallStmt))


def test_exposed_reads_follow_gotos(tmp_path):
    k = kernel(tmp_path, """\
      IF (C) GO TO 5
      T = X
    5 Y = T
      A(1) = Y
""")
    assert "t" in exposed_reads(k.body)
    k2 = kernel(tmp_path, """\
      T = 0.0D0
      IF (C) GO TO 5
      T = X
    5 Y = T
      A(1) = Y
""", name="k2.f")
    ex = exposed_reads(k2.body)
    assert "t" not in ex and "y" not in ex and "x" in ex and "c" in ex


def test_backward_goto_loop_carries_values(tmp_path):
    k = kernel(tmp_path, """\
      T = 0.0D0
      I = 0
   10 I = I + 1
      T = T + A(I)
      IF (I .LT. N) GO TO 10
      B(1) = T
""")
    g = graph(k)
    upd = first(k, ir.Assign, line=first(k, ir.Assign).line + 2)  # I = I + 1
    assert isinstance(upd.target, ir.Name) and upd.target.name == "i"
    assert "i" in g.live_before(upd) and "t" in g.live_before(upd)


def test_reaching_definitions(tmp_path):
    k = kernel(tmp_path, """\
      X = 1.0D0
      IF (C) X = 2.0D0
      DO I = 1, N
         A(I) = X * B(I)
      END DO
      Y = T
      B(1) = Y
""")
    g = graph(k)
    do = first(k, ir.Do)
    defs = g.reaching_defs(do, "x")
    assert defs is not None and sorted(d.line for d in defs) == [5, 6]
    assert g.reaching_defs(do, "t") is None  # from before the routine's statements: not known
    inner = first(k, ir.Assign, line=8)
    assert [d.line for d in g.reaching_defs(inner, "x")] in ([5, 6], [6, 5])


def test_entry_statement_is_a_second_start(tmp_path):
    # after ENTRY E, X may hold the value its caller passed, not the 1.0 assigned above; a
    # loop before the ENTRY keeps its variable dead (falling through ENTRY reads nothing)
    k = kernel(tmp_path, """\
      X = 1.0D0
      DO I = 1, N
         A(I) = B(I)
      END DO
      ENTRY E(N, A, B, X)
      A(1) = X
""")
    g = graph(k)
    assert g.reaching_defs(first(k, ir.Assign, line=10), "x") is None
    assert not g.is_live_after(first(k, ir.Do), "i")
    assert "x" in g.exposed()
