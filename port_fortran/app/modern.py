"""The modern tree's source text (pure: text and IR in, text out).

The modern tree is a copy of the application in which

* each routine with a verified **full port** keeps its name and interface (its head and
  specification part, word for word) while its executable part becomes one call of the
  port's ``extern "C"`` entry through the port's interface module -- so every caller, and
  every explicit interface of a module procedure, stays valid;
* each routine with a **hybrid port** is its generated source: the edits ``hybrid.json``
  records against the original file (several routines of one file are merged, edits of
  each only touch its own lines);
* the calls that keep host code coherent with arrays kept on the device
  (:mod:`.coherence`) are inserted where host code touches them;
* everything else is untouched.

All edits are :class:`translate.fortran_text.Edit` in the original file's line numbers;
:func:`apply` applies them together.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from ..fortran import ir
from ..translate import fortran_text


class Keep(Exception):
    """A port that cannot be put in place in the modern tree (the routine stays original)."""

    def __init__(self, code: str, message: str, line: int = 0):
        super().__init__(message)
        self.code, self.message, self.line = code, message, line


def _ifdef_balance(lines: list[str], first: int, last: int) -> int:
    depth = 0
    for i in range(first, last + 1):
        s = lines[i - 1].lstrip()
        if re.match(r"#\s*if", s):
            depth += 1
        elif re.match(r"#\s*endif", s):
            depth -= 1
    return depth


def first_executable(kernel: ir.Kernel) -> Optional[ir.Stmt]:
    """The routine's first executable statement (statement functions and FORMATs, which
    the IR keeps in its body, are not)."""
    for s in kernel.body:
        if isinstance(s, ir.Unsupported) and (s.construct == "statement-function"
                                             or s.text.strip().lower().startswith("format")):
            continue
        return s
    return None


def use_edit(lines: list[str], kernel: ir.Kernel, form: str, module: str, upper: bool) -> fortran_text.Edit:
    """``USE <module>`` right after the routine's head (before IMPLICIT and declarations)."""
    use = f"{'USE' if upper else 'use'} {module.upper() if upper else module}"
    if kernel.kind == "program" and not re.match(r"\s*program\b", fortran_text.code_part(lines[kernel.line_start - 1], form)[1],
                                                 re.IGNORECASE):
        head_last = kernel.line_start - 1  # a main program without PROGRAM statement: USE comes first
        indent = fortran_text.indentation(lines, kernel.line_start, form) if form == "free" else "      "
    else:
        head_last = fortran_text.head_end(lines, kernel.line_start, form)
        indent = fortran_text.indentation(lines, kernel.line_start, form) + "  " if form == "free" else "      "
    return fortran_text.Edit(head_last + 1, head_last, fortran_text.statement(use, form, indent), f"USE {module}")


