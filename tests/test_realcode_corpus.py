"""The real-code corpus (bench/realcode/): corpus.yaml well formed, the independent routine
count, materialising from a git mirror, and the runner's counting and aggregation on a
fake run database. No code is built here."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REALCODE = Path(__file__).resolve().parent.parent / "bench" / "realcode"
sys.path.insert(0, str(REALCODE))

import corpus as cp  # noqa: E402
import fscan  # noqa: E402
import get  # noqa: E402
import run_corpus as rc  # noqa: E402
import speed  # noqa: E402


# ----------------------------------------------------------------------------- corpus.yaml


def test_corpus_yaml_is_well_formed():
    codes = cp.load()
    names = {c.name for c in codes}
    assert {"tealeaf", "snap", "miniweather", "livermore", "parres", "nekbone", "stream"} <= names
    for c in codes:
        assert len(c.commit) == 40 and all(ch in "0123456789abcdef" for ch in c.commit), c.name
        assert c.units and all(u.files for u in c.units), c.name
        assert all(len(e.reason) >= 10 for e in c.exclude), c.name
        r = c.repository.lower()
        assert r not in cp.HELD_OUT_REPOSITORIES and not any(w in r for w in cp.HELD_OUT_WORDS)
    nek = next(c for c in codes if c.name == "nekbone")
    held = {e.files for e in nek.exclude}
    assert {"src/blas.f", "src/dsygv.f", "src/ssygv.f"} <= held
    for u in nek.units:  # no unit reaches a held-out file through a glob either
        for g in u.files + u.context:
            assert not any(cp.glob_match(p, g) for p in held), (u.name, g)


def _code(**over):
    d = {"name": "x", "repository": "someone/x", "commit": "a" * 40, "fetch": ["*.f"], "files": ["*.f"],
         "units": [{"name": "u", "files": ["a.f"]}]}
    d.update(over)
    return {"codes": [d]}


@pytest.mark.parametrize("over, words", [
    ({"commit": "abc123"}, "40 lower-case hex"),
    ({"repository": "Reference-LAPACK/lapack"}, "held out"),
    ({"repository": "UK-MAC/CloverLeaf_ref"}, "held out"),
    ({"units": [{"name": "u", "files": []}]}, "names no files"),
    ({"units": [{"name": "u"}]}, "'files' is required"),
    ({"exclude": [{"files": "b.f"}]}, "needs a 'reason'"),
    ({"exclude": [{"files": "b.f", "reason": "no"}]}, "needs a 'reason'"),
    ({"units": []}, "no units"),
    ({"flags": ["-O2"]}, "unknown key"),
    ({"defines": ["A=1"]}, "mapping"),
    ({"units": [{"name": "u", "files": ["a.f"], "routines": {"f": {"args": {"x": {"size": 3}}}}}]}, "unknown key"),
])
def test_corpus_rejects_bad_entries(over, words):
    with pytest.raises(cp.CorpusError, match=words):
        cp.parse_corpus(_code(**over))


def test_a_units_routines_reach_its_run_configuration(tmp_path):
    """What a user states about a library's arrays (FFTPACK's wsave lengths from its doc)
    goes into the unit's run configuration as `routines`."""
    codes = cp.parse_corpus(_code(units=[{"name": "u", "files": ["a.f"],
                                          "routines": {"DCOST": {"args": {"WSAVE": {"extent": "3*n+15"}}}}}]))
    unit = codes[0].units[0]
    assert unit.routines == {"dcost": {"args": {"wsave": {"extent": "3*n+15"}}}}
    fft = next(c for c in cp.load() if c.name == "fftpack")
    lib = next(u for u in fft.units if u.name == "dfftpack")
    assert lib.routines["dcost"]["args"]["wsave"]["extent"] == "3*n+15"
    from types import SimpleNamespace
    cfg = rc.unit_config(SimpleNamespace(code=fft, unit=lib, src_root=None))  # no sources needed
    assert cfg["routines"]["dcost"]["args"]["x"] == {"extent": "n"} and cfg["backends"] == ["serial", "openmp"]
    assert "limits" not in cfg
    # the tool stops a slow proof itself (proof-over-budget) before the corpus watchdog would
    limited = rc.unit_config(SimpleNamespace(code=fft, unit=lib, src_root=None), kernel_limit=300)
    assert limited["limits"] == {"proof_s": 150}


def test_bundled_held_out_files_must_be_excluded():
    bad = _code(repository="Nek5000/Nekbone", exclude=[{"files": "src/blas.f", "reason": "held-out reference BLAS"}])
    with pytest.raises(cp.CorpusError, match="src/dsygv.f is a bundled copy"):
        cp.parse_corpus(bad)


def test_glob_match_keeps_star_within_a_directory():
    assert cp.glob_match("FORTRAN/nstream-mpi.F90", "FORTRAN/*-mpi.F90")
    assert not cp.glob_match("kernels/pack.f90", "*.f90")
    assert cp.glob_match("ports/a/b/c.f90", "ports/**")
    assert cp.glob_match("FORTRAN/stencil_openmp.F90", "FORTRAN/stencil_[opt]*.F90")
    assert not cp.glob_match("FORTRAN/stencil_serial.F90", "FORTRAN/stencil_[opt]*.F90")


# ----------------------------------------------------------------------------- routine count

FIXED = """\
c     a main program without a PROGRAM statement
      IMPLICIT DOUBLE PRECISION (A-H,O-Z)
      DIMENSION X(100)
      DO 10 I = 1, 100
   10 X(I) = 0.0D0
      CALL SUB(X, 100)
      END
      BLOCK DATA INIT
      COMMON /C/ Y
      DATA Y /1.0/
      END
      SUBROUTINE SUB(X, N)
      DOUBLE PRECISION X(N)
      WRITE(*,*) 'END SUBROUTINE DO 10 I=1,2'
      DO10 I=1,N
        X(I) = X(I) + 1
   10 CONTINUE
      END
      DOUBLE PRECISION FUNCTION F(A)
      DOUBLE PRECISION A
      DOUBLE = 2
      F = A*DOUBLE
      END
"""

FREE = """\
module m
  implicit none
  interface
     subroutine ext(a)
       real :: a
     end subroutine ext
  end interface
  type :: t
     integer :: k
  contains
     procedure :: p
  end type t
contains
  subroutine p(this)
    class(t) :: this
    this%k = 1
  end subroutine p
  real(kind=8) function g(n) result(s)
    integer :: n, i
    s = 0
    outer: do i = 1, n; s = s + i; end do outer
  end function g
end module m

program main
  use m
  call work()
contains
  subroutine work()
    integer :: i
    do while (i < 3)
      i = i + 1
    end do
  end subroutine work
end program main
"""


def test_scan_fixed_form_counts_unnamed_main_and_skips_block_data():
    rs = fscan.scan_statements(fscan.fixed_statements(list(enumerate(FIXED.split("\n"), 1))), "a.f")
    assert [(r.name, r.kind, r.line, r.has_loops, r.loops) for r in rs] == [
        ("(main)", "program", 2, True, 1), ("sub", "subroutine", 12, True, 1), ("f", "function", 19, False, 0)]
    assert rs[0].end_line == 7 and rs[1].end_line == 18


def test_scan_free_form_modules_interfaces_types_and_internal_procedures():
    rs = fscan.scan_statements(fscan.free_statements(list(enumerate(FREE.split("\n"), 1))), "m.f90")
    got = {r.name: (r.kind, r.host, r.internal, r.loops) for r in rs}
    assert got == {"p": ("subroutine", "m", False, 0), "g": ("function", "m", False, 1),
                   "main": ("program", None, False, 0), "work": ("subroutine", "main", True, 1)}
    assert {r.name: r.calls for r in rs}["main"] == ["work"]


