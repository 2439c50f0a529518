"""Hybrid ports (translate/hybrid.py, translate/fortran_text.py, harness/hybrid.py,
harness/program_proof.py): the routine stays Fortran, its parallel loop nests become Kokkos
kernels it calls. Unit tests assert on the IR of the synthetic kernels and of the generated
Fortran (parsed back by the front end); integration tests build and prove hybrid ports on
serial and openmp, and show that a wrong kernel is caught."""
from __future__ import annotations

import sys

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from port_fortran.fortran import ir, parse_file
from port_fortran.fortran.dependence import kernel_context
from port_fortran.records import TranslationRefused
from port_fortran.translate.hybrid import hybrid_port, outline, translate_mode

sys.path.insert(0, str(Path(__file__).parent))
import toolchain  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "fortran_kernels"
DATA = Path(__file__).parent / "data" / "hybrid"


def _kernel(path, name, **kw):
    sf = parse_file(str(path), use_cache=False, **kw)
    assert not sf.errors, sf.errors
    units = {k.name: k for k in sf.kernels + sf.program_units}
    return units[name], sf


def _hybrid(path, name, **kw):
    k, sf = _kernel(path, name, **kw)
    return hybrid_port(k, sf, text=Path(path).read_text()), k, sf


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def _reparse(port, tmp_path):
    """The generated Fortran, parsed back by the front end (the module file beside it)."""
    src = tmp_path / "gen" / port.hybrid["source"]
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text(port.files[port.hybrid["source"]])
    return parse_file(str(src), use_cache=False)


def _calls(body, prefix):
    return [s for s in ir.walk(body) if isinstance(s, ir.CallStmt) and s.name.startswith(prefix)]


# ------------------------------------------------------------------ outlining


def test_outlined_nest_arguments_follow_liveness():
    """relaxp: the max-change reduction DIFF is read after the nest (inout), N only read
    (in), the loop variable I is dead after it (local to the kernel)."""
    k, sf = _kernel(SAMPLES / "relax_io.f", "relaxp")
    do = next(s for s in ir.walk(k.body) if isinstance(s, ir.Do) and s.line == 14)
    o = outline(k, do, kernel_context(k).flow, "relaxp_l14", {x.name: x for x in sf.kernels})
    intents = {a.name: a.intent for a in o.kernel.args}
    assert intents == {"n": "in", "unew": "inout", "u": "in", "diff": "inout"}
    assert "i" in o.kernel.locals and o.actuals == ["n", "unew", "u", "diff"]
    # U(0:N+1) keeps its declared bounds: N is a dummy the routine never changes
    u = next(a for a in o.kernel.args if a.name == "u")
    assert ir.evaluate(u.dims[0].lower, {}) == 0 and ir.evaluate(u.dims[0].upper, {"n": 7}) == 8
    assert [r.var for r in o.kernel.body[0].info.reductions] == ["diff"]


def test_three_refused_samples_become_hybrid_ports(tmp_path):
    for f, name, nests in (("relax_io.f", "relaxp", 2), ("smooth_equiv.f", "smooth3", 1),
                           ("vinit_entry.f", "vinit", 1)):
        port, k, _ = _hybrid(SAMPLES / f, name)
        assert port.mode == "hybrid" and len(port.hybrid["outlined"]) == nests
        gen = _reparse(port, tmp_path / name)
        g = next(x for x in gen.kernels if x.name == name)
        assert len(_calls(g.body, f"{name}_l")) == nests
        assert f"{name}_kokkos_mod" in g.uses
        # nothing else changed: every statement the original keeps is still there, by line kind
        kept = [type(s).__name__ for s in ir.walk(k.body) if not any(
            s is t for o in port.hybrid["outlined"] for d in ir.walk(k.body)
            if isinstance(d, ir.Do) and d.line == o["line"] for t in ir.walk([d]))]
        assert [type(s).__name__ for s in ir.walk(g.body) if not (isinstance(s, ir.CallStmt) and
                s.name.startswith(f"{name}_l"))] == kept


def test_vinit_call_keeps_the_do_label_jumped_to():
    port, _, _ = _hybrid(SAMPLES / "vinit_entry.f", "vinit")
    text = port.files["vinit_entry.f"]
    line = next(ln for ln in text.splitlines() if "VINIT_L17_KOKKOS" in ln and not ln.startswith("C"))
    assert line[:5].strip() == "5" and line[5] == " " and line[6:].startswith("CALL")


def test_equivalence_class_touched_twice_stays_fortran():
    port, _, _ = _hybrid(DATA / "legacy.f", "eqv2")
    assert [o["line"] for o in port.hybrid["outlined"]] == [50]
    kept = {(x["code"], x["line"]) for x in port.hybrid["kept"]}
    assert ("equivalence-aliasing", 53) in kept and ("equivalence", 43) in kept


def test_entry_between_nests_both_outlined():
    port, _, _ = _hybrid(DATA / "legacy.f", "entr")
    assert [o["line"] for o in port.hybrid["outlined"]] == [64, 68]
    assert ("entry", 67) in {(x["code"], x["line"]) for x in port.hybrid["kept"]}


def test_shared_do_termination_keeps_the_label_for_the_loop_that_stays(tmp_path):
    port, _, _ = _hybrid(DATA / "legacy.f", "shared")
    assert [o["line"] for o in port.hybrid["outlined"]] == [81]
    g = next(x for x in _reparse(port, tmp_path).kernels if x.name == "shared")
    outer = next(s for s in g.body if isinstance(s, ir.Do))
    assert outer.var == "j" and outer.end_label == 10
    body = [s for s in outer.body]
    assert isinstance(body[0], ir.CallStmt) and isinstance(body[-1], ir.Continue) and body[-1].label == 10


