"""`port-fortran SRC --out D` end to end through the CLI with scripted stages: summary,
exit codes, file errors, -j, and killing a run midway then --resume RUN_ID."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_pipeline_fakes import fake_source  # noqa: E402

TESTS = Path(__file__).parent
EXE = [sys.executable, "-m", "port_fortran.cli"]


def setup_tree(tmp_path: Path, kernels: dict[str, list[str]], extra_cfg: str = "") -> tuple[Path, Path]:
    src = tmp_path / "src"
    src.mkdir()
    for name, dirs in kernels.items():
        (src / f"{name}.f").write_text(fake_source({name: dirs}))
    cfg = tmp_path / "pf.yaml"
    cfg.write_text('stages_factory: "test_pipeline_fakes:make_stages"\nbench: false\nbackends: [serial]\n'
                   + extra_cfg)
    return src, cfg


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = f"{TESTS}{os.pathsep}{e.get('PYTHONPATH', '')}"
    return e


def run(args, **kw):
    return subprocess.run(EXE + args, capture_output=True, text=True, env=env(), timeout=300, **kw)


class Result:
    def __init__(self, rc, out, err):
        self.returncode, self.stdout, self.stderr = rc, out, err


def run_here(args, capsys):
    """The CLI in this process (no interpreter start-up: langgraph imports are slow)."""
    from port_fortran.cli import main

    capsys.readouterr()
    rc = main(args)
    o = capsys.readouterr()
    return Result(rc, o.out, o.err)


def rows(db_path: Path, sql: str, params=()):
    con = sqlite3.connect(str(db_path), timeout=30)
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute(sql, params)]
    finally:
        con.close()


def test_run_summary_exit_codes_and_file_errors(tmp_path, capsys):
    src, cfg = setup_tree(tmp_path, {"aa": [], "bb": ["wrong-unless-serial"]})
    out = tmp_path / "out"
    r = run_here([str(src), "--out", str(out), "--config", str(cfg), "--quiet"], capsys)
    assert r.returncode == 0, r.stderr
    assert "verified" in r.stdout and "aa.f:aa" in r.stdout
    ks = rows(out / "port-fortran.db", "SELECT kernel_id, status, port_dir FROM kernels")
    assert {k["kernel_id"]: k["status"] for k in ks} == {"aa.f:aa": "verified", "bb.f:bb": "verified"}
    assert Path(ks[0]["port_dir"]).parent.parent == out
    # a file with a syntax error is recorded with file:line; the others go on; exit 1
    (src / "cc.f").write_text("! fake: syntax-error\n" + fake_source({"cc": []}))
    r = run_here([str(src), "--out", str(out), "--config", str(cfg), "--quiet", "-j", "2"], capsys)
    assert r.returncode == 1
    assert "cc.f:1" in r.stderr
    run_id = rows(out / "port-fortran.db", "SELECT run_id FROM runs ORDER BY started DESC LIMIT 1")[0]["run_id"]
    ks = {k["kernel_id"]: k for k in rows(out / "port-fortran.db", "SELECT * FROM kernels WHERE run_id=?",
                                          (run_id,))}
    assert ks["cc.f:*"]["status"] == "error" and "cc.f:1" in ks["cc.f:*"]["reason"]
    assert ks["cc.f:cc"]["status"] == "verified" and ks["bb.f:bb"]["status"] == "verified"


def test_unknown_resume_id_is_a_usage_error(tmp_path, capsys):
    src, cfg = setup_tree(tmp_path, {"aa": []})
    r = run_here([str(src), "--out", str(tmp_path / "out"), "--config", str(cfg), "--resume", "nope"], capsys)
    assert r.returncode == 2 and "no such run" in r.stderr


def test_kill_midway_then_resume_repeats_no_finished_work(tmp_path, capsys):
    kernels = {"k1": [], "k2": ["sleep-compile=4"], "k3": ["wrong-unless-serial"]}
    src, cfg = setup_tree(tmp_path, kernels)
    out = tmp_path / "out"
    db = out / "port-fortran.db"
    proc = subprocess.Popen(EXE + [str(src), "--out", str(out), "--config", str(cfg), "--quiet", "-j", "1"],
                            env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.time() + 120
        while time.time() < deadline:  # wait for k1 finished and k2 inside its (slow) compile stage
            if db.exists():
                try:
                    st = {r["kernel_id"]: r["status"] for r in rows(db, "SELECT kernel_id, status FROM kernels")}
                    at = rows(db, "SELECT stage FROM attempts WHERE kernel_id='k2.f:k2'")
                except sqlite3.OperationalError:
                    st, at = {}, []
                if st.get("k1.f:k1") == "verified" and any(a["stage"] == "validate" for a in at):
                    break
            time.sleep(0.2)
        else:
            pytest.fail("the run never reached k2's compile stage")
        # the validate attempt is recorded before its checkpoint is written: give the
        # checkpoint a second (k2's compile sleeps 4 s, so the kill still lands inside it)
        time.sleep(1.0)
        os.killpg(proc.pid, signal.SIGKILL)  # the process group this test started
    finally:
        proc.wait(timeout=30)
    run_id = rows(db, "SELECT run_id FROM runs")[0]["run_id"]
    before = {r["kernel_id"]: r["status"] for r in rows(db, "SELECT kernel_id, status FROM kernels")}
    assert before["k1.f:k1"] == "verified" and before["k2.f:k2"] == "running"

    r = run([str(src), "--out", str(out), "--resume", run_id, "--quiet"])
    assert r.returncode == 0, r.stderr
    after = {r["kernel_id"]: r["status"] for r in rows(db, "SELECT kernel_id, status FROM kernels")}
    assert after == {"k1.f:k1": "verified", "k2.f:k2": "verified", "k3.f:k3": "verified"}
    att = rows(db, "SELECT kernel_id, stage FROM attempts WHERE run_id=?", (run_id,))

    def count(k, stage):
        return sum(1 for a in att if a["kernel_id"] == k and a["stage"] == stage)

    assert count("k1.f:k1", "translate") == 1 and count("k1.f:k1", "finalize") == 1  # not repeated
    assert count("k2.f:k2", "translate") == 1 and count("k2.f:k2", "validate") == 1  # resumed mid-graph
    assert rows(db, "SELECT status FROM runs WHERE run_id=?", (run_id,))[0]["status"] == "finished"

    # the same results as an uninterrupted run
    out2 = tmp_path / "out2"
    r = run_here([str(src), "--out", str(out2), "--config", str(cfg), "--quiet"], capsys)
    assert r.returncode == 0
    ref = rows(out2 / "port-fortran.db", "SELECT kernel_id, status, model, patterns FROM kernels ORDER BY kernel_id")
    got = rows(db, "SELECT kernel_id, status, model, patterns FROM kernels ORDER BY kernel_id")
    assert got == ref


def test_missing_api_key_is_a_usage_error_before_any_work(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    src, cfg = setup_tree(tmp_path, {"aa": []})
    r = run_here([str(src), "--out", str(tmp_path / "out"), "--config", str(cfg), "--model", "rules,openai:gpt-4o"],
                 capsys)
    assert r.returncode == 2 and "OPENAI_API_KEY" in r.stderr


def test_sigterm_marks_the_run_interrupted_with_exit_4(tmp_path):
    src, cfg = setup_tree(tmp_path, {"k1": ["sleep-compile=30"]})
    out = tmp_path / "out"
    db = out / "port-fortran.db"
    proc = subprocess.Popen(EXE + [str(src), "--out", str(out), "--config", str(cfg), "--quiet"], env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                if db.exists() and rows(db, "SELECT 1 FROM attempts WHERE stage='validate'"):
                    break
            except sqlite3.OperationalError:
                pass
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 4, err
    assert "--resume" in err
    assert rows(db, "SELECT status FROM runs")[0]["status"] == "interrupted"


def test_llm_run_over_http_budget_then_resume_with_more_budget(tmp_path, capsys):
    from llm_server import ScriptedLLMServer

    wrong = ('```cpp\n#include "aa.kokkos.hpp"\nextern "C" void aa_kokkos(const int* n, const double* x, '
             'double* y) {\n  // WRONG\n}\n```')
    right = wrong.replace("WRONG", "ok")
    src, cfg = setup_tree(tmp_path, {"aa": []}, "optimizer_variants: 0\nprices:\n  served: {input: 10.0, output: 10.0}\n")
    out = tmp_path / "out"
    with ScriptedLLMServer([{"content": wrong, "prompt_tokens": 1000, "completion_tokens": 100},
                            {"content": right, "prompt_tokens": 1000, "completion_tokens": 100}]) as srv:
        r = run_here([str(src), "--out", str(out), "--config", str(cfg), "--model", "served", "--base-url", srv.url,
                      "--max-cost", "0.001", "--quiet"], capsys)
        assert r.returncode == 1
        db = out / "port-fortran.db"
        run_id = rows(db, "SELECT run_id FROM runs")[0]["run_id"]
        assert rows(db, "SELECT status FROM kernels")[0]["status"] == "budget-reached"
        calls = rows(db, "SELECT cost_usd FROM llm_calls")
        assert len(calls) == 1 and calls[0]["cost_usd"] == pytest.approx(0.011)
        assert "$0.0110" in r.stdout  # the summary's LLM line
        r = run_here([str(src), "--out", str(out), "--resume", run_id, "--max-cost", "1", "--quiet"], capsys)
        assert r.returncode == 0, r.stderr
    assert rows(db, "SELECT status FROM kernels")[0]["status"] == "verified"
    assert len(rows(db, "SELECT 1 FROM llm_calls")) == 2 and len(srv.requests) == 2
