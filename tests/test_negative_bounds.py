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
    k, cpp = _proven(tmp_path, "scratch")
    assert "pf::Private<double, 4> st;" in cpp and "pf::Private<double, 4> v;" in cpp
    assert "pf::nest<2>" in cpp or "mdrange" in k["patterns"]


def test_scratch_recurrences_private_to_each_column_are_verified(tmp_path):
    """colsolve's two sweeps per column through d(0:3) and y(0:3) (TeaLeaf's block-Jacobi
    solve): each column a copy of both, the column loop one parallel kernel around the
    blocks (it ran as a single-iteration kernel: the whole grid on one thread), proven
    against the original with the leftover rows' nest."""
    k, cpp = _proven(tmp_path, "colsolve")
    assert "pf::Private<double, 4> d;" in cpp and "pf::Private<double, 4> y;" in cpp
    assert "single_for" not in cpp and "parallel_for" in k["patterns"]
    # on the host each nest runs its columns in chunks inside the blocks (the rows of a block
    # stay in cache from one column to the next); the first nest, turned twice before the
    # second was turned, kept its mark (it lost it, and the host ran the columns outermost:
    # TeaLeaf's block solve 29x the original on one core)
    assert cpp.count("pf::host_chunks(") == 2


def _proven(tmp_path, name):
    """tests/data/private/<name>.f90 through `port-fortran` on serial and openmp: its report
    entry, verified, and the port's C++."""
    from port_fortran.build_runner.kokkos import find_install
    from port_fortran.cli import main

    if find_install("serial") is None:
        pytest.skip("no Kokkos install with the Serial backend (set Kokkos_ROOT)")
    cfg = tmp_path / "pf.yaml"
    cfg.write_text("bench: false\noptimize: false\n")
    out = tmp_path / "out"
    rc = main([str(Path(__file__).parent / "data" / "private" / f"{name}.f90"), "--backends", "serial,openmp",
               "--out", str(out), "--config", str(cfg), "--quiet"])
    k = json.loads((out / "report.json").read_text())["kernels"][0]
    assert rc == 0 and k["status"] == "verified", k["reason"]
    return k, next(out.rglob(f"{name}.kokkos.cpp")).read_text()
