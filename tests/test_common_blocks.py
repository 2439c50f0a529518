"""COMMON blocks: the port reaches them through gfortran's global symbol.

* layout: the C struct the translator declares matches where gfortran puts each member
  (a mixed INTEGER / DOUBLE PRECISION / REAL / INTEGER*8 block, padding included), checked
  by a real gfortran + g++ program;
* plan: heat1d, heat2d, polyev are no longer refused; their COMMON members are trailing
  parameters of the views-level function; what cannot be laid out for sure is refused;
* proof: heat1d, heat2d, polyev (read-only COMMON), accum (tests/data/common/accum.f,
  which WRITES its block: a counter, a sum and an array) and crot (tests/data/common/cplx.f,
  COMPLEX members read and written) verify against the original through the harness on
  serial and openmp.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from port_fortran.fortran import ir, parse_file
from port_fortran.records import TranslationRefused
from port_fortran.translate import translate_kernel, write_port
from port_fortran.translate.common_blocks import blocks, struct_decl, used_members

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "fortran_kernels"
INCLUDE = KERNELS / "include"
ACCUM = ROOT / "tests" / "data" / "common" / "accum.f"
CPLX = ROOT / "tests" / "data" / "common" / "cplx.f"


def _kernel(path: Path, name: str):
    sf = parse_file(str(path), include_dirs=[str(INCLUDE)])
    return next(k for k in sf.kernels if k.name == name), sf


# ------------------------------------------------------------------ layout

MIXED = """\
      SUBROUTINE MIXSET
      INTEGER I1, I2
      DOUBLE PRECISION D1, ARR(0:2)
      REAL R4
      INTEGER*8 K8
      COMMON /MIXC/ I1, D1, I2, R4, K8, ARR
      I1 = 11
      D1 = 2.5D0
      I2 = -7
      R4 = 0.25
      K8 = 123456789012_8
      ARR(0) = 1.5D0
      ARR(1) = -2.5D0
      ARR(2) = 3.5D0
      RETURN
      END
"""


def test_mixed_block_layout_offsets(tmp_path):
    src = tmp_path / "mixset.f"
    src.write_text(MIXED)
    k, _ = _kernel(src, "mixset")
    (b,) = blocks(k)
    assert b.symbol == "mixc_"
    offs = {m.name: m.offset for m in b.members}
    # INTEGER at 0, DOUBLE at 8 (4 bytes padding), INTEGER at 16, REAL at 20, INTEGER*8 at 24, ARR at 32
    assert offs == {"i1": 0, "d1": 8, "i2": 16, "r4": 20, "k8": 24, "arr": 32}
    assert b.padding == 4
    assert [m.name for m in used_members(k)] == ["i1", "d1", "i2", "r4", "k8", "arr"]
    assert all(m.written for m in used_members(k))


@pytest.mark.integration
def test_struct_matches_gfortran(tmp_path):
    gf, cxx = shutil.which("gfortran"), shutil.which("g++")
    if not gf or not cxx:
        pytest.skip("gfortran and g++ needed")
    src = tmp_path / "mixset.f"
    src.write_text(MIXED)
    k, _ = _kernel(src, "mixset")
    (b,) = blocks(k)
    cpp = "\n".join(["#include <cstddef>", "#include <cstdio>", *struct_decl(b), """
extern "C" void mixset_();
int main() {
  mixset_();
  std::printf("%d %.17g %d %.9g %lld %.17g %.17g %.17g\\n", mixc_.i1, mixc_.d1, mixc_.i2, mixc_.r4,
              mixc_.k8, mixc_.arr[0], mixc_.arr[1], mixc_.arr[2]);
  return 0;
}
"""])
    (tmp_path / "main.cpp").write_text(cpp)
    subprocess.run([gf, "-c", "mixset.f", "-o", "mixset.o"], cwd=tmp_path, check=True)
    subprocess.run([cxx, "-std=c++17", "main.cpp", "mixset.o", "-lgfortran", "-o", "mix"], cwd=tmp_path, check=True)
    out = subprocess.run(["./mix"], cwd=tmp_path, check=True, capture_output=True, text=True).stdout.split()
    assert out == ["11", "2.5", "-7", "0.25", "123456789012", "1.5", "-2.5", "3.5"]


@pytest.mark.integration
def test_complex_struct_matches_gfortran(tmp_path):
    gf, cxx = shutil.which("gfortran"), shutil.which("g++")
    if not gf or not cxx:
        pytest.skip("gfortran and g++ needed")
    (tmp_path / "set.f") .write_text("""\
      SUBROUTINE CSET
      INTEGER NCALL, K
      COMPLEX*16 ZS, ZH(3)
      COMPLEX W
      COMMON /CPLXC/ NCALL, ZS, K, W, ZH
      NCALL = 3
      ZS = (1.5D0, -2.5D0)
      K = 7
      W = (0.25, 0.75)
      ZH(3) = (4.0D0, 5.0D0)
      END
