"""The sandbox kills whole process groups on limits and reports why."""
from __future__ import annotations

import os
import sys
import textwrap
import time

from port_fortran.build_runner.sandbox import Limits, run_limited


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie counts as gone
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_normal_run_returns_output(tmp_path):
    res = run_limited([sys.executable, "-c", "import sys; print('hello'); print('oops', file=sys.stderr)"],
                      tmp_path, Limits(wall_s=30))
    assert res.ok
    assert res.returncode == 0
    assert res.stdout.strip() == "hello"
    assert res.stderr.strip() == "oops"
    assert not res.timed_out and not res.memory_exceeded and res.killed_reason == ""


def test_exit_code_and_stdin(tmp_path):
    res = run_limited([sys.executable, "-c", "import sys; d=sys.stdin.read(); print(len(d)); sys.exit(3)"],
                      tmp_path, Limits(wall_s=30), stdin_bytes=b"x" * 100000)
    assert res.returncode == 3 and not res.ok
    assert res.stdout.strip() == "100000"


def test_sleeper_and_its_child_are_killed_at_wall_limit(tmp_path):
    pidfile = tmp_path / "child.pid"
    script = textwrap.dedent(f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"])
        open({str(pidfile)!r}, "w").write(str(child.pid))
        # ignore SIGTERM: the sandbox must follow up with SIGKILL
        import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("started", flush=True)
        while True:
            time.sleep(1)
    """)
    t0 = time.monotonic()
    res = run_limited([sys.executable, "-c", script], tmp_path, Limits(wall_s=1.5, grace_s=0.5))
    elapsed = time.monotonic() - t0
    assert res.timed_out and res.killed_reason == "wall-time"
    assert not res.ok
    assert elapsed < 1.5 + 0.5 + 3.0
    assert "started" in res.stdout
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 3
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the child of the timed-out command survived"


def test_unbounded_allocation_is_stopped_and_reported(tmp_path):
    script = "x = []\nwhile True:\n    x.append(bytearray(50 * 1024 * 1024))\n"
    res = run_limited([sys.executable, "-c", script], tmp_path, Limits(wall_s=60, mem_mb=512))
    assert not res.ok
    assert not res.timed_out
    assert res.memory_exceeded
    assert res.killed_reason == "memory"


def test_cpu_limit(tmp_path):
    res = run_limited([sys.executable, "-c", "while True: pass"], tmp_path, Limits(wall_s=30, cpu_s=1))
    assert not res.ok and not res.timed_out
    assert res.killed_reason == "cpu-time"
    assert res.wall_s < 10


def test_output_is_truncated_head_and_tail_kept(tmp_path):
    script = "print('FIRST'); [print('x' * 99) for _ in range(20000)]; print('LAST')"
    res = run_limited([sys.executable, "-c", script], tmp_path, Limits(wall_s=30, output_bytes=10000))
    assert res.ok
    assert res.stdout.startswith("FIRST")
    assert res.stdout.rstrip().endswith("LAST")
    assert "bytes of output dropped" in res.stdout
    assert len(res.stdout) < 12000


def test_missing_program_is_reported_not_raised(tmp_path):
    res = run_limited(["/nonexistent/prog"], tmp_path, Limits(wall_s=5, mem_mb=None))
    assert res.returncode is None and not res.ok
    assert "nonexistent" in res.stderr


def test_gpu_backends_turn_the_address_space_limit_off():
    lim = Limits(mem_mb=1024)
    assert lim.for_backend("cuda").mem_mb is None
    assert lim.for_backend("hip").mem_mb is None
    assert lim.for_backend("openmp").mem_mb == 1024


def test_a_run_dies_with_the_tool_that_started_it(tmp_path):
    """A batch runner kills a tool that overran (SIGKILL, no clean-up): the generated
    program it was running sits in its own session and, without the parent-death signal,
    ran on for minutes (FFTPACK's dsinqb on a drawn factor count)."""
    import shutil
    import subprocess

    import pytest

    if shutil.which("setpriv") is None:
        pytest.skip("needs util-linux setpriv")
    pidfile = tmp_path / "run.pid"
    victim = textwrap.dedent(f"""
        import sys, time
        from port_fortran.build_runner.sandbox import Limits, run_limited
        code = "import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(600)"
        run_limited([sys.executable, "-c", code], {str(tmp_path)!r}, Limits(wall_s=600))
    """)
    tool = subprocess.Popen([sys.executable, "-c", victim], env={**os.environ, "PYTHONPATH": os.getcwd()})
    deadline = time.monotonic() + 20
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    run_pid = int(pidfile.read_text())
    assert _alive(run_pid)
    tool.kill()
    tool.wait()
    deadline = time.monotonic() + 5
    while _alive(run_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(run_pid), "the sandboxed run outlived the tool that started it"
