"""The source form as gfortran takes it from the flags a file is built with: ``-ffree-form``
makes a ``.F`` file free form (stencil codes built with ``-ffree-form``/``-Mfree``),
``-ffixed-form`` the reverse, and ``-ffixed-line-length-N`` moves the column where a
fixed-form statement ends. Read by extension alone, such a file is either a syntax error
or, worse, a statement silently cut at column 72."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from port_fortran.fortran import ir, parse_file
from port_fortran.fortran.program_build import build_program
from port_fortran.fortran.reader import SourceOptions, form_of, options_of_fflags, source_options
from port_fortran.records import TranslationRefused

DATA = Path(__file__).parent / "data" / "forms"


def _names(e) -> set[str]:
    return {x.name for x in ir.walk_expr(e) if isinstance(x, (ir.Name, ir.ArrayRef))}


def _assigns(k: ir.Kernel) -> list[ir.Assign]:
    return [s for s in ir.walk(k.body) if isinstance(s, ir.Assign)]


def test_options_follow_gfortran_flags_last_one_wins():
    assert options_of_fflags([]) == SourceOptions(None, 72)
    assert options_of_fflags(["-O2", "-ffree-form"]).form == "free"
    assert options_of_fflags(["-ffree-form", "-ffixed-form"]).form == "fixed"
    assert options_of_fflags(["-ffixed-line-length-132"]).fixed_length == 132
    assert options_of_fflags(["-ffixed-line-length-none"]).fixed_length is None
    assert options_of_fflags(["-ffixed-line-length-0"]).fixed_length is None
    with source_options(options_of_fflags(["-ffree-form"])):
        assert form_of("x.F") == "free" and form_of("y.f") == "free"
    assert form_of("x.F") == "fixed"  # the block ended: by extension again


def test_free_form_dot_F_file_is_read_free_with_the_flag():
    path = str(DATA / "relax.F")
    flags = ["-ffree-form"]
    sf = parse_file(path, defines={"_RELAX_FIVE": ""}, fflags=flags, use_cache=False)
    assert not sf.errors, sf.errors
    k = next(k for k in sf.kernels if k.name == "relax")
    assert [a.name for a in k.args] == ["nx", "ny", "grid", "work", "ierr"]
    loops = [s for s in k.body if isinstance(s, ir.Do)]
    assert len(loops) == 1 and loops[0].info.parallel  # the stencil nest, its #if branch taken
    # read by its suffix alone (fixed form) the file is not Fortran the front end can take
    wrong = parse_file(path, defines={"_RELAX_FIVE": ""}, use_cache=False)
    assert wrong.errors or not any(k.name == "relax" and k.body for k in wrong.kernels)
    # the program model reads each file with its own flags
    prog = build_program([path], defines={"_RELAX_FIVE": ""}, fflags=flags)
    assert not prog.file(path).errors
    assert prog.kernel(path, "relax").body


def test_fixed_line_length_flag_keeps_text_past_column_72():
    path = str(DATA / "wide.f")
    # gfortran, the oracle: the statement compiles whole only with the longer line
    subprocess.run(["gfortran", "-fsyntax-only", "-ffixed-line-length-132", path], check=True)
    cut = subprocess.run(["gfortran", "-fsyntax-only", "-Wline-truncation", "-Werror", path],
                         capture_output=True, text=True)
    assert cut.returncode != 0  # at 72 columns gfortran cuts the statement too
    short = next(k for k in parse_file(path, use_cache=False).kernels if k.name == "wide")
    assert "b" not in set().union(*(_names(a.value) for a in _assigns(short)))
    for flag in ("-ffixed-line-length-132", "-ffixed-line-length-none"):
        long = next(k for k in parse_file(path, fflags=[flag], use_cache=False).kernels if k.name == "wide")
        assert "b" in set().union(*(_names(a.value) for a in _assigns(long))), flag


@pytest.mark.integration
def test_free_form_dot_F_kernel_is_proven_with_its_flags(tmp_path):
    from port_fortran.harness import Harness
    from port_fortran.translate import translate_kernel, write_port

    path = DATA / "relax.F"
    flags = ["-ffree-form"]
    defines = {"_RELAX_FIVE": ""}
    sf = parse_file(str(path), defines=defines, fflags=flags, use_cache=False)
    k = next(k for k in sf.kernels if k.name == "relax")
    port = translate_kernel(k, sf)
    write_port(port, tmp_path / "relax")
    h = Harness(k, sf, tmp_path / "relax", defines=defines, fflags=flags)
    for backend in ("serial", "openmp"):
        b = h.build(backend)
        assert b.ok, b.condensed
        v = h.verify(backend)
        assert v.passed, v.reason
        assert any(c.changed for c in v.cases)


def test_component_statements_say_what_they_read():
    """A statement the IR cannot model (``perf%adds = perf%adds + 4*nx*ny``) reads the
    names it mentions, and through a module function only what the routine shares: the
    loop variables are dead after the sweeps, which stay parallel. Through an internal
    function it may read anything (the loop stays as it was)."""
    sf = parse_file(str(DATA / "counters.f90"), use_cache=False)
    assert not sf.errors, sf.errors
    k = next(k for k in sf.kernels if k.name == "smooth")
    kept = [s for s in ir.walk(k.body) if isinstance(s, ir.Unsupported)]
    assert [s.construct for s in kept] == ["derived-type", "derived-type"]
    assert set(kept[0].reads) >= {"perf", "nx", "ny"} and not {"i", "j"} & set(kept[0].reads)
    assert kept[0].writes == ["perf"]
    assert "t0" in kept[1].reads and not {"i", "j"} & set(kept[1].reads)  # clock() reads module state only
    assert {"nx", "ny", "perf"} <= set(kept[1].reads)
    loops = [s for s in k.body if isinstance(s, ir.Do)]
    assert len(loops) == 2 and all(d.info.parallel for d in loops), [d.info.reasons for d in loops]
    r = next(k for k in sf.kernels if k.name == "report")
    w = next(s for s in ir.walk(r.body) if isinstance(s, ir.Unsupported))
    assert w.construct == "io-in-kernel" and "total" in w.reads and "i" not in w.reads
    t = next(k for k in sf.kernels if k.name == "tally")
    peek = next(s for s in ir.walk(t.body) if isinstance(s, ir.Unsupported))
    assert peek.reads is None


def test_module_array_bounds_from_module_constants_are_numbers():
    """EDGES(NB - 1), NB a PARAMETER of the module: the routine's IR holds its bounds as
    numbers, so the harness can set the array (CCS-QCD's ipsite(NDIM - 1))."""
    from port_fortran.harness.members import module_state_problems

    sf = parse_file(str(DATA / "counters.f90"), use_cache=False)
    k = next(x for x in sf.kernels if x.name == "scale_edges")
    d = k.module_vars["edges"].dims[0]
    assert isinstance(d.upper, ir.Literal) and d.upper.value == 1000
    assert module_state_problems(k) == []


@pytest.mark.integration
def test_sweeps_in_a_region_with_glued_end_directives_are_outlined_and_proven(tmp_path):
    """miniGhost's shapes: sweeps in a region closed by glued END directives (SMOOTH), a sum
    into an element of a module array (ACCUM); the counters stay Fortran."""
    from port_fortran.harness.hybrid import HybridHarness, make_harness
    from port_fortran.translate import write_port
    from port_fortran.translate.hybrid import translate_mode

    sf = parse_file(str(DATA / "counters.f90"), use_cache=False)
    for name, lines, pattern in (("smooth", [29, 36], "mdrange"), ("accum", [52], "reduce")):
        k = next(x for x in sf.kernels if x.name == name)
        port = translate_mode(k, sf, None, "auto")
        assert port.mode == "hybrid"
        assert [o["line"] for o in port.hybrid["outlined"]] == lines, port.hybrid
        assert pattern in port.hybrid["outlined"][0]["patterns"]
        write_port(port, tmp_path / name)
        h = make_harness(k, sf, tmp_path / name)
        assert isinstance(h, HybridHarness)
        for b in ("serial", "openmp"):
            v = h.verify(b, seeds=1)
            assert v.passed, f"{name} [{b}]: {v.reason}"
            assert any(c.changed for c in v.cases)
            # the counters are no record of the proof: the verdict says so
            assert any(n.startswith("not compared: perf, written by statements kept in Fortran") for n in v.notes)


@pytest.mark.integration
def test_wide_fixed_form_routine_is_proven_in_both_modes(tmp_path):
    """A fixed-form file built with -ffixed-line-length-132: the full port of WIDE reads
    b(i) from past column 72, and the hybrid copy of WIDEW (its WRITE stays Fortran) keeps
    its long statements whole, compiled with the file's flags."""
    from port_fortran.harness.hybrid import make_harness
    from port_fortran.translate import write_port
    from port_fortran.translate.hybrid import translate_mode

    flags = ["-ffixed-line-length-132"]
    sf = parse_file(str(DATA / "wide.f"), fflags=flags, use_cache=False)
    assert sf.fixed_length == 132
    for name, mode in (("wide", "full"), ("widew", "hybrid")):
        k = next(x for x in sf.kernels if x.name == name)
        port = translate_mode(k, sf, None, mode)
        assert port.mode == mode
        write_port(port, tmp_path / name)
        h = make_harness(k, sf, tmp_path / name, fflags=flags)
        for b in ("serial", "openmp"):
            v = h.verify(b, seeds=1)
            assert v.passed, f"{name} [{b}]: {v.reason}"
            assert any(c.changed for c in v.cases)
    text = next((tmp_path / "widew").glob("*.f")).read_text()
    assert "+ c(n)" in text  # the kept statement, whole


@pytest.mark.integration
def test_routine_of_an_included_header_is_a_hybrid_port_of_the_header(tmp_path):
    """LAT_AXPY is #included into its module from a .h90 header: its statements carry the
    header's lines, the hybrid port edits a copy of the header that the unchanged copy of
    the module file finds beside it, and the proof leaves out the module counter it fills
    from a clock (saying so) while comparing the rest."""
    from port_fortran.harness.hybrid import HybridHarness, make_harness
    from port_fortran.translate import write_port
    from port_fortran.translate.hybrid import translate_mode

    sf = parse_file(str(DATA / "lattice.F90"), include_dirs=(str(DATA),), use_cache=False)
    assert not sf.errors, sf.errors
    k = next(x for x in sf.kernels if x.name == "lat_axpy")
    assert k.text_file and k.text_file.endswith("lattice_axpy.h90")
    assert (k.line_start, k.line_end) == (1, 12)
    assert [s.line for s in k.body if isinstance(s, ir.Do)] == [7]
    with pytest.raises(TranslationRefused) as full:  # the counter is module state: where the header uses it
        translate_mode(k, sf, None, "full")
    d0 = full.value.diagnostics[0]
    assert (d0.code, d0.line) == ("module-variable", 11), full.value.diagnostics
    port = translate_mode(k, sf, None, "auto")
    assert port.mode == "hybrid" and port.hybrid["header"] == "lattice_axpy.h90"
    assert [o["line"] for o in port.hybrid["outlined"]] == [7]
    d = tmp_path / "lat_axpy"
    write_port(port, d)
    assert "lat_axpy_l7_kokkos" in (d / "lattice_axpy.h90").read_text()
    assert (d / "lattice.F90").read_text() == (DATA / "lattice.F90").read_text()
    h = make_harness(k, sf, d, include_dirs=[str(DATA)])
    assert isinstance(h, HybridHarness)
    for b in ("serial", "openmp"):
        v = h.verify(b, seeds=1)
        assert v.passed, f"[{b}]: {v.reason}"
        assert any(n.startswith("not compared: cost, which the original reads from a clock") for n in v.notes), v.notes
        assert all(o.passed for c in v.cases for o in c.outputs if o.name == "y")
    # the kernel really runs: a wrong outlined nest fails the proof
    cpp = next(d.glob("*.kokkos.cpp"))
    text = cpp.read_text()
    assert "a * x(" in text, text
    cpp.write_text(text.replace("a * x(", "1.5 * a * x(", 1))
    h2 = make_harness(k, sf, d, include_dirs=[str(DATA)])
    assert not h2.verify("serial", seeds=1).passed
