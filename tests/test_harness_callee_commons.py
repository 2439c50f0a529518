"""COMMON members only a routine's callees touch are driven by the harness
(``harness/callee_commons.py``, ``members.driven_kernel``).

GRIDSUM (``tests/data/common/calleeblk.f``, written for these tests) declares /GRID/ but
uses only NCELL itself: CELLID, which it calls, divides by NX and NY and counts its calls in
NCALL (so it is no read-only routine its caller could pass the members to). Undriven, NX
and NY were 0 in the drivers' block and the original died of SIGFPE on every input; NCALL,
which only the callee writes, was never compared. Members that do not line up with the
callee's block (another type at the same offset) are left alone."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from port_fortran.fortran.effects import load_for_port
from port_fortran.fortran.program_build import build_program
from port_fortran.harness.callee_commons import callee_commons
from port_fortran.harness.members import driven_kernel

sys.path.insert(0, str(Path(__file__).parent))
import toolchain  # noqa: E402

SRC = Path(__file__).parent / "data" / "common" / "calleeblk.f"


@pytest.fixture(scope="module")
def prog():
    return build_program([SRC])


def test_members_only_callees_touch_are_found_in_the_routines_names(prog):
    k, _sf = load_for_port(prog, SRC, "gridsum")
    assert callee_commons(k, prog.resolver()) == {"nx": False, "ny": False, "ncall": True}
    d = driven_kernel(k, (), callee_commons(k, prog.resolver()))
    intents = {a.name: a.intent for a in d.args if a.common is not None}
    assert intents == {"nx": "in", "ny": "in", "ncell": "in", "ncall": "inout"}  # block order
    assert [a.name for a in driven_kernel(k).args if a.common is not None] == ["ncell"]  # before: its own only


def test_a_callee_block_laid_out_differently_is_not_mapped(prog):
    k, _sf = load_for_port(prog, SRC, "gridoth")
    assert callee_commons(k, prog.resolver()) == {}  # OTHER's REAL rx is not GRIDOTH's INTEGER nx
    assert callee_commons(k, None) == {}


def test_a_callee_block_without_a_layout_costs_only_itself(prog):
    k, _sf = load_for_port(prog, SRC, "gridtag")
    assert callee_commons(k, prog.resolver()) == {"nx": False}  # TAGGED's CHARACTER /tags/ aside


@pytest.mark.integration
def test_a_routine_whose_callee_divides_by_a_member_is_proven(tmp_path, prog):
    if toolchain.missing():
        pytest.skip(toolchain.missing())
    from port_fortran.harness.hybrid import make_harness
    from port_fortran.translate import write_port
    from port_fortran.translate.hybrid import translate_mode

    k, sf = load_for_port(prog, SRC, "gridsum")
    port = translate_mode(k, sf, None, "auto", program=prog)
    write_port(port, tmp_path / "gridsum")
    h = make_harness(k, sf, tmp_path / "gridsum", program=prog)
    assert {"nx", "ny", "ncall"} <= set(h.spec.args)
    for b in ("serial", "openmp"):
        v = h.verify(b, seeds=1)
        assert v.passed, f"[{b}]: {v.reason}"
        assert all("ncall" in {o.name for o in c.outputs} for c in v.cases)  # the counter the callee writes: compared
