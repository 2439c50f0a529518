"""Error exits of callees (``fortran/error_exits.py``) and COMMON tables passed on to
read-only routines (``common_use.names_written`` asking the callee).

A helper called per element that checks its arguments and ends the program when they are
wrong (``WRITE`` then ``STOP``, ``CALL EXIT`` or a call to a routine that never returns)
is a device function whose error branch ends the program (``pf::error_stop``); the inputs
the harness draws keep the check's condition false (``accepts`` constraints), at the
timing sizes too. A check that only warns and returns still keeps the loop serial.

Test Fortran: ``tests/data/devfunc/errexit.f`` (written for these tests)."""
from __future__ import annotations

from pathlib import Path

import pytest

from port_fortran.fortran import affine, ir
from port_fortran.fortran.effects import load_for_port
from port_fortran.fortran.error_exits import ErrorStop, exit_conditions, never_returns, without_error_exits
from port_fortran.fortran.program_build import build_program
from port_fortran.fortran.render import expr_str
from port_fortran.harness.constraints import constraints
from port_fortran.harness.infer import infer
from port_fortran.translate import translate_kernel

SRC = Path(__file__).parent / "data" / "devfunc" / "errexit.f"


@pytest.fixture(scope="module")
def prog():
    return build_program([SRC])


def test_routines_that_never_return(prog):
    r = prog.resolver()
    assert never_returns(prog.kernel(SRC, "fatal"), r)  # WRITE then STOP
    assert not never_returns(prog.kernel(SRC, "wgt"), r)  # only on its error branch
    wgt = without_error_exits(prog.kernel(SRC, "wgt"), r)
    assert [type(s) for s in ir.walk(wgt.body) if isinstance(s, ErrorStop)] == [ErrorStop]
    assert "fatal" not in wgt.calls and not wgt.unsupported  # the WRITE and the call went with the branch
    warned = prog.kernel(SRC, "warned")
    assert without_error_exits(warned, r) is warned  # a warning that returns is no error exit
    rdchk = prog.kernel(SRC, "rdchk")
    assert without_error_exits(rdchk, r) is rdchk  # its READ may leave the branch at END=


def test_a_check_on_a_local_an_earlier_branch_may_change_keeps_its_name(prog):
    (cond, _line), = exit_conditions(prog.kernel(SRC, "lims"), prog.resolver())
    assert expr_str(cond) == "m > lim"  # not 'm > 10': LIM = N on some paths


def test_error_exit_conditions_in_the_callers_names(prog):
    r = prog.resolver()
    (cond, _line), = exit_conditions(prog.kernel(SRC, "wgt"), r)
    assert expr_str(cond) == "n > 500 .or. n < 1"  # lim = nmax (a PARAMETER) substituted
    k, _sf = load_for_port(prog, SRC, "apply")
    said = {expr_str(c) for c, _l, _w in k.accepts}
    assert said == {"n > 500 .or. n < 1", "m < 1"}  # wgt2(a(i, j), m): its dummy n is APPLY's m
    polys = [c.poly for c in constraints(k) if c.kind == "accepts"]
    assert {(("n",), -1), ((), 500)} <= {x for p in polys for x in p.items()} and \
        affine.add(affine.var("n"), affine.const(-1)) in polys  # n <= 500 and n >= 1
    spec = infer(k)
    assert 1 <= spec.timing["n"] <= 500 and spec.timing["m"] > 500  # timed at a size the original accepts


def test_loops_calling_checked_helpers_are_parallel(prog):
    apply = prog.kernel(SRC, "apply")
    assert all(d.info.parallel for d in apply.loops()), [d.info.reasons for d in apply.loops()]
    (d,) = prog.kernel(SRC, "useswarn").loops()
    assert not d.info.parallel and d.info.reasons[0].code == "call-in-loop"
    k, sf = load_for_port(prog, SRC, "apply")
    port = translate_kernel(k, sf, program=prog)
    assert port.patterns == ["mdrange"]
    code = port.files["apply.kokkos.cpp"]
    assert code.count("pf::error_stop(") == 2 and "wgt (errexit.f:21)" in code
    assert "error_stop" in port.files["pf_kokkos_compat.hpp"]


def test_a_helper_passing_a_common_table_to_a_reader_is_a_device_function(prog):
    (d,) = prog.kernel(SRC, "smooth").loops()
    assert d.info.parallel, d.info.reasons
    k, sf = load_for_port(prog, SRC, "smooth")
    port = translate_kernel(k, sf, program=prog)
    assert port.patterns == ["parallel_for"]
    code = port.files["smooth.kokkos.cpp"]
    assert "scl_fn(const double x, const double* pf_ptr_coef)" in code and "sumtab_fn(s, coef.data())" in code


# the ports of APPLY and SMOOTH are proven against the original on Serial and OpenMP with the
# other device-function ports: test_devfunc.PORTS


ERRLOOP = Path(__file__).parent / "data" / "devfunc" / "errloop.f"


def test_an_error_routine_printing_in_counted_loops_never_returns():
    """A counted DO (and an EXIT of it) before the STOP still runs into it; a RETURN or a
    DO WHILE before it does not. The helper calling the routine on a bad argument is then a
    device function with an error exit, and the loop calling it is parallel."""
    prog = build_program([ERRLOOP])
    r = prog.resolver()
    assert never_returns(prog.kernel(ERRLOOP, "trcstp"), r)
    assert not never_returns(prog.kernel(ERRLOOP, "mayret"), r)
    assert not never_returns(prog.kernel(ERRLOOP, "waitstp"), r)
    clamp = without_error_exits(prog.kernel(ERRLOOP, "clamp"), r)
    assert [s for s in ir.walk(clamp.body) if isinstance(s, ErrorStop)] and not clamp.unsupported
    (cond, _line), = exit_conditions(prog.kernel(ERRLOOP, "clamp"), r)
    assert expr_str(cond).lower() == "hi < 0d0"
    (d,) = prog.kernel(ERRLOOP, "clampall").loops()
    assert d.info.parallel, d.info.reasons
    k, sf = load_for_port(prog, ERRLOOP, "clampall")
    port = translate_kernel(k, sf, program=prog)
    assert port.patterns == ["parallel_for"]
    assert port.files["clampall.kokkos.cpp"].count("pf::error_stop(") == 1
