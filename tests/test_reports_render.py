"""Reports are drawn from the run database only: report.json follows its schema, the
numbers in it come from the recorded rows, user text is escaped, and the HTML page renders
in a real browser with its tables and plots."""
from __future__ import annotations

import base64
import dataclasses
import json
import re
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest

from port_fortran.cli import main
from port_fortran.records import CaseResult, OutputCheck, Verdict
from port_fortran.reports.collect import collect_report
from port_fortran.reports.db import RunDB
from port_fortran.reports.render import load_schema, render_reports
from port_fortran.reports.synthetic import KERNELS, fill_synthetic


@pytest.fixture()
def synthetic(tmp_path):
    db = RunDB.in_dir(tmp_path)
    run_id = fill_synthetic(db)
    yield db, run_id, tmp_path
    db.close()


def test_schema_is_valid_draft_2020_12():
    jsonschema.Draft202012Validator.check_schema(load_schema())


def test_report_json_validates_and_matches_the_database(synthetic):
    db, run_id, out = synthetic
    paths = render_reports(db, run_id, out)
    report = json.loads(paths["json"].read_text())
    jsonschema.Draft202012Validator(load_schema()).validate(report)

    s = report["summary"]
    expected = {o: sum(1 for k in KERNELS if k[4] == o) for o in ("verified", "failed", "refused")}
    assert (s["verified"], s["failed"], s["refused"]) == (expected["verified"], expected["failed"], expected["refused"])
    assert s["budget_reached"] == 1 and s["error"] == 1
    assert s["kernels"] == s["attempted"] == len(KERNELS)
    # cost totals equal the sum of the recorded calls, per kernel and per model
    calls = db.llm_calls(run_id)
    assert s["total_cost_usd"] == pytest.approx(sum(c["cost_usd"] for c in calls))
    assert s["llm_calls"] == len(calls) > 0
    assert sum(k["llm"]["cost_usd"] for k in report["kernels"]) == pytest.approx(s["total_cost_usd"])
    assert sum(m["cost_usd"] for m in report["models"]) == pytest.approx(s["total_cost_usd"])
    # attempts per stage add up to the rows
    assert sum(st["count"] for st in report["stages"].values()) == len(db.attempts(run_id))
    assert list(report["stages"])[0] == "translate"

    by_name = {k["name"]: k for k in report["kernels"]}
    heat = by_name["heat3d"]
    assert heat["status"] == "failed" and heat["reason"].startswith("stencil.f90:51")
    omp = next(v for v in heat["verdicts"] if v["backend"] == "openmp")
    assert not omp["passed"] and omp["max_abs_err"] == pytest.approx(3.1e-2)
    assert omp["elements_compared"] > 0 and omp["cases_passed"] < omp["cases"]
    # speedups are fortran-serial median / variant median
    daxpy = by_name["daxpy"]
    t = {x["variant"]: x for x in daxpy["timings"]}
    assert t["fortran-serial"]["speedup_vs_fortran_serial"] == pytest.approx(1.0)
    assert t["kokkos-openmp"]["speedup_vs_fortran_serial"] == pytest.approx(
        t["fortran-serial"]["median_s"] / t["kokkos-openmp"]["median_s"])
    assert by_name["tridiag"]["verdicts"] == [] and by_name["tridiag"]["line_start"] == 10
    backends = {b["backend"]: b for b in report["backends"]}
    assert backends["openmp"]["failed"] == 1 and backends["openmp"]["median_speedup"] > 1


def test_nan_errors_and_last_verdict_per_backend(tmp_path):
    """A NaN error (an output left unwritten) survives into JSON as 'nan'; a later verdict
    for the same backend (after a debugger round) replaces the earlier one."""
    db = RunDB.in_dir(tmp_path)
    rid = db.start_run(command="t")
    db.upsert_kernel(rid, "a.f:k", "a.f", "k", 3, 9)
    bad = Verdict("serial", False, [CaseResult(1, {"n": 5}, False, [OutputCheck("y", False, 5, float("nan"),
                                                                              float("nan"), tolerance=1e-12)])],
                  reason="a.f:7: 5 elements of y left unwritten")
    good = Verdict("serial", True, [CaseResult(2, {"n": 5}, True, [OutputCheck("y", True, 5, 0.0, 0.0)])])
    db.add_verdict(rid, "a.f:k", "serial", False, bad.reason, dataclasses.asdict(bad))
    report = collect_report(db, rid)
    v = report["kernels"][0]["verdicts"][0]
    assert v["max_abs_err"] == "nan" and not v["passed"]
    jsonschema.validate(report, load_schema())
    db.add_verdict(rid, "a.f:k", "serial", True, "", dataclasses.asdict(good))
    report = collect_report(db, rid)
    assert len(report["kernels"][0]["verdicts"]) == 1 and report["kernels"][0]["verdicts"][0]["passed"]
    db.close()


