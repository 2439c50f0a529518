"""C sources of a tree (harness/csources.py): what the Fortran calls and only a C file
defines (a timer, a helper) is linked into the reference, the port's drivers and the
program proofs, instead of a stub that stops the original; without the C file the same
routine cannot be proven."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "csources"


def _kokkos_or_skip():
    from port_fortran.build_runner.kokkos import find_install

    if find_install("serial") is None:
        pytest.skip("no Kokkos install with the Serial backend (set Kokkos_ROOT)")


def _run(tmp_path, sources: list[str], config: str = "") -> tuple[dict, dict]:
    from port_fortran.cli import main

    cfg = tmp_path / "pf.yaml"
    cfg.write_text("bench: false\noptimize: false\n" + config)
    out = tmp_path / "out"
    main([*sources, "--backends", "serial", "--out", str(out), "--config", str(cfg), "--quiet"])
    doc = json.loads((out / "report.json").read_text())
    return {k["name"]: k for k in doc["kernels"]}, doc


def test_discover_keeps_c_sources_apart(tmp_path):
    from port_fortran.fortran.parse import discover, discover_c

    assert sorted(p.name for p in discover([str(DATA)])) == ["cprog.f90", "scaled.f90"]
    assert sorted(p.name for p in discover_c([str(DATA)])) == ["cfactor.c", "ctwice.c", "wclock.c"]
    # a C file named on the command line is linked, never parsed as Fortran
    assert discover([str(DATA / "ctwice.c")]) == []
    assert [p.name for p in discover_c([str(DATA / "ctwice.c"), str(DATA / "scaled.f90")])] == ["ctwice.c"]


def test_c_helpers_and_timers_are_linked_into_routine_and_program_proofs(tmp_path):
    _kokkos_or_skip()
    ks, doc = _run(tmp_path, [str(DATA)], "programs:\n  cprog: {ignore: time}\n")
    k = ks["scaled"]
    assert k["status"] == "verified", k["reason"]
    assert k["mode"] == "hybrid"  # the call to the C helper stays Fortran, the loop is the port
    p = ks["cprog"]
    assert p["status"] == "verified", p["reason"]  # linked with cfactor.c, which only ctwice.c calls
    # the report names where an external of the routines is defined
    ext = {e["name"]: e for e in doc["program"]["externals"]}
    assert ext["ctwice"]["c_file"].endswith("ctwice.c")
    assert sorted(Path(f).name for f in doc["program"]["c_sources"]) == ["cfactor.c", "ctwice.c", "wclock.c"]


def test_without_the_c_file_the_original_cannot_run(tmp_path):
    _kokkos_or_skip()
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(DATA / "scaled.f90", src)
    ks, _doc = _run(tmp_path, [str(src)])
    k = ks["scaled"]
    assert k["status"] != "verified"
    assert "ctwice is not defined by any file of the tree" in k["reason"]
