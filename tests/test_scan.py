"""Prefix sums as Kokkos::parallel_scan (translate/scan.py, issue 15): which loops are scans,
what the port prints, and (integration) that the ports are proven on Serial and OpenMP
while a scan made exclusive by mistake is caught."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from port_fortran.fortran import parse_file
from port_fortran.records import TranslateOptions
from port_fortran.translate import translate_kernel, write_port

DATA = Path(__file__).parent / "data" / "translate"
SAMPLES = Path(__file__).parent.parent / "fortran_kernels"


def _kernel(path: Path, name: str):
    sf = parse_file(str(path), use_cache=False)
    return next(k for k in sf.kernels if k.name == name), sf


def _port(path: Path, name: str, options=None):
    k, sf = _kernel(path, name)
    return translate_kernel(k, sf, options)


def test_running_sums_whose_partial_values_are_stored_are_scans():
    psum = _port(SAMPLES / "prefix.f", "psum")
    assert psum.patterns == ["scan"]
    cpp = psum.files["psum.kokkos.cpp"]
    assert 'pf::parallel_scan("psum:L13", pf::range(pf_lo, n), KOKKOS_LAMBDA(const int i, double& pf_acc, ' \
           'const bool pf_final) {' in cpp
    assert "if (i == pf_lo) pf_acc += pf_t0;" in cpp  # the value before the loop, added first
    assert "pf_acc += x(i - 1);" in cpp and "const double t = pf_acc;" in cpp
    assert "if (n >= pf_lo) t = pf_total;" in cpp  # an empty loop leaves t as it was
    # a temporary set before the update runs in both passes; the stores only in the final one
    cpp = _port(DATA / "scans.f", "scant").files["scant.kokkos.cpp"]
    body = cpp[cpp.index("pf::parallel_scan("):cpp.index("}, pf_total);")]
    assert body.index("w = 2.0 * x(i - 1);") < body.index("pf_acc += w;") < body.index("if (pf_final) {") \
        < body.index("s(i - 1) = t * 0.5;")
    assert "tot = t;" in cpp


def test_array_recurrences_of_distance_one_are_scans():
    cpp = _port(DATA / "scans.f", "scana").files["scana.kokkos.cpp"]
    assert "if (i == pf_lo) pf_acc += s(i - 1);" in cpp  # s(0), lower bound 0: offset 0
    assert "pf_acc += x(i - 1);" in cpp and "s(i) = pf_acc;" in cpp
    port = _port(DATA / "scans.f", "scanip")  # in place: k(i, j) read before it is written
    assert port.patterns == ["scan"]
    cpp = port.files["scanip.kokkos.cpp"]
    assert "int pf_total = 0;" in cpp and "pf_acc += k(i - 1, j - 1);" in cpp
    # stored one place on (SNAP's cell boundaries, ib(i+1) = ib(i) + dx): the value before the
    # loop is xb(lo), read where the data is; a distance-two recurrence stays serial
    port = _port(DATA / "scans.f", "scanb")
    assert port.patterns == ["scan", "serial"], port.notes
    cpp = port.files["scanb.kokkos.cpp"]
    assert "if (i == pf_lo) pf_acc += xb(i - 1);" in cpp and "xb(i) = pf_acc;" in cpp


@pytest.mark.parametrize("name", ["scanx", "scanp", "scan2", "scani"])
def test_what_is_not_an_inclusive_sum_stays_serial(name):
    port = _port(DATA / "scans.f", name)
    assert port.patterns == ["serial"], port.notes
    assert "parallel_scan" not in port.files[f"{name}.kokkos.cpp"]


def test_scans_can_be_turned_off():
    port = _port(SAMPLES / "prefix.f", "psum", TranslateOptions(scans=False))
    assert port.patterns == ["serial"]


def _toolchain() -> str:
    from port_fortran.build_runner.kokkos import find_install

    if shutil.which("gfortran") is None:
        return "gfortran not installed"
    if find_install("serial") is None or find_install("openmp") is None:
        return "no Kokkos install with serial and openmp"
    return ""


@pytest.mark.integration
@pytest.mark.parametrize("path,name", [(SAMPLES / "prefix.f", "psum"), (DATA / "scans.f", "scant"),
                                       (DATA / "scans.f", "scana"), (DATA / "scans.f", "scanip"),
                                       (DATA / "scans.f", "scanb")])
def test_scans_are_proven_on_serial_and_openmp(tmp_path, path, name):
    why = _toolchain()
    if why:
        pytest.skip(why)
    from port_fortran.harness import Harness

    k, sf = _kernel(path, name)
    write_port(translate_kernel(k, sf), tmp_path / name)
    h = Harness(k, path, tmp_path / name, threads=2)
    for backend in ("serial", "openmp"):
        v = h.verify(backend, seeds=2)
        assert v.passed, f"{backend}: {v.reason}"


@pytest.mark.integration
def test_a_scan_that_stores_the_sum_before_the_update_is_caught(tmp_path):
    why = _toolchain()
    if why:
        pytest.skip(why)
    from port_fortran.harness import Harness

    k, sf = _kernel(SAMPLES / "prefix.f", "psum")
    d = tmp_path / "psum"
    write_port(translate_kernel(k, sf), d)
    cpp = d / "psum.kokkos.cpp"
    text = cpp.read_text()
    # the stores moved before the term is added: an exclusive scan, one element off
    wrong = text.replace("      pf_acc += x(i - 1);\n      if (pf_final) {\n        const double t = pf_acc;\n"
                         "        s(i - 1) = t;\n      }\n",
                         "      if (pf_final) {\n        const double t = pf_acc;\n        s(i - 1) = t;\n      }\n"
                         "      pf_acc += x(i - 1);\n")
    assert wrong != text
    cpp.write_text(wrong)
    v = Harness(k, SAMPLES / "prefix.f", d, threads=2).verify("openmp", seeds=1)
    assert not v.passed and "outside tolerance" in v.reason, v.reason