def test_user_text_is_escaped(synthetic):
    db, run_id, out = synthetic
    db.set_kernel(run_id, "blas1.f:daxpy", reason="<script>alert('x')</script> | a`b")
    paths = render_reports(db, run_id, out)
    html = paths["html"].read_text()
    assert "<script>alert" not in html and "&lt;script&gt;alert" in html
    md = paths["md"].read_text()
    row = next(line for line in md.splitlines() if line.startswith("| daxpy "))
    assert "\\|" in row and row.count(" | ") == 7  # the pipe in the reason does not add a column


def test_empty_run_and_no_llm_calls(tmp_path):
    db = RunDB.in_dir(tmp_path)
    rid = db.start_run(command="port-fortran x.f")
    paths = render_reports(db, rid, tmp_path)
    report = json.loads(paths["json"].read_text())
    jsonschema.validate(report, load_schema())
    assert report["summary"]["kernels"] == 0 and report["summary"]["duration_s"] is None
    html = paths["html"].read_text()
    assert "No LLM calls" in html and "<img" not in html
    assert "No LLM calls" in paths["md"].read_text()
    db.close()


def test_report_command_rerenders_latest_or_named_run(synthetic, capsys):
    db, first, out = synthetic
    second = fill_synthetic(db, seed=1, kernels=KERNELS[:2])
    assert main(["report", str(out)]) == 0
    assert json.loads((out / "report.json").read_text())["run"]["run_id"] == second
    assert main(["report", str(out), "--run", first]) == 0
    assert json.loads((out / "report.json").read_text())["run"]["run_id"] == first
    capsys.readouterr()
    assert main(["report", str(out), "--run", "nope"]) == 2
    assert "no run 'nope'" in capsys.readouterr().err


