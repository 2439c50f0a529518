"""Compiler, linker and CMake messages -> :class:`ir.Diagnostic`, and a short summary.

Understands GCC/G++ (``file:line:col: error: msg``), gfortran (``file:line:col:`` on its own
line, the source excerpt, then ``Error: msg``), nvcc (``file(line): error: msg``), CMake
(``CMake Error at file:line (cmd):`` plus the indented message) and GNU ld
(``undefined reference to``, ``multiple definition of``, ``cannot find -l...``).

:func:`condense` turns them into at most 20 lines for the debugger agent: errors first,
errors in the port's own files before those inside library headers, duplicates dropped.
"""
from __future__ import annotations

import os
import re
from typing import Iterable, Optional

from ..fortran.ir import Diagnostic

_GCC = re.compile(
    r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+):(?:(?P<col>\d+):)?\s*"
    r"(?P<sev>fatal error|error|warning|Error|Warning|Fatal Error):\s*(?P<msg>.*)$"
)
_GCC_REQUIRED = re.compile(r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+):(?:\d+:)?\s+required from")
_GFORTRAN_LOC = re.compile(r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+):(?:(?P<col>\d+)(?:-\d+)?:)?\s*$")
_GFORTRAN_MSG = re.compile(r"^(?P<sev>Error|Warning|Fatal Error):\s*(?P<msg>.*)$")
_NVCC = re.compile(
    r"^(?P<file>[^\s(][^(]*?)\((?P<line>\d+)\):\s*(?P<sev>catastrophic error|error|warning)[^:]*:\s*(?P<msg>.*)$"
)
_CMAKE = re.compile(r"^CMake Error(?: at (?P<file>[^:]+):(?P<line>\d+)(?: \((?P<cmd>[^)]*)\))?)?:\s*(?P<msg>.*)$")
_LD_UNDEF = re.compile(r"undefined reference to [`'\"](?P<sym>[^'`\"]+)['`\"]")
_LD_MULTI = re.compile(r"multiple definition of [`'\"](?P<sym>[^'`\"]+)['`\"]")
_LD_NOTFOUND = re.compile(r"(?:ld|ld\.\w+|collect2)[^:]*: (?:error: )?cannot find (?P<what>\S+)")
_LD_SRCLINE = re.compile(r"(?P<file>[^\s:()]+\.\w+):(?P<line>\d+):?\s*(?:\(.*?\))?:? ?(?:undefined|multiple)")
_LD_FUNC = re.compile(r"(?P<obj>[^\s:]+):\s*in function [`'\"](?P<fn>[^'`\"]+)['`\"]")


def _rel(path: str, root: Optional[str]) -> str:
    if not root:
        return path
    try:
        ap = os.path.realpath(path if os.path.isabs(path) else os.path.join(root, path))
        rr = os.path.realpath(root)
        if ap == rr or ap.startswith(rr + os.sep):
            return os.path.relpath(ap, rr)
    except (OSError, ValueError):
        pass
    return path


def _is_user(path: str, root: Optional[str]) -> bool:
    """A file of the port itself (under ``root``), not a library header or system file."""
    if not root:
        return not path.startswith("/usr/") and "/include/" not in path
    return not os.path.isabs(_rel(path, root))


def _code(sev: str, is_link: bool = False) -> str:
    sev = sev.lower()
    if "warning" in sev:
        return "compile-warning"
    return "link-error" if is_link else "compile-error"


