"""Loops that start below zero (ParRes' initialize_w: W(-r:r,-r:r) = 0): the policies index
with a signed type, where Kokkos' default unsigned index made a negative begin wrap and the
loop run no iteration (the proof caught it as a wrong result)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "negbounds"


def test_loops_from_negative_bounds_are_verified(tmp_path):
    from port_fortran.build_runner.kokkos import find_install
    from port_fortran.cli import main

    if find_install("serial") is None:
        pytest.skip("no Kokkos install with the Serial backend (set Kokkos_ROOT)")
    cfg = tmp_path / "pf.yaml"
    cfg.write_text("bench: false\noptimize: false\n")
    out = tmp_path / "out"
    rc = main([str(DATA / "negb.f90"), "--backends", "serial,openmp", "--out", str(out), "--config", str(cfg),
               "--quiet"])
    k = json.loads((out / "report.json").read_text())["kernels"][0]
    assert rc == 0 and k["status"] == "verified", k["reason"]
    assert "reduce" in k["patterns"] and ({"parallel_for", "mdrange"} & set(k["patterns"]))


def test_scratch_arrays_private_to_each_iteration_are_verified(tmp_path):
    """st(1:4) and v(1:nv) filled before use at each (i, k): one MDRange kernel with a
    pf::Private copy of each per iteration, proven against the original."""
    from port_fortran.build_runner.kokkos import find_install
    from port_fortran.cli import main

    if find_install("serial") is None:
        pytest.skip("no Kokkos install with the Serial backend (set Kokkos_ROOT)")
    cfg = tmp_path / "pf.yaml"
    cfg.write_text("bench: false\noptimize: false\n")
    out = tmp_path / "out"
    rc = main([str(Path(__file__).parent / "data" / "private" / "scratch.f90"), "--backends", "serial,openmp",
               "--out", str(out), "--config", str(cfg), "--quiet"])
    k = json.loads((out / "report.json").read_text())["kernels"][0]
    assert rc == 0 and k["status"] == "verified", k["reason"]
    cpp = next(out.rglob("scratch.kokkos.cpp")).read_text()
    assert "pf::Private<double, 4> st;" in cpp and "pf::Private<double, 4> v;" in cpp
    assert "pf::nest<2>" in cpp or "mdrange" in k["patterns"]