def test_goto_into_a_nest_keeps_it_fortran(tmp_path):
    p = _write(tmp_path, "jump.f", """\
      SUBROUTINE JUMP(N, A, K)
      INTEGER N, K, I
      DOUBLE PRECISION A(N)
      IF (K .GT. 0) GOTO 10
      DO 20 I = 1, N
         A(I) = 0.0D0
   10    A(I) = A(I) + 1.0D0
   20 CONTINUE
      END
""")
    k, sf = _kernel(p, "jump")
    with pytest.raises(TranslationRefused) as e:
        hybrid_port(k, sf, text=p.read_text())
    codes = [(d.code, d.line) for d in e.value.diagnostics]
    assert codes[0][0] == "no-parallel-nest" and ("goto-into-nest", 5) in codes


def test_assumed_size_bounds_come_from_the_routine():
    """daxpy's strided nest: its induction variables start from values set outside it, so
    the nest alone cannot bound DY(*); the routine's access bound (1+(N-1)*|INCY|) can."""
    k, sf = _kernel(SAMPLES / "blas1.f", "daxpy")
    do = next(s for s in ir.walk(k.body) if isinstance(s, ir.Do) and s.line == 24)
    o = outline(k, do, kernel_context(k).flow, "daxpy_l24", {x.name: x for x in sf.kernels})
    dy = next(a for a in o.kernel.args if a.name == "dy")
    assert ir.evaluate(dy.dims[0].upper, {"n": 10, "incy": -3}) == 28
    assert {a.name: a.intent for a in o.kernel.args}["iy"] == "inout"  # read before written in the nest


def test_arrays_without_trusted_bounds_get_lbound_ubound():
    port, _, _ = _hybrid(DATA / "heatprog.f90", "heatprog")
    assert len(port.hybrid["outlined"]) == 4
    args = port.hybrid["outlined"][1]["arguments"]  # the stencil: module allocatables u, unew
    assert "LBOUND(unew, 1)" in args and "UBOUND(u, 1)" in args


def test_auto_mode_prefers_a_full_port():
    k, sf = _kernel(SAMPLES / "blas1.f", "daxpy")
    assert translate_mode(k, sf, None, "auto").mode == "full"
    assert translate_mode(k, sf, None, "hybrid").mode == "hybrid"
    k, sf = _kernel(SAMPLES / "relax_io.f", "relaxp")
    with pytest.raises(TranslationRefused):
        translate_mode(k, sf, None, "full")
    assert translate_mode(k, sf, None, "auto").hybrid["why"][0].startswith("line 21: [io-in-kernel]")


def test_no_mode_ports_a_routine_without_loops():
    k, sf = _kernel(DATA / "legacy.f", "xerr")
    with pytest.raises(TranslationRefused) as e:
        translate_mode(k, sf, None, "auto")
    codes = [d.code for d in e.value.diagnostics]
    assert codes[0] == "io-in-kernel" and codes[-1] == "no-parallel-nest"  # the full refusal first


# ------------------------------------------------------------------ the generated text


def test_fixed_form_calls_stay_in_columns_7_to_72(tmp_path):
    p = _write(tmp_path, "wide.f", """\
      SUBROUTINE WIDE(NPOINTS, ALPHACOEF, XVECTORA, YVECTORB, ZVECTORC,
     &                WVECTORD)
      INTEGER NPOINTS, I
      DOUBLE PRECISION ALPHACOEF, XVECTORA(NPOINTS), YVECTORB(NPOINTS)
      DOUBLE PRECISION ZVECTORC(NPOINTS), WVECTORD(NPOINTS)
      DO 10 I = 1, NPOINTS
         WVECTORD(I) = ALPHACOEF*XVECTORA(I) + YVECTORB(I)*ZVECTORC(I)
   10 CONTINUE
      WRITE (*, *) 'WIDE DONE'
      END
""")
    port, _, _ = _hybrid(p, "wide")
    lines = port.files["wide.f"].splitlines()
    code = [ln for ln in lines if ln[:1] not in "Cc*!"]
    assert all(len(ln) <= 72 for ln in code)
    call = [i for i, ln in enumerate(lines) if "CALL WIDE_L6_KOKKOS" in ln][0]
    assert lines[call + 1][5] == "&" and lines[call + 1][:5] == "     "
    use = lines.index("      USE WIDE_KOKKOS_MOD")
    assert lines[use - 1].startswith("     &")  # after the head's continuation line
    g = next(x for x in _reparse(port, tmp_path).kernels if x.name == "wide")
    assert len(_calls(g.body, "wide_l6")[0].args) == len(port.hybrid["outlined"][0]["arguments"]) == 6


FREE = """\
subroutine omp_axpy_with_a_rather_long_name(npoints, alpha_coefficient, x_vector_input, y_vector_input, z_out)
  implicit none
  integer, intent(in) :: npoints
  double precision, intent(in) :: alpha_coefficient, x_vector_input(npoints), y_vector_input(npoints)
  double precision, intent(out) :: z_out(npoints)
  integer :: i
  !$omp parallel do private(i) &
  !$omp& schedule(static)
  do i = 1, npoints
    z_out(i) = alpha_coefficient * x_vector_input(i) + y_vector_input(i)
  end do
  !$omp end parallel do
  write (*, *) 'done', z_out(1)
end subroutine omp_axpy_with_a_rather_long_name
"""