""")
    k, _ = _kernel(CPLX, "crot")
    (b,) = blocks(k)
    cpp = "\n".join(["#include <cstddef>", "#include <cstdio>", *struct_decl(b), """
extern "C" void cset_();
int main() {
  cset_();
  std::printf("%d %g %g %d %g %g %g %g\\n", cplxc_.ncall, cplxc_.zs[0], cplxc_.zs[1], cplxc_.k, cplxc_.w[0],
              cplxc_.w[1], cplxc_.zh[4], cplxc_.zh[5]);
  return 0;
}
"""])
    (tmp_path / "main.cpp").write_text(cpp)
    subprocess.run([gf, "-c", "set.f", "-o", "set.o"], cwd=tmp_path, check=True, capture_output=True)
    subprocess.run([cxx, "-std=c++17", "main.cpp", "set.o", "-lgfortran", "-o", "cx"], cwd=tmp_path, check=True)
    out = subprocess.run(["./cx"], cwd=tmp_path, check=True, capture_output=True, text=True).stdout.split()
    assert out == ["3", "1.5", "-2.5", "7", "0.25", "0.75", "4", "5"]


# ------------------------------------------------------------------ plan


@pytest.mark.parametrize("path,name,members,pattern", [
    (KERNELS / "heat.f", "heat1d", ["alpha", "dt", "rdx2"], "parallel_for"),
    (KERNELS / "heat.f", "heat2d", ["alpha", "dt", "rdx2"], "mdrange"),
    (KERNELS / "polyev.f", "polyev", ["coef", "ndeg"], "parallel_for"),
])
def test_common_kernels_translate(path, name, members, pattern):
    k, sf = _kernel(path, name)
    port = translate_kernel(k, sf)
    assert pattern in port.patterns
    assert [m.name for m in used_members(k)] == members
    assert not any(m.written for m in used_members(k))
    hpp = port.files[f"{name}.kokkos.hpp"]
    decl = hpp[hpp.index(f"{name}_kokkos_views("):]
    decl = decl[:decl.index(");")]
    params = [p.strip().split()[-1] for p in decl[len(f"{name}_kokkos_views("):].split(",")]
    assert params == [a.name for a in k.args] + members  # COMMON members trail the arguments
    assert any("COMMON /" in n and "read " + ", ".join(members) in n for n in port.notes)
    cpp = port.files[f"{name}.kokkos.cpp"]
    assert f"extern pf_common_{k.commons[0].name} {k.commons[0].name}_;" in cpp


def test_written_members_are_references_and_stored_back():
    k, sf = _kernel(ACCUM, "accum")
    port = translate_kernel(k, sf)
    cpp = port.files["accum.kokkos.cpp"]
    assert "int& ncall" in cpp and "double& total" in cpp and "double scale" in cpp
    assert "pf::KView<double*> hist" in cpp
    assert "accc_.ncall = ncall;" in cpp and "accc_.total = total;" in cpp
    assert "pf::from_device(h_hist, d_hist);" in cpp
    assert "reduce" in port.patterns


def _refusal(tmp_path, text: str, name: str) -> ir.Diagnostic:
    src = tmp_path / f"{name}.f"
    src.write_text(text)
    k, sf = _kernel(src, name)
    with pytest.raises(TranslationRefused) as ei:
        translate_kernel(k, sf)
    return ei.value.diagnostics[0] if hasattr(ei.value, "diagnostics") else ei.value.args[1][0]


def test_complex_members_laid_out_as_gfortran_does():
    """A COMPLEX is aligned to one part: ZS (COMPLEX*16) right after 4 bytes of padding at
    8, W (COMPLEX*8) at 28; the struct declares them as arrays of parts."""
    k, sf = _kernel(CPLX, "crot")
    (b,) = blocks(k)
    assert {m.name: m.offset for m in b.members} == {"ncall": 0, "zs": 8, "k": 24, "w": 28, "zh": 40}
    decl = {m.name: m.declaration() for m in b.members}
    assert decl["zs"] == "double zs[2];" and decl["w"] == "float w[2];" and decl["zh"] == "double zh[6];"
    port = translate_kernel(k, sf)
    assert {"parallel_for"} <= set(port.patterns)
    assert [m.name for m in used_members(k) if m.written] == ["ncall", "zs", "zh"]


def test_callee_with_common_refused(tmp_path):
    d = _refusal(tmp_path, """\
      DOUBLE PRECISION FUNCTION GETA()
      DOUBLE PRECISION A
      COMMON /GC/ A
      GETA = A
      END
      SUBROUTINE USEA(N, X)
      INTEGER N
      DOUBLE PRECISION X(N), GETA
      INTEGER I
      DO 10 I = 1, N
         X(I) = GETA()
   10 CONTINUE
      END
