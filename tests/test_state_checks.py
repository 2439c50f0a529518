"""Checks that raise a flag before they stop, and the checks a routine's callees make of the
COMMON state (``error_exits.exit_conditions``' flags, ``harness.callee_commons.callee_checks``,
``harness.constraints.equal_reals``).

Test Fortran: ``tests/data/common/stateck.f`` (written for these tests). ARGCHK checks its
arguments LAPACK's way (INFO set in an ELSE IF chain, then ``IF (INFO .NE. 0) CALL BADARG``);
CHKST checks shared state the Livermore loops' way (a flag per check in IE, summed into
IERR, then a STOP); STKERN calls TRC, which counts its calls in /ORD/ and calls CHKST.
Before, neither check gave a condition (only IF statements whose branch stops did), so the
harness drew members CHKST rejects and STKERN's original stopped on every input."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from port_fortran.fortran.effects import load_for_port
from port_fortran.fortran.error_exits import exit_conditions
from port_fortran.fortran.program_build import build_program
from port_fortran.fortran.render import expr_str
from port_fortran.harness.callee_commons import callee_checks, callee_state
from port_fortran.harness.constraints import constraints, equal_reals, scalar_bounds

sys.path.insert(0, str(Path(__file__).parent))
import toolchain  # noqa: E402

SRC = Path(__file__).parent / "data" / "common" / "stateck.f"


@pytest.fixture(scope="module")
def prog():
    return build_program([SRC])


def test_a_flag_raised_in_an_else_if_chain_is_the_chains_conditions(prog):
    (cond, line), = exit_conditions(prog.kernel(SRC, "argchk"), prog.resolver())
    assert expr_str(cond) == "m < 0 .or. n < 0 .or. lda < max(1, m)" and line == 24
    k, _sf = load_for_port(prog, SRC, "argchk")
    polys = [c.poly for c in constraints(k) if c.kind == "accepts"]
    assert {("lda",): 1, ("m",): -1} in polys and {("lda",): 1, (): -1} in polys  # lda >= max(1, m)


def test_flags_summed_in_a_loop_are_every_check_that_raises_one(prog):
    (cond, _line), = exit_conditions(prog.kernel(SRC, "chkst"), prog.resolver())
    assert expr_str(cond) == ("tstart /= tcheck .or. (iseq <= 0 .or. iseq /= isav) .or. (nrun < 1 .or. nrun > 8)"
                              " .or. loop < 1 .or. loop /= lp")


def test_a_flag_that_may_cancel_or_is_set_otherwise_says_nothing(tmp_path):
    src = tmp_path / "mixed.f"
    src.write_text("      subroutine mixed(m, n)\n      integer m, n, info\n      info = 0\n"
                   "      if (m .lt. 0) info = -1\n      if (n .lt. 0) info = 2\n"
                   "      if (info .ne. 0) stop\n      end\n"
                   "      subroutine other(m, n)\n      integer m, n, info\n      info = 0\n"
                   "      if (m .lt. 0) info = n\n      if (info .ne. 0) stop\n      end\n")
    p = build_program([src])
    for name in ("mixed", "other"):  # -1 + 2 may be... anything; a flag set to N is no flag
        assert [expr_str(c) for c, _l in exit_conditions(p.kernel(src, name), p.resolver())] == ["info /= 0"]


def test_callee_checks_in_the_routines_names_without_what_changes_before(prog):
    k, _sf = load_for_port(prog, SRC, "stkern")
    said = [expr_str(c) for c, _l, _w in callee_checks(k, prog.resolver())]
    # CHKST's checks on ISEQ and ISAV are left out: TRC changes both before it calls CHKST
    # (and STKERN does not declare /ORD/)
    assert said == ["tstart /= tcheck", "nrun < 1", "nrun > 8", "loop < 1", "loop /= lp"]
    d = callee_state(k, prog.resolver())
    assert equal_reals(d) == [("tstart", "tcheck")]
    assert scalar_bounds(d, "nrun", {}) == (1, 8)
    assert scalar_bounds(d, "lp", {"loop": 3}) == (3, 3)
    assert not callee_checks(k, None)


def _harness(prog, name: str, tmp_path):
    """The port of ``name`` (auto mode) written under ``tmp_path`` and its harness."""
    if toolchain.missing():
        pytest.skip(toolchain.missing())
    from port_fortran.harness.hybrid import make_harness
    from port_fortran.translate import write_port
    from port_fortran.translate.hybrid import translate_mode

    k, sf = load_for_port(prog, SRC, name)
    write_port(translate_mode(k, sf, None, "auto", program=prog), tmp_path / name)
    return make_harness(k, sf, tmp_path / name, program=prog)


@pytest.mark.integration
def test_a_routine_whose_callee_checks_the_shared_state_is_proven(tmp_path, prog):
    h = _harness(prog, "stkern", tmp_path)
    assert {"tstart", "tcheck", "loop", "lp", "nrun"} <= set(h.spec.args)
    for b in ("serial", "openmp"):
        v = h.verify(b, seeds=1)
        assert v.passed, f"[{b}]: {v.reason}"


def test_blocks_only_callees_declare_are_declared_for_the_harness(prog):
    from port_fortran.harness.callee_commons import callee_blocks
    k, _sf = load_for_port(prog, SRC, "noblk")
    assert not k.commons
    b = callee_blocks(k, prog.resolver())
    assert b is not k and not k.commons  # a copy
    # the blocks CHKST's kept checks read; /ORD/ (the checks on it are left out: TRC changes
    # it first) stays undeclared, as do blocks no check reads
    assert {cb.name: cb.variables for cb in b.commons} == {
        "tau": ["tstart", "tcheck"], "spc": ["nrun", "loop", "lp", "pf_spc_nx"]}
    d = callee_state(k, prog.resolver())
    driven = {a.name: a.intent for a in d.args if a.common is not None}
    assert driven == {"tstart": "in", "tcheck": "in", "nrun": "in", "loop": "in", "lp": "in"}  # not PF_SPC_NX
    assert equal_reals(d) == [("tstart", "tcheck")] and scalar_bounds(d, "nrun", {}) == (1, 8)
    assert callee_blocks(k, None) is k


@pytest.mark.integration
def test_a_routine_declaring_none_of_the_checked_blocks_is_proven(tmp_path, prog):
    v = _harness(prog, "noblk", tmp_path).verify("serial", seeds=1)
    assert v.passed, v.reason


def test_max_and_min_in_a_check_are_one_condition_per_argument(tmp_path):
    src = tmp_path / "spread.f"
    src.write_text("      subroutine spread(m, k, lda, a)\n      integer m, k, lda\n      double precision a(lda)\n"
                   "      if (max(m, 2) .gt. lda) stop\n      if (k .gt. min(m, 40)) stop\n"
                   "      if (min(k, 3) .lt. 1) stop\n      if (min(m, k) .gt. 5) stop\n      a(1) = 0d0\n      end\n")
    p = build_program([src])
    k, _sf = load_for_port(p, src, "spread")
    polys = [c.poly for c in constraints(k) if c.kind == "accepts"]
    assert {("lda",): 1, ("m",): -1} in polys and {("lda",): 1, (): -2} in polys  # lda >= max(m, 2)
    assert {("m",): 1, ("k",): -1} in polys and {(): 40, ("k",): -1} in polys  # k <= min(m, 40)
    assert {("k",): 1, (): -1} in polys  # min(k, 3) < 1 holds when k < 1 (or 3 < 1)
    # min(m, k) > 5 holds when both are: its negation is no conjunction of linear parts
    assert not [c for c in constraints(k) if c.kind == "accepts" and c.line == 7]


def test_a_dummy_set_to_zero_first_is_a_flag_and_its_entry_value_no_input(prog, tmp_path):
    (cond, _line), = exit_conditions(prog.kernel(SRC, "getinf"), prog.resolver())
    assert expr_str(cond) == "m < 1 .or. n > m"
    src = tmp_path / "late.f"  # INFO assigned from N first: a check on it is no entry condition
    src.write_text("      subroutine late(n, info)\n      integer n, info\n      info = 0\n"
                   "      if (n .lt. 0) info = n\n      if (info .ne. 0) stop\n      end\n")
    p = build_program([src])
    assert exit_conditions(p.kernel(src, "late"), p.resolver()) == []