def test_free_form_loop_directives_go_with_the_nest(tmp_path):
    p = _write(tmp_path, "fr.f90", FREE)
    port, _, _ = _hybrid(p, "omp_axpy_with_a_rather_long_name")
    text = port.files["fr.f90"]
    assert not re.search(r"!\$omp", text, re.I)
    assert all(len(ln) <= 132 for ln in text.splitlines())
    g = _reparse(port, tmp_path).kernels[0]
    assert len(_calls(g.body, "omp_axpy")) == 1


REGION = """\
subroutine reg(n, x, s)
  integer :: n, i
  double precision :: x(n), s
  s = 0.0d0
  !$omp parallel reduction(+:s)
  !$omp do
  do i = 1, n
    x(i) = 2.0d0 * x(i)
  end do
  !$omp end do
  !$omp single
  s = s + 1.0d0
  !$omp end single
  !$omp end parallel
end subroutine reg
"""


def test_an_openmp_parallel_region_around_a_nest_runs_as_serial_code(tmp_path):
    """TeaLeaf's kernels open an OpenMP parallel region and share its loops with !$omp do:
    the hybrid copy removes the region's directives (a kernel launched inside would run
    once per thread), the nest runs as a Kokkos kernel, the rest in order."""
    p = _write(tmp_path, "reg.f90", REGION)
    port, _, _ = _hybrid(p, "reg")
    text = port.files["reg.f90"]
    assert not [ln for ln in text.splitlines() if re.match(r"\s*!\$omp", ln, re.I)]
    assert ("openmp-region-removed", 5) in [(x["code"], x["line"]) for x in port.hybrid["kept"]]
    g = _reparse(port, tmp_path).kernels[0]
    assert len(_calls(g.body, "reg_l")) == 1


def test_a_region_asking_which_thread_runs_it_stays_fortran(tmp_path):
    p = _write(tmp_path, "regt.f90", REGION.replace("  s = s + 1.0d0\n", "  s = s + omp_get_thread_num()\n"))
    k, sf = _kernel(p, "reg")
    with pytest.raises(TranslationRefused) as e:
        hybrid_port(k, sf, text=p.read_text())
    d = next(d for d in e.value.diagnostics if d.code == "openmp-region")
    assert d.line == 7 and "asks which thread runs it" in d.message


def test_nests_among_preprocessor_branches_are_cut_out_with_them(tmp_path):
    """CCS-QCD writes its loop headers twice, ``#ifdef _OPENACC`` / ``#else`` / ``#endif``
    between the DO lines and one body: every such nest stayed Fortran
    (``preprocessor-in-nest``) and its solver had no kernel. The copy now replaces the nest
    with the groups it shares lines with (the branch this build takes is the one the IR
    holds); a nest in one branch of an enclosing group leaves the other branch as it was. A
    ``#define`` among the lines, or a statement of the routine in the same branches, keeps
    the nest Fortran."""
    port, _, _ = _hybrid(DATA / "ppnest.F90", "ppnest")
    assert [o["line"] for o in port.hybrid["outlined"]] == [15, 27]
    kept = {x["line"]: x for x in port.hybrid["kept"] if x["code"] == "preprocessor-in-nest"}
    assert "#define" in kept[37]["message"] and "statement at line 43" in kept[43]["message"]
    text = port.files["ppnest.F90"]
    assert "!$acc" not in text and "!$omp" not in text and "OpenACC build only" not in text
    assert "#ifdef _OPENACC\n  do i = 1, n\n#else\n  s = 0.5d0 * s" in text  # the refused nest as it was
    assert "#ifdef PF_WITH_HALO\n  do j = 1, m\n    a(1, j) = a(n, j)\n  end do\n#else\n  s = 0.0d0\n" in text
    assert "preprocessor branches (lines 9-20)" in text
    g = _reparse(port, tmp_path).kernels[0]
    assert len(_calls(g.body, "ppnest_l")) == 2


def test_a_private_module_variable_never_assigned_is_a_constant():
    sf = parse_file(str(DATA / "modstate.f90"), use_cache=False)
    k = next(x for x in sf.kernels if x.name == "kconst")
    assert not k.module_vars and k.locals["kind_a"].parameter == 1 and k.locals["kind_b"].parameter == 2
    m = next(x for x in sf.kernels if x.name == "mscale")
    assert "ncalls" in m.module_vars  # assigned: state (and public)


def test_nest_from_an_include_file_stays_fortran(tmp_path):
    (tmp_path / "loop.inc").write_text("      DO 10 I = 1, N\n         X(I) = 0.0D0\n   10 CONTINUE\n")
    p = _write(tmp_path, "inc.f", """\
      SUBROUTINE INC(N, X)
      INTEGER N, I
      DOUBLE PRECISION X(N)
      INCLUDE 'loop.inc'
      END
""")
    k, sf = _kernel(p, "inc")
    with pytest.raises(TranslationRefused) as e:
        hybrid_port(k, sf, text=p.read_text())
    assert "nest-not-in-source" in [d.code for d in e.value.diagnostics]


# ------------------------------------------------------------------ program output


def test_compare_output_numbers_by_magnitude():
    from port_fortran.harness.program_proof import compare_output

    ref = " step  20 total  1.89807499629009E+02 mid  0.94243584\n time 0.0102 s\n"
    # the last printed digit may round the other way; the timing line is ignored
    assert compare_output(ref, " step  20 total  1.89807499629010E+02 mid  0.94243585\n time 9.9 s\n",
                          ignore=[r"^ time"]).matched
    bad = compare_output(ref, " step  20 total  1.89807501629009E+02 mid  0.94243584\n time 0.0102 s\n")
    assert not bad.matched and bad.first_difference["line_ref"] == 1
    assert not compare_output(" n = 12\n", " n = 13\n").matched  # integers exactly
    assert not compare_output(" done\n", " done\n extra\n").matched
    assert not compare_output(" x = 1.5\n", " y = 1.5\n").matched
    # Fortran's exponent spellings are numbers: D and E alike, 3-digit exponents without a letter
    assert compare_output(" 0.1234-100 1.0D+00\n", " 0.1235-100 1.0E+00\n").matched
    assert not compare_output(" 0.1234-100\n", " 0.1237-100\n").matched


