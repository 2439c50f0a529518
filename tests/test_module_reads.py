"""Module variables a callee only reads (fortran/module_reads.py, translate/hybrid_modvars.py):
a routine declaring its dummies with module scalars and reading a module table runs as a
device function of a hybrid port's outlined nest, which passes it those variables; one that
writes a module variable stays refused, naming it; full ports keep refusing module state.
Unit tests assert on the effects, the outlined nests and the generated sources; the
integration test proves the hybrid ports (serial and openmp) and catches a wrong kernel."""
from __future__ import annotations

import sys

import shutil
from pathlib import Path

import pytest

from port_fortran.fortran import ir
from port_fortran.fortran.effects import Calls, load_for_port
from port_fortran.fortran.program_build import build_program
from port_fortran.fortran.render import expr_str
from port_fortran.records import TranslationRefused
from port_fortran.translate.hybrid import translate_mode

sys.path.insert(0, str(Path(__file__).parent))
import toolchain  # noqa: E402

DATA = Path(__file__).parent / "data" / "hybrid"
MODREAD = DATA / "modread.f90"


def _load(path, name):
    prog = build_program([str(path)])
    k, sf = load_for_port(prog, str(path), name)
    return k, sf, prog


def _port(path, name, mode="hybrid"):
    k, sf, prog = _load(path, name)
    return translate_mode(k, sf, None, mode, program=prog), k, sf, prog


def test_reading_module_variables_is_no_side_effect_writing_one_is():
    """mr_calc reads nx, nmom (its dummies' bounds) and the table lma: its effects have no
    blockers and list them, after its own dummies (an array with its bound arguments);
    mr_count assigns total: blocked, naming the variable and the line."""
    k, _sf, prog = _load(MODREAD, "mr_src")
    calls = Calls(prog)
    eff = calls.effects(k, "mr_calc")
    assert eff.translatable, eff.why_not()
    assert [r.name for r in eff.module_reads] == ["nx", "nmom", "lma"]
    assert [d.name for d in eff.dummies] == ["f0", "fm", "q", "nx", "nmom", "lma", "pf_lb1_lma", "pf_ub1_lma"]
    assert not any(d.write for d in eff.dummies[3:])
    # what the routine's harness sets besides its own module variables, and lma's bounds
    # from the subscripts mr_calc takes (lma(l), l = 2..nmom)
    assert list(k.callee_module_reads) == ["lma"]
    assert [(expr_str(lo), expr_str(hi)) for lo, hi in k.module_bounds["lma"]] == [("2", "nmom")]
    tally, _sf, prog = _load(MODREAD, "mr_tally")
    eff = Calls(prog).effects(tally, "mr_count")
    assert not eff.translatable
    assert "mr_count writes module variable 'total' of mr_grid (line 30: assigned)" in eff.why_not()
    assert "[module-variable]" in eff.why_not()


def test_an_outlined_nest_passes_the_module_variables_its_callee_reads(tmp_path):
    """mr_src (outside the module) names nx and nmom itself but not lma: the nest takes
    lma under pf_mv_lma, which a USE added to the copy renames, with its LBOUND/UBOUND;
    mr_calc's device function takes them as trailing parameters, scalars by value and the
    array as a pointer with its bounds. mr_grid_src, a procedure of the module, passes lma
    by its own name and adds no USE."""
    port, _k, _sf, _prog = _port(MODREAD, "mr_src")
    (nest,) = port.hybrid["outlined"]
    assert "mdrange" in nest["patterns"]
    assert nest["arguments"][-5:] == ["nx", "nmom", "pf_mv_lma", "LBOUND(pf_mv_lma, 1)", "UBOUND(pf_mv_lma, 1)"]
    assert port.hybrid["module_reads"] == ["nx", "nmom", "lma"]
    copy_text = port.files[port.hybrid["source"]]
    routine = copy_text[copy_text.index("subroutine mr_src"):]
    assert "use mr_grid, only: pf_mv_lma => lma" in routine.split("implicit none")[0]
    cpp = port.files["mr_src.kokkos.cpp"]
    assert ("mr_calc_fn(const double* pf_ptr_f0, const double* pf_ptr_fm, double* pf_ptr_q, const int nx, "
            "const int nmom, const int* pf_ptr_lma, const int pf_lb1_lma, const int pf_ub1_lma)") in cpp
    assert "lma(l - lma_lb1)" in cpp  # the table keeps the lower bound the caller allocated
    port, _k, _sf, _prog = _port(MODREAD, "mr_grid_src")
    (nest,) = port.hybrid["outlined"]
    assert nest["arguments"][-3:] == ["lma", "LBOUND(lma, 1)", "UBOUND(lma, 1)"]
    copy_text = port.files[port.hybrid["source"]]
    assert "pf_mv_" not in copy_text
    # the copy is Fortran gfortran compiles (with the interface module beside it)
    if shutil.which("gfortran"):
        import subprocess
        from port_fortran.translate import write_port
        for name in ("mr_src", "mr_grid_src"):
            port, *_ = _port(MODREAD, name)
            d = tmp_path / name
            write_port(port, d)
            for f in (f"{name}_kokkos_mod.f90", "modread.f90"):
                r = subprocess.run(["gfortran", "-fopenmp", "-c", f], cwd=d, capture_output=True, text=True)
                assert r.returncode == 0, r.stderr