def wrapper_edits(kernel: ir.Kernel, lines: list[str], form: str) -> list[fortran_text.Edit]:
    """The edits that make a routine with a full port call it: USE of the port's interface
    module after the head; the executable part replaced by the call (a function assigns
    its result). Raises :class:`Keep` when the routine's text cannot be cut that way."""
    k = kernel.name
    first = first_executable(kernel)
    end = kernel.line_end
    if first is None or not first.line:
        raise Keep("no-executable-part", f"{k} has no executable statement the tool can locate", kernel.line_start)
    start = first.line
    head_last = fortran_text.head_end(lines, kernel.line_start, form)
    if not (head_last < start <= end) or end > len(lines):
        raise Keep("routine-not-in-source", f"the executable part of {k} (line {start}) is not in the file at the "
                   "lines the IR holds (INCLUDE or macro text)", start)
    end_code = fortran_text.code_part(lines[end - 1], form)[1].strip().lower()
    if not end_code.startswith("end"):
        raise Keep("routine-not-in-source", f"line {end} is not the END statement of {k}", end)
    for i in range(start, end):
        code = "" if fortran_text.is_comment(lines[i - 1], form) else fortran_text.code_part(lines[i - 1], form)[1].strip().lower()
        if re.match(r"contains\b", code):
            raise Keep("internal-procedures", f"{k} contains internal procedures (line {i}), which the port "
                       "does not replace", i)
    if _ifdef_balance(lines, start, end - 1) != 0:
        raise Keep("preprocessor-spans", f"a preprocessor conditional of {k} spans its specification and "
                   "executable parts: the executable part cannot be replaced alone", start)
    upper = fortran_text.upper_style(lines, kernel.line_start, form)
    entry = f"{k}_kokkos"
    args = ", ".join(a.name for a in kernel.args)
    if kernel.kind == "function" and kernel.result is not None:
        call = f"{kernel.result.name} = {entry}({args})"
    else:
        call = f"call {entry}({args})"
    if upper:
        call = call.upper()
    indent = fortran_text.indentation(lines, start, form) if not fortran_text.is_comment(lines[start - 1], form) else \
        ("      " if form == "fixed" else "  ")
    new = [fortran_text.comment(f"port-fortran: the body of {k} runs as its Kokkos port {entry} (lines {start}-{end - 1} "
                     "of the original)", form, indent)]
    new += fortran_text.statement(call, form, indent)
    # the first executable statement may carry a label nobody else can reach (the part is
    # replaced whole); a RETURN keeps the routine's end reachable in every form
    return [use_edit(lines, kernel, form, f"{k}_kokkos_mod", upper),
            fortran_text.Edit(start, end - 1, new, f"the executable part of {k}: a call of its port")]


def hybrid_edits(info: dict) -> list[fortran_text.Edit]:
    """A hybrid port's text edits (``hybrid.json``) against its original file."""
    return [fortran_text.Edit(int(e["first"]), int(e["last"]), list(e["text"]), e.get("why", "")) for e in info.get("edits", [])]


def apply(lines: list[str], edits: list[fortran_text.Edit]) -> list[str]:
    """``lines`` with all edits applied. Replacements must not overlap; insertions (``last
    == first - 1``) at a line go before whatever replaces that line, in the order given."""
    for a in edits:
        if a.last >= a.first:
            for b in edits:
                if b is not a and b.last >= b.first and not (b.last < a.first or b.first > a.last):
                    raise Keep("overlapping-edits", f"edits of lines {a.first}-{a.last} ({a.why}) and "
                               f"{b.first}-{b.last} ({b.why}) overlap", a.first)
    out = list(lines)
    # from the bottom up; at one line the replacement first, then the insertions above it
    order = sorted(enumerate(edits), key=lambda ie: (ie[1].first, 1 if ie[1].last >= ie[1].first else 0, ie[0]),
                   reverse=True)
    for _, e in order:
        out[e.first - 1:e.last] = list(e.text)
    return out


@dataclass
class FileEdits:
    """Everything the modern tree changes in one file."""

    path: str  # relative to the application root
    form: str
    edits: list[fortran_text.Edit] = field(default_factory=list)
    routines: list[str] = field(default_factory=list)  # full and hybrid ports placed in it
    coherence: int = 0  # coherence calls inserted


def banner(form: str, name: str, routines: list[str], coherence: int) -> list[str]:
    what = []
    if routines:
        what.append(f"routines {', '.join(routines)} run as Kokkos ports")
    if coherence:
        what.append(f"{coherence} call{'s' if coherence != 1 else ''} keep{'' if coherence != 1 else 's'} host code "
                    "coherent with arrays kept on the device")
    return [fortran_text.comment(f"Modernised by port-fortran from {name}: {'; '.join(what) or 'unchanged'}.", form)]


def modern_text(text: str, fe: FileEdits, name: str) -> str:
    lines = text.split("\n")
    new = apply(lines, fe.edits)
    if fe.routines or fe.coherence:
        first = banner(fe.form, name, fe.routines, fe.coherence)
        # a fixed-form file may start with a preprocessor line or a free-form directive: a
        # comment first is valid in both forms
        new = first + new
    return "\n".join(new)


__all__ = ["Keep", "FileEdits", "wrapper_edits", "hybrid_edits", "use_edit", "apply", "modern_text",
           "first_executable"]