""", "usea")
    assert d.code == "impure-call" and "COMMON" in d.message


# ------------------------------------------------------------------ proof


def _kokkos_ok() -> bool:
    try:
        from port_fortran.build_runner.kokkos import find_install
    except ImportError:
        return False
    return bool(shutil.which("gfortran")) and find_install("serial") is not None and find_install("openmp") is not None


CASES = {
    "heat1d": (KERNELS / "heat.f", "heat1d"),
    "heat2d": (KERNELS / "heat.f", "heat2d"),
    "polyev": (KERNELS / "polyev.f", "polyev"),
    "accum": (ACCUM, "accum"),
    "crot": (CPLX, "crot"),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def built(request, tmp_path_factory):
    if not _kokkos_ok():
        pytest.skip("gfortran and a Kokkos install with serial and openmp needed")
    from port_fortran.harness import Harness
    path, name = CASES[request.param]
    k, sf = _kernel(path, name)
    out = tmp_path_factory.mktemp(name)
    write_port(translate_kernel(k, sf), out)
    h = Harness(k, sf, out, include_dirs=[str(INCLUDE)])
    builds = {b: h.build(b) for b in ("serial", "openmp")}
    return h, builds


@pytest.mark.integration
def test_common_kernels_verify(built):
    h, builds = built
    members = [a for a in h.kernel.args if a.common is not None]
    assert members, "the COMMON members are driven as extra records"
    for backend, b in builds.items():
        assert b.ok, b.condensed
        v = h.verify(backend, seeds=[1234567, 7654321])
        assert v.passed, f"{h.kernel.name} on {backend}: {v.reason}"
        names = {o.name for c in v.cases for o in c.outputs}
        written = {a.name for a in members if a.intent != "in"}
        assert written <= names  # written COMMON members are compared
    if h.kernel.name == "polyev":
        assert h.spec.args["ndeg"].range == [0, 8]
    if h.kernel.name == "crot":
        assert {a.name: a.intent for a in members} == {"ncall": "inout", "zs": "inout", "k": "in", "w": "in",
                                                       "zh": "inout"}
    if h.kernel.name == "accum":
        assert {a.name: a.intent for a in members} == {"ncall": "inout", "total": "inout", "scale": "in",
                                                       "hist": "inout"}


def test_views_timer_needs_the_common_parameters(tmp_path):
    from port_fortran.harness.members import driven_kernel
    from port_fortran.harness.views import views_timer_source

    k, sf = _kernel(ACCUM, "accum")
    write_port(translate_kernel(k, sf), tmp_path)
    d = driven_kernel(k)
    assert [a.name for a in d.args] == ["n", "x", "y", "ncall", "total", "scale", "hist"]
    assert [a.name for a in k.args] == ["n", "x", "y"]  # the kernel itself is not changed
    src = views_timer_source(d, tmp_path)
    assert src is not None and "accum_kokkos_views(v_0, d_1, d_2, v_3, v_4, v_5, d_6)" in src
    # outputs restored before each call as the Fortran driver restores them: a memcpy where the
    # views are in host memory (Kokkos' deep_copy between host views may run on other threads)
    assert "pf_restore(d_2, s_2);" in src and "pf_restore(d_1," not in src  # y inout, x in
    assert "std::memcpy(d.data(), s.data()" in src and "Kokkos::deep_copy(d, s);" in src
    # a port whose views function lacks the COMMON members (hand-written, LLM): no views timer
    hpp = tmp_path / "accum.kokkos.hpp"
    hpp.write_text("void accum_kokkos_views(int n, pf::View<const double*> x, pf::View<double*> y);\n")
    assert views_timer_source(d, tmp_path) is None


def test_blank_common_and_an_untouched_block(tmp_path):
    src = tmp_path / "bl.f"
    src.write_text("""\
      SUBROUTINE BL(N, X)
      INTEGER N
      DOUBLE PRECISION X(N), S
      COMPLEX*16 Z
      COMMON S
      COMMON /ZC/ Z
      INTEGER I
      DO 10 I = 1, N
         X(I) = S*X(I)
   10 CONTINUE
      END
