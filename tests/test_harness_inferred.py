"""A CSR sparse matrix-vector product (index arrays) and a BLAS-style gemv ('N'/'T' flag,
leading dimension, assumed-size arrays) verify against the original with INFERRED specs
(the IR comes from the real front end)."""
from __future__ import annotations

from pathlib import Path

import pytest

from port_fortran.build_runner.kokkos import find_install
from port_fortran.fortran import parse_file
from port_fortran.harness import Harness
from test_harness_kit import CSR_F, CSR_PORT, GEMV_PORT, write_port, write_source

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(find_install("serial") is None, reason="no Kokkos install (set Kokkos_ROOT)")]

ROOT = Path(__file__).resolve().parent.parent


def test_csr_spmv_verifies_with_inferred_spec(tmp_path):
    src = write_source(tmp_path, "csr.f", CSR_F)
    sf = parse_file(str(src))
    k = sf.kernels[0]
    h = Harness(k, sf, write_port(tmp_path / "port", "csrmv", CSR_PORT))
    assert not h.spec.edited
    assert h.spec.args["rowptr"].role == "pointer" and h.spec.args["colind"].role == "index"
    v = h.verify("serial")
    assert v.passed, v.reason
    y = [o for c in v.cases for o in c.outputs if o.name == "y"]
    assert [o.elements for o in y] == [1, 7, 33]


def test_gemv_with_flags_and_leading_dimension_verifies_with_inferred_spec(tmp_path):
    sf = parse_file(str(ROOT / "fortran_kernels" / "blas2.f"))
    k = next(k for k in sf.kernels if k.name == "dgemv")
    h = Harness(k, sf, write_port(tmp_path / "port", "dgemv", GEMV_PORT))
    assert h.spec.args["trans"].values == ["N", "T"]
    assert h.spec.args["lda"].role == "leading-dim"
    v = h.verify("serial")
    assert v.passed, v.reason
    flags = {c.sizes.get("m"): None for c in v.cases}
    assert len(v.cases) == 6 and set(flags) == {1, 7, 33}
    # the leading dimension is padded: a(lda, n) with lda > m
    # and y is compared in both flag settings (length m for 'N', n for 'T')
    assert all(any(o.name == "y" and o.elements >= 1 for o in c.outputs) for c in v.cases)
