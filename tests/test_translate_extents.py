"""The extents an entry wraps the caller's arrays with are evaluated before the routine's
own guards: a stride of 0 the routine rejects (``IF (INCX .LE. 0) RETURN``) must not divide
by zero there (the sample DSCAL and DNRM2 died of SIGFPE on incx = 0)."""
from __future__ import annotations

from pathlib import Path

from port_fortran.fortran import parse_file
from port_fortran.translate import translate_kernel

ROOT = Path(__file__).resolve().parents[1]


def test_extent_divisions_by_a_name_cannot_divide_by_zero():
    sf = parse_file(str(ROOT / "fortran_kernels" / "blas1.f"))
    k = next(k for k in sf.kernels if k.name == "dscal")
    code = translate_kernel(k, sf).files["dscal.kokkos.cpp"]
    entry = code[code.index('extern "C"'):]
    wrap = next(line for line in entry.splitlines() if "h_dx(dx" in line)
    assert "pf::extent_div(" in wrap and "/ incx" not in wrap
    body = code[:code.index('extern "C"')]
    assert "extent_div" not in body  # the routine's own arithmetic is printed as written


def test_a_scalar_a_function_modifies_is_copied_out_of_a_single_iteration_kernel(tmp_path):
    """``h = pleg(z, n) / ...`` where PLEG resets a tiny Z (Nekbone's HGL/PNLEG): Z is
    written by the statement through the function's dummy, so the single-iteration kernel
    holds it as a device scalar copied in and out, never a by-value capture bound to a
    ``float&`` (a C++ compile error before)."""
    from port_fortran.translate.access import scalars_written
    from port_fortran.fortran import ir

    src = tmp_path / "h.f"
    src.write_text("      REAL FUNCTION H (Z, N, ZG)\n      REAL ZG(N)\n      H = PLEG(Z, N) * ZG(1)\n      RETURN\n"
                   "      END\n"
                   "      REAL FUNCTION PLEG (Z, N)\n      IF (ABS(Z) .LT. 1.0E-25) Z = 0.0\n"
                   "      PLEG = Z * N\n      RETURN\n      END\n")
    sf = parse_file(str(src))
    ks = {k.name: k for k in sf.kernels}
    assert ks["pleg"].arg("z").intent == "inout"
    body = [s for s in ks["h"].body if isinstance(s, ir.Assign)]
    assert "z" in scalars_written(body, {"pleg": {0}}) and "z" not in scalars_written(body, {})
    code = translate_kernel(ks["h"], sf).files["h.kokkos.cpp"]
    assert 'pf::DevScalar<float> pf_dev_z("z", z);' in code and "pf_dev_z() = z;" in code
