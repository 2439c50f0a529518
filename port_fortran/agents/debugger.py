"""The debugger agent: turn a failure into the next port to try.

Rules model: fall back to safer translator options (records.TranslateOptions), in this
order, skipping what was already tried:

1. serialise the offending loop, when the failure names a line that is a DO statement;
2. atomics for scattered (indirect) updates, when a loop has them and atomics are off;
3. serialise the parallel loops one at a time, outermost first (cumulative);
4. everything serial (always the last round's choice: the safest port there is).

LLM model: the debugger prompt with the condensed diagnostics or the verdict.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Optional

from ..fortran import ir
from ..records import TranslateOptions


def failure_from_build(build, stage: str = "compile") -> dict:
    diags = list(getattr(build, "diagnostics", []) or [])
    first = next((d for d in diags if d.code != "compile-warning"), diags[0] if diags else None)
    return {"stage": stage, "backend": build.backend,
            "code": first.code if first else "build-failed",
            "message": str(first) if first else _first_error(build.condensed or "") or "the build failed",
            "line": first.line if first else 0, "file": first.file if first else "",
            "detail": (build.condensed or "")[:4000]}


def _first_error(text: str) -> str:
    """The compiler's first error line of a build log no parser recognised, with the line
    that names its file and line when the compiler puts that first (gfortran does)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for i, ln in enumerate(lines):
        if re.match(r"(Error|Fatal Error|error)\b", ln) or ": error:" in ln or "Error:" in ln:
            where = next((x for x in reversed(lines[max(0, i - 4):i]) if re.match(r"\S+:\d+(:\d+)?:\s*$", x)), "")
            return f"{where} {ln}".strip()[:400]
    return ""


def failure_from_verdict(verdict) -> dict:
    worst = verdict.worst() if hasattr(verdict, "worst") else None
    case = next((c for c in verdict.cases if not c.passed), None)
    f = {"stage": "run", "backend": verdict.backend, "code": "wrong-result", "line": 0,
         "message": verdict.reason or "the differential test failed", "detail": verdict.reason or ""}
    if case is not None:
        f["sizes"] = dict(case.sizes)
        f["seed"] = case.seed
        if case.error:
            f["code"] = "run-error"
            f["message"] = case.error[:500]
    if worst is not None:
        f.update(output=worst.name, worst_index=worst.worst_index, max_abs_err=worst.max_abs_err,
                 max_rel_err=worst.max_rel_err, tolerance=worst.tolerance)
        if worst.message:
            f["message"] = f"{f['message']} ({worst.message})" if f["message"] != worst.message else worst.message
    return f


def failure_from_diagnostics(diags: list[ir.Diagnostic], stage: str = "validate") -> dict:
    d = diags[0]
    return {"stage": stage, "backend": "", "code": d.code, "message": str(d), "line": d.line, "file": d.file,
            "detail": "\n".join(str(x) for x in diags[:20])}


_LOOP_COMMENT = re.compile(r"//\s*line\s+(\d+):\s*do\b", re.I)
_LOOP_LABEL = re.compile(r"\"\w+:L(\d+)\"")


def fortran_loop_line(cpp: str, cpp_line: int) -> Optional[int]:
    """The Fortran DO line of the loop a C++ line belongs to, from the translator's
    ``// line N: do ...`` comments and ``"<k>:L<N>"`` kernel labels above it."""
    if not cpp or cpp_line <= 0:
        return None
    found = None
    for ln in cpp.splitlines()[:cpp_line]:
        m = _LOOP_COMMENT.search(ln) or _LOOP_LABEL.search(ln)
        if m:
            found = int(m.group(1))
    return found


def _parallel_loops(kernel: ir.Kernel) -> list[ir.Do]:
    """Loops the translator may run in parallel, outermost first, by line."""
    out = []
    for d in kernel.loops():
        if d.info.parallel or d.info.scattered or d.info.reductions or d.info.condition is not None:
            out.append(d)
    return sorted(out, key=lambda d: d.line)


def candidates(kernel: ir.Kernel, current: Optional[TranslateOptions], failure: dict) -> list[tuple[str, TranslateOptions]]:
    """Safer variants in the order the debugger tries them, each (name, options)."""
    base = current or TranslateOptions()
    loops = _parallel_loops(kernel)
    do_lines = {d.line for d in kernel.loops()}
    out: list[tuple[str, TranslateOptions]] = []

    def add(name: str, **changes):
        o = dataclasses.replace(base, **changes, variant=name)
        out.append((name, o))

    line = failure.get("fortran_line") or (failure.get("line") if failure.get("file", "").endswith(
        (".f", ".f90", ".F", ".F90", ".for", ".f77")) else None)
    if line and line in do_lines and line not in base.serial_loops:
        add(f"serial-L{line}", serial_loops=set(base.serial_loops) | {line})
    if any(d.info.scattered for d in loops) and not base.atomic_scatter:
        add("atomics", atomic_scatter=True)
    all_lines = {d.line for d in kernel.loops()}
    acc = set(base.serial_loops)
    for d in loops:
        if d.line in acc:
            continue
        acc = acc | {d.line}
        if acc >= all_lines:
            break  # that is the all-serial variant, added last under its own name
        add(f"serial-upto-L{d.line}" if len(acc) > 1 else f"serial-L{d.line}", serial_loops=set(acc), mdrange=False)
    add("all-serial", serial_loops=all_lines, mdrange=False, team_reductions=False)
    # de-duplicate identical option sets (keep the first name)
    seen, uniq = set(), []
    for name, o in out:
        key = (tuple(sorted(o.serial_loops)), o.atomic_scatter, o.mdrange, o.team_reductions)
        if key not in seen and key != (tuple(sorted(base.serial_loops)), base.atomic_scatter, base.mdrange,
                                       base.team_reductions):
            seen.add(key)
            uniq.append((name, o))
    return uniq


def next_rules_variant(kernel: ir.Kernel, current: Optional[TranslateOptions], failure: dict,
                       tried: list[str], rounds_left: int) -> Optional[tuple[str, TranslateOptions]]:
    """The next variant to try, or None when nothing safer is left. On the last round the
    all-serial port is chosen directly (if not yet tried)."""
    cands = [(n, o) for n, o in candidates(kernel, current, failure) if n not in tried]
    if not cands:
        return None
    if rounds_left <= 1:
        last = [c for c in cands if c[0] == "all-serial"]
        if last:
            return last[0]
    return cands[0]
