"""The model comparison: one table of success rate, median speedup per backend, tokens and
cost per model, computed from the run database (synthetic runs) and produced end to end
by ``run_compare`` with a stand-in kernel function."""
from __future__ import annotations

import json
import statistics

import pytest

from port_fortran.config import Config
from port_fortran.pipeline import batch
from port_fortran.reports.db import RunDB
from port_fortran.reports.synthetic import KERNELS, fill_synthetic

from test_batch_manifest import STAGES, fake_port_kernel, write_sources


def test_compare_table_from_synthetic_runs(tmp_path):
    db = RunDB.in_dir(tmp_path)
    runs = {
        "rules": fill_synthetic(db, model="rules", llm_models=(), seed=1),
        "openai:gpt-4o-mini": fill_synthetic(db, model="openai:gpt-4o-mini", llm_models=("openai:gpt-4o-mini",),
                                             seed=2, kernels=KERNELS[:6] + KERNELS[9:]),
    }
    rows = {r["model"]: r for r in batch.write_compare(db, runs, tmp_path)}
    rules, gpt = rows["rules"], rows["openai:gpt-4o-mini"]
    n_ver = sum(1 for k in KERNELS if k[4] == "verified")
    assert rules["verified"] == n_ver and rules["attempted"] == len(KERNELS)
    assert rules["success_rate"] == pytest.approx(n_ver / len(KERNELS))
    assert rules["cost_usd"] == 0 and rules["input_tokens"] == 0
    calls = db.llm_calls(runs["openai:gpt-4o-mini"])
    assert gpt["cost_usd"] == pytest.approx(sum(c["cost_usd"] for c in calls)) and gpt["cost_usd"] > 0
    assert gpt["input_tokens"] == sum(c["input_tokens"] for c in calls)
    assert gpt["cached_tokens"] == sum(c["cached_tokens"] for c in calls)
    assert gpt["output_tokens"] == sum(c["output_tokens"] for c in calls)
    # median speedup per backend = median over verified kernels of fortran-serial / kokkos-<b>
    sp = []
    for k in db.kernels(runs["rules"]):
        if k["status"] != "verified":
            continue
        t = {r["variant"]: r["median_s"] for r in db.timings(runs["rules"], k["kernel_id"])}
        if "kokkos-openmp" in t:
            sp.append(t["fortran-serial"] / t["kokkos-openmp"])
    assert rules["median_speedup"]["openmp"] == pytest.approx(statistics.median(sp))

    data = json.loads((tmp_path / "compare.json").read_text())
    assert [r["model"] for r in data["models"]] == ["rules", "openai:gpt-4o-mini"]
    md = (tmp_path / "compare.md").read_text()
    header = next(line for line in md.splitlines() if line.startswith("| model"))
    assert "speedup serial" in header and "speedup openmp" in header and "cached tokens" in header
    body = [line for line in md.splitlines() if line.startswith("| openai")]
    assert len(body) == 1 and f"{n_ver}/" not in body[0]
    db.close()


def test_run_compare_end_to_end_with_stand_in(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = write_sources(tmp_path, {"a.f90": ["good1", "bad1"], "b.f90": ["good2", "refuse1"]})
    base = Config.from_dict({"backends": ["serial"], "stages_factory": STAGES})
    models = ["rules", "openai:gpt-4o-mini"]
    runs, rows = batch.run_compare(models, [str(src)], base, tmp_path / "cmp", kind="local", workers=2,
                                   kernel_fn=fake_port_kernel, quiet=True)
    assert list(runs) == models and len(set(runs.values())) == 2
    by = {r["model"]: r for r in rows}
    for m in models:
        assert by[m]["attempted"] == 4 and by[m]["verified"] == 2 and by[m]["success_rate"] == 0.5
        assert by[m]["median_speedup"]["serial"] == pytest.approx(2.0)
        assert (tmp_path / "cmp" / "reports" / batch._safe(m) / "report.html").is_file()
    assert by["rules"]["cost_usd"] == 0
    assert by["openai:gpt-4o-mini"]["cost_usd"] == pytest.approx(0.04)  # one call per kernel
    assert by["openai:gpt-4o-mini"]["cached_tokens"] == 400
    # each model's ports live apart
    db = RunDB.in_dir(tmp_path / "cmp")
    dirs = {k["port_dir"] for r in runs.values() for k in db.kernels(r)}
    assert len(dirs) == 8
    db.close()
    monkeypatch.setenv("COLUMNS", "200")
    batch.print_compare(rows)
    out = capsys.readouterr().out
    assert "model comparison" in out and "openai:gpt-4o-mini" in out and "50% (2/4)" in out


def test_compare_command_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    src = write_sources(tmp_path, {"a.f90": ["good1"]})
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"stages_factory: '{STAGES}'\n")
    monkeypatch.setattr(batch, "load_kernel_fn", lambda spec=None: fake_port_kernel)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")  # the stand-in makes no calls
    from port_fortran.cli import main

    rc = main(["compare", "--models", "rules,openai:gpt-4o-mini", str(src), "--backends", "serial",
               "--config", str(cfg), "--out", str(tmp_path / "o"), "-j", "1", "--quiet"])
    assert rc == 0  # every model verified every kernel
    out = capsys.readouterr().out
    assert "openai:gpt-4o-mini" in out and "100% (1/1)" in out
    rows = json.loads((tmp_path / "o" / "compare.json").read_text())["models"]
    assert [r["success_rate"] for r in rows] == [1.0, 1.0]
    assert main(["compare", "--models", " , ", str(src), "--out", str(tmp_path / "o2")]) == 2
    monkeypatch.delenv("OPENAI_API_KEY")
    assert main(["compare", "--models", "rules,openai:gpt-4o-mini", str(src), "--out", str(tmp_path / "o3")]) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err and not (tmp_path / "o3").exists()
