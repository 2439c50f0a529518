"""Host loops whose iterations run as SIMD lanes (translate/outer_simd.py, issue 15): a 1-D
kernel carrying a floating-point sum through an inner loop, every lane on its own adjacent
element, runs through ``pf::parallel_for_simd`` (``#pragma omp simd`` over the kernel's
range on the host), as gfortran vectorises such an outer loop itself; kernels whose lanes
would gather (a row of a column-major matrix, compressed rows of different lengths) keep
the plain parallel_for. The kernel function takes unmanaged views (``pf::KView``), so the
lambda is trivially copyable. Integration: proven on Serial and OpenMP."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from port_fortran.fortran import parse_file
from port_fortran.translate import translate_kernel, write_port

sys.path.insert(0, str(Path(__file__).parent))
import toolchain  # noqa: E402

SRC = Path(__file__).parent / "data" / "translate" / "lanes.f90"


def _port(name: str):
    sf = parse_file(str(SRC), use_cache=False)
    k = next(k for k in sf.kernels if k.name == name)
    return k, translate_kernel(k, sf)


@pytest.mark.parametrize("name,line", [("potsum", 12), ("horner", 30)])
def test_a_sum_carried_through_the_inner_loop_runs_as_lanes(name, line):
    _k, port = _port(name)
    cpp = port.files[f"{name}.kokkos.cpp"]
    assert f'pf::parallel_for_simd("{name}:L{line}"' in cpp
    assert f"line {line}: do i -> on the host backends its iterations run as SIMD lanes" in " ".join(port.notes)
    assert "pf::KView<const double*>" in cpp and "pf::View<const double*> x" not in cpp


@pytest.mark.parametrize("name", ["colsum", "rowdot"])
def test_lanes_that_would_gather_keep_the_plain_loop(name):
    _k, port = _port(name)
    cpp = port.files[f"{name}.kokkos.cpp"]
    assert "parallel_for_simd" not in cpp and "pf::parallel_for(" in cpp
    assert not any("SIMD lanes" in n for n in port.notes)


@pytest.mark.integration
@pytest.mark.parametrize("name", ["potsum", "horner"])
def test_lane_ports_are_proven(tmp_path, name):
    why = toolchain.missing()
    if why:
        pytest.skip(why)
    from port_fortran.harness import Harness

    k, port = _port(name)
    write_port(port, tmp_path / name)
    h = Harness(k, SRC, tmp_path / name, threads=2)
    for backend in ("serial", "openmp"):
        v = h.verify(backend, seeds=2)
        assert v.passed, f"{backend}: {v.reason}"
