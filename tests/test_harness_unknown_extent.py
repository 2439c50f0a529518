"""An ``auto`` extent no analysis can bound is refused, never guessed (corpus: fftpack's
DSINTI hands ``WSAVE(NS2+1)`` to DFFTI, whose span the front end cannot bound; the harness
allocated what DSINTI's own subscripts show, the original wrote past it and the port
crashed), and a signal the original raises is its own failure, not a sandbox limit."""
from __future__ import annotations

import pytest

from port_fortran.build_runner.sandbox import RunResult
from port_fortran.fortran import parse_file
from port_fortran.harness.infer import infer
from port_fortran.harness.cases import _hit_limit
from port_fortran.harness.extents import Ranges
from port_fortran.harness.inputs import Case, UnknownExtent, make_inputs

SRC = """\
      SUBROUTINE TABLE (N, W)
      DIMENSION W(*)
      NS2 = N/2
      DO 10 K = 1, NS2
         W(K) = REAL(K)
   10 CONTINUE
      CALL FACTOR (N, W(NS2+1))
      RETURN
      END

      SUBROUTINE FACTOR (N, W)
      DIMENSION W(*)
      M = INT(W(1))
      DO 20 I = 1, M
         W(I+1) = REAL(N)
   20 CONTINUE
      RETURN
      END

      SUBROUTINE LOCAL (N, W)
      DIMENSION W(*)
      DO 30 K = 1, N
         W(K) = REAL(K)
   30 CONTINUE
      RETURN
      END
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    p = tmp_path_factory.mktemp("ue") / "table.f"
    p.write_text(SRC)
    return {k.name: k for k in parse_file(str(p)).kernels}


def test_array_passed_to_a_routine_has_no_bound_of_its_own(kernels):
    k = kernels["table"]
    r = Ranges(k, {"n": 10}, {})
    assert r.max_subscripts("w", 1) == [None]
    assert r.passed_to["w"] == ("factor", 7)
    local = Ranges(kernels["local"], {"n": 10}, {})
    assert local.max_subscripts("w", 1) == [10] and not local.passed_to


def test_unbounded_callee_span_is_refused_with_the_call_and_the_config_key(kernels):
    k = kernels["table"]
    assert k.arg("w").access_bounds == [None]  # FACTOR's loop bound is data: no span
    spec = infer(k)
    with pytest.raises(UnknownExtent) as ei:
        make_inputs(k, spec, Case(seed=1, sizes={"n": 10}, choices={}))
    msg = str(ei.value)
    assert "'w'" in msg and "factor (line 7)" in msg and "routines.table.args.w.extent" in msg
    assert ei.value.code == "unknown-extent"


def test_a_bounded_routine_still_gets_its_inputs(kernels):
    k = kernels["local"]
    recs, lay = make_inputs(k, infer(k), Case(seed=1, sizes={"n": 10}, choices={}))
    assert lay.arrays["w"].ubound == (10,)


def test_a_signal_is_the_programs_failure_a_limit_is_the_sandboxs():
    assert not _hit_limit(RunResult(returncode=-8, killed_reason="signal 8"))
    assert not _hit_limit(RunResult(returncode=-11, killed_reason="signal 11"))
    assert _hit_limit(RunResult(returncode=None, timed_out=True, killed_reason="wall-time"))
    assert _hit_limit(RunResult(returncode=-9, killed_reason="cpu-time"))
    assert _hit_limit(RunResult(returncode=-11, killed_reason="memory", memory_exceeded=True))
    assert not _hit_limit(RunResult(returncode=1, killed_reason=""))
