"""Executors: the same submit/shutdown interface over a spawn process pool and Parsl; a
call that raises or kills its worker fails alone."""
from __future__ import annotations

import concurrent.futures as cf
import os
from pathlib import Path

import pytest

from port_fortran.errors import UserError
from port_fortran.pipeline.executors import Failure, make_executor, run_all

HERE = Path(__file__).resolve().parent


def square(x):
    if x == 3:
        raise ValueError("three is not welcome")
    if x == 99:
        os._exit(7)  # a worker that dies (segfault, OOM kill...)
    return x * x, os.getpid()


def test_local_pool_submit_returns_futures_in_other_processes():
    with make_executor("local", 2) as ex:
        fut = ex.submit(square, 4)
        assert isinstance(fut, cf.Future)
        value, pid = fut.result(timeout=120)
        assert value == 16 and pid != os.getpid()


def test_run_all_turns_exceptions_and_dead_workers_into_failures():
    seen = []
    with make_executor("local", 2) as ex:
        results = run_all(ex, square, [1, 2, 3, 99, 5, 6], on_done=lambda i, r, f: seen.append(i))
    by_item = {i: (r, f) for i, r, f in results}
    assert sorted(by_item) == [1, 2, 3, 5, 6, 99] and sorted(seen) == sorted(by_item)
    assert by_item[3][1] == Failure("ValueError", "three is not welcome")
    assert by_item[99][0] is None and by_item[99][1].error_type == "BrokenProcessPool"
    # calls that shared the pool with the dying one were retried on their own and succeeded
    for i in (1, 2, 5, 6):
        assert by_item[i][1] is None and by_item[i][0][0] == i * i


def test_bad_kinds_and_settings_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="executor: expected one of local, parsl"):
        make_executor("dask", 2)
    with pytest.raises(UserError, match="parsl executor only"):
        make_executor("local", 2, partition="cpu")
    with pytest.raises(UserError, match="key 'site.max_blocks': must be at least 1"):
        make_executor("parsl", 2, run_dir=tmp_path, provider="slurm", max_blocks=0)
    with pytest.raises(UserError, match="key 'site.nodes_per_block': expected int"):
        make_executor("parsl", 2, run_dir=tmp_path, nodes_per_block=True)


def test_parsl_local_provider_runs_calls_and_cleans_up(tmp_path, monkeypatch):
    import parsl

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    run_dir = tmp_path / "out" / "parsl-runinfo"
    with make_executor("parsl", 2, run_dir=run_dir) as ex:
        fut = ex.submit(square, 5)
        assert isinstance(fut, cf.Future)
        assert fut.result(timeout=300)[0] == 25
        results = {i: (r, f) for i, r, f in run_all(ex, square, [1, 3, 4])}
    assert results[1][0][0] == 1 and results[4][0][0] == 16
    assert results[3][1].error_type == "ValueError"
    assert any(run_dir.iterdir())  # Parsl's logs are under the run dir given
    with pytest.raises(parsl.errors.NoDataFlowKernelError):
        parsl.dfk()  # unloaded: a second executor can start later in the same process


def test_local_workers_end_with_the_run_that_started_them(tmp_path):
    # a run killed by a batch system's time limit must not leave workers porting on
    import signal
    import subprocess
    import sys
    import time

    pidfile = tmp_path / "worker.pid"
    script = tmp_path / "parent.py"
    script.write_text(f"""
import os, time
from port_fortran.pipeline.executors import LocalExecutor

def work(path):
    open(path, "w").write(str(os.getpid()))
    time.sleep(120)

if __name__ == "__main__":
    ex = LocalExecutor(1)
    ex.submit(work, {str(pidfile)!r})
    time.sleep(120)
""")
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    parent = subprocess.Popen([sys.executable, str(script)], cwd=root, env=env)

    def alive(pid: int) -> bool:  # a zombie no one has reaped yet is not running
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        return state != "Z"

    try:
        for _ in range(300):
            if pidfile.exists() and pidfile.read_text():
                break
            time.sleep(0.1)
        worker = int(pidfile.read_text())
        assert alive(worker)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        for _ in range(100):
            if not alive(worker):
                break
            time.sleep(0.1)
        else:
            os.kill(worker, signal.SIGKILL)
            raise AssertionError("the worker outlived its run by 10 s")
    finally:
        if parent.poll() is None:
            parent.kill()
