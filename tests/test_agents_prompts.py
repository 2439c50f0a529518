"""What the LLM is told: IR summary, required signature from the port header, templates."""
from pathlib import Path

import pytest

from port_fortran.agents.prompts import derived_signature, entry_signature, header_declarations, ir_summary, render

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def waxpby():
    from port_fortran.fortran import parse_file
    from port_fortran.translate import translate_kernel

    sf = parse_file(ROOT / "fortran_kernels" / "vecops.F90")
    k = next(k for k in sf.kernels if k.name == "waxpby")
    return k, sf, translate_kernel(k, sf)


def test_summary_and_signature_from_the_header(waxpby):
    k, _, port = waxpby
    s = ir_summary(k)
    assert [a["name"] for a in s["args"]] == [a.name for a in k.args]
    w = next(a for a in s["args"] if a["name"] == "w")
    assert w["intent"] == "out" and w["dims"]
    loop = s["loops"][0]
    assert loop["parallel"] and loop["line"] == k.loops()[0].line
    sig = entry_signature(k, port.files["waxpby.kokkos.hpp"])
    assert 'extern "C" void waxpby_kokkos(const int* n' in sig and "waxpby_kokkos_views(int n" in sig
    assert "//" not in sig and "#" not in sig


def test_derived_signature_without_a_header(waxpby):
    k, _, _ = waxpby
    sig = derived_signature(k)
    assert sig.startswith('extern "C" void waxpby_kokkos(const int* n, const double* alpha')
    assert "double* w)" in sig


def test_templates_render_every_part(waxpby):
    k, _, port = waxpby
    header = port.files["waxpby.kokkos.hpp"]
    msgs = render("translate.j2", kernel=k, summary=ir_summary(k), signature=entry_signature(k, header),
                  header=header, draft=port.files["waxpby.kokkos.cpp"], refusal="")
    assert [m[0] for m in msgs] == ["system", "human"]
    system, user = msgs[0][1], msgs[1][1]
    assert "3.4 to 5.x" in system and "pf::" not in system.split("namespace pf")[0][-5:]
    assert "waxpby_kokkos_views" in system
    assert k.source_text.strip().splitlines()[0].strip() in user and "parallel" in user
    assert "A draft from the deterministic translator" in user
    failure = {"stage": "run", "backend": "openmp", "message": "w(3) differs", "output": "w", "worst_index": [3],
               "max_abs_err": 0.5, "max_rel_err": 0.1, "tolerance": 1e-12, "sizes": {"n": 17}, "detail": ""}
    d = render("debug.j2", kernel=k, code="// code", failure=failure, header=header, signature="sig")[1][1]
    assert "Output `w` at Fortran index [3]" in d and "tolerance 1e-12" in d and "openmp" in d
    d = render("debug.j2", kernel=k, code="// code", failure={**failure, "stage": "compile",
               "detail": "waxpby.kokkos.cpp:4: error: expected ';'"}, header="", signature="sig")[1][1]
    assert "expected ';'" in d
    t = [{"variant": "kokkos-serial", "threads": 1, "median_s": 0.01, "spread_s": 0.001, "gbytes_per_s": 12.0,
          "roofline_fraction": 0.4}]
    o = render("optimize.j2", kernel=k, code="// c", timings=t, signature="sig", profile={"waxpby:L21": 0.009})[1][1]
    assert "kokkos-serial" in o and "12.0 GB/s" in o and "40% of peak" in o and "waxpby:L21" in o


def test_header_declarations():
    h = '#pragma once\n// c\nvoid f(int a,\n  int b);  /* x */\nextern "C" void g(const int* n);\n'
    assert header_declarations(h) == ["void f(int a, int b)", 'extern "C" void g(const int* n)']


def test_scaffold_matches_the_rules_interface_files(waxpby):
    from port_fortran.pipeline.stages import RealStages

    k, sf, port = waxpby
    sc = RealStages().scaffold(k, sf)
    assert sc is not None and f"{k.name}.kokkos.cpp" not in sc.files
    for name, text in sc.files.items():
        assert text == port.files[name], name


def test_scaffold_of_a_common_kernel_matches_the_rules_files():
    """The LLM path gets the same interface as the rules port, COMMON members included."""
    from pathlib import Path

    from port_fortran.fortran import parse_file
    from port_fortran.pipeline.stages import RealStages
    from port_fortran.translate import translate_kernel

    root = Path(__file__).resolve().parents[1] / "fortran_kernels"
    sf = parse_file(str(root / "heat.f"), include_dirs=(str(root / "include"),))
    k = next(k for k in sf.kernels if k.name == "heat1d")
    port = translate_kernel(k, sf)
    sc = RealStages().scaffold(k, sf)
    assert sc is not None and "heat1d.kokkos.cpp" not in sc.files
    assert "alpha" in sc.files["heat1d.kokkos.hpp"]  # the COMMON member is a views parameter
    for name, text in sc.files.items():
        assert text == port.files[name], name
