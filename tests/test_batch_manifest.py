"""Batch manifests: validation names the bad key; kernels fan out through the local pool and
Parsl alike; a failing kernel never stops the others; a re-run resumes.

The kernel function here is a cheap stand-in for the pipeline's ``port_kernel`` (it
records an outcome in the run database the same way); the real pipeline is exercised by
tests/test_batch_integration.py. Workers import this module by name, so it must stay
importable from the tests directory (Parsl workers get it through PYTHONPATH)."""
from __future__ import annotations

import os
import re
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from port_fortran.cli import main
from port_fortran.errors import UserError
from port_fortran.pipeline import batch
from port_fortran.pipeline.state import KernelOutcome
from port_fortran.reports.db import RunDB

HERE = Path(__file__).resolve().parent
STAGES = f"{Path(__file__).stem}:make_fake_stages"


# --------------------------------------------------------------------------- stand-ins

class FakeStages:
    """Finds 'subroutine NAME' lines; a file containing 'syntax error' does not parse."""

    def __init__(self, config=None):
        self.config = config

    def discover(self, paths):
        out = []
        for p in map(Path, paths):
            out += sorted(p.rglob("*.f90")) if p.is_dir() else [p]
        return out

    def parse(self, path, include_dirs=(), defines=None):
        text = Path(path).read_text()
        kernels, errors = [], []
        for i, line in enumerate(text.splitlines(), 1):
            m = re.match(r"\s*subroutine\s+(\w+)", line, re.I)
            if m:
                kernels.append(SimpleNamespace(name=m.group(1).lower(), line_start=i, line_end=i + 2))
            if "syntax error" in line:
                errors.append(SimpleNamespace(line=i, code="syntax-error", message="syntax error: unexpected token"))
        if errors:
            kernels = []
        return SimpleNamespace(kernels=kernels, errors=errors)


def make_fake_stages(config):
    return FakeStages(config)


def fake_port_kernel(job):
    """Records attempts, a verdict per backend and timings; the kernel's name decides:
    bad* fails verification, refuse* is refused, boom* raises, die* kills its worker."""
    name = job.kernel
    if name.startswith("boom"):
        raise RuntimeError(f"kernel {name} blew up")
    if name.startswith("die"):
        os._exit(3)
    db = RunDB.in_dir(job.out_dir)
    try:
        rid, kid = job.run_id, job.kernel_id
        db.set_kernel(rid, kid, status="running", started=time.time(), port_dir=job.port_dir)
        db.add_attempt(rid, kid, "translate", not name.startswith("refuse"), detail=f"pid {os.getpid()}")
        if name.startswith("refuse"):
            status, reason = "refused", f"{job.rel_file}:2: loop carries a dependence"
        else:
            ok = not name.startswith("bad")
            for b in job.config["backends"]:
                db.add_attempt(rid, kid, "compile", True, backend=b)
                db.add_verdict(rid, kid, b, ok, "" if ok else "y differs", {"backend": b, "passed": ok, "cases": []})
            db.add_timing(rid, kid, "fortran-serial", 2e-3, sizes={"n": 1000})
            db.add_timing(rid, kid, "kokkos-serial", 1e-3, sizes={"n": 1000}, proven_sizes={"n": 1000})
            status, reason = ("verified", "") if ok else ("failed", f"{job.rel_file}:2: y differs")
        model = job.config["models"][0]
        db.set_kernel(rid, kid, status=status, reason=reason, model=model, finished=time.time())
        if model != "rules":
            db.add_llm_call(rid, model, kernel_id=kid, input_tokens=1000, cached_tokens=100, output_tokens=200,
                            cost_usd=0.01)
        return KernelOutcome(kid, status, reason, model=model, port_dir=job.port_dir)
    finally:
        db.close()


# --------------------------------------------------------------------------- fixtures

def write_sources(root: Path, names_by_file: dict[str, list[str]]) -> Path:
    src = root / "src"
    src.mkdir(parents=True, exist_ok=True)
    for fname, names in names_by_file.items():
        body = "".join(f"subroutine {n}(x)\n  x = 1\nend subroutine\n" for n in names)
        (src / fname).write_text(body)
    return src


def write_manifest(root: Path, **over) -> Path:
    data = {"sources": ["src/"], "backends": ["serial"], "models": ["rules"], "out": "out",
            "config": {"stages_factory": STAGES}}
    data.update(over)
    p = root / "batch.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def verdicts(out: Path, run_id: str) -> dict[str, str]:
    db = RunDB.in_dir(out)
    try:
        return {k["kernel_id"]: k["status"] for k in db.kernels(run_id)}
    finally:
        db.close()


