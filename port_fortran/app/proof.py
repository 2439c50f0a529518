"""Build and run an application tree, and compare a modern run with the original's.

Both trees are copies of the same application root, so the program finds the same input
files beside it; each build runs the user's own command at the root of its copy, through
the compiler wrapper; each run runs the user's command there too, in the sandbox (its own
process group, a wall-clock limit), with the thread settings of the backend. The
comparison is the one of ``port-fortran program`` (``harness.program_proof.compare_output``):
the same lines, every number within a tolerance of its magnitude plus one unit of the last
digit printed, lines matching ``--ignore`` left out; then the exit status and the
``--check`` pattern.
"""
from __future__ import annotations

import os
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from ..build_runner.sandbox import Limits, run_limited
from ..harness.program_proof import OutputComparison, compare_output

VCS_DIRS = (".git", ".svn", ".hg")


def copy_tree(src: Path, dst: Path, exclude: Sequence[Path] = ()) -> None:
    """``dst`` becomes a fresh copy of ``src`` (symlinks kept as links; VCS directories and
    ``exclude`` -- e.g. the output directory inside the root -- left out)."""
    if dst.exists():
        shutil.rmtree(dst)
    skip = {os.path.realpath(str(p)) for p in exclude}

    def ignore(d, names):
        out = [n for n in names if n in VCS_DIRS]
        out += [n for n in names if os.path.realpath(os.path.join(d, n)) in skip]
        return out

    shutil.copytree(src, dst, symlinks=True, ignore=ignore)


@dataclass
class Step:
    """One build or run of a tree."""

    ok: bool
    returncode: Optional[int]
    seconds: float
    stdout: str = ""
    stderr: str = ""
    reason: str = ""  # why not ok (killed, exit status)
    outputs: dict = field(default_factory=dict)  # files the program wrote that are compared

    def tail(self, n: int = 15) -> str:
        text = (self.stderr.strip() + "\n" + self.stdout.strip()).strip()
        return "\n".join(text.splitlines()[-n:])


def shell(cmd: str, cwd: Path, env: dict, limits: Limits) -> Step:
    t0 = time.monotonic()
    res = run_limited(["/bin/sh", "-c", cmd], cwd, limits, env=env)
    secs = time.monotonic() - t0
    reason = ""
    if not res.ok:
        reason = res.killed_reason or f"exit status {res.returncode}"
    return Step(res.ok, res.returncode, secs, res.stdout, res.stderr, reason)


def run_env(base: dict, backend: str, threads: int) -> dict:
    """Thread settings of a run: one thread for serial, ``threads`` for OpenMP (OpenMP and
    Kokkos read OMP_NUM_THREADS; OMP_PROC_BIND set so Kokkos prints no warning on stdout)."""
    env = dict(base)
    t = 1 if backend == "serial" else threads
    env.update({"OMP_NUM_THREADS": str(t), "OMP_DYNAMIC": "false", "OMP_PROC_BIND": "false",
                "KOKKOS_NUM_THREADS": str(t)})
    return env


def run_program(tree: Path, cmd: str, env: dict, limits: Limits, outputs: Sequence[str] = (),
                repeat: int = 1) -> Step:
    """Run the application's command at the root of ``tree`` (``repeat`` times; the time
    is the median, the output the last run's); read the output files to compare."""
    steps = []
    for _ in range(max(1, repeat)):
        for o in outputs:  # each run writes its own
            p = tree / o
            if p.is_file():
                p.unlink()
        steps.append(shell(cmd, tree, env, limits))
        if not steps[-1].ok and steps[-1].returncode is None:
            break
    last = steps[-1]
    times = sorted(s.seconds for s in steps)
    last.seconds = times[len(times) // 2]
    for o in outputs:
        p = tree / o
        last.outputs[o] = p.read_text(errors="replace") if p.is_file() else None
    return last


@dataclass
class Match:
    matched: bool
    reason: str = ""
    first_difference: Optional[dict] = None
    comparison: Optional[OutputComparison] = None
    check_found: Optional[bool] = None

    def to_json(self) -> dict:
        c = self.comparison
        return {"matched": self.matched, "reason": self.reason, "first_difference": self.first_difference,
                "lines_compared": c.lines_compared if c else 0, "numbers_compared": c.numbers_compared if c else 0,
                "max_rel_err": c.max_rel_err if c else 0.0, "check_found": self.check_found}


def compare_runs(ref: Step, new: Step, ignore: Sequence[str], rtol: float, check: Optional[str],
                 outputs: Sequence[str] = ()) -> Match:
    """Does the modern run ``new`` give what the original run ``ref`` gave?"""
    if ref.returncode != new.returncode:
        last = new.stderr.strip().splitlines()[-1] if new.stderr.strip() else ""
        return Match(False, f"exit status {new.returncode} of the modern program, {ref.returncode} of the original"
                     + (f" ({new.reason})" if new.reason and new.returncode is None else "")
                     + (f": {last}" if last else ""))
    cmp = compare_output(ref.stdout, new.stdout, ignore, rtol)
    if not cmp.matched:
        d = dict(cmp.first_difference or {})
        d["stream"] = "stdout"
        return Match(False, cmp.describe(), d, cmp)
    for o in outputs:
        a, b = ref.outputs.get(o), new.outputs.get(o)
        if a is None and b is None:
            continue
        if a is None or b is None:
            return Match(False, f"{o}: written by {'the modern program only' if a is None else 'the original only'}",
                         {"stream": o, "why": "file missing"}, cmp)
        c2 = compare_output(a, b, ignore, rtol)
        if not c2.matched:
            d = dict(c2.first_difference or {})
            d["stream"] = o
            return Match(False, f"{o}: {c2.describe()}", d, c2)
    found = None
    if check:
        found = re.search(check, new.stdout, re.MULTILINE) is not None
        if not found:
            return Match(False, f"the check pattern {check!r} is not in the modern program's output", None, cmp, False)
    return Match(True, "", None, cmp, found)


__all__ = ["copy_tree", "Step", "shell", "run_env", "run_program", "Match", "compare_runs"]
