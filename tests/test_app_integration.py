"""`port-fortran app` end to end on the project's F77 application heat77 (Makefile naming
its compiler, COMMON through INCLUDE, a time loop, a self-check line), Serial backend: the
original is built through the shims, three routines are ported and proven, the modern tree
is built by the application's own make and matches. Then a port is broken after its proof
(as a port that passes its harness but not the program would be): the modern program no
longer matches, the report names the first differing line and OUT/modern is not written;
with --keep-going the broken port is left out by bisection, the report says which, and
OUT/modern calls only the ports that keep the output.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from port_fortran.cli import main

pytestmark = pytest.mark.integration

APP = Path(__file__).resolve().parent.parent / "fortran_kernels" / "apps" / "heat77"


def _needs_tools():
    from port_fortran.build_runner.kokkos import find_install
    from port_fortran.build_runner.toolchain import gfortran_path

    if not gfortran_path() or not shutil.which("make") or find_install("serial") is None:
        pytest.skip("needs gfortran, make and a Kokkos install with the Serial backend")


def _app(out: Path, *extra: str) -> tuple[int, dict]:
    rc = main(["app", str(APP), "--backends", "serial", "--out", str(out), "--kernel", "sweep", "--kernel", "bndry",
               "--kernel", "htotal", "--main", "keep", "--quiet", *extra])
    return rc, json.loads((out / "report.json").read_text())["application"]


def test_heat77_modernised_and_a_broken_port_never_reaches_modern(tmp_path):
    _needs_tools()
    out = tmp_path / "out"
    rc, app = _app(out)
    assert rc == 0, app["backends"]
    assert app["matched"] and [b["backend"] for b in app["backends"]] == ["serial"]
    b = app["backends"][0]
    assert b["built"] and b["ran"] and b["comparison"]["numbers_compared"] > 10 and b["comparison"]["check_found"]
    assert b["original_seconds"] > 0 and b["modern_seconds"] > 0
    assert sorted(p["name"] for p in app["ported"]) == ["bndry", "htotal", "sweep"]
    assert {k["name"]: k["code"] for k in app["kept"]}["smooth"] == "not-called"
    compiled = json.loads((out / "compile_commands.json").read_text())
    assert {Path(e["file"]).name for e in compiled} == {"heat.f", "init.f", "sweep.f", "bndry.f", "diag.f", "io.f"}
    assert "CALL SWEEP_KOKKOS()" in (out / "modern" / "sweep.f").read_text().upper()
    assert (APP / "sweep.f").read_text().upper().count("KOKKOS") == 0  # the user's sources are never modified

    # break sweep's port after its proof: the update of UN is off by a small amount
    cpp = out / "ports" / "sweep" / "sweep" / "sweep.kokkos.cpp"
    text, n = re.subn(r"(un\(i, j\) = )", r"\g<1>1.0e-3 + ", cpp.read_text())
    assert n == 1, "the planted fault needs the port's assignment to un(i, j)"
    cpp.write_text(text)

    rc, app = _app(out, "--reuse-ports")
    assert rc == 1 and not app["matched"]
    b = app["backends"][0]
    assert b["built"] and b["ran"] and not b["matched"] and b["first_difference"] is not None
    assert re.search(r"line \d+", b["reason"]), b["reason"]
    assert not (out / "modern").exists() and (out / "modern.unverified").is_dir()
    assert app["modern_tree"].endswith("modern.unverified")

    rc, app = _app(out, "--reuse-ports", "--keep-going")
    assert rc == 0 and app["matched"], app["backends"]
    assert [d["name"] for d in app["left_out"]] == ["sweep"]
    assert "differs" in app["left_out"][0]["why"]
    assert sorted(p["name"] for p in app["ported"]) == ["bndry", "htotal"]
    assert {k["name"]: k["code"] for k in app["kept"]}["sweep"] == "left-out"
    assert "SWEEP_KOKKOS" not in (out / "modern" / "sweep.f").read_text().upper()
    assert "BNDRY_KOKKOS" in (out / "modern" / "bndry.f").read_text().upper()
    assert not (out / "modern.unverified").exists()
    md = (out / "report.md").read_text()
    assert "Left out by `--keep-going`" in md and "sweep" in md
