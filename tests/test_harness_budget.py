"""The time a kernel's proof may take (``harness.budget``, ``limits.proof_s``).

CCS-QCD's BiCGStab solver runs 20 s a call on the benchmark's compile-time lattice and its
proof makes tens of calls: without a budget the kernel held its batch job until the job's
own limit killed it (a corpus ``error``, nothing said about the kernel). Here an original
that takes a noticeable time a call stands in for it; the "port" is the reference driver
itself (or a failing script), so no Kokkos build is needed.
"""
from __future__ import annotations

import os
import shutil
import stat
import time

import pytest

from port_fortran.harness.budget import PROOF_BUDGET, ProofBudget
from port_fortran.records import BuildResult

GFORTRAN = shutil.which("gfortran")
needs_gfortran = pytest.mark.skipif(GFORTRAN is None, reason="gfortran not installed")

SLOW = """\
subroutine slow(x)
  implicit none
  real(8), intent(inout) :: x(4)
  integer :: i, j
  do i = 1, 4
    do j = 1, 25000000
      x(i) = x(i) * 0.9999999d0 + 1.0d-9
    end do
  end do
end subroutine slow
"""


def test_the_budget_refuses_a_case_only_when_the_longest_so_far_would_not_fit():
    b = ProofBudget(10.0)
    assert b.refusal("the 3 on serial", 3) is None  # nothing measured yet: the first case runs
    b.spent_s, b.longest_s, b.cases = 4.0, 4.0, 1
    assert b.refusal("the 3 on serial", 2) is None  # 4 + 4 <= 10
    b.spent_s, b.cases = 8.0, 2
    why = b.refusal("the 3 on serial", 1)
    assert why and "10 s" in why and "limits.proof_s" in why and "2 case(s) took 8 s" in why
    assert "1 more of the 3 on serial" in why
    assert ProofBudget(0.0).refusal("x", 1) is None and ProofBudget(0.0).remaining() is None
    b.start()
    time.sleep(0.05)
    assert b.remaining() < 2.0  # the case under way counts
    assert b.charge("seed=1: the port failed") >= 0.05 and b.port_failure == "seed=1: the port failed"
    b.charge("seed=2: another")
    assert b.port_failure == "seed=1: the port failed"  # the first failure is kept


def _harness(tmp_path, limit_s: float, port_fails: bool = False):
    from port_fortran.fortran import parse_file
    from port_fortran.harness.core import Harness

    src = tmp_path / "slow.f90"
    src.write_text(SLOW)
    sf = parse_file(src)
    k = next(x for x in sf.kernels if x.name == "slow")
    h = Harness(k, sf, tmp_path / "port", budget=ProofBudget(limit_s))
    ref = h.build_reference()
    port = str(ref)
    if port_fails:
        script = tmp_path / "broken_port.sh"
        script.write_text("#!/bin/sh\necho 'pf_harness: the port broke' >&2\nexit 3\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
        port = str(script)
    h._builds["serial"] = BuildResult("serial", True, artifacts={"ref_driver": str(ref), "pf_driver": port})
    return h


@needs_gfortran
@pytest.mark.integration
def test_a_proof_past_its_budget_is_refused_with_the_times(tmp_path):
    h = _harness(tmp_path, limit_s=1e9)
    unlimited = h.verify("serial", seeds=[3])
    assert unlimited.passed, unlimited.reason
    planned, per_case = len(unlimited.cases), h.budget.longest_s
    assert planned >= 2 and per_case > 0
    h.budget = ProofBudget(per_case * 1.5)  # room for one case, not two
    v = h.verify("serial", seeds=[3])
    assert not v.passed and v.code == PROOF_BUDGET, v.reason
    assert "limits.proof_s" in v.reason and "1 case(s) took" in v.reason
    assert len(v.cases) == 1 < planned  # the rest were not started


@needs_gfortran
@pytest.mark.integration
def test_a_run_is_stopped_when_the_budget_ends_inside_a_case(tmp_path):
    """The first case of a slow original already passes the budget: its run is stopped at
    the budget, not at the run's own (longer) limit, and the verdict says so."""
    h = _harness(tmp_path, limit_s=0.02)
    t0 = time.monotonic()
    v = h.verify("serial", seeds=[3])
    assert not v.passed and v.code == PROOF_BUDGET, v.reason
    assert "a case was stopped when the time ran out" in v.reason and not v.cases
    assert time.monotonic() - t0 < 30


@needs_gfortran
@pytest.mark.integration
def test_the_ports_own_failure_is_not_hidden_by_the_budget(tmp_path):
    """A port that failed a case stays a failure (the debugger's to see), also in a later
    round that the spent budget stops before any case."""
    h = _harness(tmp_path, limit_s=1e9, port_fails=True)
    first = h.verify("serial", seeds=[3])
    assert not first.passed and not first.code and "the port broke" in first.reason
    h.budget.limit_s = h.budget.spent_s  # spent: the next round starts no case
    again = h.verify("serial", seeds=[4])
    assert not again.passed and again.code == "", again.reason
    assert "the port failed in an earlier round" in again.reason and "the port broke" in again.reason


def test_one_budget_per_port_directory_across_harnesses(tmp_path):
    """The pipeline's stages give every harness of a port directory (a new one per
    debugger round that changes the port's mode) the same budget, from limits.proof_s."""
    from port_fortran.config import Config
    from port_fortran.fortran import parse_file
    from port_fortran.pipeline.stages import RealStages

    src = tmp_path / "slow.f90"
    src.write_text(SLOW)
    sf = parse_file(src)
    k = next(x for x in sf.kernels if x.name == "slow")
    cfg = Config()
    cfg.limits.proof_s = 42.0
    st = RealStages(cfg)
    h1 = st.harness(k, sf, tmp_path / "port")
    st._harness.clear()
    h2 = st.harness(k, sf, tmp_path / "port")
    assert h1 is not h2 and h1.budget is h2.budget and h1.budget.limit_s == 42.0
    assert st.harness(k, sf, tmp_path / "other").budget is not h1.budget
    assert Config().limits.proof_s == 1800.0
    assert Config.from_dict({"limits": {"proof_s": 150}}).limits.proof_s == 150
    from port_fortran.errors import UserError
    with pytest.raises(UserError, match="limits.proof_s"):
        Config.from_dict({"limits": {"proof_s": "soon"}})
    assert os.path.isdir(tmp_path / "port")
