"""Register blocking of compute-bound 2-D bands (translate/regblock.py, issue 15): which bands
are blocked, what the port prints, and (integration) that blocked ports are proven on Serial
and OpenMP while a blocked port that drops part of an edge block is caught."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from port_fortran.agents import optimizer
from port_fortran.fortran import parse_file
from port_fortran.records import TranslateOptions
from port_fortran.translate import translate_kernel, write_port

sys.path.insert(0, str(Path(__file__).parent))
import toolchain  # noqa: E402

DATA = Path(__file__).parent / "data" / "translate"
SAMPLES = Path(__file__).parent.parent / "fortran_kernels"
BLOCK = TranslateOptions(register_block=(4, 4), variant="regblock-4x4")


def _kernel(path: Path, name: str):
    sf = parse_file(str(path), use_cache=False)
    return next(k for k in sf.kernels if k.name == name), sf


def test_a_matrix_product_band_is_blocked_and_its_inner_loop_jammed():
    k, sf = _kernel(SAMPLES / "blas3.f", "dgemm")
    port = translate_kernel(k, sf, BLOCK)
    assert port.patterns == ["mdrange"]
    assert sum("register blocked 4x4" in n for n in port.notes) == 4  # the four transpose cases
    cpp = port.files["dgemm.kokkos.cpp"]
    first = cpp[cpp.index('"dgemm:L25"'):cpp.index('"dgemm:L36"')]
    assert "pf::nest<2>({0, 0}, {(m - 1 + 4) / 4 - 1, (n - 1 + 4) / 4 - 1})" in first
    jam = first[first.index("for (l = 1; l <= k; ++l) {"):first.index("} else {")]
    # one pass of l feeds 16 sums, each in the original order (its own temporary)
    assert jam.count(" = pf_temp_") == 16 and jam.count("a(pf_s") == 16
    assert "if (pf_s" in first and "+ 3 <= m && pf_s" in first  # full blocks only
    assert "pf::min<int>(pf_s" in first  # an edge block runs the original loops
    # the default translation is untouched; the optimizer tries the blocking first (it keeps
    # the first variant that wins: Kokkos' own policies had won dgemm by noise)
    assert "pf_b1" not in translate_kernel(k, sf).files["dgemm.kokkos.cpp"]
    assert [n for n, _ in optimizer.variants(k, None, 2, ["serial", "openmp"])] == ["regblock-4x4", "kokkos-policies"]


def test_an_all_pairs_loop_is_blocked_along_its_one_parallel_loop():
    """nbody's ``do i; sx = 0; do j; ... sx = sx + dx * rinv3``: four i per iteration, each
    x(j), y(j), z(j), m(j) loaded once for the four."""
    k, sf = _kernel(SAMPLES / "nbody.f90", "nbody_forces")
    assert "regblock-4x4" in dict(optimizer.variants(k, None, 20))
    port = translate_kernel(k, sf, BLOCK)
    assert any("do i -> register blocked 4 (" in n for n in port.notes), port.notes
    cpp = port.files["nbody_forces.kokkos.cpp"]
    jam = cpp[cpp.index("for (j = 1; j <= n; ++j) {"):cpp.index("} else {")]
    assert jam.count("m(j - 1)") == 4 and jam.count("pf::sqrt(") == 4


def test_bands_of_other_shapes_are_left_alone():
    k, sf = _kernel(DATA / "regblock.f90", "trimm")  # the inner loop's bound reads i
    assert "regblock-4x4" not in dict(optimizer.variants(k, None, 20))
    assert translate_kernel(k, sf, BLOCK).files == translate_kernel(k, sf).files
    # j is read after its loop, so that loop is serial: only the loop over i is blocked
    k, sf = _kernel(DATA / "regblock.f90", "mmlast")
    notes = translate_kernel(k, sf, BLOCK).notes
    assert any("do i -> register blocked 4 (" in n for n in notes) and not any("do j / do i" in n for n in notes)
    k, sf = _kernel(SAMPLES / "stencil2d.f90", "jacobi2d")  # no inner loop: nothing to reuse
    assert translate_kernel(k, sf, BLOCK).files == translate_kernel(k, sf).files
    assert "regblock-4x4" not in dict(optimizer.variants(k, None, 20))
    k, sf = _kernel(DATA / "regblock.f90", "mmacc")  # accumulating into c(i, j) itself
    assert "regblock-4x4" in dict(optimizer.variants(k, None, 20))
    assert "register blocked 4x4" in " ".join(translate_kernel(k, sf, BLOCK).notes)


def _blocked_harness(path: Path, name: str, d: Path):
    """The blocked port of ``name`` written to ``d`` and its harness (skips without the tools)."""
    why = toolchain.missing()
    if why:
        pytest.skip(why)
    from port_fortran.harness import Harness

    k, sf = _kernel(path, name)
    write_port(translate_kernel(k, sf, BLOCK), d)
    return Harness(k, path, d, threads=2)


@pytest.mark.integration
@pytest.mark.parametrize("path,name", [(SAMPLES / "blas3.f", "dgemm"), (DATA / "regblock.f90", "mmacc"),
                                       (SAMPLES / "nbody.f90", "nbody_forces")])
def test_blocked_ports_are_proven_on_serial_and_openmp(tmp_path, path, name):
    h = _blocked_harness(path, name, tmp_path / name)
    for backend in ("serial", "openmp"):
        v = h.verify(backend, seeds=2)
        assert v.passed, f"{backend}: {v.reason}"


@pytest.mark.integration
def test_a_blocked_port_dropping_an_edge_row_is_caught(tmp_path):
    d = tmp_path / "mmacc"
    h = _blocked_harness(DATA / "regblock.f90", "mmacc", d)
    cpp = d / "mmacc.kokkos.cpp"
    text = cpp.read_text()
    i = text.index("pf::min<int>(pf_s")
    j = text.index("+ 3, m)", i)
    cpp.write_text(text[:j] + "+ 2, m)" + text[j + len("+ 3, m)"):])  # the edge block's last row left out
    v = h.verify("serial", seeds=2)
    assert not v.passed and "c" in v.reason
