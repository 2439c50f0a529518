"""Array sections passed to callees (fortran/sections.py, effects.Calls.actual_ref,
translate/cexpr.contiguous_first): what a call touches of a section actual is mapped
dimension by dimension when the section's shape is the dummy's, so a loop over j and k
calling a helper with ``q(:, :, :, g)`` that writes ``qg(i, j, k)`` is parallel; a
contiguous section is passed in place (its first element's address, as gfortran passes
it). Proven on serial and openmp; a helper touching a row every iteration shares, and a
reshaped dummy maps to the whole array."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from port_fortran.fortran import ir, parse_file
from port_fortran.translate import translate_kernel, write_port
from port_fortran.translate.cexpr import contiguous_first
from port_fortran.fortran.render import expr_str

sys.path.insert(0, str(Path(__file__).parent))
import toolchain  # noqa: E402

DATA = Path(__file__).parent / "data" / "sections"


def _kernels():
    sf = parse_file(str(DATA / "cells.f90"), use_cache=False)
    assert not sf.errors, sf.errors
    return {k.name: k for k in sf.kernels}, sf


def test_each_iteration_touches_its_own_column_of_the_section():
    ks, sf = _kernels()
    port = translate_kernel(ks["sweep"], sf)
    assert port.patterns == ["mdrange"]  # both j and k
    assert "cell_fn(j, k, n, ny, nz, &src(0, j - 1, k - 1), &q(0, 0, 0, g - 1))" in port.files["sweep.kokkos.cpp"]


def test_a_row_every_iteration_writes_keeps_its_loop_serial():
    ks, sf = _kernels()
    loops = {d.var: d for d in ks["smear"].loops()}
    assert loops["k"].info.parallel and not loops["j"].info.parallel
    assert translate_kernel(ks["smear"], sf).patterns == ["parallel_for"]


def test_a_reshaped_dummy_maps_to_the_whole_array():
    ks, sf = _kernels()
    loops = {d.var: d for d in ks["flat"].loops()}
    assert not loops["k"].info.parallel and not loops["j"].info.parallel
    assert "q" in loops["k"].info.reasons[0].message


def test_only_contiguous_sections_pass_in_place():
    one = ir.Literal(1, "1", ftype=ir.INTEGER)
    n, j, k = (ir.Name(x, ftype=ir.INTEGER) for x in "njk")
    dims = [ir.Dim(one, n), ir.Dim(one, n), ir.Dim(one, n)]
    full = ir.Slice(None, None)
    cases = [([full, full, k], "u(1, 1, k)"), ([full, j, k], "u(1, j, k)"),
             ([ir.Slice(ir.Literal(2, "2", ftype=ir.INTEGER), n), j, k], "u(2, j, k)"),
             ([full, ir.Slice(ir.Literal(2, "2", ftype=ir.INTEGER), n), k], "u(1, 2, k)"),
             ([j, full, k], None), ([ir.Slice(one, n), full, k], None),
             ([ir.Slice(one, n, ir.Literal(2, "2", ftype=ir.INTEGER)), j, k], None)]
    for subs, want in cases:
        got = contiguous_first(ir.ArrayRef("u", subs, ftype=ir.REAL8), dims)
        assert (expr_str(got) if got is not None else None) == want, subs


def _toolchain() -> str:
    return toolchain.missing()


@pytest.mark.integration
@pytest.mark.parametrize("name", ["sweep", "smear"])
def test_section_ports_match_the_original(tmp_path, name):
    why = _toolchain()
    if why:
        pytest.skip(why)
    from port_fortran.harness import Harness

    ks, sf = _kernels()
    port = translate_kernel(ks[name], sf)
    write_port(port, tmp_path / name)
    h = Harness(ks[name], sf, tmp_path / name)
    for backend in ("serial", "openmp"):
        v = h.verify(backend, seeds=1)
        assert v.passed, f"{name} [{backend}] ({', '.join(port.patterns)}): {v.reason}"