def parse_diagnostics(log: str, root: Optional[str] = None) -> list[Diagnostic]:
    """Every error and warning in a build log, in order. ``root``: the source tree whose
    files are the port's own (paths are made relative to it, and errors raised inside
    library headers are pinned to the port line that instantiated them)."""
    diags: list[Diagnostic] = []
    lines = log.splitlines()
    pending_loc: Optional[tuple[str, int]] = None  # gfortran: location line waiting for its message
    user_ctx: Optional[tuple[str, int]] = None  # last "required from" in a port file
    ld_obj: Optional[str] = None
    i = 0
    while i < len(lines):
        raw = lines[i]
        line = raw.rstrip()
        i += 1
        if not line:
            continue
        m = _GCC_REQUIRED.match(line)
        if m:
            if _is_user(m["file"], root):
                user_ctx = (_rel(m["file"], root), int(m["line"]))
            continue
        m = _GCC.match(line)
        if m and not line.startswith("CMake"):
            f, ln, msg = m["file"], int(m["line"]), m["msg"].strip()
            code = _code(m["sev"])
            if code == "compile-error" and not _is_user(f, root) and user_ctx is not None:
                msg = f"{msg} (in {os.path.basename(f)}:{ln})"
                f, ln = user_ctx
                diags.append(Diagnostic(code, msg, ln, f))
            else:
                diags.append(Diagnostic(code, msg, ln, _rel(f, root)))
            if code != "compile-warning":
                user_ctx = None
            pending_loc = None
            continue
        m = _GFORTRAN_LOC.match(line)
        if m and not line.startswith(("make", "CMake", "In file included", "                 from")):
            pending_loc = (_rel(m["file"], root), int(m["line"]))
            continue
        m = _GFORTRAN_MSG.match(line.strip())
        if m and pending_loc is not None:
            diags.append(Diagnostic(_code(m["sev"]), m["msg"].strip(), pending_loc[1], pending_loc[0]))
            pending_loc = None
            continue
        m = _NVCC.match(line)
        if m:
            diags.append(Diagnostic(_code(m["sev"]), m["msg"].strip(), int(m["line"]), _rel(m["file"], root)))
            continue
        m = _CMAKE.match(line)
        if m:
            parts = [m["msg"].strip()] if m["msg"].strip() else []
            # the message is the indented block that follows, up to a blank line
            while i < len(lines) and (lines[i].startswith("  ") or (not lines[i].strip() and not parts)):
                if lines[i].strip():
                    parts.append(lines[i].strip())
                i += 1
            msg = " ".join(parts)[:400]
            f = _rel(m["file"], root) if m["file"] else "CMakeLists.txt"
            diags.append(Diagnostic("cmake-error", msg, int(m["line"] or 0), f))
            continue
        m = _LD_FUNC.search(line)
        if m:
            ld_obj = m["obj"]
        for rx, what in ((_LD_UNDEF, "undefined reference to"), (_LD_MULTI, "multiple definition of")):
            m = rx.search(line)
            if m:
                src = _LD_SRCLINE.search(line)
                f = _rel(src["file"], root) if src else (os.path.basename(ld_obj) if ld_obj else "")
                ln = int(src["line"]) if src else 0
                diags.append(Diagnostic("link-error", f"{what} `{m['sym']}`", ln, f))
                break
        else:
            m = _LD_NOTFOUND.search(line)
            if m:
                diags.append(Diagnostic("link-error", f"cannot find {m['what']}", 0, ""))
    if not any(d.code == "link-error" for d in diags) and "ld returned" in log:
        # what the linker said, whatever its form (a relocation, an offload table, a
        # plugin): the first of its own lines, so that the report says what failed
        said = next((ln.strip() for ln in log.splitlines()
                     if re.search(r"(^|/|\s)(ld|collect2|lto-wrapper|mkoffload)[^\s]*:", ln)
                     and "ld returned" not in ln), "")
        what = f": {said[:300]}" if said else ""
        diags.append(Diagnostic("link-error", f"the linker failed (ld returned non-zero){what}", 0, ""))
    return diags


def _rank(d: Diagnostic, root: Optional[str]) -> tuple:
    order = {"compile-error": 0, "link-error": 1, "cmake-error": 2, "compile-warning": 3}
    user = 0 if (d.file and _is_user(d.file, root)) else 1
    return (order.get(d.code, 2), user)


def _fmt(d: Diagnostic, width: int = 220) -> str:
    kind = {"compile-error": "error", "link-error": "link error", "cmake-error": "cmake error",
            "compile-warning": "warning"}.get(d.code, d.code)
    where = f"{d.file}:{d.line}: " if d.file and d.line else (f"{d.file}: " if d.file else "")
    text = f"{where}{kind}: {d.message}"
    return text if len(text) <= width else text[: width - 3] + "..."


def condense(diags: Iterable[Diagnostic], log: str = "", max_lines: int = 20,
             root: Optional[str] = None) -> str:
    """At most ``max_lines`` lines: errors first (the port's own files before library
    headers), then link and CMake errors, then warnings; duplicates dropped. With no
    recognised diagnostic, the last lines of ``log`` that mention an error (or its tail)."""
    seen = set()
    uniq: list[Diagnostic] = []
    for d in diags:
        key = (d.code, d.file, d.line, d.message)
        if key not in seen:
            seen.add(key)
            uniq.append(d)
    if not uniq:
        tail = [ln.rstrip() for ln in log.splitlines() if ln.strip()]
        errs = [ln for ln in tail if re.search(r"error|fatal|failed|not found", ln, re.I)]
        pick = (errs or tail)[-max_lines:]
        return "\n".join(ln[:220] for ln in pick)
    ordered = sorted(uniq, key=lambda d: _rank(d, root))  # stable: log order within a rank
    out = [_fmt(d) for d in ordered]
    if len(out) > max_lines:
        rest = ordered[max_lines - 1:]
        n_err = sum(1 for d in rest if d.code != "compile-warning")
        n_warn = len(rest) - n_err
        out = out[: max_lines - 1] + [f"... and {len(rest)} more ({n_err} errors, {n_warn} warnings)"]
    return "\n".join(out)