def test_is_do_tells_loops_from_lookalikes():
    for s in ("do i = 1, n", "DO 10 I=1,N", "do10i=1,n", "10 do k=1,2", "lbl: do j=1,3", "do while (x)",
              "do concurrent (i=1:n)", "do"):
        assert fscan.is_do(s), s
    for s in ("double precision x", "done = 1", "do = 3", "dot = x*y", "end do"):
        assert not fscan.is_do(s), s


def test_scan_file_preprocesses_with_gfortran_and_keeps_original_lines(tmp_path):
    if subprocess.run(["gfortran", "--version"], capture_output=True).returncode != 0:
        pytest.skip("gfortran not installed")
    f = tmp_path / "k.F90"
    f.write_text(textwrap.dedent("""\
        #ifdef WITH_EXTRA
        subroutine extra()
        end subroutine extra
        #endif
        subroutine kept(n, x)
          integer :: n, i
          real :: x(n)
          do i = 1, n
            x(i) = 0
          end do
        end subroutine kept
        """))
    res = fscan.scan_file(f, name="k.F90")
    assert [(r.name, r.line, r.has_loops) for r in res.routines] == [("kept", 5, True)]
    res = fscan.scan_file(f, name="k.F90", defines={"WITH_EXTRA": None})
    assert [r.name for r in res.routines] == ["extra", "kept"]


def test_scan_counts_routines_of_included_headers_at_the_include_line(tmp_path):
    # CCS-QCD keeps every routine of its module in .h90 files it #includes: they are the
    # including file's routines (its object defines them), at the #include's line
    if subprocess.run(["gfortran", "--version"], capture_output=True).returncode != 0:
        pytest.skip("gfortran not installed")
    (tmp_path / "a.h90").write_text("subroutine a(x)\n  real :: x\n  x = 1\nend subroutine a\n"
                                    "#include \"b.h90\"\n")
    (tmp_path / "b.h90").write_text("subroutine b(n, x)\n  integer :: n, i\n  real :: x(n)\n"
                                    "  do i = 1, n\n    x(i) = 0\n  end do\nend subroutine b\n")
    f = tmp_path / "m.F90"
    f.write_text("module m\ncontains\n#include \"a.h90\"\n  subroutine own()\n  end subroutine own\nend module m\n")
    res = fscan.scan_file(f, name="m.F90", include_dirs=[str(tmp_path)])
    assert [(r.name, r.line, r.has_loops) for r in res.routines] == [("a", 3, False), ("b", 3, True), ("own", 4, False)]


# ----------------------------------------------------------------------------- get.py