""")
    k, sf = _kernel(src, "bl")
    port = translate_kernel(k, sf)  # /ZC/ holds a COMPLEX but is never touched: no refusal
    cpp = port.files["bl.kokkos.cpp"]
    assert "extern pf_common_blank __BLNK__;" in cpp and "double s = __BLNK__.s;" in cpp
    assert "zc_" not in cpp
    assert [m.name for m in used_members(k)] == ["s"]
    from port_fortran.harness import drivers
    from port_fortran.harness.members import driven_kernel
    f90 = drivers.fortran_driver(driven_kernel(k))
    assert "common // a_s" in f90 and "call bl(a_n, a_x)" in f90


def _over_aligned_w(real_lay_out):
    """``translate.common_blocks._lay_out`` with a planted layout error: /CPLXC/'s COMPLEX W
    aligned to its whole size (as ``Kokkos::complex<float>`` would be), so at offset 32
    where gfortran puts it at 28; the struct declares it ``alignas(8)``, so the port's own
    static_asserts hold and only a proof independent of this layout can see it."""
    def lay_out(kernel, blk, cb, *rest):
        real_lay_out(kernel, blk, cb, *rest)
        for m in blk.members:
            if blk.name == "cplxc" and m.name == "w" and m.offset == 28:
                m.offset = 32
                m.declaration = lambda: "alignas(8) float w[2];"
    return lay_out


@pytest.mark.integration
def test_wrong_common_layout_in_the_translator_fails_the_proof(tmp_path, monkeypatch):
    """The proof is independent of the translator's COMMON layout: the port's driver links a
    Fortran object owning the block (gfortran's layout), never the translator's struct, so
    a member the translator puts at the wrong offset reads the wrong value and fails."""
    if not _kokkos_ok():
        pytest.skip("gfortran and a Kokkos install with serial needed")
    from port_fortran.harness import Harness
    from port_fortran.translate import common_blocks as layout

    monkeypatch.setattr(layout, "_lay_out", _over_aligned_w(layout._lay_out))
    k, sf = _kernel(CPLX, "crot")
    port = translate_kernel(k, sf)
    cpp = port.files["crot.kokkos.cpp"]
    assert "offsetof(pf_common_cplxc, w) == 32" in cpp  # the planted error is in the port
    write_port(port, tmp_path)
    h = Harness(k, sf, tmp_path)
    b = h.build("serial")
    assert b.ok, b.condensed
    v = h.verify("serial", seeds=[1234567])
    assert not v.passed, "the planted layout error passed the proof"
    bad = {o.name for c in v.cases for o in c.outputs if not o.passed}
    assert "x" in bad, v.reason  # X = ZS*X + W with W read from the wrong bytes
    owner = (tmp_path / "build" / "harness_src" / "pf_commons.f90").read_text()
    assert "common /cplxc/ a_ncall, a_zs, a_k, a_w, a_zh" in owner