def test_timings_are_the_numbers_a_slower_build_prints_differently():
    from port_fortran.harness.program_proof import ProgramRun, compare_output, compare_runs, timing_mask

    ref = " checksum  12.5000 iters 40\n elapsed 0.0102 s rate 981.2\n"
    slow = " checksum  12.5000 iters 40\n elapsed 0.0714 s rate 140.1\n"
    mask = timing_mask(ref, slow)
    assert mask == {(1, 0), (1, 1)}  # line 2's two numbers; the checksum and count stay compared
    new = " checksum  12.5000 iters 40\n elapsed 0.0031 s rate 3227.0\n"
    assert not compare_output(ref, new).matched
    got = compare_output(ref, new, mask=mask)
    assert got.matched and got.masked == 2 and got.numbers_compared == 2
    # a wrong checksum is still caught; outputs of another shape leave nothing out
    assert not compare_output(ref, new.replace("12.5000", "12.5020"), mask=mask).matched
    assert timing_mask(ref, slow + " one more line\n") == frozenset()
    # standard error is output too (a suite's array dump); gfortran's note at STOP is not
    a = ProgramRun(0, " done\n", " 1.000 2.000\n", 0.1)
    b = ProgramRun(0, " done\n", " 1.000 2.500\nNote: The following floating-point exceptions are signalling: "
                          "IEEE_UNDERFLOW_FLAG\n", 0.1)
    bad = compare_runs(a, b)
    assert not bad.matched and "standard error" in bad.first_difference["why"]
    assert compare_runs(a, ProgramRun(0, " done\n", b.stderr.replace("2.500", "2.000"), 0.1)).matched


# ------------------------------------------------------------------ reports and database


def test_report_carries_hybrid_ports(tmp_path):
    import jsonschema

    from port_fortran.reports.collect import collect_report
    from port_fortran.reports.db import RunDB
    from port_fortran.reports.render import load_schema, render_reports
    from port_fortran.translate.hybrid import summary

    port, _, _ = _hybrid(SAMPLES / "relax_io.f", "relaxp")
    db = RunDB.in_dir(tmp_path)
    rid = db.start_run()
    db.upsert_kernel(rid, "relax_io.f:relaxp", "relax_io.f", "relaxp", 8, 26)
    db.set_kernel(rid, "relax_io.f:relaxp", status="verified", model="rules", mode="hybrid",
                  hybrid=summary(port.hybrid), patterns=port.patterns)
    db.finish_run(rid)
    rep = collect_report(db, rid)
    jsonschema.validate(rep, load_schema())
    k = rep["kernels"][0]
    assert k["mode"] == "hybrid" and k["hybrid"]["nests_outlined"] == 2 and k["hybrid"]["nests"] == 2
    assert ("io-in-kernel", 21) in {(x["code"], x["line"]) for x in k["hybrid"]["kept"]}
    assert rep["summary"]["by_mode"] == {"full": 0, "hybrid": 1}
    paths = render_reports(db, rid, tmp_path)
    assert "relaxp_l14_kokkos" in paths["md"].read_text() and "hybrid-table" in paths["html"].read_text()
    db.close()


def test_older_run_database_gets_the_mode_columns(tmp_path):
    import sqlite3

    from port_fortran.reports.db import RunDB, SCHEMA

    path = tmp_path / "port-fortran.db"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA.replace("    mode        TEXT NOT NULL DEFAULT '',          -- full | hybrid ('' until translated)\n", "")
                       .replace("    hybrid      TEXT NOT NULL DEFAULT '{}',        -- JSON: a hybrid port's nests, outlined kernels, what stays Fortran\n", ""))
    conn.close()
    db = RunDB(path)
    cols = {r["name"] for r in db.conn.execute("PRAGMA table_info(kernels)")}
    assert {"mode", "hybrid"} <= cols
    db.close()


def test_validator_wants_every_outlined_entry(tmp_path):
    from port_fortran.agents.validator import check_patterns, required_entries
    from port_fortran.translate import write_port

    port, _, _ = _hybrid(SAMPLES / "relax_io.f", "relaxp")
    write_port(port, tmp_path)
    entries = required_entries(tmp_path, "relaxp")
    assert entries == ["relaxp_l14_kokkos", "relaxp_l18_kokkos"]
    code = port.files["relaxp.kokkos.cpp"]
    assert check_patterns(code, "relaxp", entries=entries) == []
    cut = code[:code.index("extern \"C\" void relaxp_l18_kokkos")]
    assert [d.code for d in check_patterns(cut, "relaxp", entries=entries)] == ["missing-entry"]


# ------------------------------------------------------------------ integration: builds and proofs


def _assert_proven(k, sf, port, d, backends=("serial", "openmp")):
    """Write ``port`` to ``d`` and prove it against the original on each backend."""
    from port_fortran.harness.hybrid import make_harness
    from port_fortran.translate import write_port

    write_port(port, d)
    h = make_harness(k, sf, d)
    for b in backends:
        v = h.verify(b, seeds=1)
        assert v.passed, f"[{b}]: {v.reason}"


def _toolchain() -> str:
    return toolchain.missing()


@pytest.mark.integration
def test_nests_cut_out_with_their_preprocessor_branches_are_proven(tmp_path):
    if _toolchain():
        pytest.skip(_toolchain())
    k, sf = _kernel(DATA / "ppnest.F90", "ppnest")
    _assert_proven(k, sf, translate_mode(k, sf, None, "hybrid"), tmp_path / "pp")


