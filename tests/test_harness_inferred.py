"""A CSR sparse matrix-vector product (index arrays) and BLAS-style routines ('N'/'T' flags,
leading dimensions, assumed-size arrays) verify against the original with INFERRED specs.
The IR comes from the real front end; the CSR and GEMM ports from the rules translator,
the GEMV port is written by hand (the translator refuses its assumed-size y)."""
from __future__ import annotations

import json
from pathlib import Path

import yaml

import pytest

from port_fortran.build_runner.kokkos import find_install
from port_fortran.fortran import parse_file
from port_fortran.cli import main
from port_fortran.harness import Harness
from port_fortran.records import TranslationRefused
from port_fortran.translate import translate_kernel, write_port
from test_harness_kit import GEMV_PORT
from test_harness_kit import write_port as write_port_by_hand

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(find_install("serial") is None, reason="no Kokkos install (set Kokkos_ROOT)")]

ROOT = Path(__file__).resolve().parent.parent


def translated(tmp, file, name):
    sf = parse_file(str(ROOT / "fortran_kernels" / file))
    k = next(k for k in sf.kernels if k.name == name)
    try:
        port = translate_kernel(k, sf)
    except TranslationRefused as exc:
        pytest.skip(f"the translator refuses {name}: {exc}")
    write_port(port, tmp / name)
    return Harness(k, sf, tmp / name, threads=2)


@pytest.fixture(scope="module")
def csr(tmp_path_factory):
    return translated(tmp_path_factory.mktemp("csr"), "sparse.f90", "csr_spmv")


def test_csr_spmv_verifies_with_inferred_spec(csr):
    h = csr
    assert not h.spec.edited
    assert h.spec.args["rowptr"].role == "pointer" and h.spec.args["rowptr"].nnz == "nnz"
    assert h.spec.args["colidx"].role == "index" and h.spec.args["colidx"].range == ["1", "ncols"]
    for backend in ("serial", "openmp"):
        v = h.verify(backend)
        assert v.passed, v.reason
        y = [o for c in v.cases for o in c.outputs if o.name == "y"]
        # the spec's three sizes, then the boundary-crossing case (rows past a GPU block)
        assert [o.elements for o in y] == [1, 7, 33, 1027]
        assert v.cases[-1].kind == "cross-tiles" and v.cross_tiles
    saved = json.loads((h.port_dir / "verdict.json").read_text())
    assert saved["openmp"]["passed"] and saved["openmp"]["base_seeds"][0] == v.cases[0].seed


def test_verify_and_bench_commands_on_a_port_directory(csr, capsys):
    port_dir = str(csr.port_dir)
    assert json.loads((csr.port_dir / "port.json").read_text())["kernel"] == "csr_spmv"
    assert main(["verify", port_dir, "--backends", "serial", "--seeds", "2"]) == 0
    out = capsys.readouterr().out
    assert "csr_spmv [serial] verified: 7 input sets" in out  # 3 sizes x 2 seeds + the crossing case
    assert "boundary-crossing case: nrows=1027" in out
    # a smaller timing size (a user edit) keeps the test short
    data = yaml.safe_load(csr.spec_path.read_text())
    data["sizes"]["timing"] = {"nrows": 20000, "ncols": 20000, "nnz": 100000}
    csr.spec_path.write_text(yaml.safe_dump(data))
    assert main(["bench", port_dir, "--backends", "serial,openmp", "--threads", "2", "--repeats", "3"]) == 0
    out = capsys.readouterr().out
    assert "| fortran-serial | 1 |" in out and "| kokkos-openmp | 2 |" in out
    t = json.loads((csr.port_dir / "timings.json").read_text())["timings"]
    # kernel-only (views-level function) and with copies (the extern "C" entry)
    assert {(x["variant"], x["kernel_only"]) for x in t} == {
        ("fortran-serial", True), ("kokkos-serial", True), ("kokkos-serial", False),
        ("kokkos-openmp", True), ("kokkos-openmp", False)}
    assert all(x["median_s"] > 0 and x["repeats"] == 3 and x["gbytes_per_s"] > 0 for x in t)
    # every Kokkos number comes from a build proven at the sizes timed, on that backend
    assert all(x["proven_sizes"] == x["sizes"] == {"nrows": 20000, "ncols": 20000, "nnz": 100000}
               for x in t if x["variant"].startswith("kokkos-"))
    assert "verified at the timing sizes on openmp" in out and "| reference |" in out
    assert main(["verify", str(csr.port_dir.parent), "--backends", "serial"]) == 2  # not a port dir


def test_gemm_with_two_flags_and_leading_dimensions_verifies(tmp_path):
    h = translated(tmp_path, "blas3.f", "dgemm")
    assert h.spec.args["transa"].values == ["N", "T"] and h.spec.args["transb"].values == ["N", "T"]
    assert {n for n, a in h.spec.args.items() if a.role == "leading-dim"} == {"lda", "ldb", "ldc"}
    v = h.verify("serial")
    assert v.passed, v.reason
    assert len(v.cases) == 16  # (3 size sets + the crossing case) x 4 flag combinations


def test_gemv_with_flags_and_leading_dimension_verifies_with_inferred_spec(tmp_path):
    sf = parse_file(str(ROOT / "fortran_kernels" / "blas2.f"))
    k = next(k for k in sf.kernels if k.name == "dgemv")
    h = Harness(k, sf, write_port_by_hand(tmp_path / "port", "dgemv", GEMV_PORT))
    assert h.spec.args["trans"].values == ["N", "T"]
    assert h.spec.args["lda"].role == "leading-dim"
    v = h.verify("serial")
    assert v.passed, v.reason
    assert len(v.cases) == 8 and {c.sizes["m"] for c in v.cases if not c.kind} == {1, 7, 33}
    assert {c.kind for c in v.cases} == {"", "cross-tiles"}
