"""A CSR sparse matrix-vector product (index arrays) and a BLAS-style gemv ('N'/'T' flag,
leading dimension, assumed-size arrays) verify against the original with INFERRED specs
(the IR comes from the real front end)."""
from __future__ import annotations

import json
from pathlib import Path

import yaml

import pytest

from port_fortran.build_runner.kokkos import find_install
from port_fortran.fortran import parse_file
from port_fortran.cli import main
from port_fortran.harness import Harness
from test_harness_kit import CSR_F, CSR_PORT, GEMV_PORT, write_port, write_source

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(find_install("serial") is None, reason="no Kokkos install (set Kokkos_ROOT)")]

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def csr(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("csr")
    src = write_source(tmp, "csr.f", CSR_F)
    sf = parse_file(str(src))
    return Harness(sf.kernels[0], sf, write_port(tmp / "port", "csrmv", CSR_PORT))


def test_csr_spmv_verifies_with_inferred_spec(csr):
    h = csr
    assert not h.spec.edited
    assert h.spec.args["rowptr"].role == "pointer" and h.spec.args["colind"].role == "index"
    v = h.verify("serial")
    assert v.passed, v.reason
    y = [o for c in v.cases for o in c.outputs if o.name == "y"]
    assert [o.elements for o in y] == [1, 7, 33]
    saved = json.loads((h.port_dir / "verdict.json").read_text())
    assert saved["serial"]["passed"] and saved["serial"]["base_seeds"][0] == v.cases[0].seed


def test_verify_and_bench_commands_on_a_port_directory(csr, capsys):
    port_dir = str(csr.port_dir)
    assert json.loads((csr.port_dir / "port.json").read_text())["kernel"] == "csrmv"
    assert main(["verify", port_dir, "--backends", "serial", "--seeds", "2"]) == 0
    out = capsys.readouterr().out
    assert "csrmv [serial] verified: 6 input sets" in out
    # a smaller timing size (a user edit) keeps the test short
    data = yaml.safe_load(csr.spec_path.read_text())
    data["sizes"]["timing"] = {"n": 20000}
    csr.spec_path.write_text(yaml.safe_dump(data))
    assert main(["bench", port_dir, "--backends", "serial", "--repeats", "3"]) == 0
    out = capsys.readouterr().out
    assert "| fortran-serial | 1 |" in out and "| kokkos-serial | 1 |" in out
    t = json.loads((csr.port_dir / "timings.json").read_text())["timings"]
    assert {x["variant"] for x in t} == {"fortran-serial", "kokkos-serial"}
    assert all(x["median_s"] > 0 and x["repeats"] == 3 and x["gbytes_per_s"] > 0 for x in t)
    assert main(["verify", str(csr.port_dir.parent), "--backends", "serial"]) == 2  # not a port dir


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