@pytest.mark.integration
def test_generated_free_form_compiles_with_openmp(tmp_path):
    if not shutil.which("gfortran"):
        pytest.skip("gfortran is needed")
    p = _write(tmp_path, "fr.f90", FREE)
    port, _, _ = _hybrid(p, "omp_axpy_with_a_rather_long_name")
    out = tmp_path / "port"
    from port_fortran.translate import write_port
    write_port(port, out)
    for f in ("omp_axpy_with_a_rather_long_name_kokkos_mod.f90", "fr.f90"):
        r = subprocess.run(["gfortran", "-fopenmp", "-c", f], cwd=out, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


@pytest.mark.integration
@pytest.mark.timeout(1800)
def test_hybrid_ports_are_proven_on_serial_and_openmp(tmp_path):
    """An argument check calling an error routine, timers around the nests and a diagnostic
    WRITE (TIMED); EQUIVALENCE (EQV2); ENTRY (ENTR); shared DO termination (SHARED, hybrid
    mode); module state read and written (MSCALE); an OpenMP parallel region serialised
    around its nests (MREGION); an allocatable module array (MGROW) and one passed whole to a
    helper (MTRIG); a PRIVATE module
    procedure reading PRIVATE module state (PSCALE, through a copy of its file making them
    PUBLIC): each proven like a full port; then a wrong kernel is caught."""
    why = _toolchain()
    if why:
        pytest.skip(why)
    from port_fortran.harness.hybrid import HybridHarness, make_harness
    from port_fortran.translate import write_port

    srcs = {n: parse_file(str(DATA / f), use_cache=False)
            for n, f in (("timed", "legacy.f"), ("mscale", "modstate.f90"), ("pscale", "privmod.f90"))}
    for name, mode in (("timed", "auto"), ("eqv2", "auto"), ("entr", "auto"), ("shared", "hybrid"),
                       ("mscale", "auto"), ("mregion", "auto"), ("mgrow", "auto"), ("mtrig", "auto"),
                       ("pscale", "auto")):
        sf = srcs["mscale" if name in ("mscale", "mregion", "mgrow", "mtrig") else "pscale" if name == "pscale"
                  else "timed"]
        k = next(x for x in sf.kernels if x.name == name)
        port = translate_mode(k, sf, None, mode)
        assert port.mode == "hybrid", name
        d = tmp_path / name
        write_port(port, d)
        h = make_harness(k, sf, d)
        assert isinstance(h, HybridHarness)
        for b in ("serial", "openmp"):
            v = h.verify(b, seeds=1)
            assert v.passed, f"{name} [{b}]: {v.reason}"
    # a wrong kernel (the outlined copy of EQV2 weighs the middle point 0.6) fails the proof
    cpp = tmp_path / "eqv2" / "eqv2.kokkos.cpp"
    text = cpp.read_text()
    assert "w(1) * x(i - 1)" in text  # W(2)*X(I), indices shifted to 0-based
    cpp.write_text(text.replace("w(1) * x(i - 1)", "0.6 * x(i - 1)", 1))
    sf = srcs["timed"]
    h = make_harness(next(x for x in sf.kernels if x.name == "eqv2"), sf, tmp_path / "eqv2")
    v = h.verify("serial", seeds=1)
    assert not v.passed and "y" in v.reason


def test_a_scratch_array_only_the_nest_uses_is_a_local_of_its_kernel(tmp_path):
    """CCS-QCD's mult_eo_tzyx (the Wilson-Dirac hopping term): its scratch `yt` filled element
    by element in every iteration was an argument of the outlined kernel, so not private, and
    the nest ran as a single-iteration kernel; as a local of the kernel it is private and the
    nest parallel. Proven on serial and openmp."""
    k, sf = _kernel(DATA / "unrolled.f90", "unrolled")
    port = translate_mode(k, sf, None, "auto")
    assert port.mode == "hybrid" and "parallel_for" in port.patterns, port.notes
    mod = port.files["unrolled_kokkos_mod.f90"]
    assert "yt" not in mod  # not an argument
    # printed after the nest (an I/O statement the IR keeps unmodelled): its values matter there
    from port_fortran.fortran.privatize import nest_only_array
    printed = _write(tmp_path, "printed.f90", (DATA / "unrolled.f90").read_text().replace(
        "write(*, '(a, es12.4)') ' check: ', sum(c)", "write(*, '(a, es12.4)') ' check: ', sum(c), yt(1, 1)"))
    kp, _ = _kernel(printed, "unrolled")
    assert not nest_only_array(kp, kp.loops()[0], "yt") and nest_only_array(k, k.loops()[0], "yt")
    if not _toolchain():
        _assert_proven(k, sf, port, tmp_path / "unrolled")


def test_a_function_returning_an_array_is_a_hybrid_port():
    """Its C++ entry returns one value (a full port returned the View as a double and did not
    compile): refused as 'array-result' in full mode, hybrid in auto mode; only the Fortran
    driver (the hybrid harness's modern program too) can take the result."""
    from port_fortran.harness.drivers import fortran_driver, unsupported_reason

    k, sf = _kernel(DATA / "arrfun.f90", "outer2")
    with pytest.raises(TranslationRefused) as exc:
        translate_mode(k, sf, None, "full")
    assert exc.value.diagnostics[0].code == "array-result"
    assert translate_mode(k, sf, None, "auto").mode == "hybrid"
    assert "hybrid port" in unsupported_reason(k) and unsupported_reason(k, hybrid=True) == ""
    drv = fortran_driver(k)
    assert "real(8), allocatable :: r_result(:,:)" in drv and "r_result = outer2(" in drv
    assert "call pf_whdr(u, 2_8, int(lbound(r_result), 8)" in drv


@pytest.mark.integration
def test_a_function_returning_an_array_is_proven_through_its_result(tmp_path):
    why = _toolchain()
    if why:
        pytest.skip(why)
    from port_fortran.harness.hybrid import make_harness
    from port_fortran.translate import write_port

    k, sf = _kernel(DATA / "arrfun.f90", "outer2")
    d = tmp_path / "outer2"
    _assert_proven(k, sf, translate_mode(k, sf, None, "auto"), d)
    cpp = d / "outer2.kokkos.cpp"
    text = cpp.read_text()
    assert "+ 0.5 * x(i - 1)" in text
    cpp.write_text(text.replace("+ 0.5 * x(i - 1)", "+ 0.25 * x(i - 1)", 1))
    v = make_harness(k, sf, d).verify("serial", seeds=1)
    assert not v.passed and "result" in v.reason
    # a PURE function: its kernel's interface is pure (gfortran: "Subroutine call to
    # 'ramp_l...' at (1) is not PURE" before; BookLeaf's utils_kn_getconn, utils_kn_arth)
    k, sf = _kernel(DATA / "arrfun.f90", "ramp")
    port = translate_mode(k, sf, None, "auto")
    assert re.search(r"^    pure subroutine ramp_l\d+_kokkos\(", port.files["ramp_kokkos_mod.f90"], re.M)
    assert "pure" not in (d / "outer2_kokkos_mod.f90").read_text()
    write_port(port, tmp_path / "ramp")
    v = make_harness(k, sf, tmp_path / "ramp").verify("openmp", seeds=1)
    assert v.passed, v.reason


@pytest.mark.integration
@pytest.mark.timeout(1800)
def test_main_program_hybrid_port_matches_its_output(tmp_path):
    why = _toolchain()
    if why:
        pytest.skip(why)
    from port_fortran.cli import main

    out = tmp_path / "out"
    rc = main(["program", str(DATA / "heatprog.f90"), "--out", str(out), "--ignore", r"^ time ",
               "--backends", "serial,openmp"])
    assert rc == 0
    verdict = json.loads((out / "heatprog" / "verdict.json").read_text())
    assert all(v["passed"] and v["comparison"]["numbers_compared"] == 9 for v in verdict.values())
    # the same program with one kernel wrong: its printed totals differ
    cpp = out / "heatprog" / "heatprog.kokkos.cpp"
    text = cpp.read_text()
    assert "- 2.0 * u(" in text
    cpp.write_text(text.replace("- 2.0 * u(", "- 2.001 * u(", 1))
    from port_fortran.harness.program_proof import prove_program
    v = prove_program(DATA / "heatprog.f90", out / "heatprog", "serial", ignore=[r"^ time "])
    assert not v.passed and "differ" in v.reason


@pytest.mark.integration
@pytest.mark.timeout(1200)
def test_initialised_tables_are_constants_and_counters_state(tmp_path):
    """WSMOOTH's initialised weights are never assigned: a full port with a constant table;
    COUNTER assigns its initialised counter (SAVE state): a hybrid port. Both proven."""
    why = _toolchain()
    if why:
        pytest.skip(why)
    from port_fortran.harness.hybrid import make_harness
    from port_fortran.translate import write_port

    src = DATA / "tables.f90"
    sf = parse_file(str(src), use_cache=False)
    for name, mode in (("wsmooth", "full"), ("counter", "hybrid")):
        k = next(x for x in sf.kernels if x.name == name)
        port = translate_mode(k, sf, None, "auto")
        assert port.mode == mode, (name, port.notes)
        write_port(port, tmp_path / name)
        h = make_harness(k, sf, tmp_path / name)
        for b in ("serial", "openmp"):
            v = h.verify(b, seeds=1)
            assert v.passed, f"{name} [{b}]: {v.reason}"


def test_module_variables_are_driven_like_common_members():
    """A hybrid port's harness sets the module state the routine uses (scalars, arrays of
    constant shape, allocatable arrays it allocates) before the call and compares what it
    writes."""
    from port_fortran.config import Config
    from port_fortran.harness.members import driven_kernel
    from port_fortran.harness.drivers import fortran_driver
    from port_fortran.pipeline.stages import RealStages

    k, sf = _kernel(DATA / "modstate.f90", "mscale")
    port = RealStages(Config()).translate(k, sf, None)
    assert port.mode == "hybrid" and "scale" in port.hybrid["outlined"][0]["arguments"]
    d = driven_kernel(k)
    members = {a.name: (a.module, a.intent, [(x.lower.value, x.upper.value) for x in a.dims])
               for a in d.args if a.module}
    assert members == {"scale": ("state_mod", "in", []), "table": ("state_mod", "in", [(1, 4)]),
                       "last": ("state_mod", "inout", [(1, 4)]), "ncalls": ("state_mod", "inout", [])}
    drv = fortran_driver(d)
    assert "use state_mod, only: " in drv and "a_scale => scale" in drv and "a_last => last" in drv
    # an allocatable module array: the driver allocates it with the bounds the subscripts take
    g, sf = _kernel(DATA / "modstate.f90", "mgrow")
    assert RealStages(Config()).translate(g, sf, None).mode == "hybrid"
    dg = driven_kernel(g)
    grow = next(a for a in dg.args if a.name == "grow")
    assert grow.allocatable and grow.module == "state_mod" and grow.intent == "in"
    drv = fortran_driver(dg)
    assert "if (allocated(a_grow)) deallocate(a_grow)" in drv and "allocate(a_grow(lb(1):ub(1)))" in drv
    from port_fortran.harness.infer import infer
    assert infer(dg).args["grow"].dims == ["auto:auto"]


def test_a_module_array_passed_whole_to_a_helper_is_bounded_by_the_helpers_declaration(tmp_path):
    """SNAP's mms_flux_1 passes the module array ib to a helper declaring it cb(lc+1) with lc
    the module scalar nx: the harness allocates nx+1 elements, not an unknown extent; once
    the routine changes nx itself, the bound is not given."""
    from port_fortran.fortran.program_build import build_program
    from port_fortran.fortran.render import expr_str
    from port_fortran.harness.members import driven_kernel

    path = DATA / "modstate.f90"
    k = build_program([str(path)]).kernel(str(path), "mtrig")
    cb = next(a for a in driven_kernel(k).args if a.name == "cb")
    assert [(expr_str(lo), expr_str(hi)) for lo, hi in cb.access_bounds] == [("1", "nx+1")]
    assert [expr_str(hi) for _, hi in k.module_bounds["dx"]] == ["nx"]
    changed = tmp_path / "changed.f90"
    text = path.read_text().replace("  call tint(nx, cb, t)", "  nx = max(nx, 1)\n  call tint(nx, cb, t)")
    changed.write_text(text)
    k2 = build_program([str(changed)]).kernel(str(changed), "mtrig")
    assert k2.module_bounds["cb"] == [None] and k2.module_bounds["dx"] == [None]


def test_llm_prompt_says_what_stays_fortran(tmp_path):
    """With a model in the chain, a hybrid port's prompt names the kernels to write (the
    header's entries) and the statements that stay Fortran."""
    from port_fortran.agents.prompts import entry_signature, ir_summary, render
    from port_fortran.translate.hybrid import summary

    port, k, _ = _hybrid(SAMPLES / "relax_io.f", "relaxp")
    header = port.files["relaxp.kokkos.hpp"]
    sig = entry_signature(k, header)
    assert "relaxp_l14_kokkos(" in sig and "relaxp_l18_kokkos(" in sig and "relaxp_kokkos(" not in sig
    msgs = render("translate.j2", kernel=k, summary=ir_summary(k), signature=sig, header=header,
                  draft=port.files["relaxp.kokkos.cpp"], refusal="", hybrid=summary(port.hybrid))
    user = msgs[1][1]
    assert "HYBRID port" in user and "lines 14-17 -> `relaxp_l14_kokkos`" in user
    assert "line 21: [io-in-kernel] WRITE(6, 100) IT, DIFF" in user


@pytest.mark.integration
@pytest.mark.timeout(1200)
def test_error_routine_in_another_file_is_linked(tmp_path):
    """CHK2 checks its argument and calls XERR2, defined in another file: with both files
    as one program, the full port is refused (the callee does I/O), the hybrid port keeps
    the call and both drivers link XERR2's original object."""
    why = _toolchain()
    if why:
        pytest.skip(why)
    from port_fortran.config import Config
    from port_fortran.fortran.program_build import build_program
    from port_fortran.pipeline.stages import RealStages
    from port_fortran.translate import write_port

    files = [DATA / "twofile" / "chk2.f", DATA / "twofile" / "xerr2.f"]
    prog = build_program([str(f) for f in files], files=[str(f) for f in files])
    k, sf = prog.load(str(files[0]), "chk2")
    st = RealStages(Config())
    st.use_program(prog)
    port = st.translate(k, sf, None)
    assert port.mode == "hybrid" and ("call", 10) in {(x["code"], x["line"]) for x in port.hybrid["kept"]}
    write_port(port, tmp_path / "chk2")
    for b in ("serial", "openmp"):
        v = st.verify(k, sf, tmp_path / "chk2", b)
        assert v.passed, f"[{b}] {v.reason}"


def test_private_module_entities_are_made_public_in_a_copy_only():
    from port_fortran.harness.drivers import private_names, public_source, unsupported_reason
    from port_fortran.harness.publish import public_copy

    sf = parse_file(str(DATA / "privmod.f90"), use_cache=False)
    k = {x.name: x for x in sf.kernels}
    assert k["pscale"].private and private_names(k["pscale"]) == ["pscale", "factor"]
    text = public_source(DATA / "privmod.f90", k["pscale"])
    assert "public :: factor, pscale" in text and text.index("public :: factor") < text.index("contains")
    assert unsupported_reason(k["pscale"]) == ""
    # PRIVATE :: phidden: the copy drops it from that statement (the others stay private)
    text = public_source(DATA / "privmod.f90", k["phidden"])
    assert "private :: phidden" not in text.lower() and "public :: phidden" in text
    assert unsupported_reason(k["phidden"]) == ""
    src = ("module m\n  private :: a, b, &\n     & c\n  integer, private :: v\ncontains\nend module m\n")
    out = public_copy(src, "free", "m", ["b"]).split("\n")
    assert out[1:4] == ["  private :: a", "  private :: c", "  integer, private :: v"] and out[4].startswith("  public :: b")
    assert public_copy(src, "free", "m", ["v"]) is None  # PRIVATE attribute of a declaration: left alone
    fixed = "      MODULE M\n      PRIVATE :: A,\n     1 B\n      CONTAINS\n      END MODULE M\n"
    out = public_copy(fixed, "fixed", "m", ["a", "b"]).split("\n")
    assert out[1].startswith("c") and out[2].strip().startswith("public :: a, b") and out[3].strip() == "CONTAINS"
    # a CONTAINS of a derived type's bound procedures is not the module's
    src = "module m\n  private\n  type :: t\n  contains\n    procedure :: f\n  end type t\ncontains\nend module m\n"
    out = public_copy(src, "free", "m", ["g"]).split("\n")
    assert out[6].strip().startswith("public :: g") and out[7] == "contains"


F77_ONE = """\
      SUBROUTINE NUMBER(G, NX, NEL)
C     Nekbone's set_vert_box idiom (written here): G is declared (1), the F77 spelling of
C     an array of any length, and the outlined nest writes far past it; the WRITE keeps
C     the routine hybrid.
      INTEGER*8 G(1)
      INTEGER NX, NEL, E, I, L
      DO 20 E = 1, NEL
         DO 10 I = 1, NX
            L = I + NX*(E-1)
            G(L) = 7*L
   10    CONTINUE
   20 CONTINUE
      WRITE(6, *) 'numbered', NEL
      END
"""


@pytest.mark.skipif(shutil.which("gfortran") is None, reason="needs gfortran")
def test_an_f77_one_element_dummy_passes_to_the_outlined_nest(tmp_path):
    """The interface of an outlined nest gives every array's last dimension as '*': the
    kept code passes its own G(1), which gfortran refuses for an explicit larger extent
    ('Actual argument contains too few elements')."""
    src = _write(tmp_path, "number.f", F77_ONE)
    port, k, _ = _hybrid(src, "number")
    assert port.hybrid["outlined"], port.hybrid
    mod_name = next(n for n in port.files if n.endswith("_mod.f90"))
    assert re.search(r"integer\(c_int64_t\), intent\(inout\) :: g\(\*\)", port.files[mod_name])
    _compiles(port, tmp_path)


def _compiles(port, tmp_path):
    """The outlined nests' interface module and the kept source compile with gfortran."""
    gen = tmp_path / "gen"
    gen.mkdir()
    names = [next(n for n in port.files if n.endswith("_mod.f90")), port.hybrid["source"]]
    for name in names:
        (gen / name).write_text(port.files[name])
    for name in names:
        res = subprocess.run(["gfortran", "-c", name], cwd=gen, capture_output=True, text=True)
        assert res.returncode == 0, res.stderr


GIVEN_EXTENT = """\
      SUBROUTINE FLIPS(N, X)
C     FFTPACK's DSINQF shape (written here): X(*) sized by the configuration, N handed to
C     a routine (so N may change), a WRITE keeping the routine hybrid.
      INTEGER N, K
      DOUBLE PRECISION X(*)
      CALL TOUCH(N)
      DO 10 K = 2, N, 2
         X(K) = -X(K)
   10 CONTINUE
      WRITE(6, *) 'flipped', N
      END
"""


@pytest.mark.skipif(shutil.which("gfortran") is None, reason="needs gfortran")
def test_an_extent_given_by_the_configuration_is_not_asked_of_ubound(tmp_path):
    """An assumed-size dummy whose extent the configuration gave still reads '*' in the
    kept source: the outlined nest must not be passed UBOUND of it (gfortran: "'dim'
    argument of 'ubound' is not a valid dimension index")."""
    src = _write(tmp_path, "flips.f", GIVEN_EXTENT)
    k, sf = _kernel(src, "flips")
    x = k.arg("x")
    x.dims[-1] = ir.Dim(lower=None, upper=ir.Name("n", ftype=ir.INTEGER), extent_given=True)  # as apply_extents does
    port = hybrid_port(k, sf, text=src.read_text())
    assert port.hybrid["outlined"], port.hybrid
    text = port.files[port.hybrid["source"]]
    assert "UBOUND(X" not in text.upper()
    _compiles(port, tmp_path)


def test_a_sum_into_one_element_under_a_serial_loop_is_an_outlined_reduction():
    # trisolve.f's forward substitution kept in Fortran: its loop over i stays, the sum
    # into x(i) over j < i is outlined (reduced into a scalar inside the outlined nest)
    from port_fortran.records import TranslateOptions
    from port_fortran.translate.hybrid import _planner, find_nests, hybrid_port

    path = Path(__file__).parent / "data" / "translate" / "trisolve.f"
    sf = parse_file(str(path))
    k = sf.kernels[0]
    nests, kept, count = find_nests(k.body, _planner(k, sf, TranslateOptions(), None))
    assert [(d.var, d.line) for d in nests] == [("j", 10)] and kept[0].line == 8
    port = hybrid_port(k, sf, text=path.read_text())
    cpp = next(text for name, text in port.files.items() if name.endswith(".cpp"))
    assert "parallel_reduce" in cpp and "pf_r1 = x(i - 1);" in cpp


def test_a_serial_loop_around_a_serial_nest_names_the_inner_reason_too(tmp_path):
    # SNAP's inner_src: the loop over groups leaves early (EXIT), and the nest inside it
    # calls a routine that writes; the refusal names both, not only the EXIT
    p = _write(tmp_path, "groups.f90", """\
subroutine groups(ng, act, nx, q)
  integer, intent(in) :: ng, nx, act(ng)
  real(8), intent(inout) :: q(nx, ng)
  integer :: n, g, i
  do n = 1, ng
    g = act(n)
    if (g == 0) exit
    do i = 1, nx
      call note(q(i, g))
    end do
  end do
end subroutine groups

subroutine note(x)
  real(8), intent(inout) :: x
  write (*, *) x
  x = x + 1.0d0
end subroutine note
""")
    k, sf = _kernel(p, "groups")
    with pytest.raises(TranslationRefused) as e:
        translate_mode(k, sf, None, "hybrid")
    text = " ".join(d.message for d in e.value.diagnostics)
    assert "EXIT leaves the loop over n" in text
    assert "nor the loop inside it, DO i (line 8)" in text and "note" in text.split("nor the loop inside it")[1]
