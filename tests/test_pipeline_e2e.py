"""The whole graph with the real front end, translator, validator, builds and harness.

Few kernels, small: each Kokkos build takes a minute on the shared machine."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

from port_fortran.config import Config
from port_fortran.pipeline.graph import port_dir_for, port_kernel
from port_fortran.pipeline.state import KernelJob
from port_fortran.reports.db import RunDB

ROOT = Path(__file__).resolve().parents[1]
VECOPS = ROOT / "fortran_kernels" / "vecops.F90"

pytestmark = pytest.mark.integration


def _kokkos_or_skip():
    from port_fortran.build_runner.kokkos import find_install

    if find_install("serial") is None or find_install("openmp") is None:
        pytest.skip("no Kokkos install with Serial and OpenMP (set Kokkos_ROOT)")


def test_rules_pipeline_on_sample_kernels(tmp_path, capsys):
    _kokkos_or_skip()
    from port_fortran.cli import main

    cfg = tmp_path / "pf.yaml"
    cfg.write_text("optimizer_variants: 0\nbench: true\n")
    out = tmp_path / "out"
    rc = main([str(VECOPS), "--kernel", "waxpby", "--kernel", "vdist", "--backends", "serial,openmp",
               "--out", str(out), "--config", str(cfg), "--quiet"])
    text = capsys.readouterr().out
    assert rc == 0, text
    db = RunDB.in_dir(out)
    run_id = db.latest_run()
    ks = {k["name"]: k for k in db.kernels(run_id)}
    assert {n: k["status"] for n, k in ks.items()} == {"waxpby": "verified", "vdist": "verified"}
    assert json.loads(ks["vdist"]["patterns"]) == ["reduce"]
    for name in ("waxpby", "vdist"):
        kid = ks[name]["kernel_id"]
        stages = [(a["stage"], a["backend"]) for a in db.attempts(run_id, kid)]
        assert stages[:6] == [("translate", ""), ("validate", ""), ("compile", "serial"), ("compile", "openmp"),
                              ("run", "serial"), ("run", "openmp")]
        vs = db.verdicts(run_id, kid)
        assert {v["backend"]: v["passed"] for v in vs} == {"serial": 1, "openmp": 1}
        assert all(json.loads(v["data"])["cases"] for v in vs)
        variants = {t["variant"] for t in db.timings(run_id, kid)}
        assert {"kokkos-serial", "kokkos-openmp"} <= variants and any(v.startswith("fortran") for v in variants)
        pdir = Path(ks[name]["port_dir"])
        assert pdir == port_dir_for(out, "vecops.F90", name) and (pdir / f"{name}.kokkos.cpp").is_file()
        assert json.loads((pdir / "outcome.json").read_text())["status"] == "verified"


def test_llm_port_goes_through_the_real_build_and_differential_test(tmp_path):
    """A scripted LLM answers a port that builds but computes the wrong thing, then the
    right one after the debugger round; the real harness catches the first."""
    _kokkos_or_skip()
    from port_fortran.fortran import parse_file
    from port_fortran.translate import translate_kernel

    sf = parse_file(VECOPS)
    k = next(k for k in sf.kernels if k.name == "waxpby")
    right = translate_kernel(k, sf).files["waxpby.kokkos.cpp"]
    assert "alpha * x(i - 1)" in right
    wrong = right.replace("alpha * x(i - 1)", "(alpha + 0.5) * x(i - 1)")
    usage = {"input_tokens": 3000, "output_tokens": 800, "total_tokens": 3800}
    model = FakeMessagesListChatModel(responses=[
        AIMessage(content=f"Here is the port:\n```cpp\n{wrong}```", usage_metadata=usage),
        AIMessage(content=f"Fixed: alpha was shifted.\n```cpp\n{right}```", usage_metadata=usage)])

    out = tmp_path / "out"
    db = RunDB.in_dir(out)
    config = Config.from_dict({"models": ["openai:gpt-4o-mini"], "backends": ["serial"], "bench": False,
                               "optimizer_variants": 0})
    run_id = db.start_run(config=config.to_dict())
    job = KernelJob(run_id, str(out), str(VECOPS), "vecops.F90", "waxpby", config.to_dict(),
                    str(port_dir_for(out, "vecops.F90", "waxpby")))
    db.upsert_kernel(run_id, job.kernel_id, "vecops.F90", "waxpby")
    res = port_kernel(job, chat_factory=lambda spec: model)
    assert res.status == "verified", res
    assert res.stages == ["translate:openai:gpt-4o-mini", "validate", "compile:serial", "run:serial", "debug:run",
                          "validate", "compile:serial", "run:serial", "finalize"]
    vs = db.verdicts(run_id, job.kernel_id)
    assert [v["passed"] for v in vs] == [0, 1]
    worst = json.loads(vs[0]["data"])
    assert any(not o["passed"] and o["name"] == "w" for c in worst["cases"] for o in c["outputs"])
    calls = db.llm_calls(run_id)
    assert [c["stage"] for c in calls] == ["translate", "debug"] and all(c["cost_usd"] > 0 for c in calls)
    assert db.kernel(run_id, job.kernel_id)["model"] == "openai:gpt-4o-mini"
    assert "(alpha + 0.5)" not in Path(job.port_dir, "waxpby.kokkos.cpp").read_text()
