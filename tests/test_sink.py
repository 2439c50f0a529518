"""Loop sinking (fortran/sink.py, issue 15): a column loop whose rows are updated by loops
over them becomes a band over (column, row) -- one kernel with adjacent threads on adjacent
rows on a GPU -- where the rows stay independent, the original order kept for the host
backends; register blocking then takes the band. Integration: the sunk port is proven on
Serial and OpenMP in its host form, its device form (Kokkos' policies on the host) and
blocked, and a device form that drops a column's scaling is caught."""
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

SINK = Path(__file__).parent / "data" / "translate" / "sink.f"
BLOCK = TranslateOptions(register_block=(4, 4), variant="regblock-4x4")


def _kernel(name: str):
    sf = parse_file(str(SINK), use_cache=False)
    return next(k for k in sf.kernels if k.name == name), sf


def test_a_column_by_column_product_becomes_a_band_over_columns_and_rows():
    k, sf = _kernel("mmcol")
    port = translate_kernel(k, sf)
    assert port.patterns == ["mdrange"]
    assert any(n.startswith("line 11: do j (sunk: its loops over i") for n in port.notes), port.notes
    cpp = port.files["mmcol.kokkos.cpp"]
    host, device = cpp[cpp.index("#ifdef PF_HOST_LOOPS"):cpp.index("#else")], cpp[cpp.index("#else"):]
    # the device form: one kernel over (i, j), each element scaled then updated per term
    assert 'pf::parallel_for("mmcol:L11", pf::nest<2>({1, 1}, {m, n})' in device
    dev = device[:device.index("#endif")]
    assert "for (i = " not in dev and dev.index("beta * c(i - 1, j - 1)") < dev.index("for (l = 1; l <= k; ++l)")
    # the host form: the original column loop, its row loops innermost and contiguous
    assert 'pf::host_chunks("mmcol:L11", 1, n,' in host
    assert host.count("for (i = 1; i <= m; ++i)") == 3
    assert host.index("for (l = 1; l <= k; ++l)") < host.rindex("for (i = 1; i <= m; ++i)")
    # register blocking takes the band: the IF of the scaling copied per element of a block
    blocked = translate_kernel(k, sf, BLOCK)
    assert any("do j / do i -> register blocked 4x4" in n for n in blocked.notes), blocked.notes
    bcpp = blocked.files["mmcol.kokkos.cpp"]
    assert bcpp.count("if (beta == 0.0)") == 16 + 1 + 1  # 16 copies, the edge block's, the host form's
    # the host backends keep the original order (contiguous, vectorised: 4x faster than the
    # blocked band on one core at n = 200), so the block is only compiled for devices and
    # GCC's loop vectoriser stays on (the compat header's guard is for blocks run on the host)
    host = bcpp[bcpp.index("#ifdef PF_HOST_LOOPS"):bcpp.index("#else")]
    assert 'pf::host_chunks("mmcol:L11", 1, n,' in host and "pf_temp_" not in host
    assert "PF_NO_LOOP_VECTORIZE_BEGIN" not in bcpp
    assert "regblock-4x4" in dict(optimizer.variants(k, None, 20))
    # on a GPU the 8x8 block is one more variant (1.6x the 4x4 on this form, H100); not on the host
    assert [n for n, _ in optimizer.variants(k, None, 2, ["cuda"])] == ["regblock-4x4", "regblock-8x8"]
    assert "regblock-8x8" not in dict(optimizer.variants(k, None, 20, ["serial", "openmp"]))


def test_a_product_skipping_zero_terms_is_sunk_and_blocked_with_its_test_per_element():
    """``if (b(l, j) .ne. 0) then; temp = b(l, j); do i ...``: the test sits between the loop
    over terms and the rows; sunk, each element of a block runs it for its own column."""
    k, sf = _kernel("mmcolz")
    assert any("(sunk:" in n for n in translate_kernel(k, sf).notes)
    blocked = translate_kernel(k, sf, BLOCK)
    assert any("do j / do i -> register blocked 4x4" in n for n in blocked.notes), blocked.notes
    # c(i, j) is touched only when the term is not zero: loading it before the loop would touch
    # what the original may not (promote.py keeps only elements every pass touches)
    assert not any("kept in registers" in n for n in blocked.notes + translate_kernel(k, sf).notes)


@pytest.mark.parametrize("name", ["difcol", "nrmcol", "uptri"])
def test_columns_whose_rows_are_not_independent_are_left_as_they_were(name):
    """difcol: the second loop over i reads w(i + 1, j), which the first writes (the built
    nest is not parallel over i); nrmcol: the scale read between the loops is what the
    first wrote (not recomputable per row); uptri: rows 1..j, a triangle and not a band."""
    k, sf = _kernel(name)
    port = translate_kernel(k, sf)
    assert port.patterns == ["parallel_for"] and not any("sunk" in n for n in port.notes), port.notes
    assert "PF_HOST_LOOPS" not in port.files[f"{name}.kokkos.cpp"]


def _harness(name: str, opts, d: Path, device_form: bool = False):
    """The port of ``name`` written to ``d`` and its harness; ``device_form``: with its host
    form cut out, so the host backends run what a GPU runs (skips without the tools)."""
    why = toolchain.missing()
    if why:
        pytest.skip(why)
    from port_fortran.harness import Harness

    k, sf = _kernel(name)
    write_port(translate_kernel(k, sf, opts), d)
    if device_form:
        cpp = d / f"{name}.kokkos.cpp"
        text = cpp.read_text()
        a, b = text.index("#ifdef PF_HOST_LOOPS"), text.index("#else", text.index("#ifdef PF_HOST_LOOPS"))
        text = text[:a] + text[b + len("#else"):]
        cpp.write_text(text.replace("#endif\n}", "}", 1))
        assert "PF_HOST_LOOPS" not in cpp.read_text()
    return Harness(k, SINK, d, threads=2)


@pytest.mark.integration
@pytest.mark.parametrize("opts,device", [(TranslateOptions(), False), (TranslateOptions(), True), (BLOCK, False)],
                         ids=["host-form", "device-form", "blocked"])
def test_the_sunk_product_is_proven_on_serial_and_openmp(tmp_path, opts, device):
    h = _harness("mmcol", opts, tmp_path / "mmcol", device)
    for backend in ("serial", "openmp"):
        v = h.verify(backend, seeds=2)
        assert v.passed, f"{backend}: {v.reason}"


@pytest.mark.integration
def test_the_blocked_product_skipping_zero_terms_is_proven_in_its_device_form(tmp_path):
    h = _harness("mmcolz", BLOCK, tmp_path / "mmcolz", device_form=True)
    for backend in ("serial", "openmp"):
        v = h.verify(backend, seeds=2)
        assert v.passed, f"{backend}: {v.reason}"


@pytest.mark.integration
def test_a_device_form_that_skips_the_scaling_is_caught(tmp_path):
    d = tmp_path / "mmcol"
    h = _harness("mmcol", TranslateOptions(), d, device_form=True)
    cpp = d / "mmcol.kokkos.cpp"
    text = cpp.read_text()
    assert text.count("c(i - 1, j - 1) = beta * c(i - 1, j - 1);") == 1
    cpp.write_text(text.replace("c(i - 1, j - 1) = beta * c(i - 1, j - 1);", ";"))
    v = h.verify("serial", seeds=2)
    assert not v.passed and "c" in v.reason