# --------------------------------------------------------------------------- manifest validation

@pytest.mark.parametrize("content,needle", [
    ("backends: [serial]\n", "key 'sources': missing"),
    ("sources: [src/]\nbackend: [serial]\n", "key 'backend': unknown key"),
    ("sources: [nowhere/]\n", "key 'sources[0]'"),
    ("sources: ['src/*.f77']\n", "matches no file"),
    ("sources: [src/]\nbackends: [serial, fpga]\n", "key 'backends'"),
    ("sources: [src/]\nworkers: 0\n", "key 'workers'"),
    ("sources: [src/]\nexecutor: dask\n", "key 'executor'"),
    ("sources: [src/]\nbudget: {max_dollars: 3}\n", "key 'budget'"),
    ("sources: [src/]\nexecutor: parsl\nsite: {partition: 3}\n", "site.partition"),
    ("sources: [src/]\nexecutor: parsl\nsite: {walltime: '01:00:00', queue: x}\n", "key 'site.queue': unknown"),
    ("sources: [src/]\nsite: {partition: cpu}\n", "key 'site'"),
    ("sources: [src/]\nconfig: {debug_rounds: many}\n", "key 'config.debug_rounds'"),
    ("sources: [src/]\nconfig: {backends: [serial]}\n", "config.backends"),
    ("sources: [src/]\nconfig: {fflags: -g}\n", "config.fflags"),
    ("sources: [src/]\nfflags: -freal-4-real-8\n", "key 'fflags'"),
    ("sources: [src/\n", "not valid YAML"),
])
def test_manifest_errors_name_the_key(tmp_path, content, needle):
    write_sources(tmp_path, {"a.f90": ["k"]})
    p = tmp_path / "m.yaml"
    p.write_text(content)
    with pytest.raises(UserError) as ei:
        batch.load_manifest(p)
    assert needle in str(ei.value) and str(p) in str(ei.value)


def test_manifest_fflags(tmp_path):
    write_sources(tmp_path, {"a.f90": ["k"]})
    p = write_manifest(tmp_path, sources=["src/"], fflags="-fno-range-check -ffree-line-length-none")
    assert batch.load_manifest(p).config.fflags == ["-fno-range-check", "-ffree-line-length-none"]


def test_manifest_resolves_paths_and_settings(tmp_path):
    write_sources(tmp_path, {"a.f90": ["k"], "b.f90": ["j"]})
    (tmp_path / "inc").mkdir()
    site = tmp_path / "site.yaml"
    site.write_text("provider: slurm\npartition: cpu\naccount: p1\nwalltime: '01:00:00'\nnodes_per_block: 2\n"
                    "max_blocks: 3\ncores_per_worker: 4\nworker_init: module load gcc kokkos\n")
    p = write_manifest(tmp_path, sources=["src/*.f90"], include=["inc"], defines=["USE_MPI=0", "FAST"],
                       budget={"max_cost": 2.5}, executor="parsl", workers=4, site="site.yaml",
                       models=["rules"], kernels=["k"])
    m = batch.load_manifest(p)
    assert [Path(s).name for s in m.sources] == ["a.f90", "b.f90"]
    assert m.config.include_dirs == [str(tmp_path / "inc")]
    assert m.config.defines == {"USE_MPI": "0", "FAST": "1"}
    assert m.config.max_cost == 2.5 and m.config.kernels == ["k"]
    assert m.executor == "parsl" and m.workers == 4 and m.site["partition"] == "cpu"
    assert m.out == tmp_path / "out"
    assert m.run_id == batch.batch_run_id(p) == batch.load_manifest(p).run_id  # stable: re-runs resume
    # flags win over the manifest
    m2 = batch.load_manifest(p, executor="parsl", workers=2, out=str(tmp_path / "elsewhere"))
    assert m2.workers == 2 and m2.out == tmp_path / "elsewhere"
    m3 = batch.load_manifest(p, executor="local")  # run it here: the Slurm site does not apply
    assert m3.executor == "local" and m3.site == {}


def test_slurm_site_becomes_a_parsl_slurm_config(tmp_path):
    from parsl.providers import SlurmProvider

    from port_fortran.pipeline.executors import parsl_config

    cfg = parsl_config(4, tmp_path / "runinfo", {"provider": "slurm", "partition": "cpu", "account": "p1",
                                                 "walltime": "02:00:00", "nodes_per_block": 2, "max_blocks": 3,
                                                 "cores_per_worker": 4, "worker_init": "module load gcc kokkos"})
    htex = cfg.executors[0]
    assert isinstance(htex.provider, SlurmProvider)
    prov = htex.provider
    assert (prov.partition, prov.account, prov.walltime, prov.nodes_per_block, prov.max_blocks) == \
        ("cpu", "p1", "02:00:00", 2, 3)
    assert prov.worker_init.startswith("module load gcc kokkos")
    assert htex.cores_per_worker == 4
    assert cfg.run_dir == str((tmp_path / "runinfo").resolve())


