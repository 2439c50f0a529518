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


@pytest.mark.integration
@pytest.mark.parametrize("name", ["rowacc", "twoel"])
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
