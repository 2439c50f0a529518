"""Scalar replacement (translate/promote.py, issue 15): an element an inner loop of a kernel
updates in place is kept in a register for the loop (loaded before, stored after, only when
the loop runs), where every reference to its array there is provably that element or
another one. Integration: proven on Serial and OpenMP."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from port_fortran.fortran import parse_file
from port_fortran.translate import translate_kernel, write_port

sys.path.insert(0, str(Path(__file__).parent))
import toolchain  # noqa: E402

SRC = Path(__file__).parent / "data" / "translate" / "promote.f90"


def _kernel(name: str):
    sf = parse_file(str(SRC), use_cache=False)
    return next(k for k in sf.kernels if k.name == name), sf


def test_an_element_summed_in_place_is_kept_in_a_register():
    k, sf = _kernel("rowacc")
    port = translate_kernel(k, sf)
    assert "line 10: do l -> y(i) kept in registers for the loop (loaded before, stored after)" in port.notes
    cpp = port.files["rowacc.kokkos.cpp"]
    body = cpp[cpp.index('"rowacc:L9"'):]
    assert "if (1 <= n) {" in body  # touched only when the loop runs, as the original does
    load, loop, store = body.index("pf_y_1 = y(i - 1);"), body.index("for (l = 1; l <= n; ++l)"), \
        body.index("y(i - 1) = pf_y_1;")
    assert load < loop < store and "pf_y_1 = pf_y_1 + a(i - 1, l - 1) * x(l - 1);" in body


@pytest.mark.parametrize("name", ["twoel", "backw"])
def test_elements_that_may_overlap_and_backward_loops_are_left_alone(name):
    k, sf = _kernel(name)
    port = translate_kernel(k, sf)
    assert not any("kept in registers" in n for n in port.notes), port.notes
    assert "pf_y_" not in port.files[f"{name}.kokkos.cpp"]


def test_an_element_a_serial_loop_only_reads_is_loaded_once_before_it():
    """kind(i), read by the IF at every l and written nowhere in the loop: one load, under
    the loop's trip test as the original reads it only when the loop runs; y(i), written
    only under the branches, stays in memory."""
    k, sf = _kernel("rdinv")
    port = translate_kernel(k, sf)
    assert "line 52: do l -> kind(i) read once before the loop (the loop never writes them)" in port.notes
    cpp = port.files["rdinv.kokkos.cpp"]
    body = cpp[cpp.index('"rdinv:L51"'):]
    body = body[:body.index("});")]
    guard, load, loop = body.index("if (1 <= n) {"), body.index("pf_kind_1 = kind(i - 1);"), \
        body.index("for (l = 1; l <= n; ++l)")
    assert guard < load < loop and "if (pf_kind_1 > 0) {" in body and "kind(" not in body[loop:]
    assert "pf_y_" not in body


def test_the_host_form_of_a_turned_nest_loads_its_row_invariant_reads_once():
    """PAINT's shape loop turned inside the grid nest (TeaLeaf's generate_chunk_kernel): the
    device form reads geom(s) per cell as before; the host form (rows in chunks, the shapes,
    then the cells of the row) loads geom(s) once per shape and row; lo(s) and val(s), read
    only under the branches, are left where they are."""
    k, sf = _kernel("paint")
    port = translate_kernel(k, sf)
    cpp = port.files["paint.kokkos.cpp"]
    host = cpp[cpp.index("#ifdef PF_HOST_LOOPS"):cpp.index("#else")]
    device = cpp[cpp.index("#else"):cpp.index("#endif")]
    assert "int pf_geom_1 = 0;" in host
    shapes, guard, load, cells = (host.index("for (s = 1; s <= ns; ++s)"), host.index("if (1 <= nx) {"),
                                  host.index("pf_geom_1 = geom(s - 1);"), host.index("for (j = 1; j <= nx; ++j)"))
    assert shapes < guard < load < cells
    assert "if (pf_geom_1 == 1) {" in host and "} else if (pf_geom_1 == 2) {" in host
    assert "geom(" not in host[cells:] and "lo(s - 1)" in host[cells:]
    assert "if (geom(s - 1) == 1) {" in device and "pf_geom" not in device


@pytest.mark.integration
@pytest.mark.parametrize("name", ["rowacc", "twoel", "rdinv", "paint"])
def test_promoted_and_unpromoted_ports_are_proven(tmp_path, name):
    why = toolchain.missing()
    if why:
        pytest.skip(why)
    from port_fortran.harness import Harness

    k, sf = _kernel(name)
    write_port(translate_kernel(k, sf), tmp_path / name)
    h = Harness(k, SRC, tmp_path / name, threads=2)
    for backend in ("serial", "openmp"):
        v = h.verify(backend, seeds=2)
        assert v.passed, f"{backend}: {v.reason}"
