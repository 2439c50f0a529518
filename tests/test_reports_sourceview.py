"""The report's per-kernel view: the original Fortran beside the Kokkos C++, highlighted,
every loop linked both ways; the verdict per output and the timing bars; the Python module
and the CMake that built the port. Rendered in headless Chromium like the rest of the page."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import jsonschema
import pytest

from port_fortran.reports import sourceview as SV
from port_fortran.reports.collect import collect_report
from port_fortran.reports.db import RunDB
from port_fortran.reports.render import load_schema, render_reports
from port_fortran.reports.synthetic import DAXPY_FORTRAN, DAXPY_KOKKOS, SYNTHETIC_CMAKE, fill_synthetic

CPP = """\
/* a block comment
   over two lines */
void k(int n) {
  // line 7: do i -> parallel_for
  Kokkos::parallel_for("k:L7", pf::range(1, n), KOKKOS_LAMBDA(const int i) {});
  // lines 9-11: serial, in a single-iteration kernel
  Kokkos::parallel_for("k:L9", pf::single(), KOKKOS_LAMBDA(const int) {});
  Kokkos::parallel_reduce("k:L14", pf::range(1, n), KOKKOS_LAMBDA(const int i, double& s) {}, s);
}
"""


def test_loop_map_reads_the_translators_comments_and_labels():
    m = SV.loop_map(CPP)
    assert m[7] == (4, "par", "do i -> parallel_for")
    assert {ln: m[ln][:2] for ln in (9, 10, 11)} == {9: (6, "ser"), 10: (6, "ser"), 11: (6, "ser")}
    assert m[14] == (8, "par", "a Kokkos kernel")  # only a label names it
    assert 8 not in m


def test_rows_keep_every_line_and_link_both_ways():
    fortran = "\n".join(f"      X{i} = {i}" for i in range(5, 16))  # lines 5-15
    f_rows, c_rows = SV.side_by_side("k2", "a.f", fortran, 5, CPP)
    assert [r.no for r in f_rows] == list(range(5, 16)) and len(c_rows) == len(CPP.splitlines())
    f7 = next(r for r in f_rows if r.no == 7)
    assert (f7.anchor, f7.link, f7.kind) == ("k2-f-7", "k2-c-4", "par")
    c4 = c_rows[3]
    assert (c4.anchor, c4.link) == ("k2-c-4", "k2-f-7")
    assert c_rows[5].link == "k2-f-9"  # a serial block links back to its first line
    # Pygments closes its spans at line ends: each line is balanced HTML
    for r in f_rows + c_rows:
        assert r.html.count("<span") == r.html.count("</span>"), r.html


def test_fixed_and_free_form_lexers():
    assert isinstance(SV.fortran_lexer("blas1.f"), SV.FortranFixedLexer)
    assert isinstance(SV.fortran_lexer("vecops.F90"), SV.FortranLexer)
    html = SV.highlight_lines("*     a comment line\n      X = 1", SV.FortranFixedLexer())
    assert len(html) == 2 and "a comment line" in html[0]


@pytest.fixture()
def synthetic(tmp_path):
    db = RunDB.in_dir(tmp_path)
    rid = fill_synthetic(db)
    yield db, rid, tmp_path
    db.close()


def test_report_json_carries_sources_python_and_cmake(synthetic):
    db, rid, out = synthetic
    report = collect_report(db, rid)
    jsonschema.Draft202012Validator(load_schema()).validate(report)
    k = {x["name"]: x for x in report["kernels"]}
    d = k["daxpy"]
    assert d["sources"]["fortran"] == {"file": "blas1.f", "first_line": 12, "text": DAXPY_FORTRAN}
    assert d["sources"]["kokkos"]["text"] == DAXPY_KOKKOS
    assert d["cmake"] == SYNTHETIC_CMAKE and k["tridiag"]["cmake"] == ""
    assert d["python"] == {"module": "kokkos_ports", "function": "daxpy", "backend": "openmp", "ok": True,
                           "path": "out/python/kokkos_ports.cpython-311-x86_64-linux-gnu.so", "detail": ""}
    assert k["tridiag"]["python"] is None and k["tridiag"]["sources"] is None
    (m,) = report["python_modules"]
    assert m["module"] == "kokkos_ports" and len(m["kernels"]) == report["summary"]["verified"]
    md = render_reports(db, rid, out)["md"].read_text()
    assert "## Python modules" in md and "kokkos\\_ports" in md


def test_html_has_the_side_by_side_view(synthetic):
    db, rid, out = synthetic
    html = render_reports(db, rid, out)["html"].read_text()
    daxpy = html.index('id="k1"')
    assert '<details class="kdetail" id="k1">' in html
    assert 'class="pane pane-fortran"' in html[daxpy:] and 'class="pane pane-kokkos"' in html[daxpy:]
    # the Fortran DO at line 18 links to the C++ comment naming it, and back
    c_line = DAXPY_KOKKOS.splitlines().index("    // line 18: do i -> parallel_for") + 1
    assert f'<div class="ln par" id="k1-f-18"><a class="no" href="#k1-f-18">18</a><a class="go" href="#k1-c-{c_line}"' in html
    assert f'id="k1-c-{c_line}"><a class="no" href="#k1-c-{c_line}">{c_line}</a><a class="go" href="#k1-f-18"' in html
    assert 'class="bars"' in html and "kokkos-openmp (8 threads)" in html
    assert SYNTHETIC_CMAKE in html and "<code>kokkos_ports.daxpy</code> (openmp)" in html
    assert 'id="python-table"' in html


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (the Makefile installs it)")
def test_side_by_side_renders_in_headless_chromium(synthetic):
    db, rid, out = synthetic
    page = render_reports(db, rid, out)["html"].resolve()
    base = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--user-data-dir={out / 'chromium-profile'}", "--window-size=1400,1000"]
    # a link to a Fortran line opens the kernel's details and scrolls to it
    dom = subprocess.run(base + ["--virtual-time-budget=5000", "--dump-dom", page.as_uri() + "#k1-f-18"],
                         capture_output=True, text=True, timeout=120).stdout
    assert 'data-revealed="k1-f-18"' in dom
    assert re.search(r'<details class="kdetail" id="k1" open="">', dom)
    assert len(re.findall(r'<div class="ln[^"]*" id="k1-f-\d+"', dom)) == len(DAXPY_FORTRAN.splitlines())
    assert len(re.findall(r'<div class="ln[^"]*" id="k1-c-\d+"', dom)) == len(DAXPY_KOKKOS.splitlines())
    assert '<span class="k">' in dom or '<span class="kt">' in dom  # highlighted tokens survived
    shot = out / "side-by-side.png"
    subprocess.run(base + ["--virtual-time-budget=5000", f"--screenshot={shot}", page.as_uri() + "#k1-f-18"],
                   capture_output=True, timeout=120)
    assert shot.stat().st_size > 20_000
    json.loads((out / "report.json").read_text())  # still valid JSON beside the page


def test_an_older_database_gains_the_cmake_column(tmp_path):
    import sqlite3

    path = tmp_path / "port-fortran.db"
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE kernels (run_id TEXT NOT NULL, kernel_id TEXT NOT NULL, file TEXT NOT NULL, "
                "name TEXT NOT NULL, line_start INTEGER, line_end INTEGER, status TEXT NOT NULL DEFAULT 'pending', "
                "reason TEXT NOT NULL DEFAULT '', reason_code TEXT NOT NULL DEFAULT '', model TEXT NOT NULL DEFAULT '', "
                "patterns TEXT NOT NULL DEFAULT '[]', port_dir TEXT NOT NULL DEFAULT '', started REAL, finished REAL, "
                "PRIMARY KEY (run_id, kernel_id))")
    old.execute("INSERT INTO kernels(run_id, kernel_id, file, name) VALUES ('r', 'a.f:k', 'a.f', 'k')")
    old.commit()
    old.close()
    db = RunDB(path)
    assert db.kernel("r", "a.f:k")["cmake"] == ""
    db.set_kernel("r", "a.f:k", cmake="cmake 4.1.0 (/x, from PATH)")
    assert db.kernel("r", "a.f:k")["cmake"] == "cmake 4.1.0 (/x, from PATH)"
    RunDB(path).close()  # a second open finds the column there
    db.close()
