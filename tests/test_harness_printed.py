"""What a routine prints is one of its outputs (harness/printed.py): the port's printed lines
against the original's, numbers within tolerance, numbers read from a clock left out; a
printed computed value is an effect of the case (against original-no-effect), an echoed
input value is not. The integration test proves a routine whose only result is a printed
line, then shows that a port printing a wrong sum is caught."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from port_fortran.harness.printed import PRINTED, check_printed, computed_numbers
from port_fortran.harness.inputs import Record

sys.path.insert(0, str(Path(__file__).parent))
import toolchain  # noqa: E402

DATA = Path(__file__).parent / "data" / "hybrid"


def _rec(name, value):
    a = np.asarray(value)
    return Record(name, 2 if a.dtype.kind == "f" else 1, (1,) * a.ndim, a)


def test_printed_numbers_are_compared_by_magnitude():
    ok = check_printed(" SUM = 1.0000000000000000E+03\n", " SUM = 1.0000000000000002E+03\n", 1e-9)
    assert ok is not None and ok.passed and ok.name == PRINTED and ok.elements == 1
    bad = check_printed(" SUM = 1.0000000000000000E+03\n", " SUM = 1.0010000000000000E+03\n", 1e-9)
    assert bad is not None and not bad.passed and "SUM = 1.0000000000000000E+03" in bad.message
    assert check_printed("", "\n", 1e-9) is None
    # a Kokkos notice in the port's output is not the routine's
    assert check_printed(" X 1\n", "Kokkos::OpenMP::initialize WARNING: OMP_PROC_BIND not set\n X 1\n", 1e-9).passed


def test_numbers_read_from_a_clock_are_left_out():
    ref, port, dilated = " T 0.001\n S 5\n", " T 0.004\n S 5\n", " T 0.011\n S 5\n"
    assert not check_printed(ref, port, 1e-9).passed
    oc = check_printed(ref, port, 1e-9, dilated)
    assert oc.passed and "clock" in oc.message
    # the clock does not excuse a wrong value elsewhere on the line
    assert not check_printed(ref, " T 0.004\n S 6\n", 1e-9, dilated).passed


def test_printed_computed_values_count_as_effects_echoed_inputs_do_not():
    recs = [_rec("n", np.int32(100)), _rec("tol", 0.5), _rec("a", np.arange(4.0))]
    assert computed_numbers(" BAD N =      100  TOL =  0.50\n", recs) == 0
    assert computed_numbers(" N = 100  SUM = 6.000\n", recs) == 1


def _toolchain() -> str:
    return toolchain.missing(('serial',))


@pytest.mark.integration
def test_a_routine_whose_result_is_printed_is_proven_and_a_wrong_sum_is_caught(tmp_path):
    why = _toolchain()
    if why:
        pytest.skip(why)
    from port_fortran.fortran import parse_file
    from port_fortran.harness.hybrid import make_harness
    from port_fortran.translate import write_port
    from port_fortran.translate.hybrid import translate_mode

    sf = parse_file(str(DATA / "printsum.f"), use_cache=False)
    k = next(x for x in sf.kernels if x.name == "psum")
    port = translate_mode(k, sf, None, "auto")
    assert port.mode == "hybrid"
    d = tmp_path / "psum"
    write_port(port, d)
    h = make_harness(k, sf, d)
    v = h.verify("serial", seeds=1)
    assert v.passed, v.reason
    printed = [o for c in v.cases for o in c.outputs if o.name == PRINTED]
    assert printed and all(o.passed and o.elements >= 1 for o in printed)
    assert any("clock" in o.message for o in printed)  # its TIME line, not compared
    # the outlined reduction sums 3*B instead of 2*B: only the printed line shows it
    cpp = d / "psum.kokkos.cpp"
    text = cpp.read_text()
    assert "2.0 * b(" in text, text
    cpp.write_text(text.replace("2.0 * b(", "3.0 * b(", 1))
    h = make_harness(k, sf, d)
    v = h.verify("serial", seeds=1)
    assert not v.passed and "printed output differs" in v.reason, v.reason
