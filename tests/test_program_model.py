"""The program model (fortran/program.py, fortran/interproc.py): files and trees on the
command line as one program — callees across files and trees, externals, module order,
intents through other files' callees, extents of assumed-size dummies from call sites and
from the configuration — and what the translator, `list` and the reports make of it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from port_fortran.cli import main
from port_fortran.config import Config
from port_fortran.errors import UserError
from port_fortran.fortran import ir
from port_fortran.fortran.program import load_program, scan_units
from port_fortran.fortran.program_build import build_program
from port_fortran.fortran.render import expr_str
from port_fortran.records import TranslationRefused
from port_fortran.translate import translate_kernel

DATA = Path(__file__).resolve().parent / "data" / "program"
A, B = DATA / "tree_a", DATA / "tree_b"


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("PORT_FORTRAN_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def prog():
    return build_program([A, B], routines={"gather2": {"args": {"src": {"extent": "k"}}}})


def test_calls_resolve_across_trees_and_externals_are_named(prog):
    k = prog.kernel(A / "kernels.f", "scale2")
    where = {c.name: c for c in prog.callees(k)}
    assert where["twice"].where == "tree" and where["twice"].routine.file == str(B / "helpers.f")
    assert where["report"].where == "tree"
    report = prog.kernel(B / "helpers.f", "report")
    ext = prog.callee(report, "mpi_barrier")
    assert ext.where == "external" and ext.library == "MPI" and ext.routine is None
    # callers, and what a kernel reaches transitively
    assert {r.name for r in prog.callers(prog.kernel(B / "helpers.f", "twice"))} == {"scale3", "scale2"}
    assert prog.routine_json(k)["externals"] == ["mpi_barrier"]
    # purity, transitively: twice is pure, scale2 reaches an external routine
    assert prog.impurities(prog.kernel(B / "helpers.f", "twice")) == []
    assert prog.routine_json(prog.kernel(A / "kernels.f", "scale3"))["pure"] is True
    why = prog.impurities(k)
    assert why[0].code == "impure-call" and "mpi_barrier" in why[0].message
    assert set(prog.externals()) == {"mpi_barrier", "ddot"}
    assert prog.callee(prog.kernel(A / "kernels.f", "mdot"), "ddot").library == "BLAS/LAPACK"
    # a module procedure of a module defined in another file
    clamp = prog.callee(prog.kernel(A / "clip.f90", "clip"), "clamp")
    assert clamp.where == "module" and clamp.routine.module == "limits_mod"


def test_module_files_come_first_in_parse_and_compile_order(prog):
    clip = str(A / "clip.f90")
    assert prog.module_files(clip) == [str(B / "limits_mod.f90")]
    assert prog.compile_order([clip]) == [str(B / "limits_mod.f90"), clip]
    assert prog.file_for_symbol("__limits_mod_MOD_clamp") == str(B / "limits_mod.f90")
    assert prog.file_for_symbol("twice_") == str(B / "helpers.f")
    assert prog.file_for_symbol("mpi_barrier_") is None


def test_scan_units_reads_modules_and_uses():
    free = "module a\n  use b, only: x\n  use, intrinsic :: iso_c_binding\ncontains\n module procedure q\nend module a\n"
    u = scan_units(free, "free")
    assert u.modules == ["a"] and u.uses == ["b", "iso_c_binding"]
    fixed = "c     use nothing\n      USE  geom\n      program p\n"
    assert scan_units(fixed, "fixed").uses == ["geom"]


def test_parse_order_puts_module_definers_first(tmp_path):
    (tmp_path / "a_user.f90").write_text("subroutine u(x)\n  use zz_mod\n  real x\n  x = c\nend subroutine\n")
    (tmp_path / "z_mod.f90").write_text("module zz_mod\n  real, parameter :: c = 2.0\nend module zz_mod\n")
    order = []

    def parse(p, inc, d):
        from port_fortran.fortran import parse_file
        order.append(Path(p).name)
        return parse_file(p, include_dirs=inc, defines=d)

    prog = build_program([tmp_path], parse=parse)
    assert order == ["z_mod.f90", "a_user.f90"]  # the definer first...
    seen = {}

    def parse_with_modules(p, inc, d, modules):
        from port_fortran.fortran import parse_file
        seen[Path(p).name] = {m: Path(sf.path).name for m, sf in modules.items()}
        return parse_file(p, include_dirs=inc, defines=d)

    build_program([tmp_path], parse=parse_with_modules)
    assert seen == {"z_mod.f90": {}, "a_user.f90": {"zz_mod": "z_mod.f90"}}  # the hook: used modules, parsed
    assert [Path(p).name for p in prog.order] == ["a_user.f90", "z_mod.f90"]  # ...the program in given order
    assert prog.files[str(tmp_path / "z_mod.f90")].module_entities == {"zz_mod": {"c": "parameter"}}


def test_ambiguous_names_prefer_the_callers_directory(tmp_path):
    for d in ("one", "two"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "t.f").write_text(f"      subroutine tick(x)\n      x = {1 if d == 'one' else 2}\n      end\n")
    (tmp_path / "two" / "k.f").write_text("      subroutine k(x)\n      call tick(x)\n      end\n")
    (tmp_path / "main.f").write_text("      subroutine top(x)\n      call tick(x)\n      end\n")
    prog = build_program([tmp_path / "one", tmp_path / "two", tmp_path / "main.f"])
    near = prog.callee(prog.kernel(tmp_path / "two" / "k.f", "k"), "tick")
    assert near.where == "tree" and near.routine.file == str(tmp_path / "two" / "t.f")
    far = prog.callee(prog.kernel(tmp_path / "main.f", "top"), "tick")
    assert far.where == "ambiguous" and far.routine.file == str(tmp_path / "one" / "t.f")
    assert [r.file for r in far.alternatives] == [str(tmp_path / "two" / "t.f")]
    assert list(prog.ambiguous()) == ["tick"]


def test_generic_interfaces_and_module_arrays_are_not_externals(tmp_path):
    (tmp_path / "m.f90").write_text(
        "module m\n  real :: tab(10)\n  interface put\n    module procedure put_i, put_r\n  end interface\n"
        "contains\n  subroutine put_i(x)\n    integer x\n  end subroutine\n  subroutine put_r(x)\n    real x\n"
        "  end subroutine\nend module m\n")
    (tmp_path / "u.f90").write_text("subroutine u(x, y)\n  use m\n  real x, y\n  y = tab(3)\n  call put(x)\n"
                                    "end subroutine\n")
    prog = build_program([tmp_path])
    k = prog.kernel(tmp_path / "u.f90", "u")
    assert prog.callee(k, "put").where == "generic"
    assert {r.name for r in prog.callee(k, "put").alternatives} == {"put_i", "put_r"}
    # the front end reads m's declarations: tab(3) is an element of the module array, not a call
    assert "tab" not in k.calls and "tab" in k.module_vars
    assert prog.externals() == {}


def test_intents_follow_callees_in_other_files(tmp_path):
    (tmp_path / "k.f").write_text("      subroutine k(n, a, s)\n      integer n\n      real a(n), s\n"
                                  "      call sumit(n, a, s)\n      end\n")
    (tmp_path / "h.f").write_text("      subroutine sumit(n, a, s)\n      integer n, i\n      real a(n), s\n"
                                  "      s = 0\n      do i = 1, n\n      s = s + a(i)\n      end do\n      end\n")
    from port_fortran.fortran import parse_file
    alone = parse_file(tmp_path / "k.f").kernels[0]
    assert [a.intent for a in alone.args] == ["inout", "inout", "inout"]  # an unknown callee may do anything
    k = build_program([tmp_path]).kernel(tmp_path / "k.f", "k")
    assert [a.intent for a in k.args] == ["in", "in", "out"]


# --------------------------------------------------------------------------- extents


def test_extent_from_the_call_site_in_terms_of_the_dummies(prog):
    k = prog.kernel(A / "gather.f", "gather")
    src = k.arg("src")
    assert expr_str(src.dims[0].upper) == "m"  # RUNG declares S(M) and passes M
    assert k.arg("m").used_as_size
    d = next(x for x in k.diagnostics if x.code == "extent-from-call-sites")
    assert "gather.f:15" in d.message and d in prog.notes


def test_extent_from_the_configuration(prog):
    k = prog.kernel(A / "gather.f", "gather2")
    assert expr_str(k.arg("src").dims[0].upper) == "k"
    assert any(x.code == "extent-from-config" for x in k.diagnostics)


def test_no_extent_refusal_says_what_to_write(prog):
    k, sf = prog.load(A / "gather.f", "gather3")
    # legacy src(1) subscripted past 1 is assumed-size, and no routine calls GATHER3
    assert k.arg("src").dims[0].upper is None
    with pytest.raises(TranslationRefused) as exc:
        translate_kernel(k, sf, program=prog)
    d = exc.value.diagnostics[0]
    assert d.code == "unknown-extent"
    assert "routines.gather3.args.src.extent" in d.message and "no routine of the tree calls it" in d.message


def test_call_site_sizes_combine_to_the_largest(tmp_path):
    (tmp_path / "k.f").write_text(
        "      subroutine pick(n, idx, v, out)\n      integer n, idx(n), i\n      real v(*), out(n)\n"
        "      do i = 1, n\n         out(i) = v(idx(i))\n      end do\n      end\n"
        "      subroutine c1(n, idx, o)\n      integer n, idx(n)\n      real w(40), o(n)\n"
        "      call pick(n, idx, w, o)\n      end\n"
        "      subroutine c2(n, idx, o)\n      integer n, idx(n)\n      real w(10, 9), o(n)\n"
        "      call pick(n, idx, w(1, 2), o)\n      end\n"
        "      subroutine c3(n, m, idx, o)\n      integer n, m, idx(n)\n      real w(2*m), o(n)\n"
        "      call pick(n, idx, w, o)\n      end\n")
    prog = build_program([tmp_path])
    k = prog.kernel(tmp_path / "k.f", "pick")
    # c1: 40, c2: 90 - 10 from w(1,2) on = 80, c3: 2*m but m is not passed -> no extent at all
    assert k.arg("v").dims[0].upper is None
    d = next(x for x in k.diagnostics if x.code == "extent-unknown")
    assert "depends on m of c3" in d.message
    (tmp_path / "k.f").write_text((tmp_path / "k.f").read_text().replace(
        "      subroutine c3(n, m, idx, o)\n      integer n, m, idx(n)\n      real w(2*m), o(n)\n"
        "      call pick(n, idx, w, o)\n      end\n", ""))
    k = build_program([tmp_path]).kernel(tmp_path / "k.f", "pick")
    assert k.arg("v").dims[0].upper == ir.Literal(80, "80", ftype=ir.INTEGER)


def test_legacy_one_element_dummy_is_assumed_size_only_when_used_past_one(tmp_path):
    (tmp_path / "k.f").write_text(
        "      subroutine add2(a, b, n)\n      real a(1), b(1)\n      do i = 1, n\n"
        "         a(i) = a(i) + b(i)\n      end do\n      end\n"
        "      subroutine first(a, s)\n      real a(1), s\n      s = a(1)\n      end\n")
    prog = build_program([tmp_path])
    add2 = prog.kernel(tmp_path / "k.f", "add2")
    assert add2.arg("a").dims[0].upper is None and expr_str(add2.arg("a").access_bounds[0][1]) == "n"
    assert prog.kernel(tmp_path / "k.f", "first").arg("a").dims[0].upper == ir.Literal(1, "1", ftype=ir.INTEGER)


def test_configuration_errors_name_the_key(tmp_path):
    with pytest.raises(UserError, match=r"routines\.gather2\.args\.nope: gather2 .* has no argument 'nope'"):
        build_program([A], routines={"gather2": {"args": {"nope": {"extent": "n"}}}})
    with pytest.raises(UserError, match=r"routines\.gather2\.args\.src\.extent: 'q' is not a scalar argument"):
        build_program([A], routines={"gather2": {"args": {"src": {"extent": "q*2"}}}})
    with pytest.raises(UserError, match=r"routines\.k\.args\.x\.range"):
        Config.from_dict({"routines": {"k": {"args": {"x": {"range": [2, 1]}}}}})
    with pytest.raises(UserError, match=r"key 'routines\.k\.args\.x\.size': unknown key"):
        Config.from_dict({"routines": {"k": {"args": {"x": {"size": 3}}}}})
    cfg = Config.from_dict({"routines": {"Gather2": {"args": {"SRC": {"extent": "k", "range": [0, 1]}}}}})
    assert cfg.routines == {"gather2": {"args": {"src": {"extent": "k", "range": [0, 1]}}}}


# --------------------------------------------------------------------------- translator


def test_translator_inlines_a_callee_of_another_tree(prog):
    k, sf = prog.load(A / "kernels.f", "scale3")
    port = translate_kernel(k, sf, program=prog)
    assert "parallel_for" in port.patterns
    assert any("twice" in n and "helpers.f:2" in n for n in port.notes)
    with pytest.raises(TranslationRefused) as exc:  # the same kernel, its file alone
        translate_kernel(k, sf)
    assert "not defined in this source file" in exc.value.diagnostics[0].message


def test_translator_names_an_external_callee(prog):
    k, sf = prog.load(A / "kernels.f", "scale2")
    with pytest.raises(TranslationRefused) as exc:
        translate_kernel(k, sf, program=prog)
    d = exc.value.diagnostics[0]
    assert d.code == "call-to-unknown" and d.file == str(B / "helpers.f") and d.line == 9
    assert "'mpi_barrier' is not defined in any file of the tree (external: MPI)" in d.message
    assert "in report (called by scale2)" in d.message


# --------------------------------------------------------------------------- list, pipeline, reports


def test_list_shows_the_call_graph_and_externals(capsys):
    assert main(["list", str(A), str(B)]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "subroutine scale2(" in x)
    assert f"calls: report ({B / 'helpers.f'}:7), twice ({B / 'helpers.f'}:2)" in line
    twice = next(x for x in out.splitlines() if "function twice(" in x)
    assert f"called by: scale3 ({A / 'kernels.f'}:3), scale2 ({A / 'kernels.f'}:11)" in twice
    assert f"external mpi_barrier (MPI): not defined in any file given; called by report ({B / 'helpers.f'}:7)" in out
    assert "calls: ddot [external: BLAS/LAPACK]" in out
    assert main(["list", "--json", str(A), str(B)]) == 0
    data = json.loads(capsys.readouterr().out)
    k = next(k for f in data for k in f["kernels"] if k["name"] == "clip")
    assert k["callees"] == [{"name": "clamp", "where": "module", "file": str(B / "limits_mod.f90"), "line": 5,
                             "module": "limits_mod"}]
    assert k["pure"] is True


def test_plan_saves_the_program_for_workers_and_the_report(tmp_path):
    from port_fortran.pipeline.commands import plan_jobs
    from port_fortran.pipeline.stages import make_stages
    from port_fortran.reports.collect import collect_report
    from port_fortran.reports.db import RunDB

    cfg = Config()
    db = RunDB.in_dir(tmp_path)
    run_id = db.start_run()
    stages = make_stages(cfg)
    jobs, errors = plan_jobs([str(A), str(B)], cfg, run_id, tmp_path, db, stages)
    assert errors == []
    job = next(j for j in jobs if j.kernel == "scale3")
    assert job.program and Path(job.program).is_file()
    prog = load_program(job.program)
    assert prog is load_program(job.program)  # once per process
    assert prog.objects_dir == str((tmp_path / "program" / "objects").resolve())
    worker = make_stages(cfg)
    worker.use_program(prog)
    k, _ = worker.load(job.file, job.kernel)
    assert "twice" in prog.callable_from(k) and k is not prog.kernel(job.file, job.kernel)  # a copy
    doc = collect_report(db, run_id)
    assert {e["name"] for e in doc["program"]["externals"]} == {"mpi_barrier", "ddot"}
    entry = next(x for x in doc["kernels"] if x["name"] == "scale2")
    assert entry["calls"]["externals"] == ["mpi_barrier"]
    assert {c["name"]: c["where"] for c in entry["calls"]["callees"]} == {"report": "tree", "twice": "tree"}
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).resolve().parents[1] / "port_fortran" / "reports" /
                         "report.schema.json").read_text())
    jsonschema.validate(doc, schema)