def test_report_command_without_database_is_one_clear_line(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "no run database" in err and "\n" not in err and "Traceback" not in err
    assert not (tmp_path / "port-fortran.db").exists()  # it did not create one


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (the Makefile installs it)")
def test_html_renders_in_headless_chromium(synthetic):
    db, run_id, out = synthetic
    html = render_reports(db, run_id, out)["html"]
    base = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--user-data-dir={out / 'chromium-profile'}", "--window-size=1280,2000"]
    dom = subprocess.run(base + ["--virtual-time-budget=5000", "--dump-dom", html.resolve().as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    # the tables are in the rendered DOM, one row per kernel
    assert len(re.findall(r'<tr class="kernel-row"', dom)) == len(KERNELS)
    for table in ("kernel-table", "backend-table", "timing-table", "stage-table", "model-table", "verdict-table"):
        assert f'id="{table}"' in dom, table
    assert 'data-status="refused"' in dom and "solvers.f:21" in dom
    # every plot decoded to a real image (the page's load script counts naturalWidth > 0)
    total = int(re.search(r'data-images-total="(\d+)"', dom).group(1))
    loaded = int(re.search(r'data-images-loaded="(\d+)"', dom).group(1))
    assert total == 4 and loaded == total
    for plot in ("plot-speedup", "plot-time", "plot-attempts", "plot-cost"):
        assert f'id="{plot}"' in dom
    shot = out / "shot.png"
    subprocess.run(base + [f"--screenshot={shot}", html.resolve().as_uri()], capture_output=True, timeout=120)
    assert shot.stat().st_size > 20_000


def test_large_batches_plot_distributions(tmp_path):
    """Past a few dozen kernels one bar per kernel is unreadable: the speedup plot becomes
    one box per backend and the time plot a histogram (the page stays a sane size)."""
    from port_fortran.reports import plots

    db = RunDB.in_dir(tmp_path)
    many = [(f"{k[0]}_{i}",) + tuple(k[1:]) for i in range(8) for k in KERNELS]
    report = collect_report(db, fill_synthetic(db, kernels=many))
    assert sum(1 for k in report["kernels"] if k["timings"]) > plots.MAX_BARS

    def height(b64: str) -> int:
        png = base64.b64decode(b64)
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        return int.from_bytes(png[20:24], "big")

    few = {**report, "kernels": report["kernels"][:13]}
    assert height(plots.speedup_plot(report)) < 400 < height(plots.speedup_plot(few))
    assert height(plots.time_plot(report)) < 400 < height(plots.time_plot(few))
    db.close()


def test_reasons_name_the_file(tmp_path):
    db = RunDB.in_dir(tmp_path)
    rid = db.start_run()
    db.upsert_kernel(rid, "relax_io.f:relaxp", "relax_io.f", "relaxp", 8, 26)
    db.set_kernel(rid, "relax_io.f:relaxp", status="refused", reason="line 21: [io-in-kernel] WRITE inside a kernel",
                  reason_code="io-in-kernel")
    paths = render_reports(db, rid, tmp_path)
    assert "relax_io.f:21: [io-in-kernel] WRITE inside a kernel" in paths["html"].read_text()
    assert "relax\\_io.f:21:" in paths["md"].read_text()
    # report.json keeps the database's text as it is
    assert json.loads(paths["json"].read_text())["kernels"][0]["reason"].startswith("line 21:")
    db.close()


def test_versioned_loops_show_their_condition(tmp_path):
    """A loop run in parallel only when a run-time condition holds is never shown as plain
    parallel: the report names the condition; an older database gains the column."""
    import sqlite3

    path = tmp_path / "port-fortran.db"
    con = sqlite3.connect(path)  # a database from before the column existed
    con.executescript("CREATE TABLE kernels (run_id TEXT NOT NULL, kernel_id TEXT NOT NULL, file TEXT NOT NULL, "
                      "name TEXT NOT NULL, line_start INTEGER, line_end INTEGER, status TEXT NOT NULL DEFAULT "
                      "'pending', reason TEXT NOT NULL DEFAULT '', reason_code TEXT NOT NULL DEFAULT '', model TEXT "
                      "NOT NULL DEFAULT '', patterns TEXT NOT NULL DEFAULT '[]', port_dir TEXT NOT NULL DEFAULT '', "
                      "started REAL, finished REAL, PRIMARY KEY (run_id, kernel_id));")
    con.close()
    db = RunDB(path)
    rid = db.start_run()
    db.upsert_kernel(rid, "blas1.f:daxpy", "blas1.f", "daxpy", 8, 31)
    db.set_kernel(rid, "blas1.f:daxpy", status="verified", model="rules",
                  patterns=["parallel_for", "serial", "versioned"], versions=["line 24: do i parallel if incy /= 0"])
    paths = render_reports(db, rid, tmp_path)
    doc = json.loads(paths["json"].read_text())
    jsonschema.validate(doc, load_schema())
    assert doc["kernels"][0]["versions"] == ["line 24: do i parallel if incy /= 0"]
    assert "line 24: do i parallel if incy /= 0" in paths["html"].read_text()
    row = next(line for line in paths["md"].read_text().splitlines() if line.startswith("| daxpy "))
    assert "versioned; line 24: do i parallel if incy /= 0" in row and row.count(" | ") == 7
    db.close()


def test_optimizer_variants_are_listed_with_the_measured_reason(tmp_path):
    """The report says which optimizer variant was kept and why each other one was not."""
    db = RunDB.in_dir(tmp_path)
    rid = db.start_run()
    db.upsert_kernel(rid, "stencil3d.F90:jacobi3d", "stencil3d.F90", "jacobi3d", 18, 33)
    db.set_kernel(rid, "stencil3d.F90:jacobi3d", status="verified", model="rules", patterns=["mdrange"])
    db.add_attempt(rid, "stencil3d.F90:jacobi3d", "optimize", True, "baseline: 5 timings")
    db.add_attempt(rid, "stencil3d.F90:jacobi3d", "optimize", False,
                   "variant kokkos-policies: kokkos-serial slower 4.716e-03s -> 1.046e-02s")
    db.add_attempt(rid, "stencil3d.F90:jacobi3d", "optimize", True,
                   "variant tile-64x4x1: kokkos-openmp 2.000e-03s -> 1.500e-03s")
    paths = render_reports(db, rid, tmp_path)
    doc = json.loads(paths["json"].read_text())
    jsonschema.validate(doc, load_schema())
    assert doc["kernels"][0]["optimizer"] == [
        {"variant": "kokkos-policies", "kept": False, "detail": "kokkos-serial slower 4.716e-03s -> 1.046e-02s"},
        {"variant": "tile-64x4x1", "kept": True, "detail": "kokkos-openmp 2.000e-03s -> 1.500e-03s"}]
    md = paths["md"].read_text()
    assert "## Optimizer variants" in md
    assert any(ln.startswith("| jacobi3d | tile-64x4x1 | kept |") for ln in md.splitlines())
    assert "kokkos-policies" in paths["html"].read_text()
    db.close()