def test_a_callee_writing_a_module_variable_is_still_refused_with_its_name():
    with pytest.raises(TranslationRefused) as exc:
        _port(MODREAD, "mr_tally")
    text = "; ".join(d.message for d in exc.value.diagnostics)
    assert "mr_count writes module variable 'total' of mr_grid (line 30: assigned)" in text
    assert "a device function may read module state, not change it" in text


def test_a_loop_writing_what_its_callee_reads_stays_serial(tmp_path):
    """The callee's read of nmom would depend on the iteration order."""
    p = tmp_path / "bump.f90"
    p.write_text(MODREAD.read_text() + """
subroutine mr_bump(f, fm, q)
  use mr_grid, only: nx, ny, nz, nmom, mr_calc
  implicit none
  double precision, intent(in) :: f(nx, ny, nz)
  double precision, intent(in) :: fm(nx, nx, ny, nz)
  double precision, intent(out) :: q(nx, nx, ny, nz)
  integer :: j, k
  do k = 1, nz
    do j = 1, ny
      nmom = min(j, nx)
      call mr_calc(f(1, j, k), fm(1, 1, j, k), q(1, 1, j, k))
    end do
  end do
end subroutine mr_bump
""")
    k, _sf, _prog = _load(p, "mr_bump")
    loops = [s for s in ir.walk(k.body) if isinstance(s, ir.Do)]
    assert not any(d.info.parallel for d in loops)
    for d in loops:
        assert "mr_calc" in d.info.reasons[0].message
        assert d.info.reasons[0].message.endswith("reads module variable nmom, which the loop writes")


def test_full_ports_keep_refusing_module_state(tmp_path):
    """A full port's kernel cannot reach module variables: neither its own (mr_src) nor
    those a callee reads (mr_pass passes its own arrays to mr_calc)."""
    with pytest.raises(TranslationRefused) as exc:
        _port(MODREAD, "mr_src", "full")
    assert exc.value.diagnostics[0].code == "module-variable"
    p = tmp_path / "pass.f90"
    p.write_text(MODREAD.read_text() + """
subroutine mr_pass(n, m, f, fm, q)
  use mr_grid, only: mr_calc
  implicit none
  integer, intent(in) :: n, m
  double precision, intent(in) :: f(m, n), fm(4 * m, n)
  double precision, intent(out) :: q(4 * m, n)
  integer :: j
  do j = 1, n
    call mr_calc(f(1, j), fm(1, j), q(1, j))
  end do
end subroutine mr_pass
""")
    with pytest.raises(TranslationRefused) as exc:
        _port(p, "mr_pass", "full")
    text = "; ".join(d.message for d in exc.value.diagnostics)
    assert "mr_calc" in text and "module variables" in text and "lma" in text


def _toolchain() -> str:
    return toolchain.missing()


@pytest.mark.integration
@pytest.mark.timeout(1800)
def test_nests_calling_a_module_reader_are_proven_on_serial_and_openmp(tmp_path):
    """mr_src and mr_grid_src: the harness sets nx, ny, nz, nmom and allocates lma (which
    only the callee reads) with the bounds its subscripts take; the hybrid ports are proven
    like full ones, and a kernel reading lma wrong is caught."""
    why = _toolchain()
    if why:
        pytest.skip(why)
    from port_fortran.harness.hybrid import HybridHarness, make_harness
    from port_fortran.translate import write_port

    for name in ("mr_src", "mr_grid_src"):
        port, k, sf, prog = _port(MODREAD, name)
        d = tmp_path / name
        write_port(port, d)
        h = make_harness(k, sf, d, program=prog)
        assert isinstance(h, HybridHarness)
        lma = next(a for a in h.kernel.args if a.name == "lma")
        assert lma.module == "mr_grid" and lma.intent == "in" and lma.allocatable
        for b in ("serial", "openmp"):
            v = h.verify(b, seeds=1)
            assert v.passed, f"{name} [{b}]: {v.reason}"
    cpp = tmp_path / "mr_src" / "mr_src.kokkos.cpp"
    text = cpp.read_text()
    assert "static_cast<double>(lma(l - lma_lb1))" in text
    cpp.write_text(text.replace("static_cast<double>(lma(l - lma_lb1))", "static_cast<double>(lma(l - lma_lb1) + 1)"))
    k, sf, prog = _load(MODREAD, "mr_src")
    v = make_harness(k, sf, tmp_path / "mr_src", program=prog).verify("serial", seeds=1)
    assert not v.passed and "q" in v.reason


def test_a_character_module_variable_is_refused_with_its_name(tmp_path):
    p = tmp_path / "ch.f90"
    p.write_text("""module chm
  implicit none
  character(len=8) :: label = 'abc'
  integer :: nx = 4
contains
  subroutine put(i, y)
    integer, intent(in) :: i
    double precision, intent(inout) :: y(nx)
    if (label == 'a') y(i) = 2.0d0 * y(i)
  end subroutine put
end module chm

subroutine drive(n, y)
  use chm, only: nx, put
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: y(nx, n)
  integer :: j
  do j = 1, n
    call put(1, y(1, j))
  end do
end subroutine drive
""")
    with pytest.raises(TranslationRefused) as exc:
        _port(p, "drive")
    text = exc.value.diagnostics[0].message
    assert "put reads module variable 'label' of chm (line 9), which is CHARACTER" in text
