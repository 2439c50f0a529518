"""What the front end reads now, proven end to end: a stencil whose kinds come from
iso_fortran_env and a module (REAL64: the harness feeds it double data; before, the
front end read it as real(4) and the original computed garbage on float inputs), with
17-digit weights the anti-fraud check must accept as the original's own. One Kokkos build."""
from __future__ import annotations

from pathlib import Path

import pytest

from port_fortran.agents.validator import check_patterns, source_constants
from port_fortran.build_runner.kokkos import find_install
from port_fortran.fortran import ir, parse_file
from port_fortran.harness import Harness
from port_fortran.translate import translate_kernel, write_port

DATA = Path(__file__).parent / "data" / "frontend"

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(find_install("serial") is None, reason="no Kokkos install (set Kokkos_ROOT)")]


def test_real64_stencil_with_long_weights_verifies(tmp_path):
    sf = parse_file(DATA / "star64.f90", use_cache=False)
    assert not sf.errors, sf.errors
    k = next(k for k in sf.kernels if k.name == "star3w")
    assert [(a.name, a.ftype) for a in k.args] == [("n", ir.INTEGER), ("inp", ir.REAL8), ("out", ir.REAL8)]
    assert k.loops()[0].info.parallel and not k.unsupported
    port = translate_kernel(k, sf)
    code = port.files["star3w.kokkos.cpp"]
    assert "hard-coded-output" not in [d.code for d in check_patterns(code, "star3w",
                                                                       constants=source_constants(k))]
    write_port(port, tmp_path / "star3w")
    h = Harness(k, sf, tmp_path / "star3w", threads=2)
    b = h.build("serial")
    assert b.ok, b.log[-3000:]
    v = h.verify("serial")
    assert v.passed, v.reason or [c.error for c in v.cases]
    out = [o for c in v.cases for o in c.outputs if o.name == "out"]
    # double precision end to end (real(4) data would give ~1e-7 on outputs of size ~1),
    # checked on absolute error: pointwise relative error is unbounded where an output of
    # the random draws passes near zero (2.3e-8 seen at one such element)
    assert out and max(o.max_abs_err for o in out) < 1e-9


def test_default_real_8_routine_is_fed_and_proven_in_double(tmp_path):
    """A legacy file built with -fdefault-real-8 (REAL is 8 bytes): the port computes in
    double and the harness feeds and compares doubles, the original compiled with the flag."""
    src = tmp_path / "scal8.f"
    src.write_text("      SUBROUTINE SCAL8 (N, A, X, Y)\n      REAL X(N), Y(N)\n      DO 10 I = 1, N\n"
                   "         Y(I) = A*X(I) + 1.0/3.0\n   10 CONTINUE\n      RETURN\n      END\n")
    flags = ["-fdefault-real-8"]
    sf = parse_file(src, use_cache=False, fflags=flags)
    k = sf.kernels[0]
    assert [a.ftype for a in k.args] == [ir.INTEGER, ir.REAL8, ir.REAL8, ir.REAL8]
    write_port(translate_kernel(k, sf), tmp_path / "scal8")
    h = Harness(k, sf, tmp_path / "scal8", threads=2, fflags=flags)
    assert "-fdefault-real-8" in h._fflags(timing=False, openmp=False)
    v = h.verify("serial")
    assert v.passed, v.reason or [c.error for c in v.cases]
    ys = [o for c in v.cases for o in c.outputs if o.name == "y"]
    # |y| <= 1.4 on these inputs: real(4) anywhere would show absolute errors near 1e-8
    # (a pointwise relative error is unbounded where y passes near 0)
    assert ys and max(o.max_abs_err for o in ys) < 1e-12