# --------------------------------------------------------------------------- running

def test_batch_runs_records_failures_and_resumes(tmp_path, capsys):
    write_sources(tmp_path, {"a.f90": ["good1", "bad1"], "b.f90": ["boom1", "refuse1", "good2"],
                             "c.f90": ["x"]})
    (tmp_path / "src" / "c.f90").write_text("subroutine x\n  syntax error here\nend\n")
    p = write_manifest(tmp_path, workers=2)
    m = batch.load_manifest(p)
    run_id, counts = batch.run_batch(m, kernel_fn=fake_port_kernel)
    got = verdicts(m.out, run_id)
    assert got == {"a.f90:good1": "verified", "a.f90:bad1": "failed", "b.f90:boom1": "error",
                   "b.f90:refuse1": "refused", "b.f90:good2": "verified", "c.f90:*": "error"}
    db = RunDB.in_dir(m.out)
    boom = db.kernel(run_id, "b.f90:boom1")
    assert "blew up" in boom["reason"] and boom["reason_code"] == "executor-error"
    assert db.kernel(run_id, "c.f90:*")["reason"].endswith("c.f90:2: syntax error: unexpected token")
    first_attempts = len(db.attempts(run_id))
    assert (m.out / "report.html").is_file() and (m.out / "report.json").is_file()

    # re-run: verified and refused kernels are skipped, the failed ones run again
    out = capsys.readouterr().out
    assert "5 kernel(s) to port" in out
    run2, _ = batch.run_batch(batch.load_manifest(p), kernel_fn=fake_port_kernel)
    assert run2 == run_id
    assert "2 kernel(s) to port" in capsys.readouterr().out and "3 already verified or refused" in out + \
        "3 already verified or refused"
    translated = [a["kernel_id"] for a in db.attempts(run_id) if a["stage"] == "translate"]
    assert translated.count("a.f90:good1") == 1 and translated.count("a.f90:bad1") == 2
    assert len(db.attempts(run_id)) > first_attempts
    assert db.run(run_id)["status"] == "finished"
    db.close()


def test_dead_worker_does_not_stop_the_batch(tmp_path):
    write_sources(tmp_path, {"a.f90": ["die1", "good1", "good2", "good3"]})
    m = batch.load_manifest(write_manifest(tmp_path, workers=2))
    run_id, counts = batch.run_batch(m, kernel_fn=fake_port_kernel, render=False)
    got = verdicts(m.out, run_id)
    assert got["a.f90:die1"] == "error"
    assert [got[f"a.f90:good{i}"] for i in (1, 2, 3)] == ["verified"] * 3


def test_cmd_batch_exit_codes(tmp_path, monkeypatch, capsys):
    write_sources(tmp_path, {"a.f90": ["good1"]})
    p = write_manifest(tmp_path)
    monkeypatch.setattr(batch, "load_kernel_fn", lambda spec=None: fake_port_kernel)
    assert main(["batch", str(p), "--workers", "1", "--quiet"]) == 0
    write_sources(tmp_path, {"b.f90": ["bad1"]})
    assert main(["batch", str(p), "--quiet"]) == 1
    assert main(["batch", str(tmp_path / "missing.yaml")]) == 2
    assert "no such manifest" in capsys.readouterr().err


def test_parsl_local_gives_the_same_verdicts_as_the_local_pool(tmp_path, monkeypatch):
    """The executor-parity check with the stand-in kernel function (cheap); the acceptance
    version with the real pipeline is in test_batch_integration.py."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    write_sources(tmp_path, {"a.f90": ["good1", "bad1", "refuse1"], "b.f90": ["boom1", "good2"]})
    results = {}
    for kind in ("local", "parsl"):
        p = write_manifest(tmp_path, executor=kind, workers=2, out=f"out-{kind}")
        m = batch.load_manifest(p)
        run_id, _ = batch.run_batch(m, kernel_fn=fake_port_kernel, quiet=True, render=False)
        results[kind] = verdicts(m.out, run_id)
    assert results["local"] == results["parsl"]
    assert results["parsl"]["a.f90:good1"] == "verified" and results["parsl"]["b.f90:boom1"] == "error"
    assert (tmp_path / "out-parsl" / "parsl-runinfo").is_dir()  # Parsl's logs stay under the output dir
