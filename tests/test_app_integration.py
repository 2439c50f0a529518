"""`port-fortran app` end to end on the project's F77 application heat77 (Makefile naming
its compiler, COMMON through INCLUDE, a time loop, a self-check line), Serial backend: the
original is built through the shims, three routines are ported and proven, the modern tree
is built by the application's own make and matches (and by a CMake project that keeps its
compiler and links through find_package(PortFortranApp)). Then a port is broken after its proof
(as a port that passes its harness but not the program would be): the modern program no
longer matches, the report names the first differing line and OUT/modern is not written;
with --keep-going the broken port is left out by bisection, the report says which, and
OUT/modern calls only the ports that keep the output.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
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


def _cmake_package_builds_the_modern_tree(out: Path, build: Path) -> None:
    """A CMake application keeping its compiler: find_package(PortFortranApp) and
    port_fortran_app_link(<target>) link the modern sources with the ports."""
    from port_fortran.build_runner.cmake import cmake_exe

    src = out / "modern"
    (build / "src").mkdir(parents=True)
    for f in src.iterdir():
        if f.suffix in (".f", ".inc", ".in"):
            shutil.copy(f, build / "src" / f.name)
    (build / "src" / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(heat77 LANGUAGES Fortran CXX)\n"
        "find_package(PortFortranApp REQUIRED)\n"
        "add_executable(heat heat.f init.f sweep.f bndry.f diag.f io.f)\nport_fortran_app_link(heat)\n")
    cmake = cmake_exe()
    cfg = subprocess.run([cmake, "-S", build / "src", "-B", build / "b", "-DCMAKE_BUILD_TYPE=Release",
                          f"-DPortFortranApp_DIR={out / 'lib' / 'serial' / 'cmake'}"], capture_output=True, text=True)
    assert cfg.returncode == 0, cfg.stdout[-2000:] + cfg.stderr[-2000:]
    b = subprocess.run([cmake, "--build", build / "b"], capture_output=True, text=True)
    assert b.returncode == 0, b.stdout[-2000:] + b.stderr[-2000:]
    run = subprocess.run([build / "b" / "heat"], cwd=build / "src", capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "SELF-CHECK PASSED" in run.stdout, run.stdout + run.stderr


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
    _cmake_package_builds_the_modern_tree(out, tmp_path / "cmake")

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