def test_materialise_takes_the_pinned_commit_and_never_held_out_files(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "src").mkdir()
    (repo / "src" / "a.f").write_text("      SUBROUTINE A\n      END\n")
    (repo / "src" / "blas.f").write_text("      SUBROUTINE DAXPY\n      END\n")
    (repo / "src" / "mpi_dummy.h").write_text("      integer MPI_COMM_WORLD\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], check=True)
    first = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    (repo / "src" / "a.f").write_text("      SUBROUTINE A2\n      END\n")
    subprocess.run([*git, "commit", "-q", "-am", "two"], check=True)
    code = cp.parse_corpus({"codes": [{
        "name": "nek", "repository": "Nek5000/Nekbone", "commit": first, "fetch": ["src/*"], "files": ["src/*.f"],
        "copies": {"src/mpi_dummy.h": "mpif.h"},
        "exclude": [{"files": f"src/{n}", "reason": "held-out bundled copy"} for n in ("blas.f", "dsygv.f", "ssygv.f")],
        "units": [{"name": "u", "files": ["src/a.f"]}]}]})[0]
    dest = tmp_path / "dest"
    root, n = get.materialise(code, repo / ".git", dest)
    assert n == 2 and (root / "src" / "a.f").read_text().startswith("      SUBROUTINE A\n")
    assert not (root / "src" / "blas.f").exists()
    assert (root / cp.COPIES_DIR / "mpif.h").is_file()
    assert get.materialised_commit(dest, code) == first
    assert get.materialise(code, repo / ".git", dest) == (root, 0)  # already there


# ----------------------------------------------------------------------------- counting


def _fake_run(tmp_path: Path) -> tuple[Path, dict]:
    """A run database written with the tool's own layer, as a port-fortran run leaves it."""
    from port_fortran.reports.db import RunDB

    out = tmp_path / "out"
    db = RunDB.in_dir(out)
    run = db.start_run(command="port-fortran run ...")
    rows = [
        ("a.f90:axpy", "a.f90", "axpy", 3, "verified", "", "", ["parallel_for"]),
        ("a.f90:cumsum", "a.f90", "cumsum", 20, "verified", "", "", ["serial"]),
        ("a.f90:report", "a.f90", "report", 40, "refused", "a.f90:44: WRITE", "io-in-kernel", []),
        ("a.f90:setup", "a.f90", "setup", 60, "error", "compile stage error", "stage-error", []),
        ("a.f90:slow", "a.f90", "slow", 80, "failed", "stopped", "kernel-timeout", []),
        ("b.f:*", "b.f", "(file)", 7, "error", "b.f:7: syntax error", "parse-error", []),
        ("ctx.f90:helper", "ctx.f90", "helper", 1, "verified", "", "", ["reduce"]),
    ]
    for kid, f, name, line, status, reason, code, pats in rows:
        db.upsert_kernel(run, kid, f, name, line, line + 10)
        db.set_kernel(run, kid, status=status, reason=reason, reason_code=code, patterns=pats,
                      started=100.0, finished=112.5)
    db.close()
    meta = {"tool_root": str(tmp_path / "code"), "run_id": run, "status": "done", "exit_codes": [1],
            "timeouts": ["a.f90:slow"], "unit_timeout": []}
    return out, meta


SCAN = [
    {"file": "a.f90", "name": "axpy", "kind": "subroutine", "line": 3, "has_loops": True, "loops": 1},
    {"file": "a.f90", "name": "cumsum", "kind": "subroutine", "line": 20, "has_loops": True, "loops": 1},
    {"file": "a.f90", "name": "report", "kind": "subroutine", "line": 40, "has_loops": True, "loops": 2},
    {"file": "a.f90", "name": "setup", "kind": "subroutine", "line": 60, "has_loops": False, "loops": 0},
    {"file": "a.f90", "name": "slow", "kind": "subroutine", "line": 80, "has_loops": True, "loops": 3},
    {"file": "a.f90", "name": "drv", "kind": "program", "line": 100, "has_loops": True, "loops": 1},
    {"file": "a.f90", "name": "inner", "kind": "subroutine", "line": 120, "has_loops": True, "loops": 1,
     "internal": True, "host": "drv"},
    {"file": "b.f", "name": "(main)", "kind": "program", "line": 7, "has_loops": True, "loops": 4},
    {"file": "b.f", "name": "kern", "kind": "subroutine", "line": 50, "has_loops": True, "loops": 9},
]


def test_collect_joins_the_scan_with_the_run_and_counts_what_the_tool_never_saw(tmp_path):
    out, meta = _fake_run(tmp_path)
    rows = rc.collect_unit("c", "u", SCAN, rc.db_kernels(out, meta["run_id"]), meta, tmp_path / "code")
    by = {(r["file"], r["routine"]): r for r in rows}
    assert len(rows) == len(SCAN)  # the context file's kernel is not this unit's
    assert by[("a.f90", "axpy")]["status"] == "verified" and by[("a.f90", "axpy")]["parallel"]
    assert by[("a.f90", "cumsum")]["status"] == "verified" and not by[("a.f90", "cumsum")]["parallel"]
    assert (by[("a.f90", "report")]["status"], by[("a.f90", "report")]["reason_code"]) == ("refused", "io-in-kernel")
    assert by[("a.f90", "slow")]["status"] == "error" and by[("a.f90", "slow")]["reason_code"] == "kernel-timeout"
    assert by[("a.f90", "axpy")]["seconds"] == pytest.approx(12.5)
    assert (by[("a.f90", "drv")]["status"], by[("a.f90", "drv")]["reason_code"]) == ("lost", "main-program")
    assert by[("a.f90", "inner")]["reason_code"] == "internal-procedure"
    for name in ("(main)", "kern"):  # every routine of a file that did not parse is lost with its error
        r = by[("b.f", name)]
        assert (r["status"], r["reason_code"]) == ("lost", "parse-error") and "syntax error" in r["reason"]

    agg = rc.aggregate(rows)
    assert agg["routines"] == 9 and agg["with_loops"] == 8
    assert (agg["verified"], agg["verified_parallel"], agg["refused"], agg["failed"], agg["error"], agg["lost"]) \
        == (2, 1, 1, 0, 2, 4)
    assert agg["refused_by_code"] == {"io-in-kernel": 1}
    assert agg["pct_loops_verified"] == 25.0 and agg["pct_loops_verified_parallel"] == 12.5


def test_a_crashed_unit_run_makes_unrecorded_routines_errors(tmp_path):
    meta = {"tool_root": str(tmp_path), "run_id": None, "status": "error", "exit_codes": [70],
            "log_tail": "port-fortran: internal error: KeyError: 'x'"}
    rows = rc.collect_unit("c", "u", SCAN[:2], [], meta, tmp_path)
    assert [r["status"] for r in rows] == ["error", "error"]
    assert rows[0]["reason_code"] == "unit-run-failed" and "KeyError" in rows[0]["reason"]


def test_results_markdown_and_json(tmp_path):
    out, meta = _fake_run(tmp_path)
    rows = rc.collect_unit("c", "u", SCAN, rc.db_kernels(out, meta["run_id"]), meta, tmp_path / "code")
    results = {"date": "2026-01-02", "command": "run_corpus.py", "tool_commit": "abc", "machine": "m", "jobs": 2,
               "kernel_limit": 900.0, "seconds": 60.0, "units_done": 1, "units_error": 0, "units_missing": 0,
               "aggregate": rc.aggregate_by_code(rows, ["c"]), "units": [{"code": "c", "unit": "u", "files": ["a"],
                                                                           "status": "done", "exit_codes": [1]}],
               "corpus": [{"name": "c", "repository": "o/c", "commit": "a" * 40, "units": 1, "excluded": "-"}],
               "rows": rows}
    md, js = rc.write_results(results, tmp_path)
    text = md.read_text()
    assert "| c | 9 | 8 | 2 | 1 | 1 | 0 | 2 | 4 | 2 (25.0 %) | 1 (12.5 %) |" in text
    assert "| lost:parse-error | 2 | 2 |" in text
    assert json.loads(js.read_text())["aggregate"]["total"]["lost"] == 4


def test_bench_times_the_verified_ports_and_tabulates_issue_15s_ratios(tmp_path):
    """--bench: the unit's configuration asks for timings; the rows carry each verified port's
    Serial/F and OpenMP/F@T from the run database; the results show the counts within 1.1x
    and list the ports above it, slowest first."""
    from types import SimpleNamespace
    fft = next(c for c in cp.load() if c.name == "fftpack")
    cfg = rc.unit_config(SimpleNamespace(code=fft, unit=fft.units[0], src_root=None, bench_threads=2))
    assert cfg["bench"] is True and cfg["threads"] == 2
    assert rc.unit_config(SimpleNamespace(code=fft, unit=fft.units[0], src_root=None))["bench"] is False
    out, meta = _fake_run(tmp_path)
    db = rc._open_db(out)
    for kid, variant, threads, secs in [("a.f90:axpy", "fortran-serial", 1, 2.0), ("a.f90:axpy", "kokkos-serial", 1, 1.8),
                                        ("a.f90:axpy", "kokkos-openmp", 2, 1.0),
                                        ("a.f90:cumsum", "fortran-serial", 1, 1.0), ("a.f90:cumsum", "fortran-openmp", 2, 0.5),
                                        ("a.f90:cumsum", "kokkos-serial", 1, 1.5), ("a.f90:cumsum", "kokkos-openmp", 2, 0.6),
                                        ("a.f90:report", "fortran-serial", 1, 1.0)]:
        db.add_timing(meta["run_id"], kid, variant, secs, threads=threads)
    db.close()
    rows = rc.collect_unit("c", "u", SCAN, rc.db_kernels(out, meta["run_id"]), meta, tmp_path / "code",
                           rc.db_timings(out, meta["run_id"]))
    by = {r["routine"]: r for r in rows}
    assert by["axpy"]["timing"]["serial_ratio"] == 0.9 and by["axpy"]["timing"]["openmp_ratio"] == 0.5
    assert not by["axpy"]["timing"]["fortran_threads_is_openmp"]
    assert by["cumsum"]["timing"]["serial_ratio"] == 1.5 and by["cumsum"]["timing"]["openmp_ratio"] == 1.2
    assert "timing" not in by["report"]  # refused: its timings (if any) say nothing about a port
    text = "\n".join(speed.speed_section(rows, ["c"]))
    assert "| c | 2 | 1 of 2 | 1.16 | 1 of 2 | 0.77 |" in text
    assert text.index("Ports above 1.1x") < text.index("| c | cumsum (a.f90:20)")
    assert "axpy (a.f90" not in text


def test_merge_keeps_a_code_only_an_override_ran():
    import merge_results
    row = lambda code, unit, status: {"code": code, "unit": unit, "file": "a.f", "routine": f"{code}_{unit}",
                                      "kind": "subroutine", "line": 1, "status": status, "reason_code": "-",
                                      "reason": "", "has_loops": True, "parallel": True, "patterns": ["parallel_for"]}
    base_rows = [row("a", "u", "verified")]
    base = {"rows": base_rows, "units": [{"code": "a", "unit": "u", "status": "done", "seconds": 1.0}],
            "aggregate": rc.aggregate_by_code(base_rows, ["a"])}
    over = {"rows": [row("b", "v", "verified"), row("b", "v", "refused")],
            "units": [{"code": "b", "unit": "v", "status": "done", "seconds": 2.0}]}
    merged = merge_results.merge(base, [over])
    assert [c for c in merged["aggregate"] if c != "total"] == ["a", "b"]
    assert merged["aggregate"]["b"]["routines"] == 2 and merged["aggregate"]["total"]["routines"] == 3
    assert merged["seconds"] == 3.0


def test_merge_of_some_routines_replaces_only_their_rows():
    import merge_results
    row = lambda name, status: {"code": "a", "unit": "u", "file": "a.f", "routine": name, "kind": "subroutine",
                                "line": 1, "status": status, "reason_code": "-", "reason": "", "has_loops": True,
                                "parallel": True, "patterns": ["parallel_for"]}
    base_rows = [row("k1", "refused"), row("k2", "refused"), row("k3", "verified")]
    base = {"rows": base_rows, "units": [{"code": "a", "unit": "u", "status": "done", "seconds": 9.0}],
            "aggregate": rc.aggregate_by_code(base_rows, ["a"])}
    # a run of k1 alone: the other routines of the unit are not in it (lost there)
    over = {"rows": [row("k1", "verified"), row("k2", "lost"), row("k3", "lost")],
            "units": [{"code": "a", "unit": "u", "status": "done", "seconds": 1.0}]}
    merged = merge_results.merge(base, [over], frozenset({"k1"}))
    assert [r["status"] for r in merged["rows"]] == ["verified", "refused", "verified"]
    assert merged["seconds"] == 9.0 and merged["aggregate"]["total"]["verified"] == 2
    with pytest.raises(SystemExit):  # a routine asked for that the override does not have
        merge_results.merge(base, [{"rows": [], "units": over["units"]}], frozenset({"k1"}))


# ----------------------------------------------------------------------------- failure classes

import classify  # noqa: E402


def _row(status, code, reason, routine="k", unit="u", has_loops=True):
    return {"code": "c", "unit": unit, "file": "a.f", "routine": routine, "kind": "subroutine", "line": 1,
            "status": status, "reason_code": code, "reason": reason, "has_loops": has_loops}


def test_classes_split_calls_by_what_the_callee_is_and_take_the_first_matching_rule():
    rows = [
        _row("refused", "call-to-unknown", "a.f:3: [call-to-unknown] 'helper' is not defined in this source file"),
        _row("refused", "call-to-unknown", "a.f:4: [call-to-unknown] 'mpi_allreduce' is not defined", routine="k2"),
        _row("refused", "call-to-unknown", "a.f:5: [call-to-unknown] 'cpu_time' is not defined", routine="k3"),
        _row("refused", "call-to-unknown", "a.f:6: [call-to-unknown] 'qim' is not defined", routine="k4"),
        _row("error", "stage-error", "compiling the original failed (...): Fatal Error: Cannot open module file "
                                     "'m.mod' for reading", routine="k5"),
        _row("error", "stage-error", "building the reference driver failed: Error: Line truncated at (1)",
             routine="k6"),
        _row("failed", "wrong-result", "cp: shape differs: original (1:0,1:0), port (7:6,11:10)", routine="k7"),
        _row("lost", "parse-error", "the file was not read: a.f:1: expression nesting too deep", routine="k8"),
        _row("verified", "", "", routine="helper"),
    ]
    names = classify.program_routine_names(rows)
    groups = classify.classify(rows, classify.with_themes(classify.make_classes(names)))
    got = {r["routine"]: key for key, rs in groups.items() for r in rs}
    assert got == {"k": "refused-call-other-file", "k2": "refused-call-mpi", "k3": "refused-call-intrinsic",
                   "k4": "refused-call-undefined", "k5": "error-module-order", "k6": "error-driver-line-length",
                   "k7": "failed-empty-bounds", "k8": "lost-parse-nesting"}
    text = classify.render({"rows": rows, "date": "d", "command": "x", "tool_commit": "t"}, groups,
                           classify.with_themes(classify.make_classes(names)))
    assert "| Call to a routine defined in another file of the same program (`refused-call-other-file`) | refused | 1 |" \
        in text


@pytest.mark.integration
def test_compile_check_orders_modules_and_reads_the_objects(tmp_path):
    """gfortran compiles the unit in module order; nm's routines agree with the count."""
    root = tmp_path / "src" / "c"
    root.mkdir(parents=True)
    (root / "use.f90").write_text("subroutine s(n, x)\n  use m\n  integer :: n\n  real :: x(n)\n  x = x + k\n"
                                  "end subroutine s\n")
    (root / "m.f90").write_text("module m\n  integer :: k = 1\ncontains\n  subroutine mp()\n  end subroutine mp\n"
                                "  subroutine hidden()\n  end subroutine hidden\nend module m\n")
    (root / ".corpus-commit").write_text("a" * 40)
    code = cp.parse_corpus({"codes": [{"name": "c", "repository": "o/c", "commit": "a" * 40, "fetch": ["*.f90"],
                                       "files": ["*.f90"], "units": [{"name": "u", "files": ["*.f90"]}]}]})[0]
    symbols: dict = {}
    res = cp.compile_check(code, code.units[0], tmp_path / "src", symbols=symbols)
    assert res == {"m.f90": "", "use.f90": ""}
    assert symbols == {"m.f90": {"mp", "hidden"}, "use.f90": {"s"}}
    scan = rc.scan_unit(code, code.units[0], tmp_path / "src")
    assert {r["name"] for r in scan} == {"mp", "hidden", "s"}


def test_a_hand_written_reading_survives_regeneration(tmp_path):
    old = tmp_path / "FAILURES_d.md"
    old.write_text("# T\n\nold intro\n\n" + classify.PREFACE_START + "\nmy reading\n" + classify.PREFACE_END
                   + "\n\n## Classes\nold\n")
    new = classify.keep_preface("# T\n\nnew intro\n\n## Classes\nnew\n", old)
    assert new.index("new intro") < new.index("my reading") < new.index("## Classes\nnew")
    assert "old" not in new
