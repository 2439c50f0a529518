"""`port-fortran app` without builds: compile records from compiler command lines, the
compiler wrapper's link line and shims, the coherence calls the modern tree gets where host
code touches arrays a port may keep on the device, the application's spec file, and the
report's application section (schema, md, html)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from port_fortran.app import compile_db as CD
from port_fortran.app import wrapper as W
from port_fortran.errors import UserError

APPS = Path(__file__).resolve().parent.parent / "fortran_kernels" / "apps"


# ------------------------------------------------------------------ compile records


def test_a_compile_command_gives_sources_flags_defines_and_includes(tmp_path):
    c = CD.parse_command(str(tmp_path), ["gfortran", "-O2", "-cpp", "-DN=4", "-DFLAG", "-I", "inc", "-Jmods",
                                         "-fopenmp", "-ffixed-line-length-132", "-c", "src/a.F90", "-o", "obj/a.o"])
    assert c.sources == [str(tmp_path / "src" / "a.F90")]
    assert c.defines == {"N": "4", "FLAG": "1"}
    assert c.include_dirs == [str(tmp_path / "inc"), str(tmp_path / "mods")]  # -J: gfortran reads modules there
    assert "-cpp" in c.fflags and "-ffixed-line-length-132" in c.fflags and "-O2" not in c.fflags
    assert c.openmp and c.compile_only and not c.links
    assert c.output == str(tmp_path / "obj" / "a.o")


def test_a_link_command_and_a_query():
    link = CD.parse_command("/w", ["gfortran", "-o", "heat", "heat.o", "lib/libx.a", "-L/opt/x", "-lm"])
    assert link.links and not link.compile_only
    assert link.inputs == ["/w/heat.o", "/w/lib/libx.a"] and link.libraries == ["m"]
    q = CD.parse_command("/w", ["gfortran", "--version"])
    assert q.query and not q.links
    undef = CD.parse_command("/w", ["gfortran", "-DA=1", "-UA", "-c", "x.f"])
    assert undef.defines == {}


def test_relevant_drops_cmake_probes_and_foreign_commands_and_last_compile_wins(tmp_path):
    root = str(tmp_path / "app")
    cmds = [
        CD.parse_command(root + "/build/CMakeFiles/CMakeScratch/TryCompile-x", ["gfortran", "-c", "testF.f90"]),
        CD.parse_command("/elsewhere", ["gfortran", "-c", "/elsewhere/lib.f90"]),
        CD.parse_command(root, ["gfortran", "-O0", "-c", "a.f90"]),
        CD.parse_command(root, ["gfortran", "-c", "b.f"]),
        CD.parse_command(root, ["gfortran", "-fdefault-real-8", "-DX=2", "-c", "a.f90"]),  # a recompile
    ]
    rel = CD.relevant(cmds, root)
    assert [c.sources for c in rel] == [[root + "/a.f90"], [root + "/b.f"], [root + "/a.f90"]]
    recs = CD.sources_of(rel, root)
    assert list(recs) == [root + "/a.f90", root + "/b.f"]  # first position kept
    assert recs[root + "/a.f90"].fflags == ["-fdefault-real-8"] and recs[root + "/a.f90"].defines == {"X": "2"}
    cc = CD.compile_commands_json(rel, root)
    assert [e["file"] for e in cc] == [root + "/a.f90", root + "/b.f", root + "/a.f90"]
    assert all(e["directory"] == root and e["arguments"][0] == "gfortran" for e in cc)


def test_a_damaged_log_names_file_and_line(tmp_path):
    log = tmp_path / "c.jsonl"
    log.write_text(json.dumps({"cwd": "/w", "argv": ["gfortran", "-c", "a.f"]}) + "\n{not json\n")
    with pytest.raises(UserError, match=r"c\.jsonl:2: not a record"):
        CD.read_log(log)


# ------------------------------------------------------------------ the wrapper


def test_link_arguments_keep_what_a_cxx_linker_needs():
    keep, sources = W.link_arguments(["-O2", "a.o", "lib.a", "-o", "prog", "-L/x", "-lfoo", "main.f90",
                                      "-Wl,-rpath,/y", "-I", "inc", "-DX=1", "-fopenmp", "libz.so.1"])
    assert keep == ["a.o", "lib.a", "-o", "prog", "-L/x", "-lfoo", "-Wl,-rpath,/y", "-fopenmp", "libz.so.1"]
    assert sources == ["main.f90"]


def test_modern_commands_compile_as_fortran_and_link_with_the_ports(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = {"backends": {"serial": {"compile": ["-I/lib/mod"], "driver": ["g++", "-O3"],
                                   "libraries": ["/lib/libports.a", "-lkokkoscore", "-lgfortran"]}}}
    c = W.modern_commands(["-O2", "-c", "a.f90"], cfg, "serial", "/usr/bin/gfortran", str(tmp_path))
    assert c == [["/usr/bin/gfortran", "-O2", "-c", "a.f90", "-I/lib/mod"]]
    strict = W.modern_commands(["-std=f2018", "-c", "a.f90"], cfg, "serial", "gfortran", str(tmp_path))
    assert strict == [["gfortran", "-std=gnu", "-c", "a.f90", "-I/lib/mod"]]  # LOGICAL in BIND(C) interfaces
    link = W.modern_commands(["-O2", "-o", "heat", "heat.o", "main.f"], cfg, "serial", "/usr/bin/gfortran",
                             str(tmp_path))
    assert link[0][:2] == ["/usr/bin/gfortran", "-O2"] and "-c" in link[0] and "main.f" in link[0]
    obj = link[0][link[0].index("-o") + 1]
    assert link[1] == ["g++", "-O3", obj, "-o", "heat", "heat.o", "/lib/libports.a", "-lkokkoscore", "-lgfortran"]
    with pytest.raises(SystemExit):  # no ports for that backend: said, not linked without them
        W.modern_commands(["-o", "x", "x.o"], cfg, "cuda", "/usr/bin/gfortran", str(tmp_path))


def test_shims_record_a_build_that_names_its_compiler(tmp_path):
    """A makefile's `F77 = gfortran` reaches the shim first on PATH; the shim records the
    command and runs the real gfortran (found on PATH without the shims)."""
    from port_fortran.build_runner.toolchain import gfortran_path

    if not gfortran_path():
        pytest.skip("gfortran not installed")
    script = W.write_wrapper(tmp_path / "bin", tmp_path / "shims", {"fc": gfortran_path(), "fc_name": "gfortran",
                                                                   "backends": {}, "default_backend": "serial"})
    log = tmp_path / "log.jsonl"
    env = W.build_env(script, tmp_path / "shims", mode="record", record=log)
    assert env["PATH"].split(os.pathsep)[0] == str((tmp_path / "shims").resolve()) and env["FC"] == str(script)
    src = tmp_path / "p.f"
    src.write_text("      PROGRAM P\n      PRINT *, 'HI'\n      END\n")
    r = subprocess.run(["gfortran", "-O1", "-o", "p", "p.f"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert subprocess.run([str(tmp_path / "p")], capture_output=True, text=True).stdout.strip() == "HI"
    rec = CD.read_log(log)
    assert len(rec) == 1 and rec[0].sources == [str(src)] and rec[0].links and rec[0].arguments[0] == "gfortran"


def test_a_makefiles_gfortran_falls_back_to_the_fc_given_where_only_that_exists(tmp_path):
    """On a machine whose gfortran is only gfortran-13 (the H200 host), heat77's `gfortran`
    reached the shim and stopped the original build (`gfortran: command not found`); with
    FC naming a gfortran under another name, that compiler records and compiles in its place.
    Another compiler's name still fails as the shell would."""
    from port_fortran.build_runner.toolchain import gfortran_path

    if not gfortran_path():
        pytest.skip("gfortran not installed")
    only = tmp_path / "only"
    only.mkdir()
    (only / "gfortran-13").symlink_to(gfortran_path())
    for tool in ("as", "ld"):  # binutils, which the compiler runs from PATH
        (only / tool).symlink_to(shutil.which(tool))
    script = W.write_wrapper(tmp_path / "bin", tmp_path / "shims", {"fc": str(only / "gfortran-13"),
                                                                   "fc_name": "gfortran-13", "backends": {},
                                                                   "default_backend": "serial"})
    log = tmp_path / "log.jsonl"
    env = W.build_env(script, tmp_path / "shims", mode="record", record=log)
    env["PATH"] = os.pathsep.join([str((tmp_path / "shims").resolve()), str(only), "/usr/bin/nonexistent"])
    (tmp_path / "p.f").write_text("      PROGRAM P\n      PRINT *, 'HI'\n      END\n")
    r = subprocess.run([str(tmp_path / "shims" / "gfortran"), "-o", "p", "p.f"], cwd=tmp_path, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "gfortran-13 (the FC given) compiles in its place" in r.stderr
    assert subprocess.run([str(tmp_path / "p")], capture_output=True, text=True).stdout.strip() == "HI"
    assert CD.read_log(log)[0].arguments[0] == "gfortran"
    r = subprocess.run([str(tmp_path / "shims" / "ifort"), "-c", "p.f"], cwd=tmp_path, env=env,
                       capture_output=True, text=True) if (tmp_path / "shims" / "ifort").exists() else None
    assert r is None or (r.returncode == 127 and "ifort: command not found" in r.stderr)


def test_the_link_recipe_leaves_out_the_probes_dependency_file(tmp_path):
    """CMake 4 (the H200 host's) has ld write CMakeFiles/pf_link_probe.dir/link.d: copied
    into the recipe, the application's link failed (`cannot open dependency file`), so no
    modern tree had linked for CUDA."""
    from port_fortran.app.library import parse_link_line

    line = ("/k/bin/nvcc_wrapper -include /s/cuda13_shim.h -arch=sm_90 -O3 -DNDEBUG "
            "-Wl,--dependency-file=CMakeFiles/pf_link_probe.dir/link.d CMakeFiles/pf_link_probe.dir/pf_link_probe.f90.o "
            "-o pf_link_probe -Xlinker --dependency-file=x.d port_0/liba_kokkos.a -lgfortran")
    r = parse_link_line(line, tmp_path)
    assert r.driver == ["/k/bin/nvcc_wrapper", "-include", "/s/cuda13_shim.h", "-arch=sm_90", "-O3", "-DNDEBUG"]
    assert r.libraries == ["port_0/liba_kokkos.a", "-lgfortran"]


# ------------------------------------------------------------------ coherence


def _heat77_program():
    from port_fortran.fortran.program_build import build_program

    files = sorted(str(p) for p in (APPS / "heat77").glob("*.f"))
    return build_program([], files=files), files


def _modern(ported_names: set, residency: bool = True):
    """The modern text of heat77's files with ``ported_names`` as full ports (what
    ``App.modern_files`` does, without the ports' own edits)."""
    from port_fortran.app import coherence, modern
    from port_fortran.fortran.program import norm

    program, files = _heat77_program()
    texts = {norm(f): Path(f).read_text().split("\n") for f in files}
    forms = {norm(f): program.file(f).form for f in files}
    mains = [u for f in files for u in program.file(f).program_units]
    ported = {(norm(r.file), r.name): ("full", set()) for r in program.all_routines() if r.name in ported_names}
    pl = coherence.plan(program, mains, ported, texts, forms)
    out = {}
    for key, edits in pl.edits.items():
        fe = modern.FileEdits(Path(key).name, forms[key], edits, [], pl.calls.get(key, 0))
        out[Path(key).name] = modern.modern_text("\n".join(texts[key]), fe, Path(key).name).upper()
    return pl, out


def _routine(text: str, name: str) -> str:
    start = text.index(f"SUBROUTINE {name}")
    end = text.index("\n      END", start)
    return text[start:end]


def test_coherence_registers_commons_of_device_routines_and_syncs_host_code():
    """SWEEP ported: it and HEAT (its caller) are device routines and register the COMMON
    arrays U, UN at entry; DUMP (kept) reads U through COMMON: it syncs U to the host
    first; INIT writes U and UN: it marks them written by the host; in HEAT the host loop
    of lines 39-41 reads U (a sync before it), and the calls of device routines get none."""
    pl, out = _modern({"sweep"})
    assert pl.off is None
    assert {d.split(" ")[0] for d in pl.device_routines} == {"sweep", "heat"}
    assert "CALL PF_RESIDENT(U)" in _routine(out["sweep.f"], "SWEEP")
    dump = _routine(out["io.f"], "DUMP")
    assert "CALL PF_HOST_READ(U)" in dump and "PF_HOST_WRITE" not in dump
    init = _routine(out["init.f"], "INIT")
    assert "CALL PF_HOST_WRITE(U)" in init and "CALL PF_HOST_WRITE(UN)" in init
    heat = out["heat.f"]
    before_loop = heat[:heat.index("DO 110 J = 1, NY")]
    assert before_loop.rstrip().endswith("CALL PF_HOST_READ(U)")
    call_sweep = heat.index("CALL SWEEP")
    assert "PF_HOST" not in heat[heat.rindex("\n", 0, call_sweep - 1):call_sweep]  # no sync right before a port
    assert pl.count() == sum(t.count("CALL PF_") for t in out.values())


def test_no_ported_routine_means_no_coherence_calls():
    pl, out = _modern(set())
    assert pl.off is None and pl.count() == 0 and out == {} and pl.device_routines == []


# ------------------------------------------------------------------ the spec file


def test_app_spec_fills_what_the_command_line_left_out(tmp_path):
    from argparse import Namespace

    from port_fortran.app.commands import apply_spec

    (tmp_path / "port-fortran-app.yaml").write_text("build: make\nrun: ./a\ncheck: OK\nignore: [TIME]\n")
    args = Namespace(build=None, run="./b", check=None, ignore=[], output=[], rtol=None)
    apply_spec(args, tmp_path)
    assert (args.build, args.run, args.check, args.ignore, args.rtol) == ("make", "./b", "OK", ["TIME"], 1e-9)
    (tmp_path / "port-fortran-app.yaml").write_text("build: make\nrunn: ./a\n")
    with pytest.raises(UserError, match=r"port-fortran-app.yaml: key 'runn': unknown"):
        apply_spec(Namespace(build=None, run=None, check=None, ignore=[], output=[], rtol=None), tmp_path)


def test_an_application_tree_is_left_out_of_a_tree_given_above_it():
    from port_fortran.fortran.parse import discover

    found = discover([APPS.parent])
    assert found and not any(APPS in p.parents for p in found)
    assert any("heat77" in str(p) for p in discover([APPS / "heat77"]))


# ------------------------------------------------------------------ report


def _application(matched: bool) -> dict:
    diff = None if matched else {"line": 7, "expected": " FINAL HEAT 1.65E-01", "got": " FINAL HEAT 1.70E-01",
                                 "stream": "stdout"}
    return {
        "root": "/apps/heat77", "build": "make", "run": "./heat", "check": "SELF-CHECK PASSED", "ignore": ["TIME"],
        "matched": matched, "modern_tree": "/o/modern" if matched else "/o/modern.unverified", "original":
            {"serial": {"seconds": 0.5, "returncode": 0, "threads": 1}},
        "backends": [{"backend": "serial", "built": True, "ran": True, "matched": matched,
                      "reason": "" if matched else "line 7: FINAL HEAT 1.70E-01 where the original printed 1.65E-01",
                      "first_difference": diff, "original_seconds": 0.5, "modern_seconds": 0.25, "speedup": 2.0}],
        "ported": [{"name": "sweep", "file": "sweep.f", "line": 3, "mode": "full", "proof": "harness"}],
        "kept": [{"name": "dump", "file": "io.f", "line": 2, "code": "io-in-kernel", "reason": "OPEN statement"}],
        "left_out": [] if matched else [{"name": "bndry", "file": "bndry.f", "line": 3, "why": "output differs"}],
        "residency": {"on": True, "off_reason": "", "calls": 19},
    }


@pytest.mark.parametrize("matched", [True, False])
def test_report_has_the_application_section(tmp_path, matched):
    from port_fortran.reports.db import RunDB
    from port_fortran.reports.render import load_schema, render_reports

    db = RunDB.in_dir(tmp_path)
    rid = db.start_run(command="port-fortran app heat77")
    db.set_application(rid, _application(matched))
    paths = render_reports(db, rid, tmp_path)
    doc = json.loads(paths["json"].read_text())
    jsonschema.validate(doc, load_schema())
    assert doc["application"]["matched"] is matched
    md = paths["md"].read_text()
    section = md[md.index("## Application"):md.index("## Kernels")]
    row = next(line for line in section.splitlines() if line.startswith("| serial "))
    assert "| 500.00 ms | 250.00 ms | 2.00× |" in row  # original, modern, speed-up
    html = paths["html"].read_text()
    assert 'id="application"' in html
    if matched:
        assert "**matched**" in section and "| - |" in row
    else:
        assert "did NOT match" in section and "FINAL HEAT 1.70E-01" in row
        assert "Left out by `--keep-going`" in section and "bndry" in section
        assert 'id="application-left-out"' in html
    db.close()


# ------------------------------------------------------------------ the residency registry


@pytest.mark.integration
def test_residency_registry_with_a_mock_device_memory(tmp_path):
    """pf_runtime.hpp's registry (no Kokkos) against a device memory kept in separate host
    buffers that counts every copy (tests/data/app/registry_test.cpp): copies in only what
    the host changed, back only what a port wrote, nothing for a resident array reused."""
    import shutil as sh

    cxx = sh.which("g++") or sh.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    src = Path(__file__).parent / "data" / "app" / "registry_test.cpp"
    templates = Path(__file__).resolve().parent.parent / "port_fortran" / "kokkos_templates"
    exe = tmp_path / "registry_test"
    b = subprocess.run([cxx, "-std=c++17", "-O1", f"-I{templates}", str(src), "-o", str(exe)], capture_output=True,
                       text=True)
    assert b.returncode == 0, b.stderr[-2000:]
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "FAIL" not in r.stdout, r.stdout
    assert "passed: 0 failure(s)" in r.stdout


def test_reachable_follows_generic_interfaces_to_every_specific(tmp_path):
    """SNAP calls its MPI wrappers through generic names (`bcast`): every specific procedure
    is reached; a routine no program calls is not."""
    from port_fortran.app.commands import App
    from port_fortran.fortran.program_build import build_program

    (tmp_path / "m.f90").write_text(
        "module m\n  implicit none\n  interface scale\n    module procedure scale_1d, scale_2d\n  end interface\n"
        "contains\n  subroutine scale_1d(a, n)\n    integer, intent(in) :: n\n    real(8), intent(inout) :: a(n)\n"
        "    a = 2 * a\n  end subroutine\n  subroutine scale_2d(a, n)\n    integer, intent(in) :: n\n"
        "    real(8), intent(inout) :: a(n, n)\n    a = 2 * a\n  end subroutine\nend module m\n")
    (tmp_path / "p.f90").write_text(
        "program p\n  use m\n  implicit none\n  real(8) :: x(4)\n  x = 1\n  call scale(x, 4)\n  print *, x\n"
        "end program p\nsubroutine lonely(y)\n  real(8) :: y\n  y = 0\nend subroutine lonely\n")
    prog = build_program([], files=[str(tmp_path / "m.f90"), str(tmp_path / "p.f90")])
    mains = [u for f in prog.order for u in prog.file(f).program_units]
    names = {n for _, n in App.reachable(None, prog, mains)}
    assert {"scale_1d", "scale_2d"} <= names and "lonely" not in names
