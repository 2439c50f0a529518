"""Run one command under limits: wall clock, CPU time, address space, output size.

The command runs in its own session (so its own process group); on a limit the whole
group is killed (SIGTERM, a grace period, then SIGKILL), so a compiler driver or a test
program cannot leave children behind. After a normal exit, stragglers left in the group
are killed too.

Resource limits are applied by a tiny ``/bin/sh`` wrapper (``ulimit -v``/``ulimit -t``
then ``exec``) instead of ``preexec_fn``: ``preexec_fn`` is unsafe when other threads are
running, and builds of several backends run from threads (:func:`cmake.build_many`).

Address-space limit (``Limits.mem_mb``): RLIMIT_AS caps *virtual* memory. Kokkos with
OpenMP reserves thread stacks and glibc malloc arenas per thread, and CUDA/HIP runtimes map
the whole device and host address range (tens of GiB of virtual memory that is never
touched), so the limit must be off for GPU runs: use :meth:`Limits.for_backend`, which
turns it off for ``cuda`` and ``hip``. 4 GiB is enough for host runs with a few dozen
OpenMP threads.
"""
from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass, replace
from typing import Callable, Mapping, Optional, Sequence

from ..records import RunResult

GPU_BACKENDS = ("cuda", "hip")

# what a program prints when an allocation fails (C++, C, gfortran runtime, Kokkos, Python)
_OOM_MARKERS = (
    "std::bad_alloc",
    "bad_alloc",
    "cannot allocate memory",
    "out of memory",
    "enomem",
    "failed to allocate",
    "allocation would exceed memory limit",
    "error allocating",
    "memoryerror",
    "virtual memory exhausted",
)


@dataclass(frozen=True)
class Limits:
    """Limits for one run. ``None`` turns a limit off.

    wall_s: wall-clock seconds before the process group is killed.
    cpu_s: CPU seconds (RLIMIT_CPU) for the process and each child it starts.
    mem_mb: address space in MiB (RLIMIT_AS) for each process; off for GPU runs.
    output_bytes: bytes kept of stdout and of stderr each (head and tail kept).
    grace_s: seconds between SIGTERM and SIGKILL on a wall-clock kill.
    stack: the soft stack limit (see the field).
    """

    wall_s: Optional[float] = 120.0
    cpu_s: Optional[float] = None
    mem_mb: Optional[int] = 4096
    output_bytes: int = 2_000_000
    grace_s: float = 2.0
    # the soft stack limit (``ulimit -Ss``: KiB or "unlimited"), raised as far as the hard
    # limit allows; None keeps the caller's. Whole programs get "unlimited", as HPC job
    # scripts give them: with -fopenmp gfortran puts every local array on the stack
    stack: Optional[str] = None

    def for_backend(self, backend: str) -> "Limits":
        """These limits, with the address-space limit off for GPU backends."""
        return replace(self, mem_mb=None) if backend in GPU_BACKENDS else self


BUILD_LIMITS = Limits(wall_s=1800.0, cpu_s=None, mem_mb=None, output_bytes=4_000_000)


