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
