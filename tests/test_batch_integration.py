"""Acceptance: sample kernels batched through Parsl's local provider with 2 workers get the
same verdicts as through the local process pool, with the real pipeline (fparser, the rules
translator, gfortran, Kokkos builds, the differential test), backend serial.

Every kernel builds the original and its Kokkos port, so by default this runs a
representative subset (a 1-D parallel_for, a scattered update with atomics, and two
refusals: I/O inside the kernel, an unbounded assumed-size array). Set
PF_BATCH_ALL=1 to run every kernel of fortran_kernels/ (about 40 builds per executor).
The report of the real run is also validated against its schema and opened in Chromium."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml

from port_fortran.pipeline import batch
from port_fortran.reports.db import RunDB
from port_fortran.reports.render import load_schema

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "fortran_kernels"
SUBSET = {  # file -> kernels
    "vecops.F90": ["waxpby"],
    "histogram.f": ["histi"],
    "relax_io.f": ["relaxp"],
    "blas1.f": ["daxpy"],
}


def _have_toolchain() -> str:
    if not shutil.which("gfortran") or not shutil.which("cmake"):
        return "gfortran and cmake are needed"
    from port_fortran.build_runner.kokkos import find_install

    if find_install("serial") is None:
        return "no Kokkos install with the Serial backend (port-fortran kokkos install)"
    return ""


def _manifest(tmp: Path, kind: str) -> Path:
    if os.environ.get("PF_BATCH_ALL"):
        sources, kernels = [str(SAMPLES)], []
    else:
        sources = [str(SAMPLES / f) for f in SUBSET]
        kernels = [k for ks in SUBSET.values() for k in ks]
    data = {"sources": sources, "include": [str(SAMPLES / "include")], "backends": ["serial"],
            "models": ["rules"], "executor": kind, "workers": 2, "out": str(tmp / f"out-{kind}"),
            "config": {"optimize": False, "bench": False}}
    if kernels:
        data["kernels"] = kernels
    p = tmp / f"{kind}.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def _verdicts(out: Path, run_id: str) -> dict[str, tuple]:
    db = RunDB.in_dir(out)
    try:
        got = {}
        for k in db.kernels(run_id):
            backends = {}
            for v in db.verdicts(run_id, k["kernel_id"]):
                backends[v["backend"]] = bool(v["passed"])
            got[k["kernel_id"]] = (k["status"], k["reason_code"], tuple(sorted(backends.items())))
        return got
    finally:
        db.close()


@pytest.mark.integration
@pytest.mark.timeout(3600)
def test_parsl_local_and_process_pool_agree_on_sample_kernels(tmp_path):
    why = _have_toolchain()
    if why:
        pytest.skip(why)
    results = {}
    for kind in ("local", "parsl"):
        m = batch.load_manifest(_manifest(tmp_path, kind))
        run_id, counts = batch.run_batch(m, quiet=True, render=(kind == "parsl"))
        results[kind] = _verdicts(m.out, run_id)
    assert results["local"] == results["parsl"]
    got = results["parsl"]
    if not os.environ.get("PF_BATCH_ALL"):
        assert set(got) == {f"{f}:{k}" for f, ks in SUBSET.items() for k in ks}
        # refused as a whole (WRITE in the iteration loop): a hybrid port, proven like the others
        assert got["relax_io.f:relaxp"] == ("verified", "", (("serial", True),))
    # at least something was really built and proven through each executor
    assert any(status == "verified" and backends == (("serial", True),) for status, _, backends in got.values())

    # the real run's report: valid JSON, and an HTML page whose tables render
    out = tmp_path / "out-parsl"
    report = json.loads((out / "report.json").read_text())
    jsonschema.validate(report, load_schema())
    assert report["summary"]["kernels"] == len(got)
    chromium = shutil.which("chromium")
    if chromium:
        dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                              f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000",
                              "--dump-dom", (out / "report.html").resolve().as_uri()],
                             capture_output=True, text=True, timeout=120).stdout
        assert len(re.findall(r'<tr class="kernel-row"', dom)) == len(got)
        total = int(re.search(r'data-images-total="(\d+)"', dom).group(1))
        assert total >= 2 and f'data-images-loaded="{total}"' in dom