class _Capture:
    """Read a pipe to the end in a thread, keeping the head and the tail."""

    def __init__(self, stream, limit: int, on_line=None):
        self.stream = stream
        self.on_line = on_line
        self.partial = b""
        self.head_limit = max(limit * 3 // 4, 1)
        self.tail_limit = max(limit - self.head_limit, 1)
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_len = 0
        self.dropped = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            while True:
                chunk = self.stream.read1(65536) if hasattr(self.stream, "read1") else self.stream.read(65536)
                if not chunk:
                    break
                if self.on_line is not None:
                    self._lines(chunk)
                room = self.head_limit - len(self.head)
                if room > 0:
                    self.head += chunk[:room]
                    chunk = chunk[room:]
                if chunk:
                    self.tail.append(chunk)
                    self.tail_len += len(chunk)
                    while self.tail_len - len(self.tail[0]) >= self.tail_limit:
                        old = self.tail.popleft()
                        self.tail_len -= len(old)
                        self.dropped += len(old)
        except (OSError, ValueError):
            pass
        finally:
            try:
                self.stream.close()
            except OSError:
                pass

    def _lines(self, chunk: bytes) -> None:
        data = self.partial + chunk
        *whole, self.partial = data.split(b"\n")
        for ln in whole:
            try:
                self.on_line(ln.decode("utf-8", errors="replace"))
            except Exception:  # a progress printer must never break the run
                pass

    def text(self) -> str:
        tail = b"".join(self.tail)
        if self.tail_len > self.tail_limit:
            cut = self.tail_len - self.tail_limit
            tail = tail[cut:]
            dropped = self.dropped + cut
        else:
            dropped = self.dropped
        out = bytes(self.head)
        if dropped:
            out += f"\n[... {dropped} bytes of output dropped ...]\n".encode()
        out += tail
        return out.decode("utf-8", errors="replace")


_SETPRIV = shutil.which("setpriv")  # util-linux: sets the parent-death signal, then execs


def _wrap(cmd: Sequence[str], limits: Limits) -> list[str]:
    """Prefix ``cmd`` with a shell that sets the rlimits and execs it (same pid). Where
    util-linux's ``setpriv`` is there, the command also dies with the process that started
    it (its parent-death signal set to SIGKILL): a tool killed from outside (a batch
    runner's watchdog) leaves no run of generated code behind in its own session."""
    if _SETPRIV:
        cmd = [_SETPRIV, "--pdeathsig", "KILL", *[str(c) for c in cmd]]
    sets = []
    if limits.mem_mb is not None:
        sets.append(f"ulimit -v {int(limits.mem_mb) * 1024}")
    if limits.cpu_s is not None:
        cpu = max(1, int(round(limits.cpu_s)))
        # soft limit: SIGXCPU (reported as cpu-time); hard limit a little later: SIGKILL
        sets.append(f"ulimit -St {cpu} && ulimit -Ht {cpu + 2}")
    if limits.stack is not None:
        # never fatal: a hard limit below the wish leaves the soft one as it was
        sets.append(f"{{ ulimit -Ss {limits.stack} 2>/dev/null || true; }}")
    if not sets:
        return [str(c) for c in cmd]
    script = " && ".join(sets) + ' && exec "$@"'
    return ["/bin/sh", "-c", script, "port-fortran-sandbox"] + [str(c) for c in cmd]


def _killpg(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _wait(pid: int, deadline: Optional[float]) -> Optional[tuple[int, object]]:
    """Wait for ``pid`` until ``deadline``; (status, rusage) or None on time-out."""
    delay = 0.001
    while True:
        try:
            wpid, status, usage = os.wait4(pid, os.WNOHANG)
        except ChildProcessError:  # reaped elsewhere (SIGCHLD ignored, a waitpid(-1) in another thread)
            return -1, None
        if wpid == pid:
            return status, usage
        if deadline is not None and time.monotonic() >= deadline:
            return None
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _looks_like_oom(text: str) -> bool:
    low = text.lower()
    return any(m in low for m in _OOM_MARKERS)


def run_limited(
    cmd: Sequence[str],
    cwd=None,
    limits: Optional[Limits] = None,
    env: Optional[Mapping[str, str]] = None,
    stdin_bytes: Optional[bytes] = None,
    *,
    env_extra: Optional[Mapping[str, str]] = None,
    on_line: Optional[Callable[[str], None]] = None,
) -> RunResult:
    """Run ``cmd`` in ``cwd`` under ``limits`` and return what happened.

    ``env`` replaces the environment (as in :mod:`subprocess`); ``env_extra`` is merged on
    top of ``env`` (or of this process' environment). ``on_line`` is called with each line
    of stdout as it arrives (for progress displays). Never raises for the command's own
    failures; a command that cannot be started gives ``returncode=None`` and the reason in
    ``stderr``.
    """
    limits = limits or Limits()
    full_env = dict(os.environ if env is None else env)
    if env_extra:
        full_env.update({k: str(v) for k, v in env_extra.items()})
    exe = str(cmd[0]) if cmd else ""
    where = exe if os.path.isabs(exe) or cwd is None else os.path.join(str(cwd), exe)  # as exec finds it
    found = (os.path.isfile(where) and os.access(where, os.X_OK)) if os.sep in exe else \
        shutil.which(exe, path=full_env.get("PATH")) is not None
    if not found:  # said here: behind setpriv it would be the wrapper's exit status 127
        return RunResult(returncode=None, stderr=f"cannot run {exe}: no such executable", killed_reason="not-started")
    argv = _wrap(cmd, limits)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            cwd=None if cwd is None else str(cwd),
            env=full_env,
            stdin=subprocess.PIPE if stdin_bytes is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return RunResult(returncode=None, stderr=f"cannot run {cmd[0]}: {exc}", killed_reason="not-started")
    pgid = proc.pid  # session leader: its pid is the group id
    out = _Capture(proc.stdout, limits.output_bytes, on_line)
    err = _Capture(proc.stderr, limits.output_bytes)
    if stdin_bytes is not None:
        def feed() -> None:
            try:
                proc.stdin.write(stdin_bytes)
            except (BrokenPipeError, OSError):
                pass
            finally:
                try:
                    proc.stdin.close()
                except OSError:
                    pass
        threading.Thread(target=feed, daemon=True).start()

    deadline = None if limits.wall_s is None else start + float(limits.wall_s)
    timed_out = False
    waited = _wait(proc.pid, deadline)
    if waited is None:
        timed_out = True
        _killpg(pgid, signal.SIGTERM)
        waited = _wait(proc.pid, time.monotonic() + max(limits.grace_s, 0.0))
        if waited is None:
            _killpg(pgid, signal.SIGKILL)
            waited = _wait(proc.pid, None)
    status, usage = waited
    wall = time.monotonic() - start
    if usage is None:  # the exit status was lost; never report success we did not see
        usage = resource.struct_rusage((0.0,) * 16)
    # stragglers left in the group (daemons, background jobs): the sandbox owns them
    if _group_alive(pgid):
        _killpg(pgid, signal.SIGKILL)
    proc.returncode = os.waitstatus_to_exitcode(status) if status >= 0 else None
    out.thread.join(timeout=5)
    err.thread.join(timeout=5)
    stdout, stderr = out.text(), err.text()

    rc = proc.returncode
    reason = "" if rc is not None or timed_out else "exit status lost"
    memory = False
    if timed_out:
        reason = "wall-time"
    elif rc is not None and rc < 0:
        sig = -rc
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and limits.cpu_s is not None
                                      and usage.ru_utime + usage.ru_stime >= limits.cpu_s):
            reason = "cpu-time"
        else:
            reason = f"signal {sig}"
    if not timed_out and rc != 0 and reason != "cpu-time":
        max_rss_mb = usage.ru_maxrss / 1024.0  # Linux: KiB
        if limits.mem_mb is not None:
            # under RLIMIT_AS a failed allocation shows as a message, an abort, or a SIGSEGV
            # when the stack or a page cannot be mapped
            if _looks_like_oom(stderr) or _looks_like_oom(stdout[-4000:]):
                memory = True
            elif rc is not None and rc < 0 and -rc in (signal.SIGSEGV, signal.SIGKILL, signal.SIGBUS) \
                    and max_rss_mb >= 0.5 * limits.mem_mb:
                memory = True
        elif rc is not None and rc < 0 and -rc == signal.SIGKILL and _looks_like_oom(stderr):
            memory = True  # the kernel's OOM killer
        if memory:
            reason = "memory"
    return RunResult(
        returncode=rc,
        stdout=stdout,
        stderr=stderr,
        wall_s=wall,
        timed_out=timed_out,
        memory_exceeded=memory,
        killed_reason=reason,
    )


def cpu_seconds_used() -> float:
    """CPU seconds used so far by reaped children of this process (for reports)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime
