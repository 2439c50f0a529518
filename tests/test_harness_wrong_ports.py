"""Deliberately wrong ports are all caught; runaway ports are stopped and reported.

One hand-written axpy port (w = a*x + y) whose behaviour is chosen at run time
(PF_TEST_VARIANT), so all the wrong variants cost one build per backend; a prefix sum
wrongly parallelised with parallel_for shows the race on the openmp backend."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from port_fortran.build_runner.kokkos import find_install
from port_fortran.build_runner.sandbox import Limits
from port_fortran.harness import Harness
from port_fortran.harness.inputs import Case, make_inputs, read_records, write_records
from test_harness_kit import (AXPY_F90, AXPY_PORT, PSUM_F90, PSUM_RACY_PORT, axpy_kernel, psum_kernel,
                              write_port, write_source)

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(find_install("serial") is None, reason="no Kokkos install (set Kokkos_ROOT)")]


@pytest.fixture(scope="module")
def axpy(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("axpy")
    src = write_source(tmp, "axpy.f90", AXPY_F90)
    port = write_port(tmp / "port", "axpy", AXPY_PORT)
    h = Harness(axpy_kernel(src), src, port, limits=Limits(wall_s=4.0, mem_mb=1024))
    b = h.build("serial")
    assert b.ok, b.log[-3000:]
    return h


def test_correct_port_passes_with_fresh_seeds(axpy, monkeypatch):
    monkeypatch.delenv("PF_TEST_VARIANT", raising=False)
    v1 = axpy.verify("serial")
    assert v1.passed, v1.reason
    assert {c.sizes["n"] for c in v1.cases} == {1, 7, 33, 1027}  # 1027: past a GPU block of 1024
    assert [c.kind for c in v1.cases] == ["", "", "", "cross-tiles"]
    w = [o for o in v1.cases[-1].outputs if o.name == "w"][0]
    assert w.elements == 1027 and w.max_abs_err <= 1e-12
    time.sleep(0.01)
    v2 = axpy.verify("serial")
    assert {c.seed for c in v1.cases}.isdisjoint({c.seed for c in v2.cases})  # fresh seeds each time


def test_off_by_one_bound_is_caught(axpy, monkeypatch):
    monkeypatch.setenv("PF_TEST_VARIANT", "off-by-one")
    v = axpy.verify("serial")
    assert not v.passed
    bad = [o for c in v.cases for o in c.outputs if not o.passed]
    assert bad and all(o.name == "w" for o in bad)
    # the last element is the one left out: w(n), poisoned NaN in the port
    last = [c for c in v.cases if c.sizes["n"] == 33][0]
    w = [o for o in last.outputs if o.name == "w"][0]
    assert w.worst_index == [33] and "never written" in w.message


def test_off_by_one_read_is_caught(axpy, monkeypatch):
    monkeypatch.setenv("PF_TEST_VARIANT", "off-by-one-read")
    v = axpy.verify("serial")
    assert not v.passed
    w = [o for c in v.cases for o in c.outputs if o.name == "w" and not o.passed][0]
    assert w.max_abs_err > 1e-3 and "outside tolerance" in w.message


def test_element_never_written_is_caught(axpy, monkeypatch):
    monkeypatch.setenv("PF_TEST_VARIANT", "unwritten")
    v = axpy.verify("serial")
    assert not v.passed
    fails = [(c.sizes["n"], o) for c in v.cases for o in c.outputs if not o.passed]
    assert {n for n, _ in fails} == {7, 33, 1027}  # n=1 has no element 3
    assert all(o.worst_index == [3] and "never written" in o.message for _, o in fails)


@pytest.mark.parametrize("variant, where", [("overrun", "8 byte(s) past its end"),
                                            ("underrun", "16 byte(s) before its start")])
def test_port_writing_outside_an_argument_is_named(axpy, monkeypatch, variant, where):
    # such a port used to corrupt the driver's heap: a crash (signal 11) or output records
    # that no longer matched their headers ("cannot reshape array of size 1 into shape (0,)")
    monkeypatch.setenv("PF_TEST_VARIANT", variant)
    v = axpy.verify("serial")
    assert not v.passed
    errs = [c.error for c in v.cases]
    assert errs and all(f"the port wrote outside argument w ({where}" in e for e in errs), errs


def test_port_that_writes_an_input_is_caught(axpy, monkeypatch):
    monkeypatch.setenv("PF_TEST_VARIANT", "scribble")
    v = axpy.verify("serial")
    assert not v.passed
    assert {o.name for c in v.cases for o in c.outputs if not o.passed} == {"x"}


def test_hardcoded_answer_matches_its_seed_only(axpy, monkeypatch, tmp_path):
    spec_path = axpy.spec_path
    original = spec_path.read_text()
    try:
        data = yaml.safe_load(original)
        data["sizes"]["correctness"] = [{"n": 33}]  # a user edit: one size set,
        data["sizes"]["cross_tiles"] = False  # and no boundary-crossing case
        spec_path.write_text(yaml.safe_dump(data))
        spec = axpy.reload_spec()
        assert spec.edited and spec.correctness == [{"n": 33}] and not spec.cross_tiles
        # offline: run the original on seed S and keep its answer
        seed = 424242
        recs, _ = make_inputs(axpy.kernel, spec, Case(seed, {"n": 33}, {}))
        write_records(tmp_path / "in.bin", recs)
        ref = axpy.build_reference()
        import subprocess
        subprocess.run([str(ref), "run", str(tmp_path / "in.bin"), str(tmp_path / "out.bin")], check=True)
        out = read_records(tmp_path / "out.bin", ["n", "a", "x", "y", "w"])
        (tmp_path / "answer.bin").write_bytes(np.ascontiguousarray(out[4].data).tobytes())
        monkeypatch.setenv("PF_TEST_VARIANT", "hardcoded")
        monkeypatch.setenv("PF_TEST_ANSWER", str(tmp_path / "answer.bin"))
        assert axpy.verify("serial", seeds=[seed]).passed  # it does match the seed it was made for
        v = axpy.verify("serial")  # fresh seeds
        assert not v.passed and "w" in v.reason
        assert v.cases[0].seed != seed
    finally:
        spec_path.unlink()
        spec_path.write_text(original)
        axpy.reload_spec()


def test_infinite_loop_is_stopped_and_the_next_case_runs(axpy, monkeypatch):
    monkeypatch.setenv("PF_TEST_VARIANT", "loop")
    t0 = time.monotonic()
    v = axpy.verify("serial")
    took = time.monotonic() - t0
    assert not v.passed
    assert len(v.cases) == 4  # every case was still attempted
    assert all("wall-time" in c.error and "the port" in c.error for c in v.cases)
    assert took < 4 * (4.0 + 3.0) + 10
    monkeypatch.setenv("PF_TEST_VARIANT", "correct")
    assert axpy.verify("serial").passed  # nothing else affected


def test_unbounded_allocation_is_stopped(axpy, monkeypatch):
    monkeypatch.setenv("PF_TEST_VARIANT", "alloc")
    monkeypatch.setattr(axpy, "limits", Limits(wall_s=30.0, mem_mb=1024))  # the memory limit must trip first
    v = axpy.verify("serial")
    assert not v.passed and len(v.cases) == 4
    assert all("memory" in c.error for c in v.cases), [c.error for c in v.cases]


@pytest.mark.skipif(find_install("openmp") is None, reason="no Kokkos install with OpenMP")
def test_race_from_wrongly_parallelised_loop_is_caught(tmp_path):
    src = write_source(tmp_path, "psum.f90", PSUM_F90)
    port = write_port(tmp_path / "port", "psum", PSUM_RACY_PORT)
    h = Harness(psum_kernel(src), src, port, threads=2)
    spec = h.spec
    assert spec.args["x"].intent == "inout"
    # large n so the second thread starts long before the first reaches its chunk
    data = yaml.safe_load(h.spec_path.read_text())
    data["sizes"]["correctness"] = [{"n": 7}, {"n": 1000000}, {"n": 2000000}, {"n": 3000000}]
    h.spec_path.write_text(yaml.safe_dump(data))
    h.reload_spec()
    b = h.build("openmp")
    assert b.ok, b.log[-3000:]
    v = h.verify("openmp", seeds=2)
    assert not v.passed
    # a run where the OS happened to delay the second thread until the first was done
    # can pass; the verdict fails as soon as one case shows the race
    big = [c for c in v.cases if c.sizes["n"] >= 1000000]
    assert any(not c.passed for c in big)
    assert all(o.name == "x" for c in big for o in c.outputs if not o.passed)
    assert "x" in v.reason
